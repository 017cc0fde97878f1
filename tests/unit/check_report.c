/* check_report.c — report.json and report.txt as issues 2 and 4 specify:
 * report.json parses back (cJSON) with the right shapes, every float32 reads
 * back to the same bits, the measures match src/core/measures.c, nulls are null;
 * report.txt holds the configuration, the table, the sentences, the blur and
 * cost summaries, in at most 100 columns; a full disk is an error naming
 * the file.
 *
 * The layers are random (seeded xorshift) and run through mha_forward: the
 * report does not care what the maps say, only that it says it faithfully. */
#include "core/measures.h"
#include "core/mha.h"
#include "io/npy.h"
#include "report/report.h"
#include "report/report_txt.h"
#include "report/report_parts.h"
#include "core/status.h"

#include <cJSON.h>
#include "support.h"

#include <check.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------ fixtures */

/* n uniform floats in [-1, 1) */
static float *random_floats(uint32_t *seed, size_t n)
{
    float *a = malloc(n * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t k = 0; k < n; k++)
        a[k] = (float)(xorshift(seed) >> 8) / (float)(1u << 23) - 1.0f;
    return a;
}

static void random_weights(uint32_t *seed, MhaWeights *w, int d, int kv_dim, int bias)
{
    w->W_q = random_floats(seed, (size_t)d * d);
    w->W_k = random_floats(seed, (size_t)d * kv_dim);
    w->W_v = random_floats(seed, (size_t)d * kv_dim);
    w->W_o = random_floats(seed, (size_t)d * d);
    w->b_q = calloc((size_t)d, sizeof(float));
    w->b_k = calloc((size_t)kv_dim, sizeof(float));
    w->b_v = calloc((size_t)kv_dim, sizeof(float));
    w->b_o = calloc((size_t)d, sizeof(float));
    w->has_bias = bias;
}

/* A layer, its forward pass, a wide head with its own weights, and a scratch folder. */
typedef struct {
    MhaInput in;
    MhaState multi, single;
    char dir[64];
    int npy; /* ReportData.npy: --npy */
} Fixture;

/* scores: keep the heads' pre-softmax scores (--steps). */
static void fixture_build_scores(Fixture *f, char **tokens, int T, int d, int n_heads, int n_kv, int causal,
                                 int scores)
{
    uint32_t seed = 2463534242u;
    memset(f, 0, sizeof *f);
    MhaConfig *c = &f->in.cfg;
    *c = (MhaConfig){.T = T, .d_model = d, .n_heads = n_heads, .n_kv_heads = n_kv,
                     .head_dim = d / n_heads, .causal = causal};
    f->in.tokens = tokens;
    f->in.x = random_floats(&seed, (size_t)T * d);
    random_weights(&seed, &f->in.w, d, mha_kv_dim(c), 0);
    random_weights(&seed, &f->in.single, d, d, 0);
    f->in.has_single = 1;
    ck_assert_int_eq(mha_state_build(&f->multi, c, scores), MHAVIZ_OK);
    mha_forward(c, &f->in.w, f->in.x, &f->multi);
    MhaConfig wide = mha_single_head_config(c);
    ck_assert_int_eq(mha_state_build(&f->single, &wide, scores), MHAVIZ_OK);
    mha_forward(&wide, &f->in.single, f->in.x, &f->single);
    strcpy(f->dir, "/tmp/mhaviz-report-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(f->dir));
}

static void fixture_build(Fixture *f, char **tokens, int T, int d, int n_heads, int n_kv, int causal)
{
    fixture_build_scores(f, tokens, T, d, n_heads, n_kv, causal, 0);
}

/* report_write into dir from d, its layer summarised first as variant_run
 * summarises it (layer_summary.h), from m, the maps' measures_layer (NULL:
 * measured by layer_summary_build). */
static int write_summarised(const char *dir, ReportData *d, const MapMeasures *m, char *err, size_t errlen)
{
    LayerSummary s;
    ck_assert_int_eq(layer_summary_build(&s, d->in, d->multi, d->single, d->single_given, m, NULL), MHAVIZ_OK);
    d->summary = &s;
    const int rc = report_write(dir, d, err, errlen);
    d->summary = NULL;
    layer_summary_free(&s);
    return rc;
}

static int fixture_write(Fixture *f, const char *notes, char *err)
{
    ReportData d = {.in = &f->in, .multi = &f->multi, .single = &f->single, .single_given = 1, .notes = notes,
                    .npy = f->npy, .scores = f->multi.scores != NULL};
    return write_summarised(f->dir, &d, NULL, err, MHAVIZ_ERRLEN);
}

static void fixture_free(Fixture *f)
{
    if (!getenv("KEEP"))
        remove_tree(f->dir);
    mha_state_free(&f->multi);
    mha_state_free(&f->single);
    free(f->in.x);
    mha_weights_free(&f->in.w);
    mha_weights_free(&f->in.single);
}

/* The whole of dir/name, NUL-terminated; the caller frees it. */
static char *slurp_in(const char *dir, const char *name, size_t *len)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    return slurp(path, len);
}

static cJSON *parse_report(const char *dir)
{
    size_t n;
    char *text = slurp_in(dir, "report.json", &n);
    const char *end = NULL;
    cJSON *j = cJSON_ParseWithLengthOpts(text, n + 1, &end, 1); /* with its NUL: cJSON wants it inside the length */
    ck_assert_msg(j != NULL, "report.json does not parse near byte %ld", end ? (long)(end - text) : -1L);
    free(text);
    return j;
}

static const cJSON *get(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(v != NULL, "report.json: no \"%s\"", key);
    return v;
}

static double num(const cJSON *o, const char *key)
{
    const cJSON *v = get(o, key);
    ck_assert_msg(cJSON_IsNumber(v), "report.json: \"%s\" is not a number", key);
    return v->valuedouble;
}

