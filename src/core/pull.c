/* pull.c — the pulls of the heads on one query (the identity in pull.h).
 *
 * Shapes: scores (n_heads, T, T), wide (T, T), row i = query i, column j =
 * key j; query i may see keys 0..n_keys(i)-1 (causal: i + 1, else T). */
#include "core/pull.h"
#include "core/measures.h"
#include "core/parallel.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Keys whose identity sums are built at once (a row of the heads' scores at a time). */
#define IDENTITY_KEYS 64

static int n_keys(const MhaConfig *c, int i) { return mha_visible_keys(c->causal, i, c->T); }

/* The identity on row i: the largest |wide(i, j) - sum_h score_h(i, j)/sqrt(h)| over the visible keys
 * into *dev and the largest |wide(i, j)| into *abs_max.  scores (n_heads, T, T), wide_i (T) the wide
 * head's row i. */
static void pull_row_identity(const MhaConfig *c, const float *scores, const float *wide_i, int i, double *dev,
                              double *abs_max)
{
    const int T = c->T, H = c->n_heads, n = n_keys(c, i);
    const double per_head = 1.0 / sqrt((double)H);
    double max_dev = 0, max_abs = 0;
    /* The identity, cell by cell: wide(i, j) against sum_h score_h(i, j)/sqrt(h),
     * IDENTITY_KEYS keys at a time: each head's scores are added along
     * its row (each cell's sum still in head order, h = 0, 1, ...). */
    for (int j0 = 0; j0 < n; j0 += IDENTITY_KEYS) {
        const int m = n - j0 < IDENTITY_KEYS ? n - j0 : IDENTITY_KEYS;
        double sum[IDENTITY_KEYS] = {0};
        for (int h = 0; h < H; h++) {
            const float *score_hi = scores + ((size_t)h * T + i) * T + j0; /* (m) */
            for (int j = 0; j < m; j++)
                sum[j] += score_hi[j];
        }
        for (int j = 0; j < m; j++) {
            max_dev = fmax(max_dev, fabs(wide_i[j0 + j] - sum[j] * per_head));
            max_abs = fmax(max_abs, fabs(wide_i[j0 + j]));
        }
    }
    *dev = max_dev;
    *abs_max = max_abs;
}

/* Row i's heads: each one's top key into top_i (n_heads), whether it pulls into pulls_i (n_heads),
 * and in r how many pull and how many different top keys they have.  scores and att (n_heads, T, T). */
static void pull_row_heads(const MhaConfig *c, const float *scores, const float *att, int i, int *top_i,
                           unsigned char *pulls_i, PullRow *r)
{
    const int T = c->T, H = c->n_heads, n = n_keys(c, i);
    /* Each head's top key, and how many different ones there are. */
    r->n_top_keys = 0;
    r->n_pulling = 0;
    for (int h = 0; h < H; h++) {
        top_i[h] = measures_argmax(scores + ((size_t)h * T + i) * T, n);
        const float *att_hi = att + ((size_t)h * T + i) * T; /* (n) head h's row i */
        /* A top key that ties the runner-up (0.5001 against 0.4999) is no
         * pull: the same tie as the wide head's (PULL_TIE_WEIGHT). */
        pulls_i[h] = n > 1 && att_hi[top_i[h]] > PULL_BLUR_AT_MOST && !pull_top_tied(att_hi, n, top_i[h]) &&
                     measures_row_norm_entropy(att_hi, n) < MEASURES_SHARP_BELOW;
        r->n_pulling += pulls_i[h];
        int seen = 0;
        for (int g = 0; g < h; g++)
            seen |= top_i[g] == top_i[h];
        r->n_top_keys += !seen;
    }
}

/* In a row where the wide head ties its top key with the runner-up, the
 * key float noise put on top (a rotation of the heads can flip it) is no
 * fact: the top key becomes the first key whose weight ties the top one's
 * (PULL_TIE_WEIGHT), and the key it displaced becomes the runner-up.
 * wide_att_i (n_keys) is the wide head's row. */
