/* check_measures.c — every measure of issue 4 on hand-built maps whose answer
 * is known, and the cost table against hand-computed integers.
 *
 * Each expected value is derived in the comment beside its check. Maps are
 * (T, T), row i = query i; causal maps have zeros above the diagonal. */
#include "measures.h"
#include "status.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TOL 1e-12 /* double sums of a few exact float values */

/* A zeroed (T, T) map; the caller frees it. */
static float *map_new(int T)
{
    float *a = calloc((size_t)T * T, sizeof *a);
    ck_assert_ptr_nonnull(a);
    return a;
}

#define A(m, T, i, j) ((m)[(size_t)(i) * (T) + (j)])

/* ids for T distinct tokens: 0, 1, ..., T-1. */
static int *distinct_ids(int T)
{
    int *ids = malloc((size_t)T * sizeof *ids);
    ck_assert_ptr_nonnull(ids);
    for (int i = 0; i < T; i++)
        ids[i] = i;
    return ids;
}

START_TEST(token_ids_name_first_occurrence)
{
    char *tokens[] = {"a", "b", "a", "", "", "b"};
    int ids[6];
    measures_token_ids(tokens, 6, ids);
    const int want[6] = {0, 1, 0, 3, 3, 1}; /* index of each token's first occurrence */
    for (int i = 0; i < 6; i++)
        ck_assert_int_eq(ids[i], want[i]);
}
END_TEST

/* Pure previous-token map, causal T = 5, distinct tokens: row 0 can only
 * look at itself (A_00 = 1), row i >= 1 puts all its weight on i-1. */
START_TEST(previous_token_map)
{
    const int T = 5;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    A(a, T, 0, 0) = 1;
    for (int i = 1; i < T; i++)
        A(a, T, i, i - 1) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 1.0, TOL); /* rows 1..4 each 1 */
    ck_assert_str_eq(measures_role_name(m.role), "previous-token");
    ck_assert_double_eq_tol(m.entropy_bits, 0.0, TOL);  /* every row one-hot: H = 0 */
    ck_assert_double_eq_tol(m.entropy_norm, 0.0, TOL);  /* rows 1..4: 0 / log2(n_i) */
    ck_assert_double_eq_tol(m.confidence, 1.0, TOL);    /* every row's max is 1 */
    ck_assert_double_eq_tol(m.mean_distance, 0.8, TOL); /* (0 + 1 + 1 + 1 + 1) / 5 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.2, TOL);        /* only row 0: 1/5 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 0.25, TOL); /* only row 1 of rows 1..4 */
    /* distinct tokens: no row has an earlier copy, so both are null */
    ck_assert(measures_is_null(m.pattern[MEASURES_DUPLICATE_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_INDUCTION]));
    free(a);
    free(ids);
}
END_TEST

/* Uniform causal map, T = 6: A_ij = 1/(i+1) for j <= i. Row i has
 * H_i = log2(i+1), the most it can have, so entropy_norm = 1 (rows 1..5). */
START_TEST(uniform_causal_map)
{
    const int T = 6;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            A(a, T, i, j) = 1.0f / (float)(i + 1);
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    /* float 1/3, 1/5, 1/6 are rounded: 1e-6 covers float32's relative 6e-8 */
    ck_assert_double_eq_tol(m.entropy_norm, 1.0, 1e-6);
    /* mean of log2(1..6) = log2(720) / 6 */
    ck_assert_double_eq_tol(m.entropy_bits, log2(720.0) / 6.0, 1e-6);
    /* self = mean of 1/(i+1) = (1 + 1/2 + ... + 1/6) / 6 = 2.45 / 6 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 2.45 / 6.0, 1e-6);
    /* confidence: each row's max is 1/(i+1), the same sum */
    ck_assert_double_eq_tol(m.confidence, 2.45 / 6.0, 1e-6);
    /* mean distance: row i looks back (0 + 1 + ... + i)/(i+1) = i/2 on average;
     * mean over i = 0..5 of i/2 = 15/2/6 = 1.25 */
    ck_assert_double_eq_tol(m.mean_distance, 1.25, 1e-6);
    /* strongest pattern self = 0.408 < 0.5 and entropy_norm 1 >= 0.8 */
    ck_assert_int_eq(m.role, MEASURES_DIFFUSE);
    ck_assert_str_eq(measures_role_name(m.role), "diffuse");
    free(a);
    free(ids);
}
END_TEST

