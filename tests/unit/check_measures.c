/* check_measures.c — every measure of issues 4 and 13 on hand-built maps
 * whose answer is known, and the cost table against hand-computed integers.
 *
 * Each expected value is derived in the comment beside its check. Maps are
 * (T, T), row i = query i; causal maps have zeros above the diagonal. */
#include "core/measures.h"
#include "core/status.h"

#include "support.h"

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

/* Lesson 1's sentence (samples/README.md), T = 11. */
static char *const LESSON1[] = {"Mary", "gave", "the", "book", "to", "John", "because", "John", "had", "helped", "Mary"};

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
 * look at itself (A_00 = 1), row i >= 1 puts all its weight on i-1. Row 0
 * has one visible key: it counts for no pattern. */
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
    ck_assert_int_eq(m.rows[MEASURES_PREVIOUS_TOKEN], 4);
    ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], 4);
    ck_assert_str_eq(measures_role_name(m.role), "previous-token");
    ck_assert_double_eq_tol(m.entropy_bits, 0.0, TOL);  /* every row one-hot: H = 0 */
    ck_assert_double_eq_tol(m.entropy_norm, 0.0, TOL);  /* rows 1..4: 0 / log2(n_i) */
    ck_assert_double_eq_tol(m.confidence, 1.0, TOL);    /* every row's max is 1 */
    ck_assert_double_eq_tol(m.mean_distance, 0.8, TOL); /* (0 + 1 + 1 + 1 + 1) / 5 */
    /* self over rows 1..4 (row 0 had no choice): 0 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_SELF], 4);
    /* first: rows 2..4 (in row 1, key 0 is the previous token): 0 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 0.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_FIRST_TOKEN], 3);
    /* distinct tokens: no row has an earlier copy, so both are null; the
     * causal mask hides the next and the last token; no fixed key */
    ck_assert(measures_is_null(m.pattern[MEASURES_DUPLICATE_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_INDUCTION]));
    ck_assert(measures_is_null(m.pattern[MEASURES_NEXT_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_LAST_TOKEN]));
    ck_assert(measures_is_null(m.pattern[MEASURES_FIXED_TOKEN]));
    ck_assert_int_eq(m.fixed_key, -1);
    ck_assert_int_eq(m.strongest, MEASURES_PREVIOUS_TOKEN);
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
    /* self over rows 1..5 = (1/2 + ... + 1/6) / 5 = (2.45 - 1) / 5 = 0.29 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.29, 1e-6);
    /* confidence: each row's max is 1/(i+1), the same sum */
    ck_assert_double_eq_tol(m.confidence, 2.45 / 6.0, 1e-6);
    /* mean distance: row i looks back (0 + 1 + ... + i)/(i+1) = i/2 on average;
     * mean over i = 0..5 of i/2 = 15/2/6 = 1.25 */
    ck_assert_double_eq_tol(m.mean_distance, 1.25, 1e-6);
    /* strongest pattern previous (1/2 + ... + 1/6)/5 = 0.29, a tie with
     * self, < 0.5 and entropy_norm 1 >= 0.8 */
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
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], L);
    ck_assert_int_eq(m.shown[MEASURES_INDUCTION], L);
    /* self: rows 1..L-1 of the T - 1 rows that see two keys: 6/13 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], (double)(L - 1) / (T - 1), TOL);
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

/* One cell, one pattern. Tokens a b a a (T = 4), causal.
 * Row 2 (copy p = 0): key 1 is the previous token, though it also follows
 * the copy (induction), so induction has no cell in row 2; key 0 is the
 * copy (duplicate). Row 2 = [.5, .5, 0]: duplicate .5, previous .5.
 * Row 3 (copies 0 and 2): key 2 is the previous token, not a copy; key 0 is
 * a copy; key 1 follows copy 0 (induction); key 3 follows copy 2 but is the
 * token itself. Row 3 = [.25, .25, .25, .25]:
 * duplicate (.5 + .25)/2 = .375 over 2 rows; induction .25 over row 3 only;
 * previous (A_10 = 1, .5, .25)/3; first: key 0 is a copy of "a" in rows 2
 * and 3, the previous token in row 1: no row where it could show. */
START_TEST(one_cell_one_pattern)
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
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 0.375, TOL);
    ck_assert_int_eq(m.rows[MEASURES_DUPLICATE_TOKEN], 2);
    ck_assert_int_eq(m.shown[MEASURES_DUPLICATE_TOKEN], 1); /* row 2's .5 is half */
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 0.25, TOL);
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], 1);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 1.75 / 3.0, TOL);
    ck_assert(measures_is_null(m.pattern[MEASURES_FIRST_TOKEN]));
    ck_assert_int_eq(m.rows[MEASURES_FIRST_TOKEN], 0);
    /* previous: shown in rows 1 and 2 (.5 counts) of 3, share .583, but
     * even spreading gives (1/2 + 1/3 + 1/4)/3 = .361 and a role needs
     * twice that, .722: in so few keys, no role */
    ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], 2);
    ck_assert_double_eq_tol(m.even[MEASURES_PREVIOUS_TOKEN], (1.0 / 2 + 1.0 / 3 + 1.0 / 4) / 3, TOL);
    ck_assert_int_eq(m.role, MEASURES_MIXED);
    free(a);
}
END_TEST

/* Lesson 3's coincidence: a previous-token head on lesson 1's sentence,
 * causal. Row 7 (John, copy at 5) looks at 6 ("because"), which follows the
 * first John, but is the token just before: previous, not induction. Only
 * row 10 (Mary, copy 0) has an induction cell (key 1, "gave"): 0 there. */
