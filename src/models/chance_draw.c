/* chance_draw.c — the random layers of core/chance.h: drawn as `mhaviz init`
 * draws them, run, measured, and their ranges taken. */
#include "models/chance_draw.h"
#include "core/kept.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/pull.h"
#include "core/status.h"
#include "models/init.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Slots per draw in the values array: one per layer number, n_heads per head number. */
static size_t slots(int H) { return (size_t)CHANCE_HEAD_JS + 2 * (size_t)H; }

/* What the draws of one calibration share: the shape c, the tokens, and
 * what each kind of draw reads of the rest. */
typedef struct {
    const MhaConfig *c;
    char *const *tokens;
    int rival;                     /* the input brings its own single head */
    int n_kv;                      /* pool_draw: the K/V heads pooled into */
    const int *group_of;           /* pool_draw: which heads share (n_heads), NULL for neighbours */
    PoolMethod method;             /* pool_draw: how */
    double heads_norm, rival_norm; /* sharp_draw: the sharpness targets */
} DrawArgs;

/* One draw of the random layers: seed s, its numbers into val (the
 * caller's slots). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
typedef int (*DrawFn)(const DrawArgs *a, uint64_t s, double *val);

/* Draws 1..n of draw (arg its settings), draw s's numbers into val + (s - 1)
 * per, in parallel when their work (n draws of cost units each, chance.h)
 * is worth threads: each draw writes its own slots, so any thread count
 * gives the same values. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int draws_run(DrawFn draw, const DrawArgs *arg, int n, size_t cost, double *val, size_t per)
{
    int failed = 0;
    const int threaded = (size_t)n * cost >= CHANCE_PARALLEL_MIN; /* not at class size */
    (void)threaded; /* read only by the OpenMP pragma */
#pragma omp parallel for schedule(dynamic) if (threaded)
    for (int s = 0; s < n; s++)
        if (draw(arg, (uint64_t)s + 1, val + (size_t)s * per) != MHAVIZ_OK) {
#pragma omp atomic write
            failed = 1;
        }
    return failed ? MHAVIZ_ENOMEM : MHAVIZ_OK;
}

/* The layer of seed s and shape c as `mhaviz init --embeddings` draws it:
 * *x (T, d_model) the tokens' embeddings plus positions, w's W_q and W_k
 * from their streams; W_v, W_o and the biases 0 (no map depends on them).
 * Returns 0 when out of memory (free what was made with layer_free either way). */
static int layer_draw(const MhaConfig *c, char *const *tokens, uint64_t s, MhaWeights *w, float **x)
{
    const size_t d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    const double std = 1.0 / sqrt((double)d);
    memset(w, 0, sizeof *w);
    *x = init_random_x(s, tokens, c->T, c->d_model);
    w->W_q = init_random_normal(s, INIT_STREAM_W_Q, d * d, std);
    w->W_k = init_random_normal(s, INIT_STREAM_W_K, d * kv, std);
    w->W_v = calloc(d * kv, sizeof(float)), w->W_o = calloc(d * d, sizeof(float));
    w->b_q = calloc(d, sizeof(float)), w->b_k = calloc(kv, sizeof(float));
    w->b_v = calloc(kv, sizeof(float)), w->b_o = calloc(d, sizeof(float));
    return *x && w->W_q && w->W_k && w->W_v && w->W_o && w->b_q && w->b_k && w->b_v && w->b_o;
}

static void layer_free(MhaWeights *w, float *x)
{
    free(w->W_q), free(w->W_k), free(w->W_v), free(w->W_o), free(w->b_q), free(w->b_k), free(w->b_v), free(w->b_o);
    free(x);
}

/* The forward passes' states of a draw of shape c, both keeping their
 * scores: the heads', and the one head's (wide: its shape), a head of its
 * own with rival, else the wide head built from the heads. Returns 0 when
 * out of memory (free both with mha_state_free either way). */
static int states_build(const MhaConfig *c, const MhaConfig *wide, int rival, MhaState *multi, MhaState *single)
{
    return mha_state_build(multi, c, 1) == MHAVIZ_OK &&
           (rival ? mha_state_build(single, wide, 1) : mha_state_build_wide(single, wide, 1)) == MHAVIZ_OK;
}

/* The random one-head layer of draw s, shape c, into *one: its W_q and W_k
 * of seed CHANCE_RIVAL_SEED + s (d_model x d_model), W_v and b_k, b_v
 * zeros of its width; W_o, b_q and b_o borrowed from the heads' w (zeros).
 * Returns 0 when out of memory (free it with rival_free either way). */
