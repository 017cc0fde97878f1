/* check_input.c — the loader: good inputs load with the right numbers, and
 * every kind of bad input is refused with MHAVIZ_EINPUT and a message that
 * names the place.
 *
 * The files are under tests/data/ (good/, bad/, npy/); the tests run from the
 * repository root (as `make test` does). The .npy files are made by
 * tests/data/make_npy.py. Expected numbers are the ones written in those
 * files, or derived in the comment beside the check. */
#include "io/input.h"
#include "core/status.h"

#include <check.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DATA "tests/data/"

/* small_x.json's W_q, as written in the file ("x@W": row p = input feature p). */
static const float SMALL_W_q[16] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void load_ok(const char *file, MhaInput *in)
{
    char err[MHAVIZ_ERRLEN] = "";
    int rc = input_load(file, in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "%s: rc %d: %s", file, rc, err);
}

static void assert_floats(const float *got, const float *want, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == want[i], "%s[%d] = %g, expected %g", what, i, got[i], want[i]);
}

static void assert_zeros(const float *got, int n, const char *what)
{
    for (int i = 0; i < n; i++)
        ck_assert_msg(got[i] == 0.0f, "%s[%d] = %g, expected 0", what, i, got[i]);
}

static const float EYE4[16] = {1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1, 0, 0, 0, 0, 1};
static const float HALF_EYE4[16] = {0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5, 0, 0, 0, 0, 0.5};

/* The layer of small_x.json, whichever way it was given. */
static void assert_small_layer(const MhaInput *in)
{
    ck_assert_int_eq(in->cfg.T, 4);
    ck_assert_int_eq(in->cfg.d_model, 4);
    ck_assert_int_eq(in->cfg.n_heads, 2);
    ck_assert_int_eq(in->cfg.n_kv_heads, 2); /* default: n_heads */
    ck_assert_int_eq(in->cfg.head_dim, 2);
    ck_assert_int_eq(in->cfg.causal, 1);
    assert_floats(in->x, EYE4, 16, "x");
    assert_floats(in->w.W_q, SMALL_W_q, 16, "W_q");
    assert_floats(in->w.W_k, HALF_EYE4, 16, "W_k");
    assert_floats(in->w.W_v, EYE4, 16, "W_v");
    assert_floats(in->w.W_o, EYE4, 16, "W_o");
}

START_TEST(small_x_loads)
{
    MhaInput in;
    load_ok(DATA "good/small_x.json", &in);
    assert_small_layer(&in);
    ck_assert_str_eq(in.tokens[0], "the");
    ck_assert_str_eq(in.tokens[3], "down");
    ck_assert_int_eq(in.w.has_bias, 0);
    assert_zeros(in.w.b_q, 4, "b_q");
    assert_zeros(in.w.b_k, 4, "b_k");
    assert_zeros(in.w.b_v, 4, "b_v");
    assert_zeros(in.w.b_o, 4, "b_o");
    ck_assert_int_eq(in.has_single, 0);
    ck_assert_ptr_null(in.warnings); /* "comment" is a known key */
    input_free(&in);
    input_free(&in); /* freeing twice is safe: input_free zeroes */
}
END_TEST

/* GQA in the "W@x" layout: the file gives W_k as 2 rows (kv_dim) of 4
 * (d_model); loaded, W_k is (d_model, kv_dim) = the file's transpose. */
START_TEST(w_at_x_is_transposed)
{
    MhaInput in;
    load_ok(DATA "good/gqa_w_at_x.json", &in);
    ck_assert_int_eq(in.cfg.n_kv_heads, 1);
    ck_assert_int_eq(in.cfg.causal, 0);
    const float W_q[16] = {1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 4, 8, 12, 16};
    const float W_k[8] = {1, 5, 2, 6, 3, 7, 4, 8};      /* (4, 2) */
    const float W_v[8] = {-1, -5, -2, -6, -3, -7, -4, -8};
    const float W_o[16] = {0, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 1, 0, 0, 0}; /* symmetric */
    const float x[12] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12}; /* x is never transposed */
    const float b_k[2] = {0.5f, -0.5f};
    assert_floats(in.w.W_q, W_q, 16, "W_q");
    assert_floats(in.w.W_k, W_k, 8, "W_k");
    assert_floats(in.w.W_v, W_v, 8, "W_v");
    assert_floats(in.w.W_o, W_o, 16, "W_o");
    assert_floats(in.x, x, 12, "x");
    assert_floats(in.w.b_k, b_k, 2, "b_k");
    ck_assert_int_eq(in.w.has_bias, 1);
    input_free(&in);
}
END_TEST

/* tokens a b a été, d_model 4, embeddings a = 0, b = 1, été = 0.5.
 * PE(t, 2i) = sin(t / 10000^(2i/4)), PE(t, 2i+1) = cos(same):
 *   column 0, 1 (i = 0): angle t;  column 2, 3 (i = 1): angle t / 10000^(1/2) = t / 100.
 *   t = 0: (sin 0, cos 0, sin 0, cos 0) = (0, 1, 0, 1)
 *   t = 1: (sin 1, cos 1, sin 0.01, cos 0.01) = (0.8414710, 0.5403023, 0.0099998, 0.9999500)
 *   t = 2: (sin 2, cos 2, sin 0.02, cos 0.02) = (0.9092974, -0.4161468, 0.0199987, 0.9998000)
 *   t = 3: (sin 3, cos 3, sin 0.03, cos 0.03) = (0.1411200, -0.9899925, 0.0299955, 0.9995500)
 * (values to 7 places from a calculator; x = embedding + PE). */
START_TEST(embeddings_sinusoidal)
{
    MhaInput in;
    load_ok(DATA "good/embeddings_sinusoidal.json", &in);
    const double want[4][4] = {
        {0 + 0, 0 + 1, 0 + 0, 0 + 1},
        {1 + 0.8414710, 1 + 0.5403023, 1 + 0.0099998, 1 + 0.9999500},
        {0 + 0.9092974, 0 - 0.4161468, 0 + 0.0199987, 0 + 0.9998000},
        {0.5 + 0.1411200, 0.5 - 0.9899925, 0.5 + 0.0299955, 0.5 + 0.9995500},
    };
    for (int t = 0; t < 4; t++)
        for (int j = 0; j < 4; j++)
            ck_assert_double_eq_tol(in.x[t * 4 + j], want[t][j], 1e-6);
    ck_assert_str_eq(in.tokens[3], "\xc3\xa9t\xc3\xa9");
    ck_assert_ptr_null(in.warnings);
    input_free(&in);
}
END_TEST