START_TEST(previous_token_is_not_induction)
{
    enum { T = 11 };
    int ids[T];
    measures_token_ids(LESSON1, T, ids);
    float *a = map_new(T);
    A(a, T, 0, 0) = 1;
    for (int i = 1; i < T; i++)
        A(a, T, i, i - 1) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 0.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], 1);
    ck_assert_int_eq(m.shown[MEASURES_INDUCTION], 0);
    /* rows 7 (copy 5) and 10 (copy 0) could show duplicate: 0 */
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 0.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_DUPLICATE_TOKEN], 2);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 1.0, TOL);
    ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], 10);
    ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
    free(a);
}
END_TEST

/* Token 0 that is an earlier copy of the query's token is that copy, not
 * the first token. Lesson 1's subject head: every row looks at "Mary" (0).
 * Row 1: key 0 is the previous token; row 10 ("Mary"): key 0 is its copy;
 * rows 2..9: the first token. first 1 in 8 of 8 rows; duplicate: rows 7 and
 * 10 could show it, row 10 shows it (1 row: no role) -> "first-token". A
 * causal head fixed on token 0 is first-token: no fixed key. */
START_TEST(first_token_shares_with_copies)
{
    enum { T = 11 };
    int ids[T];
    measures_token_ids(LESSON1, T, ids);
    float *a = map_new(T);
    for (int i = 0; i < T; i++)
        A(a, T, i, 0) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 1.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_FIRST_TOKEN], 8);
    ck_assert_int_eq(m.shown[MEASURES_FIRST_TOKEN], 8);
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 0.5, TOL);
    ck_assert_int_eq(m.shown[MEASURES_DUPLICATE_TOKEN], 1);
    ck_assert_int_eq(m.fixed_key, -1);
    ck_assert_int_eq(m.role, MEASURES_FIRST_TOKEN);
    free(a);

    /* a b a c a d a: the same head. Rows 2, 4, 6 ("a") see key 0 as a copy:
     * duplicate 1 in 3 of 3 rows; rows 3, 5: first 1 in 2 of 2 rows. A tie
     * at 1: the list order names duplicate-token, the truer name here. */
    char *abac[7] = {"a", "b", "a", "c", "a", "d", "a"};
    int ids7[7];
    measures_token_ids(abac, 7, ids7);
    a = map_new(7);
    for (int i = 0; i < 7; i++)
        A(a, 7, i, 0) = 1;
    measures_map(a, 7, 1, ids7, &m);
    ck_assert_int_eq(m.rows[MEASURES_DUPLICATE_TOKEN], 3);
    ck_assert_int_eq(m.shown[MEASURES_DUPLICATE_TOKEN], 3);
    ck_assert_int_eq(m.rows[MEASURES_FIRST_TOKEN], 2);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 1.0, TOL);
    ck_assert_int_eq(m.role, MEASURES_DUPLICATE_TOKEN);
    free(a);
}
END_TEST

/* Without the causal mask: lesson 1's head 3 put about 0.97 on the last
 * token in every row. T = 6, distinct tokens, every row .97 on key 5 and .03
 * on key 0 (row 0: on itself). Row 5: key 5 is itself; row 4: the next
 * token; rows 0..3 could show last-token: .97 in 4 of 4 -> "last-token".
 * Key 5 is every row's top key, but token T-1 is the last-token pattern,
 * not a fixed key. */
START_TEST(noncausal_last_and_next_token)
{
    const int T = 6;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    for (int i = 0; i < T; i++) {
        A(a, T, i, T - 1) = 0.97f;
        A(a, T, i, 0) = 0.03f;
    }
    MapMeasures m;
    measures_map(a, T, 0, ids, &m);
    ck_assert_int_eq(m.rows[MEASURES_LAST_TOKEN], 4);
    ck_assert_int_eq(m.shown[MEASURES_LAST_TOKEN], 4);
    ck_assert_double_eq_tol(m.pattern[MEASURES_LAST_TOKEN], 0.97f, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_NEXT_TOKEN], 0.97f / 5, 1e-7); /* rows 0..4: only row 4 */
    ck_assert_int_eq(m.shown[MEASURES_NEXT_TOKEN], 1);
    ck_assert_int_eq(m.fixed_key, -1);
    ck_assert_str_eq(measures_role_name(m.role), "last-token");
    free(a);

    /* a next-token head: row i on i + 1, the last row on itself */
    a = map_new(T);
    for (int i = 0; i < T; i++)
        A(a, T, i, i + 1 < T ? i + 1 : i) = 1;
    measures_map(a, T, 0, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_NEXT_TOKEN], 1.0, TOL); /* rows 0..4 */
    ck_assert_int_eq(m.shown[MEASURES_NEXT_TOKEN], 5);
    ck_assert_str_eq(measures_role_name(m.role), "next-token");
    free(a);
    free(ids);
}
END_TEST

/* fixed-token: one key that is the top key, with at least half, of more
 * than half the rows that see two keys. Causal T = 8, rows 2..7 all on key
 * 2, row 1 on itself: 6 of the 7 rows -> fixed key 2. Key 2 is row 2's
 * own token and row 3's previous token: rows 4..7 could show fixed-token,
 * and do: 1 in 4 of 4 -> "fixed-token". */
START_TEST(fixed_token_key)
{
    const int T = 8;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    A(a, T, 0, 0) = 1;
    A(a, T, 1, 1) = 1;
    for (int i = 2; i < T; i++)
        A(a, T, i, 2) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_int_eq(m.fixed_key, 2);
    ck_assert_int_eq(m.rows[MEASURES_FIXED_TOKEN], 4);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIXED_TOKEN], 1.0, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "fixed-token");

    /* Key 2 in only rows 2..4, 3 of 7 rows: not most rows, no fixed key
     * (rows 5..7 on themselves) */
    for (int i = 5; i < T; i++) {
        A(a, T, i, 2) = 0;
        A(a, T, i, i) = 1;
    }
    measures_map(a, T, 1, ids, &m);
    ck_assert_int_eq(m.fixed_key, -1);
    ck_assert(measures_is_null(m.pattern[MEASURES_FIXED_TOKEN]));
    ck_assert_int_eq(m.rows[MEASURES_FIXED_TOKEN], 0);
    free(a);
    free(ids);
}
END_TEST

