/* check_lesson_page.c — lesson.html's embedded numbers, read back without a
 * browser (tests/browser/ drives the page itself):
 *   - the facts parse back (cJSON) and hold the input's tokens, however
 *     hostile, while the JSON text holds no '<', '>', '&', U+2028 or U+2029;
 *   - every visible cell decodes, with a float16 decoder written here
 *     (ldexp of the fields), to the forward pass's weight and score within
 *     float16's rounding: half a unit in the last of 11 bits, relative
 *     2^-11, or 2^-25 among the subnormals (a weight that would round to
 *     0.5 itself one step off it instead);
 *   - a weight keeps its side of one half (lesson 1: 0.49992 is not stored
 *     as 0.5);
 *   - a layer past the cap gets the summary: the page stays under the cap
 *     and each row's first kept key is the row's top key;
 *   - the page's words come from the C side's one place for each: token
 *     labels are token_text's (a newline as \n), the comparison head's name
 *     is rival_name's, the thresholds are measures.h's, every label plan's
 *     line height is at least LABELS_MIN_PX, the visible keys are
 *     mha_visible_keys';
 *   - a page of several layers of a model (begun, added to, finished) holds
 *     each layer's facts with its number and its maps after the one
 *     before, the grid's colours and letters as model_overview_role gives
 *     them, the model's name as its title; a layer of another shape, or a
 *     page finished short of its layers, is refused. */
#include "core/measures.h"
#include "core/rival.h"
#include "core/status.h"
#include "core/timing.h"
#include "core/variant.h"
#include "io/input.h"
#include "pictures/labels.h"
#include "pictures/model_overview.h"
#include "report/lesson_page.h"
#include "text/token_text.h"

#include <cJSON.h>
#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A causal layer of T tokens, d_model 4 and 2 heads, its numbers fixed by
 * the token index; tokens[t] as given, or "t<index>" for NULL. */
static void make_layer(MhaInput *in, Variant *v, int T, const char *const *tokens)
{
    size_t cap = (size_t)T * 200 + 4096, n = 0;
    char *json = malloc(cap);
    ck_assert_ptr_nonnull(json);
    n += (size_t)snprintf(json + n, cap - n, "{\"d_model\": 4, \"n_heads\": 2, \"causal\": true, \"tokens\": [");
    for (int t = 0; t < T; t++) {
        if (tokens)
            n += (size_t)snprintf(json + n, cap - n, "%s\"%s\"", t ? ", " : "", tokens[t]);
        else
            n += (size_t)snprintf(json + n, cap - n, "%s\"t%d\"", t ? ", " : "", t);
    }
    n += (size_t)snprintf(json + n, cap - n, "], \"x\": [");
    for (int t = 0; t < T; t++)
        n += (size_t)snprintf(json + n, cap - n, "%s[%g, %g, %g, %g]", t ? ", " : "", sin(t * 1.3),
                              cos(t * 0.7), sin(t * 0.31 + 1), 0.5);
    const char *w = "[[1.5, 0.2, -0.3, 0.8], [0.1, -1.2, 0.7, 0.3], [-0.4, 0.6, 1.1, -0.9], [0.9, 0.3, -0.2, 1.3]]";
    n += (size_t)snprintf(json + n, cap - n, "], \"W_q\": %s, \"W_k\": %s, \"W_v\": %s, \"W_o\": %s}", w, w, w, w);
    ck_assert_uint_lt(n, cap);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(input_parse(json, n, "test", NULL, in, err, sizeof err) == MHAVIZ_OK, "%s", err);
    free(json);
    Timing tm;
    timing_begin(&tm, 0);
    ck_assert_msg(variant_run(v, in, in->cfg.n_kv_heads, NULL, POOL_ALIGNED, -1, "test", &tm, err, sizeof err) == MHAVIZ_OK, "%s", err);
}

