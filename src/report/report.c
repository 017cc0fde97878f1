/* report.c — report.txt (for a class) and report.json (for anyone who wants
 * the numbers), comparing each head with the single wide head.
 *
 * report.json holds every attention map and both outputs. While they are
 * small (REPORT_INLINE_MAX_NUMBERS numbers in all) they are written inline,
 * row by row from the forward pass's own arrays, every float as "%.9g":
 * enough digits for a float32 to read back to the same bits. Past that, or
 * with --npy, each matrix is a .npy file beside report.json, which holds
 * the file's name where the array would be (as an input names its .npy
 * files). Every write is checked: a full disk is an error that names the
 * file, never a short report. */
#include "report/report.h"
#include "core/measures.h"
#include "core/status.h"
#include "io/npy.h"
#include "text/format.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A blur smaller than this (in normalised entropy, 0..1) is read as "about as sharp". */
#define BLUR_NOTICEABLE 0.05

#define REPORT_WIDTH 100 /* report.txt fits in this many columns */

/* Numbers (cells or floats to print) below which a loop stays on one thread:
 * waking the threads would cost more than it saves (a class-size layer). */
#define REPORT_PARALLEL_MIN ((size_t)1 << 15)

/* Everything both files say, computed once. */
typedef struct {
    const MhaConfig *c;
    const float *wide_att;  /* (T, T) the single wide head's map */
    MapMeasures *heads;     /* (n_heads) */
    MapComparison *cmp;     /* (n_heads) each head against the wide head */
    MapMeasures wide;       /* the single wide head */
    double heads_bits_mean; /* mean of the heads' entropy_bits */
    double heads_norm_mean; /* mean of the heads' entropy_norm (NAN = null) */
    double blur;            /* wide entropy_norm - heads_norm_mean */
    double rel_diff;        /* ||O_multi - O_single||_F / ||O_multi||_F */
    double cosine;          /* mean over tokens of cos(O_multi row, O_single row) */
    CostTable cost;
} Summary;

/* The heads' mean normalised entropy (NAN = null when theirs are) and the
 * blur: the wide head's normalised entropy less that mean. m holds the
 * n_heads maps' measures, the wide head's last. */
static double blur_of(const MapMeasures *m, int n_heads, double *heads_norm_mean)
{
    double norm_sum = 0.0;
    for (int h = 0; h < n_heads; h++) /* in head order: the same sum for any thread count */
        norm_sum += m[h].entropy_norm;
    *heads_norm_mean = norm_sum / n_heads;
    return m[n_heads].entropy_norm - *heads_norm_mean;
}

static void summary_free(Summary *s)
{
    free(s->heads);
    free(s->cmp);
}

static int summarise(const ReportData *d, Summary *s)
{
    const MhaConfig *c = &d->in->cfg;
    const int T = c->T;
    const size_t map = (size_t)T * T;
    memset(s, 0, sizeof *s);
    s->c = c;
    s->wide_att = d->single->att;
    s->heads = malloc((size_t)c->n_heads * sizeof *s->heads);
    s->cmp = malloc((size_t)c->n_heads * sizeof *s->cmp);
    /* Each map's measures: the caller's (computed once for the pictures and
     * the reports), else computed here the same way. */
    const MapMeasures *m = d->measures;
    MapMeasures *computed = NULL; /* (n_heads + 1) when the caller has none */
    if (s->heads && s->cmp && !m) {
        computed = malloc(((size_t)c->n_heads + 1) * sizeof *computed);
        if (computed && measures_layer(d->multi->att, c->n_heads, s->wide_att, T, c->causal, d->in->tokens,
                                       computed) == MHAVIZ_OK)
            m = computed;
    }
    if (!s->heads || !s->cmp || !m) {
        free(computed);
        summary_free(s);
        return MHAVIZ_ENOMEM;
    }
    memcpy(s->heads, m, (size_t)c->n_heads * sizeof *s->heads);
    s->wide = m[c->n_heads];
    s->blur = blur_of(m, c->n_heads, &s->heads_norm_mean);
    free(computed);
#pragma omp parallel for schedule(dynamic) if ((size_t)c->n_heads * map >= REPORT_PARALLEL_MIN)
    for (int h = 0; h < c->n_heads; h++)
        measures_compare(d->multi->att + (size_t)h * map, s->wide_att, T, c->causal, &s->cmp[h]);
    double bits_sum = 0.0;
    for (int h = 0; h < c->n_heads; h++) /* in head order: the same sum for any thread count */
        bits_sum += s->heads[h].entropy_bits;
    s->heads_bits_mean = bits_sum / c->n_heads;
    s->rel_diff = measures_output_rel_diff(d->multi->out, d->single->out, T, c->d_model);
    s->cosine = measures_output_cosine(d->multi->out, d->single->out, T, c->d_model);
    const int wide_bias = d->single_given ? d->in->single.has_bias : d->in->w.has_bias;
    measures_cost(c, d->in->w.has_bias, wide_bias, &s->cost);
    return MHAVIZ_OK;
}

/* ---------------------------------------------------------------- files */

/* Open dir/name for writing. The caller frees *path. */
static FILE *open_out(const char *dir, const char *name, char **path, char *err, size_t errlen, int *rc)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    *path = malloc(n);
    if (!*path) {
        snprintf(err, errlen, "out of memory");
        *rc = MHAVIZ_ENOMEM;
        return NULL;
    }
    snprintf(*path, n, "%s/%s", dir, name);
    FILE *f = fopen(*path, "w");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", *path, strerror(errno));
        *rc = MHAVIZ_EIO;
        return NULL;
    }
    return f;
}

/* Flush and close f; any failure on the way (a full disk shows up here at the
 * latest) is MHAVIZ_EIO naming the file. */
static int close_out(FILE *f, const char *path, char *err, size_t errlen)
{
    int bad = fflush(f) != 0 || ferror(f);
    int e = errno;
    if (fclose(f) != 0 && !bad) {
        bad = 1;
        e = errno;
    }
    if (bad) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(e ? e : EIO));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------ report.json */

/* s as a JSON string: quotes, backslashes and control characters escaped,
 * bytes that are not UTF-8 replaced by U+FFFD. */