/* A role needs support: shown (at least half of the row) in at least 2 rows
 * and in at least a quarter of the rows that could show it. Causal T = 12,
 * distinct tokens; rows 3..11 put .49 on the previous token and .255 each
 * on themselves and on token 0; rows 1..k put 1 on the previous token.
 * k = 2: previous = (2 + 9 x .49)/11 = .583 >= .5, but shown in 2 of 11
 * rows, fewer than a quarter -> no role (split with first-token, 9 x .255 / 10
 * = .23 over rows 2..11: each over 0.2 and its even share); k = 3: shown in 3 of 11
 * (12 >= 11) -> "previous-token". */
START_TEST(role_needs_support)
{
    const int T = 12;
    int *ids = distinct_ids(T);
    for (int k = 2; k <= 3; k++) {
        float *a = map_new(T);
        A(a, T, 0, 0) = 1;
        for (int i = 1; i <= k; i++)
            A(a, T, i, i - 1) = 1;
        for (int i = k + 1; i < T; i++) {
            A(a, T, i, i - 1) = 0.49f;
            A(a, T, i, i) = 0.255f;
            A(a, T, i, 0) = 0.255f;
        }
        MapMeasures m;
        measures_map(a, T, 1, ids, &m);
        ck_assert_int_eq(m.rows[MEASURES_PREVIOUS_TOKEN], 11);
        ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], k);
        ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], (k + (T - 1 - k) * (double)0.49f) / 11, 1e-7);
        ck_assert_double_ge(m.pattern[MEASURES_PREVIOUS_TOKEN], 0.5);
        ck_assert_int_eq(m.strongest, MEASURES_PREVIOUS_TOKEN);
        if (k == 2) { /* no role: split between it and first (23%: split_does_not_flip_at_half) */
            ck_assert_int_eq(m.role, MEASURES_SPLIT);
            ck_assert_int_eq(m.split[0], MEASURES_PREVIOUS_TOKEN);
            ck_assert_int_eq(m.split[1], MEASURES_FIRST_TOKEN);
        } else
            ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
        free(a);
    }
    free(ids);
}
END_TEST

/* One repeated word: most keys are earlier copies, so even attention puts
 * most of a row on them. Causal uniform map over "the" x 8: row i has i - 1
 * copies (key i - 1 is the previous token) of its i + 1 keys: duplicate
 * share = even share = (i - 1)/(i + 1) in rows 2..7, mean
 * (1/3 + 2/4 + 3/5 + 4/6 + 5/7 + 6/8)/6 = 0.594; shown (>= .5) in rows 3..7,
 * 5 of 6 rows; but a role needs twice the even share, 1.19: no role
 * ("diffuse"). Even a head that looks only at the first copy (row i on key
 * 0, a share of 1) is no duplicate-token head here: with every key a copy,
 * the map cannot show that habit. */
START_TEST(even_share_is_no_role)
{
    enum { T = 8 };
    char *tokens[T] = {"the", "the", "the", "the", "the", "the", "the", "the"};
    int ids[T];
    measures_token_ids(tokens, T, ids);
    float *a = map_new(T);
    for (int i = 0; i < T; i++)
        for (int j = 0; j <= i; j++)
            A(a, T, i, j) = 1.0f / (float)(i + 1);
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    const double even = (1.0 / 3 + 2.0 / 4 + 3.0 / 5 + 4.0 / 6 + 5.0 / 7 + 6.0 / 8) / 6;
    ck_assert_double_eq_tol(m.even[MEASURES_DUPLICATE_TOKEN], even, 1e-12);
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], even, 1e-6);
    ck_assert_int_eq(m.shown[MEASURES_DUPLICATE_TOKEN], 5);
    ck_assert_int_eq(m.rows[MEASURES_DUPLICATE_TOKEN], 6);
    ck_assert_str_eq(measures_role_name(m.role), "diffuse");

    memset(a, 0, (size_t)T * T * sizeof *a);
    for (int i = 0; i < T; i++)
        A(a, T, i, 0) = 1;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_DUPLICATE_TOKEN], 1.0, TOL);
    ck_assert_int_eq(m.role, MEASURES_MIXED);
    free(a);
}
END_TEST

/* Heads as a small trained attention-only model has them (soft, with a
 * sink on a start token), on "<s>" and a random sequence of L = 10 tokens
 * repeated (T = 21). Layer 1's previous-token head: .7 on the token before,
 * .3 spread over every visible key. Layer 2's induction head: the first copy
 * rests on "<s>" (.8, plus .2 spread); the second copy puts .6 on the token
 * after its earlier copy, .2 on "<s>", .2 spread. Expected: previous-token
 * (.7 + .3/(i+1) >= .7 in every row); induction (rows 11..20: .6 plus its
 * spread share, well over twice the even share 1/(i+1)), though
 * "<s>" takes most of the first half's rows: first-token's share is about
 * (9 x .8 + 10 x .2)/19 = .48 plus the spread, below induction's. */