/* Uniform non-causal map, T = 4: every row sees n_i = T = 4 keys, A = 1/4;
 * H_i = 2 bits = log2(4), so entropy_norm 1; mean distance over the rows:
 * row 0: (0+1+2+3)/4 = 1.5, row 1: (1+0+1+2)/4 = 1, row 2: 1, row 3: 1.5 -> 1.25 */
START_TEST(uniform_noncausal_map)
{
    const int T = 4;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    for (int k = 0; k < T * T; k++)
        a[k] = 0.25f;
    MapMeasures m;
    measures_map(a, T, 0, ids, &m);
    ck_assert_double_eq_tol(m.entropy_bits, 2.0, TOL);
    ck_assert_double_eq_tol(m.entropy_norm, 1.0, TOL);
    ck_assert_double_eq_tol(m.mean_distance, 1.25, TOL);
    ck_assert_double_eq_tol(m.confidence, 0.25, TOL);
    free(a);
    free(ids);
}
END_TEST

/* A seeded xorshift32, so the "random" sequence is the same every run. */
static uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

/* A random sequence of L distinct tokens (from a vocabulary of 1000),
 * repeated: T = 2L. The induction map: row i of the second half attends only
 * to key i - L + 1, the token after the earlier copy p = i - L of token i;
 * first-half rows (no earlier copy) attend to themselves. */
/* measures_layer: every map's measures, the wide head's last, the same bits
 * as measures_map on each map, with 1 and with 2 threads. Random causal rows
 * (each normalised to sum 1) over tokens with repeats; maps large enough
 * that measures_layer runs them in parallel. */
START_TEST(layer_measures_every_map_as_measures_map_does)
{
    enum { T = 96, H = 3 }; /* (H + 1) T^2 cells: enough for measures_layer to use threads */
    static char *const words[] = {"a", "b", "a", "c", "b", "a", "d", "a", "b"};
    char *tokens[T];
    for (int t = 0; t < T; t++)
        tokens[t] = words[(t * 7 + t / 9) % 9];
    uint32_t seed = 88172645u;
    float *att = malloc((size_t)(H + 1) * T * T * sizeof *att); /* (H + 1, T, T); the last is the wide head's */
    ck_assert_ptr_nonnull(att);
    for (int p = 0; p <= H; p++)
        for (int i = 0; i < T; i++) {
            float *row = att + ((size_t)p * T + i) * T, sum = 0.0f;
            for (int j = 0; j < T; j++)
                sum += row[j] = j <= i ? (float)(xorshift(&seed) % 1000 + 1) : 0.0f;
            for (int j = 0; j <= i; j++)
                row[j] /= sum;
        }
    int ids[T];
    measures_token_ids(tokens, T, ids);
    MapMeasures want[H + 1], got[H + 1];
    memset(want, 0, sizeof want); /* the padding too: the structs are compared whole */
    for (int p = 0; p <= H; p++)
        measures_map(att + (size_t)p * T * T, T, 1, ids, &want[p]);
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        memset(got, 0, sizeof got);
        ck_assert_int_eq(measures_layer(att, H, att + (size_t)H * T * T, T, 1, tokens, got), MHAVIZ_OK);
        ck_assert_mem_eq(got, want, sizeof want);
    }
    free(att);
}
END_TEST

