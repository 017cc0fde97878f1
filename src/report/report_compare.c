/* report_compare.c — report.txt's comparison of the heads with the one
 * head (the wide head built from their projections, or one trained on its
 * own): how it combines their pulls, the trained rival's held-out losses,
 * which of the heads' pulls it kept and lost, its blur, and beside each
 * number what random layers of the same shape give (core/chance.h). */
#include "report/report_parts.h"
#include "core/chance.h"
#include "text/chance_words.h"
#include "core/kept.h"
#include "core/measures.h"
#include "core/pull.h"
#include "core/rival.h"
#include "text/format.h"
#include "text/contest.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What random layers give for number st, as a clause of a sentence: "200
 * random layers of this shape and sentence: -0.14 to +0.09 (95%): within
 * what chance gives". fmt prints one value times scale (100: a percentage). */
static void chance_clause(char *buf, size_t n, const Chance *ch, ChanceStat st, double x, const char *fmt,
                          double scale)
{
    if (ch->draws == 0) {
        snprintf(buf, n, "not compared with random layers (a layer this large: the budget allows %d draws, "
                 "fewer than the %d a range needs)", ch->budget_draws, CHANCE_MIN_DRAWS);
        return;
    }
    const ChanceRange *r = &ch->r[st];
    if (r->n == 0) {
        snprintf(buf, n, "no random layer of this shape and sentence (%d drawn) has one", ch->draws);
        return;
    }
    char lo[32], hi[32];
    snprintf(lo, sizeof lo, fmt, scale * r->lo);
    snprintf(hi, sizeof hi, fmt, scale * r->hi);
    const int side = chance_side(r, x);
    snprintf(buf, n, "%d random layers of this shape and sentence%s: %s to %s (%s): %s", ch->draws,
             ch->draws < CHANCE_DRAWS ? " (all the budget allows at this size)" : "", lo, hi,
             chance_span(r), chance_words(side));
}

/* Why a layer with one token is not compared with random layers: no
 * query has a choice, so none is drawn (chance_has_choice), and every
 * number compared is null or 0. */
static const char NO_CHOICE[] = "not compared with random layers: no token has more than one key to choose from, "
                                "here or in any random layer of this shape, so none was drawn";

/* The rows with outcome o as "'gave' (1), 'the' (2)", wrapped after label. */
static void txt_pull_rows(FILE *f, const PullLayer *p, char *const *tokens, PullOutcome o, const char *label)
{
    size_t n = strlen(label) + 1;
    for (int i = 0; i < p->T; i++)
        n += REPORT_TOKEN_BYTES + 24;
    char *line = malloc(n), *end = line, quoted[REPORT_TOKEN_BYTES + 2];
    if (!line)
        return;
    end += sprintf(end, "%s", label);
    int any = 0;
    for (int i = 0; i < p->T; i++)
        if (p->rows[i].outcome == o) {
            end += sprintf(end, "%s %s (%d)", any ? "," : "", report_quoted_token(quoted, sizeof quoted, tokens[i]), i);
            any = 1;
        }
    if (any)
        report_wrapped(f, "  ", line);
    free(line);
}