START_TEST(trained_like_previous_and_induction_heads)
{
    enum { L = 10, T = 2 * L + 1 };
    static char *const words[L] = {"cat", "ran", "blue", "seven", "over", "lamp", "ice", "tree", "up", "sky"};
    char *tokens[T];
    tokens[0] = "<s>";
    for (int i = 1; i < T; i++)
        tokens[i] = words[(i - 1) % L];
    int ids[T];
    measures_token_ids(tokens, T, ids);
    float *prev = map_new(T), *ind = map_new(T);
    for (int i = 0; i < T; i++) {
        for (int j = 0; j <= i; j++) {
            A(prev, T, i, j) = 0.3f / (float)(i + 1);
            A(ind, T, i, j) = 0.2f / (float)(i + 1);
        }
        A(prev, T, i, i > 0 ? i - 1 : 0) += 0.7f;
        if (i <= L) {
            A(ind, T, i, 0) += 0.8f;
        } else {
            A(ind, T, i, i - L + 1) += 0.6f; /* the token after the copy at i - L */
            A(ind, T, i, 0) += 0.2f;
        }
    }
    MapMeasures m;
    measures_map(prev, T, 1, ids, &m);
    ck_assert_str_eq(measures_role_name(m.role), "previous-token");
    ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], T - 1);
    measures_map(ind, T, 1, ids, &m);
    ck_assert_str_eq(measures_role_name(m.role), "induction");
    /* rows L+1..T-1 could show it; in row L+1 the follower of copy 1 is
     * key 2, not the token before (L) */
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], L);
    ck_assert_int_eq(m.shown[MEASURES_INDUCTION], L);
    ck_assert_double_gt(m.pattern[MEASURES_INDUCTION], 0.6);
    ck_assert_double_lt(m.pattern[MEASURES_FIRST_TOKEN], m.pattern[MEASURES_INDUCTION]);
    free(prev);
    free(ind);
}
END_TEST

/* A role must win: a head that gives each row half to the previous token
 * and half to itself does both, and neither by a hair more. Causal T = 16,
 * distinct tokens, rows 1..15 at (a, 1 - a) on (i - 1, i): previous and
 * self each hold a on average over those 15 rows, at least twice their
 * even share (H_16 - 1)/15 = 0.159, in every row: both have support. At
 * a = 0.5 list order used to name previous-token the role, at a = 0.4999
 * self; shares less than MEASURES_TIE_SHARE apart tie, and the map splits
 * between the two, the larger first (list order at an exact tie). */
START_TEST(tied_patterns_make_no_role)
{
    enum { T = 16 };
    const double a_of[2] = {0.5, 0.4999};
    int *ids = distinct_ids(T);
    for (int k = 0; k < 2; k++) {
        MapMeasures m;
        float *a = map_new(T);
        A(a, T, 0, 0) = 1;
        for (int i = 1; i < T; i++) {
            A(a, T, i, i - 1) = (float)a_of[k];
            A(a, T, i, i) = (float)(1 - a_of[k]);
        }
        measures_map(a, T, 1, ids, &m);
        ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], a_of[k], 1e-7);
        ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 1 - a_of[k], 1e-7);
        ck_assert_int_eq(m.role, MEASURES_SPLIT);
        ck_assert_int_eq(m.split[0], k == 0 ? MEASURES_PREVIOUS_TOKEN : MEASURES_SELF);
        ck_assert_int_eq(m.split[1], k == 0 ? MEASURES_SELF : MEASURES_PREVIOUS_TOKEN);
        free(a);
    }
    free(ids);
}
END_TEST

/* Ties go to the order listed: previous-token, self, next-token, ... */
START_TEST(role_ties_follow_the_listed_order)
{
    /* non-causal T = 4, distinct tokens: rows 0 and 1 on themselves, rows
     * 2 and 3 on the previous token. self: rows 0..3 = (1 + 1 + 0 + 0)/4,
     * previous: rows 1..3 = (0 + 1 + 1)/3; each shown in 2 rows, a quarter
     * or more, each at least twice its even share 1/4; the larger share,
     * previous .667, names the role. */
    MapMeasures m;
    int *ids = distinct_ids(4);
    float *a = map_new(4);
    A(a, 4, 0, 0) = A(a, 4, 1, 1) = 1;
    A(a, 4, 2, 1) = A(a, 4, 3, 2) = 1;
    measures_map(a, 4, 0, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.5, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 2.0 / 3.0, TOL);
    ck_assert_double_eq_tol(m.even[MEASURES_PREVIOUS_TOKEN], 0.25, TOL);
    ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
    free(a);

    /* causal T = 5, rows 1, 2 on themselves, rows 3, 4 on the previous token:
     * self (1 + 1 + 0 + 0)/4 = .5, previous (0 + 0 + 1 + 1)/4 = .5: the
     * the strongest is previous, listed first; neither is a role: a role
     * needs twice the even share, (1/2 + 1/3 + 1/4 + 1/5)/4 = .32. Split
     * between the two: each over 0.2 and its even share, together 1 >= 1.5
     * x .64 (split_does_not_flip_at_half). */
    a = map_new(5);
    A(a, 5, 0, 0) = A(a, 5, 1, 1) = A(a, 5, 2, 2) = 1;
    A(a, 5, 3, 2) = A(a, 5, 4, 3) = 1;
    free(ids);
    ids = distinct_ids(5);
    measures_map(a, 5, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.5, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 0.5, TOL);
    ck_assert_int_eq(m.strongest, MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(m.role, MEASURES_SPLIT);
    ck_assert_int_eq(m.split[0], MEASURES_PREVIOUS_TOKEN);
    free(a);
    free(ids);
}
END_TEST

/* Where no pattern makes a role, split has no edge at a role's share: two
 * patterns at 0.5 / 0.5 split as they do at 0.4999 / 0.4999 and at
 * 0.5001 / 0.4999 (a tie either way). Causal T = 5, distinct tokens: row 1
 * (keys 0, 1) puts 0.5 on the token before and 0.5 on itself; rows 2..4
 * put x on the token before, y on themselves and the rest on token 0
 * (first-token). previous = (0.5 + 3x)/4, self = (0.5 + 3y)/4, each shown
 * in 4 rows at 0.5 and in 1 below. Even shares (1/2 + 1/3 + 1/4 + 1/5)/4
 * = .3208 each: neither reaches twice it (.642), so no role; each is over
 * 0.2 and its even share, together 1 >= 1.5 x .642 = .9625: split, previous
 * first (the larger, or listed first on equal shares). Entropy_norm is
 * under 0.8 (row 1: 1, rows 2..4: about 1/log2(i+1)): not diffuse either. */
START_TEST(split_does_not_flip_at_half)
{
    enum { T = 5 };
    const double x_of[3] = {0.5, (4 * 0.4999 - 0.5) / 3, (4 * 0.5001 - 0.5) / 3};
    const double y_of[3] = {0.5, (4 * 0.4999 - 0.5) / 3, (4 * 0.4999 - 0.5) / 3};
    int *ids = distinct_ids(T);
    for (int k = 0; k < 3; k++) {
        float *a = map_new(T);
        A(a, T, 0, 0) = 1;
        A(a, T, 1, 0) = A(a, T, 1, 1) = 0.5f;
        for (int i = 2; i < T; i++) {
            A(a, T, i, i - 1) = (float)x_of[k];
            A(a, T, i, i) = (float)y_of[k];
            A(a, T, i, 0) = (float)(1 - x_of[k] - y_of[k]);
        }
        MapMeasures m;
        measures_map(a, T, 1, ids, &m);
        ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], (0.5 + 3 * x_of[k]) / 4, 1e-7);
        ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], (0.5 + 3 * y_of[k]) / 4, 1e-7);
        ck_assert_double_eq_tol(m.even[MEASURES_SELF], (1 / 2. + 1 / 3. + 1 / 4. + 1 / 5.) / 4, 1e-12);
        ck_assert_msg(m.role == MEASURES_SPLIT, "case %d: role %s", k, measures_role_name(m.role));
        ck_assert_int_eq(m.split[0], MEASURES_PREVIOUS_TOKEN);
        ck_assert_int_eq(m.split[1], MEASURES_SELF);
        free(a);
    }
    free(ids);
}
END_TEST

