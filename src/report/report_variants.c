/* report_variants.c — the report of several K/V layouts (--kv-heads
 * 4,2,1): each one's cost, how far each head moved, a sentence each. */
#include "report/report.h"
#include "report/report_parts.h"
#include "core/align.h"
#include "core/measures.h"
#include "core/status.h"
#include "io/outdir.h"
#include "text/chance_words.h"
#include "text/format.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------ the variants section */

/* What the variants section says about one variant, against the reference:
 * its name and views into what the run measured. */
typedef struct {
    char name[16];            /* "MHA", "GQA-2", "MQA" */
    CostTable cost;           /* cost.input is this variant's row */
    const MapComparison *cmp; /* (n_heads) each head against its reference self (VariantsSummary) */
    double blur;              /* as in the one-variant report */
    double heads_norm_mean;   /* the heads' mean normalised entropy */
} VariantSummary;

/* 1 when head comparison c barely changes (REPORT_BARELY_JS, REPORT_BARELY_TOP1). */
static int barely_changes(const MapComparison *c)
{
    return c->js_to_single < REPORT_BARELY_JS && c->top1_agreement >= REPORT_BARELY_TOP1;
}

/* A JS divergence in bits for a sentence: two decimals, three below 0.005,
 * and never printed as REPORT_BARELY_JS unless it is it (measures_side_text). */
static const char *bits(char *buf, size_t n, double js)
{
    if (js < 0.005)
        snprintf(buf, n, "%.3f", js);
    else
        measures_side_text(buf, n, js, 2, REPORT_BARELY_JS);
    return buf;
}

/* The sentence about variant x against the reference ref (n_heads heads):
 * how much smaller its K/V cache is, the head that moves most, and the heads
 * that barely change. */
static void variant_sentence(char *buf, size_t len, const VariantSummary *x, const VariantSummary *ref,
                             int n_heads, int *pick)
{
    char a[32], b[32], js[16];
    const CostRow *r = &x->cost.input, *r0 = &ref->cost.input;
    int used = snprintf(buf, len, "%s cuts the K/V cache %dx (%s to %s bytes per token per layer)", x->name,
                        r0->n_kv_heads / r->n_kv_heads, format_grouped(a, r0->kv_cache_bytes),
                        format_grouped(b, r->kv_cache_bytes));
    int most = 0, least = 0, n_barely = 0;
    for (int h = 0; h < n_heads; h++) {
        pick[h] = barely_changes(&x->cmp[h]);
        n_barely += pick[h];
        if (x->cmp[h].js_to_single > x->cmp[most].js_to_single)
            most = h;
        if (x->cmp[h].js_to_single < x->cmp[least].js_to_single)
            least = h;
    }
    if (n_barely == n_heads) {
        snprintf(buf + used, len - (size_t)used, ", and every head barely changes (the most, head %d, by %s bits).",
                 most, bits(js, sizeof js, x->cmp[most].js_to_single));
        return;
    }
    used += snprintf(buf + used, len - (size_t)used, " and moves head %d's attention by %s bits (its top key stays in %.0f%% of the rows)",
                     most, bits(js, sizeof js, x->cmp[most].js_to_single), 100.0 * x->cmp[most].top1_agreement);
    if (used >= (int)len)
        return;
    if (n_barely == 0) {
        snprintf(buf + used, len - (size_t)used, "; no head barely changes (the least moved, head %d, by %s bits).",
                 least, bits(js, sizeof js, x->cmp[least].js_to_single));
        return;
    }
    used += snprintf(buf + used, len - (size_t)used, "; ");
    if (used >= (int)len)
        return;
    used += report_head_list(buf + used, len - (size_t)used, pick, n_heads, n_barely);
    if (used < (int)len)
        snprintf(buf + used, len - (size_t)used, n_barely == 1 ? " barely changes." : " barely change.");
}

/* A role as the variants' sentences name it: the pattern, "no clear role", "diffuse" or "none". */
static const char *role_words(MeasuresRole r)
{
    return r == MEASURES_MIXED ? "no clear role" : measures_role_name(r);
}

/* The heads of variant x whose role is not their reference self's (ref):
 * "head 2: duplicate-token under MHA, no clear role under MQA; ...", or ""
 * when none changed. */
