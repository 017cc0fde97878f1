/* measures.h — what each attention map does, in numbers a class can read.
 *
 * A map A is (T, T), row i = query i, column j = key j; row i may look at
 * n_i keys: n_i = i + 1 when causal (keys 0..i), T otherwise. Masked cells
 * are 0. Logs are base 2 and 0 log 0 = 0. Every sum runs in a fixed order in
 * double precision, so the numbers do not depend on the thread count.
 *
 * A measure that is not defined for a map (no row qualifies) is NAN, which
 * the reports print as null; test it with measures_is_null. */
#ifndef MHAVIZ_MEASURES_H
#define MHAVIZ_MEASURES_H

#include "core/layer.h"
#include "core/thresholds.h"

#include <stddef.h>
#include <stdint.h>

/* The patterns a row's attention can follow, in the order that breaks ties
 * and claims cells: each visible (query i, key j) cell counts towards the
 * first pattern of this list that names it, so one cell never counts twice:
 * a key just before the query is the previous token even when it also
 * followed an earlier copy (not induction), and token 0 when it is an
 * earlier copy of the query's token is that copy (not the first token). */
typedef enum {
    MEASURES_PREVIOUS_TOKEN, /* j = i - 1 */
    MEASURES_SELF,           /* j = i */
    MEASURES_NEXT_TOKEN,     /* j = i + 1 (visible only without the causal mask) */
    MEASURES_DUPLICATE_TOKEN,/* j < i, token j = token i: an earlier copy */
    MEASURES_INDUCTION,      /* j - 1 < i an earlier copy of token i: what followed it */
    MEASURES_FIRST_TOKEN,    /* j = 0 */
    MEASURES_LAST_TOKEN,     /* j = T - 1, without the causal mask */
    MEASURES_FIXED_TOKEN,    /* j = the map's fixed key (fixed_key below) */
    MEASURES_SPLIT,          /* no role, its rows split between two patterns (split[] below) */
    MEASURES_DIFFUSE,        /* no role, spread almost evenly (entropy_norm >= MEASURES_DIFFUSE_NORM) */
    MEASURES_MIXED,          /* no role, not even either */
    MEASURES_NONE            /* no row sees two keys (T = 1): nothing to choose */
} MeasuresRole;

#define MEASURES_N_PATTERNS 8    /* the first eight roles are patterns */

/* The per-map measures. NAN = null (not defined for this map).
 *
 * Row i "shows" a pattern when the pattern's cells in the row hold at least
 * MEASURES_SHOWN_SHARE (half) of the row's attention (no other pattern can
 * then hold more). A row
 * with one visible key (row 0 under the causal mask, every row at T = 1)
 * shows no pattern and counts for none: it had no choice. A pattern "could
 * show" in row i when it names at least one of the row's visible cells.
 *
 * role: the pattern with the largest share (list order on ties) among
 * those with support: a share of at least MEASURES_ROLE_SHARE (0.5) and at
 * least MEASURES_ROLE_EVEN_TIMES (twice) its even share, shown in at least
 * MEASURES_MIN_ROLE_ROWS (2) rows and in at least 1/MEASURES_ROLE_ROWS_PART
 * (a quarter) of the rows that could show it, unless another pattern's
 * share ties it (less than MEASURES_TIE_SHARE apart: then split between the
 * two, the larger first); otherwise split, when its
 * two largest pattern shares (of patterns that could show in at least
 * MEASURES_MIN_ROLE_ROWS rows) each hold at least MEASURES_SPLIT_EACH (0.2)
 * and more than their even share, and together at most 1 (more comes from
 * different rows; MEASURES_TIE_SHARE's tolerance) and at least
 * MEASURES_ROLE_SHARE (0.5) and MEASURES_SPLIT_EVEN_TIMES (1.5) times what
 * spreading evenly gives them: a head that serves two relations at once,
 * the compromise one softmax makes ("split: 39% previous token + 26% first
 * token"), whatever its entropy; otherwise diffuse (mean entropy_norm at
 * least MEASURES_DIFFUSE_NORM, 0.8) or mixed, or none when no row sees two
 * keys. */
