/* check_kernels.c — each fast kernel gives the same bits as its plain loop.
 *
 * Expected values: the plain loops below, copied from the comments in
 * src/kernels.h (the definition of what each kernel computes). Same float
 * operations in the same order per element, so the comparison is bitwise.
 * The sizes are chosen to hit every path: whole tiles, partial tiles, single
 * leftover columns and rows, several cache blocks of terms. */
#include "kernels.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* xorshift32: numbers in [-1, 1), our own seeded generator. */
static float *random_floats(size_t n, uint32_t seed)
{
    float *a = malloc((n ? n : 1) * sizeof *a);
    ck_assert_ptr_nonnull(a);
    uint32_t s = seed * 2654435761u + 1u;
    for (size_t i = 0; i < n; i++) {
        s ^= s << 13;
        s ^= s >> 17;
        s ^= s << 5;
        a[i] = (float)(s >> 8) / (float)(1u << 23) - 1.0f;
    }
    return a;
}

static void plain_matmul_xw(float *out, const float *x, const float *W, const float *b, int M, int K, int N)
{
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            out[(size_t)i * N + j] = b[j];
            for (int p = 0; p < K; p++)
                out[(size_t)i * N + j] += x[(size_t)i * K + p] * W[(size_t)p * N + j];
        }
}

/* (M, K, N): single elements, tails of 1..15 columns, whole 64-column
 * tiles, rows not a multiple of 4, and K across the 128-term cache blocks. */
static const int XW_SIZES[][3] = {
    {1, 1, 1}, {5, 7, 3}, {4, 16, 16}, {37, 60, 60}, {12, 64, 64},
    {70, 300, 150}, {130, 129, 97}, {65, 257, 200},
};

START_TEST(matmul_xw_matches_plain_loop)
{
    const int M = XW_SIZES[_i][0], K = XW_SIZES[_i][1], N = XW_SIZES[_i][2];
    float *x = random_floats((size_t)M * K, 1 + _i);
    float *W = random_floats((size_t)K * N, 100 + _i);
    float *b = random_floats((size_t)N, 200 + _i);
    float *fast = malloc((size_t)M * N * sizeof *fast), *plain = malloc((size_t)M * N * sizeof *plain);
    matmul_xw(fast, x, W, b, M, K, N);
    plain_matmul_xw(plain, x, W, b, M, K, N);
    ck_assert_mem_eq(fast, plain, (size_t)M * N * sizeof *fast);
    free(x); free(W); free(b); free(fast); free(plain);
}
END_TEST

START_TEST(transpose_matches_plain_loop)
{
    const int rows = 37, cols = 20, ld = 50;
    float *src = random_floats((size_t)rows * ld, 7);
    float *dst = malloc((size_t)rows * cols * sizeof *dst);
    transpose(dst, rows, src, ld, rows, cols);
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            ck_assert(dst[(size_t)c * rows + r] == src[(size_t)r * ld + c]);
    free(src); free(dst);
}
END_TEST

/* (T, hd, i0, i1, causal): whole and partial tiles of rows, keys that are
 * and are not whole vectors, blocks that start mid-sequence. */
static const int ATT_CASES[][5] = {
    {1, 8, 0, 1, 1}, {5, 4, 0, 5, 1}, {5, 4, 0, 5, 0}, {33, 16, 3, 30, 1},
    {70, 64, 16, 32, 1}, {70, 20, 0, 70, 0}, {130, 64, 100, 130, 1}, {40, 96, 7, 40, 0},
};