/* The matrix m of report.json reads back to exactly want (rows, cols): an
 * array of rows of numbers, or the name `file` of a .npy file in dir. */
static void check_matrix(const char *dir, const cJSON *m, const float *want, int rows, int cols,
                         const char *file, const char *what)
{
    /* One assertion per matrix, not per number (each is a message to Check's
     * parent): count the numbers that differ, name the first. */
    long wrong = 0;
    char first[160] = "";
    if (cJSON_IsString(m)) {
        ck_assert_str_eq(m->valuestring, file);
        float *got = malloc((size_t)rows * cols * sizeof *got);
        char msg[256];
        ck_assert_ptr_nonnull(got);
        ck_assert_msg(npy_read_floats(dir, file, rows, cols, 0, got, msg, sizeof msg) == MHAVIZ_OK, "%s", msg);
        for (size_t k = 0; k < (size_t)rows * cols; k++)
            if (memcmp(&got[k], &want[k], sizeof *got) != 0 && wrong++ == 0)
                snprintf(first, sizeof first, "%s[%zu] read back %.9g, wrote %.9g", file, k, (double)got[k],
                         (double)want[k]);
        free(got);
        ck_assert_msg(wrong == 0, "%s: %ld numbers differ; the first: %s", what, wrong, first);
        return;
    }
    ck_assert_msg(cJSON_IsArray(m), "%s is not an array", what);
    ck_assert_int_eq(cJSON_GetArraySize(m), rows);
    int r = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, m)
    {
        int c = 0;
        const cJSON *x;
        cJSON_ArrayForEach(x, row)
        {
            const float got = (float)x->valuedouble, w = c < cols ? want[(size_t)r * cols + c] : NAN;
            if ((!cJSON_IsNumber(x) || c >= cols || memcmp(&got, &w, sizeof got) != 0) && wrong++ == 0)
                snprintf(first, sizeof first, "[%d][%d] read back %.9g, wrote %.9g", r, c, (double)got, (double)w);
            c++;
        }
        if (c != cols && wrong++ == 0)
            snprintf(first, sizeof first, "row %d has %d numbers, expected %d", r, c, cols);
        r++;
    }
    ck_assert_msg(wrong == 0, "%s: %ld numbers differ; the first: %s", what, wrong, first);
}

/* A JSON measure equals the double the module computes (null for NAN).
 * "%.9g" keeps 9 significant digits: relative error < 5e-9. */
static void check_measure(const cJSON *o, const char *key, double want)
{
    const cJSON *v = get(o, key);
    if (measures_is_null(want)) {
        ck_assert_msg(cJSON_IsNull(v), "\"%s\" should be null", key);
        return;
    }
    ck_assert_msg(cJSON_IsNumber(v), "\"%s\" should be a number", key);
    ck_assert_double_eq_tol(v->valuedouble, want, 1e-8 * fmax(1.0, fabs(want)));
}

static void check_map_measures(const cJSON *o, const MapMeasures *m)
{
    ck_assert_str_eq(get(o, "role")->valuestring, measures_role_name(m->role));
    check_measure(o, "entropy_bits", m->entropy_bits);
    check_measure(o, "entropy_norm", m->entropy_norm);
    check_measure(o, "confidence", m->confidence);
    check_measure(o, "mean_distance", m->mean_distance);
    check_measure(o, "previous_token", m->pattern[MEASURES_PREVIOUS_TOKEN]);
    check_measure(o, "self", m->pattern[MEASURES_SELF]);
    check_measure(o, "first_token", m->pattern[MEASURES_FIRST_TOKEN]);
    check_measure(o, "duplicate_token", m->pattern[MEASURES_DUPLICATE_TOKEN]);
    check_measure(o, "induction", m->pattern[MEASURES_INDUCTION]);
    check_measure(o, "next_token", m->pattern[MEASURES_NEXT_TOKEN]);
    check_measure(o, "last_token", m->pattern[MEASURES_LAST_TOKEN]);
    check_measure(o, "fixed_token", m->pattern[MEASURES_FIXED_TOKEN]);
    for (int p = 0; p < MEASURES_N_PATTERNS; p++) {
        const cJSON *rows = get(get(o, "pattern_rows"), measures_pattern_field((MeasuresRole)p));
        ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
        ck_assert_double_eq(cJSON_GetArrayItem(rows, 0)->valuedouble, m->shown[p]);
        ck_assert_double_eq(cJSON_GetArrayItem(rows, 1)->valuedouble, m->rows[p]);
    }
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        check_measure(get(o, "pattern_even"), measures_pattern_field((MeasuresRole)p), m->even[p]);
    if (m->fixed_key >= 0)
        ck_assert_double_eq(num(o, "fixed_token_key"), m->fixed_key);
    else
        ck_assert(cJSON_IsNull(get(o, "fixed_token_key")));
    if (m->strongest >= 0)
        ck_assert_str_eq(get(o, "strongest_pattern")->valuestring,
                         measures_pattern_field((MeasuresRole)m->strongest));
    else
        ck_assert(cJSON_IsNull(get(o, "strongest_pattern")));
}

/* Each line of text has at most width columns (UTF-8 code points). */
static void check_width(const char *text, int width)
{
    int col = 0, line = 1;
    for (const unsigned char *p = (const unsigned char *)text; *p; p++) {
        if (*p == '\n') {
            col = 0;
            line++;
        } else if ((*p & 0xC0) != 0x80) {
            col++;
            ck_assert_msg(col <= width, "report.txt line %d is wider than %d columns", line, width);
        }
    }
}

static void check_contains(const char *text, const char *want)
{
    ck_assert_msg(strstr(text, want) != NULL, "report.txt lacks \"%s\"", want);
}