static void json_string(FILE *f, const char *s)
{
    const unsigned char *p = (const unsigned char *)s;
    fputc('"', f);
    while (*p) {
        int n = utf8_decode(p, SIZE_MAX, NULL);
        if (n == 0) {
            fputs("\\ufffd", f);
            p++;
        } else if (*p == '"' || *p == '\\') {
            fputc('\\', f);
            fputc(*p++, f);
        } else if (*p < 0x20) {
            const char *esc = *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" : NULL;
            if (esc)
                fputs(esc, f);
            else
                fprintf(f, "\\u%04x", *p);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
    fputc('"', f);
}

/* A number, or null for NAN and the infinities JSON cannot hold. */
static void json_number(FILE *f, double x)
{
    if (isfinite(x))
        fprintf(f, "%.9g", x);
    else
        fputs("null", f);
}

/* Where report.json's matrices go: inline, or each in a .npy file of its
 * own in the output folder, report.json holding the file's name. */
typedef struct {
    const char *dir; /* the output folder */
    int npy;         /* 1: .npy files */
    int rc;          /* MHAVIZ_OK, or the first .npy file's failure (err says which) */
    char *err;
    size_t errlen;
} Matrices;

/* A (rows, cols) matrix, as an array of rows (one row per line, every
 * float as "%.9g": enough digits to read back to the same bits), or as the
 * name of the .npy file `name` written beside report.json. */
static void json_matrix(FILE *f, Matrices *mx, const float *m, int rows, int cols, const char *name,
                        const char *indent)
{
    if (mx->npy) {
        if (mx->rc == MHAVIZ_OK) { /* after a failure, only report.json's text goes on (and is discarded) */
            size_t n = strlen(mx->dir) + strlen(name) + 2;
            char *path = malloc(n);
            if (path) {
                snprintf(path, n, "%s/%s", mx->dir, name);
                mx->rc = npy_write_floats(path, rows, cols, m, mx->err, mx->errlen);
            } else {
                snprintf(mx->err, mx->errlen, "out of memory");
                mx->rc = MHAVIZ_ENOMEM;
            }
            free(path);
        }
        json_string(f, name);
        return;
    }
    fputs("[\n", f);
    for (int i = 0; i < rows; i++) {
        const float *m_i = m + (size_t)i * cols; // (cols) row i
        fprintf(f, "%s[", indent);
        for (int j = 0; j < cols; j++) {
            if (j > 0)
                fputc(',', f);
            json_number(f, m_i[j]);
        }
        fputs(i + 1 < rows ? "],\n" : "]\n", f);
    }
    fprintf(f, "%.*s]", (int)strlen(indent) - 2, indent);
}

/* The per-map measures as "key": value pairs, each line starting with indent. */
static void json_measures(FILE *f, const MapMeasures *m, const char *indent)
{
    fprintf(f, "%s\"role\": \"%s\",\n", indent, measures_role_name(m->role));
    fprintf(f, "%s\"entropy_bits\": ", indent);
    json_number(f, m->entropy_bits);
    fprintf(f, ",\n%s\"entropy_norm\": ", indent);
    json_number(f, m->entropy_norm);
    fprintf(f, ",\n%s\"confidence\": ", indent);
    json_number(f, m->confidence);
    fprintf(f, ",\n%s\"mean_distance\": ", indent);
    json_number(f, m->mean_distance);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++) {
        fprintf(f, ",\n%s\"%s\": ", indent, measures_pattern_field((MeasuresRole)r));
        json_number(f, m->pattern[r]);
    }
    /* for each pattern: [rows that show it, rows where it could show] */
    fprintf(f, ",\n%s\"pattern_rows\": {", indent);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++)
        fprintf(f, "%s\"%s\": [%d, %d]", r ? ", " : "", measures_pattern_field((MeasuresRole)r), m->shown[r],
                m->rows[r]);
    /* for each pattern: the share spreading evenly would give */
    fprintf(f, "},\n%s\"pattern_even\": {", indent);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++) {
        fprintf(f, "%s\"%s\": ", r ? ", " : "", measures_pattern_field((MeasuresRole)r));
        json_number(f, m->even[r]);
    }
    fprintf(f, "},\n%s\"fixed_token_key\": ", indent);
    if (m->fixed_key >= 0)
        fprintf(f, "%d", m->fixed_key);
    else
        fputs("null", f);
    fprintf(f, ",\n%s\"strongest_pattern\": ", indent);
    if (m->strongest >= 0)
        fprintf(f, "\"%s\"", measures_pattern_field((MeasuresRole)m->strongest));
    else
        fputs("null", f);
    fputs(",\n", f);
}

static void json_cost_row(FILE *f, const char *key, const CostRow *r, int valid, int last)
{
    fprintf(f, "    \"%s\": ", key);
    if (!valid)
        fputs("null", f);
    else
        fprintf(f,
                "{\"n_heads\": %d, \"n_kv_heads\": %d, \"head_dim\": %d, \"params\": %" PRId64
                ", \"mac_projections\": %" PRId64 ", \"mac_scores\": %" PRId64
                ", \"mac_value_mix\": %" PRId64 ", \"mac_total\": %" PRId64
                ", \"kv_cache_bytes_per_token\": %" PRId64 "}",
                r->n_heads, r->n_kv_heads, r->head_dim, r->params, r->mac_projections, r->mac_scores,
                r->mac_value_mix, r->mac_projections + r->mac_scores + r->mac_value_mix, r->kv_cache_bytes);
    fputs(last ? "\n" : ",\n", f);
}

/* "pulls": how the wide head combines the heads' scores, row by row (pull.h). */
static void json_pulls(FILE *f, const PullLayer *p)
{
    fprintf(f, "  \"pulls\": {\n    \"identity\": %s,\n    \"identity_max_deviation\": ",
            p->identity ? "true" : "false");
    json_number(f, p->identity_max_dev);
    fputs(",\n    \"max_abs_wide_score\": ", f);
    json_number(f, p->max_abs_score);
    fprintf(f, ",\n    \"blur_at_most\": %g,\n    \"default_query\": %d,\n    \"counts\": {", PULL_BLUR_AT_MOST,
            p->default_query);
    for (int o = 0; o < PULL_N_OUTCOMES; o++)
        fprintf(f, "\"%s\": %d, ", pull_outcome_name((PullOutcome)o), p->count[o]);
    fprintf(f, "\"blurs\": %d},\n    \"rows\": [\n", p->n_blur);
    for (int i = 0; i < p->T; i++) {
        const PullRow *r = &p->rows[i];
        fprintf(f, "      {\"query\": %d, \"outcome\": \"%s\", \"head_top_keys\": [", i,
                pull_outcome_name(r->outcome));
        for (int h = 0; h < p->n_heads; h++)
            fprintf(f, h ? ", %d" : "%d", p->top[(size_t)i * p->n_heads + h]);
        fprintf(f, "], \"wide_top_key\": %d, \"wide_top_weight\": ", r->wide_top);
        json_number(f, r->wide_top_att);
        fprintf(f, ", \"blurs\": %s}%s\n", r->blurs ? "true" : "false", i + 1 < p->T ? "," : "");
    }
    fputs("    ]\n  },\n", f);
}

