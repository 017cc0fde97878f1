/* check_init.c — the seeded PRNG, `mhaviz init`'s starter model, the JSON writer. */
#include "init.h"
#include "mha.h"
#include "status.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The model written to a string (caller frees). */
static char *write_to_string(const InitModel *m, int digits, size_t *len)
{
    char *buf = NULL;
    FILE *f = open_memstream(&buf, len);
    ck_assert_ptr_nonnull(f);
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(init_write(f, m, digits, err, sizeof err), MHAVIZ_OK);
    fclose(f);
    return buf;
}

static char *init_to_string(const InitOptions *o, size_t *len)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(init_model(o, &m, err, sizeof err), MHAVIZ_OK);
    char *s = write_to_string(&m, 4, len);
    init_model_free(&m);
    return s;
}

/* splitmix64's published first outputs for seed 0 (Vigna's reference
 * splitmix64.c): e220a8397b1dcdaf, 6e789e6aa1b965f4. */
START_TEST(splitmix64_matches_reference)
{
    InitRng r;
    init_rng_seed(&r, 0);
    ck_assert(init_rng_u64(&r) == 0xe220a8397b1dcdafULL);
    ck_assert(init_rng_u64(&r) == 0x6e789e6aa1b965f4ULL);
}
END_TEST

/* 100000 normals: mean 0 and variance 1 within 0.02 (the standard error of
 * the mean is 1/sqrt(1e5) = 0.003); uniforms stay in (0, 1]. */
START_TEST(normal_has_unit_variance)
{
    InitRng r;
    init_rng_seed(&r, 7);
    double sum = 0, sum2 = 0;
    const int n = 100000;
    for (int i = 0; i < n; i++) {
        double z = init_rng_normal(&r);
        sum += z;
        sum2 += z * z;
    }
    ck_assert_double_eq_tol(sum / n, 0.0, 0.02);
    ck_assert_double_eq_tol(sum2 / n - (sum / n) * (sum / n), 1.0, 0.02);
    for (int i = 0; i < 1000; i++) {
        double u = init_rng_uniform(&r);
        ck_assert(u > 0.0 && u <= 1.0);
    }
}
END_TEST

START_TEST(tokens_split_on_white_space)
{
    char **tok;
    int T;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(init_tokens_split("  the cat\tsat  ", &tok, &T, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(T, 3);
    ck_assert_str_eq(tok[0], "the");
    ck_assert_str_eq(tok[1], "cat");
    ck_assert_str_eq(tok[2], "sat");
    init_tokens_free(tok, T);
    ck_assert_int_eq(init_tokens_split(" \t ", &tok, &T, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "--tokens") != NULL, "message: %s", err);
}
END_TEST

/* Shapes the input format would refuse are refused here, naming the option. */
START_TEST(bad_shapes_are_refused)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    InitOptions o = {"a b", 16, 3, 0, 1, 0};
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "--heads 3") && strstr(err, "--d-model 16"), "message: %s", err);
    o.n_heads = 4;
    o.n_kv_heads = 3;
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "--kv-heads 3") != NULL, "message: %s", err);
}
END_TEST

/* Weights ~ N(0, 1/d_model): with d_model 64, W_q holds 4096 draws whose
 * standard deviation must be 1/8 within 5%. Shapes follow the options. */
START_TEST(weights_are_scaled_normal)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    InitOptions o = {"the cat sat on the mat", 64, 8, 2, 3, 0};
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(m.in.cfg.T, 6);
    ck_assert_int_eq(m.in.cfg.head_dim, 8);
    ck_assert_int_eq(mha_kv_dim(&m.in.cfg), 16);
    double sum2 = 0;
    for (int i = 0; i < 64 * 64; i++)
        sum2 += (double)m.in.w.W_q[i] * m.in.w.W_q[i];
    ck_assert_double_eq_tol(sqrt(sum2 / (64 * 64)), 0.125, 0.125 * 0.05);
    init_model_free(&m);
}
END_TEST