/* text with each wrapped line joined back: "\n" + indent spaces -> join. */
static char *unwrap(const char *text, const char *indent, const char *join)
{
    char *out = malloc(strlen(text) + 1), *o = out;
    ck_assert_ptr_nonnull(out);
    char sep[32];
    snprintf(sep, sizeof sep, "\n%s", indent);
    const size_t n = strlen(sep);
    while (*text) {
        if (strncmp(text, sep, n) == 0) {
            o += sprintf(o, "%s", join);
            text += n;
        } else {
            *o++ = *text++;
        }
    }
    *o = '\0';
    return out;
}

/* --------------------------------------------------------------- tests */

/* GQA (4 heads, 2 K/V heads), causal, tokens with a repeat. _i = 0: the
 * matrices inline; _i = 1: with --npy, each in its .npy file. */
START_TEST(json_has_issue_shapes_and_exact_floats)
{
    char *tokens[] = {"the", "cat", "sat", "on", "the", "mat", "and", "the", "cat"};
    const int T = 9, d = 16, H = 4;
    Fixture f;
    fixture_build(&f, tokens, T, d, H, 2, 1);
    f.npy = _i;
    /* float32 extremes in the output must survive too */
    f.multi.out[0] = FLT_MIN;
    f.multi.out[1] = FLT_MAX;
    f.multi.out[2] = 1e-45f; /* the smallest subnormal */
    f.multi.out[3] = -0.1f;
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    cJSON *j = parse_report(f.dir);

    ck_assert_str_eq(get(j, "format")->valuestring, "mhaviz-report");
    ck_assert_double_eq(num(j, "version"), 2);
    ck_assert_double_eq(num(j, "d_model"), d);
    ck_assert_double_eq(num(j, "n_heads"), H);
    ck_assert_double_eq(num(j, "n_kv_heads"), 2);
    ck_assert_double_eq(num(j, "head_dim"), 4);
    ck_assert(cJSON_IsTrue(get(j, "causal")));
    ck_assert(cJSON_GetObjectItemCaseSensitive(j, "notes") == NULL); /* none given */
    const cJSON *toks = get(j, "tokens");
    ck_assert_int_eq(cJSON_GetArraySize(toks), T);
    int t = 0;
    const cJSON *tok;
    cJSON_ArrayForEach(tok, toks)
        ck_assert_str_eq(tok->valuestring, tokens[t++]);

    /* what the report should say, from the measures module */
    int ids[9];
    measures_token_ids(tokens, T, ids);
    const cJSON *heads = get(j, "heads"), *head;
    ck_assert_int_eq(cJSON_GetArraySize(heads), H);
    int h = 0;
    cJSON_ArrayForEach(head, heads)
    {
        const float *att_h = f.multi.att + (size_t)h * T * T;
        ck_assert_double_eq(num(head, "index"), h);
        ck_assert_double_eq(num(head, "kv_head"), h / 2); /* g = h / (4 / 2) */
        char file[64];
        snprintf(file, sizeof file, "head_%02d_attention.npy", h);
        check_matrix(f.dir, get(head, "attention"), att_h, T, T, file, "heads[].attention");
        ck_assert(cJSON_IsString(get(head, "attention")) == (_i == 1));
        for (int i = 0; i < T; i++) /* masked cells are exactly 0 */
            for (int k = i + 1; k < T; k++)
                ck_assert(att_h[i * T + k] == 0.0f);
        MapMeasures m;
        MapComparison cmp;
        measures_map(att_h, T, 1, ids, &m);
        measures_compare(att_h, f.single.att, T, 1, &cmp);
        check_map_measures(head, &m);
        check_measure(head, "js_to_single", cmp.js_to_single);
        check_measure(head, "top1_agreement", cmp.top1_agreement);
        h++;
    }

    const cJSON *single = get(j, "single_head");
    check_matrix(f.dir, get(single, "attention"), f.single.att, T, T, "single_head_attention.npy",
                 "single_head.attention");
    MapMeasures wide;
    measures_map(f.single.att, T, 1, ids, &wide);
    check_map_measures(single, &wide);
    ck_assert_str_eq(get(single, "source")->valuestring, "input");

    const cJSON *out = get(j, "output");
    check_matrix(f.dir, get(out, "multi_head"), f.multi.out, T, d, "output_multi_head.npy", "output.multi_head");
    check_matrix(f.dir, get(out, "single_head"), f.single.out, T, d, "output_single_head.npy",
                 "output.single_head");

    const cJSON *cmp = get(j, "comparison");
    check_measure(cmp, "output_rel_diff", measures_output_rel_diff(f.multi.out, f.single.out, T, d));
    check_measure(cmp, "output_cosine", measures_output_cosine(f.multi.out, f.single.out, T, d));
    /* blur = the wide head's entropy_norm - the mean of the heads' */
    double mean = 0;
    for (int k = 0; k < H; k++) {
        MapMeasures m;
        measures_map(f.multi.att + (size_t)k * T * T, T, 1, ids, &m);
        mean += m.entropy_norm / H;
    }
    ck_assert_double_eq_tol(num(cmp, "blur"), wide.entropy_norm - mean, 1e-8);

    /* the cost object: the input is GQA with 2 K/V heads, kv = 8;
     * params = 2 * 16^2 + 2 * 16 * 8 = 512 + 256 = 768;
     * projections 9 * 768 = 6,912; pairs 9 * 10 / 2 = 45; scores 45 * 16 = 720;
     * cache 2 * 2 * 4 * 2 = 32; the wide head 4 * 256 = 1,024 params */
    const cJSON *cost = get(j, "cost");
    ck_assert_double_eq(num(cost, "T"), T);
    ck_assert_double_eq(num(cost, "visible_pairs"), 45);
    ck_assert(cJSON_IsFalse(get(cost, "masked_cells_counted")));
    const cJSON *in = get(cost, "input");
    ck_assert_double_eq(num(in, "params"), 768);
    ck_assert_double_eq(num(in, "mac_projections"), 6912);
    ck_assert_double_eq(num(in, "mac_scores"), 720);
    ck_assert_double_eq(num(in, "mac_value_mix"), 720);
    ck_assert_double_eq(num(in, "mac_total"), 6912 + 720 + 720);
    ck_assert_double_eq(num(in, "kv_cache_bytes_per_token"), 32);
    ck_assert_int_eq(cJSON_GetArraySize(get(cost, "gqa")), 1); /* every count between MHA and MQA: 2 */
    ck_assert_double_eq(num(cJSON_GetArrayItem(get(cost, "gqa"), 0), "n_kv_heads"), 2);
    ck_assert_double_eq(num(get(cost, "mqa"), "n_kv_heads"), 1);
    ck_assert_double_eq(num(get(cost, "mha"), "params"), 1024);
    ck_assert_double_eq(num(get(cost, "single_head"), "params"), 1024);
    ck_assert_double_eq(num(get(cost, "single_head"), "head_dim"), 16);

    cJSON_Delete(j);
    fixture_free(&f);
}
END_TEST