static void write_json(FILE *f, const ReportData *d, const Summary *s, Matrices *mx)
{
    const MhaConfig *c = s->c;
    const int T = c->T;
    const size_t map = (size_t)T * T;

    fputs("{\n  \"format\": \"mhaviz-report\",\n  \"version\": 2,\n  \"tokens\": [", f);
    for (int t = 0; t < T; t++) {
        if (t > 0)
            fputs(", ", f);
        json_string(f, d->in->tokens[t]);
    }
    fprintf(f, "],\n  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"n_kv_heads\": %d,\n  \"head_dim\": %d,\n"
               "  \"causal\": %s,\n",
            c->d_model, c->n_heads, c->n_kv_heads, c->head_dim, c->causal ? "true" : "false");
    if (d->notes) {
        fputs("  \"notes\": ", f);
        json_string(f, d->notes);
        fputs(",\n", f);
    }

    /* Each head: where it sits, what it does, how it differs, its map. */
    const int kv_mul = c->n_heads / c->n_kv_heads;
    const char *pad = c->n_heads >= 100 ? "%03d" : "%02d"; /* head_00 .. as the pictures are named */
    char fmt[64], name[64];
    fputs("  \"heads\": [\n", f);
    for (int h = 0; h < c->n_heads; h++) {
        fprintf(f, "    {\n      \"index\": %d,\n      \"kv_head\": %d,\n", h, h / kv_mul);
        json_measures(f, &s->heads[h], "      ");
        fputs("      \"js_to_single\": ", f);
        json_number(f, s->cmp[h].js_to_single);
        fputs(",\n      \"top1_agreement\": ", f);
        json_number(f, s->cmp[h].top1_agreement);
        fputs(",\n      \"attention\": ", f);
        snprintf(fmt, sizeof fmt, "head_%s_attention.npy", pad);
        snprintf(name, sizeof name, fmt, h);
        json_matrix(f, mx, d->multi->att + (size_t)h * map, T, T, name, "        ");
        if (d->scores && d->multi->scores) {
            fputs(",\n      \"scores\": ", f);
            snprintf(fmt, sizeof fmt, "head_%s_scores.npy", pad);
            snprintf(name, sizeof name, fmt, h);
            json_matrix(f, mx, d->multi->scores + (size_t)h * map, T, T, name, "        ");
        }
        fputs(h + 1 < c->n_heads ? "\n    },\n" : "\n    }\n", f);
    }
    fputs("  ],\n", f);

    fprintf(f, "  \"single_head\": {\n      \"source\": \"%s\",\n",
            d->single_given ? "input" : "same projections");
    json_measures(f, &s->wide, "      ");
    fputs("      \"attention\": ", f);
    json_matrix(f, mx, s->wide_att, T, T, "single_head_attention.npy", "        ");
    if (d->scores && d->single->scores) {
        fputs(",\n      \"scores\": ", f);
        json_matrix(f, mx, d->single->scores, T, T, "single_head_scores.npy", "        ");
    }
    fputs("\n  },\n", f);

    fputs("  \"comparison\": {\n    \"blur\": ", f);
    json_number(f, s->blur);
    fputs(",\n    \"heads_mean_entropy_norm\": ", f);
    json_number(f, s->heads_norm_mean);
    fputs(",\n    \"single_head_entropy_norm\": ", f);
    json_number(f, s->wide.entropy_norm);
    fputs(",\n    \"output_rel_diff\": ", f);
    json_number(f, s->rel_diff);
    fputs(",\n    \"output_cosine\": ", f);
    json_number(f, s->cosine);
    fputs("\n  },\n", f);

    if (d->pulls)
        json_pulls(f, d->pulls);

    const CostTable *t = &s->cost;
    fprintf(f, "  \"cost\": {\n    \"T\": %d,\n    \"visible_pairs\": %" PRId64 ",\n"
               "    \"masked_cells_counted\": false,\n    \"biases_counted\": %s,\n",
            T, t->pairs, d->in->w.has_bias ? "true" : "false");
    json_cost_row(f, "input", &t->input, 1, 0);
    json_cost_row(f, "mha", &t->mha, 1, 0);
    json_cost_row(f, "gqa", &t->gqa, t->gqa_valid, 0);
    json_cost_row(f, "mqa", &t->mqa, 1, 0);
    json_cost_row(f, "single_head", &t->wide, 1, 1);
    fputs("  },\n", f);

    fputs("  \"output\": {\n    \"multi_head\": ", f);
    json_matrix(f, mx, d->multi->out, T, c->d_model, "output_multi_head.npy", "      ");
    fputs(",\n    \"single_head\": ", f);
    json_matrix(f, mx, d->single->out, T, c->d_model, "output_single_head.npy", "      ");
    fputs("\n  }\n}\n", f);
}

/* ------------------------------------------------------------- report.txt */

