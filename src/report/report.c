/* report.c — a layer's two report files, report.txt (for a class,
 * written by report_txt.c) and report.json (for anyone who wants the
 * numbers, report_json.c), each opened, written and closed here.
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
#include "core/status.h"
#include "io/outdir.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---------------------------------------------------------------- files */

FILE *report_open_out(const char *dir, const char *name, char **path, char *err, size_t errlen, int *rc)
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

int report_close_out(FILE *f, const char *path, char *err, size_t errlen)
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
    const LayerSummary *s = d->summary;
    char *path = NULL;
    FILE *f = NULL;
    int rc = MHAVIZ_OK;

    f = report_open_out(dir, OUTDIR_REPORT_TXT, &path, err, errlen, &rc);
    if (!f)
        goto cleanup;
    report_write_txt(f, d, s);
    rc = report_close_out(f, path, err, errlen);
    if (rc != MHAVIZ_OK)
        goto cleanup;
    free(path);
    path = NULL;

    Matrices mx = {dir, 0, MHAVIZ_OK, err, errlen};
    mx.npy = d->npy || report_matrix_numbers(&d->in->cfg, d->scores && d->multi->scores) > REPORT_INLINE_MAX_NUMBERS;
    f = report_open_out(dir, OUTDIR_REPORT_JSON, &path, err, errlen, &rc);
    if (!f)
        goto cleanup;
    report_write_json(f, d, s, &mx);
    if (mx.rc != MHAVIZ_OK) { /* a .npy file's failure, named in err */
        fclose(f);
        rc = mx.rc;
        goto cleanup;
    }
    rc = report_close_out(f, path, err, errlen);

cleanup:
    free(path);
    return rc;
}