static int rival_draw(const MhaConfig *c, const MhaWeights *w, uint64_t s, MhaWeights *one)
{
    const size_t d = (size_t)c->d_model;
    const double std = 1.0 / sqrt((double)d);
    *one = *w;
    one->W_q = init_random_normal(CHANCE_RIVAL_SEED + s, INIT_STREAM_W_Q, d * d, std);
    one->W_k = init_random_normal(CHANCE_RIVAL_SEED + s, INIT_STREAM_W_K, d * d, std);
    one->W_v = calloc(d * d, sizeof(float)), one->b_k = calloc(d, sizeof(float)), one->b_v = calloc(d, sizeof(float));
    return one->W_q && one->W_k && one->W_v && one->b_k && one->b_v;
}

/* Free what rival_draw allocated (not what it borrowed). Safe on a zeroed layer. */
static void rival_free(MhaWeights *one)
{
    free(one->W_q), free(one->W_k), free(one->W_v), free(one->b_k), free(one->b_v);
}

/* Each head's map in att (n_heads, T, T) against its reference map in ref
 * (ref_step: T * T, a map of each head's own; 0, one map for every head):
 * its JS into val[h], its top-1 agreement into val[n_heads + h]. */
static void compare_heads(const MhaConfig *c, const float *att, const float *ref, size_t ref_step, double *val)
{
    const int T = c->T, H = c->n_heads;
    const size_t map = (size_t)T * T;
    for (int h = 0; h < H; h++) {
        MapComparison cmp;
        measures_compare(att + (size_t)h * map, ref + (size_t)h * ref_step, T, c->causal, &cmp);
        val[h] = cmp.js_to_single;
        val[H + h] = cmp.top1_agreement;
    }
}

/* Draw s (seed s) of shape args->c on args->tokens: its numbers into val (slots(n_heads)),
 * NAN where one is not defined. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int one_draw(const DrawArgs *args, uint64_t s, double *val)
{
    const MhaConfig *c = args->c;
    char *const *tokens = args->tokens;
    const int rival = args->rival;
    const int T = c->T, H = c->n_heads;
    int rc = MHAVIZ_ENOMEM;
    MhaState multi = {0}, single = {0};
    PullLayer pulls = {0};
    KeptLayer kept = {0};
    MapMeasures *m = malloc(((size_t)H + 1) * sizeof *m); /* (n_heads + 1) the wide head last */
    MhaWeights w, one = {0};
    float *x;
    if (!layer_draw(c, tokens, s, &w, &x) || !m)
        goto cleanup;
    const MhaConfig wide = mha_single_head_config(c);
    if (!states_build(c, &wide, rival, &multi, &single))
        goto cleanup;
    mha_forward(c, &w, x, &multi);
    if (rival) { /* a random one-head layer of its own seed; its W_v, W_o and biases: the heads' zeros */
        if (!rival_draw(c, &w, s, &one))
            goto cleanup;
        mha_forward(&wide, &one, x, &single);
    } else {
        mha_forward_wide(c, &w, &multi, &single);
    }
    if (measures_layer(multi.att, H, single.att, T, c->causal, tokens, m) != MHAVIZ_OK ||
        pull_layer_build(&pulls, c, multi.scores, multi.att, single.scores, single.att, !rival) != MHAVIZ_OK ||
        kept_layer_build(&kept, c, multi.att, single.att, tokens, m) != MHAVIZ_OK)
        goto cleanup;
    double heads_norm_mean;
    val[CHANCE_BLUR] = measures_blur(m, H, &heads_norm_mean);
    val[CHANCE_KEPT] = kept.verdict[KEPT_KEPT];
    val[CHANCE_LOST] = kept.verdict[KEPT_LOST];
    val[CHANCE_KEPT_SHARE] = val[CHANCE_LOST_SHARE] = NAN; /* chance_sharp's */
    val[CHANCE_AGREED] = pulls.count[PULL_AGREED];
    val[CHANCE_SPLIT] = pulls.count[PULL_SPLIT];
    val[CHANCE_FOLLOWED] = pulls.count[PULL_FOLLOWED];
    val[CHANCE_OWN] = pulls.count[PULL_OWN];
    val[CHANCE_NO_PULL] = pulls.count[PULL_NO_PULL];
    compare_heads(c, multi.att, single.att, 0, val + CHANCE_HEAD_JS); /* each head against the wide one */
    rc = MHAVIZ_OK;