START_TEST(induction_map_on_repeated_sequence)
{
    enum { L = 7, T = 2 * L };
    uint32_t seed = 0x9e3779b9u;
    int vocab[L];
    for (int k = 0; k < L; k++) {
        int fresh;
        do { /* draw until the token is new within the half */
            vocab[k] = (int)(xorshift(&seed) % 1000);
            fresh = 1;
            for (int q = 0; q < k; q++)
                fresh &= vocab[q] != vocab[k];
        } while (!fresh);
    }
    char names[T][8];
    char *tokens[T];
    for (int i = 0; i < T; i++) {
        snprintf(names[i], sizeof names[i], "w%d", vocab[i % L]);
        tokens[i] = names[i];
    }
    int ids[T];
    measures_token_ids(tokens, T, ids);
    float *a = map_new(T);
    for (int i = 0; i < L; i++)
        A(a, T, i, i) = 1;
    for (int i = L; i < T; i++)
        A(a, T, i, i - L + 1) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    /* rows L..T-1 qualify (their copy p = i - L); each puts 1 on p + 1 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 1.0, TOL);
    /* nothing on the copy itself */
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 0.0, TOL);
    /* self: the L first-half rows of T = 1/2; induction 1 is the strongest */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.5, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "induction");

    /* The duplicate-token map: second-half rows look at the copy itself. */
    memset(a, 0, (size_t)T * T * sizeof *a);
    for (int i = 0; i < L; i++)
        A(a, T, i, i) = 1;
    for (int i = L; i < T; i++)
        A(a, T, i, i - L) = 1;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 1.0, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 0.0, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "duplicate-token");
    free(a);
}
END_TEST

/* Two earlier copies: tokens a b a a (T = 4). Row 2 has copy p = 0; row 3
 * has copies p = 0 and 2. Row 3 = [0.25, 0.25, 0.25, 0.25]:
 * duplicate: row 2 A_20 = 0.5, row 3 A_30 + A_32 = 0.5 -> mean 0.5;
 * induction: row 2 A_21 = 0.5, row 3 A_31 + A_33 = 0.5 -> mean 0.5. */
START_TEST(several_earlier_copies_add_up)
{
    const int T = 4;
    char *tokens[] = {"a", "b", "a", "a"};
    int ids[4];
    measures_token_ids(tokens, T, ids);
    float *a = map_new(T);
    A(a, T, 0, 0) = 1;
    A(a, T, 1, 0) = 1;
    A(a, T, 2, 0) = 0.5f;
    A(a, T, 2, 1) = 0.5f;
    for (int j = 0; j < 4; j++)
        A(a, T, 3, j) = 0.25f;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 0.5, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 0.5, TOL);
    free(a);
}
END_TEST

/* Ties go to the order listed: previous-token, self, first-token, ... */
START_TEST(role_ties_follow_the_listed_order)
{
    MapMeasures m;
    int *ids = distinct_ids(3);
    /* causal T = 3: row 0 [1], row 1 [1, 0], row 2 [.5, .5, 0]. Key 0 is both
     * the previous and the first token of row 1; row 2 splits between them:
     * previous = (A_10 + A_21)/2 = (1 + .5)/2 = .75, first = (A_10 + A_20)/2
     * = .75, self = (1 + 0 + 0)/3 -> tie at .75 -> "previous-token". */
    float *a = map_new(3);
    A(a, 3, 0, 0) = 1;
    A(a, 3, 1, 0) = 1;
    A(a, 3, 2, 0) = A(a, 3, 2, 1) = 0.5f;
    measures_map(a, 3, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 0.75, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 0.75, TOL);
    ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
    free(a);

    /* non-causal T = 3: row 0 [.5 .5 0], row 1 [.5 .5 0], row 2 [.5 0 .5].
     * self = (.5 + .5 + .5)/3 = .5; first (rows 1, 2) = (.5 + .5)/2 = .5;
     * previous = (A_10 + A_21)/2 = (.5 + 0)/2 = .25. self and first tie at
     * exactly 0.5 (which counts: ">= 0.5") -> "self", listed before first. */
    a = map_new(3);
    A(a, 3, 0, 0) = A(a, 3, 0, 1) = 0.5f;
    A(a, 3, 1, 0) = A(a, 3, 1, 1) = 0.5f;
    A(a, 3, 2, 0) = A(a, 3, 2, 2) = 0.5f;
    measures_map(a, 3, 0, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.5, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 0.5, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 0.25, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "self");
    free(a);
    free(ids);
}
END_TEST

