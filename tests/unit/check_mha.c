/* check_mha.c — the forward pass against an independent float64 reference,
 * and the properties issue 2 names.
 *
 * Expected values come from tests/reference.py (numpy, float64, written from
 * the formulas and sharing no code with src/), which `make test` runs into
 * the folder named by MHAVIZ_REF before this suite; or from a derivation in
 * the comment beside the check. */
#include "core/blas_setup.h"
#include "io/input.h"
#include "core/mha.h"
#include "core/status.h"

#include <blis.h>
#include <check.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Tolerances, absolute.
 * ATT_TOL is issue 2's requirement for attention weights.
 * VAL_TOL is for scores and outputs: values of a few units, each a float32
 * sum of at most 192 products of order 1, so rounding stays near 1e-5 in the
 * worst case; 1e-4 leaves room without hiding a wrong formula (a wrong
 * index or scale moves these values by 1e-1 or more). */
#define ATT_TOL 1e-5
#define VAL_TOL 1e-4

/* The golden cases written by tests/reference.py (same names as its CASES). */
static const char *const CASES[] = {"mha", "gqa", "mqa", "noncausal", "t1", "one_head", "ragged", "wide", "threads"};
#define N_CASES ((int)(sizeof CASES / sizeof CASES[0]))

typedef struct {
    MhaConfig c;
    MhaWeights w;
    float *x;              /* (T, d_model) */
    double *scores;        /* (n_heads, T, T) masked = 0 */
    double *att;           /* (n_heads, T, T) */
    double *out;           /* (T, d_model) */
    double *single_scores; /* (T, T) */
    double *single_att;    /* (T, T) */
    double *single_out;    /* (T, d_model) */
} Case;

static const char *ref_dir(void)
{
    const char *dir = getenv("MHAVIZ_REF");
    ck_assert_msg(dir != NULL, "MHAVIZ_REF is not set: run tests/reference.py DIR and set MHAVIZ_REF=DIR");
    return dir;
}

/* Read n little-endian float64 values from <ref>/<name>/<file>.bin. */
static double *read_f64(const char *name, const char *file, size_t n)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s.bin", ref_dir(), name, file);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    double *a = malloc((n ? n : 1) * sizeof *a);
    ck_assert_ptr_nonnull(a);
    size_t got = fread(a, sizeof *a, n, f);
    int extra = fgetc(f);
    fclose(f);
    ck_assert_msg(got == n && extra == EOF, "%s: expected exactly %zu float64 values", path, n);
    return a;
}

/* The inputs were rounded to float32 by the reference, so this is exact. */
static float *read_f32(const char *name, const char *file, size_t n)
{
    double *a = read_f64(name, file, n);
    float *f = malloc((n ? n : 1) * sizeof *f);
    ck_assert_ptr_nonnull(f);
    for (size_t i = 0; i < n; i++)
        f[i] = (float)a[i];
    free(a);
    return f;
}

static Case load_case(const char *name)
{
    Case k;
    memset(&k, 0, sizeof k);
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/config.txt", ref_dir(), name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    MhaConfig *c = &k.c;
    ck_assert_int_eq(fscanf(f, "%d %d %d %d %d", &c->T, &c->d_model, &c->n_heads,
                            &c->n_kv_heads, &c->causal), 5);
    fclose(f);
    c->head_dim = c->d_model / c->n_heads;
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    const size_t maps = (size_t)c->n_heads * T * T;
    k.x = read_f32(name, "x", T * d);
    k.w.W_q = read_f32(name, "W_q", d * d);
    k.w.W_k = read_f32(name, "W_k", d * kv);
    k.w.W_v = read_f32(name, "W_v", d * kv);
    k.w.W_o = read_f32(name, "W_o", d * d);
    k.w.b_q = read_f32(name, "b_q", d);
    k.w.b_k = read_f32(name, "b_k", kv);
    k.w.b_v = read_f32(name, "b_v", kv);
    k.w.b_o = read_f32(name, "b_o", d);
    k.scores = read_f64(name, "scores", maps);
    k.att = read_f64(name, "att", maps);
    k.out = read_f64(name, "out", T * d);
    k.single_scores = read_f64(name, "single_scores", T * T);
    k.single_att = read_f64(name, "single_att", T * T);
    k.single_out = read_f64(name, "single_out", T * d);
    return k;
}

