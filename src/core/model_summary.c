/* model_summary.c — the whole-model table, filled one layer at a time. */
#include "core/model_summary.h"
#include "core/kept.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const MeasuresRole model_summary_slides[MODEL_SUMMARY_N_SLIDES] = {
    MEASURES_PREVIOUS_TOKEN, MEASURES_FIRST_TOKEN, MEASURES_DUPLICATE_TOKEN, MEASURES_INDUCTION};

int model_summary_init(ModelSummary *s, int n)
{
    memset(s, 0, sizeof *s);
    if (!(s->layers = calloc((size_t)n, sizeof *s->layers)))
        return MHAVIZ_ENOMEM;
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++)
        s->best[k] = (SlideHead){.layer = -1, .head = -1, .share = NAN};
    return MHAVIZ_OK;
}

/* 1 when head m (pattern p) beats the best so far: more rows showing p,
 * then a larger share; an earlier layer or head keeps its place on a tie. */
static int stronger(const MapMeasures *m, MeasuresRole p, const SlideHead *best)
{
    if (m->shown[p] < MEASURES_MIN_ROLE_ROWS)
        return 0;
    if (best->layer < 0 || m->shown[p] != best->shown)
        return best->layer < 0 || m->shown[p] > best->shown;
    return m->pattern[p] > best->share;
}

int model_summary_add(ModelSummary *s, const Variant *v, int layer)
{
    const MhaConfig *c = &v->in.cfg;
    LayerRow *row = &s->layers[s->n];
    KeptLayer kept;
    if (kept_layer_build(&kept, c, v->multi.att, v->single.att, v->in.tokens, v->measures) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    double heads_norm_mean;
    row->layer = layer;
    row->n_heads = c->n_heads;
    row->rows = kept.rows, row->kept = kept.kept;
    kept_layer_free(&kept);
    row->blur = measures_blur(v->measures, c->n_heads, &heads_norm_mean);
    row->draws = v->chance.draws;
    row->blur_r = v->chance.r[CHANCE_BLUR];
    row->kept_r = v->chance.r[CHANCE_KEPT];
    row->lost_r = v->chance.r[CHANCE_LOST];
    for (int h = 0; h < c->n_heads; h++) {
        const MapMeasures *m = &v->measures[h];
        row->roles[m->role]++;
        for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++) {
            const MeasuresRole p = model_summary_slides[k];
            if (s->best[k].layer < 0 && m->rows[p] > s->best[k].rows)
                s->best[k].rows = m->rows[p];
            if (stronger(m, p, &s->best[k]))
                s->best[k] = (SlideHead){layer, h, m->shown[p], m->rows[p], m->pattern[p], m->role == p};
        }
    }
    s->n++;
    return MHAVIZ_OK;
}

void model_summary_free(ModelSummary *s)
{
    free(s->layers);
    memset(s, 0, sizeof *s);
}