/* No pattern has support and the rows are one-hot (entropy_norm 0): mixed.
 * non-causal T = 8, row i one-hot at key (i + 4) mod 8: row 4 on key 0
 * (first), row 3 on key 7 (last), every other row on a key no pattern
 * names. first could show in rows 2..7 (key 0 is row 0's self and row 1's
 * previous token): 1/6; last in rows 0..5 (key 7 is row 6's next token and
 * row 7's self): 1/6; each shown in one row: no role; each under
 * MEASURES_SPLIT_EACH (0.2): no split. No key is the top of most rows: no
 * fixed key. */
START_TEST(mixed_when_no_pattern_and_not_even)
{
    const int T = 8;
    float *a = map_new(T);
    int *ids = distinct_ids(T);
    for (int i = 0; i < T; i++)
        A(a, T, i, (i + 4) % T) = 1;
    MapMeasures m;
    measures_map(a, T, 0, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_FIRST_TOKEN], 1.0 / 6, TOL);
    ck_assert_double_eq_tol(m.pattern[MEASURES_LAST_TOKEN], 1.0 / 6, TOL);
    ck_assert_int_eq(m.shown[MEASURES_FIRST_TOKEN], 1);
    ck_assert_int_eq(m.fixed_key, -1);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.0, TOL);
    ck_assert_double_eq_tol(m.entropy_norm, 0.0, TOL);
    ck_assert_str_eq(measures_role_name(m.role), "mixed");
    /* distances: |i - (i + 4) mod 8| = 4 each */
    ck_assert_double_eq_tol(m.mean_distance, 4.0, TOL);
    free(a);
    free(ids);
}
END_TEST

/* T = 1: one row that sees one key: no choice, so no pattern. Every
 * pattern is null, no row counts for any; entropy_norm is null: role "none".
 * Causal T = 2 has one row with two keys: each pattern could show in one
 * row only, so none is the strongest and none names a role. */
START_TEST(nulls_when_no_row_qualifies)
{
    float a[1] = {1.0f};
    int ids[2] = {0, 1};
    MapMeasures m;
    for (int causal = 0; causal <= 1; causal++) {
        measures_map(a, 1, causal, ids, &m);
        ck_assert(measures_is_null(m.entropy_norm));
        for (int p = 0; p < MEASURES_N_PATTERNS; p++) {
            ck_assert(measures_is_null(m.pattern[p]));
            ck_assert_int_eq(m.rows[p], 0);
        }
        ck_assert(!measures_is_null(m.entropy_bits));
        ck_assert_double_eq_tol(m.entropy_bits, 0.0, TOL);
        ck_assert_int_eq(m.strongest, -1);
        ck_assert_str_eq(measures_role_name(m.role), "none");
    }
    float two[4] = {1, 0, 1, 0}; /* row 1 on token 0, its previous token */
    measures_map(two, 2, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], 1.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_PREVIOUS_TOKEN], 1);
    ck_assert_int_eq(m.strongest, -1);
    ck_assert_int_eq(m.role, MEASURES_MIXED);
}
END_TEST

/* ------------------------------------- each documented threshold, both sides
 * (measures.h: the role rule). A map just on each side of one threshold,
 * every other condition met, so that moving that threshold changes the role. */

/* Diffuse at a mean entropy_norm of MEASURES_DIFFUSE_NORM = 0.8. Non-causal
 * T = 2, distinct tokens: row 0 (a, 1 - a), row 1 (1 - a, a). Self holds a
 * in both rows, but its even share is 1/2, so a role needs a = 1: no role.
 * Each row's entropy_norm is H(a) = -a log2 a - (1 - a) log2 (1 - a):
 * a = 0.75: 0.8113 >= 0.8 -> diffuse; a = 0.76: 0.7950 < 0.8 -> mixed. */