/* A measure in a table cell: "-" for null. */
static const char *cell(char *buf, size_t n, const char *fmt, double x)
{
    if (measures_is_null(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, x);
    return buf;
}

/* The tokens separated by " | ", the first line starting at column col,
 * wrapped to REPORT_WIDTH columns with continuation lines after indent
 * spaces; a line breaks after a "|", or inside a token too long for a line
 * of its own. Every token is shown whole: control characters and bytes that
 * are not UTF-8 as '?'. */
static void txt_tokens(FILE *f, char *const *tokens, int T, int col, int indent)
{
    for (int t = 0; t < T; t++) {
        const unsigned char *p = (const unsigned char *)tokens[t];
        int w = 0; /* the token's columns, one per code point */
        for (const unsigned char *q = p; *q; q++)
            w += (*q & 0xC0) != 0x80;
        const int sep = t + 1 < T ? 2 : 0; /* " |" after it */
        if (t > 0) {
            if (col + 1 + w + sep > REPORT_WIDTH && col > indent) {
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            } else {
                fputc(' ', f);
                col++;
            }
        }
        while (*p) {
            if (col >= REPORT_WIDTH - sep) { /* a token longer than a line */
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            }
            int n = utf8_decode(p, SIZE_MAX, NULL);
            if (n == 0 || *p < 0x20 || *p == 0x7F) {
                fputc('?', f);
                p += n ? n : 1;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
            col++;
        }
        if (sep) {
            fputs(" |", f);
            col += sep;
        }
    }
    fputc('\n', f);
}

/* Columns text takes: UTF-8 code points. */
static int columns(const char *s, size_t n)
{
    int c = 0;
    for (size_t k = 0; k < n; k++)
        c += ((unsigned char)s[k] & 0xC0) != 0x80;
    return c;
}

/* Print text word-wrapped to REPORT_WIDTH columns: the first line after
 * indent, the next ones after indent plus two spaces. */
static void txt_wrapped(FILE *f, const char *indent, const char *text)
{
    const int ind = (int)strlen(indent);
    int col = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        const int w = columns(p, n);
        if (col == 0) {
            col = fprintf(f, "%s", indent);
        } else if (col + 1 + w > REPORT_WIDTH) {
            fprintf(f, "\n%s  ", indent);
            col = ind + 2;
        } else {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, n, f);
        col += w;
        p += n;
    }
    fputc('\n', f);
}

/* Token t as the sentences quote it: 'text', control characters and
 * bytes that are not UTF-8 as '?', at most n - 1 bytes of it. */
static const char *quoted_token(char *buf, size_t n, const char *token)
{
    size_t k = 0;
    buf[k++] = '\'';
    for (const unsigned char *p = (const unsigned char *)token; *p && k + 6 < n;) {
        int len = utf8_decode(p, SIZE_MAX, NULL);
        if (len == 0 || *p < 0x20 || *p == 0x7F) {
            buf[k++] = '?';
            p += len ? len : 1;
        } else {
            memcpy(buf + k, p, (size_t)len);
            k += (size_t)len;
            p += len;
        }
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

/* Where pattern r of map m sends attention, in words: "the previous token",
 * "the first token, 'Mary'", ... tokens (T) name the keys. */
static const char *pattern_place(char *buf, size_t n, const MapMeasures *m, MeasuresRole r,
                                 char *const *tokens, int T)
{
    char q[96];
    switch (r) {
    case MEASURES_PREVIOUS_TOKEN: snprintf(buf, n, "the previous token"); break;
    case MEASURES_SELF: snprintf(buf, n, "its own token"); break;
    case MEASURES_NEXT_TOKEN: snprintf(buf, n, "the next token"); break;
    case MEASURES_DUPLICATE_TOKEN: snprintf(buf, n, "earlier copies of its token"); break;
    case MEASURES_INDUCTION:
        snprintf(buf, n, "the token after an earlier copy of its token (induction)");
        break;
    case MEASURES_FIRST_TOKEN: snprintf(buf, n, "the first token, %s", quoted_token(q, sizeof q, tokens[0])); break;
    case MEASURES_LAST_TOKEN:
        snprintf(buf, n, "the last token, %s", quoted_token(q, sizeof q, tokens[T - 1]));
        break;
    case MEASURES_FIXED_TOKEN:
        snprintf(buf, n, "one token, %s (token %d)", quoted_token(q, sizeof q, tokens[m->fixed_key]),
                 m->fixed_key);
        break;
    default: snprintf(buf, n, "?"); break;
    }
    return buf;
}

/* "in 3 of the 10 rows where it could": how often pattern r takes at least
 * half of a row. */
static const char *pattern_support(char *buf, size_t n, const MapMeasures *m, MeasuresRole r)
{
    snprintf(buf, n, "at least half of the row in %d of the %d row%s where it could", m->shown[r], m->rows[r],
             m->rows[r] == 1 ? "" : "s");
    return buf;
}

/* One plain sentence about map m, true for the numbers behind it; who is
 * "head 2" or "the wide head", tokens (T) name the keys. */
static void txt_sentence(FILE *f, const char *who, const MapMeasures *m, char *const *tokens, int T)
{
    char line[512], place[160], support[96];
    if (m->role < MEASURES_N_PATTERNS) {
        snprintf(line, sizeof line, "%s looks at %s: %.0f%% of its attention on average (even spreading "
                 "would give %.0f%%), %s.", who, pattern_place(place, sizeof place, m, m->role, tokens, T),
                 100.0 * m->pattern[m->role], 100.0 * m->even[m->role],
                 pattern_support(support, sizeof support, m, m->role));
    } else if (m->role == MEASURES_NONE) {
        snprintf(line, sizeof line, "with one token (T = 1), %s can only look at it: no pattern.", who);
    } else {
        int n = m->role == MEASURES_DIFFUSE
                    ? snprintf(line, sizeof line, "%s spreads its attention almost evenly (entropy %.0f%% of the "
                                                  "most possible)", who, 100.0 * m->entropy_norm)
                    : snprintf(line, sizeof line, "%s has no clear role", who);
        if (m->strongest >= 0)
            snprintf(line + n, sizeof line - (size_t)n,
                     "; strongest pattern: %.0f%% on %s (even spreading would give %.0f%%), %s.",
                     100.0 * m->pattern[m->strongest],
                     pattern_place(place, sizeof place, m, (MeasuresRole)m->strongest, tokens, T),
                     100.0 * m->even[m->strongest],
                     pattern_support(support, sizeof support, m, (MeasuresRole)m->strongest));
        else
            snprintf(line + n, sizeof line - (size_t)n, "; no pattern could show in more than one row.");
    }
    txt_wrapped(f, "  ", line);
}

/* A map's row of the first table: role, entropy, confidence, distance and,
 * for a head, how it differs from the wide head. */
static void txt_table_row(FILE *f, const char *label, const char *kv, const MapMeasures *m,
                          const MapComparison *cmp)
{
    char b[6][16];
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", label, kv, measures_role_name(m->role),
            cell(b[0], 16, "%.2f", m->entropy_bits), cell(b[1], 16, "%.2f", m->entropy_norm),
            cell(b[2], 16, "%.2f", m->confidence), cell(b[3], 16, "%.1f", m->mean_distance),
            cmp ? cell(b[4], 16, "%.2f", cmp->js_to_single) : "-",
            cmp ? cell(b[5], 16, "%.2f", cmp->top1_agreement) : "-");
}

/* A map's row of the pattern table: each pattern's mean share. */
static void txt_pattern_row(FILE *f, const char *label, const MapMeasures *m)
{
    char b[16];
    fprintf(f, "%5s", label);
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", cell(b, sizeof b, "%.2f", m->pattern[p]));
    fputc('\n', f);
}

/* The cost table, columns as wide as their widest number. */
static void txt_cost(FILE *f, const ReportData *d, const Summary *s)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    char input_label[48];
    snprintf(input_label, sizeof input_label, "this input (%s)", measures_layout_name(c->n_heads, c->n_kv_heads));
    const char *labels[5] = {input_label, "MHA", "GQA", "MQA", "one wide head"};
    const CostRow *rows[5] = {&t->input, &t->mha, &t->gqa, &t->mqa, &t->wide};
    const int valid[5] = {1, 1, t->gqa_valid, 1, 1};
    const char *heads[8] = {"heads", "K/V", "params", "MAC proj", "MAC scores", "MAC mix", "MAC total",
                            "K/V B/token"};
    char num[5][8][32];
    int w[8];
    for (int k = 0; k < 8; k++)
        w[k] = (int)strlen(heads[k]);
    for (int r = 0; r < 5; r++) {
        if (!valid[r])
            continue;
        const CostRow *x = rows[r];
        const int64_t v[8] = {x->n_heads, x->n_kv_heads, x->params, x->mac_projections, x->mac_scores,
                              x->mac_value_mix, x->mac_projections + x->mac_scores + x->mac_value_mix,
                              x->kv_cache_bytes};
        for (int k = 0; k < 8; k++) {
            format_grouped(num[r][k], v[k]);
            if ((int)strlen(num[r][k]) > w[k])
                w[k] = (int)strlen(num[r][k]);
        }
    }
    /* Drop the total column when the table would not fit. */
    int total = 17;
    for (int k = 0; k < 8; k++)
        total += w[k] + 2;
    const int show_total = total <= REPORT_WIDTH;

    fprintf(f, "%-17s", "layout");
    for (int k = 0; k < 8; k++)
        if (k != 6 || show_total)
            fprintf(f, "  %*s", w[k], heads[k]);
    fputc('\n', f);
    for (int r = 0; r < 5; r++) {
        if (!valid[r])
            continue;
        fprintf(f, "%-17s", labels[r]);
        for (int k = 0; k < 8; k++)
            if (k != 6 || show_total)
                fprintf(f, "  %*s", w[k], num[r][k]);
        fputc('\n', f);
    }
    if (!t->gqa_valid)
        fprintf(f, "(no GQA row: %d heads do not split into n_heads/4 >= 2 K/V groups)\n", c->n_heads);

    char a[32], b[32];
    fprintf(f,
            "params = 2 d^2 + 2 d kv%s; MAC proj = T (2 d^2 + 2 d kv); MAC scores = MAC mix = P d;\n"
            "kv = K/V heads x head_dim; P = %s = %s (masked cells are\n"
            "not computed, so not counted).  MAC: multiply-adds.  K/V B/token: bytes of K/V cache per\n"
            "token per layer = 2 (K and V) x kv x 2 bytes (fp16).\n",
            d->in->w.has_bias ? " + 2 d + 2 kv (biases)" : "",
            c->causal ? "T(T+1)/2 visible (query, key) pairs" : "T^2 (query, key) pairs", format_grouped(a, t->pairs));
    char line[256];
    if (c->n_heads == 1) {
        fputs("With one head, the multi-head layer is itself one wide head: the same counts.\n", f);
    } else if (t->mha.params == t->wide.params && t->mha.mac_projections == t->wide.mac_projections &&
               t->mha.mac_scores == t->wide.mac_scores) {
        snprintf(line, sizeof line,
                 "%d heads of width %d have the same parameters and multiply-adds as one head of width %d; "
                 "they add %d softmaxes and %d T x T attention maps where the wide head has one of each.",
                 c->n_heads, c->head_dim, c->d_model, c->n_heads, c->n_heads);
        txt_wrapped(f, "", line);
    }
    if (c->n_heads == 1)
        return; /* one head: nothing to share */
    char c1[32];
    int n = snprintf(line, sizeof line,
                     "Sharing K/V heads shrinks the K/V cache from %s bytes per token per layer (MHA)",
                     format_grouped(a, t->mha.kv_cache_bytes));
    if (t->gqa_valid)
        n += snprintf(line + n, sizeof line - (size_t)n, " to %s (GQA, %d K/V heads)",
                      format_grouped(b, t->gqa.kv_cache_bytes), t->gqa.n_kv_heads);
    snprintf(line + n, sizeof line - (size_t)n, "%s %s (MQA).", t->gqa_valid ? " and" : " to",
             format_grouped(c1, t->mqa.kv_cache_bytes));
    txt_wrapped(f, "", line);
}

/* The rows with outcome o as "'gave' (1), 'the' (2)", wrapped after label. */
static void txt_pull_rows(FILE *f, const PullLayer *p, char *const *tokens, PullOutcome o, const char *label)
{
    size_t n = strlen(label) + 1;
    for (int i = 0; i < p->T; i++)
        n += strlen(tokens[i]) + 24;
    char *line = malloc(n), *end = line;
    if (!line)
        return;
    end += sprintf(end, "%s", label);
    int any = 0;
    for (int i = 0; i < p->T; i++)
        if (p->rows[i].outcome == o) {
            end += sprintf(end, "%s '%s' (%d)", any ? "," : "", tokens[i], i);
            any = 1;
        }
    if (any)
        txt_wrapped(f, "  ", line);
    free(line);
}

/* How the wide head combines the heads' scores, in sentences (pull.h). */
static void txt_pulls(FILE *f, const PullLayer *p, char *const *tokens)
{
    char line[1024];
    const int H = p->n_heads;
    fputs("\nHow the wide head combines the heads (query_NN.png)\n", f);
    char dev[64];
    if (p->identity_max_dev == 0)
        snprintf(dev, sizeof dev, "they agree exactly");
    else
        snprintf(dev, sizeof dev, "the largest difference is %.2g, float rounding", p->identity_max_dev);
    if (p->identity)
        snprintf(line, sizeof line, "Its score is the heads' scores added up: wide(i, j) = (1/sqrt(%d)) x "
                 "sum over the %d heads of score_h(i, j), since its query and key are theirs side by side. "
                 "Checked on every visible cell: %s (the scores reach %.3g). So its softmax weight on a "
                 "key is in proportion to the product over the heads of exp(score_h / sqrt(%d)).", H, H, dev,
                 p->max_abs_score, H);
    else
        snprintf(line, sizeof line, "The wide head has weights of its own (\"single_head\"), so its scores "
                 "are not the heads' scores added up: that identity holds only for a wide head built "
                 "from the heads' projections. Its top keys are compared with the heads' all the same.");
    txt_wrapped(f, "  ", line);
    const int choosing = p->T - p->count[PULL_NO_CHOICE];
    if (choosing == 0) {
        txt_wrapped(f, "  ", "No token has more than one key to choose from.");
        return;
    }
    const int agreed_blur = p->n_blur - p->count[PULL_SPLIT]; /* rows that blur though all agree */
    char also[96] = "";
    if (agreed_blur > 0)
        snprintf(also, sizeof also, ", though %d of them blur", agreed_blur);
    snprintf(line, sizeof line, "Of the %d tokens with more than one key to choose from: in %d every head's "
             "top key is the wide head's (nothing lost%s); in %d %s (no key gets more than %.0f%% of the "
             "wide head's attention); in %d %s; in %d it chose a key that is no head's top key.",
             choosing, p->count[PULL_AGREED], also, p->count[PULL_SPLIT],
             p->identity ? "the pulls split and the row blurs" : "the row blurs", 100 * PULL_BLUR_AT_MOST,
             p->count[PULL_FOLLOWED],
             p->identity ? "the wide head followed the top key of some heads over the others"
                         : "the wide head's top key is the top key of some heads, not of the others",
             p->count[PULL_OWN]);
    txt_wrapped(f, "  ", line);
    txt_pull_rows(f, p, tokens, PULL_AGREED, "nothing lost:");
    txt_pull_rows(f, p, tokens, PULL_SPLIT, "split:");
    txt_pull_rows(f, p, tokens, PULL_FOLLOWED, p->identity ? "followed:" : "a head's top key:");
    txt_pull_rows(f, p, tokens, PULL_OWN, "a choice no head made:");
    const int q = p->default_query;
    snprintf(line, sizeof line, "query_NN.png draws one token's pulls: by default '%s' (%d), where the "
             "heads' top keys differ most (%d different keys); --query picks another.", tokens[q], q,
             p->rows[q].n_top_keys);
    txt_wrapped(f, "  ", line);
}

static void write_txt(FILE *f, const ReportData *d, const Summary *s)
{
    const MhaConfig *c = s->c;
    const char *layout = measures_layout_name(c->n_heads, c->n_kv_heads);
    const char *layout_long = c->n_kv_heads == c->n_heads ? "multi-head: each head has its own keys and values"
                            : c->n_kv_heads == 1          ? "multi-query: all heads share one key/value head"
                                                          : "grouped-query: heads share key/value heads in groups";
    const int kv_mul = c->n_heads / c->n_kv_heads;

    fputs("mhaviz report: multi-head attention against one wide head\n\n", f);
    txt_tokens(f, d->in->tokens, c->T, fprintf(f, "tokens     T = %d: ", c->T), 11);
    fprintf(f, "d_model    %d\n", c->d_model);
    fprintf(f, "heads      %d x head_dim %d\n", c->n_heads, c->head_dim);
    fprintf(f, "K/V heads  %d: %s (%s", c->n_kv_heads, layout, layout_long);
    if (kv_mul > 1 && c->n_kv_heads > 1)
        fprintf(f, ", %d per group", kv_mul);
    fputs(")\n", f);
    fprintf(f, "causal     %s\n", c->causal ? "yes: each token sees itself and earlier tokens"
                                             : "no: each token sees every token");
    fprintf(f, "wide head  1 head of width %d, %s\n", c->d_model,
            d->single_given ? "with its own weights from the input (\"single_head\")"
                            : "built from the same projections");
    if (d->notes) {
        /* as given, line by line; a line too wide for the report is wrapped */
        fputs("\nNotes\n", f);
        for (const char *p = d->notes; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = columns(p, n) > REPORT_WIDTH ? strndup(p, n) : NULL;
            if (line)
                txt_wrapped(f, "", line);
            else
                fprintf(f, "%.*s\n", (int)n, p);
            free(line);
            p += n + (p[n] == '\n');
        }
    }

    fputs("\nWhat each head does (rows: the heads, then the single wide head)\n", f);
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", "head", "K/V", "role", "bits", "norm", "conf",
            "dist", "JS", "top1");
    for (int h = 0; h < c->n_heads; h++) {
        char label[16], kv[16];
        snprintf(label, sizeof label, "%d", h);
        snprintf(kv, sizeof kv, "%d", h / kv_mul);
        txt_table_row(f, label, kv, &s->heads[h], &s->cmp[h]);
    }
    txt_table_row(f, "wide", "-", &s->wide, NULL);
    fputs("bits: mean row entropy (0 = one key).  norm: entropy / the most possible (1 = uniform).\n"
          "conf: mean largest weight.  dist: mean distance to the keys looked at, in tokens.\n"
          "JS: Jensen-Shannon divergence from the wide head (0 = same, 1 = disjoint).\n"
          "top1: share of rows whose top key is the wide head's.  - : not defined for this input.\n",
          f);

    fputs("\nWhere the attention goes: each pattern's share of a row, on average over the rows where\n"
          "it could show\n",
          f);
    fprintf(f, "%5s", "head");
    static const char *const short_names[MEASURES_N_PATTERNS] = {"prev", "self", "next", "dup",
                                                                 "ind",  "first", "last", "fixed"};
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", short_names[p]);
    /* rows where each could show: the same for every map but fixed's, whose key is each map's own */
    fprintf(f, "\n%5s", "rows");
    for (int p = 0; p < MEASURES_FIXED_TOKEN; p++)
        fprintf(f, " %5d", s->wide.rows[p]);
    fputc('\n', f);
    for (int h = 0; h < c->n_heads; h++) {
        char label[16];
        snprintf(label, sizeof label, "%d", h);
        txt_pattern_row(f, label, &s->heads[h]);
    }
    txt_pattern_row(f, "wide", &s->wide);
    fputs("prev, self, next: the token before, itself, the token after.  dup: earlier copies of its\n"
          "token.  ind: the token after an earlier copy (induction).  first, last: token 0, token T-1.\n"
          "fixed: the one key most rows look at, named below.  rows: rows where each could show\n"
          "(for fixed, each map's own key: not one count for all).\n"
          "Each cell counts for one pattern, the first of this list that names it; a row with one\n"
          "visible key counts for none.\n"
          "A role needs a share of at least 0.50 and twice what spreading evenly would give, and at\n"
          "least half of the row in 2 rows or more and in a quarter of the rows where it could.\n"
          "- : no row where it could.\n",
          f);

    fputs("\nIn words\n", f);
    for (int h = 0; h < c->n_heads; h++) {
        char who[32];
        snprintf(who, sizeof who, "head %d", h);
        txt_sentence(f, who, &s->heads[h], d->in->tokens, c->T);
    }
    txt_sentence(f, "the wide head", &s->wide, d->in->tokens, c->T);

    fputs("\nMany heads against one wide head\n", f);
    char b1[16], b2[16];
    fprintf(f, "mean row entropy: %.2f bits per head on average, %.2f bits for the wide head\n",
            s->heads_bits_mean, s->wide.entropy_bits);
    if (measures_is_null(s->blur)) {
        fputs("blur: not defined (no row can see two or more tokens)\n", f);
    } else {
        char blur[16];
        if (fabs(s->blur) < 0.005)
            strcpy(blur, "0.00"); /* not "-0.00" */
        else
            snprintf(blur, sizeof blur, "%+.2f", s->blur);
        fprintf(f, "blur = %s: the wide head's normalised entropy is %.2f, the heads' mean %.2f:\n"
                   "  one distribution per token came out %s the heads' own.\n",
                blur, s->wide.entropy_norm, s->heads_norm_mean,
                s->blur >= BLUR_NOTICEABLE ? "blurrier than" :
                s->blur <= -BLUR_NOTICEABLE ? "sharper than" : "about as sharp as");
    }
    fprintf(f, "outputs: ||O_multi - O_single|| / ||O_multi|| = %s, mean cosine %s\n",
            cell(b1, sizeof b1, "%.4f", s->rel_diff), cell(b2, sizeof b2, "%.4f", s->cosine));

    if (d->pulls)
        txt_pulls(f, d->pulls, d->in->tokens);

    fprintf(f, "\nCost at T = %d, d = d_model = %d\n", c->T, c->d_model);
    txt_cost(f, d, s);
}