/* The rows per outcome against what random layers give. */
static void txt_pulls_chance(FILE *f, const PullLayer *p, const Chance *ch)
{
    static const struct {
        ChanceStat stat;
        PullOutcome outcome;
        const char *name;
    } counted[] = {{CHANCE_AGREED, PULL_AGREED, "nothing lost"}, {CHANCE_SPLIT, PULL_SPLIT, "split"},
                   {CHANCE_FOLLOWED, PULL_FOLLOWED, "followed"}, {CHANCE_OWN, PULL_OWN, "no head's key"},
                   {CHANCE_NO_PULL, PULL_NO_PULL, "no pull"}};
    const int n_counted = (int)(sizeof counted / sizeof counted[0]);
    char line[1024], clause[256];
    if (ch->draws == 0) {
        chance_clause(clause, sizeof clause, ch, CHANCE_SPLIT, 0, "%.0f", 1.0);
        snprintf(line, sizeof line, "These counts are %s.", clause);
        report_wrapped(f, "  ", line);
        return;
    }
    int n = snprintf(line, sizeof line, "%d random layers of this shape and sentence give (%s):", ch->draws,
                     chance_span(&ch->r[CHANCE_SPLIT]));
    for (int k = 0; k < n_counted; k++) {
        const ChanceRange *r = &ch->r[counted[k].stat];
        n += snprintf(line + n, sizeof line - (size_t)n, "%s %s in %.0f to %.0f rows", k ? "," : "",
                      counted[k].name, r->lo, r->hi);
    }
    int said = 0, within[8], n_within = 0;
    for (int side = 1; side >= -1; side -= 2) {
        int any = 0;
        for (int k = 0; k < n_counted && n < (int)sizeof line; k++)
            if (chance_side(&ch->r[counted[k].stat], p->count[counted[k].outcome]) == side) {
                n += snprintf(line + n, sizeof line - (size_t)n, "%s%s (%d)", any ? ", " : said ? "; " : "; here ",
                              counted[k].name, p->count[counted[k].outcome]);
                any = said = 1;
            }
        if (any && n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, ": %s", chance_words(side));
    }
    for (int k = 0; k < n_counted; k++)
        if (chance_side(&ch->r[counted[k].stat], p->count[counted[k].outcome]) == 0)
            within[n_within++] = k;
    /* the counts within the range, named (their numbers are in the ranges above) */
    if (!said && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, "; here every count is %s", chance_words(0));
    else if (n_within > 0 && n < (int)sizeof line) {
        n += snprintf(line + n, sizeof line - (size_t)n, "; the other count%s, ", n_within == 1 ? "" : "s");
        for (int m = 0; m < n_within && n < (int)sizeof line; m++)
            n += snprintf(line + n, sizeof line - (size_t)n, "%s%s", m == 0 ? "" : m + 1 == n_within ? " and " : ", ",
                          counted[within[m]].name);
        if (n < (int)sizeof line)
            n += snprintf(line + n, sizeof line - (size_t)n, ", %s %s", n_within == 1 ? "is" : "are",
                          chance_words(0));
    }
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, ".");
    report_wrapped(f, "  ", line);
}

/* Contest lines report.txt writes at most (a 45-token class sentence
 * writes about a hundred); the rest are in report.json. */
#define REPORT_CONTEST_LINES 256

/* Which heads decided each choice of the wide head: for every row with a
 * pulling head whose favourite it did not choose, its margin between its
 * top key and that favourite, split into the heads' parts (pull_contest);
 * or, for a head trained on its own, why there is no such split. */
static void txt_contests(FILE *f, const ReportData *d, const PullLayer *p)
{
    char *const *tokens = d->in->tokens;
    const int H = p->n_heads;
    char line[2048], sentence[1536], qa[REPORT_TOKEN_BYTES + 2], qb[REPORT_TOKEN_BYTES + 2];
    char qi[REPORT_TOKEN_BYTES + 2], ka[REPORT_TOKEN_BYTES + 16], kb[REPORT_TOKEN_BYTES + 16];
    if (!p->identity) {
        report_wrapped(f, "  ", "Who decided each choice: a head trained on its own is not built from the heads, so "
                                "its margin between two keys does not split into the heads' parts; only its top keys "
                                "are compared with theirs.");
        return;
    }
    int *keys = malloc((size_t)H * sizeof *keys);         /* (n_heads) the contested keys */
    double *contrib = malloc((size_t)H * sizeof *contrib); /* (n_heads) one contest's parts */
    if (!keys || !contrib) {
        free(keys), free(contrib);
        return;
    }
    int any = 0, said = 0, more = 0;
    for (int i = 0; i < p->T; i++) {
        const int m = pull_contested(p, i, keys);
        if (said + m > REPORT_CONTEST_LINES) {
            more += m;
            continue;
        }
        said += m;
        for (int k = 0; k < m; k++) {
            if (!any)
                report_wrapped(f, "  ", "Who decided each choice: the wide head's margin between its top key and "
                                        "each pulling head's favourite, split into the heads' parts (each head's own "
                                        "margin between the two keys / sqrt(n_heads)); the parts add up to the "
                                        "margin. A positive part carried the choice, a negative one lost it. A tie: "
                                        "the two keys' weights less than 0.005 apart, or the margin within float "
                                        "error.");
            any = 1;
            PullContest ct;
            pull_contest(&d->in->cfg, d->multi->scores, d->single->scores, d->single->att, i, p->rows[i].wide_top,
                         keys[k], contrib, &ct);
            const int n = p->rows[i].n_keys;
            contest_key(ka, sizeof ka, report_quoted_token(qa, sizeof qa, tokens[ct.key]), tokens, n, ct.key);
            contest_key(kb, sizeof kb, report_quoted_token(qb, sizeof qb, tokens[ct.other]), tokens, n, ct.other);
            contest_text(sentence, sizeof sentence, &ct, H, ka, kb);
            snprintf(line, sizeof line, "%s (%d): %s", report_quoted_token(qi, sizeof qi, tokens[i]), i, sentence);
            report_wrapped(f, "  ", line);
        }
    }
    if (more > 0) {
        snprintf(line, sizeof line, "%d more contests, in the later rows, are in report.json (pulls.rows[].contests).",
                 more);
        report_wrapped(f, "  ", line);
    }
    free(keys), free(contrib);
}