START_TEST(diffuse_at_entropy_norm_0_8)
{
    const float as[2] = {0.75f, 0.76f};
    const char *role[2] = {"diffuse", "mixed"};
    int ids[2] = {0, 1};
    for (int k = 0; k < 2; k++) {
        const double a = as[k];
        float m2[4] = {as[k], 1 - as[k], 1 - as[k], as[k]};
        MapMeasures m;
        measures_map(m2, 2, 0, ids, &m);
        const double h = -a * log2(a) - (1 - a) * log2(1 - a);
        ck_assert_double_eq_tol(m.entropy_norm, h, 1e-6);
        ck_assert(k == 0 ? h >= 0.8 + 0.01 : h <= 0.8 - 0.004);
        ck_assert_str_eq(measures_role_name(m.role), role[k]);
    }
}
END_TEST

/* The previous-token pattern of a causal map, T = 9, distinct tokens: row
 * i >= 1 puts share[i - 1] on the token before and spreads the rest evenly
 * over its other i keys (row 0 sees itself only). */
static void previous_token_rows(float *a, int T, const float *share)
{
    memset(a, 0, (size_t)T * T * sizeof *a);
    A(a, T, 0, 0) = 1;
    for (int i = 1; i < T; i++)
        for (int j = 0; j <= i; j++)
            A(a, T, i, j) = j == i - 1 ? share[i - 1] : (1 - share[i - 1]) / (float)i;
}

/* A role's mean share, at least MEASURES_ROLE_SHARE = 0.5. Rows 1..4 put
 * 0.6 on the previous token (shown in 4 of 8 rows: enough), rows 5..8 put
 * 0.38 (mean 0.49) or 0.42 (mean 0.51); the even share is
 * (1/2 + ... + 1/9)/8 = 0.2286, twice it 0.457, under both. No other
 * pattern comes near half (self: 0.4 in row 1, less after). */
START_TEST(role_share_at_0_5)
{
    enum { T = 9 };
    int *ids = distinct_ids(T);
    float *a = map_new(T);
    const float low[2] = {0.38f, 0.42f};
    for (int k = 0; k < 2; k++) {
        float share[T - 1] = {0.6f, 0.6f, 0.6f, 0.6f, low[k], low[k], low[k], low[k]};
        previous_token_rows(a, T, share);
        MapMeasures m;
        measures_map(a, T, 1, ids, &m);
        ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], (4 * 0.6 + 4 * (double)low[k]) / 8, 1e-6);
        ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], 4);
        ck_assert_double_eq_tol(m.even[MEASURES_PREVIOUS_TOKEN],
                                (1 / 2. + 1 / 3. + 1 / 4. + 1 / 5. + 1 / 6. + 1 / 7. + 1 / 8. + 1 / 9.) / 8, 1e-12);
        if (k == 0)
            ck_assert_int_ne(m.role, MEASURES_PREVIOUS_TOKEN); /* 0.49 < 0.5 */
        else
            ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN); /* 0.51 >= 0.5 */
    }
    free(a);
    free(ids);
}
END_TEST

/* A role's share, at least MEASURES_ROLE_EVEN_TIMES = twice its even share.
 * Causal T = 3: rows 1 and 2 put x on the token before, the rest on
 * themselves. The even share of the previous token is (1/2 + 1/3)/2 =
 * 0.4167, twice it 0.8333: x = 0.82 -> no role; x = 0.85 -> previous-token
 * (shown in both rows, well over half). */
START_TEST(role_needs_twice_the_even_share)
{
    enum { T = 3 };
    int *ids = distinct_ids(T);
    const float xs[2] = {0.82f, 0.85f};
    for (int k = 0; k < 2; k++) {
        const float x = xs[k];
        float a[T * T] = {1, 0, 0, x, 1 - x, 0, 0, x, 1 - x};
        MapMeasures m;
        measures_map(a, T, 1, ids, &m);
        ck_assert_double_eq_tol(m.even[MEASURES_PREVIOUS_TOKEN], (1 / 2. + 1 / 3.) / 2, 1e-12);
        ck_assert_double_eq_tol(m.pattern[MEASURES_PREVIOUS_TOKEN], x, 1e-7);
        ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], 2);
        if (k == 0)
            ck_assert_int_ne(m.role, MEASURES_PREVIOUS_TOKEN);
        else
            ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
    }
    free(ids);
}
END_TEST

/* A role is shown in at least MEASURES_MIN_ROLE_ROWS = 2 rows. Non-causal
 * T = 5, distinct tokens: row 0 uniform; rows 1..4 put a share on the token
 * before and spread the rest over their 4 other keys. Shares (1, .49, .49,
 * .49): mean 0.6175, even share 1/5 (twice: 0.4), a quarter of 4 rows is 1,
 * but shown in 1 row -> no role; (1, 1, .49, .49): shown in 2 -> role.
 * (role_needs_support puts the quarter of the rows on both sides.) */
START_TEST(role_needs_two_rows)
{
    enum { T = 5 };
    int *ids = distinct_ids(T);
    float *a = map_new(T);
    for (int shown = 1; shown <= 2; shown++) {
        for (int j = 0; j < T; j++)
            A(a, T, 0, j) = 0.2f;
        for (int i = 1; i < T; i++) {
            const float x = i <= shown ? 1.0f : 0.49f;
            for (int j = 0; j < T; j++)
                A(a, T, i, j) = j == i - 1 ? x : (1 - x) / 4;
        }
        MapMeasures m;
        measures_map(a, T, 0, ids, &m);
        ck_assert_int_eq(m.rows[MEASURES_PREVIOUS_TOKEN], 4);
        ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], shown);
        ck_assert_double_ge(m.pattern[MEASURES_PREVIOUS_TOKEN], 0.6);
        if (shown == 1)
            ck_assert_int_ne(m.role, MEASURES_PREVIOUS_TOKEN);
        else
            ck_assert_int_eq(m.role, MEASURES_PREVIOUS_TOKEN);
    }
    free(a);
    free(ids);
}
END_TEST