START_TEST(attention_scores_match_plain_loop)
{
    const int T = ATT_CASES[_i][0], hd = ATT_CASES[_i][1];
    const int i0 = ATT_CASES[_i][2], i1 = ATT_CASES[_i][3], causal = ATT_CASES[_i][4];
    const int ldq = hd + 3; /* q is a slice of a wider row, like head h of q */
    const float scale = 0.125f;
    float *q = random_floats((size_t)T * ldq, 300 + _i);
    const int ldkt = kernels_padded_stride(T);
    float *kt = random_floats((size_t)hd * ldkt, 400 + _i);
    float *s = malloc((size_t)T * T * sizeof *s);
    for (size_t n = 0; n < (size_t)T * T; n++)
        s[n] = 42.0f; /* rows outside i0..i1 must keep this */
    attention_scores(s, T, q, ldq, kt, ldkt, T, hd, i0, i1, causal, scale);
    for (int i = 0; i < T; i++) {
        const int n_keys = causal ? i + 1 : T;
        for (int j = 0; j < T; j++) {
            const float got = s[(size_t)i * T + j];
            if (i < i0 || i >= i1) {
                ck_assert_msg(got == 42.0f, "row %d outside %d..%d was written", i, i0, i1);
                continue;
            }
            if (j >= n_keys)
                continue; /* masked: the caller overwrites it */
            float dot = 0.0f;
            for (int e = 0; e < hd; e++)
                dot += q[(size_t)i * ldq + e] * kt[(size_t)e * ldkt + j];
            ck_assert_msg(got == dot * scale, "score (%d,%d): %.9g, plain loop %.9g", i, j,
                          (double)got, (double)(dot * scale));
        }
    }
    free(q); free(kt); free(s);
}
END_TEST

START_TEST(attention_mix_matches_plain_loop)
{
    const int T = ATT_CASES[_i][0], hd = ATT_CASES[_i][1];
    const int i0 = ATT_CASES[_i][2], i1 = ATT_CASES[_i][3], causal = ATT_CASES[_i][4];
    const int ldv = hd + 5, ldo = hd + 2;
    float *att = random_floats((size_t)T * T, 500 + _i);
    float *v = random_floats((size_t)T * ldv, 600 + _i);
    float *o = malloc((size_t)T * ldo * sizeof *o);
    for (size_t n = 0; n < (size_t)T * ldo; n++)
        o[n] = 42.0f;
    attention_mix(o, ldo, att, T, v, ldv, T, hd, i0, i1, causal);
    for (int i = 0; i < T; i++) {
        const int n_keys = causal ? i + 1 : T;
        for (int e = 0; e < ldo; e++) {
            const float got = o[(size_t)i * ldo + e];
            if (i < i0 || i >= i1 || e >= hd) {
                ck_assert_msg(got == 42.0f, "cell (%d,%d) outside the block was written", i, e);
                continue;
            }
            float want = 0.0f;
            for (int j = 0; j < n_keys; j++)
                want += att[(size_t)i * T + j] * v[(size_t)j * ldv + e];
            ck_assert_msg(got == want, "mix (%d,%d): %.9g, plain loop %.9g", i, e, (double)got, (double)want);
        }
    }
    free(att); free(v); free(o);
}
END_TEST

/* The plain softmax of kernels.h: maximum, exponentials, the sum in 16
 * interleaved lanes, then the scaling; masked cells exact zeros. */
static void plain_softmax_row(float *row, int n_visible, int T)
{
    float max = row[0];
    for (int j = 1; j < n_visible; j++)
        if (row[j] > max)
            max = row[j];
    float lane[16] = {0};
    for (int j = 0; j < n_visible; j++) {
        row[j] = kernels_expf(row[j] - max);
        lane[j % 16] += row[j];
    }
    float sum = lane[0];
    for (int l = 1; l < 16; l++)
        sum += lane[l];
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (int j = 0; j < n_visible; j++)
        row[j] *= inv;
    for (int j = n_visible; j < T; j++)
        row[j] = 0.0f;
}

/* Rows of every length class: shorter than one vector, whole vectors,
 * vectors plus a tail; scores spread over +-12 so that weights span many
 * orders of magnitude. */
START_TEST(softmax_row_matches_plain_loop)
{
    const int T = 70;
    for (int n_visible = 1; n_visible <= T; n_visible++) {
        float *fast = random_floats((size_t)T, 700 + n_visible);
        float *plain = malloc((size_t)T * sizeof *plain);
        for (int j = 0; j < T; j++)
            fast[j] *= 12.0f;
        memcpy(plain, fast, (size_t)T * sizeof *plain);
        softmax_row(fast, n_visible, T);
        plain_softmax_row(plain, n_visible, T);
        ck_assert_msg(memcmp(fast, plain, (size_t)T * sizeof *fast) == 0, "n_visible %d differs", n_visible);
        free(fast);
        free(plain);
    }
}
END_TEST