START_TEST(embeddings_no_positions)
{
    MhaInput in;
    load_ok(DATA "good/embeddings_none.json", &in);
    const float want[16] = {0, 0, 0, 0, 1, 1, 1, 1, 0, 0, 0, 0, 0.5, 0.5, 0.5, 0.5};
    assert_floats(in.x, want, 16, "x");
    input_free(&in);
}
END_TEST

START_TEST(biases_and_single_head)
{
    MhaInput in;
    load_ok(DATA "good/bias_single_head.json", &in);
    const float b_q[4] = {1, 2, 3, 4}, b_o[4] = {-1, -2, -3, -4};
    ck_assert_int_eq(in.w.has_bias, 1);
    assert_floats(in.w.b_q, b_q, 4, "b_q");
    assert_zeros(in.w.b_k, 4, "b_k"); /* not given: zeros */
    assert_zeros(in.w.b_v, 4, "b_v");
    assert_floats(in.w.b_o, b_o, 4, "b_o");
    ck_assert_int_eq(in.has_single, 1);
    /* single_head.W_q is small_x's W_q transposed, written out in the file */
    const float sW_q[16] = {1, 5, 9, 13, 2, 6, 10, 14, 3, 7, 11, 15, 4, 8, 12, 16};
    const float sb_v[4] = {0.1f, 0.2f, 0.3f, 0.4f};
    assert_floats(in.single.W_q, sW_q, 16, "single.W_q");
    assert_floats(in.single.W_k, HALF_EYE4, 16, "single.W_k");
    assert_floats(in.single.b_v, sb_v, 4, "single.b_v");
    assert_zeros(in.single.b_q, 4, "single.b_q");
    ck_assert_int_eq(in.single.has_bias, 1);
    input_free(&in);
}
END_TEST

/* The same layer as small_x.json from .npy files: float32 and float64,
 * header versions 1.0, 2.0 and 3.0, and a bias vector. */
START_TEST(npy_layer)
{
    MhaInput in;
    load_ok(DATA "good/npy_layer.json", &in);
    assert_small_layer(&in);
    const float b_q[4] = {0.25f, -0.5f, 1.0f, 2.0f};
    assert_floats(in.w.b_q, b_q, 4, "b_q");
    input_free(&in);
    load_ok(DATA "good/npy_w_at_x.json", &in); /* W_q_T.npy transposed back on load */
    assert_small_layer(&in);
    input_free(&in);
}
END_TEST

/* The next mapping of a file in /proc/self/maps (open as maps): its
 * addresses [*lo, *hi) and the file's name after the last '/' into name
 * (n bytes). 0 at the end. */
static int next_file_mapping(FILE *maps, uintptr_t *lo, uintptr_t *hi, char *name, size_t n)
{
    char line[4096];
    while (fgets(line, sizeof line, maps)) {
        unsigned long l, h;
        int at = 0;
        if (sscanf(line, "%lx-%lx %*s %*s %*s %*s %n", &l, &h, &at) != 2 || !at || line[at] != '/')
            continue; /* anonymous memory, [heap], [stack] */
        line[strcspn(line, "\n")] = '\0';
        snprintf(name, n, "%s", strrchr(line + at, '/') + 1);
        *lo = l, *hi = h;
        return 1;
    }
    return 0;
}

/* Whether a is read in place from the .npy file named name (it lies in
 * that file's mapping), or is memory of the program's own. */
static void assert_mapped(const float *a, const char *name, int mapped)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(maps);
    char file[256], found[256] = "";
    uintptr_t lo, hi;
    while (next_file_mapping(maps, &lo, &hi, file, sizeof file))
        if ((uintptr_t)a >= lo && (uintptr_t)a < hi)
            snprintf(found, sizeof found, "%s", file);
    fclose(maps);
    ck_assert_msg((strcmp(found, name) == 0) == mapped, "%s: expected %s, found in \"%s\"", name,
                  mapped ? "in its file's mapping" : "a copy", found);
}

/* No mapping of the file named name is left. */
static void assert_unmapped(const char *name)
{
    FILE *maps = fopen("/proc/self/maps", "r");
    ck_assert_ptr_nonnull(maps);
    char file[256];
    uintptr_t lo, hi;
    while (next_file_mapping(maps, &lo, &hi, file, sizeof file))
        ck_assert_msg(strcmp(file, name) != 0, "%s: still mapped", name);
    fclose(maps);
}

/* float32 files in C order are read in place: x, W_k (header version 2.0),
 * W_v (3.0), W_o and b_q point into their files, mapped; W_q (float64) is
 * converted into a copy. Freeing the input unmaps the files. */
START_TEST(npy_float32_read_in_place)
{
    MhaInput in;
    load_ok(DATA "good/npy_layer.json", &in);
    assert_small_layer(&in);
    const float b_q[4] = {0.25f, -0.5f, 1.0f, 2.0f};
    assert_floats(in.w.b_q, b_q, 4, "b_q");
    assert_mapped(in.x, "x.npy", 1);
    assert_mapped(in.w.W_k, "W_k.npy", 1);
    assert_mapped(in.w.W_v, "W_v.npy", 1);
    assert_mapped(in.w.W_o, "W_o.npy", 1);
    assert_mapped(in.w.b_q, "b_q.npy", 1);
    assert_mapped(in.w.W_q, "W_q.npy", 0);
    ck_assert_int_eq(in.n_maps, 5);
    input_free(&in);
    const char *files[] = {"x.npy", "W_k.npy", "W_v.npy", "W_o.npy", "b_q.npy"};
    for (int i = 0; i < 5; i++)
        assert_unmapped(files[i]);
}
END_TEST

/* A float32 file that needs changing is copied, with the same numbers as
 * read in place: transposed ("W@x"), or with its data at an offset that is
 * not a multiple of 4 bytes (W_o_odd_header.npy: 70). */