/* The page of v, as text; *len its length. */
static char *page_of(const Variant *v, size_t *len)
{
    char path[] = "/tmp/mhaviz-lesson-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const RenderColours colours = {draw_cmap("viridis"), "viridis", {222, 222, 222}, {196, 196, 196}, {70, 70, 70}};
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(lesson_page_write(path, v, 1, &colours, NULL, err, sizeof err) == MHAVIZ_OK, "%s", err);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    *len = (size_t)ftell(f);
    rewind(f);
    char *text = malloc(*len + 1);
    ck_assert_ptr_nonnull(text);
    ck_assert_uint_eq(fread(text, 1, *len, f), *len);
    text[*len] = '\0';
    fclose(f);
    unlink(path);
    return text;
}

/* The text of the script element with id, between its start tag's line and "</script>". */
static char *script_text(const char *page, const char *id, size_t *len)
{
    char open[96];
    snprintf(open, sizeof open, "id=\"%s\">\n", id);
    char *start = strstr(page, open);
    ck_assert_ptr_nonnull(start);
    start += strlen(open);
    const char *end = strstr(start, "\n</script>");
    ck_assert_ptr_nonnull(end);
    *len = (size_t)(end - start);
    return start;
}

static int base64_value(char c)
{
    const char *digits = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    const char *p = strchr(digits, c);
    return c && p ? (int)(p - digits) : -1;
}

/* Decode n base64 characters into a new buffer of *bytes bytes. */
static unsigned char *base64_decode(const char *s, size_t n, size_t *bytes)
{
    ck_assert_uint_eq(n % 4, 0);
    unsigned char *out = malloc(n / 4 * 3 + 1);
    ck_assert_ptr_nonnull(out);
    size_t k = 0;
    for (size_t i = 0; i < n; i += 4) {
        int v[4];
        for (int j = 0; j < 4; j++)
            v[j] = s[i + j] == '=' ? 0 : base64_value(s[i + j]);
        ck_assert(v[0] >= 0 && v[1] >= 0 && v[2] >= 0 && v[3] >= 0);
        const unsigned x = (unsigned)v[0] << 18 | (unsigned)v[1] << 12 | (unsigned)v[2] << 6 | (unsigned)v[3];
        out[k++] = (unsigned char)(x >> 16);
        if (s[i + 2] != '=')
            out[k++] = (unsigned char)(x >> 8);
        if (s[i + 3] != '=')
            out[k++] = (unsigned char)x;
    }
    *bytes = k;
    return out;
}

/* An IEEE half from its fields: (-1)^s 2^(e-15) (1 + m/1024), or 2^-14 m/1024 when e = 0. */
static double half_value(const unsigned char *p)
{
    const unsigned h = (unsigned)p[0] | (unsigned)p[1] << 8;
    const int e = (int)(h >> 10) & 31, m = (int)(h & 1023);
    const double x = e ? ldexp(1.0 + m / 1024.0, e - 15) : ldexp(m / 1024.0, -14);
    return h & 0x8000 ? -x : x;
}

static int within_half(double got, float want)
{
    return fabs(got - want) <= fmax(fabs(want) * ldexp(1.0, -11), ldexp(1.0, -25));
}