/* kernels_expf against the C library's exp in double precision over
 * [-87, 0] (the range softmax uses): relative error below 3e-7 (Cephes
 * documents about 1e-7; float32 itself has 6e-8), exactly 1 at 0; below -87
 * it stays tiny (under 1.7e-38) and never negative. */
/* kernels_first_nonfinite against its plain loop: no bad value, one
 * infinity or NaN (either sign, quiet or signalling) at the start, at block
 * edges and at the end, two bad values (the first one counts), and lengths
 * that are not whole blocks. The largest finite float is not bad. */
static long plain_first_nonfinite(const float *v, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (!isfinite(v[i]))
            return (long)i;
    return -1;
}

START_TEST(first_nonfinite_matches_plain_loop)
{
    const size_t lengths[] = {0, 1, 7, 1023, 1024, 1025, 5000};
    const uint32_t bad_bits[] = {0x7f800000u, 0xff800000u, 0x7fc00000u, 0x7f800001u, 0xffffffffu};
    for (size_t a = 0; a < sizeof lengths / sizeof lengths[0]; a++) {
        const size_t n = lengths[a];
        float *v = random_floats(n, (uint32_t)n + 5u);
        for (size_t i = 0; i < n; i += 97)
            v[i] = i % 2 ? FLT_MAX : -FLT_MAX;
        ck_assert_int_eq(kernels_first_nonfinite(v, n), -1);
        const size_t at[] = {0, 1, 1023, 1024, 2047, 4999};
        for (size_t b = 0; b < sizeof at / sizeof at[0]; b++) {
            if (at[b] >= n)
                continue;
            for (size_t c = 0; c < sizeof bad_bits / sizeof bad_bits[0]; c++) {
                const float keep = v[at[b]];
                memcpy(&v[at[b]], &bad_bits[c], sizeof(float));
                ck_assert_int_eq(kernels_first_nonfinite(v, n), plain_first_nonfinite(v, n));
                ck_assert_int_eq(kernels_first_nonfinite(v, n), (long)at[b]);
                if (at[b] + 3 < n) { /* a second one later changes nothing */
                    const float keep2 = v[at[b] + 3];
                    v[at[b] + 3] = INFINITY;
                    ck_assert_int_eq(kernels_first_nonfinite(v, n), (long)at[b]);
                    v[at[b] + 3] = keep2;
                }
                v[at[b]] = keep;
            }
        }
        free(v);
    }
}
END_TEST

START_TEST(expf_is_accurate)
{
    ck_assert(kernels_expf(0.0f) == 1.0f);
    ck_assert(kernels_expf(-0.0f) == 1.0f);
    double worst = 0.0;
    for (int i = 0; i <= 870000; i++) {
        const float x = -(float)i * 1e-4f;
        const double want = exp((double)x);
        const double rel = fabs((double)kernels_expf(x) - want) / want;
        if (rel > worst)
            worst = rel;
    }
    ck_assert_msg(worst < 3e-7, "worst relative error %.3g", worst);
    const float below[] = {-87.5f, -100.0f, -1e4f, -3.4e38f};
    for (size_t i = 0; i < sizeof below / sizeof below[0]; i++) {
        const float e = kernels_expf(below[i]);
        ck_assert(e >= 0.0f && e < 1.7e-38f);
    }
}
END_TEST

Suite *kernels_suite(void)
{
    Suite *s = suite_create("kernels");
    TCase *tc = tcase_create("same bits as the plain loops");
    tcase_add_loop_test(tc, matmul_xw_matches_plain_loop, 0, (int)(sizeof XW_SIZES / sizeof XW_SIZES[0]));
    tcase_add_test(tc, transpose_matches_plain_loop);
    tcase_add_loop_test(tc, attention_scores_match_plain_loop, 0, (int)(sizeof ATT_CASES / sizeof ATT_CASES[0]));
    tcase_add_loop_test(tc, attention_mix_matches_plain_loop, 0, (int)(sizeof ATT_CASES / sizeof ATT_CASES[0]));
    tcase_add_test(tc, softmax_row_matches_plain_loop);
    tcase_add_test(tc, expf_is_accurate);
    tcase_add_test(tc, first_nonfinite_matches_plain_loop);
    suite_add_tcase(s, tc);
    return s;
}