/* No pattern reaches 0.5 and the rows are one-hot (entropy_norm 0): mixed.
 * non-causal T = 4, row i one-hot at key (i + 2) mod 4: self 0;
 * previous (rows 1..3: A_10, A_21, A_32) = 0; first (A_10, A_20, A_30) = 1/3. */
START_TEST(mixed_when_no_pattern_and_not_even)
{
    const int T = 4;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    for (int i = 0; i < T; i++)
        A(a, T, i, (i + 2) % T) = 1;
    MapMeasures m;
    measures_map(a, T, 0, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 1.0 / 3.0, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.0, TOL);
    ck_assert_double_eq_tol(m.entropy_norm, 0.0, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "mixed");
    /* distances: |0-2|, |1-3|, |2-0|, |3-1| = 2 each */
    ck_assert_double_eq_tol(m.mean_distance, 2.0, TOL);
    free(a);
    free(ids);
}
END_TEST

/* T = 1, causal: one row that sees one key. No row has n_i >= 2 or i >= 1 or
 * an earlier copy: entropy_norm, previous, first, duplicate, induction are
 * null; self = 1, but from one row, which names no role; entropy_norm is
 * null, so not "diffuse" -> role "mixed". */
START_TEST(nulls_when_no_row_qualifies)
{
    float a[1] = {1.0f};
    int ids[1] = {0};
    MapMeasures m;
    measures_map(a, 1, 1, ids, &m);
    ck_assert(measures_is_null(m.entropy_norm));
    ck_assert(measures_is_null(m.pattern[MEASURES_PREVIOUS_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_FIRST_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_DUPLICATE_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_INDUCTION]));
    ck_assert(!measures_is_null(m.entropy_bits));
    ck_assert_double_eq_tol(m.entropy_bits, 0.0, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 1.0, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "mixed");
}
END_TEST