/* How the wide head combines the heads' scores, in sentences (pull.h). */
void report_txt_pulls(FILE *f, const ReportData *d)
{
    const PullLayer *p = d->pulls;
    char *const *tokens = d->in->tokens;
    const Chance *ch = d->chance;
    char line[1024];
    const int H = p->n_heads;
    const char *who = rival_name(!p->identity)->the; /* a wide head of its own weights is trained on its own */
    if (p->identity)
        fputs("\nHow the wide head combines the heads (query_NN.png)\n", f);
    else
        fprintf(f, "\nThe heads' top keys against those of %s (query_NN.png)\n", who);
    char dev[128], num[FORMAT_SIGNIFICANT_BYTES], reach[FORMAT_SIGNIFICANT_BYTES];
    if (p->identity_max_dev == 0)
        snprintf(dev, sizeof dev, "they agree exactly");
    else
        snprintf(dev, sizeof dev, "the largest difference is %s, float rounding",
                 format_significant(num, p->identity_max_dev, 2));
    if (p->identity)
        snprintf(line, sizeof line, "Its score is the heads' scores added up: wide(i, j) = (1/sqrt(%d)) x "
                 "sum over the %d heads of score_h(i, j), since its query and key are theirs side by side; "
                 "mhaviz computes it so (its tests compare it with q.k/sqrt(d_model) computed directly). "
                 "Summed again in double precision on every visible cell: %s (the scores reach %s). "
                 "So its softmax weight on a "
                 "key is in proportion to the product over the heads of exp(score_h / sqrt(%d)).", H, H, dev,
                 format_significant(reach, p->max_abs_score, 3), H);
    else
        snprintf(line, sizeof line, "It has weights of its own (\"single_head\"), so its scores are not the "
                 "heads' scores added up: that identity holds only for a wide head built from the heads' "
                 "projections. Its top keys are compared with the heads' all the same.");
    report_wrapped(f, "  ", line);
    const int choosing = p->T - p->count[PULL_NO_CHOICE];
    if (choosing == 0) {
        report_wrapped(f, "  ", "No token has more than one key to choose from.");
        return;
    }
    int agreed_blur = 0; /* rows that blur though every pulling head agrees */
    for (int i = 0; i < p->T; i++)
        agreed_blur += p->rows[i].outcome == PULL_AGREED && p->rows[i].blurs;
    char also[96] = "", none[384] = "";
    if (agreed_blur > 0)
        snprintf(also, sizeof also, ", though %d of them blur", agreed_blur);
    if (p->count[PULL_NO_PULL] > 0)
        snprintf(none, sizeof none, "in %d no head is sharp enough to pull; ", p->count[PULL_NO_PULL]);
    if (p->count[PULL_TIE] > 0) {
        const size_t used = strlen(none);
        snprintf(none + used, sizeof none - used, "in %d %s ties its top key with another (weights less than "
                 "%.3f apart, or scores equal within float error): a tie, no choice; ", p->count[PULL_TIE],
                 rival_name(!p->identity)->the, PULL_TIE_WEIGHT);
    }
    snprintf(line, sizeof line, "Of the %d tokens with more than one key to choose from: %sin %d every pulling "
             "head's top key is %s too (nothing lost%s); in %d %s (no key gets more than %.0f%% of %s "
             "attention); in %d %s; in %d it chose a key that is no pulling head's top key. A head "
             "pulls in a row when it gives its top key more than %.0f%% of the row, at least %.3f more than any "
             "other key (no tie), and the row is sharp (its normalised entropy below %.1f, sharpness.png).",
             choosing, none, p->count[PULL_AGREED], rival_name(!p->identity)->too, also, p->count[PULL_SPLIT],
             p->identity ? "the pulls split and the row blurs" : "the row blurs", 100 * PULL_BLUR_AT_MOST,
             p->identity ? "the wide head's" : "its", p->count[PULL_FOLLOWED],
             "its top key is the top key of some pulling heads, not of the others (followed: an outcome; "
             "who decided it is below)",
             p->count[PULL_OWN], 100 * PULL_BLUR_AT_MOST, PULL_TIE_WEIGHT, MEASURES_SHARP_BELOW);
    report_wrapped(f, "  ", line);
    if (ch)
        txt_pulls_chance(f, p, ch);
    txt_pull_rows(f, p, tokens, PULL_AGREED, "nothing lost:");
    txt_pull_rows(f, p, tokens, PULL_SPLIT, "split:");
    txt_pull_rows(f, p, tokens, PULL_FOLLOWED, p->identity ? "followed:" : "a head's top key:");
    txt_pull_rows(f, p, tokens, PULL_OWN, "a choice no head made:");
    txt_pull_rows(f, p, tokens, PULL_NO_PULL, "no pull:");
    txt_pull_rows(f, p, tokens, PULL_TIE, "a tie:");
    txt_contests(f, d, p);
    const int q = p->default_query;
    char quoted[REPORT_TOKEN_BYTES + 2];
    const int n_keys = p->rows[q].n_top_keys; /* the most in any row */
    char where[96];
    if (n_keys > 1)
        snprintf(where, sizeof where, ", where the heads' top keys differ most (%d different keys)", n_keys);
    else /* the last token: every row ties at one key */
        snprintf(where, sizeof where, ": the heads' top keys are the same in every row");
    snprintf(line, sizeof line, "query_NN.png draws one token's pulls: by default %s (%d)%s; --query picks "
             "another.", report_quoted_token(quoted, sizeof quoted, tokens[q]), q, where);
    report_wrapped(f, "  ", line);
}

