/* check_pool.c — mean-pooling K/V heads: MHA -> GQA -> MQA. */
#include "models/init.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/status.h"

#include <check.h>
#include <stdlib.h>
#include <string.h>

/* A random layer (seeded): T tokens, d_model, n_heads, n_kv_heads, with
 * random biases too, so that pooling them is checked as well. */
static void random_layer(InitModel *m, int d_model, int n_heads, int n_kv, uint64_t seed)
{
    InitOptions o = {"a b c a d", d_model, n_heads, n_kv, seed, 0};
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(init_model(&o, m, err, sizeof err), MHAVIZ_OK);
    InitRng r;
    init_rng_seed(&r, seed + 1000);
    const int kv_dim = mha_kv_dim(&m->in.cfg);
    for (int j = 0; j < kv_dim; j++) {
        m->in.w.b_k[j] = (float)init_rng_normal(&r);
        m->in.w.b_v[j] = (float)init_rng_normal(&r);
    }
    m->in.w.has_bias = 1;
}

static float *copy(const float *a, size_t n)
{
    float *b = malloc(n * sizeof *b);
    ck_assert_ptr_nonnull(b);
    memcpy(b, a, n * sizeof *b);
    return b;
}

/* N = n_kv_heads changes nothing, bit for bit. */
START_TEST(same_count_is_identity)
{
    InitModel m;
    random_layer(&m, 8, 4, 2, 11);
    const size_t n = 8 * 4;
    float *W_k = copy(m.in.w.W_k, n), *W_v = copy(m.in.w.W_v, n), *b_k = copy(m.in.w.b_k, 4);
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(pool_kv_heads(&m.in.cfg, &m.in.w, 2, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(m.in.cfg.n_kv_heads, 2);
    ck_assert_mem_eq(m.in.w.W_k, W_k, n * sizeof(float));
    ck_assert_mem_eq(m.in.w.W_v, W_v, n * sizeof(float));
    ck_assert_mem_eq(m.in.w.b_k, b_k, 4 * sizeof(float));
    free(W_k);
    free(W_v);
    free(b_k);
    init_model_free(&m);
}
END_TEST

/* 8 heads of 2 (d_model 16), 8 K/V heads pooled into 2: K/V head g' is the
 * mean of input heads 4g' .. 4g'+3, column by column. Expected values: the
 * plain mean of the four input columns, computed here in double. */
START_TEST(pooled_columns_are_group_means)
{
    InitModel m;
    random_layer(&m, 16, 8, 8, 12);
    const int d = 16, hd = 2;
    float *W_k = copy(m.in.w.W_k, 16 * 16), *W_v = copy(m.in.w.W_v, 16 * 16);
    float *b_k = copy(m.in.w.b_k, 16), *b_v = copy(m.in.w.b_v, 16);
    float *W_q = copy(m.in.w.W_q, 16 * 16);
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(pool_kv_heads(&m.in.cfg, &m.in.w, 2, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(m.in.cfg.n_kv_heads, 2);
    ck_assert_int_eq(mha_kv_dim(&m.in.cfg), 4);
    for (int p = 0; p < d; p++)
        for (int g = 0; g < 2; g++)
            for (int e = 0; e < hd; e++) {
                double k = 0, v = 0, bk = 0, bv = 0;
                for (int m4 = 0; m4 < 4; m4++) {
                    int col = (4 * g + m4) * hd + e;
                    k += W_k[p * 16 + col];
                    v += W_v[p * 16 + col];
                    bk += b_k[col];
                    bv += b_v[col];
                }
                ck_assert_double_eq_tol(m.in.w.W_k[p * 4 + g * hd + e], k / 4, 1e-6);
                ck_assert_double_eq_tol(m.in.w.W_v[p * 4 + g * hd + e], v / 4, 1e-6);
                if (p == 0) {
                    ck_assert_double_eq_tol(m.in.w.b_k[g * hd + e], bk / 4, 1e-6);
                    ck_assert_double_eq_tol(m.in.w.b_v[g * hd + e], bv / 4, 1e-6);
                }
            }
    ck_assert_mem_eq(m.in.w.W_q, W_q, 16 * 16 * sizeof(float)); /* queries untouched */
    free(W_k);
    free(W_v);
    free(b_k);
    free(b_v);
    free(W_q);
    init_model_free(&m);
}
END_TEST

/* N = 1 gives MQA. Built by hand: an MQA layer with one K/V head (W_k0,
 * W_v0), and an MHA layer whose four K/V heads are W_k0 + c_g E with
 * c = (+1, -1, +0.5, -0.5), so that their mean is W_k0 (up to float
 * rounding of the sums). Pooling the MHA layer must then run like the MQA
 * layer: same maps and outputs within 1e-5. */
START_TEST(pool_to_one_is_mqa)
{
    InitModel mqa, mha;
    random_layer(&mqa, 8, 4, 1, 13); /* (8, 2) K/V */
    random_layer(&mha, 8, 4, 4, 14); /* (8, 8) K/V; W_q, W_o, x replaced below */
    const int d = 8, hd = 2, T = mqa.in.cfg.T;
    const float c[4] = {1.0f, -1.0f, 0.5f, -0.5f};
    InitRng r;
    init_rng_seed(&r, 99);
    memcpy(mha.in.x, mqa.in.x, (size_t)T * d * sizeof(float));
    memcpy(mha.in.w.W_q, mqa.in.w.W_q, (size_t)d * d * sizeof(float));
    memcpy(mha.in.w.W_o, mqa.in.w.W_o, (size_t)d * d * sizeof(float));
    for (int p = 0; p <= d; p++) /* rows 0..d-1 of W_k/W_v, then row d = the biases */
        for (int e = 0; e < hd; e++) {
            float Ek = (float)init_rng_normal(&r), Ev = (float)init_rng_normal(&r);
            for (int g = 0; g < 4; g++) {
                if (p < d) {
                    mha.in.w.W_k[p * 8 + g * hd + e] = mqa.in.w.W_k[p * hd + e] + c[g] * Ek;
                    mha.in.w.W_v[p * 8 + g * hd + e] = mqa.in.w.W_v[p * hd + e] + c[g] * Ev;
                } else {
                    mha.in.w.b_k[g * hd + e] = mqa.in.w.b_k[e] + c[g] * Ek;
                    mha.in.w.b_v[g * hd + e] = mqa.in.w.b_v[e] + c[g] * Ev;
                }
            }
        }
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(pool_kv_heads(&mha.in.cfg, &mha.in.w, 1, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(mha.in.cfg.n_kv_heads, 1);

    MhaState a, b;
    ck_assert_int_eq(mha_state_build(&a, &mqa.in.cfg, 0), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build(&b, &mha.in.cfg, 0), MHAVIZ_OK);
    mha_forward(&mqa.in.cfg, &mqa.in.w, mqa.in.x, &a);
    mha_forward(&mha.in.cfg, &mha.in.w, mha.in.x, &b);
    for (int i = 0; i < 4 * T * T; i++)
        ck_assert_double_eq_tol(b.att[i], a.att[i], 1e-5);
    for (int i = 0; i < T * d; i++)
        ck_assert_double_eq_tol(b.out[i], a.out[i], 1e-5);
    mha_state_free(&a);
    mha_state_free(&b);
    init_model_free(&mqa);
    init_model_free(&mha);
}
END_TEST

/* A count that does not divide n_kv_heads is refused, the message names
 * the input's n_kv_heads, and the weights stay as they were. */
START_TEST(count_must_divide)
{
    InitModel m;
    random_layer(&m, 8, 4, 4, 15);
    float *W_k = copy(m.in.w.W_k, 8 * 8);
    char err[MHAVIZ_ERRLEN];
    const int bad[] = {3, 0, 8, -1};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        err[0] = '\0';
        ck_assert_int_eq(pool_kv_heads(&m.in.cfg, &m.in.w, bad[i], err, sizeof err), MHAVIZ_EINPUT);
        ck_assert_msg(strstr(err, "n_kv_heads = 4") != NULL, "message: %s", err);
        ck_assert_msg(strstr(err, "1, 2, 4") != NULL, "message: %s", err);
        ck_assert_int_eq(m.in.cfg.n_kv_heads, 4);
        ck_assert_mem_eq(m.in.w.W_k, W_k, 8 * 8 * sizeof(float));
    }
    free(W_k);
    init_model_free(&m);
}
END_TEST

/* pool_layer leaves the input as it was and gives pool_kv_heads's bits:
 * for each count the K/V arrays equal those of pooling a copy in place;
 * W_q and W_o are the input's own arrays; the input's own count borrows
 * every array. A bad count: the message of pool_kv_heads, nothing built. */
START_TEST(pooled_layer_leaves_input)
{
    InitModel m, inplace;
    random_layer(&m, 16, 8, 8, 16);
    const size_t n = 16 * 16;
    float *W_k = copy(m.in.w.W_k, n), *b_v = copy(m.in.w.b_v, 16);
    char err[MHAVIZ_ERRLEN];
    for (int kv = 8; kv >= 1; kv /= 2) {
        PooledLayer p;
        ck_assert_int_eq(pool_layer(&p, &m.in.cfg, &m.in.w, kv, POOL_MEAN, err, sizeof err), MHAVIZ_OK);
        ck_assert_int_eq(p.cfg.n_kv_heads, kv);
        ck_assert_int_eq(m.in.cfg.n_kv_heads, 8);
        ck_assert_mem_eq(m.in.w.W_k, W_k, n * sizeof(float));
        ck_assert_mem_eq(m.in.w.b_v, b_v, 16 * sizeof(float));
        ck_assert_ptr_eq(p.w.W_q, m.in.w.W_q);
        ck_assert_ptr_eq(p.w.W_o, m.in.w.W_o);
        if (kv == 8)
            ck_assert_ptr_eq(p.w.W_k, m.in.w.W_k);
        random_layer(&inplace, 16, 8, 8, 16); /* the same layer, pooled in place */
        ck_assert_int_eq(pool_kv_heads(&inplace.in.cfg, &inplace.in.w, kv, err, sizeof err), MHAVIZ_OK);
        const size_t kv_dim = (size_t)kv * 2;
        ck_assert_mem_eq(p.w.W_k, inplace.in.w.W_k, 16 * kv_dim * sizeof(float));
        ck_assert_mem_eq(p.w.W_v, inplace.in.w.W_v, 16 * kv_dim * sizeof(float));
        ck_assert_mem_eq(p.w.b_k, inplace.in.w.b_k, kv_dim * sizeof(float));
        ck_assert_mem_eq(p.w.b_v, inplace.in.w.b_v, kv_dim * sizeof(float));
        init_model_free(&inplace);
        pool_layer_free(&p);
    }
    PooledLayer bad;
    ck_assert_int_eq(pool_layer(&bad, &m.in.cfg, &m.in.w, 3, POOL_MEAN, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "n_kv_heads = 8") && strstr(err, "got 3"), "message: %s", err);
    ck_assert_ptr_null(bad.own[0]);
    ck_assert_int_eq(pool_layer(&bad, &m.in.cfg, &m.in.w, 16, POOL_MEAN, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "16 is more K/V heads than the input has (n_kv_heads = 8; one of 1, 2, 4, 8)"),
                  "message: %s", err);
    pool_layer_free(&bad);
    free(W_k);
    free(b_v);
    init_model_free(&m);
}
END_TEST

/* The report's note says what was done and what the layer now is: pooled,
 * not trained; how; and, when the alignment is not unique, that the result
 * is one of many. */
START_TEST(note_names_the_conversion)
{
    char buf[1024];
    const PoolAlignment unique = {1, 1, 0.5, 1, 0}, loose = {1, 0, 0.0, 3, 1};
    pool_note(buf, sizeof buf, 8, 8, 2, "", POOL_ALIGNED, &unique);
    ck_assert_msg(strstr(buf, "pooled from MHA, before uptraining") && strstr(buf, "--kv-heads 2") &&
                  strstr(buf, "8 K/V heads") && strstr(buf, "GQA") && strstr(buf, "Procrustes") &&
                  !strstr(buf, "not unique"), "note: %s", buf);
    pool_note(buf, sizeof buf, 8, 8, 1, NULL, POOL_MEAN, &unique);
    ck_assert_msg(strstr(buf, "MQA") && strstr(buf, "--pool mean") && strstr(buf, "mean nothing"), "note: %s", buf);
    pool_note(buf, sizeof buf, 4, 4, 2, "0,2/1,3", POOL_ALIGNED, &loose);
    ck_assert_msg(strstr(buf, "--kv-groups 0,2/1,3") && strstr(buf, "GQA") &&
                  strstr(buf, "not unique: K/V head 3's values") && strstr(buf, "one of many"), "note: %s", buf);
}
END_TEST

/* A singular-value ratio within float error of 0 (below ALIGN_ZERO_RATIO,
 * FLT_EPSILON = 1.2e-7) reads 0, whether it is exactly 0 or the rounding a
 * turn of the heads leaves (3.4e-34 on lesson 1 turned); a larger one is
 * printed. */
START_TEST(note_says_zero_within_float_error)
{
    char zero[1024], noise[1024], small[1024];
    const PoolAlignment exact = {1, 0, 0.0, 1, 0}, rounded = {1, 0, 3.4e-34, 1, 0}, tiny = {1, 0, 2e-5, 1, 0};
    pool_note(zero, sizeof zero, 4, 4, 2, "", POOL_ALIGNED, &exact);
    pool_note(noise, sizeof noise, 4, 4, 2, "", POOL_ALIGNED, &rounded);
    pool_note(small, sizeof small, 4, 4, 2, "", POOL_ALIGNED, &tiny);
    ck_assert_msg(strstr(zero, "smallest singular value 0 of the largest, within float error"), "note: %s", zero);
    ck_assert_str_eq(noise, zero);
    ck_assert_msg(strstr(small, "smallest singular value 2e-05 of the largest)"), "note: %s", small);
}
END_TEST

Suite *pool_suite(void)
{
    Suite *s = suite_create("pool");
    TCase *tc = tcase_create("pool");
    tcase_add_test(tc, same_count_is_identity);
    tcase_add_test(tc, pooled_columns_are_group_means);
    tcase_add_test(tc, pool_to_one_is_mqa);
    tcase_add_test(tc, count_must_divide);
    tcase_add_test(tc, pooled_layer_leaves_input);
    tcase_add_test(tc, note_names_the_conversion);
    tcase_add_test(tc, note_says_zero_within_float_error);
    suite_add_tcase(s, tc);
    return s;
}