static void role_changes(char *buf, size_t len, const Variant *x, const Variant *ref, const char *name,
                         const char *ref_name)
{
    int used = 0;
    buf[0] = '\0';
    for (int h = 0; h < x->in.cfg.n_heads && used < (int)len; h++) {
        const MeasuresRole a = ref->measures[h].role, b = x->measures[h].role;
        if (a != b)
            used += snprintf(buf + used, len - (size_t)used, "%shead %d: %s under %s, %s under %s", used ? "; " : "",
                             h, role_words(a), ref_name, role_words(b), name);
    }
    if (used > 0 && used < (int)len)
        snprintf(buf + used, len - (size_t)used, ".");
}

/* Variant x's groupings, ranked: every one, or where there are more than
 * REPORT_GROUPINGS_SHOWN the least and the most moved halves of that many,
 * and the run's own. */
#define REPORT_GROUPINGS_SHOWN 10
static void txt_groupings(FILE *f, const Variant *x, const char *name, const char *ref_name,
                          const GroupingRanking *rk)
{
    const int H = x->in.cfg.n_heads, G = x->in.cfg.n_kv_heads;
    Grouping own;
    char run[96], text[96], line[1024];
    if (x->grouping[0])
        snprintf(run, sizeof run, "%s", x->grouping);
    else {
        grouping_contiguous(&own, H, G);
        grouping_format(run, sizeof run, &own);
    }
    int n = snprintf(line, sizeof line, "Which heads share a K/V head (%s): the %d ways to put the %d heads in %d "
                     "groups of %d, ranked by how far the heads move from their %s selves", name, rk->n, H, G, H / G,
                     ref_name);
    if (rk->n > REPORT_GROUPINGS_SHOWN)
        snprintf(line + n, sizeof line - (size_t)n, " (the %d that move them least, the %d that move them most, and "
                 "this run's)", REPORT_GROUPINGS_SHOWN / 2, REPORT_GROUPINGS_SHOWN / 2);
    fputc('\n', f);
    report_wrapped(f, "", line);
    fprintf(f, "  %-20s %8s  %-16s %6s\n", "groups", "mean JS", "moves most", "top1");
    for (int k = 0; k < rk->n; k++) {
        const GroupingScore *r = &rk->scores[k];
        grouping_format(text, sizeof text, &r->g);
        const int mine = strcmp(text, run) == 0;
        if (rk->n > REPORT_GROUPINGS_SHOWN && k >= REPORT_GROUPINGS_SHOWN / 2 &&
            k < rk->n - REPORT_GROUPINGS_SHOWN / 2 && !mine)
            continue;
        char most[32];
        snprintf(most, sizeof most, "head %d, %.3f", r->js_max_head, r->js_max);
        fprintf(f, "  %-20s %8.3f  %-16s %6.2f%s\n", text, r->js_mean, most, r->top1_mean, mine ? "  <- this run" : "");
    }
    snprintf(line, sizeof line, "mean JS: over the heads, of each head's JS from its %s map (bits, over the rows "
             "with a choice); moves most: the head with the largest; top1: the heads' mean top-1 agreement. A shared "
             "K/V head is the mean of its heads' keys and values, each head first turned toward the group's first: "
             "heads whose keys one turn brings together (the same job, in their own coordinates) share with "
             "little loss; heads that want different keys cannot. Ainslie et al. 2023 pool and then uptrain, so "
             "that the heads learn to share; here nothing is retrained. --kv-groups chooses the groups.", ref_name);
    report_wrapped(f, "", line);
}

/* How far variant x's heads moved (summary xs) against how far the heads of
 * random layers pooled the same way move (Chance's pool ranges). */