/* One row's cells of report_txt_training: the losses (n_seeds) per seed while
 * they fit, then their lowest to highest, and the line's end. */
static void txt_loss_cells(FILE *f, const double *loss, int n_seeds, int per_seed)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int k = 0; k < n_seeds; k++) {
        lo = fmin(lo, loss[k]), hi = fmax(hi, loss[k]);
        if (per_seed)
            fprintf(f, " %7.3f", loss[k]);
    }
    if (n_seeds > 1)
        fprintf(f, "   %.3f to %.3f", lo, hi);
    fputc('\n', f);
}

/* The held-out losses of the multi-head model and of the one head trained
 * on its own (the input's "training"), per seed while they fit, and their
 * spread over the seeds; under each, every readout's own when given.
 * pooled_from > 0: the layer on screen pooled the input's pooled_from K/V
 * heads into n_kv; the losses are the model's as
 * trained, and the table says so. */
void report_txt_training(FILE *f, const Training *t, int n_heads, int pooled_from, int n_kv)
{
    int single_worse = 0;
    for (int k = 0; k < t->n_seeds; k++)
        single_worse += t->loss_single[k] > t->loss_heads[k];
    const int per_seed = t->n_seeds <= 6; /* one column per seed while the line fits */
    fprintf(f, "held-out loss in nats after %d training steps, the same data for both (these weights: seed %d)\n",
            t->steps, t->seed);
    char line[512];
    if (pooled_from) {
        snprintf(line, sizeof line, "These losses are the model's as trained, with %d K/V heads, before its K/V "
                 "heads were pooled into %d: the pooled heads analysed here were neither trained nor evaluated.",
                 pooled_from, n_kv);
        report_wrapped(f, "", line);
    }
    fprintf(f, "%-31s", "");
    for (int k = 0; per_seed && k < t->n_seeds; k++) {
        char seed[24];
        snprintf(seed, sizeof seed, "seed %d", t->seeds[k]);
        fprintf(f, " %7s", seed);
    }
    fprintf(f, "   %s\n", t->n_seeds == 1 ? "" : "lowest to highest");
    for (int m = 0; m < 2; m++) {
        char who[48];
        if (pooled_from)
            snprintf(who, sizeof who, "%d heads as trained", n_heads);
        else if (n_kv < n_heads) /* trained so: its heads share n_kv K/V heads */
            snprintf(who, sizeof who, "%d heads, %d K/V head%s", n_heads, n_kv, n_kv == 1 ? "" : "s");
        else
            snprintf(who, sizeof who, "%d heads", n_heads);
        fprintf(f, "  %-29s", m == 0 ? who : "one head trained on its own");
        txt_loss_cells(f, m == 0 ? t->loss_heads : t->loss_single, t->n_seeds, per_seed);
        for (int r = 0; r < t->n_readouts; r++) { /* each readout's own, under the model's */
            fprintf(f, "    %-27s", t->readout_name[r]);
            txt_loss_cells(f, m == 0 ? t->readout[r].heads : t->readout[r].single, t->n_seeds, per_seed);
        }
    }
    snprintf(line, sizeof line, "The one head trained on its own ended with a larger held-out loss than the %d "
             "heads%s in %d of the %d seed%s.", n_heads, pooled_from ? " as trained" : "", single_worse, t->n_seeds,
             t->n_seeds == 1 ? "" : "s");
    report_wrapped(f, "  ", line);
}