START_TEST(facts_keep_hostile_tokens_as_text)
{
    static const char *const tokens[] = {"</script><img src=x onerror=alert(1)>", "a&b", "x\xe2\x80\xa8y",
                                         "<!--", "\xe2\x80\xa9", "end"};
    MhaInput in = {0};
    Variant v = {0};
    make_layer(&in, &v, 6, tokens);
    size_t len, n;
    char *page = page_of(&v, &len);
    const char *facts = script_text(page, "facts", &n);
    for (size_t k = 0; k < n; k++) {
        ck_assert_msg(facts[k] != '<' && facts[k] != '>' && facts[k] != '&', "a raw '%c' in the facts", facts[k]);
        ck_assert_msg(!(k + 2 < n && memcmp(facts + k, "\xe2\x80", 2) == 0 &&
                        ((unsigned char)facts[k + 2] == 0xA8 || (unsigned char)facts[k + 2] == 0xA9)),
                      "a raw U+2028 or U+2029 in the facts");
    }
    cJSON *root = cJSON_ParseWithLength(facts, n);
    ck_assert_ptr_nonnull(root);
    const cJSON *toks = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    ck_assert_int_eq(cJSON_GetArraySize(toks), 6);
    int t = 0;
    const cJSON *tok;
    cJSON_ArrayForEach(tok, toks)
        ck_assert_str_eq(tok->valuestring, tokens[t++]);
    cJSON_Delete(root);
    free(page);
    variant_free(&v);
    input_free(&in);
}
END_TEST

START_TEST(words_come_from_the_c_side)
{
    static const char *const tokens[] = {"Mary", "a\\nb\\tc", "the", "Mary", "end"}; /* JSON text: a newline, a tab */
    MhaInput in = {0};
    Variant v = {0};
    make_layer(&in, &v, 5, tokens);
    size_t len, n;
    char *page = page_of(&v, &len);
    const char *facts = script_text(page, "facts", &n);
    cJSON *root = cJSON_ParseWithLength(facts, n);
    ck_assert_ptr_nonnull(root);
    const cJSON *labels = cJSON_GetObjectItemCaseSensitive(root, "token_labels");
    const cJSON *seen = cJSON_GetObjectItemCaseSensitive(root, "visible_keys");
    for (int t = 0; t < 5; t++) {
        char shown[64];
        ck_assert_str_eq(cJSON_GetArrayItem(labels, t)->valuestring, token_text(shown, sizeof shown, in.tokens[t]));
        ck_assert_int_eq((int)cJSON_GetArrayItem(seen, t)->valuedouble, mha_visible_keys(1, t, 5));
    }
    ck_assert_str_eq(cJSON_GetArrayItem(labels, 1)->valuestring, "a\\nb\\tc"); /* backslashes, no control byte */
    const cJSON *words = cJSON_GetObjectItemCaseSensitive(root, "words");
    const cJSON *rival = cJSON_GetObjectItemCaseSensitive(words, "rival");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(rival, "the")->valuestring, rival_name(0)->the);
    ck_assert(cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(rival, "built_from_heads")));
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(words, "shown_share")->valuedouble, MEASURES_SHOWN_SHARE);
    ck_assert_double_eq(cJSON_GetObjectItemCaseSensitive(words, "clear_margin")->valuedouble, LESSON_PAGE_CLEAR_MARGIN);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(words, "pattern_roles")), MEASURES_N_PATTERNS);
    const cJSON *plans = cJSON_GetObjectItemCaseSensitive(root, "labels"), *kind, *plan;
    int counted = 0;
    cJSON_ArrayForEach(kind, plans)
        cJSON_ArrayForEach(plan, kind) {
            ck_assert_double_ge(cJSON_GetObjectItemCaseSensitive(plan, "px")->valuedouble, LABELS_MIN_PX);
            /* 5 tokens, one of them repeated: the first, the last and 'Mary' always have a label */
            ck_assert_int_ge(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(plan, "shown")), 3);
            counted++;
        }
    ck_assert_int_gt(counted, 10);
    cJSON_Delete(root);
    free(page);
    variant_free(&v);
    input_free(&in);
}
END_TEST