static void free_weights(MhaWeights *w)
{
    free(w->W_q); free(w->W_k); free(w->W_v); free(w->W_o);
    free(w->b_q); free(w->b_k); free(w->b_v); free(w->b_o);
    memset(w, 0, sizeof *w);
}

static void free_case(Case *k)
{
    free_weights(&k->w);
    free(k->x);
    free(k->scores); free(k->att); free(k->out);
    free(k->single_scores); free(k->single_att); free(k->single_out);
}

/* Run the multi-head forward pass of case k into a fresh state. */
static MhaState run(const MhaConfig *c, const MhaWeights *w, const float *x, int keep_scores)
{
    MhaState s;
    ck_assert_int_eq(mha_state_build(&s, c, keep_scores), MHAVIZ_OK);
    mha_forward(c, w, x, &s);
    return s;
}

/* The single wide head of (c, w) on x, as the CLI builds it by default. */
static MhaState run_single(const MhaConfig *c, const MhaWeights *w, const float *x, int keep_scores)
{
    MhaConfig wc;
    MhaWeights ww;
    ck_assert_int_eq(mha_single_head_weights(c, w, &wc, &ww), MHAVIZ_OK);
    MhaState s = run(&wc, &ww, x, keep_scores);
    free_weights(&ww);
    return s;
}

static void assert_close(const char *what, const char *name, const float *got,
                         const double *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs((double)got[i] - want[i]) <= tol,
                      "%s %s[%zu]: got %.9g, reference %.9g (tolerance %g)",
                      name, what, i, (double)got[i], want[i], tol);
}