cleanup:
    rival_free(&one);
    layer_free(&w, x);
    free(m);
    kept_layer_free(&kept);
    pull_layer_free(&pulls);
    mha_state_free(&single);
    mha_state_free(&multi);
    return rc;
}

/* The ranges of a per-head number over every head of every draw: val holds
 * n draws of stride values each, the draw's H JS values first, then its H
 * top-1 values; out[0] gets JS's range, out[1] top-1's. buf: (n * H) scratch.
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int head_ranges(const double *val, int n, size_t stride, int H, double *buf, ChanceRange out[2])
{
    double *heads = malloc((size_t)n * H * sizeof *heads); /* (draws, n_heads) one part, in order */
    if (!heads)
        return MHAVIZ_ENOMEM;
    for (int part = 0; part < 2; part++) {
        for (int s = 0; s < n; s++)
            memcpy(heads + (size_t)s * H, val + (size_t)s * stride + (size_t)part * H, (size_t)H * sizeof *heads);
        out[part] = chance_range(heads, (size_t)n * H, 1, buf);
    }
    free(heads);
    return MHAVIZ_OK;
}

int chance_draw(Chance *ch, const MhaConfig *c, char *const *tokens, int rival, int max_draws)
{
    const int H = c->n_heads;
    memset(ch, 0, sizeof *ch);
    ch->budget_draws = chance_budget(c, rival);
    int n = ch->budget_draws < max_draws ? ch->budget_draws : max_draws;
    if (n < CHANCE_MIN_DRAWS)
        return MHAVIZ_OK; /* too few for a range: the report says none was drawn */
    const size_t per = slots(H);
    double *val = malloc((size_t)n * per * sizeof *val);  /* (draws, slots) */
    double *buf = malloc((size_t)n * H * sizeof *buf);    /* (draws * n_heads) scratch of chance_range */
    const DrawArgs a = {.c = c, .tokens = tokens, .rival = rival};
    int failed = !val || !buf || draws_run(one_draw, &a, n, chance_draw_cost(c, rival), val, per) != MHAVIZ_OK;
    if (!failed) {
        ch->draws = n;
        for (int k = 0; k < CHANCE_HEAD_JS; k++)
            if (k != CHANCE_KEPT_SHARE && k != CHANCE_LOST_SHARE) /* chance_sharp's */
                ch->r[k] = chance_range(val + k, (size_t)n, per, buf);
        /* the heads' numbers: JS then top-1, H of each in every draw's slots */
        failed = head_ranges(val + CHANCE_HEAD_JS, n, per, H, buf, &ch->r[CHANCE_HEAD_JS]) != MHAVIZ_OK;
    }
    free(val), free(buf);
    if (failed) {
        memset(ch, 0, sizeof *ch);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* Draw s of multi-head shape args->c, pooled into args->n_kv K/V heads (args->group_of:
 * which heads share, or NULL for neighbours) by args->method: each head's JS from its
 * multi-head self into val[h], its top-1 agreement into val[n_heads + h]. */
static int pool_draw(const DrawArgs *args, uint64_t s, double *val)
{
    const MhaConfig *c = args->c;
    char *const *tokens = args->tokens;
    const int n_kv = args->n_kv;
    const int *group_of = args->group_of;
    const PoolMethod method = args->method;
    const size_t map = (size_t)c->T * c->T;
    int rc = MHAVIZ_ENOMEM;
    MhaState mha = {0}, pooled = {0};
    PooledLayer layer = {0};
    MhaWeights w;
    float *x;
    char err[128];
    if (!layer_draw(c, tokens, s, &w, &x) || mha_state_build(&mha, c, 0) != MHAVIZ_OK)
        goto cleanup;
    if ((group_of ? pool_layer_grouped(&layer, c, &w, group_of, n_kv, method, err, sizeof err)
                  : pool_layer(&layer, c, &w, n_kv, method, err, sizeof err)) != MHAVIZ_OK ||
        mha_state_build(&pooled, &layer.cfg, 0) != MHAVIZ_OK)
        goto cleanup;
    mha_forward(c, &w, x, &mha);
    mha_forward(&layer.cfg, &layer.w, x, &pooled);
    compare_heads(c, pooled.att, mha.att, map, val); /* each head against its own self */
    rc = MHAVIZ_OK;
cleanup:
    pool_layer_free(&layer);
    mha_state_free(&pooled);
    mha_state_free(&mha);
    layer_free(&w, x);
    return rc;
}

int chance_pooling(Chance *ch, const MhaConfig *c, char *const *tokens, int n_kv, const int *group_of,
                   PoolMethod method, int max_draws)
{
    const int H = c->n_heads;
    ch->pool_draws = 0;
    ch->r[CHANCE_POOL_JS] = ch->r[CHANCE_POOL_TOP1] = (ChanceRange){0, NAN, NAN};
    const int budget = chance_budget(c, 0), n = budget < max_draws ? budget : max_draws;
    if (n < CHANCE_MIN_DRAWS)
        return MHAVIZ_OK;
    double *val = malloc((size_t)n * 2 * H * sizeof *val); /* (draws, 2, n_heads) */
    double *buf = malloc((size_t)n * H * sizeof *buf);     /* (draws * n_heads) scratch */
    const DrawArgs a = {.c = c, .tokens = tokens, .n_kv = n_kv, .group_of = group_of, .method = method};
    int failed = !val || !buf || draws_run(pool_draw, &a, n, chance_draw_cost(c, 0), val, 2 * (size_t)H) != MHAVIZ_OK;
    if (!failed) {
        /* JS of every head of every draw, then top-1: each draw's slots hold H of each */
        failed = head_ranges(val, n, 2 * (size_t)H, H, buf, &ch->r[CHANCE_POOL_JS]) != MHAVIZ_OK;
        if (!failed)
            ch->pool_draws = n;
    }
    free(val), free(buf);
    return failed ? MHAVIZ_ENOMEM : MHAVIZ_OK;
}

/* The mean over the n_maps maps of scores (n_maps, T, T) of each map's
 * mean normalised entropy over its rows with a choice, once each score is
 * multiplied by a: as measures_blur's heads_norm_mean of the softmax
 * maps. row: (T) scratch. */
static double scaled_norm_entropy(const MhaConfig *c, const float *scores, int n_maps, double a, float *row)
{
    const int T = c->T;
    double sum = 0;
    for (int h = 0; h < n_maps; h++) {
        double map_sum = 0;
        int rows = 0;
        for (int i = 0; i < T; i++) {
            const int n = mha_visible_keys(c->causal, i, T);
            if (n < 2)
                continue;
            const float *s_hi = scores + ((size_t)h * T + i) * T; /* (n) visible scores */
            float top = s_hi[0];
            for (int j = 1; j < n; j++)
                top = s_hi[j] > top ? s_hi[j] : top;
            double z = 0;
            for (int j = 0; j < n; j++)
                z += row[j] = (float)exp(a * ((double)s_hi[j] - top));
            for (int j = 0; j < n; j++)
                row[j] = (float)(row[j] / z);
            map_sum += measures_row_norm_entropy(row, n);
            rows++;
        }
        sum += rows ? map_sum / rows : 0;
    }
    return sum / n_maps;
}

/* The factor that brings the maps of scores (n_maps, T, T) to normalised
 * entropy target (CHANCE_SHARP_TOL), by halving the interval of its
 * log2 (chance.h): larger factors, sharper rows. NAN when none does. */
static double sharp_factor(const MhaConfig *c, const float *scores, int n_maps, double target, float *row)
{
    double lo = CHANCE_SHARP_LOG2_LO, hi = CHANCE_SHARP_LOG2_HI;
    for (int step = 0; step < CHANCE_SHARP_STEPS; step++) {
        const double mid = 0.5 * (lo + hi);
        if (scaled_norm_entropy(c, scores, n_maps, exp2(mid), row) > target)
            lo = mid; /* still too even: sharpen */
        else
            hi = mid;
    }
    const double a = exp2(0.5 * (lo + hi));
    return fabs(scaled_norm_entropy(c, scores, n_maps, a, row) - target) <= CHANCE_SHARP_TOL ? a : NAN;
}

/* W (len) times a. */
static void scale(float *W, size_t len, double a)
{
    for (size_t k = 0; k < len; k++)
        W[k] = (float)(W[k] * a);
}

/* Draw s of shape args->c scaled to the sharpness targets (chance.h): the shares
 * of its relation-rows the wide head kept and lost into val[0] and val[1],
 * NAN when it cannot be scaled so or its heads hold no relation. */
static int sharp_draw(const DrawArgs *args, uint64_t s, double *val)
{
    const MhaConfig *c = args->c;
    char *const *tokens = args->tokens;
    const int rival = args->rival;
    const double heads_norm = args->heads_norm, rival_norm = args->rival_norm;
    const int T = c->T, H = c->n_heads;
    const size_t d = (size_t)c->d_model;
    int rc = MHAVIZ_ENOMEM;
    MhaState multi = {0}, single = {0};
    KeptLayer kept = {0};
    MapMeasures *m = malloc(((size_t)H + 1) * sizeof *m); /* (n_heads + 1) the wide head last */
    float *row = malloc((size_t)T * sizeof *row);         /* (T) scratch of the entropies */
    MhaWeights w, one = {0};
    float *x;
    val[0] = val[1] = NAN;
    if (!layer_draw(c, tokens, s, &w, &x) || !m || !row)
        goto cleanup;
    const MhaConfig wide = mha_single_head_config(c);
    if (!states_build(c, &wide, rival, &multi, &single))
        goto cleanup;
    mha_forward(c, &w, x, &multi);
    const double a = sharp_factor(c, multi.scores, H, heads_norm, row);
    rc = MHAVIZ_OK;
    if (isnan(a))
        goto cleanup; /* no fair layer of this draw */
    scale(w.W_q, d * d, a); /* the scores scale with W_q: b_q is 0 */
    mha_forward(c, &w, x, &multi);
    if (rival) { /* chance_draw's random one head of its own seed, scaled to the trained one's sharpness */
        rc = MHAVIZ_ENOMEM;
        if (!rival_draw(c, &w, s, &one))
            goto cleanup;
        rc = MHAVIZ_OK;
        mha_forward(&wide, &one, x, &single);
        const double b = sharp_factor(&wide, single.scores, 1, rival_norm, row);
        if (isnan(b))
            goto cleanup;
        scale(one.W_q, d * d, b);
        mha_forward(&wide, &one, x, &single);
    } else {
        mha_forward_wide(c, &w, &multi, &single);
    }
    rc = MHAVIZ_ENOMEM;
    if (measures_layer(multi.att, H, single.att, T, c->causal, tokens, m) != MHAVIZ_OK ||
        kept_layer_build(&kept, c, multi.att, single.att, tokens, m) != MHAVIZ_OK)
        goto cleanup;
    if (kept.rows > 0) {
        val[0] = (double)kept.verdict[KEPT_KEPT] / kept.rows;
        val[1] = (double)kept.verdict[KEPT_LOST] / kept.rows;
    }
    rc = MHAVIZ_OK;
cleanup:
    rival_free(&one);
    layer_free(&w, x);
    free(m);
    free(row);
    kept_layer_free(&kept);
    mha_state_free(&single);
    mha_state_free(&multi);
    return rc;
}

int chance_sharp(Chance *ch, const MhaConfig *c, char *const *tokens, int rival, double heads_norm, double rival_norm,
                 int max_draws)
{
    ch->sharp_draws = 0;
    ch->sharp_target = heads_norm;
    ch->r[CHANCE_KEPT_SHARE] = ch->r[CHANCE_LOST_SHARE] = (ChanceRange){0, NAN, NAN};
    const int budget = chance_budget(c, rival), n = budget < max_draws ? budget : max_draws;
    if (n < CHANCE_MIN_DRAWS || isnan(heads_norm) || (rival && isnan(rival_norm)))
        return MHAVIZ_OK; /* no range: the report says there is no fair baseline */
    double *val = malloc((size_t)n * 2 * sizeof *val); /* (draws, 2) kept share, lost share */
    double *buf = malloc((size_t)n * sizeof *buf);     /* (draws) scratch */
    const DrawArgs a = {.c = c, .tokens = tokens, .rival = rival, .heads_norm = heads_norm, .rival_norm = rival_norm};
    /* a sharp draw's work: a draw's, then its factor's CHANCE_SHARP_STEPS + 1
     * passes over the heads' maps (and the rival head's: each pass costs at
     * most a draw), and the forward again: bounded by that many draws */
    const size_t cost = (CHANCE_SHARP_STEPS + 2) * chance_draw_cost(c, rival);
    int failed = !val || !buf || draws_run(sharp_draw, &a, n, cost, val, 2) != MHAVIZ_OK;
    if (!failed) {
        ch->sharp_draws = n;
        ch->r[CHANCE_KEPT_SHARE] = chance_range(val, (size_t)n, 2, buf);
        ch->r[CHANCE_LOST_SHARE] = chance_range(val + 1, (size_t)n, 2, buf);
    }
    free(val), free(buf);
    return failed ? MHAVIZ_ENOMEM : MHAVIZ_OK;
}