static void txt_pooling_chance(FILE *f, const Variant *x, const VariantSummary *xs)
{
    const Chance *ch = &x->chance;
    const int H = x->in.cfg.n_heads;
    char line[1024];
    if (ch->pool_draws == 0)
        return; /* too large a layer for the budget, one token (no choice), or the reference is not multi-head */
    const ChanceRange *js = &ch->r[CHANCE_POOL_JS], *top1 = &ch->r[CHANCE_POOL_TOP1];
    int n = snprintf(line, sizeof line, "%s: a head of %d random layers of this shape and sentence, pooled the same "
                     "way, moves by JS %.3f to %.3f, top1 %.2f to %.2f (%s).", xs->name, ch->pool_draws, js->lo,
                     js->hi, top1->lo, top1->hi, chance_span(js));
    int pick[REPORT_CHANCE_HEADS], outside = 0;
    const int shown = H < REPORT_CHANCE_HEADS ? H : REPORT_CHANCE_HEADS;
    for (int k = 0; k < 2; k++)
        for (int side = 1; side >= -1; side -= 2) {
            int m = 0;
            for (int h = 0; h < shown; h++)
                m += pick[h] = chance_side(k ? top1 : js, k ? xs->cmp[h].top1_agreement : xs->cmp[h].js_to_single)
                               == side;
            if (m == 0 || n >= (int)sizeof line)
                continue;
            n += snprintf(line + n, sizeof line - (size_t)n, "%s", outside ? "; " : " Here ");
            if (n < (int)sizeof line)
                n += report_head_list(line + n, sizeof line - (size_t)n, pick, shown, m);
            if (n < (int)sizeof line)
                n += snprintf(line + n, sizeof line - (size_t)n, ": %s %s", k ? "top1" : "JS", chance_words(side));
            outside = 1;
        }
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, outside ? "; every other one within what chance gives."
                                                              : " Every head's are within what chance gives.");
    report_wrapped(f, "", line);
}

const double *report_trained_row(const Training *t, const MhaConfig *c, int r, char *name, size_t len, int *kv,
                                 double *mean)
{
    const double *loss = r == t->n_kv_losses ? t->loss_single : t->loss_kv[r];
    *kv = r == t->n_kv_losses ? 0 : t->kv_heads[r];
    if (*kv)
        variant_name(name, len, c->n_heads, *kv);
    else
        snprintf(name, len, "one head");
    double sum = 0;
    for (int k = 0; k < t->n_seeds; k++)
        sum += loss[k];
    *mean = sum / t->n_seeds;
    return loss;
}

/* Readout i's own losses (n_seeds) of row r of report_trained_row. */
static const double *trained_readout(const Training *t, int r, int i)
{
    return r == t->n_kv_losses ? t->readout[i].single : t->readout[i].kv[r];
}

/* The input's "training" by K/V heads (docs/input.md): the held-out loss of
 * the same model trained as MHA, GQA and MQA (and the one head), from the
 * same start on the same data, side by side with the K/V cache each needs
 * (kv_bytes, LayerSummary's trained_kv_bytes): what sharing keys and values
 * costs when the model learns with it, before the pooled variants, which
 * were not trained. */
static void txt_trained(FILE *f, const Training *t, const MhaConfig *c, const int64_t *kv_bytes)
{
    char line[1024], name[16], kvb[32];
    fputs("\nTrained with shared keys and values (the input's \"training\")\n", f);
    snprintf(line, sizeof line, "The same model trained with each number of K/V heads, from the same start, on the "
             "same data, for the same %d steps, at %d seed%s: its held-out loss in nats (lower is better), beside "
             "the K/V cache it needs.", t->steps, t->n_seeds, t->n_seeds == 1 ? "" : "s");
    report_wrapped(f, "", line);
    const int shown = t->n_seeds < 6 ? t->n_seeds : 6; /* one column per seed while the line fits */
    fprintf(f, "%-9s %9s %12s", "trained", "K/V heads", "K/V B/token");
    for (int k = 0; k < shown; k++) {
        char seed[24];
        snprintf(seed, sizeof seed, "seed %d", t->seeds[k]);
        fprintf(f, " %8s", seed);
    }
    fprintf(f, " %8s\n", "mean");
    for (int r = 0; r <= t->n_kv_losses; r++) {
        int kv;
        double mean;
        const double *loss = report_trained_row(t, c, r, name, sizeof name, &kv, &mean);
        char heads[16];
        snprintf(heads, sizeof heads, kv ? "%d" : "1 (wide)", kv);
        fprintf(f, "%-9s %9s %12s", name, heads, format_grouped(kvb, kv_bytes[r]));
        for (int k = 0; k < shown; k++)
            fprintf(f, " %8.4f", loss[k]);
        fprintf(f, " %8.4f\n", mean);
        for (int i = 0; i < t->n_readouts; i++) { /* each readout's own, under the model's */
            const double *own = trained_readout(t, r, i);
            double sum = 0;
            fprintf(f, "  %-30s", t->readout_name[i]);
            for (int k = 0; k < t->n_seeds; k++) {
                sum += own[k];
                if (k < shown)
                    fprintf(f, " %8.4f", own[k]);
            }
            fprintf(f, " %8.4f\n", sum / t->n_seeds);
        }
    }
    report_wrapped(f, "", "Ainslie et al. 2023 train or uptrain GQA with its keys and values shared; Shazeer 2019 "
                   "trains MQA so. The variants below are not those: they are pooled from this MHA layer, before "
                   "uptraining.");
}