START_TEST(every_cell_decodes_to_the_forward_pass)
{
    MhaInput in = {0};
    Variant v = {0};
    make_layer(&in, &v, 9, NULL);
    size_t len, n, bytes;
    char *page = page_of(&v, &len);
    ck_assert_ptr_nonnull(strstr(page, "\"mode\":\"full\""));
    const char *maps = script_text(page, "maps-data", &n);
    unsigned char *b = base64_decode(maps, n, &bytes);
    const int T = 9, H = 2, cells = T * (T + 1) / 2;
    /* (H + 1) maps, each its weights then its scores, row by row, the visible keys of each row */
    ck_assert_uint_eq(bytes, (size_t)(H + 1) * cells * 2 * 2);
    const unsigned char *p = b;
    int checked = 0;
    for (int m = 0; m <= H; m++)
        for (int which = 0; which < 2; which++) {
            const float *x = m < H ? (which ? v.multi.scores : v.multi.att) + (size_t)m * T * T
                                   : (which ? v.single.scores : v.single.att); /* (T, T) */
            for (int i = 0; i < T; i++)
                for (int j = 0; j <= i; j++, p += 2, checked++) {
                    /* a weight a half's rounding would put on 0.5 is one step off it (below) */
                    const int by_half = !which && fabs(x[i * T + j] - 0.5) < ldexp(1.0, -11);
                    ck_assert_msg(within_half(half_value(p), x[i * T + j]) ||
                                      (by_half && fabs(half_value(p) - x[i * T + j]) <= ldexp(1.0, -11)),
                                  "map %d %s (%d, %d): %g, not %g", m, which ? "score" : "weight", i, j,
                                  half_value(p), x[i * T + j]);
                }
        }
    ck_assert_int_eq(checked, (H + 1) * cells * 2);
    free(b);
    free(page);
    variant_free(&v);
    input_free(&in);
}
END_TEST

/* A weight keeps its side of one half, where the report counts a row's
 * half: lesson 1's wide head gives each John 0.49992 in row 7, which the
 * nearest half is 0.5 itself, read as "0.50" by the page; it is stored one
 * step below instead. Every weight of every map is on its side of 0.5. */
START_TEST(weights_keep_their_side_of_half)
{
    MhaInput in = {0};
    Variant v = {0};
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(input_load("samples/lesson1.json", &in, err, sizeof err) == MHAVIZ_OK, "%s", err);
    Timing tm;
    timing_begin(&tm, 0);
    ck_assert_msg(variant_run(&v, &in, in.cfg.n_kv_heads, NULL, POOL_ALIGNED, -1, "lesson1", &tm, err, sizeof err) == MHAVIZ_OK,
                  "%s", err);
    const int T = in.cfg.T, H = in.cfg.n_heads, cells = T * (T + 1) / 2;
    ck_assert_float_lt(v.single.att[7 * T + 7], 0.5f);
    ck_assert_float_gt(v.single.att[7 * T + 7], 0.4999f);
    size_t len, n, bytes;
    char *page = page_of(&v, &len);
    const char *maps = script_text(page, "maps-data", &n);
    unsigned char *b = base64_decode(maps, n, &bytes);
    ck_assert_uint_eq(bytes, (size_t)(H + 1) * cells * 2 * 2);
    const unsigned char *p = b;
    for (int m = 0; m <= H; m++, p += 2 * cells) /* each map's weights, then its scores (skipped) */
        for (int i = 0; i < T; i++)
            for (int j = 0; j <= i; j++, p += 2) {
                const float w = (m < H ? v.multi.att + (size_t)m * T * T : v.single.att)[i * T + j];
                const double got = half_value(p);
                ck_assert_msg((got < 0.5) == (w < 0.5f) && (got > 0.5) == (w > 0.5f),
                              "map %d (%d, %d): %.6f stored as %.6f", m, i, j, w, got);
                ck_assert(fabs(got - w) <= ldexp(1.0, -11));
            }
    free(b);
    free(page);
    variant_free(&v);
    input_free(&in);
}
END_TEST

/* T = 1800: (2 + 1) maps of 1.6 M visible cells, 4 bytes each, are 26 MB
 * in base64, past the 16 MiB cap. */