typedef struct {
    double entropy_bits;    /* mean over all rows of H_i = -sum_j A_ij log2 A_ij */
    double entropy_norm;    /* mean over rows with n_i >= 2 of H_i / log2(n_i); 1 = uniform */
    double confidence;      /* mean over all rows of max_j A_ij */
    double mean_distance;   /* mean over all rows of sum_j A_ij |i - j|, in tokens */
    double pattern[MEASURES_N_PATTERNS]; /* indexed by MeasuresRole: the pattern's share of
                                          * the row, mean over the rows that could show it */
    double even[MEASURES_N_PATTERNS];    /* the share spreading evenly would give: mean over
                                          * the same rows of (the pattern's cells) / n_i */
    int rows[MEASURES_N_PATTERNS];       /* rows that could show each pattern */
    int shown[MEASURES_N_PATTERNS];      /* rows that show it (at least half the row) */
    int fixed_key;          /* the key that is the top key, with at least half, of more than
                             * half the rows with two visible keys; -1 when there is none or
                             * it is token 0 or (without the mask) token T-1: those are the
                             * first-token and last-token patterns */
    int strongest;          /* the largest pattern share among patterns that could show in at
                             * least MEASURES_MIN_ROLE_ROWS rows (list order on ties); -1: none */
    int split[2];           /* role MEASURES_SPLIT: its two patterns, the larger share first; else -1 */
    MeasuresRole role;
} MapMeasures;

/* One attention map against another (the single wide head's, or the same
 * head's under another K/V layout), over the rows with a choice (at least
 * two visible keys), as every measure of a pattern: null when there is none. */
typedef struct {
    double js_to_single;   /* mean over rows of the Jensen-Shannon divergence (base 2, in [0, 1]) */
    double top1_agreement; /* fraction of rows whose most-attended keys share one (a key within
                            * PULL_TIE_WEIGHT of a row's largest weight is a top key too) */
} MapComparison;

/* One layout in the cost table. Exact counts; biases are parameters but not
 * multiply-accumulates; masked cells are not computed, so not counted. */
typedef struct {
    int n_heads, n_kv_heads, head_dim;
    int64_t params;          /* W_q, W_k, W_v, W_o (+ b_q, b_k, b_v, b_o when biases are present) */
    int64_t mac_projections; /* T (d*d + 2 d*kv_dim + d*d): q, k, v and the output projection */
    int64_t mac_scores;      /* pairs * n_heads * head_dim: one dot product per visible (query, key) pair per head */
    int64_t mac_value_mix;   /* pairs * n_heads * head_dim: one weighted value per visible pair per head */
    int64_t mac_total;       /* the three above */
    int64_t kv_cache_bytes;  /* per token at fp16: 2 (K and V) * n_kv_heads * head_dim * 2 bytes */
} CostRow;

/* GQA rows at most: more than any n_heads <= 512 has divisors. */
#define MEASURES_MAX_GQA 32

/* The cost table for one input shape: every K/V head count that divides
 * n_heads, MHA, each GQA-g (most K/V heads first), MQA. */
typedef struct {
    int64_t pairs;  /* visible (query, key) pairs: T(T+1)/2 when causal, T*T otherwise */
    CostRow input;  /* the input's own layout */
    CostRow mha;    /* n_kv_heads = n_heads */
    CostRow gqa[MEASURES_MAX_GQA]; /* each 1 < g < n_heads dividing n_heads, largest first */
    int n_gqa;
    CostRow mqa;    /* n_kv_heads = 1 */
    CostRow wide;   /* one head of width d_model */
} CostTable;

/* 1 when x is a null measure. */
int measures_is_null(double x);

/* Role names as the reports print them: "previous-token", ..., "none". */
const char *measures_role_name(MeasuresRole r);

/* JSON field names of the pattern scores: "previous_token", "self", ... */
const char *measures_pattern_field(MeasuresRole r);

/* ids (T): for each token the index of its first occurrence, so tokens i
 * and p are equal exactly when ids[i] == ids[p]. ids is the caller's. */
void measures_token_ids(char *const *tokens, int T, int *ids);

/* The share of row i (row: its T cells) that pattern p's cells hold, each
 * cell counted for the first pattern that names it (as measures_map does),
 * fixed_key the fixed-token pattern's key (-1: none). ids: measures_token_ids. */
double measures_row_share(const float *row, int i, int T, int causal, const int *ids, int fixed_key,
                          MeasuresRole p);

/* The pattern, other than p, whose mean share ties p's in map m (less
 * than MEASURES_TIE_SHARE apart; the largest such, list order on equal
 * shares), among patterns that could show in at least MEASURES_MIN_ROLE_ROWS
 * rows; -1: none. Two shares that add up to more than 1 do not tie: they
 * come from different rows (a head on token 0, its copy in some rows and
 * the first token in others), not from one softmax choosing in a row. */
int measures_tied_with(const MapMeasures *m, int p);

/* 1 when two patterns' mean shares a and b (their even shares even_a,
 * even_b) make a split role (the rule above, MEASURES_SPLIT_*). */
int measures_is_split(double a, double even_a, double b, double even_b);