size_t report_matrix_numbers(const MhaConfig *c, int with_scores)
{
    const size_t T = (size_t)c->T, map = T * T;
    return ((size_t)c->n_heads + 1) * map * (with_scores ? 2 : 1) + 2 * T * (size_t)c->d_model;
}

int report_write(const char *dir, const ReportData *d, char *err, size_t errlen)
{
    Summary s;
    char *path = NULL;
    FILE *f = NULL;
    int rc = summarise(d, &s);
    if (rc != MHAVIZ_OK) {
        snprintf(err, errlen, "out of memory");
        return rc;
    }

    f = open_out(dir, "report.txt", &path, err, errlen, &rc);
    if (!f)
        goto cleanup;
    write_txt(f, d, &s);
    rc = close_out(f, path, err, errlen);
    if (rc != MHAVIZ_OK)
        goto cleanup;
    free(path);
    path = NULL;

    Matrices mx = {dir, 0, MHAVIZ_OK, err, errlen};
    mx.npy = d->npy || report_matrix_numbers(&d->in->cfg, d->scores && d->multi->scores) > REPORT_INLINE_MAX_NUMBERS;
    f = open_out(dir, "report.json", &path, err, errlen, &rc);
    if (!f)
        goto cleanup;
    write_json(f, d, &s, &mx);
    if (mx.rc != MHAVIZ_OK) { /* a .npy file's failure, named in err */
        fclose(f);
        rc = mx.rc;
        goto cleanup;
    }
    rc = close_out(f, path, err, errlen);

cleanup:
    free(path);
    summary_free(&s);
    return rc;
}

