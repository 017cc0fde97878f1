/* report_txt.c — report.txt: what each head does and what splitting into
 * heads bought, for a class. */
#include "report/report_txt.h"
#include "report/report_parts.h"
#include "core/variant.h"
#include "text/token_text.h"
#include "core/measures.h"
#include "core/status.h"
#include "text/format.h"
#include "core/rival.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- report.txt */

/* A number the role rule judges against threshold at, with two decimals
 * (measures_side_text: never printed as the threshold unless it is it). */
static const char *txt_judged(char *buf, size_t n, double x, double at)
{
    return measures_is_null(x) ? report_cell(buf, n, "", x) : measures_side_text(buf, n, x, 2, at);
}

/* A share as a percentage for the role rule's sentences: "49.9%" rather
 * than "50%" for a share just under MEASURES_ROLE_SHARE. */
static const char *share_percent(char *buf, size_t n, double share)
{
    measures_side_text(buf, n, 100.0 * share, 0, 100.0 * MEASURES_ROLE_SHARE);
    strncat(buf, "%", n - strlen(buf) - 1);
    return buf;
}

/* Where pattern r of map m sends attention, in words: "the previous token",
 * "the first token, 'Mary'", ... tokens (T) name the keys; with tokens
 * NULL (and m NULL) none is named: "the first token". */
static const char *pattern_place(char *buf, size_t n, const MapMeasures *m, MeasuresRole r,
                                 char *const *tokens, int T)
{
    char q[REPORT_TOKEN_BYTES + 2];
    switch (r) {
    case MEASURES_PREVIOUS_TOKEN: snprintf(buf, n, "the previous token"); break;
    case MEASURES_SELF: snprintf(buf, n, "its own token"); break;
    case MEASURES_NEXT_TOKEN: snprintf(buf, n, "the next token"); break;
    case MEASURES_DUPLICATE_TOKEN: snprintf(buf, n, "earlier copies of its token"); break;
    case MEASURES_INDUCTION:
        snprintf(buf, n, "the token after an earlier copy of its token (induction)");
        break;
    case MEASURES_FIRST_TOKEN:
        if (!tokens)
            snprintf(buf, n, "the first token");
        else
            snprintf(buf, n, "the first token, %s", report_quoted_token(q, sizeof q, tokens[0]));
        break;
    case MEASURES_LAST_TOKEN:
        if (!tokens)
            snprintf(buf, n, "the last token");
        else
            snprintf(buf, n, "the last token, %s", report_quoted_token(q, sizeof q, tokens[T - 1]));
        break;
    case MEASURES_FIXED_TOKEN:
        if (!tokens)
            snprintf(buf, n, "one fixed token from most rows");
        else
            snprintf(buf, n, "one token, %s (token %d)", report_quoted_token(q, sizeof q, tokens[m->fixed_key]),
                     m->fixed_key);
        break;
    default: snprintf(buf, n, "?"); break;
    }
    return buf;
}

const char *report_role_words(char *buf, size_t n, MeasuresRole r)
{
    char place[96];
    if (r < MEASURES_N_PATTERNS)
        snprintf(buf, n, "looks at %s", pattern_place(place, sizeof place, NULL, r, NULL, 0));
    else if (r == MEASURES_SPLIT)
        snprintf(buf, n, "splits its rows between two relations (no one role)");
    else if (r == MEASURES_DIFFUSE)
        snprintf(buf, n, "spreads its attention almost evenly (no role)");
    else if (r == MEASURES_MIXED)
        snprintf(buf, n, "has no clear role (mixed)");
    else
        snprintf(buf, n, "has only one token to look at (no role)");
    return buf;
}

/* "in 3 of the 10 rows where it could": how often pattern r takes at least
 * half of a row. */
static const char *pattern_support(char *buf, size_t n, const MapMeasures *m, MeasuresRole r)
{
    snprintf(buf, n, "at least half of the row in %d of the %d row%s where it could", m->shown[r], m->rows[r],
             m->rows[r] == 1 ? "" : "s");
    return buf;
}

