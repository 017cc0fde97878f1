/* init_write.c — a model written as an mhaviz input (JSON). */
#include "models/init.h"
#include "io/json.h"
#include "core/status.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- the JSON writer --------------------------------------------------- */

/* One row of n numbers: [a, b, c]; rows wider than 64 numbers without the
 * spaces (a 512-wide layer is then a seventh smaller). */
static void write_row(FILE *f, const float *a, size_t n, int digits)
{
    const char *sep = n > 64 ? ",%.*g" : ", %.*g";
    fputc('[', f);
    for (size_t j = 0; j < n; j++)
        fprintf(f, j ? sep : "%.*g", digits, (double)a[j]);
    fputc(']', f);
}

/* "key": [[...], [...]] with one row per line, indented by `indent`. */
static void write_matrix(FILE *f, const char *indent, const char *key, const float *a,
                         size_t rows, size_t cols, int digits)
{
    fprintf(f, ",\n%s\"%s\": [\n", indent, key);
    for (size_t r = 0; r < rows; r++) {
        fprintf(f, "%s  ", indent);
        write_row(f, a + r * cols, cols, digits);
        fputs(r + 1 < rows ? ",\n" : "\n", f);
    }
    fprintf(f, "%s]", indent);
}

static void write_vector(FILE *f, const char *indent, const char *key, const float *a,
                         size_t n, int digits)
{
    fprintf(f, ",\n%s\"%s\": ", indent, key);
    write_row(f, a, n, digits);
}

/* The projections of w, d_model rows each; kv columns for W_k and W_v. */
static void write_weights(FILE *f, const char *indent, const MhaWeights *w, size_t d,
                          size_t kv, int digits)
{
    write_matrix(f, indent, "W_q", w->W_q, d, d, digits);
    write_matrix(f, indent, "W_k", w->W_k, d, kv, digits);
    write_matrix(f, indent, "W_v", w->W_v, d, kv, digits);
    write_matrix(f, indent, "W_o", w->W_o, d, d, digits);
    if (w->has_bias) {
        write_vector(f, indent, "b_q", w->b_q, d, digits);
        write_vector(f, indent, "b_k", w->b_k, kv, digits);
        write_vector(f, indent, "b_v", w->b_v, kv, digits);
        write_vector(f, indent, "b_o", w->b_o, d, digits);
    }
}

int init_write(FILE *f, const InitModel *m, int digits, char *err, size_t errlen)
{
    const MhaConfig *c = &m->in.cfg;
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    if (digits < 1)
        digits = 1;
    if (digits > 9)
        digits = 9;

    fputs("{\n", f);
    if (m->in.title) {
        fputs("  \"title\": ", f);
        json_string(f, m->in.title);
        fputs(",\n", f);
    }
    if (m->comment) {
        fputs("  \"comment\": ", f);
        json_string(f, m->comment);
        fputs(",\n", f);
    }
    fputs("  \"tokens\": [", f);
    for (size_t t = 0; t < T; t++) {
        if (t)
            fputs(", ", f);
        json_string(f, m->in.tokens[t]);
    }
    fprintf(f, "],\n  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"n_kv_heads\": %d,\n"
               "  \"causal\": %s",
            c->d_model, c->n_heads, c->n_kv_heads, c->causal ? "true" : "false");
    if (m->emb) {
        /* positions: the format's default, "sinusoidal" */
        fputs(",\n  \"embeddings\": {\n", f);
        for (int v = 0; v < m->n_vocab; v++) {
            fputs("    ", f);
            json_string(f, m->vocab[v]);
            fputs(": ", f);
            write_row(f, m->emb + (size_t)v * d, d, digits);
            fputs(v + 1 < m->n_vocab ? ",\n" : "\n", f);
        }
        fputs("  }", f);
    } else {
        write_matrix(f, "  ", "x", m->in.x, T, d, digits);
    }
    write_weights(f, "  ", &m->in.w, d, kv, digits);
    fputs("\n}\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        snprintf(err, errlen, "write failed (disk full, or output closed?)");
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}
