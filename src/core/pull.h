/* pull.h — the pulls of the heads on one query: why one wide head blurs.
 *
 * When the wide head is built from the heads' own projections (the default,
 * mha_forward_wide), its query and key for a token are the heads'
 * queries and keys side by side, so its score is a sum over the heads:
 *
 *   wide(i, j) = q_i . k_j / sqrt(d_model)
 *              = sum_h (q_ih . k_jh) / sqrt(n_heads * head_dim)
 *              = (1/sqrt(n_heads)) sum_h score_h(i, j)
 *
 * The wide head adds up the heads' scores, and its softmax is the product
 * of the heads' preferences: exp(wide) = prod_h exp(score_h)^(1/sqrt(h)).
 * Where the heads pull towards different keys, the wide head follows the
 * strongest pull or spreads between them; what each head preferred alone
 * does not survive. A separately trained wide head ("single_head" in the
 * input) has weights of its own, and none of this holds for it.
 *
 * Scores are those of the forward passes (MhaState.scores): (n_heads, T, T)
 * for the heads, (T, T) for the wide head, row = query, masked cells 0. */
#ifndef MHAVIZ_PULL_H
#define MHAVIZ_PULL_H

#include "core/layer.h"
#include "core/thresholds.h"

/* What the wide head did with one query row. A top key is the key with the
 * highest score (the lowest index on ties). Exactly one holds, in order
 * (no_choice, no_pull, tie, agreed, split, followed, own_choice; the enum's
 * order is only the JSON's and the counts'). "followed" and "split" name
 * what came out, not why: pull_contest says which heads decided it.
 * (With the identity, a key that is every head's top key, pulling or
 * not, is the wide head's top key too: each term of the sum is largest
 * there. When only the pulling heads agree, the others' scores can still
 * move the wide head's top key elsewhere.) */
typedef enum {
    PULL_NO_CHOICE, /* the row sees one key only: nothing to choose */
    PULL_AGREED,    /* every pulling head's top key is the wide head's top key: nothing lost */
    PULL_SPLIT,     /* not so, and the row blurs: the pulls split */
    PULL_FOLLOWED,  /* not so, the row does not blur, and its top key is the top key of some
                     * pulling heads: the wide head followed them over the others */
    PULL_OWN,       /* not so, the row does not blur, and its top key is no pulling head's
                     * top key: a choice no head made */
    PULL_NO_PULL,   /* no head is sharp enough to pull: no pull to keep or lose */
    PULL_TIE,       /* some head pulls, and the wide head ties its top key with its runner-up
                     * (PULL_TIE_WEIGHT above): it chose neither */
} PullOutcome;

#define PULL_N_OUTCOMES 7

/* One query row. */
typedef struct {
    int n_keys;          /* keys the query may see */
    int wide_top;        /* the wide head's top key; in a tie, the first of the tied keys */
    float wide_top_att;  /* the wide head's weight on it */
    int blurs;           /* 1: the row's largest weight <= PULL_BLUR_AT_MOST */
    int runner_up;       /* the key of the wide head's next largest weight (-1: one key) */
    float runner_up_att; /* the wide head's weight on it */
    int n_top_keys;      /* distinct top keys among the heads */
    int n_pulling;       /* heads sharp enough to pull in this row */
    PullOutcome outcome;
} PullRow;

/* The pulls of a whole layer. Build with pull_layer_build, free with
 * pull_layer_free. */
typedef struct {
    int T, n_heads;
    int identity;            /* 1: wide built from the heads' projections, so wide = sum_h score_h/sqrt(h) */
    double identity_max_dev; /* largest |wide(i, j) - sum_h score_h(i, j)/sqrt(h)| over visible cells;
                              * NAN when identity is 0 */
    double max_abs_score;    /* largest |wide(i, j)| over visible cells (the scale of the deviation) */
    int *top;                /* (T, n_heads) top[i*n_heads + h] = head h's top key for query i */
    unsigned char *pulls;    /* (T, n_heads) 1: head h pulls in row i (PULL_BLUR_AT_MOST above) */
    PullRow *rows;           /* (T) */
    int count[PULL_N_OUTCOMES]; /* rows per outcome */
    int n_blur;              /* rows that blur (any outcome) */
    int default_query;       /* the row whose heads' top keys differ most (most distinct; ties: the later) */
} PullLayer;

