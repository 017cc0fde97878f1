/* chance.h — what random, untrained layers of the same shape and sentence
 * give: the numbers compared and their ranges (their words:
 * text/chance_words.h). models/chance_draw.h draws the layers.
 *
 * A number alone cannot say whether it is a finding: one random layer's
 * blur is not 0, and its heads are "split" or "followed" in some rows too.
 * chance_draw draws random layers as `mhaviz init --embeddings` draws them
 * (models/init.h): seeds 1, 2, ..., each layer's W_q and W_k from their streams
 * with std 1/sqrt(d_model), x = each token's embedding plus the position
 * code; with the input's shape (d_model, heads, K/V heads), mask and
 * tokens. It runs the heads and the wide head as a run does (built from the
 * heads' projections; or, when the input brings its own single head, a
 * random one-head layer of seed CHANCE_RIVAL_SEED + s, reading the same x)
 * and measures them as the report does. W_v, W_o and the biases are left
 * at 0: no attention map depends on them, and drawing them would only cost.
 *
 * Each number's range is the middle 95% of what the draws give: with n
 * values sorted, from the (k+1)-th smallest to the (k+1)-th largest,
 * k = floor(n / 40) (with fewer than 40 draws: the smallest to the
 * largest). The draws run in parallel (one draw per loop iteration, each
 * writing its own slot), so the ranges do not depend on the thread count. */
#ifndef MHAVIZ_CHANCE_H
#define MHAVIZ_CHANCE_H

#include "core/layer.h"

#include <stddef.h>

/* Random layers drawn at most; fewer when each costs more (CHANCE_BUDGET). */
#define CHANCE_DRAWS 200
/* The work a calibration may do in all, in random numbers drawn: a draw
 * takes d_model (d_model + kv_dim) + T d_model of them (W_q, W_k, x;
 * 2 d_model^2 more with a rival single head), and each visible cell of its
 * n_heads + 1 maps costs about CHANCE_CELL_COST more (the softmax, the
 * entropies and JS's logarithms). Measured here on one busy core: 30 to
 * 60 ns a number, 100 to 140 ns a cell, so the budget is about 0.1 to 0.25 s
 * of one core: a class-size layer (d_model 16, 11 tokens) draws its 200 in
 * 30 to 40 ms, 45 tokens of d_model 64 and 8 heads 86; the base shape
 * (d_model 512, 8 heads: 7) and 400 tokens of d_model 16 (2) fewer than
 * CHANCE_MIN_DRAWS: none, and the report says so. */
#define CHANCE_BUDGET ((size_t)1 << 22)
#define CHANCE_CELL_COST 4
/* Draws whose work adds up to less than this run on one thread (15 to 30 ms
 * of one core): waking a second costs more than it saves, and a class-size
 * layer (200 draws of 2,088 units) stays on one thread, as core/parallel.h
 * keeps every loop of a class-size run. */
#define CHANCE_PARALLEL_MIN (CHANCE_BUDGET / 8)
/* Fewer draws than this give no range (the report says so). */
#define CHANCE_MIN_DRAWS 20
/* The rival single head of draw s is seeded with this plus s. */
#define CHANCE_RIVAL_SEED 1000000

/* The numbers the report compares with chance. */
typedef enum {
    CHANCE_BLUR,       /* the wide head's normalised entropy less the heads' mean */
    CHANCE_KEPT,       /* kept.h: the heads' relation rows the wide head kept */
    CHANCE_LOST,       /* and those it lost */
    CHANCE_AGREED,     /* pull.h: rows per outcome */
    CHANCE_SPLIT,
    CHANCE_FOLLOWED,
    CHANCE_OWN,
    CHANCE_NO_PULL,
    CHANCE_KEPT_SHARE, /* kept.h, of layers drawn as sharp as the input's heads (chance_sharp):
                        * the share of their relation-rows the wide head kept */
    CHANCE_LOST_SHARE, /* and the share it lost */
    CHANCE_HEAD_JS,    /* one head's JS divergence from the wide head (every head of every draw) */
    CHANCE_HEAD_TOP1,  /* one head's top-1 agreement with the wide head (likewise) */
    CHANCE_POOL_JS,    /* one head's JS from its multi-head self once its K/V heads are pooled
                        * as a variant's (chance_pooling; every head of every draw) */
    CHANCE_POOL_TOP1,  /* its top-1 agreement with its multi-head self (likewise) */
    CHANCE_N
} ChanceStat;

/* The middle 95% of n values; n = 0: no range. */
typedef struct {
    int n;
    double lo, hi;
} ChanceRange;

/* Random layers barely pull, so they have little to keep or lose, and
 * their counts say nothing about what one softmax does to sharp heads.
 * chance_sharp draws the layers again, each scaled to the input's
 * sharpness: its W_q times the one factor that makes its heads' mean
 * normalised entropy (measures_blur's heads_norm_mean) the input's heads',
 * to within CHANCE_SHARP_TOL (the factor found by halving an interval of
 * powers of two, CHANCE_SHARP_STEPS times); with a head trained on its own,
 * the random one head is scaled to that head's entropy the same way. A
 * draw that cannot be scaled so, or whose heads then hold no relation,
 * gives no share; fewer than CHANCE_MIN_DRAWS shares: no fair baseline,
 * and the report gives no verdict. */
#define CHANCE_SHARP_TOL 0.01
#define CHANCE_SHARP_STEPS 24
#define CHANCE_SHARP_LOG2_LO (-10.0) /* the factor's interval: 2^-10 to 2^20 */
#define CHANCE_SHARP_LOG2_HI 20.0

typedef struct {
    int draws;                /* random layers drawn: 0 when the budget allows fewer than CHANCE_MIN_DRAWS */
    int sharp_draws;          /* layers chance_sharp drew (0: none, or too few allowed) */
    double sharp_target;      /* the heads' mean normalised entropy they were scaled to (NAN: none) */
    int budget_draws;         /* what the budget allowed (may be below CHANCE_MIN_DRAWS) */
    int pool_draws;           /* the layers of CHANCE_POOL_JS and _TOP1 (0: none, or not a pooled variant) */
    ChanceRange r[CHANCE_N];  /* indexed by ChanceStat */
} Chance;

/* 1 when some query of shape c has a choice: sees two keys or more. With
 * one token none has, every number compared is null or 0 for any layer,
 * random or not, and no layer is drawn (the report says why). */
int chance_has_choice(const MhaConfig *c);

/* How many layers of shape c the budget allows (at most CHANCE_DRAWS; 0
 * when no query has a choice); rival: the input brings its own single head. */
int chance_budget(const MhaConfig *c, int rival);

/* What one draw of shape c costs, in the budget's units (above). */
size_t chance_draw_cost(const MhaConfig *c, int rival);

/* The middle 95% of the n values v[0], v[stride], v[2 stride], ... that
 * are not NAN (above): 2.5% cut at each end, so from CHANCE_TAIL values on;
 * fewer keep all, smallest to largest. buf: scratch for n of them, the
 * caller's. */
#define CHANCE_TAIL 40
ChanceRange chance_range(const double *v, size_t n, size_t stride, double *buf);

/* Where x falls against range r: -1 below it, 0 within (or no range, or x
 * null), +1 above. */
int chance_side(const ChanceRange *r, double x);

/* The JSON names of the numbers: "blur", "kept", "lost", "agreed", ... */
const char *chance_stat_name(ChanceStat s);

#endif