/* T = 1: no row sees two keys: entropy_norm, every pattern and blur are
 * null, the role is "none", said plainly; 4 heads MHA -> one GQA row, GQA-2. */
START_TEST(json_nulls)
{
    char *tokens[] = {"solo"};
    Fixture f;
    fixture_build(&f, tokens, 1, 8, 4, 4, 1);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    cJSON *j = parse_report(f.dir);
    const cJSON *h0 = cJSON_GetArrayItem(get(j, "heads"), 0);
    ck_assert(cJSON_IsNull(get(h0, "entropy_norm")));
    for (int p = 0; p < MEASURES_N_PATTERNS; p++) {
        const char *field = measures_pattern_field((MeasuresRole)p);
        ck_assert_msg(cJSON_IsNull(get(h0, field)), "%s should be null", field);
        const cJSON *rows = get(get(h0, "pattern_rows"), field); /* [shown, could show] */
        ck_assert_int_eq(cJSON_GetArraySize(rows), 2);
        ck_assert_double_eq(cJSON_GetArrayItem(rows, 1)->valuedouble, 0);
    }
    ck_assert(cJSON_IsNull(get(h0, "fixed_token_key")));
    ck_assert(cJSON_IsNull(get(h0, "strongest_pattern")));
    ck_assert_str_eq(get(h0, "role")->valuestring, "none"); /* one key: no choice */
    ck_assert(cJSON_IsNull(get(get(j, "comparison"), "blur")));
    ck_assert_int_eq(cJSON_GetArraySize(get(get(j, "cost"), "gqa")), 1);
    cJSON_Delete(j);

    char *txt = slurp_in(f.dir, "report.txt", NULL);
    check_contains(txt, "blur: not defined");
    check_contains(txt, "  with one token (T = 1), head 0 can only look at it: no pattern.\n");
    ck_assert_ptr_null(strstr(txt, "at most"));
    check_contains(txt, "\nGQA-2  ");
    free(txt);
    fixture_free(&f);
}
END_TEST

/* Tokens that need escaping come back as they were; bytes that are not
 * UTF-8 come back as U+FFFD. report.txt keeps one line per line. */
START_TEST(json_escapes_tokens)
{
    char *tokens[] = {"\"quoted\"", "back\\slash", "line\nbreak", "tab\t", "\x01", "caf\xc3\xa9",
                      "bad\xff", ""};
    Fixture f;
    fixture_build(&f, tokens, 8, 8, 2, 2, 0);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    cJSON *j = parse_report(f.dir);
    /* as given, but the invalid byte of token 6 shown as U+FFFD */
    const char *want[8] = {tokens[0], tokens[1], tokens[2], tokens[3], tokens[4], tokens[5],
                           "bad\xef\xbf\xbd", ""};
    int t = 0;
    const cJSON *tok;
    cJSON_ArrayForEach(tok, get(j, "tokens")) {
        ck_assert_int_lt(t, 8);
        ck_assert_str_eq(tok->valuestring, want[t++]);
    }
    ck_assert_int_eq(t, 8);
    ck_assert(cJSON_IsFalse(get(j, "causal")));
    cJSON_Delete(j);
    char *txt = slurp_in(f.dir, "report.txt", NULL);
    check_contains(txt, "line\\nbreak"); /* as the pictures show it (token_text) */
    check_contains(txt, "tab\\t");
    check_contains(txt, "\\x01");
    for (const unsigned char *p = (const unsigned char *)txt; *p; p++) /* no control byte but the line ends */
        ck_assert_msg(*p == '\n' || (*p >= 0x20 && *p != 0x7F), "report.txt holds byte 0x%02x at %ld", *p,
                      (long)(p - (const unsigned char *)txt));
    check_width(txt, 100);
    free(txt);
    fixture_free(&f);
}
END_TEST

/* report.txt: configuration, one table row and one sentence per head beside
 * the one head trained on its own (the fixture gives "single_head"), the blur
 * and output summaries, the cost table, in 100 columns. */
