/* check_init.c — the seeded PRNG, `mhaviz init`'s starter models (random and
 * designed), the JSON writer. */
#include "models/init.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/status.h"

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

/* ---- the designed model (--designed) ------------------------------------ */

/* The designed model of `tokens` with n_heads heads (subject NULL: the first
 * token), written with 4 digits as `mhaviz init --designed` does and loaded
 * back, then run: the maps a teacher will see. */
static void designed_run(const char *tokens, int n_heads, int n_kv, const char *subject,
                         MhaInput *in, MhaState *st)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    int rc = init_designed(tokens, n_heads, n_kv, subject, &m, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
    size_t len;
    char *s = write_to_string(&m, 4, &len);
    memset(in, 0, sizeof *in);
    rc = input_parse(s, len, "designed.json", NULL, in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "loader: %s", err);
    ck_assert_ptr_null(in->warnings);
    ck_assert_int_eq(mha_state_build(st, &in->cfg, 0), MHAVIZ_OK);
    mha_forward(&in->cfg, &in->w, in->x, st);
    free(s);
    init_model_free(&m);
}

/* The report's role (src/core/measures.c) of each head of a run. */
static void roles_of(const MhaInput *in, const MhaState *st, MeasuresRole *role)
{
    const int T = in->cfg.T;
    int *ids = malloc((size_t)T * sizeof *ids);
    ck_assert_ptr_nonnull(ids);
    measures_token_ids(in->tokens, T, ids);
    for (int h = 0; h < in->cfg.n_heads; h++) {
        MapMeasures mm;
        measures_map(st->att + (size_t)h * T * T, T, in->cfg.causal, ids, &mm);
        role[h] = mm.role;
    }
    free(ids);
}

static void assert_roles(const char *tokens, int n_heads, const MeasuresRole *want)
{
    MhaInput in;
    MhaState st;
    MeasuresRole got[16];
    designed_run(tokens, n_heads, 0, NULL, &in, &st);
    roles_of(&in, &st, got);
    for (int h = 0; h < n_heads; h++)
        ck_assert_msg(got[h] == want[h], "\"%.30s...\", %d heads: head %d is %s, designed as %s",
                      tokens, n_heads, h, measures_role_name(got[h]), measures_role_name(want[h]));
    mha_state_free(&st);
    input_free(&in);
}

#define PREV MEASURES_PREVIOUS_TOKEN
#define FIRST MEASURES_FIRST_TOKEN
#define DUP MEASURES_DUPLICATE_TOKEN
#define SELF MEASURES_SELF

/* Each designed head gets the role it was built for: previous token, the
 * subject (the first token, so the report says first-token), an earlier
 * mention (duplicate-token; itself, so self, when no word repeats), itself.
 * Sentences: no repeated word; 40 tokens with words coming back up to 27
 * tokens later; a short one whose repeated word is first seen late (the
 * earlier-mention head's strength grows with that distance: designed.c). */
START_TEST(designed_heads_do_their_jobs)
{
    const MeasuresRole lesson[4] = {PREV, FIRST, DUP, SELF}, none[4] = {PREV, FIRST, SELF, SELF};
    assert_roles("a quick brown fox jumps over lazy dogs", 4, none);
    assert_roles("Mary gave the book to John because John had helped Mary last week so on the "
                 "next day John gave the book back to Mary and Mary read the book to Anna while "
                 "Anna sat by the fire with Tom", 4, lesson);
    assert_roles("we said that it was time to leave and it was", 4, lesson);
    /* more heads repeat the jobs, fewer keep the first ones */
    const MeasuresRole six[6] = {PREV, FIRST, DUP, SELF, PREV, FIRST};
    assert_roles("the cat saw the dog and the cat ran", 6, six);
    assert_roles("the cat saw the dog and the cat ran", 3, lesson);
    assert_roles("the cat saw the dog and the cat ran", 1, lesson);
}
END_TEST