/* The same, as "trained" of report.json. */
static void json_trained(FILE *f, const Training *t, const MhaConfig *c, const int64_t *kv_bytes)
{
    char name[16];
    fprintf(f, "  \"trained\": {\"steps\": %d, \"seeds\": [", t->steps);
    for (int k = 0; k < t->n_seeds; k++)
        fprintf(f, "%s%d", k ? ", " : "", t->seeds[k]);
    fputs("], \"models\": [", f);
    for (int r = 0; r <= t->n_kv_losses; r++) {
        int kv;
        double mean;
        const double *loss = report_trained_row(t, c, r, name, sizeof name, &kv, &mean);
        fprintf(f, "%s\n    {\"name\": \"%s\", \"n_kv_heads\": %d, \"one_head\": %s, \"kv_cache_bytes\": %" PRId64
                ", \"held_out_loss\": [", r ? "," : "", name, kv ? kv : 1, kv ? "false" : "true", kv_bytes[r]);
        for (int k = 0; k < t->n_seeds; k++) {
            fputs(k ? ", " : "", f);
            json_number(f, loss[k]);
        }
        fputc(']', f);
        for (int i = 0; i < t->n_readouts; i++) {
            fprintf(f, "%s\"%s\": [", i ? "], " : ", \"by_readout\": {", t->readout_name[i]); /* plain ASCII */
            const double *own = trained_readout(t, r, i);
            for (int k = 0; k < t->n_seeds; k++) {
                fputs(k ? ", " : "", f);
                json_number(f, own[k]);
            }
        }
        fputs(t->n_readouts ? "]}}" : "}", f);
    }
    fputs("\n  ]},\n", f);
}

/* The variants' cost per layer at T (one line per variant, s (n)), its legend, and the trained
 * K/V losses when the input has them. */
static void variants_txt_cost(FILE *f, const Variant *v, int n, const VariantSummary *s)
{
    const MhaConfig *c = &v[0].in.cfg;
    fprintf(f, "\nCost at T = %d, per layer\n", c->T);
    fprintf(f, "%-8s %9s %12s %14s %12s %16s %6s\n", "variant", "K/V heads", "params", "MAC total",
            "K/V B/token", "K/V cache at T", "blur");
    for (int i = 0; i < n; i++) {
        const CostRow *r = &s[i].cost.input;
        char p[32], m[32], kv[32], at[32], bl[16];
        fprintf(f, "%-8s %9d %12s %14s %12s %16s %6s\n", s[i].name, r->n_kv_heads, format_grouped(p, r->params),
                format_grouped(m, r->mac_total), format_grouped(kv, r->kv_cache_bytes),
                format_grouped(at, r->kv_cache_bytes * c->T), report_cell(bl, sizeof bl, "%+.2f", s[i].blur));
    }
    if (v[0].in.has_single)
        fputs("K/V B/token = 2 (K and V) x K/V heads x head_dim x 2 bytes (fp16). blur = the normalised\n"
              "entropy of the one head trained on its own less the heads' mean (above 0: it is blurrier).\n",
              f);
    else
        fputs("K/V B/token = 2 (K and V) x K/V heads x head_dim x 2 bytes (fp16). blur = the wide head's\n"
              "normalised entropy less the heads' mean (above 0: one wide head would be blurrier).\n",
              f);
    if (v[0].in.training.n_kv_losses)
        txt_trained(f, &v[0].in.training, c, v[0].summary.trained_kv_bytes);
}

/* variants.txt: the variants named, how they were pooled, their cost, how far each head moves from
 * the first variant, in words, and which heads share a K/V head. */