START_TEST(past_the_cap_a_summary)
{
    MhaInput in = {0};
    Variant v = {0};
    const int T = 1800, H = 2;
    make_layer(&in, &v, T, NULL);
    size_t len, n, bytes;
    char *page = page_of(&v, &len);
    ck_assert_uint_le(len, LESSON_PAGE_CAP_BYTES);
    ck_assert_ptr_nonnull(strstr(page, "\"mode\":\"summary\",\"thumb\":256,\"top_k\":8"));
    const char *maps = script_text(page, "maps-data", &n);
    unsigned char *b = base64_decode(maps, n, &bytes);
    const size_t per_map = 256 * 256 + (size_t)T * 8 * 6;
    ck_assert_uint_eq(bytes, (H + 1) * per_map);
    for (int m = 0; m <= H; m++) {
        const float *att = m < H ? v.multi.att + (size_t)m * T * T : v.single.att; /* (T, T) */
        const unsigned char *rows = b + m * per_map + 256 * 256;
        for (int i = 0; i < T; i += 97) {
            const unsigned char *r = rows + (size_t)i * 8 * 6;
            const int key = r[0] | r[1] << 8;
            int top = 0;
            for (int j = 1; j <= i; j++)
                if (att[(size_t)i * T + j] > att[(size_t)i * T + top])
                    top = j;
            ck_assert_int_eq(key, top);
            ck_assert(within_half(half_value(r + 16), att[(size_t)i * T + top]));
        }
    }
    free(b);
    free(page);
    variant_free(&v);
    input_free(&in);
}
END_TEST

/* The cap from both sides, with 2 heads and the wide head (3 maps of
 * T (T + 1) / 2 visible cells, 4 bytes a cell: 6 T (T + 1) bytes, 8 T (T + 1)
 * in base64):
 *   - T = 1380: 15.2 MB of base64, the page under the 16 MiB cap (16.8 MB)
 *     with every cell, and more than nine tenths of it (a cap moved down
 *     by a tenth, or the page summarised early, fails);
 *   - T = 1500: 18.0 MB of base64 (13.5 MB before it, under the cap): the
 *     summary, the page under the cap (a page measured before base64 would
 *     keep every cell and pass the cap). */
START_TEST(cap_held_from_both_sides)
{
    static const struct {
        int T;
        const char *mode;
    } cases[2] = {{1380, "\"mode\":\"full\""}, {1500, "\"mode\":\"summary\""}};
    for (int c = 0; c < 2; c++) {
        MhaInput in = {0};
        Variant v = {0};
        make_layer(&in, &v, cases[c].T, NULL);
        size_t len;
        char *page = page_of(&v, &len);
        ck_assert_msg(strstr(page, cases[c].mode), "T = %d: not %s", cases[c].T, cases[c].mode);
        ck_assert_uint_le(len, LESSON_PAGE_CAP_BYTES);
        if (c == 0)
            ck_assert_uint_gt(len, LESSON_PAGE_CAP_BYTES / 10 * 9);
        free(page);
        variant_free(&v);
        input_free(&in);
    }
}
END_TEST

/* Two layers (the same numbers: their order is in their "layer") as the
 * model run writes them; the maps' bytes are two layers' worth, the second
 * layer's the same as the first's. */