START_TEST(js_and_top1)
{
    MapComparison c;
    /* A map against itself: M = P, every log term is log2(1) = 0 -> JS 0;
     * every row's top key agrees -> 1. (The uniform causal map, T = 5.) */
    const int T = 5;
    float *a = map_new(T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            A(a, T, i, j) = 1.0f / (float)(i + 1);
    measures_compare(a, a, T, 1, &c);
    ck_assert_double_eq_tol(c.js_to_single, 0.0, TOL);
    ck_assert_double_eq_tol(c.top1_agreement, 1.0, TOL);
    free(a);

    /* Disjoint one-hot rows, non-causal T = 3: P row i one-hot at i, Q row i
     * one-hot at (i+1) mod 3. M = 1/2 at both keys: KL(P||M) = 1 log2(1/(1/2))
     * = 1 and KL(Q||M) = 1, so JS = 1/2 + 1/2 = 1 per row; top keys never agree. */
    float *p = map_new(3), *q = map_new(3);
    for (int i = 0; i < 3; i++) {
        A(p, 3, i, i) = 1;
        A(q, 3, i, (i + 1) % 3) = 1;
    }
    measures_compare(p, q, 3, 0, &c);
    ck_assert_double_eq_tol(c.js_to_single, 1.0, TOL);
    ck_assert_double_eq_tol(c.top1_agreement, 0.0, TOL);
    free(p);
    free(q);

    /* A worked case, non-causal T = 2, both rows P = (1, 0), Q = (1/2, 1/2):
     * M = (3/4, 1/4);
     * KL(P||M) = 1 log2(1 / (3/4)) = log2(4/3) = 2 - log2(3);
     * KL(Q||M) = 1/2 log2((1/2) / (3/4)) + 1/2 log2((1/2) / (1/4))
     *          = 1/2 (1 - log2(3)) + 1/2 = 1 - 1/2 log2(3);
     * JS = 1/2 (2 - log2 3) + 1/2 (1 - 1/2 log2 3) = 1.5 - 0.75 log2(3) = 0.3112781.
     * Q's top key on the tie (1/2, 1/2) is the lowest index, 0 = P's -> agree. */
    float pp[4] = {1, 0, 1, 0}, qq[4] = {0.5f, 0.5f, 0.5f, 0.5f};
    measures_compare(pp, qq, 2, 0, &c);
    ck_assert_double_eq_tol(c.js_to_single, 1.5 - 0.75 * log2(3.0), TOL);
    ck_assert_double_eq_tol(c.js_to_single, 0.3112781, 1e-7);
    ck_assert_double_eq_tol(c.top1_agreement, 1.0, TOL);
}
END_TEST

START_TEST(output_difference_and_cosine)
{
    /* a = [[3, 4]], b = [[3, 0]]: ||a - b|| = 4, ||a|| = 5 -> 0.8;
     * cos = (9) / (5 * 3) = 0.6 */
    float a[2] = {3, 4}, b[2] = {3, 0}, z[2] = {0, 0};
    ck_assert_double_eq_tol(measures_output_rel_diff(a, b, 1, 2), 0.8, TOL);
    ck_assert_double_eq_tol(measures_output_cosine(a, b, 1, 2), 0.6, TOL);
    /* against zeros: ||a - 0|| / ||a|| = 1; cosine has no zero row to use -> null */
    ck_assert_double_eq_tol(measures_output_rel_diff(a, z, 1, 2), 1.0, TOL);
    ck_assert(measures_is_null(measures_output_cosine(a, z, 1, 2)));
    /* O_multi all zeros: the relative difference is undefined -> null */
    ck_assert(measures_is_null(measures_output_rel_diff(z, a, 1, 2)));
    /* rows [1, 0] vs [2, 0] (cos 1) and [0, 2] vs [0, -1] (cos -1): mean 0 */
    float c[4] = {1, 0, 0, 2}, d[4] = {2, 0, 0, -1};
    ck_assert_double_eq_tol(measures_output_cosine(c, d, 2, 2), 0.0, TOL);
}
END_TEST

/* The base Transformer shape: d = 512, 8 heads of 64, at T = 10, causal,
 * no biases. Visible pairs P = T(T+1)/2 = 10 * 11 / 2 = 55. */
START_TEST(cost_base_transformer)
{
    MhaConfig c = {.T = 10, .d_model = 512, .n_heads = 8, .n_kv_heads = 8, .head_dim = 64, .causal = 1};
    CostTable t;
    measures_cost(&c, 0, 0, &t);
    ck_assert_int_eq(t.pairs, 55);
    /* MHA: kv = 8 * 64 = 512. params = 2 d^2 + 2 d kv = 4 * 512^2 = 4 * 262,144 = 1,048,576 */
    ck_assert_int_eq(t.mha.params, 1048576);
    /* projections: T * params (no biases) = 10 * 1,048,576 = 10,485,760 */
    ck_assert_int_eq(t.mha.mac_projections, 10485760);
    /* scores and value mix: P * n_heads * head_dim = 55 * 8 * 64 = 55 * 512 = 28,160 */
    ck_assert_int_eq(t.mha.mac_scores, 28160);
    ck_assert_int_eq(t.mha.mac_value_mix, 28160);
    /* K/V cache per token: 2 * 8 * 64 * 2 = 2,048 bytes */
    ck_assert_int_eq(t.mha.kv_cache_bytes, 2048);
    /* the input is MHA: its row is the MHA row */
    ck_assert_int_eq(t.input.params, 1048576);
    ck_assert_int_eq(t.input.n_kv_heads, 8);

    /* GQA: 8 / 4 = 2 K/V heads, kv = 128. params = 2 * 262,144 + 2 * 512 * 128
     * = 524,288 + 131,072 = 655,360; projections 10 * 655,360 = 6,553,600;
     * cache 2 * 2 * 64 * 2 = 512 */
    ck_assert(t.gqa_valid);
    ck_assert_int_eq(t.gqa.n_kv_heads, 2);
    ck_assert_int_eq(t.gqa.params, 655360);
    ck_assert_int_eq(t.gqa.mac_projections, 6553600);
    ck_assert_int_eq(t.gqa.mac_scores, 28160);
    ck_assert_int_eq(t.gqa.kv_cache_bytes, 512);

    /* MQA: kv = 64. params = 524,288 + 2 * 512 * 64 = 524,288 + 65,536 = 589,824;
     * projections 5,898,240; cache 2 * 1 * 64 * 2 = 256 */
    ck_assert_int_eq(t.mqa.params, 589824);
    ck_assert_int_eq(t.mqa.mac_projections, 5898240);
    ck_assert_int_eq(t.mqa.kv_cache_bytes, 256);

    /* One wide head: 1 head of 512, kv = 512: the same counts as MHA,
     * scores 55 * 1 * 512 = 28,160; cache 2 * 1 * 512 * 2 = 2,048 */
    ck_assert_int_eq(t.wide.n_heads, 1);
    ck_assert_int_eq(t.wide.head_dim, 512);
    ck_assert_int_eq(t.wide.params, 1048576);
    ck_assert_int_eq(t.wide.mac_projections, 10485760);
    ck_assert_int_eq(t.wide.mac_scores, 28160);
    ck_assert_int_eq(t.wide.mac_value_mix, 28160);
    ck_assert_int_eq(t.wide.kv_cache_bytes, 2048);
}
END_TEST

START_TEST(cost_biases_noncausal_and_gqa_choice)
{
    /* With biases, MHA adds d + kv + kv + d = 512 + 512 + 512 + 512 = 2,048:
     * 1,048,576 + 2,048 = 1,050,624; MQA adds 512 + 64 + 64 + 512 = 1,152:
     * 589,824 + 1,152 = 590,976. Biases are not multiply-accumulates. */
    MhaConfig c = {.T = 10, .d_model = 512, .n_heads = 8, .n_kv_heads = 8, .head_dim = 64, .causal = 0};
    CostTable t;
    measures_cost(&c, 1, 0, &t);
    ck_assert_int_eq(t.mha.params, 1050624);
    ck_assert_int_eq(t.mqa.params, 590976);
    ck_assert_int_eq(t.mha.mac_projections, 10485760);
    ck_assert_int_eq(t.wide.params, 1048576); /* the wide head's own weights had none */
    /* non-causal: P = T^2 = 100 pairs; scores 100 * 512 = 51,200 */
    ck_assert_int_eq(t.pairs, 100);
    ck_assert_int_eq(t.mha.mac_scores, 51200);

    /* An input that is GQA keeps its own grouping: 12 heads, 3 K/V heads. */
    MhaConfig g = {.T = 4, .d_model = 96, .n_heads = 12, .n_kv_heads = 3, .head_dim = 8, .causal = 1};
    measures_cost(&g, 0, 0, &t);
    ck_assert(t.gqa_valid);
    ck_assert_int_eq(t.gqa.n_kv_heads, 3);
    ck_assert_int_eq(t.input.n_kv_heads, 3);
    /* 4 heads: 4/4 = 1 K/V head would be MQA, so there is no GQA row;
     * 6 heads: 6/4 is not whole. */
    MhaConfig four = {.T = 4, .d_model = 32, .n_heads = 4, .n_kv_heads = 4, .head_dim = 8, .causal = 1};
    measures_cost(&four, 0, 0, &t);
    ck_assert(!t.gqa_valid);
    four.n_heads = four.n_kv_heads = 6;
    four.d_model = 48;
    measures_cost(&four, 0, 0, &t);
    ck_assert(!t.gqa_valid);

    ck_assert_str_eq(measures_layout_name(8, 8), "MHA");
    ck_assert_str_eq(measures_layout_name(8, 2), "GQA");
    ck_assert_str_eq(measures_layout_name(8, 1), "MQA");
}
END_TEST

/* Counts past 2^32 stay exact: d = 8192, 64 heads, T = 4096, causal.
 * params = 4 * 8192^2 = 4 * 67,108,864 = 268,435,456 = 2^28;
 * projections = 4096 * 2^28 = 2^40 = 1,099,511,627,776;
 * P = 4096 * 4097 / 2 = 8,390,656; scores = P * 8192 = 68,736,253,952. */
START_TEST(cost_large_counts_are_exact)
{
    MhaConfig c = {.T = 4096, .d_model = 8192, .n_heads = 64, .n_kv_heads = 64, .head_dim = 128, .causal = 1};
    CostTable t;
    measures_cost(&c, 0, 0, &t);
    ck_assert(t.mha.params == INT64_C(268435456));
    ck_assert(t.mha.mac_projections == INT64_C(1099511627776));
    ck_assert(t.pairs == INT64_C(8390656));
    ck_assert(t.mha.mac_scores == INT64_C(68736253952));
}
END_TEST

/* One repeated word is a coincidence, not a habit: tokens a b c a (T = 4),
 * only row 3 has an earlier copy (p = 0). Row 3 puts all on p + 1 = 1, the
 * other rows on themselves. induction = A_31 = 1 over that one row (its
 * score is reported), but it needs MEASURES_MIN_ROLE_ROWS = 2 rows to name
 * the role; the next pattern is self = (1 + 1 + 1 + 0) / 4 = 0.75 -> "self". */
START_TEST(one_row_names_no_role)
{
    const int T = 4;
    char *tokens[] = {"a", "b", "c", "a"};
    int ids[4];
    measures_token_ids(tokens, T, ids);
    float *a = map_new(T);
    for (int i = 0; i < 3; i++)
        A(a, T, i, i) = 1;
    A(a, T, 3, 1) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 1.0, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.75, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "self");
    free(a);
}
END_TEST