static void first_of_tie(const float *wide_att_i, PullRow *r)
{
    const float top = r->wide_top_att;
    int first = r->wide_top < r->runner_up ? r->wide_top : r->runner_up;
    for (int j = 0; j < first; j++)
        if (top - wide_att_i[j] < PULL_TIE_WEIGHT) {
            first = j;
            break;
        }
    if (first == r->wide_top)
        return;
    r->runner_up = r->wide_top;
    r->runner_up_att = r->wide_top_att;
    r->wide_top = first;
    r->wide_top_att = wide_att_i[first];
}

/* What the wide head did on row i (wide_i (T) its scores, wide_att (T, T) its map): its top key and
 * runner-up, whether it blurs, whether they tie, and the row's outcome against the heads' top keys
 * top_i and pulls pulls_i (n_heads). */
static void pull_row_wide(const MhaConfig *c, const float *scores, const float *wide_i, const float *wide_att, int i,
                          int identity, const int *top_i, const unsigned char *pulls_i, PullRow *r)
{
    const int T = c->T, H = c->n_heads, n = n_keys(c, i);
    const double per_head = 1.0 / sqrt((double)H);
    /* What the wide head did with them. */
    r->n_keys = n;
    r->wide_top = measures_argmax(wide_i, n);
    r->wide_top_att = wide_att[(size_t)i * T + r->wide_top];
    r->blurs = n > 1 && r->wide_top_att <= PULL_BLUR_AT_MOST;
    r->runner_up = -1;
    r->runner_up_att = 0;
    for (int j = 0; j < n; j++)
        if (j != r->wide_top && (r->runner_up < 0 || wide_att[(size_t)i * T + j] > r->runner_up_att)) {
            r->runner_up = j;
            r->runner_up_att = wide_att[(size_t)i * T + j];
        }
    int tie = 0; /* the top key and the runner-up tie: no choice was made between them */
    if (r->runner_up >= 0) {
        double scale = 0;
        for (int h = 0; h < H; h++) {
            const float *s_hi = scores + ((size_t)h * T + i) * T;
            scale += (fabs(s_hi[r->wide_top]) + fabs(s_hi[r->runner_up])) * per_head;
        }
        if (!identity)
            scale = fabs(wide_i[r->wide_top]) + fabs(wide_i[r->runner_up]);
        tie = pull_ties(r->wide_top_att, r->runner_up_att, (double)wide_i[r->wide_top] - wide_i[r->runner_up],
                        scale);
    }
    if (tie) /* no choice was made: name the tied keys' first, whatever float noise put on top */
        first_of_tie(wide_att + (size_t)i * T, r);
    int followed = 0; /* pulling heads whose top key is the wide head's */
    for (int h = 0; h < H; h++)
        followed += pulls_i[h] && top_i[h] == r->wide_top;
    r->outcome = n == 1 ? PULL_NO_CHOICE
               : r->n_pulling == 0 ? PULL_NO_PULL
               : tie ? PULL_TIE
               : followed == r->n_pulling ? PULL_AGREED
               : r->blurs ? PULL_SPLIT
               : followed > 0 ? PULL_FOLLOWED
               : PULL_OWN;
}

