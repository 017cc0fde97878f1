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
#include "report/report_parts.h"
#include "core/measures.h"
#include "core/status.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

double blur_of(const MapMeasures *m, int n_heads, double *heads_norm_mean)
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
#pragma omp parallel for schedule(dynamic) if ((size_t)c->n_heads * map >= PARALLEL_MIN_CELLS)
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

FILE *open_out(const char *dir, const char *name, char **path, char *err, size_t errlen, int *rc)
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

int close_out(FILE *f, const char *path, char *err, size_t errlen)
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