/* ------------------------------------------------ the variants section */

/* What the variants section says about one variant, against the reference. */
typedef struct {
    char name[16];          /* "MHA", "GQA-2", "MQA" */
    CostTable cost;         /* cost.input is this variant's row */
    MapComparison *cmp;     /* (n_heads) each head against its reference self */
    double blur;            /* as in the one-variant report */
    double heads_norm_mean; /* the heads' mean normalised entropy */
} VariantSummary;

/* 1 when head comparison c barely changes (REPORT_BARELY_JS, REPORT_BARELY_TOP1). */
static int barely_changes(const MapComparison *c)
{
    return c->js_to_single < REPORT_BARELY_JS && c->top1_agreement >= REPORT_BARELY_TOP1;
}

/* A JS divergence in bits for a sentence: two decimals, three below 0.005. */
static const char *bits(char *buf, size_t n, double js)
{
    snprintf(buf, n, js < 0.005 ? "%.3f" : "%.2f", js);
    return buf;
}

/* "heads 0, 1 and 3" / "head 2": the heads h < n_heads with pick[h] set (k of them). */
static int head_list(char *buf, size_t len, const int *pick, int n_heads, int k)
{
    int used = snprintf(buf, len, k == 1 ? "head" : "heads"), seen = 0;
    for (int h = 0; h < n_heads && used < (int)len; h++)
        if (pick[h]) {
            seen++;
            used += snprintf(buf + used, len - (size_t)used, "%s%d",
                             seen == 1 ? " " : seen == k ? " and " : ", ", h);
        }
    return used;
}

