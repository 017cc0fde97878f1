/* model_run.c — the layers of a model, one after the other: run, measure,
 * sum up, write, free; the summary's report last. */
#include "run/model_run.h"
#include "checkpoint/model.h"
#include "core/model_summary.h"
#include "core/status.h"
#include "core/variant.h"
#include "draw/draw.h"
#include "models/chance_draw.h"
#include "pictures/layers_chart.h"
#include "pictures/model_overview.h"
#include "report/lesson_page.h"
#include "report/report.h"
#include "run/run_chance.h"
#include "run/variant_write.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A head whose head_NN.png a layer's folder got as a head worth a slide. */
typedef struct {
    int layer, head;
} Drawn;

/* 1 when head h of layer is one of s's heads worth a slide. */
static int worth_a_slide(const ModelSummary *s, int layer, int h)
{
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++)
        if (s->best[k].layer == layer && s->best[k].head == h)
            return 1;
    return 0;
}

/* Remove the maps of the drawn heads (n of them, of n_heads a layer) that
 * are no longer worth a slide: a later layer's head took their place.
 * head_NN.png, and with steps head_NN_scores.png. Returns MHAVIZ_OK, or
 * MHAVIZ_EIO with err naming the file. */
static int remove_passed(const ModelSummary *s, const Drawn *drawn, int n, int n_heads, int steps, const OutDir *out,
                         char *err, size_t errlen)
{
    for (int i = 0; i < n; i++) {
        if (worth_a_slide(s, drawn[i].layer, drawn[i].head))
            continue;
        char folder[32], head[32], name[128];
        outdir_layer_folder(folder, sizeof folder, drawn[i].layer);
        outdir_head_name(head, sizeof head, drawn[i].head, n_heads);
        for (int scores = 0; scores <= steps; scores++) {
            snprintf(name, sizeof name, "%s/%s%s", folder, head, scores ? OUTDIR_SCORES_PNG : OUTDIR_PNG);
            char *path = outdir_path(out, name);
            if (!path) {
                snprintf(err, errlen, "out of memory");
                return MHAVIZ_ENOMEM;
            }
            const int failed = remove(path) != 0;
            if (failed)
                snprintf(err, errlen, "%s: cannot remove: %s", path, strerror(errno));
            free(path);
            if (failed)
                return MHAVIZ_EIO;
        }
    }
    return MHAVIZ_OK;
}

/* The layer's number: in the model, or in the file's "layers". */
static int layer_number(const MhaInput *in)
{
    return in->model ? in->model->layer : in->layer;
}

/* Each of more's sentences through the layers the summary holds: their
 * heads measured and pooled into s. */
static int pool_sentences(ModelSummary *s, const ModelSentences *more, Timing *tm, char *err, size_t errlen)
{
    int *layers = malloc((size_t)s->n * sizeof *layers);
    MhaInput *in = calloc((size_t)s->n, sizeof *in); /* (s->n) one sentence's layers */
    int rc = layers && in ? MHAVIZ_OK : MHAVIZ_ENOMEM;
    for (int i = 0; rc == MHAVIZ_OK && i < s->n; i++)
        layers[i] = s->layers[i].layer;
    const ModelAsk ask = {.repeat = more->repeat};
    for (int k = 0; k < more->n && rc == MHAVIZ_OK; k++) {
        char why[MHAVIZ_ERRLEN];
        if ((rc = model_load(more->dir, more->texts[k], layers, s->n, in, NULL, &ask, why, sizeof why)) != MHAVIZ_OK) {
            if (rc != MHAVIZ_ENOMEM)
                snprintf(err, errlen, "%s:%d: %s", more->file, more->lines[k], why);
            break;
        }
        for (int i = 0; i < s->n && rc == MHAVIZ_OK; i++) {
            Variant v = {0};
            if ((rc = variant_run(&v, &in[i], in[i].cfg.n_kv_heads, NULL, POOL_ALIGNED, -1, in[i].title, tm, err,
                                  errlen)) == MHAVIZ_OK)
                model_summary_pool(s, i, &v);
            variant_free(&v);
        }
        for (int i = 0; i < s->n; i++)
            input_free(&in[i]);
        s->sentences++;
    }
    free(layers), free(in);
    return rc;
}