START_TEST(txt_says_what_a_class_needs)
{
    char *tokens[] = {"When", "Mary", "and", "John", "went", "to", "the", "store", ",", "John", "gave", "a",
                      "drink", "to", "Mary"};
    const int T = 15, H = 8;
    Fixture f;
    fixture_build(&f, tokens, T, 64, H, 8, 1);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    char *txt = slurp_in(f.dir, "report.txt", NULL);
    check_width(txt, 100);
    check_contains(txt, "T = 15");
    check_contains(txt, "d_model    64\n");
    check_contains(txt, "8 x head_dim 8");
    check_contains(txt, "K/V heads  8: MHA");
    check_contains(txt, "causal     yes");
    check_contains(txt, "one head   1 head of width 64, trained on its own (the input's \"single_head\")");
    int ids[15];
    measures_token_ids(tokens, T, ids);
    for (int h = 0; h < H; h++) {
        MapMeasures m;
        measures_map(f.multi.att + (size_t)h * T * T, T, 1, ids, &m);
        char row[64], sentence[32];
        /* the row: head, K/V head, role, entropy in bits */
        snprintf(row, sizeof row, "%5d %4d  %-15s %6.2f", h, h, measures_role_name(m.role), m.entropy_bits);
        check_contains(txt, row);
        /* one sentence per head, after "In words" */
        snprintf(sentence, sizeof sentence, " head %d ", h);
        const char *words = strstr(txt, "\nIn words\n");
        ck_assert_ptr_nonnull(words);
        ck_assert_msg(strstr(words, sentence) != NULL, "no sentence about head %d", h);
    }
    MapMeasures wide;
    measures_map(f.single.att, T, 1, ids, &wide);
    char row[64];
    snprintf(row, sizeof row, "alone    -  %-15s %6.2f", measures_role_name(wide.role), wide.entropy_bits);
    check_contains(txt, row);
    check_contains(txt, "\n  the one head trained on its own ");
    check_contains(txt, "blur = ");
    check_contains(txt, "||O_multi - O_single|| / ||O_multi|| = ");
    /* cost rows: MHA of d = 64: 4 * 64^2 = 16,384 params, every GQA (8 heads: 4 and 2 K/V heads), MQA */
    check_contains(txt, "this input (MHA)");
    check_contains(txt, "16,384");
    check_contains(txt, "\nGQA-4  ");
    check_contains(txt, "\nGQA-2  ");
    check_contains(txt, "\nMQA  ");
    check_contains(txt, "\none head         ");
    check_contains(txt, "masked cells are\nnot computed");
    /* exact cost wording: the same counts, what the heads add, K/V per token per layer */
    char *flat = unwrap(txt, "  ", " ");
    /* the counts are the cost table's MHA row (= the one head's): 16,384 parameters as above */
    check_contains(flat, "8 heads of width 8, each with its own K/V head (MHA), have the same parameters (16,384) "
                         "and multiply-adds (");
    check_contains(flat, ") as one head of width 64. "
                         "The 8 heads have 8 softmaxes per query token and 8 T x T attention maps, where one head "
                         "has one of each.");
    ck_assert_msg(!strstr(flat, "they add"), "'they add N softmaxes' reads as heads adding softmaxes");
    ck_assert_msg(!strstr(flat, "has fewer"), "an MHA input is said to cost less than MHA");
    check_contains(flat, "bytes per token per layer (MHA)");
    check_contains(txt, "K/V B/token: bytes of K/V cache per\ntoken per layer");
    free(flat);
    free(txt);
    fixture_free(&f);
}
END_TEST

/* Overwrite head h's map with row i's weights from fill(i, j). */
static void set_map(Fixture *f, int h, float (*fill)(int i, int j))
{
    const int T = f->in.cfg.T;
    float *a = f->multi.att + (size_t)h * T * T; /* (T, T) */
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            a[(size_t)i * T + j] = fill(i, j);
}

enum { LESSON_T = 11 }; /* Mary gave the book to John because John had helped Mary */
static float previous_map(int i, int j) { return j == (i > 0 ? i - 1 : 0); }
static float john_map(int i, int j) { (void)i; return j == 5; }
static float last_map(int i, int j)
{
    if (i == LESSON_T - 1)
        return j == i;
    return j == LESSON_T - 1 ? 0.97f : j == i ? 0.03f : 0.0f;
}
/* rows i >= 1: .4 previous, .35 itself, .25 on token 0 (row 1: on the next) */
static float split_map(int i, int j)
{
    if (i == 0)
        return j == 1 ? 0.4f : j == 0 ? 0.35f : j == 2 ? 0.25f : 0.0f;
    const int third = i == 1 ? 2 : 0;
    return j == i - 1 ? 0.4f : j == i ? 0.35f : j == third ? 0.25f : 0.0f;
}

/* Every sentence holds for the numbers behind it. Lesson 1's sentence
 * without the causal mask, four hand-made heads: previous token; every row
 * on "John" (5), a fixed token: rows 4, 5, 6 see it as the next token,
 * itself, the previous token, row 7 ("John") as its earlier copy, so 7
 * rows could show it; .97 on the last
 * token, "Mary" (rows 0..8 could: row 9 sees it as the next token, row 10
 * as itself); and a split head: .4 previous and .35 itself in every row
 * that has them, no role (40% is under half): it splits its rows between
 * the previous token and itself (measures.h). */
START_TEST(txt_sentences_hold_for_their_numbers)
{
    char *tokens[LESSON_T] = {"Mary", "gave", "the", "book", "to", "John", "because", "John", "had", "helped", "Mary"};
    Fixture f;
    fixture_build(&f, tokens, LESSON_T, 16, 4, 4, 0);
    set_map(&f, 0, previous_map);
    set_map(&f, 1, john_map);
    set_map(&f, 2, last_map);
    set_map(&f, 3, split_map);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    char *raw = slurp_in(f.dir, "report.txt", NULL);
    check_width(raw, 100);
    char *txt = unwrap(raw, "    ", " ");
    /* even spreading: each of these patterns names one cell of the 11 in a row: 9% */
    check_contains(txt, "\n  head 0 looks at the previous token: 100% of its attention on average (even "
                        "spreading would give 9%), at least half of the row in 10 of the 10 rows where it could.\n");
    check_contains(txt, "\n  head 1 looks at one token, 'John' (token 5): 100% of its attention on average (even "
                        "spreading would give 9%), at least half of the row in 7 of the 7 rows where it could.\n");
    check_contains(txt, "\n  head 2 looks at the last token, 'Mary': 97% of its attention on average (even "
                        "spreading would give 9%), at least half of the row in 9 of the 9 rows where it could.\n");
    check_contains(txt, "\n  head 3 splits its rows between two relations: 40% on the previous token + 35% on its "
                        "own token on average (even spreading would give 9% and 9%).\n");
    /* never the self-contradicting form of before */
    ck_assert_ptr_null(strstr(txt, "no single pattern"));
    ck_assert_ptr_null(strstr(txt, "at most"));
    cJSON *j = parse_report(f.dir);
    const cJSON *heads = get(j, "heads");
    ck_assert_str_eq(get(cJSON_GetArrayItem(heads, 1), "role")->valuestring, "fixed-token");
    ck_assert_double_eq(num(cJSON_GetArrayItem(heads, 1), "fixed_token_key"), 5);
    ck_assert_str_eq(get(cJSON_GetArrayItem(heads, 2), "role")->valuestring, "last-token");
    ck_assert_str_eq(get(cJSON_GetArrayItem(heads, 3), "role")->valuestring, "split");
    cJSON_Delete(j);
    free(txt);
    free(raw);
    fixture_free(&f);
}
END_TEST