/* Each head's JS and top1 against what the heads of random layers give. */
void report_txt_heads_chance(FILE *f, const Chance *ch, const LayerSummary *s)
{
    char line[1024], clause[256];
    if (!chance_has_choice(s->c)) {
        snprintf(line, sizeof line, "JS, top1: %s.", NO_CHOICE);
        report_wrapped(f, "", line);
        return;
    }
    if (ch->draws == 0) {
        chance_clause(clause, sizeof clause, ch, CHANCE_HEAD_JS, 0, "%.2f", 1.0);
        snprintf(line, sizeof line, "JS, top1: %s.", clause);
        report_wrapped(f, "", line);
        return;
    }
    const ChanceRange *js = &ch->r[CHANCE_HEAD_JS], *top1 = &ch->r[CHANCE_HEAD_TOP1];
    int n = snprintf(line, sizeof line, "A head of %d random layers of this shape and sentence (%d heads, %s): JS "
                     "%.2f to %.2f, top1 %.2f to %.2f.", ch->draws, js->n, chance_span(js), js->lo, js->hi, top1->lo,
                     top1->hi);
    static const char *const names[2] = {"JS", "top1"};
    const ChanceRange *r[2] = {js, top1};
    int outside = 0;
    int pick[REPORT_CHANCE_HEADS];
    for (int k = 0; k < 2; k++)
        for (int side = 1; side >= -1; side -= 2) {
            int m = 0;
            for (int h = 0; h < s->c->n_heads && h < REPORT_CHANCE_HEADS; h++) {
                const double x = k == 0 ? s->cmp[h].js_to_single : s->cmp[h].top1_agreement;
                m += pick[h] = chance_side(r[k], x) == side;
            }
            if (m == 0 || n >= (int)sizeof line)
                continue;
            n += snprintf(line + n, sizeof line - (size_t)n, "%s", outside ? "; " : " Here ");
            if (n < (int)sizeof line)
                n += report_head_list(line + n, sizeof line - (size_t)n, pick, s->c->n_heads < REPORT_CHANCE_HEADS ?
                               s->c->n_heads : REPORT_CHANCE_HEADS, m);
            if (n < (int)sizeof line)
                n += snprintf(line + n, sizeof line - (size_t)n, ": %s %s", names[k], chance_words(side));
            outside = 1;
        }
    if (n < (int)sizeof line)
        snprintf(line + n, sizeof line - (size_t)n, outside ? "; every other one within what chance gives."
                                                              : " Every head's are within what chance gives.");
    report_wrapped(f, "", line);
}

/* "head 0", "heads 0 and 2": the heads whose relation is relation r. */
static int relation_heads(char *buf, size_t len, const KeptLayer *k, int r)
{
    int pick[REPORT_CHANCE_HEADS] = {0}, m = 0;
    const int H = k->n_heads < REPORT_CHANCE_HEADS ? k->n_heads : REPORT_CHANCE_HEADS;
    for (int h = 0; h < H; h++)
        m += pick[h] = k->heads[h].of == r && k->heads[h].rows > 0;
    return report_head_list(buf, len, pick, H, m);
}

