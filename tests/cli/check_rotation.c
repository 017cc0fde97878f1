/* check_rotation.c — no variant depends on coordinates inside a head.
 *
 * Coordinates inside a head are arbitrary: turning head h's queries and
 * keys by one orthogonal matrix Q_h (q Q_h, k Q_h) keeps every score q·k, and
 * turning its values by P_h and W_O's rows of head h by P_h's transpose keeps
 * the output (v P_h P_h^T W_o = v W_o). So a conclusion a turn changes is an
 * artefact. Each trained sample is written twice as an inline input, as it
 * is and with every K/V head turned by random orthogonal matrices (its query
 * heads with it), and run with --kv-heads all: the pooled variants (aligned
 * before the mean, pool.h) must give the same maps within 1e-3, the same
 * roles, rankings of groupings and sentences. The plain mean (--pool mean)
 * is checked to fail this on one sample: the test can tell (it moves the
 * rival sample's pooled maps by up to 0.99 and changes MQA's roles). */
#include "core/status.h"
#include "io/input.h"
#include "support.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A standard normal number from the xorshift sequence s (Box-Muller). */
static double normal(uint32_t *s)
{
    const double u = (xorshift(s) + 1.0) / 4294967297.0, v = (xorshift(s) + 1.0) / 4294967297.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* Q (n, n) row-major: a random orthogonal matrix, Gram-Schmidt on the
 * columns of a random normal matrix. */
static void orthogonal(double *Q, int n, uint32_t *s)
{
    for (int i = 0; i < n * n; i++)
        Q[i] = normal(s);
    for (int j = 0; j < n; j++) {
        for (int k = 0; k < j; k++) {
            double dot = 0;
            for (int i = 0; i < n; i++)
                dot += Q[i * n + j] * Q[i * n + k];
            for (int i = 0; i < n; i++)
                Q[i * n + j] -= dot * Q[i * n + k];
        }
        double norm = 0;
        for (int i = 0; i < n; i++)
            norm += Q[i * n + j] * Q[i * n + j];
        for (int i = 0; i < n; i++)
            Q[i * n + j] /= sqrt(norm);
    }
}

/* a (rows, cols) as a JSON array of rows (cols 0: a flat array of rows numbers). */
static cJSON *matrix(const float *a, int rows, int cols)
{
    if (cols == 0)
        return cJSON_CreateFloatArray(a, rows);
    cJSON *m = cJSON_CreateArray();
    for (int r = 0; r < rows; r++)
        cJSON_AddItemToArray(m, cJSON_CreateFloatArray(a + (size_t)r * cols, cols));
    return m;
}

/* Replace o's weights with w's, inline, x@W layout (d_model, kv_dim of kv). */
static void put_weights(cJSON *o, const MhaWeights *w, int d, int kv)
{
    const char *keys[8] = {"W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o"};
    const float *a[8] = {w->W_q, w->W_k, w->W_v, w->W_o, w->b_q, w->b_k, w->b_v, w->b_o};
    const int rows[8] = {d, d, d, d, d, kv, kv, d}, cols[8] = {d, kv, kv, d, 0, 0, 0, 0};
    for (int i = 0; i < 8; i++) {
        cJSON_DeleteItemFromObjectCaseSensitive(o, keys[i]);
        cJSON_AddItemToObject(o, keys[i], matrix(a[i], rows[i], cols[i]));
    }
}

/* dst (rows, hd) = src (rows, hd) Q with strides ss, ds (floats between rows). */
static void turn(float *dst, size_t ds, const float *src, size_t ss, int rows, int hd, const double *Q)
{
    for (int p = 0; p < rows; p++)
        for (int j = 0; j < hd; j++) {
            double sum = 0;
            for (int i = 0; i < hd; i++)
                sum += src[p * ss + i] * Q[i * hd + j];
            dst[p * ds + j] = (float)sum;
        }
}

/* The sample at path written into dir/name, inline: turned (seed != 0:
 * each K/V head by random orthogonal matrices, its query heads with it) or
 * as it is (seed 0). */
static void write_turned(const char *path, const char *dir, const char *name, uint32_t seed)
{
    MhaInput in;
    char err[MHAVIZ_ERRLEN], out[600];
    ck_assert_msg(input_load(path, &in, err, sizeof err) == MHAVIZ_OK, "%s", err);
    const MhaConfig *c = &in.cfg;
    const int d = c->d_model, hd = c->head_dim, H = c->n_heads, G = c->n_kv_heads, kv = G * hd;
    MhaWeights w = in.w;
    float *own[7];
    const size_t len[7] = {(size_t)d * d, (size_t)d * kv, (size_t)d * kv, (size_t)d * d, (size_t)d, (size_t)kv,
                           (size_t)kv};
    const float *from[7] = {in.w.W_q, in.w.W_k, in.w.W_v, in.w.W_o, in.w.b_q, in.w.b_k, in.w.b_v};
    for (int i = 0; i < 7; i++) {
        own[i] = malloc(len[i] * sizeof(float));
        ck_assert_ptr_nonnull(own[i]);
        memcpy(own[i], from[i], len[i] * sizeof(float));
    }
    double *Q = malloc((size_t)hd * hd * sizeof *Q), *P = malloc((size_t)hd * hd * sizeof *P);
    ck_assert(Q && P);
    for (int g = 0; seed && g < G; g++) {
        orthogonal(Q, hd, &seed);
        orthogonal(P, hd, &seed);
        turn(own[1] + g * hd, kv, in.w.W_k + g * hd, kv, d, hd, Q); /* k Q */
        turn(own[5] + g * hd, 0, in.w.b_k + g * hd, 0, 1, hd, Q);
        turn(own[2] + g * hd, kv, in.w.W_v + g * hd, kv, d, hd, P); /* v P */
        turn(own[6] + g * hd, 0, in.w.b_v + g * hd, 0, 1, hd, P);
        for (int h = g * (H / G); h < (g + 1) * (H / G); h++) {
            turn(own[0] + h * hd, d, in.w.W_q + h * hd, d, d, hd, Q); /* q Q */
            turn(own[4] + h * hd, 0, in.w.b_q + h * hd, 0, 1, hd, Q);
            for (int col = 0; col < d; col++) /* P^T W_o, W_O's rows of head h */
                for (int j = 0; j < hd; j++) {
                    double sum = 0;
                    for (int i = 0; i < hd; i++)
                        sum += P[i * hd + j] * in.w.W_o[(size_t)(h * hd + i) * d + col];
                    own[3][(size_t)(h * hd + j) * d + col] = (float)sum;
                }
        }
    }
    w.W_q = own[0], w.W_k = own[1], w.W_v = own[2], w.W_o = own[3], w.b_q = own[4], w.b_k = own[5], w.b_v = own[6];
    char *text = slurp(path, NULL);
    cJSON *root = cJSON_Parse(text);
    ck_assert_ptr_nonnull(root);
    cJSON_DeleteItemFromObjectCaseSensitive(root, "weight_layout"); /* x@W, the default */
    cJSON_DeleteItemFromObjectCaseSensitive(root, "x");
    cJSON_AddItemToObject(root, "x", matrix(in.x, c->T, d));
    put_weights(root, &w, d, kv);
    if (in.has_single)
        put_weights(cJSON_GetObjectItemCaseSensitive(root, "single_head"), &in.single, d, d);
    char *json = cJSON_Print(root);
    snprintf(out, sizeof out, "%s/%s", dir, name);
    FILE *f = fopen(out, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    ck_assert_int_eq(fclose(f), 0);
    free(json), cJSON_Delete(root), free(text), free(Q), free(P);
    for (int i = 0; i < 7; i++)
        free(own[i]);
    input_free(&in);
}

static cJSON *read_json(const char *dir, const char *name)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    char *text = slurp(path, NULL);
    cJSON *j = cJSON_Parse(text);
    ck_assert_msg(j != NULL, "%s is not JSON", path);
    free(text);
    return j;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(v != NULL, "report.json lacks \"%s\"", key);
    return v;
}

/* The largest |a - b| over two arrays of numbers, nested alike. */
static double worst(const cJSON *a, const cJSON *b)
{
    if (cJSON_IsNumber(a)) {
        ck_assert(cJSON_IsNumber(b));
        return fabs(a->valuedouble - b->valuedouble);
    }
    ck_assert_int_eq(cJSON_GetArraySize(a), cJSON_GetArraySize(b));
    double m = 0;
    for (const cJSON *x = a->child, *y = b->child; x; x = x->next, y = y->next)
        m = fmax(m, worst(x, y));
    return m;
}

/* The strings of key in a and b are the same (both null is the same). */
static int same_text(const cJSON *a, const cJSON *b, const char *key)
{
    const cJSON *x = get(a, key), *y = get(b, key);
    if (cJSON_IsNull(x) || cJSON_IsNull(y))
        return cJSON_IsNull(x) && cJSON_IsNull(y);
    return strcmp(x->valuestring, y->valuestring) == 0;
}

/* Runs of the plain and the turned input (dirs a, b): how many things
 * differ (each printed), maps compared within 1e-3. */
static int differences(const char *a, const char *b, const char *what)
{
    int n = 0;
    cJSON *ja = read_json(a, "report.json"), *jb = read_json(b, "report.json");
    const cJSON *va = get(ja, "variants"), *vb = get(jb, "variants");
    ck_assert_int_eq(cJSON_GetArraySize(va), cJSON_GetArraySize(vb));
    for (const cJSON *x = va->child, *y = vb->child; x; x = x->next, y = y->next) {
        const char *name = get(x, "name")->valuestring;
        if (!same_text(x, y, "sentence"))
            n++, fprintf(stderr, "%s %s: the sentence differs\n", what, name);
        const cJSON *ga = get(x, "groupings"), *gb = get(y, "groupings");
        int same = cJSON_GetArraySize(ga) == cJSON_GetArraySize(gb);
        for (const cJSON *p = ga->child, *q = gb->child; same && p; p = p->next, q = q->next)
            same = same_text(p, q, "groups");
        if (!same)
            n++, fprintf(stderr, "%s %s: the ranking of groupings differs\n", what, name);
        for (const cJSON *p = get(x, "heads")->child, *q = get(y, "heads")->child; p; p = p->next, q = q->next)
            if (!same_text(p, q, "role"))
                n++, fprintf(stderr, "%s %s: head %d's role differs\n", what, name, (int)get(p, "index")->valuedouble);
        char sub[600];
        snprintf(sub, sizeof sub, "%s/report.json", get(x, "folder")->valuestring);
        cJSON *sa = read_json(a, sub), *sb = read_json(b, sub);
        for (const cJSON *p = get(sa, "heads")->child, *q = get(sb, "heads")->child; p; p = p->next, q = q->next) {
            const double m = worst(get(p, "attention"), get(q, "attention"));
            if (m > 1e-3)
                n++, fprintf(stderr, "%s %s: head %d's map moves by %g\n", what, name, (int)get(p, "index")->valuedouble, m);
        }
        cJSON_Delete(sa), cJSON_Delete(sb);
    }
    cJSON_Delete(ja), cJSON_Delete(jb);
    return n;
}

/* Run the binary on dir/name with args into dir/out. */
static void run(const char *dir, const char *name, const char *args, const char *out)
{
    char cmd[1600];
    const char *bin = getenv("MHAVIZ_BIN");
    ck_assert_msg(bin != NULL, "MHAVIZ_BIN is not set");
    snprintf(cmd, sizeof cmd, "'%s' -q --no-html --kv-heads all %s -o '%s/%s' '%s/%s' > /dev/null", bin, args, dir, out,
             dir, name);
    ck_assert_msg(system(cmd) == 0, "%s failed", cmd);
}

/* The differences between a sample and itself turned, pooled by args. */
static int turned_differences(const char *sample, const char *args, uint32_t seed)
{
    char *dir = scratch("rotation"), a[700], b[700];
    write_turned(sample, dir, "plain.json", 0);
    write_turned(sample, dir, "turned.json", seed);
    run(dir, "plain.json", args, "a");
    run(dir, "turned.json", args, "b");
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    const int n = differences(a, b, sample);
    remove_tree(dir);
    free(dir);
    return n;
}

static const char *const trained[] = {"samples/trained/rival.json", "samples/trained/lesson1_layer1.json",
                                      "samples/trained/lesson1_layer2.json", "samples/trained/story_layer1.json",
                                      "samples/trained/story_layer2.json",
                                      "samples/trained/rival_gqa2.json"}; /* trained as GQA-2: --kv-heads all pools it to MQA */

/* Aligned pooling (the default): every trained sample, turned, gives the
 * same maps, roles, rankings and sentences. */
START_TEST(aligned_pooling_ignores_turns)
{
    ck_assert_int_eq(turned_differences(trained[_i], "", 7u + (uint32_t)_i), 0);
}
END_TEST

/* The plain mean does depend on them: on the rival sample a turn moves a
 * pooled map (the issue that asked for alignment measured up to 0.99). */
START_TEST(plain_mean_follows_turns)
{
    ck_assert_int_gt(turned_differences(trained[0], "--pool mean", 7), 0);
}
END_TEST

/* Lesson 1's designed heads use 1 or 2 of their 4 key directions: the turn
 * is not unique, and the note says so. A turn changes that note's numbers
 * only by rounding (singular values of exactly 0 become 3e-34): it names the
 * same K/V head and the same "0 within float error", turned or not. (The
 * pooled maps may differ: the note says they are one of many.) */
START_TEST(non_unique_note_ignores_turns)
{
    char *dir = scratch("rotation"), a[700], b[700];
    write_turned("samples/lesson1.json", dir, "plain.json", 0);
    write_turned("samples/lesson1.json", dir, "turned.json", 7);
    run(dir, "plain.json", "", "a");
    run(dir, "turned.json", "", "b");
    snprintf(a, sizeof a, "%s/a", dir);
    snprintf(b, sizeof b, "%s/b", dir);
    cJSON *ja = read_json(a, "report.json");
    int n_unique = 0;
    for (const cJSON *x = get(ja, "variants")->child; x; x = x->next) {
        char sub[600];
        snprintf(sub, sizeof sub, "%s/report.json", get(x, "folder")->valuestring);
        cJSON *sa = read_json(a, sub), *sb = read_json(b, sub);
        const cJSON *note = cJSON_GetObjectItemCaseSensitive(sa, "notes"); /* pooled variants only */
        const cJSON *turned = cJSON_GetObjectItemCaseSensitive(sb, "notes");
        ck_assert_int_eq(cJSON_IsString(note), cJSON_IsString(turned));
        if (cJSON_IsString(note)) {
            ck_assert_msg(strcmp(note->valuestring, turned->valuestring) == 0, "%s: '%s' turned is '%s'", sub,
                          note->valuestring, turned->valuestring);
            n_unique += strstr(note->valuestring, "0 of the largest, within float error") != NULL;
        }
        cJSON_Delete(sa), cJSON_Delete(sb);
    }
    ck_assert_int_eq(n_unique, 2); /* GQA-2 and MQA */
    cJSON_Delete(ja);
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *rotation_suite(void)
{
    Suite *s = suite_create("rotation");
    TCase *tc = tcase_create("rotation");
    tcase_set_timeout(tc, 600);
    tcase_add_loop_test(tc, aligned_pooling_ignores_turns, 0, (int)(sizeof trained / sizeof trained[0]));
    tcase_add_test(tc, plain_mean_follows_turns);
    tcase_add_test(tc, non_unique_note_ignores_turns);
    suite_add_tcase(s, tc);
    return s;
}
