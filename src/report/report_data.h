/* report_data.h — what report.txt and report.json are written from: the
 * run's arrays and the layer's summary, measured before any writer runs. */
#ifndef MHAVIZ_REPORT_DATA_H
#define MHAVIZ_REPORT_DATA_H

#include "core/chance.h"
#include "core/layer.h"
#include "core/layer_summary.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pull.h"

/* What a report is written from; nothing here is owned by the report. */
typedef struct {
    const MhaInput *in;     /* config, tokens */
    const MhaState *multi;  /* the multi-head forward pass (in->cfg) */
    const MhaState *single; /* the single wide head: one head of width d_model */
    int single_given;       /* 1: "single_head" weights from the input; 0: built from the same projections */
    const char *notes;      /* extra lines for the report (e.g. a K/V conversion), or NULL */
    int npy;                /* 1: every matrix of report.json in a .npy file (--npy), whatever its size */
    const PullLayer *pulls;      /* how the wide head combines the heads' scores (pull.h);
                                  * NULL: the reports leave that section out */
    int scores;             /* 1: report.json holds the heads' scores too (--steps); the forward
                             * pass keeps them either way, for the pulls */
    const Chance *chance;   /* what random layers of this shape and sentence give (chance.h);
                             * NULL: the reports compare with nothing */
    int pooled_from;        /* the input's K/V heads when this layer pooled them (--kv-heads), else 0: the
                             * input's "training" losses are then the model's before pooling */
    const LayerSummary *summary; /* the layer measured once (core/layer_summary.h), each map's
                                  * measures and its heads' K/V heads included */
} ReportData;

#endif