void report_sentence(char *line, size_t len, const char *who, const MapMeasures *m, char *const *tokens, int T)
{
    char place[REPORT_TOKEN_BYTES + 64], support[96], percent[16];
    if (m->role < MEASURES_N_PATTERNS) {
        snprintf(line, len, "%s looks at %s: %s of its attention on average (even spreading "
                 "would give %.0f%%), %s.", who, pattern_place(place, sizeof place, m, m->role, tokens, T),
                 share_percent(percent, sizeof percent, m->pattern[m->role]), 100.0 * m->even[m->role],
                 pattern_support(support, sizeof support, m, m->role));
    } else if (m->role == MEASURES_SPLIT) {
        char place2[REPORT_TOKEN_BYTES + 64], percent2[16];
        const MeasuresRole a = (MeasuresRole)m->split[0], b = (MeasuresRole)m->split[1];
        snprintf(line, len, "%s splits its rows between two relations: %s on %s + %s on %s on average (even "
                 "spreading would give %.0f%% and %.0f%%).", who, share_percent(percent, sizeof percent, m->pattern[a]),
                 pattern_place(place, sizeof place, m, a, tokens, T),
                 share_percent(percent2, sizeof percent2, m->pattern[b]),
                 pattern_place(place2, sizeof place2, m, b, tokens, T), 100.0 * m->even[a], 100.0 * m->even[b]);
    } else if (m->role == MEASURES_NONE) {
        snprintf(line, len, "with one token (T = 1), %s can only look at it: no pattern.", who);
    } else {
        int n = m->role == MEASURES_DIFFUSE
                    ? snprintf(line, len, "%s spreads its attention almost evenly (entropy %s%% of the "
                                                  "most possible)", who,
                               measures_side_text(percent, sizeof percent, 100.0 * m->entropy_norm, 0,
                                                  100.0 * MEASURES_DIFFUSE_NORM))
                    : snprintf(line, len, "%s has no clear role", who);
        const int tied = m->strongest >= 0 ? measures_tied_with(m, m->strongest) : -1;
        if (tied >= 0) { /* no one strongest: name both */
            char place2[REPORT_TOKEN_BYTES + 64], percent2[16];
            snprintf(line + n, len - (size_t)n,
                     "; its strongest patterns tie: %s on %s and %s on %s (even spreading would give %.0f%% "
                     "and %.0f%%).", share_percent(percent, sizeof percent, m->pattern[m->strongest]),
                     pattern_place(place, sizeof place, m, (MeasuresRole)m->strongest, tokens, T),
                     share_percent(percent2, sizeof percent2, m->pattern[tied]),
                     pattern_place(place2, sizeof place2, m, (MeasuresRole)tied, tokens, T),
                     100.0 * m->even[m->strongest], 100.0 * m->even[tied]);
        } else if (m->strongest >= 0)
            snprintf(line + n, len - (size_t)n,
                     "; strongest pattern: %s on %s (even spreading would give %.0f%%), %s.",
                     share_percent(percent, sizeof percent, m->pattern[m->strongest]),
                     pattern_place(place, sizeof place, m, (MeasuresRole)m->strongest, tokens, T),
                     100.0 * m->even[m->strongest],
                     pattern_support(support, sizeof support, m, (MeasuresRole)m->strongest));
        else
            snprintf(line + n, len - (size_t)n, "; no pattern could show in more than one row.");
    }
}

/* The sentence about map m (report_sentence), wrapped and indented. */
static void txt_sentence(FILE *f, const char *who, const MapMeasures *m, char *const *tokens, int T)
{
    char line[512];
    report_sentence(line, sizeof line, who, m, tokens, T);
    report_wrapped(f, "  ", line);
}

/* A map's row of the first table: role, entropy, confidence, distance and,
 * for a head, how it differs from the wide head. */
static void txt_table_row(FILE *f, const char *label, const char *kv, const MapMeasures *m,
                          const MapComparison *cmp)
{
    char b[6][16];
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", label, kv, measures_role_name(m->role),
            report_cell(b[0], 16, "%.2f", m->entropy_bits),
            txt_judged(b[1], 16, m->entropy_norm, MEASURES_DIFFUSE_NORM),
            report_cell(b[2], 16, "%.2f", m->confidence), report_cell(b[3], 16, "%.1f", m->mean_distance),
            cmp ? report_cell(b[4], 16, "%.2f", cmp->js_to_single) : "-",
            cmp ? report_cell(b[5], 16, "%.2f", cmp->top1_agreement) : "-");
}

/* The role rule's numbers in words, for its legend: k times ("twice"), a
 * fraction ("half", "a quarter"); figures past the words. */