/* The relations' rows against random layers as sharp as these heads (chance_sharp). */
static void txt_kept_chance(char *line, size_t len, const KeptLayer *k, const Chance *ch, const MhaConfig *c)
{
    if (!chance_has_choice(c)) {
        snprintf(line, len, "These counts are %s.", NO_CHOICE);
        return;
    }
    const ChanceRange *rl = &ch->r[CHANCE_LOST_SHARE];
    if (k->rows == 0) {
        snprintf(line, len, "With no relation held, there is nothing to compare with random layers.");
        return;
    }
    const double lost = (double)k->verdict[KEPT_LOST] / k->rows;
    if (ch->sharp_draws == 0 || rl->n < CHANCE_MIN_DRAWS) {
        snprintf(line, len, "No fair baseline: random layers of this shape %s, so no verdict against chance "
                 "is given here (random layers that barely pull have little to keep or lose, and their counts "
                 "would say nothing).",
                 ch->sharp_draws == 0 ? "were not drawn as sharp as these heads (too few allowed at this size, or "
                                        "no sharpness to match)"
                                      : "scaled to these heads' sharpness hold too few relations to give a range");
        return;
    }
    const int side = chance_side(rl, lost);
    snprintf(line, len, "%d random layers of this shape and sentence, each scaled to these heads' sharpness (a mean "
             "normalised entropy of %.2f), lose %.0f%% to %.0f%% of the relation-rows their heads hold (%s, the %d "
             "layers that hold some): the %.0f%% lost here (%d of %d) %s %s.", ch->sharp_draws, ch->sharp_target,
             100 * rl->lo, 100 * rl->hi, chance_span(rl), rl->n, 100 * lost, k->verdict[KEPT_LOST], k->rows,
             side == 0 ? "is" : "are", chance_words(side));
}

/* The headline: which of the heads' relations the wide head kept, halved
 * and lost, row by row (kept.h), against chance. */
void report_txt_kept(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const KeptLayer *k = &s->kept;
    const RivalName *who = rival_name(d->single_given);
    char line[4096], heads[256], share[16];
    int n = snprintf(line, sizeof line, "What one softmax keeps and loses: of each relation the heads hold, %s", who->the);
    int any = 0;
    for (int r = 0; r < k->n_relations && n < (int)sizeof line; r++) {
        const KeptRelation *kr = &k->relations[r];
        if (kr->rows == 0)
            continue;
        relation_heads(heads, sizeof heads, k, r);
        n += snprintf(line + n, sizeof line - (size_t)n, "%s kept the %s relation%s (%s) in %d of %d row%s, halved it "
                      "in %d, lost it in %d (its mean share %s)", any ? ";" : "",
                      measures_role_name((MeasuresRole)kr->relation), kr->is_role ? "" : " (a strongest pattern, not a role)",
                      heads, kr->verdict[KEPT_KEPT], kr->rows, kr->rows == 1 ? "" : "s", kr->verdict[KEPT_HALVED],
                      kr->verdict[KEPT_LOST], measures_weight_text(share, sizeof share, kr->share_sum / kr->rows));
        any = 1;
    }
    char half[16], quarter[16];
    report_fraction_word(half, sizeof half, MEASURES_SHOWN_SHARE);
    report_fraction_word(quarter, sizeof quarter, KEPT_HALVED_AT_LEAST);
    if (!any)
        n += snprintf(line + n, sizeof line - (size_t)n, " has nothing to keep or lose: in no row does a head's "
                      "role (or strongest pattern) hold at least %s of the row while the row is sharp "
                      "(normalised entropy below %.1f).", half, MEASURES_SHARP_BELOW);
    else if (n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, ". A head holds its relation in a row when its role's "
                      "cells (or its strongest pattern's) hold at least %s of the row and the row is sharp "
                      "(normalised entropy below %.1f); %s kept it when its own cells of that pattern hold at "
                      "least %s of its row too, halved it when they hold at least %s and less than %s, lost it "
                      "below %s; its mean share is what those cells hold on average over the rows. A row where "
                      "two heads hold the same relation counts once.", half, MEASURES_SHARP_BELOW, who->the, half,
                      quarter, half, quarter);
    int quiet = 0; /* heads that hold their pattern in no row (those whose strongest patterns tie: below) */
    for (int h = 0; h < k->n_heads; h++)
        quiet += k->heads[h].rows == 0 && (k->heads[h].relation >= 0 || s->heads[h].strongest < 0);
    if (quiet > 0 && any && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " %d head%s hold%s no relation: in none of %s rows does %s "
                      "pattern hold at least %s of the row while the row is sharp; nothing to keep or lose.", quiet,
                      quiet == 1 ? "" : "s", quiet == 1 ? "s" : "", quiet == 1 ? "its" : "their",
                      quiet == 1 ? "its" : "their", half);
    for (int h = 0; h < k->n_heads && n < (int)sizeof line; h++) {
        const MapMeasures *m = &s->heads[h];
        if (k->heads[h].relation >= 0 || m->strongest < 0)
            continue;
        const int other = measures_tied_with(m, m->strongest);
        char a[16], b[16];
        n += snprintf(line + n, sizeof line - (size_t)n, " Head %d's strongest patterns tie (%s %s, %s %s): it "
                      "holds no one relation; nothing to keep or lose.", h, measures_role_name((MeasuresRole)m->strongest),
                      measures_weight_text(a, sizeof a, m->pattern[m->strongest]),
                      measures_role_name((MeasuresRole)other), measures_weight_text(b, sizeof b, m->pattern[other]));
    }
    if (k->rows > 0 && n < (int)sizeof line)
        n += snprintf(line + n, sizeof line - (size_t)n, " In all, of the %d relation-rows the heads hold, it kept "
                      "%d, halved %d and lost %d.", k->rows, k->verdict[KEPT_KEPT], k->verdict[KEPT_HALVED],
                      k->verdict[KEPT_LOST]);
    report_wrapped(f, "", line);
    if (!d->chance)
        return;
    txt_kept_chance(line, sizeof line, k, d->chance, s->c);
    report_wrapped(f, "", line);
}