/* A row shows a pattern holding at least MEASURES_SHOWN_SHARE = half of it:
 * the previous-token rows of role_share_at_0_5's map, rows 1..4 at 0.5 or
 * 0.49 and rows 5..8 at 0.6: shown in 8 rows, or in 4. */
START_TEST(row_shows_a_pattern_at_half)
{
    enum { T = 9 };
    int *ids = distinct_ids(T);
    float *a = map_new(T);
    const float first[2] = {0.5f, 0.49f};
    for (int k = 0; k < 2; k++) {
        float share[T - 1] = {first[k], first[k], first[k], first[k], 0.6f, 0.6f, 0.6f, 0.6f};
        previous_token_rows(a, T, share);
        MapMeasures m;
        measures_map(a, T, 1, ids, &m);
        ck_assert_int_eq(m.shown[MEASURES_PREVIOUS_TOKEN], k == 0 ? 8 : 4);
    }
    free(a);
    free(ids);
}
END_TEST

/* A weight as the pictures print it never lands on one half unless it is
 * one half: the report counts a row's half at >= 0.5 and a pull at > 0.5.
 * Two decimals elsewhere; three, rounded away from one half, where two
 * would print "0.50": 0.4994 -> 0.499 (floor), 0.5003 -> 0.501 (ceil). */
