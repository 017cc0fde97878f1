/* report_parts.h — what the report's files share (report.c, report_txt.c,
 * report_json.c, report_variants.c); not for use outside report/. */
#ifndef MHAVIZ_REPORT_PARTS_H
#define MHAVIZ_REPORT_PARTS_H

#include "core/parallel.h"
#include "io/json.h"
#include "io/outdir.h"
#include "report/report.h"

#include <stddef.h>
#include <stdio.h>

/* A blur smaller than this (in normalised entropy, 0..1) is read as "about as sharp". */
#define BLUR_NOTICEABLE 0.05

#define REPORT_WIDTH 100 /* report.txt fits in this many columns */

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

/* Where report.json's matrices go: inline, or each in a .npy file of its
 * own in the output folder, report.json holding the file's name. */
typedef struct {
    const char *dir; /* the output folder */
    int npy;         /* 1: .npy files */
    int rc;          /* MHAVIZ_OK, or the first .npy file's failure (err says which) */
    char *err;
    size_t errlen;
} Matrices;

/* ---- report.c: the summary both files share, and the files themselves */

/* The heads' mean normalised entropy (NAN = null when theirs are) and the
 * blur: the wide head's normalised entropy less that mean. m holds the
 * n_heads maps' measures, the wide head's last. */
double blur_of(const MapMeasures *m, int n_heads, double *heads_norm_mean);

/* Open dir/name for writing. The caller frees *path. */
FILE *open_out(const char *dir, const char *name, char **path, char *err, size_t errlen, int *rc);

/* Flush and close f; any failure on the way (a full disk shows up here at the
 * latest) is MHAVIZ_EIO naming the file. */
int close_out(FILE *f, const char *path, char *err, size_t errlen);

/* ---- report_json.c: report.json */

void json_cost_row(FILE *f, const char *key, const CostRow *r, int valid, int last);

void write_json(FILE *f, const ReportData *d, const Summary *s, Matrices *mx);

/* ---- report_txt.c: report.txt */

/* A measure in a table cell: "-" for null. */
const char *txt_cell(char *buf, size_t n, const char *fmt, double x);

/* The tokens separated by " | ", the first line starting at column col,
 * wrapped to REPORT_WIDTH columns with continuation lines after indent
 * spaces; a line breaks after a "|", or inside a token too long for a line
 * of its own. Every token is shown whole: control characters and bytes that
 * are not UTF-8 as '?'. */
void txt_tokens(FILE *f, char *const *tokens, int T, int col, int indent);

/* Print text word-wrapped to REPORT_WIDTH columns: the first line after
 * indent, the next ones after indent plus two spaces. */
void txt_wrapped(FILE *f, const char *indent, const char *text);

void write_txt(FILE *f, const ReportData *d, const Summary *s);

#endif
