/* model_run.h — several layers of a model in one run: each layer run,
 * measured and written into its folder layer_NN/ in turn (as a run of that
 * layer alone writes it, but for lesson.html), its numbers kept in the
 * whole-model summary (core/model_summary.h), and the summary's report at
 * the top with one lesson.html for every layer (report/lesson_page.h). */
#ifndef MHAVIZ_MODEL_RUN_H
#define MHAVIZ_MODEL_RUN_H

#include "core/timing.h"
#include "checkpoint/model.h"
#include "io/input.h"
#include "io/outdir.h"
#include "pictures/render.h"
#include "run/variant_write.h"

#include <stddef.h>

/* Run and write the n layers in (one forward's, checkpoint/model.h: each
 * in[i].model names its layer) into out; pred: the model's next tokens, for the report. query: the token of query_NN.png,
 * -1 for each layer's default. in[1..n) are freed as they are written;
 * in[0] names the run at the top and stays the caller's. Returns
 * MHAVIZ_OK, MHAVIZ_EINPUT, MHAVIZ_EIO (err names the file) or
 * MHAVIZ_ENOMEM. */
int model_run_write(MhaInput *in, int n, const ModelPrediction *pred, int query, Renderer *r, const OutDir *out, const VariantOptions *o,
                    Timing *tm, char *err, size_t errlen);

#endif