int model_run_write(MhaInput *in, int n, const char *name, const ModelPrediction *pred, const ModelSentences *more,
                    int query, Renderer *r, const OutDir *out, const VariantOptions *o, Timing *tm, char *err,
                    size_t errlen)
{
    ModelSummary s;
    const int H = in[0].cfg.n_heads;
    int rc = model_summary_init(&s, n, H, in[0].cfg.T);
    /* Each layer's folder gets every map together (overview.png) and the
     * wide head's, but a heatmap of its own only for a head worth a slide
     * (with --head-maps: every head, as a run of that layer alone). The
     * best so far are drawn as each layer is written, and those a later
     * layer's head outdid removed at the end. */
    unsigned char *heads = calloc((size_t)H, 1);              /* (n_heads) 1: this layer's head is drawn */
    Drawn *drawn = malloc((size_t)n * MODEL_SUMMARY_N_SLIDES * sizeof *drawn); /* (n_drawn) */
    int n_drawn = 0;
    /* one lesson.html for every layer, at the top (none in the layers' folders) */
    const RenderColours colours = render_colours(r);
    LessonPage *page = NULL;
    if (!heads || !drawn || (rc == MHAVIZ_OK && o->html && !(page = lesson_page_begin(n, &colours, o->quiz))))
        rc = MHAVIZ_ENOMEM;
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
        outdir_layer_folder(sub, sizeof sub, layer_number(&in[i]));
        if ((rc = variant_run(&v, &in[i], in[i].cfg.n_kv_heads, NULL, POOL_ALIGNED, query, in[i].title, tm, err,
                              errlen)) == MHAVIZ_OK) {
            /* chance's layers as sharp as this layer's heads depend on the layer: drawn for each */
            timing_phase(tm, TIMING_CHANCE);
            if (run_chance(&v, &in[i], &chance, NULL, POOL_ALIGNED) != MHAVIZ_OK ||
                model_summary_add(&s, &v, layer_number(&in[i])) != MHAVIZ_OK)
                rc = MHAVIZ_ENOMEM;
        }
        if (rc == MHAVIZ_OK) {
            const int layer = layer_number(&in[i]);
            for (int h = 0; h < H; h++)
                if ((heads[h] = worth_a_slide(&s, layer, h)) && !o->head_maps)
                    drawn[n_drawn++] = (Drawn){layer, h};
            VariantOptions lo = *o;
            lo.heads = o->head_maps ? NULL : heads;
            timing_phase(tm, TIMING_WRITE);
            rc = variant_write(&v, r, out, sub, &lo, tm, err, errlen);
        }
        if (rc == MHAVIZ_OK && page)
            rc = lesson_page_add(page, &v, layer_number(&in[i]), err, errlen);
        variant_free(&v);
        if (i > 0)
            input_free(&in[i]);
    }
    if (rc == MHAVIZ_OK && more && more->n > 0) {
        timing_phase(tm, TIMING_LOAD);
        if ((rc = pool_sentences(&s, more, tm, err, errlen)) == MHAVIZ_OK)
            model_summary_pooled_roles(&s);
    }
    if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "out of memory");
    if (rc == MHAVIZ_OK)
        rc = remove_passed(&s, drawn, n_drawn, H, o->steps, out, err, errlen);
    if (rc == MHAVIZ_OK) {
        timing_phase(tm, TIMING_RENDER);
        char *path = outdir_path(out, OUTDIR_MODEL_OVERVIEW);
        rc = path ? model_overview_draw(r, path, &s, name, in[0].cfg.T, in[0].cfg.causal, err, errlen)
                  : draw_nomem(err, errlen, OUTDIR_MODEL_OVERVIEW);
        free(path);
    }
    if (rc == MHAVIZ_OK) {
        char *path = outdir_path(out, OUTDIR_LAYERS);
        rc = path ? layers_chart_draw(r, path, &s, name, err, errlen)
                  : draw_nomem(err, errlen, OUTDIR_LAYERS);
        free(path);
    }
    if (rc == MHAVIZ_OK) {
        timing_phase(tm, TIMING_WRITE);
        rc = report_write_model(out->tmp, &s, &in[0], name, pred, err, errlen);
    }
    if (rc == MHAVIZ_OK && page) {
        const LessonModel model = {name, pred};
        char *path = outdir_path(out, OUTDIR_LESSON_PAGE);
        rc = path ? lesson_page_finish(page, path, &model, err, errlen) : MHAVIZ_ENOMEM;
        if (!path)
            snprintf(err, errlen, "out of memory");
        free(path);
    }
    lesson_page_free(page);
    model_summary_free(&s);
    free(heads), free(drawn);
    return rc;
}
