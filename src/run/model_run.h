/* model_run.h — several layers of a model in one run: each layer run,
 * measured and written into its folder layer_NN/ in turn (as a run of that
 * layer alone writes it, but for the heads' own maps: head_NN.png only for
 * the heads worth a slide, every head's with VariantOptions' head_maps),
 * its numbers kept in the whole-model summary (core/model_summary.h), and
 * the summary's report at the top with one lesson.html for every layer
 * (report/lesson_page.h). */
#ifndef MHAVIZ_MODEL_RUN_H
#define MHAVIZ_MODEL_RUN_H

#include "core/timing.h"
#include "checkpoint/model.h"
#include "io/input.h"
#include "io/outdir.h"
#include "pictures/render.h"
#include "run/variant_write.h"

#include <stddef.h>

/* Sentences beyond the run's own (--text-file): each run through the
 * same layers and measured, its rows pooled into each head's role. */
typedef struct {
    const char *dir;      /* the model's folder */
    const char *file;     /* the file they come from, for messages */
    char *const *texts;   /* (n) the sentences after the first */
    const int *lines;     /* (n) each one's line in the file */
    int n;
    int repeat;           /* each read twice over, as the first (ModelAsk's repeat) */
} ModelSentences;

/* Run and write the n layers in (one forward's, checkpoint/model.h: each
 * in[i].model names its layer; or a file's "layers", io/input.h: in[i].layer)
 * into out; name: the model's or the file's, for the pictures and the report;
 * pred: the model's next tokens, for the report (NULL for a file). query: the token of query_NN.png,
 * -1 for each layer's default. in[1..n) are freed as they are written;
 * in[0] names the run at the top and stays the caller's. more (NULL:
 * none): the other sentences, whose rows join each head's role and the
 * heads worth a slide (the pictures and layer_NN/ stay the first
 * sentence's); a sentence the model cannot read fails the run with err
 * naming its file and line. Returns
 * MHAVIZ_OK, MHAVIZ_EINPUT, MHAVIZ_EIO (err names the file) or
 * MHAVIZ_ENOMEM. */
int model_run_write(MhaInput *in, int n, const char *name, const ModelPrediction *pred, const ModelSentences *more,
                    int query, Renderer *r, const OutDir *out, const VariantOptions *o, Timing *tm, char *err,
                    size_t errlen);

#endif