static void write_variants_txt(FILE *f, const Variant *v, int n, const VariantSummary *s, int *pick,
                               const GroupingRanking *ranks)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads;
    const char *ref = s[0].name;
    char a[32], b[32], line[1024];

    fputs("mhaviz report: the same layer with its keys and values shared (", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? (i + 1 < n ? ", " : " and ") : "", s[i].name);
    fputs(")\n\n", f);
    report_tokens(f, v[0].in.tokens, c->T, fprintf(f, "tokens     T = %d: ", c->T), 11);
    fprintf(f, "d_model    %d\n", c->d_model);
    fprintf(f, "heads      %d x head_dim %d\n", H, c->head_dim);
    fputs("variants   ", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s (%d K/V head%s, kv%d/)", i ? ", " : "", s[i].name, s[i].cost.input.n_kv_heads,
                s[i].cost.input.n_kv_heads == 1 ? "" : "s", s[i].cost.input.n_kv_heads);
    fputs("\n", f);
    snprintf(line, sizeof line, "Each variant after the first is pooled from %s, before uptraining (Ainslie et al. "
             "2023 then uptrain): %s Each sub-folder holds that variant's pictures and report.", ref,
             v[n - 1].pool == POOL_MEAN
                 ? "plain means of its K/V heads (--pool mean), which depend on coordinates inside each head that "
                   "mean nothing (turning a head's q and k together changes none of its own maps, but changes "
                   "these means)."
                 : "each head is first turned toward its group's first head (the orthogonal matrix that brings its "
                   "keys closest, applied to its queries too, and another for its values and W_O's rows; Jin et al. "
                   "2025), so that no head's arbitrary coordinates decide the mean.");
    report_wrapped(f, "", line);
    for (int i = 1; i < n; i++)
        if (v[i].layer.alignment.aligned && !v[i].layer.alignment.unique) {
            const PoolAlignment *al = &v[i].layer.alignment;
            snprintf(line, sizeof line, "%s: the alignment is not unique (K/V head %d's %s use fewer directions "
                     "than head_dim): its pooled result is one of many, and turning a head inside its own "
                     "coordinates can change it; what follows is one of them.", s[i].name, al->kv_head,
                     al->values ? "values" : "keys");
            report_wrapped(f, "", line);
        }

    variants_txt_cost(f, v, n, s);

    fprintf(f, "\nHow far each head moves from its %s self\n", ref);
    fprintf(f, "%5s", "head");
    for (int i = 1; i < n; i++)
        fprintf(f, "  %13s", s[i].name);
    fprintf(f, "\n%5s", "");
    for (int i = 1; i < n; i++)
        fprintf(f, "  %6s %6s", "JS", "top1");
    fputc('\n', f);
    for (int h = 0; h < H; h++) {
        fprintf(f, "%5d", h);
        for (int i = 1; i < n; i++)
            fprintf(f, "  %6s %6s", report_cell(a, sizeof a, "%.3f", s[i].cmp[h].js_to_single),
                    report_cell(b, sizeof b, "%.2f", s[i].cmp[h].top1_agreement));
        fputc('\n', f);
    }
    snprintf(line, sizeof line,
             "JS: mean over the rows with a choice of the Jensen-Shannon divergence between the head's map "
             "and its %s map, in bits (0 = the same, 1 = disjoint). top1: share of those rows whose "
             "most-attended key is the same in both.", ref);
    report_wrapped(f, "", line);
    for (int i = 1; i < n; i++)
        txt_pooling_chance(f, &v[i], &s[i]);

    fprintf(f, "\nIn words (a head \"barely changes\" when its JS is below %.2f bits and its top key stays\n"
               "in at least %.0f%% of the rows)\n", REPORT_BARELY_JS, 100.0 * REPORT_BARELY_TOP1);
    for (int i = 1; i < n; i++) {
        variant_sentence(line, sizeof line, &s[i], &s[0], H, pick);
        report_wrapped(f, "  ", line);
        role_changes(line, sizeof line, &v[i], &v[0], s[i].name, ref);
        if (line[0])
            report_wrapped(f, "    ", line);
    }
    for (int i = 1; i < n; i++)
        if (ranks[i].n > 0)
            txt_groupings(f, &v[i], s[i].name, ref, &ranks[i]);
        else if (ranks[i].withheld) {
            snprintf(line, sizeof line, "Which heads share a K/V head (%s): not ranked here, because %s: a turn "
                     "of a head's coordinates could reorder the ranking.", s[i].name,
                     v[i].pool == POOL_MEAN ? "plain means depend on coordinates inside the heads"
                                            : "under some grouping the alignment is not unique");
            fputc('\n', f);
            report_wrapped(f, "", line);
        }
}