/* Same seed: the same bytes. Another seed: other bytes. */
START_TEST(same_seed_same_bytes)
{
    InitOptions o = {"the cat sat on the mat", 16, 4, 2, 7, 0};
    size_t la, lb, lc;
    char *a = init_to_string(&o, &la), *b = init_to_string(&o, &lb);
    o.seed = 8;
    char *c = init_to_string(&o, &lc);
    ck_assert_uint_eq(la, lb);
    ck_assert_mem_eq(a, b, la);
    ck_assert(la != lc || memcmp(a, c, la) != 0);
    free(a);
    free(b);
    free(c);
}
END_TEST

/* Each matrix has its own stream: another sentence, same seed, same W_q. */
START_TEST(layer_does_not_depend_on_sentence)
{
    InitModel m1, m2;
    char err[MHAVIZ_ERRLEN];
    InitOptions o1 = {"the cat sat", 16, 4, 0, 7, 0}, o2 = {"a much longer sentence here", 16, 4, 0, 7, 1};
    ck_assert_int_eq(init_model(&o1, &m1, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(init_model(&o2, &m2, err, sizeof err), MHAVIZ_OK);
    ck_assert_mem_eq(m1.in.w.W_q, m2.in.w.W_q, 16 * 16 * sizeof(float));
    ck_assert_mem_eq(m1.in.w.W_o, m2.in.w.W_o, 16 * 16 * sizeof(float));
    init_model_free(&m1);
    init_model_free(&m2);
}
END_TEST

/* Embeddings: one entry per distinct token ("the" twice -> 5 entries), and
 * x_t = embeddings[token t] + PE(t), PE(1, 0) = sin(1), PE(1, 1) = cos(1). */
START_TEST(embeddings_table_and_positions)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    InitOptions o = {"the cat sat on the mat", 8, 2, 0, 5, 1};
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(m.n_vocab, 5);
    ck_assert_str_eq(m.vocab[4], "mat");
    /* token 4 is "the" again: same embedding row as token 0, vocab 0 */
    for (int e = 0; e < 8; e++) {
        double pe4 = (e % 2 == 0) ? sin(4 / pow(10000.0, (double)(e - e % 2) / 8))
                                  : cos(4 / pow(10000.0, (double)(e - e % 2) / 8));
        ck_assert_double_eq_tol(m.in.x[4 * 8 + e], m.emb[e] + pe4, 1e-6);
    }
    ck_assert_double_eq_tol(m.in.x[1 * 8 + 0], m.emb[1 * 8 + 0] + sin(1.0), 1e-6);
    ck_assert_double_eq_tol(m.in.x[1 * 8 + 1], m.emb[1 * 8 + 1] + cos(1.0), 1e-6);

    /* the written file has the table, not x */
    size_t len;
    char *s = write_to_string(&m, 4, &len);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, len + 1, &end, 1); /* nothing may follow the JSON */
    ck_assert_ptr_nonnull(j);
    cJSON *emb = cJSON_GetObjectItemCaseSensitive(j, "embeddings");
    ck_assert(cJSON_IsObject(emb));
    ck_assert_int_eq(cJSON_GetArraySize(emb), 5);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "x"));
    cJSON_Delete(j);
    free(s);
    init_model_free(&m);
}
END_TEST

/* The writer: valid JSON with the shapes of the format, tokens escaped, and
 * with 9 digits every float comes back exactly. */