static const char *times_word(char *buf, size_t n, int k)
{
    if (k == 2)
        snprintf(buf, n, "twice");
    else
        snprintf(buf, n, "%d times", k);
    return buf;
}

/* A map's row of the pattern table: each pattern's mean share. */
static void txt_pattern_row(FILE *f, const char *label, const MapMeasures *m)
{
    char b[16];
    fprintf(f, "%5s", label);
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", txt_judged(b, sizeof b, m->pattern[p], MEASURES_ROLE_SHARE));
    fputc('\n', f);
}

/* The cost table's rows and their labels: this input, MHA, each GQA-g, MQA (when it is not MHA: one
 * head), the one head compared.  labels (MEASURES_MAX_GQA + 4, 48) and rows (MEASURES_MAX_GQA + 4) are
 * filled in that order; returns how many rows. */
static int txt_cost_rows(const ReportData *d, const LayerSummary *s, char labels[][48], const CostRow **rows)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    int n_rows = 0;
    snprintf(labels[n_rows], 48, "this input (%s)", measures_layout_name(c->n_heads, c->n_kv_heads));
    rows[n_rows++] = &t->input;
    snprintf(labels[n_rows], 48, "%s", LAYOUT_MHA);
    rows[n_rows++] = &t->mha;
    for (int g = 0; g < t->n_gqa; g++) {
        variant_name(labels[n_rows], 48, c->n_heads, t->gqa[g].n_kv_heads);
        rows[n_rows++] = &t->gqa[g];
    }
    if (c->n_heads > 1) {
        snprintf(labels[n_rows], 48, "%s", LAYOUT_MQA);
        rows[n_rows++] = &t->mqa;
    }
    snprintf(labels[n_rows], 48, "%s", d->single_given ? "one head" : "one wide head");
    rows[n_rows++] = &t->wide;
    return n_rows;
}

/* The cost table itself: a header line, then one line per row (labels (n_rows, 48), rows (n_rows)),
 * each column as wide as its widest number; the total column is dropped when the table would not fit. */
static void txt_cost_table(FILE *f, char labels[][48], const CostRow *const *rows, int n_rows)
{
    const char *heads[8] = {"heads", "K/V", "params", "MAC proj", "MAC scores", "MAC mix", "MAC total",
                            "K/V B/token"};
    char num[MEASURES_MAX_GQA + 4][8][32];
    int w[8];
    for (int k = 0; k < 8; k++)
        w[k] = (int)strlen(heads[k]);
    for (int r = 0; r < n_rows; r++) {
        const CostRow *x = rows[r];
        const int64_t v[8] = {x->n_heads, x->n_kv_heads, x->params, x->mac_projections, x->mac_scores,
                              x->mac_value_mix, x->mac_total,
                              x->kv_cache_bytes};
        for (int k = 0; k < 8; k++) {
            format_grouped(num[r][k], v[k]);
            if ((int)strlen(num[r][k]) > w[k])
                w[k] = (int)strlen(num[r][k]);
        }
    }
    /* Drop the total column when the table would not fit. */
    int total = 17;
    for (int k = 0; k < 8; k++)
        total += w[k] + 2;
    const int show_total = total <= REPORT_WIDTH;

    fprintf(f, "%-17s", "layout");
    for (int k = 0; k < 8; k++)
        if (k != 6 || show_total)
            fprintf(f, "  %*s", w[k], heads[k]);
    fputc('\n', f);
    for (int r = 0; r < n_rows; r++) {
        fprintf(f, "%-17s", labels[r]);
        for (int k = 0; k < 8; k++)
            if (k != 6 || show_total)
                fprintf(f, "  %*s", w[k], num[r][k]);
        fputc('\n', f);
    }
}

/* Under the cost table: why there is no GQA row (when there is none) and the formulas the counts
 * come from. */
static void txt_cost_legend(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    if (t->n_gqa == 0 && c->n_heads > 1)
        fprintf(f, "(no GQA row: %d heads split into no number of K/V heads between 1 and %d)\n", c->n_heads,
                c->n_heads);

    char a[32];
    fprintf(f,
            "params = 2 d^2 + 2 d kv%s; MAC proj = T (2 d^2 + 2 d kv); MAC scores = MAC mix = P d;\n"
            "kv = K/V heads x head_dim; P = %s = %s%s.  MAC: multiply-adds.  K/V B/token: bytes of K/V cache per\n"
            "token per layer = 2 (K and V) x kv x 2 bytes (fp16).\n",
            d->in->w.has_bias ? " + 2 d + 2 kv (biases)" : "",
            c->causal ? "T(T+1)/2 visible (query, key) pairs" : "T^2 (query, key) pairs", format_grouped(a, t->pairs),
            c->causal ? " (masked cells are\nnot computed, so not counted)" : " (no mask: every cell is\ncomputed)");
}

