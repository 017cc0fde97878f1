/* report_parts.h — what the report's files share (report.c, report_txt.c,
 * report_json.c, report_compare.c, report_words.c, report_variants.c,
 * report_model.c, lesson_page.c); not for use outside report/. */
#ifndef MHAVIZ_REPORT_PARTS_H
#define MHAVIZ_REPORT_PARTS_H

#include "core/parallel.h"
#include "io/json.h"
#include "io/outdir.h"
#include "report/report_data.h"
#include "core/kept.h"
#include "core/thresholds.h"
#include "core/layer_summary.h"

#include <stddef.h>
#include <stdio.h>

#define REPORT_WIDTH 100 /* report.txt fits in this many columns */

/* Heads a sentence about chance names at most (of more, it gives the range only). */
#define REPORT_CHANCE_HEADS 64

/* Where report.json's matrices go: inline, or each in a .npy file of its
 * own in the output folder, report.json holding the file's name. */
typedef struct {
    const char *dir; /* the output folder */
    int npy;         /* 1: .npy files */
    int rc;          /* MHAVIZ_OK, or the first .npy file's failure (err says which) */
    char *err;
    size_t errlen;
} Matrices;

/* ---- report.c: the files */

/* Open dir/name for writing. The caller frees *path. */
FILE *report_open_out(const char *dir, const char *name, char **path, char *err, size_t errlen, int *rc);

/* Flush and close f; any failure on the way (a full disk shows up here at the
 * latest) is MHAVIZ_EIO naming the file. */
int report_close_out(FILE *f, const char *path, char *err, size_t errlen);

/* ---- report_words.c: report.txt's words, for every section */

/* A measure in a table cell: "-" for null. */
const char *report_cell(char *buf, size_t n, const char *fmt, double x);

/* A token's text as report.txt shows it: token_text's, at most this many bytes. */
#define REPORT_TOKEN_BYTES 256

/* The tokens separated by " | ", the first line starting at column col,
 * wrapped to REPORT_WIDTH columns with continuation lines after indent
 * spaces; a line breaks after a "|", or inside a token too long for a line
 * of its own. Each token as text/token_text.h shows it (the pictures' way). */
void report_tokens(FILE *f, char *const *tokens, int T, int col, int indent);

/* Columns text takes: UTF-8 code points of its n bytes. */
int report_columns(const char *s, size_t n);

/* Print text word-wrapped to REPORT_WIDTH columns: the first line after
 * indent, the next ones after indent plus two spaces. */
void report_wrapped(FILE *f, const char *indent, const char *text);

/* "heads 0, 1 and 3" / "head 2": the heads h < n_heads with pick[h] set (k of
 * them), into buf; returns what snprintf returns. */
int report_head_list(char *buf, size_t len, const int *pick, int n_heads, int k);

/* A token as the sentences quote it: 'text', as token_text shows it (the
 * empty token '""'), at most n - 1 bytes of it. Returns buf. */
const char *report_quoted_token(char *buf, size_t n, const char *token);

/* A fraction of the role rule in words ("all", "half", "a quarter", up to
 * "a fifth"), else its figure. Returns buf. */
const char *report_fraction_word(char *buf, size_t n, double x);

/* The blur with its sign and two decimals, as report.txt prints it, but
 * never printed as a threshold the sentence judges it by unless it is it
 * (measures_side_text): the BLUR_NOTICEABLE of its words, or the end of
 * chance's range r that it lies beyond (side: chance_side; r may be NULL
 * when side is 0), so that "+0.09" is never "more than" a range that ends
 * at "+0.09". Returns buf (at least 16 bytes). */
const char *report_blur_text(char *buf, size_t n, double blur, const ChanceRange *r, int side);

/* ---- report_json.c: report.json */

/* A cost row (measures.h) as report.json and the page write it: its
 * fields' keys, in order, and its values in the same order. */
#define COST_ROW_FIELDS 9
extern const char *const report_cost_row_keys[COST_ROW_FIELDS];
void report_cost_row_values(const CostRow *r, int64_t v[COST_ROW_FIELDS]);

void report_json_cost_row(FILE *f, const char *key, const CostRow *r, int valid, int last);

/* A range of chance.h as {"n": .., "lo": .., "hi": ..}, or null when it has no values. */
void report_json_range(FILE *f, const ChanceRange *r);

void report_write_json(FILE *f, const ReportData *d, const LayerSummary *s, Matrices *mx);

/* ---- report_txt.c: report.txt */

void report_write_txt(FILE *f, const ReportData *d, const LayerSummary *s);

/* ---- report_compare.c: report.txt's heads against the one head */

/* How the wide head combines the heads' pulls, row by row (pull.h), with
 * what random layers give beside the counts when ch is not NULL. */
void report_txt_pulls(FILE *f, const ReportData *d);

/* The held-out losses of the input's "training": the n_heads heads' and the
 * one head trained on its own, per seed; pooled_from > 0 says they are the
 * model's as trained, before its K/V heads were pooled into n_kv. */
void report_txt_training(FILE *f, const Training *t, int n_heads, int pooled_from, int n_kv);

/* Row r of the trained models of t (the input's "training" by K/V heads:
 * r < n_kv_losses by K/V heads, r = n_kv_losses the one head; its K/V cache
 * is the layer summary's trained_kv_bytes[r]): its name
 * into name ("GQA-2", "one head"), its K/V heads into *kv (0: the one head),
 * their mean over the seeds into *mean, its losses (n_seeds) returned (t's own). */
const double *report_trained_row(const Training *t, const MhaConfig *c, int r, char *name, size_t len, int *kv,
                                 double *mean);

/* Each head's JS and top1 against what the heads of random layers give. */
void report_txt_heads_chance(FILE *f, const Chance *ch, const LayerSummary *s);

/* The headline: which of the heads' relations the one head kept, row by
 * row, and which it lost (kept.h), against chance. */
void report_txt_kept(FILE *f, const ReportData *d, const LayerSummary *s);

/* The blur, its meaning, and what chance gives. */
void report_txt_blur(FILE *f, const ReportData *d, const LayerSummary *s);

#endif