/* Measures of map att (T, T) whose tokens have ids (from measures_token_ids). */
void measures_map(const float *att, int T, int causal, const int *ids, MapMeasures *m);

/* What measures_map ends with: m's pattern and even shares (means of
 * sum[p] and even[p], the shares summed over the m->rows[p] rows that could
 * show pattern p), strongest, split and role, from those sums, m->rows,
 * m->shown and m->entropy_norm (norm_rows: the rows with a choice, 0 for
 * none). A head's rows over several sentences, summed, give its role over
 * all of them the same way (core/model_summary.h). */
void measures_role_from_sums(MapMeasures *m, const double *sum, const double *even, long norm_rows);

/* A weight as the pictures and lesson.html print it, into buf (at least
 * 16 bytes): two decimals ("0.73"), but never on the other side of one
 * half, or on it, when the weight is not one half: the report counts a row
 * as shown at half of it or more (MEASURES_SHOWN_SHARE) and a pull or a
 * wide head's top key at more than half (PULL_BLUR_AT_MOST, core/pull.h),
 * so a "0.50" for 0.4994 or 0.5003 would contradict it. Such a weight gets
 * three decimals, rounded away from one half: 0.4994 -> "0.499",
 * 0.5003 -> "0.501" (at most 0.001 off). Returns buf. */
const char *measures_weight_text(char *buf, size_t n, double w);

/* The same rule for any number a threshold `at` judges: x with `decimals`
 * decimals, or one more, rounded away from at, when those would print it
 * as at itself without being it (0.7996 -> "0.799" against 0.8; 49.96 ->
 * "49.9" with 0 decimals against 50). report.txt prints the role rule's
 * shares and entropies so (MEASURES_ROLE_SHARE, MEASURES_DIFFUSE_NORM).
 * Returns buf. */
const char *measures_side_text(char *buf, size_t n, double x, int decimals, double at);

/* The normalised entropy of one row of n_i visible cells: its entropy over
 * log2(n_i), 0 = all on one key, 1 = spread evenly; NAN when n_i < 2. */
double measures_row_norm_entropy(const float *row, int n_i);

/* How sharp each row of map att (T, T) is: out (T) gets row i's entropy
 * over log2(n_i), 0 = all on one key, 1 = spread evenly over the n_i keys
 * it may see; NAN for a row with one key (n_i = 1: nothing to spread). */
void measures_row_entropy_norm(const float *att, int T, int causal, double *out);

/* measures_map of every map of a layer, once for both the pictures and the
 * reports: head h's map att + h*T*T into m[h] for h < n_heads, the wide
 * head's map wide (T, T) into m[n_heads]; the maps in parallel, each with
 * the numbers measures_map gives. tokens (T) name the tokens. m holds
 * n_heads + 1 measures (the caller's). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int measures_layer(const float *att, int n_heads, const float *wide, int T, int causal,
                   char *const *tokens, MapMeasures *m);

/* The blur of a layer: the wide head's normalised entropy (m[n_heads])
 * less the mean of the n_heads heads' (m[0..n_heads), into *heads_norm_mean);
 * NAN (null) when either is. Positive: one softmax blurred the heads' rows. */
double measures_blur(const MapMeasures *m, int n_heads, double *heads_norm_mean);

/* Index of the largest of row[0..n), the lowest index on ties: a row's
 * top key. */
int measures_argmax(const float *row, int n);

/* Compare map att (T, T) with the wide head's map wide (T, T). */
void measures_compare(const float *att, const float *wide, int T, int causal, MapComparison *c);

/* ||a - b||_F / ||a||_F for a, b (rows, cols); NAN when a is all zeros. */
double measures_output_rel_diff(const float *a, const float *b, int rows, int cols);

/* Mean over rows of cos(a_r, b_r), over rows where both are non-zero;
 * NAN when no row qualifies. */
double measures_output_cosine(const float *a, const float *b, int rows, int cols);

/* The cost table for config c at its T; with_bias counts the four biases
 * (wide_bias for the single wide head's row). */
void measures_cost(const MhaConfig *c, int with_bias, int wide_bias, CostTable *t);

/* The layouts' names, as every picture and report writes them. */
#define LAYOUT_MHA "MHA" /* each head its own keys and values */
#define LAYOUT_GQA "GQA" /* groups of heads share them ("GQA-2": two K/V heads, variant_name) */
#define LAYOUT_MQA "MQA" /* all heads share one */

/* Name of the layout n_kv_heads gives with n_heads: LAYOUT_MHA, _GQA or
 * _MQA (a single head, n_heads = 1, is MHA). */
const char *measures_layout_name(int n_heads, int n_kv_heads);

#endif