/* The sentence comparing MHA's counts with the wide head's (the same, when they are; a GQA or MQA
 * input's are fewer), or that one head is itself the wide head. */
static void txt_cost_same(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    char line[512];
    if (c->n_heads == 1) {
        fputs("With one head, the multi-head layer is itself one wide head: the same counts.\n", f);
    } else if (t->mha.params == t->wide.params && t->mha.mac_projections == t->wide.mac_projections &&
               t->mha.mac_scores == t->wide.mac_scores && t->mha.mac_value_mix == t->wide.mac_value_mix) {
        /* the counts are the cost table's own rows: MHA's equal the wide head's; a GQA or MQA input's are fewer */
        const CostRow *in = &t->input;
        const int64_t mac_mha = t->mha.mac_total, mac_in = in->mac_total;
        char p1[32], m1[32], p2[32], m2[32], layout[16];
        format_grouped(p1, t->mha.params);
        format_grouped(m1, mac_mha);
        variant_name(layout, sizeof layout, c->n_heads, c->n_kv_heads);
        int n = snprintf(line, sizeof line,
                         "%d heads of width %d, each with its own K/V head (MHA), have the same parameters (%s) and "
                         "multiply-adds (%s) as one head of width %d",
                         c->n_heads, c->head_dim, p1, m1, c->d_model);
        if (in->n_kv_heads != t->mha.n_kv_heads && n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, "; this input's %s, with %d K/V head%s, has fewer (%s "
                          "parameters, %s multiply-adds)", layout, in->n_kv_heads, in->n_kv_heads == 1 ? "" : "s",
                          format_grouped(p2, in->params), format_grouped(m2, mac_in));
        if (n < (int)sizeof line)
            snprintf(line + n, sizeof line - (size_t)n, ". The %d heads have %d softmaxes per query token and %d T x T "
                     "attention maps, where %s has one of each.", c->n_heads, c->n_heads, c->n_heads,
                     d->single_given ? "one head" : "the wide head");
        report_wrapped(f, "", line);
    }
}

/* The sentence on how sharing K/V heads shrinks the K/V cache: MHA's bytes per token per layer, then
 * each GQA-g's and MQA's.  Only with more than one head. */
static void txt_cost_kv_cache(FILE *f, const LayerSummary *s)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    char line[512], a[32], b[32], c1[32];
    int n = snprintf(line, sizeof line,
                     "Sharing K/V heads shrinks the K/V cache from %s bytes per token per layer (MHA)",
                     format_grouped(a, t->mha.kv_cache_bytes));
    for (int g = 0; g < t->n_gqa && n < (int)sizeof line; g++) {
        char name[16];
        variant_name(name, sizeof name, c->n_heads, t->gqa[g].n_kv_heads);
        n += snprintf(line + n, sizeof line - (size_t)n, "%s %s (%s)", g ? "," : " to",
                      format_grouped(b, t->gqa[g].kv_cache_bytes), name);
    }
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, "%s %s (MQA).", t->n_gqa ? " and" : " to",
             format_grouped(c1, t->mqa.kv_cache_bytes));
    report_wrapped(f, "", line);
}

/* The cost section: the table, its legend, and the two sentences that read it. */
static void txt_cost(FILE *f, const ReportData *d, const LayerSummary *s)
{
    char labels[MEASURES_MAX_GQA + 4][48];
    const CostRow *rows[MEASURES_MAX_GQA + 4];
    const int n_rows = txt_cost_rows(d, s, labels, rows);
    txt_cost_table(f, labels, rows, n_rows);
    txt_cost_legend(f, d, s);
    txt_cost_same(f, d, s);
    if (s->c->n_heads == 1)
        return; /* one head: nothing to share */
    txt_cost_kv_cache(f, s);
}

/* report.txt's head: the title, the model and layer (when from a checkpoint), the tokens, the
 * layer's shape, and the input's notes as given. */