START_TEST(writer_round_trips)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    InitOptions o = {"say \"hi\" back\\slash", 8, 4, 2, 9, 0};
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_OK);
    size_t len;
    char *s = write_to_string(&m, 9, &len);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(s, len + 1, &end, 1); /* nothing may follow the JSON */
    ck_assert_msg(j != NULL, "not JSON:\n%s", s);
    cJSON *tok = cJSON_GetObjectItemCaseSensitive(j, "tokens");
    ck_assert_int_eq(cJSON_GetArraySize(tok), 3);
    ck_assert_str_eq(cJSON_GetArrayItem(tok, 0)->valuestring, "say");
    ck_assert_str_eq(cJSON_GetArrayItem(tok, 1)->valuestring, "\"hi\"");
    ck_assert_str_eq(cJSON_GetArrayItem(tok, 2)->valuestring, "back\\slash");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(j, "n_kv_heads")->valuedouble, 2);
    cJSON *W_k = cJSON_GetObjectItemCaseSensitive(j, "W_k");
    ck_assert_int_eq(cJSON_GetArraySize(W_k), 8);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetArrayItem(W_k, 0)), 4); /* 2 K/V heads of 2 */
    int i = 0;
    cJSON *row, *v;
    cJSON_ArrayForEach(row, W_k) {
        cJSON_ArrayForEach(v, row) {
            ck_assert(cJSON_IsNumber(v));
            ck_assert((float)v->valuedouble == m.in.w.W_k[i]);
            i++;
        }
    }
    ck_assert_int_eq(i, 8 * 4);
    ck_assert_ptr_null(cJSON_GetObjectItemCaseSensitive(j, "b_q")); /* no biases: none written */
    cJSON_Delete(j);
    free(s);
    init_model_free(&m);
}
END_TEST

/* What `mhaviz init` writes loads through the input loader and runs: x (or
 * embeddings + positions) and every weight come back as the model held them
 * (within the 4 printed digits: relative 5e-4), and the forward pass gives
 * rows that sum to 1. */
static void check_loads_and_runs(int embeddings)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    InitOptions o = {"the cat sat on the mat", 16, 4, 2, 7, embeddings};
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_OK);
    size_t len;
    char *s = write_to_string(&m, 4, &len);
    MhaInput in = {0};
    int rc = input_parse(s, len, "init.json", NULL, &in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "loader: %s", err);
    ck_assert_ptr_null(in.warnings);
    ck_assert_int_eq(in.cfg.T, 6);
    ck_assert_int_eq(in.cfg.n_kv_heads, 2);
    ck_assert_int_eq(in.cfg.causal, 1);
    for (int i = 0; i < 6 * 16; i++) /* x values are O(1): 4 digits = 5e-4 relative */
        ck_assert_double_eq_tol(in.x[i], m.in.x[i], 5e-4 * (1 + fabs(m.in.x[i])));
    for (int i = 0; i < 16 * 8; i++)
        ck_assert_double_eq_tol(in.w.W_k[i], m.in.w.W_k[i], 5e-4 * fabs(m.in.w.W_k[i]));
    MhaState st;
    ck_assert_int_eq(mha_state_build(&st, &in.cfg, 0), MHAVIZ_OK);
    mha_forward(&in.cfg, &in.w, in.x, &st);
    for (int r = 0; r < 4 * 6; r++) {
        double sum = 0;
        for (int j = 0; j < 6; j++)
            sum += st.att[r * 6 + j];
        ck_assert_double_eq_tol(sum, 1.0, 1e-5);
    }
    mha_state_free(&st);
    input_free(&in);
    free(s);
    init_model_free(&m);
}

START_TEST(x_output_loads_and_runs) { check_loads_and_runs(0); }
END_TEST

START_TEST(embeddings_output_loads_and_runs) { check_loads_and_runs(1); }
END_TEST

Suite *init_suite(void)
{
    Suite *s = suite_create("init");
    TCase *tc = tcase_create("init");
    tcase_add_test(tc, splitmix64_matches_reference);
    tcase_add_test(tc, normal_has_unit_variance);
    tcase_add_test(tc, tokens_split_on_white_space);
    tcase_add_test(tc, bad_shapes_are_refused);
    tcase_add_test(tc, weights_are_scaled_normal);
    tcase_add_test(tc, same_seed_same_bytes);
    tcase_add_test(tc, layer_does_not_depend_on_sentence);
    tcase_add_test(tc, embeddings_table_and_positions);
    tcase_add_test(tc, writer_round_trips);
    tcase_add_test(tc, x_output_loads_and_runs);
    tcase_add_test(tc, embeddings_output_loads_and_runs);
    suite_add_tcase(s, tc);
    return s;
}