/* How variant x was made: "pooled" (null for the input's own layout), its
 * "alignment" (null unless heads were turned) and whether its ranking of
 * groupings was withheld. */
static void json_pooling(FILE *f, const Variant *x, int withheld)
{
    const PoolAlignment *a = &x->layer.alignment;
    if (!x->pooled_from) {
        fprintf(f, "    \"pooled\": null,\n    \"alignment\": null,\n    \"groupings_withheld\": %s,\n",
                withheld ? "true" : "false");
        return;
    }
    fprintf(f, "    \"pooled\": {\"from_kv_heads\": %d, \"method\": \"%s\", \"uptrained\": false, "
               "\"coordinate_free\": %s},\n", x->pooled_from, x->pool == POOL_MEAN ? "mean" : "aligned",
            x->pool == POOL_ALIGNED && a->unique ? "true" : "false");
    if (!a->aligned)
        fputs("    \"alignment\": null,\n", f);
    else {
        fprintf(f, "    \"alignment\": {\"unique\": %s, \"target\": \"the group's first head\", "
                   "\"smallest_singular_ratio\": ", a->unique ? "true" : "false");
        json_number(f, a->ratio);
        fprintf(f, ", \"kv_head\": %d, \"of\": \"%s\", \"unique_from\": ", a->kv_head, a->values ? "values" : "keys");
        json_number(f, ALIGN_UNIQUE_RATIO);
        fputs("},\n", f);
    }
    fprintf(f, "    \"groupings_withheld\": %s,\n", withheld ? "true" : "false");
}