/* Lesson 1's sentence gives the roles of samples/lesson1.json. */
START_TEST(designed_lesson1_as_the_sample)
{
    MhaInput in, sample;
    MhaState st, sst;
    MeasuresRole got[4], want[4];
    char err[MHAVIZ_ERRLEN];
    designed_run("Mary gave the book to John because John had helped Mary", 4, 0, NULL, &in, &st);
    ck_assert_int_eq(input_load("samples/lesson1.json", &sample, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build(&sst, &sample.cfg, 0), MHAVIZ_OK);
    mha_forward(&sample.cfg, &sample.w, sample.x, &sst);
    roles_of(&in, &st, got);
    roles_of(&sample, &sst, want);
    for (int h = 0; h < 4; h++)
        ck_assert_msg(got[h] == want[h], "head %d: %s, the sample's %s", h,
                      measures_role_name(got[h]), measures_role_name(want[h]));
    ck_assert_int_eq(want[2], DUP); /* the sample's own roles, as samples/README.md says */
    mha_state_free(&st);
    mha_state_free(&sst);
    input_free(&in);
    input_free(&sample);
}
END_TEST

/* --subject WORD: every row from the word's first mention on gives it at
 * least 99% (it scores 10, every other key at most 0: "the" again at 6
 * also scores 10 - 1.5 * 5 < 3); the rows before it favour the first token
 * (-1.5 j). Several words: the earliest of them; the other word's first
 * mention, 3 tokens later, scores 10 - 4.5, so at least 1 / (1 + e^-4.5 +
 * ...) > 98% there (0.9 allowed). */
START_TEST(designed_subject_word)
{
    const char *text = "yesterday the old cat sat on the mat near the dog";
    struct { const char *subject; int at; } cases[] = {{"cat", 3}, {"dog mat", 7}, {"the", 1}};
    for (size_t c = 0; c < sizeof cases / sizeof cases[0]; c++) {
        MhaInput in;
        MhaState st;
        designed_run(text, 4, 0, cases[c].subject, &in, &st);
        const int T = in.cfg.T;
        const float *att = st.att + (size_t)1 * T * T; /* head 1 */
        for (int i = 0; i < T; i++) {
            const float *row = att + (size_t)i * T;
            if (i < cases[c].at)
                for (int j = 1; j <= i; j++)
                    ck_assert_msg(row[0] > row[j], "--subject %s: row %d", cases[c].subject, i);
            else
                ck_assert_msg(row[cases[c].at] > (strchr(cases[c].subject, ' ') ? 0.9f : 0.99f),
                              "--subject %s: row %d", cases[c].subject, i);
        }
        mha_state_free(&st);
        input_free(&in);
    }
}
END_TEST

/* d_model is chosen to fit and said in the comment: lesson 1 gets lesson
 * 1's 16 (9 words + 1, t, t^2 = 12 dims; head_dim 4 for the values of its
 * 2 repeated words + "another word" + t); 40 distinct words with 4 heads
 * need 43 dims, so head_dim 11, d_model 44. --kv-heads pools the designed
 * K/V heads (src/core/pool.c) and says so. Bad options name themselves. */
START_TEST(designed_shape_and_options)
{
    InitModel m, p;
    char err[MHAVIZ_ERRLEN];
    const char *lesson = "Mary gave the book to John because John had helped Mary";
    ck_assert_int_eq(init_designed_d_model(lesson, 4), 16);
    ck_assert_int_eq(init_designed(lesson, 4, 0, NULL, &m, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(m.in.cfg.d_model, 16);
    ck_assert_ptr_nonnull(strstr(m.comment, "d_model 16 = 4 heads of 4"));
    char words[400] = "";
    for (int i = 0; i < 40; i++)
        snprintf(words + strlen(words), sizeof words - strlen(words), "w%d ", i);
    ck_assert_int_eq(init_designed_d_model(words, 4), 44);

    ck_assert_int_eq(init_designed(lesson, 4, 2, NULL, &p, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(p.in.cfg.n_kv_heads, 2);
    ck_assert_int_eq(pool_kv_heads(&m.in.cfg, &m.in.w, 2, err, sizeof err), MHAVIZ_OK);
    for (int i = 0; i < 16 * 8; i++) {
        ck_assert(p.in.w.W_k[i] == m.in.w.W_k[i]);
        ck_assert(p.in.w.W_v[i] == m.in.w.W_v[i]);
    }
    ck_assert_ptr_nonnull(strstr(p.comment, "mean-pooled into 2"));
    init_model_free(&m);
    init_model_free(&p);

    ck_assert_int_eq(init_designed("the cat", 4, 0, "dog", &m, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "--subject"));
    ck_assert_ptr_nonnull(strstr(err, "dog"));
    ck_assert_int_eq(init_designed("the cat", 4, 3, NULL, &m, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "--kv-heads 3"));
    ck_assert_int_eq(init_designed("  ", 4, 0, NULL, &m, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_ptr_nonnull(strstr(err, "--tokens"));
}
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
    tcase_add_test(tc, designed_heads_do_their_jobs);
    tcase_add_test(tc, designed_lesson1_as_the_sample);
    tcase_add_test(tc, designed_subject_word);
    tcase_add_test(tc, designed_shape_and_options);
    suite_add_tcase(s, tc);
    return s;
}
