/* model_run.c — the layers of a model, one after the other: run, measure,
 * sum up, write, free; the summary's report last. */
#include "run/model_run.h"
#include "core/model_summary.h"
#include "core/status.h"
#include "core/variant.h"
#include "draw/draw.h"
#include "models/chance_draw.h"
#include "pictures/layers_chart.h"
#include "pictures/model_overview.h"
#include "report/report.h"
#include "run/run_chance.h"
#include "run/variants.h"

#include <stdio.h>
#include <stdlib.h>

int model_run_write(MhaInput *in, int n, const ModelPrediction *pred, int query, Renderer *r, const OutDir *out, const VariantOptions *o,
                    Timing *tm, char *err, size_t errlen)
{
    ModelSummary s;
    int rc = model_summary_init(&s, n, in[0].cfg.n_heads, in[0].cfg.T);
    /* chance's random layers: drawn once, timed apart as a run of one layer
     * times them. They depend on the shape and the tokens only, the same
     * for every layer of the model, so every layer gets the same numbers
     * a run of that layer alone draws. */
    Chance chance = {0};
    timing_phase(tm, TIMING_CHANCE);
    if (rc == MHAVIZ_OK && chance_draw(&chance, &in[0].cfg, in[0].tokens, in[0].has_single, CHANCE_DRAWS) != MHAVIZ_OK)
        rc = MHAVIZ_ENOMEM;
    for (int i = 0; i < n && rc == MHAVIZ_OK; i++) {
        Variant v = {0};
        char sub[32];
        outdir_layer_folder(sub, sizeof sub, in[i].model->layer);
        if ((rc = variant_run(&v, &in[i], in[i].cfg.n_kv_heads, NULL, POOL_ALIGNED, query, in[i].title, tm, err,
                              errlen)) == MHAVIZ_OK) {
            /* chance's layers as sharp as this layer's heads depend on the layer: drawn for each */
            if (run_chance(&v, &in[i], &chance, NULL, POOL_ALIGNED) != MHAVIZ_OK ||
                model_summary_add(&s, &v, in[i].model->layer) != MHAVIZ_OK)
                rc = MHAVIZ_ENOMEM;
        }
        if (rc == MHAVIZ_OK) {
            timing_phase(tm, TIMING_WRITE);
            rc = variants_write_one(&v, r, out, sub, o, tm, err, errlen);
        }
        variant_free(&v);
        if (i > 0)
            input_free(&in[i]);
    }
    if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "out of memory");
    if (rc == MHAVIZ_OK) {
        timing_phase(tm, TIMING_RENDER);
        char *path = outdir_path(out, "model_overview.png");
        rc = path ? model_overview_draw(r, path, &s, in[0].model->name, in[0].cfg.T, in[0].cfg.causal, err, errlen)
                  : draw_nomem(err, errlen, "model_overview.png");
        free(path);
    }
    if (rc == MHAVIZ_OK) {
        char *path = outdir_path(out, "layers.png");
        rc = path ? layers_chart_draw(r, path, &s, in[0].model->name, err, errlen)
                  : draw_nomem(err, errlen, "layers.png");
        free(path);
    }
    if (rc == MHAVIZ_OK) {
        timing_phase(tm, TIMING_WRITE);
        rc = report_write_model(out->tmp, &s, &in[0], pred, err, errlen);
    }
    model_summary_free(&s);
    return rc;
}