/* Why a wide head built from the heads came out sharper than them: where
 * they agree on a key their scores add up. Said only when it is sharper
 * than every head; sharper than their mean alone can come from one blurry
 * head (a uniform head beside a sharp one), with no agreement at all. */
static const char *sharper_why(const ReportData *d, const LayerSummary *s)
{
    if (s->blur > -BLUR_NOTICEABLE || d->single_given)
        return "";
    if (s->wide.entropy_norm < s->heads_norm_min)
        return ": where the heads agree on a key their scores add up, and the sum is sharper than any one head's";
    return ", though not sharper than every head: the blurrier heads pull the heads' average up";
}

/* The blur, its meaning, and what chance gives. */
void report_txt_blur(FILE *f, const ReportData *d, const LayerSummary *s)
{
    if (measures_is_null(s->blur)) {
        fputs("blur: not defined (no row can see two or more tokens)\n", f);
        return;
    }
    char blur[24], line[1024], clause[256] = "", wide_norm[16], heads_norm[16];
    const int drawn = d->chance && d->chance->draws > 0;
    const int side = drawn ? chance_side(&d->chance->r[CHANCE_BLUR], s->blur) : 0;
    report_blur_text(blur, sizeof blur, s->blur, drawn ? &d->chance->r[CHANCE_BLUR] : NULL, side);
    if (d->chance)
        chance_clause(clause, sizeof clause, d->chance, CHANCE_BLUR, s->blur, "%+.2f", 1.0);
    int n = snprintf(line, sizeof line, "blur = %s: %s has a normalised entropy of %s, the heads %s on average",
                     blur, rival_name(d->single_given)->the,
                     measures_side_text(wide_norm, sizeof wide_norm, s->wide.entropy_norm, 2, MEASURES_DIFFUSE_NORM),
                     measures_side_text(heads_norm, sizeof heads_norm, s->heads_norm_mean, 2, MEASURES_DIFFUSE_NORM));
    if (d->chance && !drawn) /* too large a layer for the budget: no finding either way */
        snprintf(line + n, sizeof line - (size_t)n, "; %s, so this blur cannot be told from chance here.", clause);
    else if (drawn && side == 0)
        snprintf(line + n, sizeof line - (size_t)n, "; %s: on its own it says nothing about many heads "
                 "against one.", clause);
    else
        snprintf(line + n, sizeof line - (size_t)n, ": one distribution per token came out %s the heads' own%s%s%s.",
                 s->blur >= BLUR_NOTICEABLE ? "blurrier than" : s->blur <= -BLUR_NOTICEABLE ? "sharper than"
                                                                                          : "about as sharp as",
                 sharper_why(d, s),
                 clause[0] ? "; " : "", clause);
    report_wrapped(f, "", line);
}