/* The sentence about variant x against the reference ref (n_heads heads):
 * how much smaller its K/V cache is, the head that moves most, and the heads
 * that barely change. */
static void variant_sentence(char *buf, size_t len, const VariantSummary *x, const VariantSummary *ref,
                             int n_heads, int *pick)
{
    char a[32], b[32], js[16];
    const CostRow *r = &x->cost.input, *r0 = &ref->cost.input;
    int used = snprintf(buf, len, "%s cuts the K/V cache %dx (%s to %s bytes per token per layer)", x->name,
                        r0->n_kv_heads / r->n_kv_heads, format_grouped(a, r0->kv_cache_bytes),
                        format_grouped(b, r->kv_cache_bytes));
    int most = 0, least = 0, n_barely = 0;
    for (int h = 0; h < n_heads; h++) {
        pick[h] = barely_changes(&x->cmp[h]);
        n_barely += pick[h];
        if (x->cmp[h].js_to_single > x->cmp[most].js_to_single)
            most = h;
        if (x->cmp[h].js_to_single < x->cmp[least].js_to_single)
            least = h;
    }
    if (n_barely == n_heads) {
        snprintf(buf + used, len - (size_t)used, ", and every head barely changes (the most, head %d, by %s bits).",
                 most, bits(js, sizeof js, x->cmp[most].js_to_single));
        return;
    }
    used += snprintf(buf + used, len - (size_t)used, " and moves head %d's attention by %s bits (its top key stays in %.0f%% of the rows)",
                     most, bits(js, sizeof js, x->cmp[most].js_to_single), 100.0 * x->cmp[most].top1_agreement);
    if (used >= (int)len)
        return;
    if (n_barely == 0) {
        snprintf(buf + used, len - (size_t)used, "; no head barely changes (the least moved, head %d, by %s bits).",
                 least, bits(js, sizeof js, x->cmp[least].js_to_single));
        return;
    }
    used += snprintf(buf + used, len - (size_t)used, "; ");
    if (used >= (int)len)
        return;
    used += head_list(buf + used, len - (size_t)used, pick, n_heads, n_barely);
    if (used < (int)len)
        snprintf(buf + used, len - (size_t)used, n_barely == 1 ? " barely changes." : " barely change.");
}

