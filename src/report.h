/* report.h — the text and JSON reports comparing the heads with one wide head. */
#ifndef MHAVIZ_REPORT_H
#define MHAVIZ_REPORT_H

#include "input.h"
#include "measures.h"
#include "mha.h"
#include "pull.h"

/* What a report is written from; nothing here is owned by the report. */
typedef struct {
    const MhaInput *in;     /* config, tokens */
    const MhaState *multi;  /* the multi-head forward pass (in->cfg) */
    const MhaState *single; /* the single wide head: one head of width d_model */
    int single_given;       /* 1: "single_head" weights from the input; 0: built from the same projections */
    const char *notes;      /* extra lines for the report (e.g. a K/V conversion), or NULL */
    const MapMeasures *measures; /* (n_heads + 1) the maps' measures_layer, the wide head last;
                                  * NULL: report_write computes them */
    int npy;                /* 1: every matrix of report.json in a .npy file (--npy), whatever its size */
    const PullLayer *pulls;      /* how the wide head combines the heads' scores (pull.h);
                                  * NULL: the reports leave that section out */
    int scores;             /* 1: report.json holds the heads' scores too (--steps); the forward
                             * pass keeps them either way, for the pulls */
} ReportData;

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
 * it) into folder dir. Returns MHAVIZ_OK, MHAVIZ_EIO (err names the file) or
 * MHAVIZ_ENOMEM. */
int report_write(const char *dir, const ReportData *d, char *err, size_t errlen);

#endif