START_TEST(a_page_of_several_layers)
{
    MhaInput in = {0}, in5 = {0};
    Variant v = {0}, v5 = {0};
    make_layer(&in, &v, 9, NULL);
    make_layer(&in5, &v5, 5, NULL);
    char path[] = "/tmp/mhaviz-lesson-XXXXXX";
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
    const RenderColours colours = {draw_cmap("viridis"), "viridis", {222, 222, 222}, {196, 196, 196}, {70, 70, 70}};
    char err[MHAVIZ_ERRLEN] = "";
    const LessonModel model = {"tiny", NULL};

    LessonPage *pg = lesson_page_begin(2, &colours, NULL);
    ck_assert_ptr_nonnull(pg);
    ck_assert_int_eq(lesson_page_add(pg, &v, 3, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(lesson_page_finish(pg, path, &model, err, sizeof err), MHAVIZ_EINPUT); /* 1 of 2 */
    ck_assert_ptr_nonnull(strstr(err, "1 of its 2"));
    ck_assert_int_eq(lesson_page_add(pg, &v5, 4, err, sizeof err), MHAVIZ_EINPUT); /* 5 tokens beside 9 */
    ck_assert_ptr_nonnull(strstr(err, "lesson.html"));
    ck_assert_int_eq(lesson_page_add(pg, &v, 7, err, sizeof err), MHAVIZ_OK);
    ck_assert_msg(lesson_page_finish(pg, path, &model, err, sizeof err) == MHAVIZ_OK, "%s", err);
    lesson_page_free(pg);

    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    const size_t len = (size_t)ftell(f);
    rewind(f);
    char *page = malloc(len + 1);
    ck_assert_ptr_nonnull(page);
    ck_assert_uint_eq(fread(page, 1, len, f), len);
    page[len] = '\0';
    fclose(f);
    unlink(path);

    size_t n, bytes;
    const char *facts = script_text(page, "facts", &n);
    cJSON *root = cJSON_ParseWithLength(facts, n);
    ck_assert_ptr_nonnull(root);
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(root, "title")->valuestring, "tiny");
    const cJSON *vars = cJSON_GetObjectItemCaseSensitive(root, "variants");
    ck_assert_int_eq(cJSON_GetArraySize(vars), 2);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(vars, 0), "layer")->valuedouble, 3);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(vars, 1), "layer")->valuedouble, 7);
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(m, "effects")));
    const cJSON *roles = cJSON_GetObjectItemCaseSensitive(m, "roles");
    ck_assert_int_eq(cJSON_GetArraySize(roles), MEASURES_NONE + 1);
    for (int k = 0; k <= MEASURES_NONE; k++) {
        DrawRgb col;
        const char *letter = model_overview_role((MeasuresRole)k, &col);
        const cJSON *r = cJSON_GetObjectItemCaseSensitive(roles, measures_role_name((MeasuresRole)k));
        ck_assert_ptr_nonnull(r);
        ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(r, "letter")->valuestring, letter);
        const cJSON *rgb = cJSON_GetObjectItemCaseSensitive(r, "colour");
        ck_assert_int_eq((int)cJSON_GetArrayItem(rgb, 0)->valuedouble, col.r);
        ck_assert_int_eq((int)cJSON_GetArrayItem(rgb, 1)->valuedouble, col.g);
        ck_assert_int_eq((int)cJSON_GetArrayItem(rgb, 2)->valuedouble, col.b);
    }
    const char *maps = script_text(page, "maps-data", &n);
    unsigned char *b = base64_decode(maps, n, &bytes);
    const size_t one = (size_t)(2 + 1) * (9 * 10 / 2) * 2 * 2; /* (H + 1) maps, weights and scores, float16 */
    ck_assert_uint_eq(bytes, 2 * one);
    ck_assert(memcmp(b, b + one, one) == 0);
    free(b);
    cJSON_Delete(root);
    free(page);
    variant_free(&v);
    variant_free(&v5);
    input_free(&in);
    input_free(&in5);
}
END_TEST

Suite *lesson_page_suite(void)
{
    Suite *s = suite_create("lesson_page");
    TCase *tc = tcase_create("page");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, facts_keep_hostile_tokens_as_text);
    tcase_add_test(tc, words_come_from_the_c_side);
    tcase_add_test(tc, every_cell_decodes_to_the_forward_pass);
    tcase_add_test(tc, weights_keep_their_side_of_half);
    tcase_add_test(tc, past_the_cap_a_summary);
    tcase_add_test(tc, cap_held_from_both_sides);
    tcase_add_test(tc, a_page_of_several_layers);
    suite_add_tcase(s, tc);
    return s;
}