static void write_variants_json(FILE *f, const Variant *v, int n, const VariantSummary *s, int *pick,
                                const GroupingRanking *ranks)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads;
    char line[1024];
    fputs("{\n  \"format\": \"mhaviz-variants\",\n  \"version\": 1,\n  \"tokens\": [", f);
    for (int t = 0; t < c->T; t++) {
        if (t > 0)
            fputs(", ", f);
        json_string(f, v[0].in.tokens[t]);
    }
    fprintf(f, "],\n  \"T\": %d,\n  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"head_dim\": %d,\n"
               "  \"causal\": %s,\n  \"reference\": \"%s\",\n",
            c->T, c->d_model, H, c->head_dim, c->causal ? "true" : "false", s[0].name);
    if (v[0].in.training.n_kv_losses)
        json_trained(f, &v[0].in.training, c, v[0].summary.trained_kv_bytes);
    fputs("  \"barely_changes\": {\"js_below\": ", f);
    json_number(f, REPORT_BARELY_JS);
    fputs(", \"top1_at_least\": ", f);
    json_number(f, REPORT_BARELY_TOP1);
    fputs("},\n  \"variants\": [\n", f);
    for (int i = 0; i < n; i++) {
        char folder[32];
        outdir_variant_folder(folder, sizeof folder, s[i].cost.input.n_kv_heads);
        fprintf(f, "    {\n    \"name\": \"%s\",\n    \"n_kv_heads\": %d,\n    \"folder\": \"%s\",\n", s[i].name,
                s[i].cost.input.n_kv_heads, folder);
        report_json_cost_row(f, "cost", &s[i].cost.input, 1, 0);
        json_pooling(f, &v[i], ranks[i].withheld);
        fprintf(f, "    \"kv_cache_bytes_at_T\": %" PRId64 ",\n    \"blur\": ", s[i].cost.input.kv_cache_bytes * c->T);
        json_number(f, s[i].blur);
        fputs(",\n    \"heads_mean_entropy_norm\": ", f);
        json_number(f, s[i].heads_norm_mean);
        fprintf(f, ",\n    \"chance\": {\"draws\": %d, \"js\": ", v[i].chance.pool_draws);
        report_json_range(f, &v[i].chance.r[CHANCE_POOL_JS]);
        fputs(", \"top1\": ", f);
        report_json_range(f, &v[i].chance.r[CHANCE_POOL_TOP1]);
        fputs("}", f);
        fputs(",\n    \"heads\": [", f);
        for (int h = 0; h < H; h++) {
            fprintf(f, "%s\n      {\"index\": %d, \"kv_head\": %d, \"js_to_reference\": ", h ? "," : "", h,
                    v[i].kv_of[h]);
            json_number(f, s[i].cmp[h].js_to_single);
            fputs(", \"top1_agreement\": ", f);
            json_number(f, s[i].cmp[h].top1_agreement);
            fprintf(f, ", \"barely_changes\": %s, \"role\": \"%s\", \"role_changed\": %s, \"js_side\": %d, "
                       "\"top1_side\": %d}",
                    barely_changes(&s[i].cmp[h]) ? "true" : "false", measures_role_name(v[i].measures[h].role),
                    v[i].measures[h].role != v[0].measures[h].role ? "true" : "false",
                    chance_side(&v[i].chance.r[CHANCE_POOL_JS], s[i].cmp[h].js_to_single),
                    chance_side(&v[i].chance.r[CHANCE_POOL_TOP1], s[i].cmp[h].top1_agreement));
        }
        fputs("\n    ],\n    \"groups\": ", f);
        if (v[i].grouping[0])
            json_string(f, v[i].grouping);
        else
            fputs("null", f);
        fputs(",\n    \"groupings\": [", f);
        for (int k = 0; k < ranks[i].n; k++) {
            const GroupingScore *r = &ranks[i].scores[k];
            char text[96];
            grouping_format(text, sizeof text, &r->g);
            fprintf(f, "%s\n      {\"groups\": \"%s\", \"js_mean\": ", k ? "," : "", text);
            json_number(f, r->js_mean);
            fprintf(f, ", \"js_max\": ");
            json_number(f, r->js_max);
            fprintf(f, ", \"js_max_head\": %d, \"top1_mean\": ", r->js_max_head);
            json_number(f, r->top1_mean);
            fputc('}', f);
        }
        fputs(ranks[i].n ? "\n    ],\n    \"sentence\": " : "],\n    \"sentence\": ", f);
        if (i == 0) {
            fputs("null", f);
        } else {
            variant_sentence(line, sizeof line, &s[i], &s[0], H, pick);
            json_string(f, line);
        }
        fputs(i + 1 < n ? "\n    },\n" : "\n    }\n", f);
    }
    fputs("  ]\n}\n", f);
}

int report_write_variants(const char *dir, const Variant *v, int n, const VariantsSummary *vs, char *err,
                          size_t errlen)
{
    const int H = v[0].in.cfg.n_heads;
    int rc = MHAVIZ_ENOMEM;
    char *path = NULL;
    FILE *f = NULL;
    int *pick = malloc((size_t)H * sizeof *pick); /* (n_heads) scratch of the sentences */
    VariantSummary *s = calloc((size_t)n, sizeof *s);
    if (!pick || !s)
        goto cleanup;
    for (int i = 0; i < n; i++) {
        const LayerSummary *own = &v[i].summary;
        variant_name(s[i].name, sizeof s[i].name, H, v[i].in.cfg.n_kv_heads);
        s[i].cost = own->cost;
        s[i].cmp = variants_summary_cmp(vs, i);
        s[i].blur = own->blur;
        s[i].heads_norm_mean = own->heads_norm_mean;
    }

    if (!(f = report_open_out(dir, OUTDIR_REPORT_TXT, &path, err, errlen, &rc)))
        goto cleanup;
    write_variants_txt(f, v, n, s, pick, vs->ranks);
    if ((rc = report_close_out(f, path, err, errlen)) != MHAVIZ_OK)
        goto cleanup;
    free(path);
    path = NULL;
    if (!(f = report_open_out(dir, OUTDIR_REPORT_JSON, &path, err, errlen, &rc)))
        goto cleanup;
    write_variants_json(f, v, n, s, pick, vs->ranks);
    rc = report_close_out(f, path, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    free(s), free(pick), free(path);
    return rc;
}