static void txt_header(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const char *layout = measures_layout_name(c->n_heads, c->n_kv_heads);
    const char *layout_long = c->n_kv_heads == c->n_heads ? "multi-head: each head has its own keys and values"
                            : c->n_kv_heads == 1          ? "multi-query: all heads share one key/value head"
                                                          : "grouped-query: heads share key/value heads in groups";
    const int kv_mul = c->n_heads / c->n_kv_heads;

    fprintf(f, "mhaviz report: multi-head attention against %s\n\n",
            d->single_given ? "one head trained on its own" : "one wide head");
    const ModelSource *m = d->in->model;
    if (m)
        fprintf(f, "model      %s (%s, %s): layer %d of %d, counted from 0\n", m->name, m->type, m->dtype, m->layer,
                m->n_layers);
    report_tokens(f, d->in->tokens, c->T, fprintf(f, "tokens     T = %d: ", c->T), 11);
    fprintf(f, "d_model    %d\n", c->d_model);
    fprintf(f, "heads      %d x head_dim %d\n", c->n_heads, c->head_dim);
    fprintf(f, "K/V heads  %d: %s (%s", c->n_kv_heads, layout, layout_long);
    if (kv_mul > 1 && c->n_kv_heads > 1)
        fprintf(f, ", %d per group", kv_mul);
    fputs(")\n", f);
    fprintf(f, "causal     %s\n", c->causal ? "yes: each token sees itself and earlier tokens"
                                             : "no: each token sees every token");
    if (c->rope.dim > 0)
        fputs("positions  rotary: each head's q and k turned by the token's position before the scores\n"
              "           (the wide head is made of the turned heads)\n", f);
    if (d->single_given)
        fprintf(f, "one head   1 head of width %d, trained on its own (the input's \"single_head\")\n", c->d_model);
    else
        fprintf(f, "wide head  1 head of width %d, built from the same projections\n", c->d_model);
    if (d->notes) {
        /* as given, line by line; a line too wide for the report is wrapped */
        fputs("\nNotes\n", f);
        for (const char *p = d->notes; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = report_columns(p, n) > REPORT_WIDTH ? strndup(p, n) : NULL;
            if (line)
                report_wrapped(f, "", line);
            else
                fprintf(f, "%.*s\n", (int)n, p);
            free(line);
            p += n + (p[n] == '\n');
        }
    }
}

/* "What each head does": one row per head, then the one head compared, with the columns' legend and
 * (when the input names one) the chance line. */
static void txt_heads(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const RivalName *rival = rival_name(d->single_given);
    fprintf(f, "\nWhat each head does (rows: the heads, then %s)\n",
            d->single_given ? rival->the : "the single wide head");
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", "head", "K/V", "role", "bits", "norm", "conf",
            "dist", "JS", "top1");
    for (int h = 0; h < c->n_heads; h++) {
        char label[16], kv[16];
        snprintf(label, sizeof label, "%d", h);
        snprintf(kv, sizeof kv, "%d", layer_summary_kv_head(s, h));
        txt_table_row(f, label, kv, &s->heads[h], &s->cmp[h]);
    }
    txt_table_row(f, rival->label, "-", &s->wide, NULL);
    fputs("bits: mean row entropy (0 = one key).  norm: entropy / the most possible (1 = uniform).\n"
          "conf: mean largest weight.  dist: mean distance to the keys looked at, in tokens.\n", f);
    if (d->single_given)
        fprintf(f, "alone: %s.\nJS: Jensen-Shannon divergence from it (0 = same, 1 = disjoint).\n"
                   "top1: share of rows whose top key is its top key too.  - : not defined for this input.\n",
                rival->the);
    else
        fputs("JS: Jensen-Shannon divergence from the wide head (0 = same, 1 = disjoint).\n"
              "top1: share of rows whose top key is the wide head's.  - : not defined for this input.\n", f);
    if (d->chance)
        report_txt_heads_chance(f, d->chance, s);
}

/* "Where the attention goes": each pattern's mean share (rows: the heads, then the one head
 * compared), the rows where each could show, and the role rule's legend. */