/* Each row's sharpness: H_i / log2(n_i). Causal, T = 4:
 *   row 0 sees one key: null (nothing to spread, not 0);
 *   row 1 (0.5, 0.5): 1 bit / log2 2 = 1;
 *   row 2 (1, 0, 0): 0;
 *   row 3 (0.5, 0.25, 0.25, 0): 1.5 bits / log2 4 = 0.75.
 * Not causal, every row sees 4 keys: row 3 again 1.5 / 2 = 0.75, row 0
 * (1, 0, 0, 0) 0. */
START_TEST(row_entropy_norm_per_row)
{
    const float att[16] = {
        1.0f, 0.0f, 0.0f, 0.0f,
        0.5f, 0.5f, 0.0f, 0.0f,
        1.0f, 0.0f, 0.0f, 0.0f,
        0.5f, 0.25f, 0.25f, 0.0f,
    };
    double h[4];
    measures_row_entropy_norm(att, 4, 1, h);
    ck_assert(measures_is_null(h[0]));
    ck_assert_double_eq_tol(h[1], 1.0, TOL);
    ck_assert_double_eq_tol(h[2], 0.0, TOL);
    ck_assert_double_eq_tol(h[3], 0.75, TOL);
    measures_row_entropy_norm(att, 4, 0, h);
    ck_assert_double_eq_tol(h[0], 0.0, TOL);
    ck_assert_double_eq_tol(h[1], 0.5, TOL); /* 1 bit of log2 4 = 2 */
    ck_assert_double_eq_tol(h[3], 0.75, TOL);
}
END_TEST