int pull_layer_build(PullLayer *p, const MhaConfig *c, const float *scores, const float *att,
                     const float *wide_scores, const float *wide_att, int identity)
{
    const int T = c->T, H = c->n_heads;
    memset(p, 0, sizeof *p);
    p->T = T, p->n_heads = H, p->identity = identity;
    p->top = malloc((size_t)T * H * sizeof *p->top);
    p->rows = malloc((size_t)T * sizeof *p->rows);
    p->pulls = malloc((size_t)T * H * sizeof *p->pulls);
    if (!p->top || !p->rows || !p->pulls) {
        pull_layer_free(p);
        return MHAVIZ_ENOMEM;
    }

    double max_dev = 0, max_abs = 0;
    const size_t cells = (size_t)H * T * T;
    (void)cells; /* read only by the OpenMP pragma */
    /* Each row writes its own PullRow and top keys; the largest differences
     * are maxima, the same whichever thread finds them. */
#pragma omp parallel for schedule(dynamic, 16) reduction(max : max_dev, max_abs) if (cells >= PARALLEL_MIN_CELLS)
    for (int i = 0; i < T; i++) {
        const float *wide_i = wide_scores + (size_t)i * T;
        int *top_i = p->top + (size_t)i * H;
        unsigned char *pulls_i = p->pulls + (size_t)i * H;
        PullRow *r = &p->rows[i];
        double dev, abs_max;
        pull_row_identity(c, scores, wide_i, i, &dev, &abs_max);
        max_dev = fmax(max_dev, dev);
        max_abs = fmax(max_abs, abs_max);
        pull_row_heads(c, scores, att, i, top_i, pulls_i, r);
        pull_row_wide(c, scores, wide_i, wide_att, i, identity, top_i, pulls_i, r);
    }
    int most_distinct = 0;
    for (int i = 0; i < T; i++) {
        const PullRow *r = &p->rows[i];
        p->count[r->outcome]++;
        p->n_blur += r->blurs;
        if (r->n_top_keys >= most_distinct) { /* >=: on ties the later row */
            most_distinct = r->n_top_keys;
            p->default_query = i;
        }
    }
    p->identity_max_dev = identity ? max_dev : NAN;
    p->max_abs_score = max_abs;
    return MHAVIZ_OK;
}

void pull_layer_free(PullLayer *p)
{
    free(p->top);
    free(p->rows);
    free(p->pulls);
    memset(p, 0, sizeof *p);
}

void pull_contributions(const MhaConfig *c, const float *scores, int i, float *contrib)
{
    const int T = c->T, H = c->n_heads, n = n_keys(c, i);
    const float per_head = (float)(1.0 / sqrt((double)H));
    for (int h = 0; h < H; h++) {
        const float *s_hi = scores + ((size_t)h * T + i) * T;
        const float top = s_hi[measures_argmax(s_hi, n)];
        for (int j = 0; j < n; j++)
            contrib[(size_t)h * n + j] = (s_hi[j] - top) * per_head;
    }
}

int pull_top_tied(const float *att_i, int n, int top)
{
    for (int j = 0; j < n; j++)
        if (j != top && att_i[top] - att_i[j] < PULL_TIE_WEIGHT)
            return 1;
    return 0;
}

int pull_ties(double wa, double wb, double margin, double scale)
{
    return fabs(wa - wb) < PULL_TIE_WEIGHT || fabs(margin) <= PULL_TIE_REL * scale;
}

void pull_contest(const MhaConfig *c, const float *scores, const float *wide_scores, const float *wide_att, int i,
                  int a, int b, double *contrib, PullContest *out)
{
    const int T = c->T, H = c->n_heads;
    const double per_head = 1.0 / sqrt((double)H);
    out->key = a, out->other = b, out->contrib = contrib, out->scale = 0;
    out->margin = (double)wide_scores[(size_t)i * T + a] - wide_scores[(size_t)i * T + b];
    for (int h = 0; h < H; h++) { /* head h's margin between a and b, over sqrt(n_heads) */
        const float *s_hi = scores + ((size_t)h * T + i) * T; /* (T) head h's row i */
        contrib[h] = ((double)s_hi[a] - s_hi[b]) * per_head;
        out->scale += (fabs(s_hi[a]) + fabs(s_hi[b])) * per_head;
    }
    out->tie = pull_ties(wide_att[(size_t)i * T + a], wide_att[(size_t)i * T + b], out->margin, out->scale);
}

int pull_contested(const PullLayer *p, int i, int *keys)
{
    const int H = p->n_heads;
    const int *top = p->top + (size_t)i * H;
    int m = 0;
    for (int h = 0; h < H; h++) {
        if (!p->pulls[(size_t)i * H + h] || top[h] == p->rows[i].wide_top)
            continue;
        int seen = 0;
        for (int k = 0; k < m; k++)
            seen |= keys[k] == top[h];
        if (!seen)
            keys[m++] = top[h];
    }
    return m;
}

const char *pull_outcome_name(PullOutcome o)
{
    static const char *const names[PULL_N_OUTCOMES] = {"no_choice", "agreed", "split", "followed",
                                                             "own_choice", "no_pull", "tie"};
    return names[o];
}