static void write_variants_txt(FILE *f, const Variant *v, int n, const VariantSummary *s, int *pick)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads;
    const char *ref = s[0].name;
    char a[32], b[32], line[1024];

    fputs("mhaviz report: the same layer with its keys and values shared (", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s", i ? (i + 1 < n ? ", " : " and ") : "", s[i].name);
    fputs(")\n\n", f);
    txt_tokens(f, v[0].in.tokens, c->T, fprintf(f, "tokens     T = %d: ", c->T), 11);
    fprintf(f, "d_model    %d\n", c->d_model);
    fprintf(f, "heads      %d x head_dim %d\n", H, c->head_dim);
    fputs("variants   ", f);
    for (int i = 0; i < n; i++)
        fprintf(f, "%s%s (%d K/V head%s, kv%d/)", i ? ", " : "", s[i].name, s[i].cost.input.n_kv_heads,
                s[i].cost.input.n_kv_heads == 1 ? "" : "s", s[i].cost.input.n_kv_heads);
    fputs("\n", f);
    txt_wrapped(f, "",
                "Each variant's K/V heads are means of the input's (Ainslie et al. 2023, without the "
                "uptraining that follows), so its heads' maps show what sharing keys and values does to "
                "this layer; each sub-folder holds that variant's pictures and report.");

    fprintf(f, "\nCost at T = %d, per layer\n", c->T);
    fprintf(f, "%-8s %9s %12s %14s %12s %16s %6s\n", "variant", "K/V heads", "params", "MAC total",
            "K/V B/token", "K/V cache at T", "blur");
    for (int i = 0; i < n; i++) {
        const CostRow *r = &s[i].cost.input;
        char p[32], m[32], kv[32], at[32], bl[16];
        fprintf(f, "%-8s %9d %12s %14s %12s %16s %6s\n", s[i].name, r->n_kv_heads, format_grouped(p, r->params),
                format_grouped(m, r->mac_projections + r->mac_scores + r->mac_value_mix), format_grouped(kv, r->kv_cache_bytes),
                format_grouped(at, r->kv_cache_bytes * c->T), cell(bl, sizeof bl, "%+.2f", s[i].blur));
    }
    fputs("K/V B/token = 2 (K and V) x K/V heads x head_dim x 2 bytes (fp16). blur = the wide head's\n"
          "normalised entropy less the heads' mean (above 0: one wide head would be blurrier).\n",
          f);

    fprintf(f, "\nHow far each head moves from its %s self\n", ref);
    fprintf(f, "%5s", "head");
    for (int i = 1; i < n; i++)
        fprintf(f, "  %13s", s[i].name);
    fprintf(f, "\n%5s", "");
    for (int i = 1; i < n; i++)
        fprintf(f, "  %6s %6s", "JS", "top1");
    fputc('\n', f);
    for (int h = 0; h < H; h++) {
        fprintf(f, "%5d", h);
        for (int i = 1; i < n; i++)
            fprintf(f, "  %6s %6s", cell(a, sizeof a, "%.3f", s[i].cmp[h].js_to_single),
                    cell(b, sizeof b, "%.2f", s[i].cmp[h].top1_agreement));
        fputc('\n', f);
    }
    snprintf(line, sizeof line,
             "JS: mean over the rows (queries) of the Jensen-Shannon divergence between the head's map and "
             "its %s map, in bits (0 = the same, 1 = disjoint). top1: share of rows whose most-attended key "
             "is the same in both.", ref);
    txt_wrapped(f, "", line);

    fprintf(f, "\nIn words (a head \"barely changes\" when its JS is below %.2f bits and its top key stays\n"
               "in at least %.0f%% of the rows)\n", REPORT_BARELY_JS, 100.0 * REPORT_BARELY_TOP1);
    for (int i = 1; i < n; i++) {
        variant_sentence(line, sizeof line, &s[i], &s[0], H, pick);
        txt_wrapped(f, "  ", line);
    }
}

static void write_variants_json(FILE *f, const Variant *v, int n, const VariantSummary *s, int *pick)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads;
    char line[1024];
    fputs("{\n  \"format\": \"mhaviz-variants\",\n  \"version\": 1,\n  \"tokens\": [", f);
    for (int t = 0; t < c->T; t++) {
        if (t > 0)
            fputs(", ", f);
        json_string(f, v[0].in.tokens[t]);
    }
    fprintf(f, "],\n  \"T\": %d,\n  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"head_dim\": %d,\n"
               "  \"causal\": %s,\n  \"reference\": \"%s\",\n",
            c->T, c->d_model, H, c->head_dim, c->causal ? "true" : "false", s[0].name);
    fputs("  \"barely_changes\": {\"js_below\": ", f);
    json_number(f, REPORT_BARELY_JS);
    fputs(", \"top1_at_least\": ", f);
    json_number(f, REPORT_BARELY_TOP1);
    fputs("},\n  \"variants\": [\n", f);
    for (int i = 0; i < n; i++) {
        const int kv_mul = H / s[i].cost.input.n_kv_heads;
        fprintf(f, "    {\n    \"name\": \"%s\",\n    \"n_kv_heads\": %d,\n    \"folder\": \"kv%d\",\n", s[i].name,
                s[i].cost.input.n_kv_heads, s[i].cost.input.n_kv_heads);
        json_cost_row(f, "cost", &s[i].cost.input, 1, 0);
        fprintf(f, "    \"kv_cache_bytes_at_T\": %" PRId64 ",\n    \"blur\": ", s[i].cost.input.kv_cache_bytes * c->T);
        json_number(f, s[i].blur);
        fputs(",\n    \"heads_mean_entropy_norm\": ", f);
        json_number(f, s[i].heads_norm_mean);
        fputs(",\n    \"heads\": [", f);
        for (int h = 0; h < H; h++) {
            fprintf(f, "%s\n      {\"index\": %d, \"kv_head\": %d, \"js_to_reference\": ", h ? "," : "", h,
                    h / kv_mul);
            json_number(f, s[i].cmp[h].js_to_single);
            fputs(", \"top1_agreement\": ", f);
            json_number(f, s[i].cmp[h].top1_agreement);
            fprintf(f, ", \"barely_changes\": %s}", barely_changes(&s[i].cmp[h]) ? "true" : "false");
        }
        fputs("\n    ],\n    \"sentence\": ", f);
        if (i == 0) {
            fputs("null", f);
        } else {
            variant_sentence(line, sizeof line, &s[i], &s[0], H, pick);
            json_string(f, line);
        }
        fputs(i + 1 < n ? "\n    },\n" : "\n    }\n", f);
    }
    fputs("  ]\n}\n", f);
}

int report_write_variants(const char *dir, const Variant *v, int n, char *err, size_t errlen)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads, T = c->T;
    const size_t map = (size_t)T * T;
    int rc = MHAVIZ_ENOMEM;
    char *path = NULL;
    FILE *f = NULL;
    int *pick = malloc((size_t)H * sizeof *pick); /* (n_heads) scratch of the sentences */
    VariantSummary *s = calloc((size_t)n, sizeof *s);
    if (!pick || !s)
        goto cleanup;
    for (int i = 0; i < n; i++) {
        const Variant *x = &v[i];
        variant_name(s[i].name, sizeof s[i].name, H, x->in.cfg.n_kv_heads);
        const int wide_bias = x->in.has_single ? x->in.single.has_bias : x->in.w.has_bias;
        measures_cost(&x->in.cfg, x->in.w.has_bias, wide_bias, &s[i].cost);
        s[i].blur = blur_of(x->measures, H, &s[i].heads_norm_mean);
        if (!(s[i].cmp = malloc((size_t)H * sizeof *s[i].cmp)))
            goto cleanup;
#pragma omp parallel for schedule(dynamic) if ((size_t)H * map >= REPORT_PARALLEL_MIN)
        for (int h = 0; h < H; h++)
            measures_compare(x->multi.att + (size_t)h * map, v[0].multi.att + (size_t)h * map, T, c->causal,
                             &s[i].cmp[h]);
    }

    if (!(f = open_out(dir, "report.txt", &path, err, errlen, &rc)))
        goto cleanup;
    write_variants_txt(f, v, n, s, pick);
    if ((rc = close_out(f, path, err, errlen)) != MHAVIZ_OK)
        goto cleanup;
    free(path);
    path = NULL;
    if (!(f = open_out(dir, "report.json", &path, err, errlen, &rc)))
        goto cleanup;
    write_variants_json(f, v, n, s, pick);
    rc = close_out(f, path, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (int i = 0; s && i < n; i++)
        free(s[i].cmp);
    free(s), free(pick), free(path);
    return rc;
}