/* A long token list wraps, never cut: 60 tokens and one of 150 characters
 * come back whole, in order, in lines of at most 100 columns. */
/* A head just short of a role: its strongest share 0.4994, under the role
 * rule's 0.5 (MEASURES_ROLE_SHARE). Its sentence must not print that as
 * "50%", which the legend's "at least 0.50" would count. */
START_TEST(txt_share_just_under_half_is_not_printed_as_half)
{
    char *tokens[] = {"a", "b", "c", "d"};
    MapMeasures m;
    memset(&m, 0, sizeof m);
    m.role = MEASURES_MIXED;
    m.strongest = MEASURES_PREVIOUS_TOKEN;
    m.pattern[MEASURES_PREVIOUS_TOKEN] = 0.4994;
    m.even[MEASURES_PREVIOUS_TOKEN] = 0.25;
    m.rows[MEASURES_PREVIOUS_TOKEN] = 3;
    m.shown[MEASURES_PREVIOUS_TOKEN] = 1;
    m.entropy_norm = 0.7996;
    m.fixed_key = -1;
    char line[512];
    report_sentence(line, sizeof line, "head 0", &m, tokens, 4);
    ck_assert_msg(strstr(line, "strongest pattern: 49.9% on") != NULL, "%s", line);
    ck_assert_msg(strstr(line, "50%") == NULL, "%s", line);

    /* a diffuse map just over the 0.8 threshold: not "80%" either */
    m.role = MEASURES_DIFFUSE;
    m.entropy_norm = 0.8004;
    report_sentence(line, sizeof line, "head 0", &m, tokens, 4);
    ck_assert_msg(strstr(line, "(entropy 80.1% of the most possible)") != NULL, "%s", line);
}
END_TEST

/* The blur's words change at BLUR_NOTICEABLE (0.05) and at chance's range:
 * its printed value never lands on either unless it is it. */
START_TEST(txt_blur_keeps_its_side_of_its_thresholds)
{
    const ChanceRange r = {200, -0.1412, 0.0936};
    static const struct {
        double blur;
        int side;
        const char *text;
    } cases[] = {{0.0496, 0, "+0.049"}, {0.0504, 0, "+0.051"}, {-0.0496, 0, "-0.049"}, {0.23, 1, "+0.23"},
                 {0.0941, 1, "+0.095"}, {-0.1433, -1, "-0.144"}, {-0.004, 0, "0.00"}, {0.0, 0, "0.00"}};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char buf[24];
        ck_assert_str_eq(report_blur_text(buf, sizeof buf, cases[k].blur, &r, cases[k].side), cases[k].text);
    }
}
END_TEST

START_TEST(txt_wraps_long_token_lists)
{
    enum { T = 61 };
    char names[T][160], *tokens[T];
    for (int t = 0; t < T; t++) {
        if (t == 30) {
            memset(names[t], 'x', 150);
            names[t][150] = '\0';
        } else {
            snprintf(names[t], sizeof names[t], "token%d", t);
        }
        tokens[t] = names[t];
    }
    Fixture f;
    fixture_build(&f, tokens, T, 8, 2, 2, 1);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    char *raw = slurp_in(f.dir, "report.txt", NULL);
    check_width(raw, 100);
    /* the list, its continuation lines (11 spaces) joined and every space dropped */
    char *joined = unwrap(raw, "           ", "");
    char *list = strstr(joined, "tokens     T = 61: ");
    ck_assert_ptr_nonnull(list);
    list += strlen("tokens     T = 61: ");
    char *got = calloc(strlen(list) + 1, 1), *o = got;
    for (const char *p = list; *p && *p != '\n'; p++)
        if (*p != ' ')
            *o++ = *p;
    char want[8192] = "";
    for (int t = 0; t < T; t++) {
        strcat(want, tokens[t]);
        if (t + 1 < T)
            strcat(want, "|");
    }
    ck_assert_str_eq(got, want);
    free(got);
    free(joined);
    free(raw);
    fixture_free(&f);
}
END_TEST

/* ReportData.notes shows in both files. */
START_TEST(notes_appear_in_both_files)
{
    char *tokens[] = {"a", "b", "c"};
    Fixture f;
    fixture_build(&f, tokens, 3, 8, 2, 1, 1);
    const char *note = "K/V heads were averaged in pairs to convert MHA to GQA.\n"
                       "A second line far too long for a report line: it goes on and on about the "
                       "conversion, well past one hundred columns, so the report must wrap it.";
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, note, err) == MHAVIZ_OK, "%s", err);
    char *txt = slurp_in(f.dir, "report.txt", NULL);
    check_contains(txt, "Notes\nK/V heads were averaged in pairs to convert MHA to GQA.\n");
    check_contains(txt, "so the report must wrap it.");
    check_width(txt, 100);
    free(txt);
    cJSON *j = parse_report(f.dir);
    ck_assert_str_eq(get(j, "notes")->valuestring, note);
    cJSON_Delete(j);
    fixture_free(&f);
}
END_TEST