START_TEST(npy_copied_when_not_as_is)
{
    MhaInput in;
    load_ok(DATA "good/npy_w_at_x.json", &in);
    assert_small_layer(&in);
    assert_mapped(in.w.W_q, "W_q_T.npy", 0);
    ck_assert_int_eq(in.n_maps, 0);
    input_free(&in);

    load_ok(DATA "good/npy_odd_header.json", &in);
    assert_small_layer(&in);
    assert_mapped(in.w.W_o, "W_o_odd_header.npy", 0);
    assert_mapped(in.w.W_v, "W_v.npy", 1);
    ck_assert_int_eq(in.n_maps, 4); /* x, W_k, W_v, b_q */
    input_free(&in);
}
END_TEST

/* A bad number in a mapped file is refused as in a copied one, and leaves
 * nothing mapped: the files read before it are unmapped with the input. */
START_TEST(npy_refused_file_leaves_nothing_mapped)
{
    char dir[] = "tests/data/bad";
    const char *text = "{\"tokens\": [\"a\", \"b\", \"c\", \"d\"], \"d_model\": 4, \"n_heads\": 2,"
                       " \"x\": \"../npy/x.npy\", \"W_q\": \"../npy/W_o.npy\", \"W_k\": \"../npy/nan.npy\","
                       " \"W_v\": \"../npy/W_v.npy\", \"W_o\": \"../npy/W_o.npy\"}";
    MhaInput in;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", dir, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: W_k: tests/data/bad/../npy/nan.npy: element [2, 1] is not a finite number"),
                  "%s", err);
    assert_unmapped("x.npy");
    assert_unmapped("W_o.npy");
    assert_unmapped("nan.npy");
    input_free(&in);
}
END_TEST

START_TEST(unknown_key_warns_with_suggestion)
{
    const char *text =
        "{\"tokens\": [\"a\"], \"d_model\": 1, \"n_heads\": 1, \"x\": [[1]],"
        " \"W_q\": [[1]], \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]],"
        " \"casual\": false, \"B_o\": [1], \"zebra\": 3,"
        " \"single_head\": {\"W_q\": [[1]], \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]], \"W_V\": 0}}";
    MhaInput in;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_OK);
    ck_assert_ptr_nonnull(in.warnings);
    ck_assert_msg(strstr(in.warnings, "\"casual\" ignored (did you mean \"causal\"?)"), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, "\"B_o\" ignored (did you mean \"b_o\"?)"), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, "\"zebra\" ignored\n"), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, "\"single_head.W_V\" ignored (did you mean \"single_head.W_v\"?)"),
                  "%s", in.warnings);
    ck_assert_int_eq(in.cfg.causal, 1); /* the misspelt key did nothing */
    input_free(&in);
}
END_TEST

/* A missing W_q next to an unknown W_Q: the error, and the warning that explains it. */
START_TEST(warning_kept_on_failure)
{
    MhaInput in;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(input_load(DATA "bad/W_Q_typo.json", &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "missing \"W_q\""), "%s", err);
    ck_assert_ptr_nonnull(in.warnings);
    ck_assert_msg(strstr(in.warnings, "did you mean \"W_q\"?"), "%s", in.warnings);
    ck_assert_ptr_null(in.x);
    input_free(&in);
}
END_TEST

/* 16 unknown keys: the first 10 named (a long one cut at a character
 * boundary), the rest counted; the run goes on. */
START_TEST(unknown_keys_capped)
{
    MhaInput in;
    load_ok(DATA "good/many_unknown_keys.json", &in);
    int lines = 0;
    for (const char *p = in.warnings; *p; p++)
        lines += *p == '\n';
    ck_assert_int_eq(lines, 11);
    /* 57 bytes of two-byte characters: cut back to 56 (28 x U+00E9), then "..." */
    char key[96] = "";
    for (int i = 0; i < 28; i++)
        strcat(key, "\xc3\xa9");
    strcat(key, "...\" ignored\n");
    ck_assert_msg(strstr(in.warnings, key), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, "unknown key \"extra8\" ignored\n"), "%s", in.warnings);
    ck_assert_msg(!strstr(in.warnings, "extra9"), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, ": 6 more unknown keys ignored\n"), "%s", in.warnings);
    input_free(&in);
}
END_TEST

/* Invalid UTF-8 in a token is shown with U+FFFD (EF BF BD) and a warning. */
START_TEST(invalid_utf8_replaced)
{
    MhaInput in;
    load_ok(DATA "good/invalid_utf8_token.json", &in);
    ck_assert_str_eq(in.tokens[0], "ok");
    ck_assert_str_eq(in.tokens[1], "bad\xEF\xBF\xBD\xEF\xBF\xBD"); /* FF FE: two bad bytes */
    ck_assert_str_eq(in.tokens[2], "caf\xEF\xBF\xBD");              /* C3 cut short */
    ck_assert_msg(strstr(in.warnings, "tokens[1]: 2 bytes of invalid UTF-8"), "%s", in.warnings);
    ck_assert_msg(strstr(in.warnings, "tokens[2]: 1 byte of invalid UTF-8"), "%s", in.warnings);
    input_free(&in);
}
END_TEST

/* The optional "title": kept as given; invalid UTF-8 replaced with a
 * warning; absent = NULL; a wrong type or an over-long one named. */
START_TEST(title_optional_key)
{
    const char *layer = "\"tokens\": [\"a\"], \"d_model\": 1, \"n_heads\": 1, \"x\": [[1]],"
                        " \"W_q\": [[1]], \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]]";
    char text[1024], err[MHAVIZ_ERRLEN];
    MhaInput in;
    snprintf(text, sizeof text, "{%s, \"title\": \"random, untrained weights\"}", layer);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_OK);
    ck_assert_str_eq(in.title, "random, untrained weights");
    ck_assert_ptr_null(in.warnings); /* a known key */
    input_free(&in);

    snprintf(text, sizeof text, "{%s}", layer);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_OK);
    ck_assert_ptr_null(in.title);
    input_free(&in);

    snprintf(text, sizeof text, "{%s, \"title\": \"caf\xc3\"}", layer);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_OK);
    ck_assert_str_eq(in.title, "caf\xEF\xBF\xBD");
    ck_assert_msg(in.warnings && strstr(in.warnings, "title: 1 byte of invalid UTF-8"), "%s",
                  in.warnings ? in.warnings : "(none)");
    input_free(&in);

    snprintf(text, sizeof text, "{%s, \"title\": 3}", layer);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "title: expected a string, got a number"), "%s", err);
    input_free(&in);

    /* INPUT_MAX_TITLE_BYTES passes, one byte more fails */
    char title[INPUT_MAX_TITLE_BYTES + 2];
    memset(title, 'x', sizeof title - 1);
    title[INPUT_MAX_TITLE_BYTES] = '\0';
    snprintf(text, sizeof text, "{%s, \"title\": \"%s\"}", layer, title);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_OK);
    input_free(&in);
    title[INPUT_MAX_TITLE_BYTES] = 'x';
    title[INPUT_MAX_TITLE_BYTES + 1] = '\0';
    snprintf(text, sizeof text, "{%s, \"title\": \"%s\"}", layer, title);
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", NULL, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "title: 201 bytes is over the limit of 200"), "%s", err);
    ck_assert_ptr_null(in.title);
    input_free(&in);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad files: exit status 1 and the place named.                            */

