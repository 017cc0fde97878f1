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
    const PullLayer *pulls;      /* how the wide head combines the heads' scores (pull.h);
                                  * NULL: the reports leave that section out */
} ReportData;

/* Write report.txt and report.json into folder dir. Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int report_write(const char *dir, const ReportData *d, char *err, size_t errlen);

/* Write x into buf exactly as printf("%.9g", (double)x) would (9 significant
 * digits: enough for every float32 to read back to the same bits), but several
 * times faster for the values reports are made of. buf holds at least 16
 * bytes. Returns the length written (without the NUL). */
int report_format_float(char *buf, float x);

#endif