/* A full disk: each file in turn is a link to /dev/full, where every write
 * fails with ENOSPC. The error is MHAVIZ_EIO and names that file. */
START_TEST(full_disk_is_an_error_naming_the_file)
{
    static const char *const names[] = {"report.txt", "report.json"};
    if (access("/dev/full", W_OK) != 0) {
        cannot_run("report full_disk_is_an_error_naming_the_file", "no /dev/full here");
        return;
    }
    for (int k = 0; k < 2; k++) {
        char *tokens[] = {"a", "b", "c", "d"};
        Fixture f;
        fixture_build(&f, tokens, 4, 8, 2, 2, 1);
        char link[128], err[MHAVIZ_ERRLEN] = "";
        snprintf(link, sizeof link, "%s/%s", f.dir, names[k]);
        ck_assert_int_eq(symlink("/dev/full", link), 0);
        ck_assert_int_eq(fixture_write(&f, NULL, err), MHAVIZ_EIO);
        ck_assert_msg(strstr(err, link) != NULL, "error '%s' does not name %s", err, link);
        fixture_free(&f);
    }
}
END_TEST

START_TEST(missing_folder_is_an_error_naming_the_file)
{
    char *tokens[] = {"a", "b"};
    Fixture f;
    fixture_build(&f, tokens, 2, 4, 1, 1, 1);
    ReportData d = {.in = &f.in, .multi = &f.multi, .single = &f.single, .single_given = 1};
    char err[MHAVIZ_ERRLEN] = "", missing[96];
    snprintf(missing, sizeof missing, "%s/nope", f.dir);
    ck_assert_int_eq(write_summarised(missing, &d, NULL, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "nope/report.txt") != NULL, "error '%s' does not name the file", err);
    fixture_free(&f);
}
END_TEST

/* Measures computed once by measures_layer (as the CLI does, for the picture
 * titles too) and handed to the layer's summary give the very bytes the report
 * has when layer_summary_build computes them itself: the same numbers,
 * whatever computed them. Tokens with
 * repeats, so the copy patterns are not all null. */
START_TEST(given_measures_give_the_same_files)
{
    char *tokens[] = {"the", "cat", "sat", "on", "the", "mat", "the", "cat"};
    Fixture f;
    fixture_build(&f, tokens, 8, 16, 4, 2, _i);
    const MhaConfig *c = &f.in.cfg;
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_int_eq(fixture_write(&f, NULL, err), MHAVIZ_OK);
    size_t n_txt, n_json;
    char *txt = slurp_in(f.dir, "report.txt", &n_txt), *json = slurp_in(f.dir, "report.json", &n_json);

    MapMeasures m[5]; /* n_heads + 1 */
    ck_assert_int_eq(measures_layer(f.multi.att, c->n_heads, f.single.att, c->T, c->causal, tokens, m),
                     MHAVIZ_OK);
    ReportData d = {.in = &f.in, .multi = &f.multi, .single = &f.single, .single_given = 1};
    ck_assert_int_eq(write_summarised(f.dir, &d, m, err, sizeof err), MHAVIZ_OK);
    size_t n_txt2, n_json2;
    char *txt2 = slurp_in(f.dir, "report.txt", &n_txt2), *json2 = slurp_in(f.dir, "report.json", &n_json2);
    ck_assert_uint_eq(n_txt2, n_txt);
    ck_assert_str_eq(txt2, txt);
    ck_assert_uint_eq(n_json2, n_json);
    ck_assert_str_eq(json2, json);
    free(txt), free(json), free(txt2), free(json2);
    fixture_free(&f);
}
END_TEST

/* report.json is formatted in parallel blocks of rows while the block
 * before is written: the bytes must not depend on the thread count. T = 300
 * rows of 300 numbers take two blocks per map (about 1 MB each), so the
 * overlap of writing and formatting happens. */
START_TEST(json_bytes_do_not_depend_on_the_thread_count)
{
    enum { T = 300 };
    static char names[T][8];
    char *tokens[T];
    for (int t = 0; t < T; t++) {
        snprintf(names[t], sizeof names[t], "t%d", t % 37);
        tokens[t] = names[t];
    }
    Fixture f;
    fixture_build(&f, tokens, T, 16, 4, 4, 1);
    char err[MHAVIZ_ERRLEN] = "";
    char *first = NULL;
    size_t n_first = 0;
    for (int threads = 1; threads <= 3; threads++) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        ck_assert_int_eq(fixture_write(&f, NULL, err), MHAVIZ_OK);
        size_t n;
        char *json = slurp_in(f.dir, "report.json", &n);
        if (!first) {
            first = json, n_first = n;
            continue;
        }
        ck_assert_uint_eq(n, n_first);
        ck_assert_msg(memcmp(json, first, n) == 0, "report.json differs with %d threads", threads);
        free(json);
    }
    free(first);
    fixture_free(&f);
}
END_TEST

/* With --steps the scores are in report.json too, beside each map: each
 * head's and the wide head's, as the forward passes computed them (not
 * less the row's maximum, as the pictures show them). */
START_TEST(json_has_scores_with_steps)
{
    char *tokens[] = {"a", "b", "c", "d", "e"};
    const int T = 5;
    Fixture f;
    fixture_build_scores(&f, tokens, T, 8, 2, 2, 1, 1);
    f.npy = _i;
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
    cJSON *j = parse_report(f.dir);
    const cJSON *head;
    int h = 0;
    cJSON_ArrayForEach(head, get(j, "heads"))
    {
        char file[64];
        snprintf(file, sizeof file, "head_%02d_scores.npy", h);
        check_matrix(f.dir, get(head, "scores"), f.multi.scores + (size_t)h * T * T, T, T, file, "heads[].scores");
        h++;
    }
    ck_assert_int_eq(h, 2);
    check_matrix(f.dir, get(get(j, "single_head"), "scores"), f.single.scores, T, T, "single_head_scores.npy",
                 "single_head.scores");
    cJSON_Delete(j);
    fixture_free(&f);
}
END_TEST