typedef struct {
    const char *file;  /* under tests/data/bad/ */
    const char *place; /* must appear in the message */
} BadCase;

static const BadCase BAD[] = {
    {"empty.json", "the file is empty"},
    /* JSON syntax: line:column of the mistake itself (1-based; columns count
     * characters), checked by hand in each file: the comma, the quote, the
     * first letter of the word, or for a missing ',' or ':' the place right
     * after the item where it belongs. */
    {"truncated.json", "truncated.json:65:8: the file ends in the middle of the JSON (truncated file?): "
                       "the '[' opened at 64:3 is not closed"},
    {"truncated_in_string.json", "truncated_in_string.json:4:28: this string never ends: the file ends inside "
                                 "it (truncated file"},
    {"syntax_missing_comma.json", "syntax_missing_comma.json:8:14: missing ',' between items (after line 8, "
                                  "before line 9)"},
    {"missing_comma_in_row.json", "missing_comma_in_row.json:11:30: missing ',' between items"},
    {"trailing_junk.json", "trailing_junk.json:142:1: more text after the end of the JSON (its last '}' is at 141:1)"},
    {"nan_literal.json", "nan_literal.json:91:4: NaN is not a JSON number"},
    {"infinity.json", "infinity.json:12:12: Infinity is not a JSON number"},
    {"trailing_comma_object.json", "trailing_comma_object.json:14:66: trailing comma after the last item "
                                   "(JSON allows none): remove it"},
    {"trailing_comma_array.json", "trailing_comma_array.json:3:41: trailing comma after the last item"},
    {"single_quotes.json", "single_quotes.json:3:14: strings and keys need double quotes, not single"},
    {"python_true.json", "python_true.json:6:13: 'True' is Python; JSON writes true"},
    {"comment_line.json", "comment_line.json:4:18: comments are not allowed in JSON"},
    {"comment_block.json", "comment_block.json:2:3: comments are not allowed in JSON"},
    {"unquoted_key.json", "unquoted_key.json:5:3: keys must be strings in double quotes: write \"n_heads\""},
    {"missing_colon.json", "missing_colon.json:4:12: missing ':' after the key \"d_model\""},
    {"wrong_bracket.json", "wrong_bracket.json:9:20: '}' does not close the '[' opened at 9:9: expected ']'"},
    {"nul_byte.json", "nul_byte.json:4:5: a NUL byte"},
    {"nul_escape_in_token.json", "nul_escape_in_token.json:3:23: \\u0000 (a NUL character) in a string"},
    {"deep_nesting.json", "deep_nesting.json:1:43: arrays and objects nested more than 32 deep"},
    {"top_level_array.json", "expected a JSON object"},
    {"duplicate_key.json", "d_model: given twice"},
    {"missing_tokens.json", "missing \"tokens\""},
    {"tokens_not_strings.json", "tokens[1]: expected a string, got a number"},
    {"tokens_empty.json", "tokens: the array is empty"},
    {"too_many_tokens.json", "tokens: 5000 tokens is over the limit of 4096"},
    {"d_model_fraction.json", "d_model: expected a whole number, got 4.5"},
    {"d_model_string.json", "d_model: expected a whole number, got a string"},
    {"d_model_huge.json", "d_model: 1000000000000 is over the limit"},
    {"n_heads_negative.json", "n_heads: must be at least 1, got -2"},
    {"n_heads_not_divisor.json", "n_heads: 3 does not divide d_model = 4"},
    {"n_kv_heads_zero.json", "n_kv_heads: must be at least 1, got 0"},
    {"n_kv_heads_not_divisor.json", "n_kv_heads: 3 does not divide n_heads = 4"},
    {"causal_number.json", "causal: expected true or false, got a number"},
    {"layout_unknown.json", "weight_layout: expected \"x@W\" or \"W@x\", got \"xW\""},
    {"missing_W_v.json", "missing \"W_v\" (4 x 4: d_model by d_model)"},
    {"W_Q_typo.json", "missing \"W_q\""},
    {"ragged_W_k.json", "W_k: row 3 has 3 numbers, expected 4 (d_model)"},
    {"W_o_short.json", "W_o: has 3 rows, expected 4 (d_model)"},
    {"row_not_array.json", "W_q: row 1 is a number, expected an array of 4 numbers"},
    {"w_at_x_not_transposed.json", "W_k: has 4 rows, expected 2 (n_kv_heads x head_dim, as weight_layout is \"W@x\")"},
    {"x_wrong_rows.json", "x: has 3 rows, expected 4 (T, the number of tokens)"},
    {"x_string_number.json", "x: row 2, column 1: expected a number, got a string"},
    {"overflow_double.json", "W_v: row 0, column 0: not a finite number"},
    {"overflow_float.json", "W_v: row 0, column 0: 1e+39 is too large for a float"},
    {"bias_wrong_length.json", "b_k: has 3 numbers, expected 4"},
    {"x_and_embeddings.json", "both \"x\" and \"embeddings\" given"},
    {"neither_x_nor_embeddings.json", "missing the hidden states"},
    {"positional_with_x.json", "positional: only applies to \"embeddings\""},
    {"positional_unknown.json", "positional: expected \"sinusoidal\" or \"none\", got \"learned\""},
    {"embeddings_not_object.json", "embeddings: expected an object"},
    {"token_missing_embedding.json", "embeddings: no entry for token 3 \"down\""},
    {"embedding_wrong_length.json", "embeddings[\"sat\"]: has 3 numbers, expected 4 (d_model)"},
    {"embedding_duplicate.json", "embeddings[\"a\"]: given twice"},
    {"single_head_not_object.json", "single_head: expected an object"},
    {"single_head_missing_W_v.json", "missing \"single_head.W_v\""},
    {"single_head_wrong_shape.json", "single_head.W_v: row 0 has 2 numbers, expected 4 (d_model)"},
    {"W_q_object.json", "W_q: expected 4 rows (d_model) of 4 numbers (d_model), or a .npy file name; got an object"},
    {"x_nested_number.json", "x: row 0, column 1: expected a number, got an array"},
    {"tokens_string.json", "tokens: expected an array of strings, got a string"},
    {"bias_object.json", "b_o: expected an array of 4 numbers (d_model), got an object"},
    {"causal_string.json", "causal: expected true or false, got a string"},
    {"d_model_null.json", "d_model: expected a whole number, got null"},
    {"npy_wrong_shape.json", "W_k: tests/data/bad/../npy/W_k_4x3.npy: shape (4, 3) (expected shape (4, 4)"},
    {"npy_big_endian.json", "W_k: tests/data/bad/../npy/big_endian.npy: dtype '>f4' is not supported"},
    {"npy_int32.json", "W_v: tests/data/bad/../npy/int32.npy: dtype '<i4' is not supported"},
    {"npy_fortran.json", "W_o: tests/data/bad/../npy/fortran.npy: Fortran order is not supported"},
    {"npy_nan.json", "W_k: tests/data/bad/../npy/nan.npy: element [2, 1] is not a finite number"},
    {"npy_too_big.json", "W_k: tests/data/bad/../npy/too_big.npy: element [1, 3] is too large for a float"},
    {"npy_truncated.json", "W_q: tests/data/bad/../npy/truncated.npy: 58 bytes of data, but shape (4, 4) of float32 needs 64 (truncated file?)"},
    {"npy_not_npy.json", "x: tests/data/bad/../npy/not_npy.npy: not a .npy file"},
    {"npy_claims_1024.json", "x: tests/data/bad/missing_x.npy: cannot open: No such file or directory"},
    {"npy_missing.json", "W_v: tests/data/bad/../npy/no_such_file.npy: cannot open"},
    {"training_without_single_head.json", "training: describes a \"single_head\" trained on its own, and this input has none"},
    {"training_seed_not_listed.json", "training.seed: 4 is not one of training.seeds"},
    {"training_losses_short.json", "training.held_out_loss.single_head: 2 numbers for 3 seeds"},
    {"training_loss_negative.json", "training.held_out_loss.heads[1]: expected a loss in nats (a number >= 0), got -0.1"},
    {"training_seed_twice.json", "training.seeds[1]: seed 1 is already seeds[0]"},
    {"training_steps_zero.json", "training.steps: expected a whole number >= 1 (training steps, the same for both models), got 0"},
    {"training_missing_losses.json", "training: missing \"held_out_loss\""},
    {"training_kv_not_divisor.json", "training.held_out_loss.by_kv_heads.3: expected a count of K/V heads that divides n_heads = 2"},
    {"training_kv_differs.json", "training.held_out_loss.by_kv_heads.2: differs from training.held_out_loss.heads, this layer's own losses"},
    {"training_kv_order.json", "training.held_out_loss.by_kv_heads.2: K/V head counts are listed most first, without repeats"},
    {"training_kv_short.json", "training.held_out_loss.by_kv_heads.1: 1 numbers for 2 seeds (one loss per seed)"},
    {"training_readout_array.json", "training.by_readout: expected an object of 1 to 4 readouts (such as \"previous token\"), each with heads and single_head, got an array"},
    {"training_readout_kv_differs.json", "training.by_readout.first token.by_kv_heads.2: differs from training.by_readout.first token.heads, this layer's own losses"},
    {"training_readout_kv_other.json", "training.by_readout.first token.by_kv_heads.3: expected \"1\" here, as in training.held_out_loss.by_kv_heads"},
    {"training_readout_name.json", "training.by_readout: readout 0: expected a name of 1 to 31 printable ASCII characters"},
    {"training_readout_negative.json", "training.by_readout.previous token.heads[1]: expected a loss in nats (a number >= 0), got -0.5"},
    {"training_readout_no_kv.json", "training.by_readout.first token: missing \"by_kv_heads\" (training.held_out_loss has it)"},
    {"training_readout_short.json", "training.by_readout.previous token.single_head: 1 numbers for 2 seeds (one loss per seed)"},
    {"training_readout_twice.json", "training.by_readout.first token: given twice; keep one"},
    {"training_readout_unknown_key.json", "training.by_readout.first token: missing \"single_head\" (one loss per seed)"},
    /* a file of "layers": the layer named, and the first layer's shape */
    {"layers_x_rows.json", "layers[1]: x: has 3 rows, expected 4 (T, the number of tokens)"},
    {"layers_d_model_differs.json", "layers[1]: d_model: 2, but layers[0] has 4; every layer of a file has the same shape"},
    {"layers_n_heads_differs.json", "layers[1]: n_heads: 1, but layers[0] has 2; every layer of a file has the same shape"},
    {"layers_empty.json", "layers: the array is empty; give at least one layer object"},
    {"layers_mixed.json", "d_model: a layer's key beside \"layers\"; give it inside each layer (layers[0].d_model, ...)"},
    {"layers_tokens_inside.json", "layers[0]: tokens: every layer reads the same tokens; give them once, beside \"layers\""},
};
#define N_BAD ((int)(sizeof BAD / sizeof BAD[0]))