/* The pulls of layer shape c from the heads' scores and softmax att (both
 * (n_heads, T, T)), the wide head's scores (T, T) and its softmax wide_att (T, T). identity: 1
 * when the wide head was built from the heads' projections. Returns
 * MHAVIZ_OK or MHAVIZ_ENOMEM (then *p holds nothing). The caller frees *p
 * with pull_layer_free. */
int pull_layer_build(PullLayer *p, const MhaConfig *c, const float *scores, const float *att,
                     const float *wide_scores, const float *wide_att, int identity);

/* Free what pull_layer_build allocated and zero *p. Safe on a zeroed layer. */
void pull_layer_free(PullLayer *p);

/* The heads' contributions to the wide head's scores for query i, each
 * head's scores less its top score (the softmax ignores a constant per row):
 *   contrib (n_heads, n_keys) = (score_h(i, j) - max_k score_h(i, k)) / sqrt(n_heads)
 * for j < n_keys. Each is <= 0 (how far key j falls behind the head's
 * favourite), and their sum over the heads is the wide head's score
 * wide(i, j) less the constant sum_h max_k score_h(i, k) / sqrt(n_heads):
 * the wide head's top key is the key that loses the least in total. */
void pull_contributions(const MhaConfig *c, const float *scores, int i, float *contrib);

/* The wide head's margin between keys a and b of query i, split exactly
 * into the heads' parts: with the identity above,
 *   wide(i, a) - wide(i, b) = sum_h (score_h(i, a) - score_h(i, b)) / sqrt(n_heads),
 * so head h's contribution is its own margin over sqrt(n_heads): positive,
 * it pulls towards a; negative, towards b. Only for a wide head built from
 * the heads (p->identity); a head trained on its own has no such split. */
typedef struct {
    int key, other;      /* a (the wide head's top key) and b (a pulling head's favourite) */
    double margin;       /* wide(i, a) - wide(i, b), from the wide head's own scores */
    double *contrib;     /* (n_heads) each head's part; they add up to margin within float error */
    double scale;        /* sum_h (|score_h(i, a)| + |score_h(i, b)|) / sqrt(n_heads): what float error is relative to */
    int tie;             /* 1: a and b tie (PULL_TIE_WEIGHT or PULL_TIE_REL above) */
} PullContest;

/* The contest of keys a and b on query i from the heads' scores (n_heads,
 * T, T), the wide head's scores wide_scores (T, T) and its softmax wide_att
 * (T, T); contrib (n_heads) is the caller's and becomes out->contrib. */
void pull_contest(const MhaConfig *c, const float *scores, const float *wide_scores, const float *wide_att, int i,
                  int a, int b, double *contrib, PullContest *out);

/* 1 when weights wa, wb and margin (at scale, as PullContest) tie. */
int pull_ties(double wa, double wb, double margin, double scale);

/* 1 when another of row att_i's n keys has a weight within PULL_TIE_WEIGHT
 * of key top's (0.5001 against 0.4999): top does not win the row, and a
 * head with such a row has no favourite there. */
int pull_top_tied(const float *att_i, int n, int top);

/* The keys the wide head's top key contests on query i: each pulling
 * head's favourite other than the wide head's top key, once each, in the
 * order of the heads, into keys (at most n_heads, the caller's). Returns
 * how many. */
int pull_contested(const PullLayer *p, int i, int *keys);

/* "no_choice", "agreed", "split", "followed", "own_choice", "no_pull", "tie": the names report.json uses. */
const char *pull_outcome_name(PullOutcome o);

#endif