START_TEST(weight_text_keeps_its_side_of_half)
{
    static const struct {
        double w;
        const char *text;
    } cases[] = {{0.0, "0.00"},      {0.4949, "0.49"},     {0.49501, "0.495"},     {0.4994, "0.499"},
                 {0.49992, "0.499"}, {0.49999997, "0.499"}, {0.5, "0.50"},         {0.50000006, "0.501"},
                 {0.5003, "0.501"},  {0.5049, "0.505"},    {0.5051, "0.51"},      {0.73, "0.73"},
                 {1.0, "1.00"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[16];
        ck_assert_str_eq(measures_weight_text(buf, sizeof buf, cases[k].w), cases[k].text);
    }
    /* every float weight within 0.006 of one half, stepped by 1e-5: its text is on its side */
    for (int k = -600; k <= 600; k++) {
        const float w = 0.5f + (float)k * 1e-5f;
        char buf[16];
        const double shown = atof(measures_weight_text(buf, sizeof buf, w));
        ck_assert_msg((shown < 0.5) == (w < 0.5f) && (shown > 0.5) == (w > 0.5f), "%.8f printed %s", w, buf);
        ck_assert_msg(fabs(shown - w) < 0.005 + 1e-9, "%.8f printed %s", w, buf);
    }
}
END_TEST

/* The same rule for any threshold and any number of decimals: 0.8 with
 * two decimals (the diffuse entropy), 50 with none (a share in percent). */
START_TEST(side_text_keeps_its_side_of_any_threshold)
{
    static const struct {
        double x, at;
        int decimals;
        const char *text;
    } cases[] = {{0.7996, 0.8, 2, "0.799"}, {0.8, 0.8, 2, "0.80"}, {0.8004, 0.8, 2, "0.801"}, {0.79, 0.8, 2, "0.79"},
                 {49.96, 50, 0, "49.9"},    {50, 50, 0, "50"},     {50.2, 50, 0, "50.2"},   {49.4, 50, 0, "49"},
                 {73.0, 50, 0, "73"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[16];
        ck_assert_str_eq(measures_side_text(buf, sizeof buf, cases[k].x, cases[k].decimals, cases[k].at),
                         cases[k].text);
    }
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

    /* Disjoint rows that are spread, non-causal T = 4: P row (1/2, 1/2, 0, 0),
     * Q row (0, 0, 1/2, 1/2). M = 1/4 at every key: KL(P||M) = 2 x 1/2
     * log2((1/2)/(1/4)) = 1 = KL(Q||M), JS = 1/2 + 1/2 = exactly 1 bit, as for
     * any two rows with no key in common; top keys 0 and 2 never agree. */
    float *ps = map_new(4), *qs = map_new(4);
    for (int i = 0; i < 4; i++) {
        A(ps, 4, i, 0) = A(ps, 4, i, 1) = 0.5f;
        A(qs, 4, i, 2) = A(qs, 4, i, 3) = 0.5f;
    }
    measures_compare(ps, qs, 4, 0, &c);
    ck_assert_double_eq_tol(c.js_to_single, 1.0, TOL);
    ck_assert_double_eq_tol(c.top1_agreement, 0.0, TOL);
    free(ps);
    free(qs);

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

/* A tie gives a row more than one top key, and top-1 agreement counts a
 * row when the two maps share one: which of two tied keys is "the" top
 * key is float noise (lesson 2's wide head ties 'gave' and 'the' in row 2;
 * turning a head's q and k by one orthogonal matrix flipped it, and head
 * 0's top1 went from 0.70 to 0.40). Non-causal T = 2, both rows P = (0, 1)
 * against Q = (1/2, 1/2): Q's top keys are 0 and 1, P's is 1 -> agree;
 * against Q' = (0.51, 0.49), 0.02 apart, no tie: 0 only -> disagree. */
START_TEST(tied_top_keys_agree_either_way)
{
    MapComparison c;
    const float p[4] = {0, 1, 0, 1}, q[4] = {0.5f, 0.5f, 0.5f, 0.5f}, q2[4] = {0.51f, 0.49f, 0.51f, 0.49f};
    measures_compare(p, q, 2, 0, &c);
    ck_assert_double_eq_tol(c.top1_agreement, 1.0, TOL);
    measures_compare(q, p, 2, 0, &c); /* either way round */
    ck_assert_double_eq_tol(c.top1_agreement, 1.0, TOL);
    measures_compare(p, q2, 2, 0, &c);
    ck_assert_double_eq_tol(c.top1_agreement, 0.0, TOL);
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

    /* GQA: every count between 1 and 8 that divides 8: 4, then 2. GQA-2:
     * kv = 128. params = 2 * 262,144 + 2 * 512 * 128 = 524,288 + 131,072 =
     * 655,360; projections 10 * 655,360 = 6,553,600; cache 2 * 2 * 64 * 2 = 512 */
    ck_assert_int_eq(t.n_gqa, 2);
    ck_assert_int_eq(t.gqa[0].n_kv_heads, 4);
    ck_assert_int_eq(t.gqa[1].n_kv_heads, 2);
    ck_assert_int_eq(t.gqa[1].params, 655360);
    ck_assert_int_eq(t.gqa[1].mac_projections, 6553600);
    ck_assert_int_eq(t.gqa[1].mac_scores, 28160);
    ck_assert_int_eq(t.gqa[1].kv_cache_bytes, 512);

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

    /* Every K/V count that divides the heads: 12 heads give GQA-6, -4, -3, -2. */
    MhaConfig g = {.T = 4, .d_model = 96, .n_heads = 12, .n_kv_heads = 3, .head_dim = 8, .causal = 1};
    measures_cost(&g, 0, 0, &t);
    ck_assert_int_eq(t.n_gqa, 4);
    const int want[4] = {6, 4, 3, 2};
    for (int k = 0; k < 4; k++)
        ck_assert_int_eq(t.gqa[k].n_kv_heads, want[k]);
    ck_assert_int_eq(t.input.n_kv_heads, 3);
    /* 4 heads: GQA-2 (lesson 2's layer); 3 heads (prime): none between MHA and MQA. */
    MhaConfig four = {.T = 4, .d_model = 32, .n_heads = 4, .n_kv_heads = 4, .head_dim = 8, .causal = 1};
    measures_cost(&four, 0, 0, &t);
    ck_assert_int_eq(t.n_gqa, 1);
    ck_assert_int_eq(t.gqa[0].n_kv_heads, 2);
    four.n_heads = four.n_kv_heads = 3;
    four.d_model = 24;
    measures_cost(&four, 0, 0, &t);
    ck_assert_int_eq(t.n_gqa, 0);

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

/* One repeated word is a coincidence, not a habit: tokens a b c d e a
 * (T = 6), only row 5 has an earlier copy (p = 0). Row 5 puts all on
 * p + 1 = 1, the other rows on themselves. induction = A_51 = 1 over that
 * one row (its score is reported), but it needs MEASURES_MIN_ROLE_ROWS = 2
 * rows to name the role, and could show in 1 row only, so it is not even
 * the strongest; self = 4/5 over rows 1..5, shown in 4, over twice its
 * even share (1/2 + 1/3 + 1/4 + 1/5 + 1/6)/5 = .29 -> "self". */
START_TEST(one_row_names_no_role)
{
    const int T = 6;
    char *tokens[] = {"a", "b", "c", "d", "e", "a"};
    int ids[6];
    measures_token_ids(tokens, T, ids);
    float *a = map_new(T);
    for (int i = 0; i < 5; i++)
        A(a, T, i, i) = 1;
    A(a, T, 5, 1) = 1;
    MapMeasures m;
    measures_map(a, T, 1, ids, &m);
    ck_assert_double_eq_tol(m.pattern[MEASURES_INDUCTION], 1.0, TOL);
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], 1);
    ck_assert_double_eq_tol(m.pattern[MEASURES_SELF], 0.8, TOL);
    ck_assert_double_eq_tol(m.even[MEASURES_SELF], 0.29, TOL);
    ck_assert_int_eq(m.strongest, MEASURES_SELF);
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
    tcase_add_test(tc, weight_text_keeps_its_side_of_half);
    tcase_add_test(tc, side_text_keeps_its_side_of_any_threshold);
    tcase_add_test(tc, row_entropy_norm_per_row);
    tcase_add_test(tc, one_row_names_no_role);
    tcase_add_test(tc, previous_token_map);
    tcase_add_test(tc, uniform_causal_map);
    tcase_add_test(tc, uniform_noncausal_map);
    tcase_add_test(tc, induction_map_on_repeated_sequence);
    tcase_add_test(tc, layer_measures_every_map_as_measures_map_does);
    tcase_add_test(tc, one_cell_one_pattern);
    tcase_add_test(tc, previous_token_is_not_induction);
    tcase_add_test(tc, first_token_shares_with_copies);
    tcase_add_test(tc, noncausal_last_and_next_token);
    tcase_add_test(tc, fixed_token_key);
    tcase_add_test(tc, role_needs_support);
    tcase_add_test(tc, even_share_is_no_role);
    tcase_add_test(tc, trained_like_previous_and_induction_heads);
    tcase_add_test(tc, role_ties_follow_the_listed_order);
    tcase_add_test(tc, tied_patterns_make_no_role);
    tcase_add_test(tc, split_does_not_flip_at_half);
    tcase_add_test(tc, mixed_when_no_pattern_and_not_even);
    tcase_add_test(tc, nulls_when_no_row_qualifies);
    tcase_add_test(tc, diffuse_at_entropy_norm_0_8);
    tcase_add_test(tc, role_share_at_0_5);
    tcase_add_test(tc, role_needs_twice_the_even_share);
    tcase_add_test(tc, role_needs_two_rows);
    tcase_add_test(tc, row_shows_a_pattern_at_half);
    tcase_add_test(tc, js_and_top1);
    tcase_add_test(tc, tied_top_keys_agree_either_way);
    tcase_add_test(tc, output_difference_and_cosine);
    tcase_add_test(tc, cost_base_transformer);
    tcase_add_test(tc, cost_biases_noncausal_and_gqa_choice);
    tcase_add_test(tc, cost_large_counts_are_exact);
    suite_add_tcase(s, tc);
    return s;
}