START_TEST(bad_file_names_the_place)
{
    char path[256], err[MHAVIZ_ERRLEN] = "";
    snprintf(path, sizeof path, DATA "bad/%s", BAD[_i].file);
    MhaInput in;
    int rc = input_load(path, &in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_EINPUT, "%s: rc %d, expected %d (%s)", path, rc, MHAVIZ_EINPUT, err);
    ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "%s: message does not start with the file: %s", path, err);
    ck_assert_msg(strstr(err, BAD[_i].place) != NULL, "%s: message '%s' lacks '%s'", path, err, BAD[_i].place);
    ck_assert_ptr_null(in.x);
    ck_assert_ptr_null(in.tokens);
    input_free(&in);
}
END_TEST

/* Every file under tests/data/bad/ is in the table (a new file needs its check). */
START_TEST(every_bad_file_is_checked)
{
    FILE *p = popen("ls " DATA "bad", "r");
    ck_assert_ptr_nonnull(p);
    char line[256];
    int n = 0;
    while (fgets(line, sizeof line, p)) {
        line[strcspn(line, "\n")] = '\0';
        int found = 0;
        for (int i = 0; i < N_BAD; i++)
            found |= strcmp(BAD[i].file, line) == 0;
        ck_assert_msg(found, "tests/data/bad/%s has no entry in BAD[]", line);
        n++;
    }
    pclose(p);
    ck_assert_int_eq(n, N_BAD);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* In-memory inputs: syntax positions and limits.                           */

static int parse(const char *text, const InputLimits *lim, char *err)
{
    MhaInput in;
    int rc = input_parse_limits(text, strlen(text), "t.json", NULL, lim, &in, err, MHAVIZ_ERRLEN);
    input_free(&in);
    return rc;
}

START_TEST(syntax_line_column)
{
    char err[MHAVIZ_ERRLEN];
    /* line 2, column 17 is the comma before the ']' */
    ck_assert_int_eq(parse("{\n  \"tokens\": [\"a\",]\n}", NULL, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json:2:17: trailing comma after the last item (JSON allows none): remove it");
    /* columns count characters: "h\xc3\xa9llo" is 5 of them, so its closing
     * quote is column 13 and the missing ',' belongs at column 14 */
    ck_assert_int_eq(parse("{\"t\": \"h\xc3\xa9llo\" \"x\": 1}", NULL, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json:1:14: missing ',' between items");
    ck_assert_int_eq(parse("  \n  ", NULL, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json:2:3: the file holds no JSON value, only white space");
    ck_assert_int_eq(parse("{\"a\": \"\\ud800\"}", NULL, err), MHAVIZ_EINPUT); /* lone surrogate */
    ck_assert_str_eq(err, "t.json:1:8: '\\ud800' is half of a UTF-16 surrogate pair: write the character "
                          "itself (the file is UTF-8)");
}
END_TEST

/* Each hand-written mistake, named at its place: the whole message. The
 * column is counted by hand in the text (1-based). */
static const struct {
    const char *text, *want;
} SYNTAX[] = {
    /* the '}' of a trailing comma at the end of the file: the comma is 1:7 */
    {"{\"a\": 1,\n}\n", "t.json:1:8: trailing comma after the last item (JSON allows none): remove it"},
    {"[1, 2 ,\n  ]", "t.json:1:7: trailing comma after the last item (JSON allows none): remove it"},
    {"{\"k\": {\"x\": 1,}}", "t.json:1:14: trailing comma after the last item (JSON allows none): remove it"},
    {"[1 2]", "t.json:1:3: missing ',' between items"},
    {"{\"a\": [1],\n \"b\": 2\n \"c\": 3}", "t.json:2:8: missing ',' between items (after line 2, before line 3)"},
    {"{'a': 1}", "t.json:1:2: strings and keys need double quotes, not single"},
    {"{\"a\": 'x'}", "t.json:1:7: strings and keys need double quotes, not single"},
    {"[True]", "t.json:1:2: 'True' is Python; JSON writes true"},
    {"[1, False]", "t.json:1:5: 'False' is Python; JSON writes false"},
    {"{\"b\": None}", "t.json:1:7: 'None' is Python; JSON writes null"},
    {"// note\n{}", "t.json:1:1: comments are not allowed in JSON: remove it (a note can go in a top-level "
                    "\"comment\" key)"},
    {"{ /* x */ \"a\": 1}", "t.json:1:3: comments are not allowed in JSON: remove it (a note can go in a "
                           "top-level \"comment\" key)"},
    {"{\"a\": 1} // end", "t.json:1:10: comments are not allowed in JSON: remove it (a note can go in a "
                         "top-level \"comment\" key)"},
    {"[NaN]", "t.json:1:2: NaN is not a JSON number (JSON has no NaN or Infinity; mhaviz needs finite numbers)"},
    {"[1, -Infinity]", "t.json:1:5: -Infinity is not a JSON number (JSON has no NaN or Infinity; mhaviz needs "
                       "finite numbers)"},
    {"{d_model: 4}", "t.json:1:2: keys must be strings in double quotes: write \"d_model\""},
    {"{\"a\": 1, \xc3\xa9t\xc3\xa9: 2}", "t.json:1:10: keys must be strings in double quotes: write \"\xc3\xa9t\xc3\xa9\""},
    {"{\"d_model\" 4}", "t.json:1:11: missing ':' after the key \"d_model\""},
    {"{\"a\": }", "t.json:1:7: missing value after ':'"},
    {"[1,, 2]", "t.json:1:4: two commas in a row: remove one"},
    {"{\"a\": 1,, \"b\": 2}", "t.json:1:9: two commas in a row: remove one"},
    {"[, 1]", "t.json:1:2: a value is missing before this ','"},
    {"[[1, 2}", "t.json:1:7: '}' does not close the '[' opened at 1:2: expected ']'"},
    {"{\"a\": 1]", "t.json:1:8: ']' does not close the '{' opened at 1:1: expected '}'"},
    {"{\"a\": 1}}", "t.json:1:9: more text after the end of the JSON (its last '}' is at 1:8): remove it"},
    {"[+1]", "t.json:1:2: a JSON number cannot start with '+': remove it"},
    {"[.5]", "t.json:1:2: a JSON number cannot start with '.': put a 0 before it"},
    {"[yes]", "t.json:1:2: 'yes' is not a JSON value: text needs double quotes (\"yes\"); JSON's only bare words "
              "are true, false and null"},
    {"{\"a\": 0x10}", "t.json:1:7: '0x10' is not a JSON number (JSON numbers are decimal, like -1.5e-3)"},
    {"[1, truex]", "t.json:1:5: 'truex' is not a JSON value (JSON's only bare words are true, false and null)"},
    {"[\"a\\qb\"]", "t.json:1:4: '\\q' is not a JSON escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; "
                   "a backslash itself is \\\\)"},
    {"[\"\\u12\"]", "t.json:1:3: '\\u' in a string needs 4 hex digits after it"},
    /* truly truncated: the end of the text, and the bracket left open */
    {"{\"a\": [1,\n  2", "t.json:2:4: the file ends in the middle of the JSON (truncated file?): the '[' opened "
                         "at 1:7 is not closed"},
    {"{\"a\": 1,", "t.json:1:9: the file ends in the middle of the JSON (truncated file?): the '{' opened at 1:1 "
                   "is not closed"},
    {"[\"ab", "t.json:1:2: this string never ends: the file ends inside it (truncated file, or a missing closing "
              "'\"')"},
    /* what this reader does not name keeps cJSON's place and an excerpt */
    {"[-]", "t.json:1:2: JSON syntax error near '-]'"},
};

START_TEST(syntax_mistake_named)
{
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(parse(SYNTAX[_i].text, NULL, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, SYNTAX[_i].want);
}
END_TEST

static const char *LAYER_8 =
    "{\"tokens\": [\"a\", \"b\"], \"d_model\": 8, \"n_heads\": 2, \"x\": \"x.npy\","
    " \"W_q\": \"q.npy\", \"W_k\": \"k.npy\", \"W_v\": \"v.npy\", \"W_o\": \"o.npy\"}";

START_TEST(memory_limit_names_the_figure)
{
    char err[MHAVIZ_ERRLEN];
    InputLimits lim;
    input_default_limits(&lim);
    lim.max_memory_bytes = 4000; /* parsing the JSON text passes (2.2 kB), the whole run does not */
    ck_assert_int_eq(parse(LAYER_8, &lim, err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: this run would need about 1 MB of memory"), "%s", err);
    ck_assert_msg(strstr(err, "over the limit of 0 MB; raise it with --max-memory MB"), "%s", err);
    /* d_model at the limit, claimed with .npy files: refused by the estimate,
     * before anything is allocated or any file opened. The estimate counts
     * 8 matrices of 16384^2 floats (the layer's 4, the single head's 4): 8 GiB. */
    const char *big =
        "{\"tokens\": [\"a\"], \"d_model\": 16384, \"n_heads\": 1, \"x\": \"x.npy\","
        " \"W_q\": \"q.npy\", \"W_k\": \"k.npy\", \"W_v\": \"v.npy\", \"W_o\": \"o.npy\"}";
    ck_assert_int_eq(parse(big, NULL, err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "this run would need about 8194 MB of memory (T = 1, d_model = 16384"), "%s", err);
    ck_assert_msg(strstr(err, "over the limit of 2048 MB"), "%s", err);
}
END_TEST

/* The parse itself is counted before it starts: 100000 zeros are 200 kB of
 * text "0," but 100000 cJSON nodes of 64 bytes, each 80 bytes from malloc
 * (with its header, rounded to 16): 8.0 MB, 7.8 MiB, "about 8 MB" in all. */
START_TEST(parse_memory_counted_first)
{
    const int n = 100000;
    char *text = malloc(2 * (size_t)n + 64), *p = text;
    p += sprintf(p, "{\"x\": [");
    for (int i = 0; i < n; i++)
        p += sprintf(p, i ? ",0" : "0");
    sprintf(p, "]}");
    char err[MHAVIZ_ERRLEN];
    InputLimits lim;
    input_default_limits(&lim);
    lim.max_memory_bytes = (size_t)4 << 20;
    ck_assert_int_eq(parse(text, &lim, err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: parsing this JSON (0 MB of text) would need about 8 MB of memory, "
                              "over the limit of 4 MB"), "%s", err);
    lim.max_memory_bytes = (size_t)9 << 20; /* then it parses, and "tokens" is missing */
    ck_assert_int_eq(parse(text, &lim, err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "missing \"tokens\""), "%s", err);
    free(text);
}
END_TEST

START_TEST(shape_limits)
{
    char err[MHAVIZ_ERRLEN];
    InputLimits lim;
    input_default_limits(&lim);
    lim.max_T = 1;
    ck_assert_int_eq(parse(LAYER_8, &lim, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json: tokens: 2 tokens is over the limit of 1");
    input_default_limits(&lim);
    lim.max_heads = 1;
    ck_assert_int_eq(parse(LAYER_8, &lim, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json: n_heads: 2 is over the limit of 1");
    input_default_limits(&lim);
    lim.max_d_model = 4;
    ck_assert_int_eq(parse(LAYER_8, &lim, err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "t.json: d_model: 8 is over the limit of 4");
}
END_TEST

START_TEST(file_errors_are_io)
{
    MhaInput in;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(input_load(DATA "no_such_file.json", &in, err, sizeof err), MHAVIZ_EIO);
    ck_assert_str_eq(err, DATA "no_such_file.json: cannot open: No such file or directory");
    input_free(&in);
    ck_assert_int_eq(input_load(DATA "good", &in, err, sizeof err), MHAVIZ_EIO);
    ck_assert_str_eq(err, DATA "good: is a folder; give the input JSON file");
    input_free(&in);
    ck_assert_int_eq(input_load("/dev/zero", &in, err, sizeof err), MHAVIZ_EIO); /* would never end */
    ck_assert_str_eq(err, "/dev/zero: not a regular file; give the input JSON file");
    input_free(&in);
    InputLimits lim;
    input_default_limits(&lim);
    lim.max_file_bytes = 100; /* small_x.json is about 600 bytes */
    ck_assert_int_eq(input_load_limits(DATA "good/small_x.json", &lim, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, DATA "good/small_x.json: the file is 0 MB, over the input limit of 0 MB "
                          "(give large matrices as .npy files)");
    input_free(&in);
}
END_TEST

/* A .npy name pointing at a FIFO must not wait for a writer (a hang). */
START_TEST(npy_fifo_does_not_hang)
{
    char dir[] = "/tmp/mhaviz-input-XXXXXX", fifo[64], text[512], err[MHAVIZ_ERRLEN];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(fifo, sizeof fifo, "%s/W.npy", dir);
    ck_assert_int_eq(mkfifo(fifo, 0600), 0);
    snprintf(text, sizeof text,
             "{\"tokens\": [\"a\"], \"d_model\": 1, \"n_heads\": 1, \"x\": [[1]],"
             " \"W_q\": \"W.npy\", \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]]}");
    MhaInput in;
    ck_assert_int_eq(input_parse(text, strlen(text), "t.json", dir, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: W_q: ") && strstr(err, "W.npy: not a regular file"), "%s", err);
    input_free(&in);
    unlink(fifo);
    rmdir(dir);
}
END_TEST

/* A file name longer than a message (here 600 bytes) is cut to its end:
 * the warning and the error still carry their whole message. */
START_TEST(long_file_names_keep_the_message)
{
    char name[601];
    memset(name, 'd', 590);
    strcpy(name + 590, "/lesson.js"); /* 600 bytes */
    const char *warn_text =
        "{\"tokens\": [\"a\"], \"d_model\": 1, \"n_heads\": 1, \"x\": [[1]],"
        " \"W_q\": [[1]], \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]], \"W_Q\": 0}";
    MhaInput in;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(input_parse(warn_text, strlen(warn_text), name, NULL, &in, err, sizeof err), MHAVIZ_OK);
    ck_assert_msg(strstr(in.warnings, "/lesson.js: unknown key \"W_Q\" ignored"), "%s", in.warnings);
    ck_assert_msg(strncmp(in.warnings, "warning: ...d", 13) == 0, "%s", in.warnings);
    input_free(&in);

    const char *bad_text = "{\"tokens\": [\"a\"], \"d_model\": 0}";
    ck_assert_int_eq(input_parse(bad_text, strlen(bad_text), name, NULL, &in, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "/lesson.js: d_model"), "%s", err);
    input_free(&in);
}
END_TEST

/* A file of "layers": each layer as the same layer in a file of its own
 * (layers_small_1.json is layers[1] of layers_small.json with the tokens),
 * the tokens copied into each, the file's title kept by a layer without
 * its own; the one-layer calls refuse the file. */
START_TEST(layers_file_loads_each_layer)
{
    char err[MHAVIZ_ERRLEN] = "";
    MhaInput *in = NULL, one;
    int n = 0;
    ck_assert_int_eq(input_load_layers(DATA "good/layers_small.json", NULL, &in, &n, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_int_eq(input_load(DATA "good/layers_small_1.json", &one, err, sizeof err), MHAVIZ_OK);
    for (int i = 0; i < 2; i++) {
        ck_assert_int_eq(in[i].layer, i);
        ck_assert_int_eq(in[i].n_layers, 2);
        ck_assert_int_eq(in[i].cfg.T, 4);
        ck_assert_str_eq(in[i].tokens[3], "down");
    }
    ck_assert_ptr_ne(in[0].tokens, in[1].tokens);
    ck_assert_int_eq(one.n_layers, 0);
    const size_t d = 4 * 4 * sizeof(float);
    ck_assert_int_eq(memcmp(in[1].x, one.x, d), 0);
    ck_assert_int_eq(memcmp(in[1].w.W_q, one.w.W_q, d), 0);
    ck_assert_int_eq(memcmp(in[1].w.W_o, one.w.W_o, d), 0);
    ck_assert_int_ne(memcmp(in[0].x, one.x, d), 0);
    input_free(&one);
    for (int i = 0; i < n; i++)
        input_free(&in[i]);
    free(in);

    const char *titled = "{\"tokens\": [\"a\"], \"title\": \"both\", \"layers\": ["
                         "{\"d_model\": 1, \"n_heads\": 1, \"x\": [[1]], \"W_q\": [[1]], \"W_k\": [[1]], \"W_v\": [[1]], \"W_o\": [[1]]},"
                         "{\"title\": \"own\", \"d_model\": 1, \"n_heads\": 1, \"x\": [[2]], \"W_q\": [[1]], \"W_k\": [[1]], "
                         "\"W_v\": [[1]], \"W_o\": [[1]], \"W_Q\": 0}]}";
    ck_assert_int_eq(input_parse_layers(titled, strlen(titled), "t.json", NULL, NULL, &in, &n, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(n, 2);
    ck_assert_str_eq(in[0].title, "both");
    ck_assert_str_eq(in[1].title, "own");
    ck_assert_msg(in[0].warnings && strstr(in[0].warnings, "t.json: layers[1]: unknown key \"W_Q\" ignored"), "%s",
                  in[0].warnings ? in[0].warnings : "(none)");
    for (int i = 0; i < n; i++)
        input_free(&in[i]);
    free(in);

    ck_assert_int_eq(input_parse(titled, strlen(titled), "t.json", NULL, &one, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "t.json: layers: a file of 2 layers, where one layer was expected"), "%s", err);
    ck_assert_ptr_null(one.x);
    input_free(&one);
}
END_TEST

Suite *input_suite(void)
{
    Suite *s = suite_create("input");
    TCase *tc = tcase_create("good");
    tcase_add_test(tc, small_x_loads);
    tcase_add_test(tc, layers_file_loads_each_layer);
    tcase_add_test(tc, long_file_names_keep_the_message);
    tcase_add_test(tc, w_at_x_is_transposed);
    tcase_add_test(tc, embeddings_sinusoidal);
    tcase_add_test(tc, embeddings_no_positions);
    tcase_add_test(tc, biases_and_single_head);
    tcase_add_test(tc, npy_layer);
    tcase_add_test(tc, npy_float32_read_in_place);
    tcase_add_test(tc, npy_copied_when_not_as_is);
    tcase_add_test(tc, npy_refused_file_leaves_nothing_mapped);
    tcase_add_test(tc, unknown_key_warns_with_suggestion);
    tcase_add_test(tc, warning_kept_on_failure);
    tcase_add_test(tc, invalid_utf8_replaced);
    tcase_add_test(tc, title_optional_key);
    tcase_add_test(tc, unknown_keys_capped);
    suite_add_tcase(s, tc);
    tc = tcase_create("bad");
    tcase_add_loop_test(tc, bad_file_names_the_place, 0, N_BAD);
    tcase_add_test(tc, every_bad_file_is_checked);
    tcase_add_test(tc, syntax_line_column);
    tcase_add_loop_test(tc, syntax_mistake_named, 0, (int)(sizeof SYNTAX / sizeof SYNTAX[0]));
    tcase_add_test(tc, memory_limit_names_the_figure);
    tcase_add_test(tc, parse_memory_counted_first);
    tcase_add_test(tc, shape_limits);
    tcase_add_test(tc, file_errors_are_io);
    tcase_add_test(tc, npy_fifo_does_not_hang);
    suite_add_tcase(s, tc);
    return s;
}