Suite *measures_suite(void)
{
    Suite *s = suite_create("measures");
    TCase *tc = tcase_create("measures");
    tcase_add_test(tc, token_ids_name_first_occurrence);
    tcase_add_test(tc, row_entropy_norm_per_row);
    tcase_add_test(tc, one_row_names_no_role);
    tcase_add_test(tc, previous_token_map);
    tcase_add_test(tc, uniform_causal_map);
    tcase_add_test(tc, uniform_noncausal_map);
    tcase_add_test(tc, induction_map_on_repeated_sequence);
    tcase_add_test(tc, layer_measures_every_map_as_measures_map_does);
    tcase_add_test(tc, several_earlier_copies_add_up);
    tcase_add_test(tc, role_ties_follow_the_listed_order);
    tcase_add_test(tc, mixed_when_no_pattern_and_not_even);
    tcase_add_test(tc, nulls_when_no_row_qualifies);
    tcase_add_test(tc, js_and_top1);
    tcase_add_test(tc, output_difference_and_cosine);
    tcase_add_test(tc, cost_base_transformer);
    tcase_add_test(tc, cost_biases_noncausal_and_gqa_choice);
    tcase_add_test(tc, cost_large_counts_are_exact);
    suite_add_tcase(s, tc);
    return s;
}
