/* report.h — the text and JSON reports comparing the heads with one wide head. */
#ifndef MHAVIZ_REPORT_H
#define MHAVIZ_REPORT_H

#include "checkpoint/model.h"
#include "core/chance.h"
#include "core/grouping.h"
#include "core/measures.h"
#include "core/model_summary.h"
#include "core/thresholds.h"
#include "core/mha.h"
#include "core/pull.h"
#include "core/variant.h"
#include "core/variants_summary.h"
#include "io/input.h"
#include "report/report_data.h"

/* report.json holds its matrices inline up to this many numbers in all (the
 * attention maps, the scores with --steps, both outputs: about 12 MB of
 * text, which a text editor or a browser still opens); past it each matrix
 * is a .npy file in the output folder and report.json names the file. A
 * GPT-2-shaped layer (d_model 768, 12 heads) stays inline up to T = 231
 * (1.05 M numbers); at T = 512 it is 3.4 M. */
#define REPORT_INLINE_MAX_NUMBERS ((size_t)1 << 20)

/* The numbers in report.json's matrices for config c: the n_heads maps of
 * (T, T) and the wide head's (twice that with the scores: each map's
 * scores), and the two (T, d_model) outputs. */
size_t report_matrix_numbers(const MhaConfig *c, int with_scores);

/* Write report.txt and report.json (and report.json's .npy files, named in
 * it) into folder dir, from d and the layer's summary d->summary (not NULL:
 * the caller measured the layer; the report only formats it). Returns
 * MHAVIZ_OK, MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int report_write(const char *dir, const ReportData *d, char *err, size_t errlen);

/* The variants section: report.txt and report.json in folder dir comparing
 * the n variants v (most K/V heads first; n >= 2) with v[0], the reference,
 * as vs measured them (core/variants_summary.h): each variant's cost row and
 * blur, each query head's JS divergence from its reference self and top-1
 * agreement, one sentence per variant, the heads whose role changed, and
 * for each variant with vs->ranks[i].n > 0 its groupings ranked. Returns as
 * report_write does. */
int report_write_variants(const char *dir, const Variant *v, int n, const VariantsSummary *vs, char *err,
                          size_t errlen);

/* The top of a run over several layers of a model or of a file's "layers":
 * report.txt and report.json in folder dir from summary s, the table of
 * layers then the heads worth a slide (report_model.c); in is one of the
 * layers (its tokens, and in->model for a model); name: the model's or the
 * file's; pred: the model's next tokens (NULL for a file). Returns as report_write does. */
int report_write_model(const char *dir, const ModelSummary *s, const MhaInput *in, const char *name,
                       const ModelPrediction *pred,
                       char *err, size_t errlen);
#endif