static void txt_patterns(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const RivalName *rival = rival_name(d->single_given);
    fputs("\nWhere the attention goes: each pattern's share of a row, on average over the rows where\n"
          "it could show\n",
          f);
    fprintf(f, "%5s", "head");
    static const char *const short_names[MEASURES_N_PATTERNS] = {"prev", "self", "next", "dup",
                                                                 "ind",  "first", "last", "fixed"};
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", short_names[p]);
    /* rows where each could show: the same for every map but fixed's, whose key is each map's own */
    fprintf(f, "\n%5s", "rows");
    for (int p = 0; p < MEASURES_FIXED_TOKEN; p++)
        fprintf(f, " %5d", s->wide.rows[p]);
    fputc('\n', f);
    for (int h = 0; h < c->n_heads; h++) {
        char label[16];
        snprintf(label, sizeof label, "%d", h);
        txt_pattern_row(f, label, &s->heads[h]);
    }
    txt_pattern_row(f, rival->label, &s->wide);
    fputs("prev, self, next: the token before, itself, the token after.  dup: earlier copies of its\n"
          "token.  ind: the token after an earlier copy (induction).  first, last: token 0, token T-1.\n"
          "fixed: the one key most rows look at, named below.  rows: rows where each could show\n"
          "(for fixed, each map's own key: not one count for all).\n"
          "Each cell counts for one pattern, the first of this list that names it; a row with one\n"
          "visible key counts for none.\n",
          f);
    /* The role rule's legend, from the thresholds the rule uses (measures.h). */
    char times[24], shown[24], part[24];
    fprintf(f,
            "A role needs a share of at least %.2f and %s what spreading evenly would give, and at\n"
            "least %s of the row in %d rows or more and in %s of the rows where it could; another\n"
            "pattern whose share ties it (less than %.3f apart) makes the map split between the two.\n"
            "Without one, a map splits its rows between its two largest patterns when each has %.2f or\n"
            "more and more than spreading evenly gives, and together %.2f to 1 (more comes from\n"
            "different rows) and %.1f times what spreading evenly gives them.\n"
            "- : no row where it could.\n",
            MEASURES_ROLE_SHARE, times_word(times, sizeof times, MEASURES_ROLE_EVEN_TIMES),
            report_fraction_word(shown, sizeof shown, MEASURES_SHOWN_SHARE), MEASURES_MIN_ROLE_ROWS,
            report_fraction_word(part, sizeof part, 1.0 / MEASURES_ROLE_ROWS_PART), MEASURES_TIE_SHARE,
            MEASURES_SPLIT_EACH, MEASURES_ROLE_SHARE, MEASURES_SPLIT_EVEN_TIMES);
}

/* "In words": one sentence per head, then one for the head compared. */
static void txt_in_words(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const RivalName *rival = rival_name(d->single_given);
    fputs("\nIn words\n", f);
    for (int h = 0; h < c->n_heads; h++) {
        char who[32];
        snprintf(who, sizeof who, "head %d", h);
        txt_sentence(f, who, &s->heads[h], d->in->tokens, c->T);
    }
    txt_sentence(f, rival->the, &s->wide, d->in->tokens, c->T);
}

/* "Many heads against" the one head: training (when given), what is kept, the blur, the mean
 * entropies and how far the outputs are apart. */
static void txt_against(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const RivalName *rival = rival_name(d->single_given);
    fprintf(f, "\nMany heads against %s\n", d->single_given ? "one head trained on its own" : "one wide head");
    if (d->in->training.n_seeds)
        report_txt_training(f, &d->in->training, c->n_heads, d->pooled_from, c->n_kv_heads);
    report_txt_kept(f, d, s);
    report_txt_blur(f, d, s);
    char b1[16], b2[16];
    fprintf(f, "mean row entropy: %.2f bits per head on average, %.2f bits for %s\n",
            s->heads_bits_mean, s->wide.entropy_bits, rival->the);
    fprintf(f, "outputs: ||O_multi - O_single|| / ||O_multi|| = %s, mean cosine %s\n",
            report_cell(b1, sizeof b1, "%.4f", s->rel_diff), report_cell(b2, sizeof b2, "%.4f", s->cosine));
}

/* report.txt's sections in the order they are printed. */
void report_write_txt(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    txt_header(f, d, s);
    txt_heads(f, d, s);
    txt_patterns(f, d, s);
    txt_in_words(f, d, s);
    txt_against(f, d, s);
    if (d->pulls)
        report_txt_pulls(f, d);

    fprintf(f, "\nCost at T = %d, d = d_model = %d\n", c->T, c->d_model);
    txt_cost(f, d, s);
}