/* The stated size: report_matrix_numbers counts n_heads maps and the wide
 * head's (twice with the scores) and two (T, d_model) outputs; past
 * REPORT_INLINE_MAX_NUMBERS (2^20 = 1 048 576) the matrices go to .npy
 * files without --npy. T = 450, d 16, 4 heads: 5 x 450^2 + 2 x 450 x 16 =
 * 1 026 900, inline; T = 460: 5 x 460^2 + 2 x 460 x 16 = 1 072 720, .npy. */
START_TEST(npy_past_the_stated_size)
{
    const MhaConfig gpt2 = {.T = 512, .d_model = 768, .n_heads = 12, .n_kv_heads = 12, .head_dim = 64};
    ck_assert_uint_eq(report_matrix_numbers(&gpt2, 0), 13 * 512 * 512 + 2 * 512 * 768);
    ck_assert_uint_eq(report_matrix_numbers(&gpt2, 1), 26 * 512 * 512 + 2 * 512 * 768);
    const int Ts[2] = {450, 460};
    for (int k = 0; k < 2; k++) {
        const int T = Ts[k];
        char **tokens = malloc((size_t)T * sizeof *tokens);
        for (int t = 0; t < T; t++)
            tokens[t] = "w";
        Fixture f;
        fixture_build(&f, tokens, T, 16, 4, 4, 1);
        ck_assert_uint_eq(report_matrix_numbers(&f.in.cfg, 0), k == 0 ? 1026900 : 1072720);
        char err[MHAVIZ_ERRLEN] = "";
        ck_assert_msg(fixture_write(&f, NULL, err) == MHAVIZ_OK, "%s", err);
        cJSON *j = parse_report(f.dir);
        const cJSON *out = get(get(j, "output"), "multi_head");
        ck_assert_msg(k == 0 ? cJSON_IsArray(out) : cJSON_IsString(out), "T = %d", T);
        check_matrix(f.dir, out, f.multi.out, T, 16, "output_multi_head.npy", "output.multi_head");
        const cJSON *att0 = get(cJSON_GetArrayItem(get(j, "heads"), 0), "attention");
        check_matrix(f.dir, att0, f.multi.att, T, T, "head_00_attention.npy", "heads[0].attention");
        cJSON_Delete(j);
        fixture_free(&f);
        free(tokens);
    }
}
END_TEST

/* A .npy file as numpy.save writes it (numpy.lib.format, version 1.0): the
 * magic, the header's length, a header padded with spaces to a multiple of
 * 64 bytes and ended by a newline, then the little-endian floats. The 128
 * header bytes are those numpy 1.24's np.save writes for a (2, 3) float32
 * array (its header length 118 = 0x76). */
START_TEST(npy_file_as_numpy_writes_it)
{
    char dir[] = "/tmp/mhaviz-npy-XXXXXX", path[64], msg[256];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/m.npy", dir);
    const float m[6] = {1.0f, -2.5f, 0.0f, FLT_MAX, 1e-45f, 0.1f};
    ck_assert_int_eq(npy_write_floats(path, 2, 3, m, msg, sizeof msg), MHAVIZ_OK);
    size_t n;
    char *b = slurp_in(dir, "m.npy", &n);
    const char header[] = "{'descr': '<f4', 'fortran_order': False, 'shape': (2, 3), }";
    ck_assert_uint_eq(n, 128 + sizeof m);
    ck_assert_int_eq(memcmp(b, "\x93NUMPY\x01\x00\x76\x00", 10), 0);
    ck_assert_int_eq(memcmp(b + 10, header, sizeof header - 1), 0);
    for (size_t k = 10 + sizeof header - 1; k < 127; k++)
        ck_assert_int_eq(b[k], ' ');
    ck_assert_int_eq(b[127], '\n');
    ck_assert_int_eq(memcmp(b + 128, m, sizeof m), 0);
    free(b);
    /* a full disk is an error naming the file */
    ck_assert_int_eq(npy_write_floats("/dev/full", 2, 3, m, msg, sizeof msg), MHAVIZ_EIO);
    ck_assert_str_eq(msg, "/dev/full: cannot write: No space left on device");
    unlink(path);
    rmdir(dir);
}
END_TEST

Suite *report_suite(void)
{
    Suite *s = suite_create("report");
    TCase *tc = tcase_create("report");
    tcase_add_loop_test(tc, json_has_issue_shapes_and_exact_floats, 0, 2);
    tcase_add_loop_test(tc, json_has_scores_with_steps, 0, 2);
    tcase_add_test(tc, npy_file_as_numpy_writes_it);
    tcase_add_test(tc, json_nulls);
    tcase_add_test(tc, json_escapes_tokens);
    tcase_add_test(tc, txt_says_what_a_class_needs);
    tcase_add_test(tc, txt_sentences_hold_for_their_numbers);
    tcase_add_test(tc, txt_wraps_long_token_lists);
    tcase_add_test(tc, txt_share_just_under_half_is_not_printed_as_half);
    tcase_add_test(tc, txt_blur_keeps_its_side_of_its_thresholds);
    tcase_add_test(tc, notes_appear_in_both_files);
    tcase_add_test(tc, full_disk_is_an_error_naming_the_file);
    tcase_add_test(tc, missing_folder_is_an_error_naming_the_file);
    tcase_add_test(tc, json_bytes_do_not_depend_on_the_thread_count);
    tcase_add_loop_test(tc, given_measures_give_the_same_files, 0, 2);
    suite_add_tcase(s, tc);
    TCase *big = tcase_create("report at the stated size"); /* a million numbers written and read back */
    tcase_add_test(big, npy_past_the_stated_size);
    tcase_set_timeout(big, 60);
    suite_add_tcase(s, big);
    return s;
}