/* Attention weights, scores and outputs of every head against the reference. */
START_TEST(multi_head_matches_reference)
{
    const char *name = CASES[_i];
    Case k = load_case(name);
    const size_t T = (size_t)k.c.T, maps = (size_t)k.c.n_heads * T * T;
    MhaState s = run(&k.c, &k.w, k.x, 1);
    assert_close("att", name, s.att, k.att, maps, ATT_TOL);
    assert_close("scores", name, s.scores, k.scores, maps, VAL_TOL);
    assert_close("out", name, s.out, k.out, T * (size_t)k.c.d_model, VAL_TOL);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* The default single wide head (issue 2: K/V columns laid out per query head,
 * scale 1/sqrt(d_model)) against the reference's own construction of it. */
START_TEST(single_head_matches_reference)
{
    const char *name = CASES[_i];
    Case k = load_case(name);
    const size_t T = (size_t)k.c.T;
    MhaState s = run_single(&k.c, &k.w, k.x, 1);
    assert_close("single att", name, s.att, k.single_att, T * T, ATT_TOL);
    assert_close("single scores", name, s.scores, k.single_scores, T * T, VAL_TOL);
    assert_close("single out", name, s.out, k.single_out, T * (size_t)k.c.d_model, VAL_TOL);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* Softmax rows are distributions: sum 1 (each of the <= 130 float32 weights
 * carries a rounding error <= 6e-8, so the sum is within 1e-5), and causal
 * cells (key j > query i) hold exactly 0 (the forward pass writes them). */
START_TEST(rows_sum_to_one_and_future_is_zero)
{
    const char *name = CASES[_i];
    Case k = load_case(name);
    const int T = k.c.T;
    MhaState s = run(&k.c, &k.w, k.x, 0);
    MhaState single = run_single(&k.c, &k.w, k.x, 0);
    for (int h = 0; h <= k.c.n_heads; h++) {
        const float *att_h = h < k.c.n_heads ? s.att + (size_t)h * T * T : single.att;
        for (int i = 0; i < T; i++) {
            double sum = 0.0;
            for (int j = 0; j < T; j++) {
                const float a = att_h[(size_t)i * T + j];
                if (k.c.causal && j > i)
                    ck_assert_msg(a == 0.0f, "%s head %d: causal cell (%d,%d) = %g, not 0", name, h, i, j, (double)a);
                ck_assert_msg(a >= 0.0f, "%s head %d: negative weight at (%d,%d)", name, h, i, j);
                sum += a;
            }
            ck_assert_msg(fabs(sum - 1.0) <= 1e-5, "%s head %d row %d sums to %.9g", name, h, i, sum);
        }
    }
    mha_state_free(&single);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* T = 1: the only token attends to itself with weight exp(0)/exp(0) = 1,
 * exactly, in every head. */
START_TEST(single_token_attends_to_itself)
{
    Case k = load_case("t1");
    ck_assert_int_eq(k.c.T, 1);
    MhaState s = run(&k.c, &k.w, k.x, 0);
    for (int h = 0; h < k.c.n_heads; h++)
        ck_assert_float_eq(s.att[h], 1.0f);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* With n_heads = 1 the single wide head IS the layer: same weights, same
 * width, same scale 1/sqrt(d_model), so the outputs are bitwise identical. */
START_TEST(one_head_equals_single_head)
{
    Case k = load_case("one_head");
    ck_assert_int_eq(k.c.n_heads, 1);
    const size_t T = (size_t)k.c.T, d = (size_t)k.c.d_model;
    MhaState s = run(&k.c, &k.w, k.x, 0);
    MhaState single = run_single(&k.c, &k.w, k.x, 0);
    ck_assert_mem_eq(s.att, single.att, T * T * sizeof(float));
    ck_assert_mem_eq(s.out, single.out, T * d * sizeof(float));
    mha_state_free(&single);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* For MHA, head h's logit is q_h.k_h / sqrt(hd) and the wide head's is
 * q.k / sqrt(d_model) = sum_h q_h.k_h / sqrt(n_heads * hd)
 *                     = (1/sqrt(n_heads)) * sum_h (q_h.k_h / sqrt(hd)).
 * Same float32 inputs, different summation order: equal within 1e-5 for
 * logits of a few units. Masked cells are 0 on both sides. */
START_TEST(single_head_logits_are_scaled_sum_of_head_logits)
{
    const char *const mha_cases[] = {"mha", "ragged", "noncausal"};
    const char *name = mha_cases[_i];
    Case k = load_case(name);
    ck_assert_int_eq(k.c.n_heads, k.c.n_kv_heads);
    const int T = k.c.T, H = k.c.n_heads;
    MhaState s = run(&k.c, &k.w, k.x, 1);
    MhaState single = run_single(&k.c, &k.w, k.x, 1);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++) {
            double sum = 0.0;
            for (int h = 0; h < H; h++)
                sum += s.scores[((size_t)h * T + i) * T + j];
            const double want = sum / sqrt((double)H);
            const double got = single.scores[(size_t)i * T + j];
            ck_assert_msg(fabs(got - want) <= 1e-5, "%s logit (%d,%d): single %.9g, scaled head sum %.9g",
                          name, i, j, got, want);
        }
    mha_state_free(&single);
    mha_state_free(&s);
    free_case(&k);
}
END_TEST

/* Copy K/V head 0's columns (width hd) of src (rows, hd) into every one of
 * the n_heads blocks of dst (rows, n_heads*hd). */
static float *repeat_columns(const float *src, int rows, int hd, int n_heads)
{
    float *dst = malloc((size_t)rows * n_heads * hd * sizeof *dst);
    ck_assert_ptr_nonnull(dst);
    for (int r = 0; r < rows; r++)
        for (int h = 0; h < n_heads; h++)
            memcpy(dst + ((size_t)r * n_heads + h) * hd, src + (size_t)r * hd, (size_t)hd * sizeof *dst);
    return dst;
}

/* MQA = MHA whose K/V heads are all copies of the one K/V head: every query
 * head then reads identical keys and values. Each projected column is its
 * own sum over the inputs in a fixed order, so the copies are bitwise equal
 * and so are the attention weights and outputs. */
START_TEST(mqa_equals_mha_with_copied_kv_heads)
{
    Case k = load_case("mqa");
    ck_assert_int_eq(k.c.n_kv_heads, 1);
    const int T = k.c.T, d = k.c.d_model, hd = k.c.head_dim, H = k.c.n_heads;
    MhaConfig mc = k.c;
    mc.n_kv_heads = H;
    MhaWeights mw = k.w;
    mw.W_k = repeat_columns(k.w.W_k, d, hd, H);
    mw.W_v = repeat_columns(k.w.W_v, d, hd, H);
    mw.b_k = repeat_columns(k.w.b_k, 1, hd, H);
    mw.b_v = repeat_columns(k.w.b_v, 1, hd, H);
    MhaState mqa = run(&k.c, &k.w, k.x, 0);
    MhaState mha = run(&mc, &mw, k.x, 0);
    ck_assert_mem_eq(mqa.att, mha.att, (size_t)H * T * T * sizeof(float));
    ck_assert_mem_eq(mqa.out, mha.out, (size_t)T * d * sizeof(float));
    free(mw.W_k); free(mw.W_v); free(mw.b_k); free(mw.b_v);
    mha_state_free(&mha);
    mha_state_free(&mqa);
    free_case(&k);
}
END_TEST

/* Bitwise the same results with 1, 2 and 3 threads: every sum runs in a
 * fixed order, whichever thread computes it. (Small loops run on one thread
 * anyway; the "threads" case is big enough to be split.) This test runs in its own
 * forked child (Check's default), so setting the thread count here does not
 * touch the runner. Without OpenMP it still checks repeatability. */
START_TEST(same_bits_for_any_thread_count)
{
    const char *name = CASES[_i];
    Case k = load_case(name);
    const size_t T = (size_t)k.c.T, d = (size_t)k.c.d_model, kv = (size_t)mha_kv_dim(&k.c);
    const size_t maps = (size_t)k.c.n_heads * T * T;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    MhaState one = run(&k.c, &k.w, k.x, 1);
    MhaState one_single = run_single(&k.c, &k.w, k.x, 0);
    for (int threads = 2; threads <= 3; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        MhaState s = run(&k.c, &k.w, k.x, 1);
        MhaState single = run_single(&k.c, &k.w, k.x, 0);
        ck_assert_mem_eq(s.q, one.q, T * d * sizeof(float));
        ck_assert_mem_eq(s.k, one.k, T * kv * sizeof(float));
        ck_assert_mem_eq(s.v, one.v, T * kv * sizeof(float));
        ck_assert_mem_eq(s.scores, one.scores, maps * sizeof(float));
        ck_assert_mem_eq(s.att, one.att, maps * sizeof(float));
        ck_assert_mem_eq(s.concat, one.concat, T * d * sizeof(float));
        ck_assert_mem_eq(s.out, one.out, T * d * sizeof(float));
        ck_assert_mem_eq(single.att, one_single.att, T * T * sizeof(float));
        ck_assert_mem_eq(single.out, one_single.out, T * d * sizeof(float));
        mha_state_free(&single);
        mha_state_free(&s);
    }
    mha_state_free(&one_single);
    mha_state_free(&one);
    free_case(&k);
}
END_TEST

/* mha_single_head_weights (issue 2): W_q, W_o and their biases are copied;
 * the wide key/value weights hold, in query head h's columns
 * [h*hd, (h+1)*hd), the columns of K/V head g = h / (n_heads / n_kv_heads). */
START_TEST(single_head_weights_lay_kv_out_per_query_head)
{
    Case k = load_case("gqa");
    const MhaConfig *c = &k.c;
    const int d = c->d_model, hd = c->head_dim, kv = mha_kv_dim(c);
    const int kv_mul = c->n_heads / c->n_kv_heads;
    ck_assert_int_gt(kv_mul, 1);
    MhaConfig wc;
    MhaWeights ww;
    ck_assert_int_eq(mha_single_head_weights(c, &k.w, &wc, &ww), MHAVIZ_OK);
    ck_assert_int_eq(wc.n_heads, 1);
    ck_assert_int_eq(wc.n_kv_heads, 1);
    ck_assert_int_eq(wc.head_dim, d);
    ck_assert_int_eq(wc.d_model, d);
    ck_assert_int_eq(wc.T, c->T);
    ck_assert_int_eq(wc.causal, c->causal);
    ck_assert_mem_eq(ww.W_q, k.w.W_q, (size_t)d * d * sizeof(float));
    ck_assert_mem_eq(ww.W_o, k.w.W_o, (size_t)d * d * sizeof(float));
    ck_assert_mem_eq(ww.b_q, k.w.b_q, (size_t)d * sizeof(float));
    ck_assert_mem_eq(ww.b_o, k.w.b_o, (size_t)d * sizeof(float));
    for (int h = 0; h < c->n_heads; h++) {
        const int g = h / kv_mul;
        for (int e = 0; e < hd; e++) {
            for (int r = 0; r < d; r++) {
                ck_assert(ww.W_k[(size_t)r * d + h * hd + e] == k.w.W_k[(size_t)r * kv + g * hd + e]);
                ck_assert(ww.W_v[(size_t)r * d + h * hd + e] == k.w.W_v[(size_t)r * kv + g * hd + e]);
            }
            ck_assert(ww.b_k[h * hd + e] == k.w.b_k[g * hd + e]);
            ck_assert(ww.b_v[h * hd + e] == k.w.b_v[g * hd + e]);
        }
    }
    free_weights(&ww);
    free_case(&k);
}
END_TEST

/* Within tol of want, relative to want's size when it is above 1. */
static void assert_near(const char *what, const float *got, const float *want, size_t n, double tol)
{
    for (size_t i = 0; i < n; i++)
        ck_assert_msg(fabs((double)got[i] - want[i]) <= tol * fmax(1.0, fabs((double)want[i])),
                      "%s[%zu]: %.9g, want %.9g", what, i, (double)got[i], (double)want[i]);
}

/* mha_forward_wide reads the wide head's queries in the heads' q, and its
 * keys and values in their k and v spread per query head, instead of
 * computing them from the spread weights: those must be the bits
 * mha_forward computes from x with mha_single_head_weights (each projected
 * column is its own sum). Its
 * scores are the heads' scores added up and divided by sqrt(n_heads)
 * (core/wide.c says why): the direct definition, q_i . k_j / sqrt(d_model) summed
 * over all d_model columns in one go, rounds differently, so scores, weights,
 * outputs must agree within float rounding, 1e-5 (relative above 1: a
 * float has 24 bits, about 6e-8, and the two ways add a few dozen terms).
 * With 1 and 2 threads: the same bits. MHA, GQA and MQA alike; and again
 * (the second N_CASES runs) with rotary positions on every case whose heads
 * have an even width: the wide head rotates its q and k per head block, so
 * it is made of the rotated heads and the identity holds as it did. */
START_TEST(wide_head_from_the_heads_agrees_with_the_direct_definition)
{
    Case k = load_case(CASES[_i % N_CASES]);
    if (_i >= N_CASES) {
        if (k.c.head_dim % 2 != 0) {
            free_case(&k);
            return;
        }
        k.c.rope = (MhaRope){.dim = k.c.head_dim, .theta = 10000.0};
    }
    const MhaConfig *c = &k.c;
    const size_t T = (size_t)c->T, d = (size_t)c->d_model;
    MhaConfig wc;
    MhaWeights ww;
    ck_assert_int_eq(mha_single_head_weights(c, &k.w, &wc, &ww), MHAVIZ_OK);
    MhaState want = run(&wc, &ww, k.x, 1), one = {0};
    for (int threads = 1; threads <= 2; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        MhaState heads = run(c, &k.w, k.x, 1);
        MhaState got;
        ck_assert_int_eq(mha_state_build_wide(&got, &wc, 1), MHAVIZ_OK);
        ck_assert_ptr_null(got.q); /* none of its own: it reads the heads' */
        mha_forward_wide(c, &k.w, &heads, &got);
        ck_assert_mem_eq(heads.q, want.q, T * d * sizeof(float));
        const int hd = c->head_dim, kv_dim = mha_kv_dim(c), kv_mul = c->n_heads / c->n_kv_heads;
        for (size_t t = 0; t < T; t++) /* query head h's block of the wide k and v: K/V head h / kv_mul's */
            for (int h = 0; h < c->n_heads; h++) {
                const size_t at = t * d + (size_t)h * hd, from = t * (size_t)kv_dim + (size_t)(h / kv_mul) * hd;
                ck_assert_mem_eq(want.k + at, heads.k + from, (size_t)hd * sizeof(float));
                ck_assert_mem_eq(want.v + at, heads.v + from, (size_t)hd * sizeof(float));
            }
        assert_near("scores", got.scores, want.scores, T * T, 1e-5);
        assert_near("att", got.att, want.att, T * T, 1e-5);
        assert_near("concat", got.concat, want.concat, T * d, 1e-5);
        assert_near("out", got.out, want.out, T * d, 1e-5);
        if (threads == 1) {
            one = got;
        } else {
            ck_assert_mem_eq(got.scores, one.scores, T * T * sizeof(float));
            ck_assert_mem_eq(got.att, one.att, T * T * sizeof(float));
            ck_assert_mem_eq(got.out, one.out, T * d * sizeof(float));
            mha_state_free(&got);
        }
        mha_state_free(&heads);
    }
    mha_state_free(&one);
    mha_state_free(&want);
    free_weights(&ww);
    free_case(&k);
}
END_TEST

/* Step 2, rotary positions: one head of width 2, W_q = W_k = I, every
 * token x_t = (1, 0), no bias, not causal, theta 10000 (the pair's
 * frequency is theta^0 = 1 radian a position). Rotated, q_t = k_t =
 * (cos t, sin t), so the score of query i and key j is
 * cos i cos j + sin i sin j = cos(i - j), divided by sqrt(2): it depends on
 * how far apart they are only. */
START_TEST(rotated_scores_depend_on_the_distance)
{
    enum { T = 5 };
    const MhaConfig c = {T, 2, 1, 1, 2, 0, {.dim = 2, .theta = 10000.0}};
    float I[4] = {1, 0, 0, 1}, zero[2] = {0, 0}, x[2 * T];
    for (int t = 0; t < T; t++)
        x[2 * t] = 1.0f, x[2 * t + 1] = 0.0f;
    const MhaWeights w = {I, I, I, I, zero, zero, zero, zero, 0};
    MhaState s = run(&c, &w, x, 1);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            ck_assert_double_eq_tol(s.scores[i * T + j], cos(i - j) / sqrt(2.0), 1e-6);
    mha_state_free(&s);
}
END_TEST

/* Softmax subtracts the row's largest score before exp: scores far beyond
 * float32's exp range (exp(89) is already infinite) still give a
 * distribution. Two tokens x_0 = (10, 0), x_1 = (0, 10), W_q = W_k = 3 I,
 * W_v = W_o = I, no bias, one head of width 2, not causal: q_i = k_i =
 * 3 x_i, so the score of a token with itself is 900 / sqrt(2) = 636.4 and
 * with the other 0. Each row's weights are exp(0) / (1 + exp(-636.4)) = 1
 * on itself and exp(-636.4) = 0 (below the smallest float) on the other,
 * so out_i = v_i = x_i exactly. */
START_TEST(softmax_of_huge_scores_is_exact)
{
    const MhaConfig c = {.T = 2, .d_model = 2, .n_heads = 1, .n_kv_heads = 1, .head_dim = 2, .causal = 0};
    float x[4] = {10, 0, 0, 10}, three[4] = {3, 0, 0, 3}, id[4] = {1, 0, 0, 1}, zero[2] = {0, 0};
    const MhaWeights w = {.W_q = three, .W_k = three, .W_v = id, .W_o = id,
                          .b_q = zero, .b_k = zero, .b_v = zero, .b_o = zero};
    MhaState s = run(&c, &w, x, 1);
    ck_assert_float_eq_tol(s.scores[0], 900.0f / sqrtf(2.0f), 1e-3f);
    ck_assert_float_eq(s.scores[1], 0.0f);
    const float want_att[4] = {1, 0, 0, 1};
    ck_assert_mem_eq(s.att, want_att, sizeof want_att);
    ck_assert_mem_eq(s.out, x, sizeof x);
    mha_state_free(&s);
}
END_TEST

/* A growing text buffer for writing JSON. */
typedef struct {
    char *s;
    size_t len, cap;
} Text;

static void text_add(Text *t, const char *fmt, ...)
{
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        int n = vsnprintf(t->s + t->len, t->cap - t->len, fmt, ap);
        va_end(ap);
        ck_assert_int_ge(n, 0);
        if ((size_t)n < t->cap - t->len) {
            t->len += (size_t)n;
            return;
        }
        t->cap = 2 * t->cap + (size_t)n;
        t->s = realloc(t->s, t->cap);
        ck_assert_ptr_nonnull(t->s);
    }
}

/* "[[...], ...]" for the (rows, cols) matrix a, or for its transpose;
 * %.9g gives back the same float32 when parsed. rows = 0: a vector "[...]". */
static void json_matrix(Text *t, const float *a, int rows, int cols, int transposed)
{
    const int vector = rows == 0;
    const int R = vector ? 1 : transposed ? cols : rows, C = vector ? cols : transposed ? rows : cols;
    text_add(t, vector ? "" : "[");
    for (int r = 0; r < R; r++) {
        text_add(t, r ? ",[" : "[");
        for (int c = 0; c < C; c++)
            text_add(t, "%s%.9g", c ? "," : "", (double)(transposed ? a[(size_t)c * cols + r] : a[(size_t)r * cols + c]));
        text_add(t, "]");
    }
    text_add(t, vector ? "" : "]");
}

/* The case as an input file's JSON text, with the weight matrices in the
 * given layout ("x@W", or "W@x" where each matrix is written transposed). */
static char *case_json(const Case *k, const char *layout)
{
    const MhaConfig *c = &k->c;
    const int d = c->d_model, kv = mha_kv_dim(c), T = c->T;
    const int transposed = strcmp(layout, "W@x") == 0;
    Text t = {malloc(4096), 0, 4096};
    ck_assert_ptr_nonnull(t.s);
    text_add(&t, "{\"tokens\": [");
    for (int i = 0; i < T; i++)
        text_add(&t, "%s\"t%d\"", i ? "," : "", i);
    text_add(&t, "], \"d_model\": %d, \"n_heads\": %d, \"n_kv_heads\": %d, \"causal\": %s, "
                 "\"weight_layout\": \"%s\", \"x\": ", d, c->n_heads, c->n_kv_heads,
             c->causal ? "true" : "false", layout);
    json_matrix(&t, k->x, T, d, 0);
    const struct { const char *name; const float *a; int rows, cols; } m[] = {
        {"W_q", k->w.W_q, d, d}, {"W_k", k->w.W_k, d, kv}, {"W_v", k->w.W_v, d, kv}, {"W_o", k->w.W_o, d, d},
        {"b_q", k->w.b_q, 0, d}, {"b_k", k->w.b_k, 0, kv}, {"b_v", k->w.b_v, 0, kv}, {"b_o", k->w.b_o, 0, d},
    };
    for (size_t i = 0; i < sizeof m / sizeof m[0]; i++) {
        text_add(&t, ", \"%s\": ", m[i].name);
        json_matrix(&t, m[i].a, m[i].rows, m[i].cols, transposed && m[i].rows);
    }
    text_add(&t, "}");
    return t.s;
}

/* "weight_layout": "W@x" with every matrix written transposed (PyTorch's
 * nn.Linear storage) loads to the same "x@W" weights, so the forward pass
 * gives the same bits; and both match the float64 reference. */
START_TEST(w_at_x_layout_gives_the_same_result)
{
    const char *const names[] = {"gqa", "noncausal"};
    Case k = load_case(names[_i]);
    const size_t T = (size_t)k.c.T, d = (size_t)k.c.d_model, maps = (size_t)k.c.n_heads * T * T;
    char err[MHAVIZ_ERRLEN];
    MhaInput in[2];
    memset(in, 0, sizeof in);
    const char *const layouts[] = {"x@W", "W@x"};
    MhaState s[2];
    for (int l = 0; l < 2; l++) {
        char *text = case_json(&k, layouts[l]);
        ck_assert_msg(input_parse(text, strlen(text), layouts[l], NULL, &in[l], err, sizeof err) == MHAVIZ_OK,
                      "%s: %s", layouts[l], err);
        free(text);
        ck_assert_int_eq(in[l].cfg.n_kv_heads, k.c.n_kv_heads);
        ck_assert_mem_eq(in[l].w.W_k, k.w.W_k, d * (size_t)mha_kv_dim(&k.c) * sizeof(float));
        s[l] = run(&in[l].cfg, &in[l].w, in[l].x, 0);
        assert_close("att", layouts[l], s[l].att, k.att, maps, ATT_TOL);
    }
    ck_assert_mem_eq(s[0].att, s[1].att, maps * sizeof(float));
    ck_assert_mem_eq(s[0].out, s[1].out, T * d * sizeof(float));
    for (int l = 0; l < 2; l++) {
        mha_state_free(&s[l]);
        input_free(&in[l]);
    }
    free_case(&k);
}
END_TEST

/* blas_setup (called by tests/main.c before any test, as mhaviz calls it)
 * has BLIS run its AVX-512 kernels on an AMD processor with AVX-512,
 * unless the user chose others. Each test runs in a process of its own
 * (Check forks), so BLIS makes its choice at this test's first call. */
START_TEST(blis_runs_its_avx512_kernels_where_the_processor_has_them)
{
    const char *chosen = getenv("BLIS_ARCH_TYPE"); /* the user's, or blas_setup's */
    if (blas_wants_avx512_kernels() && (!chosen || atoi(chosen) == BLIS_ARCH_SKX)) {
        ck_assert_ptr_nonnull(chosen);
        bli_init(); /* what BLIS's first product does; then it can say its choice */
        ck_assert_int_eq(bli_arch_query_id(), BLIS_ARCH_SKX);
    }
    /* a choice already made in the environment is kept */
    setenv("BLIS_ARCH_TYPE", "3", 1);
    blas_setup();
    ck_assert_str_eq(getenv("BLIS_ARCH_TYPE"), "3");
}
END_TEST

Suite *mha_suite(void)
{
    Suite *s = suite_create("mha");
    TCase *ref = tcase_create("reference");
    tcase_add_loop_test(ref, multi_head_matches_reference, 0, N_CASES);
    tcase_add_loop_test(ref, single_head_matches_reference, 0, N_CASES);
    suite_add_tcase(s, ref);

    TCase *prop = tcase_create("properties");
    tcase_add_loop_test(prop, rows_sum_to_one_and_future_is_zero, 0, N_CASES);
    tcase_add_test(prop, single_token_attends_to_itself);
    tcase_add_test(prop, softmax_of_huge_scores_is_exact);
    tcase_add_test(prop, one_head_equals_single_head);
    tcase_add_loop_test(prop, single_head_logits_are_scaled_sum_of_head_logits, 0, 3);
    tcase_add_test(prop, mqa_equals_mha_with_copied_kv_heads);
    tcase_add_loop_test(prop, same_bits_for_any_thread_count, 0, N_CASES);
    tcase_add_test(prop, single_head_weights_lay_kv_out_per_query_head);
    tcase_add_loop_test(prop, wide_head_from_the_heads_agrees_with_the_direct_definition, 0, 2 * N_CASES);
    tcase_add_test(prop, rotated_scores_depend_on_the_distance);
    tcase_add_loop_test(prop, w_at_x_layout_gives_the_same_result, 0, 2);
    tcase_add_test(prop, blis_runs_its_avx512_kernels_where_the_processor_has_them);
    suite_add_tcase(s, prop);
    return s;
}
