/* model_summary.c — the whole-model table, filled one layer at a time. */
#include "core/model_summary.h"
#include "core/kept.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

const MeasuresRole model_summary_slides[MODEL_SUMMARY_N_SLIDES] = {
    MEASURES_PREVIOUS_TOKEN, MEASURES_FIRST_TOKEN, MEASURES_DUPLICATE_TOKEN, MEASURES_INDUCTION};

/* k of the kept maps' blocks of k x k tokens, for T tokens. */
static int thumb_block(int T) { return (T + MODEL_SUMMARY_THUMB - 1) / MODEL_SUMMARY_THUMB; }

size_t model_summary_bytes(int n, int n_heads, int T)
{
    const size_t side = (size_t)((T + thumb_block(T) - 1) / thumb_block(T));
    return (size_t)n * (sizeof(LayerRow) + (size_t)n_heads * sizeof(MeasuresRole) +
                        (size_t)n_heads * side * side * sizeof(float));
}

int model_summary_init(ModelSummary *s, int n, int n_heads, int T)
{
    memset(s, 0, sizeof *s);
    s->n_heads = n_heads;
    s->block = thumb_block(T);
    s->thumb_T = (T + s->block - 1) / s->block;
    const size_t thumb = (size_t)s->thumb_T * s->thumb_T;
    s->sentences = 1;
    s->layers = calloc((size_t)n, sizeof *s->layers);
    s->thumbs = calloc((size_t)n * n_heads * thumb, sizeof *s->thumbs);
    s->pooled = calloc((size_t)n * n_heads, sizeof *s->pooled);
    if (!s->layers || !s->thumbs || !s->pooled) {
        model_summary_free(s);
        return MHAVIZ_ENOMEM;
    }
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++)
        s->best[k] = (SlideHead){.layer = -1, .head = -1, .share = NAN};
    return MHAVIZ_OK;
}

/* Head m of layer `layer` as a candidate for each pattern's slide. */
static void consider(ModelSummary *s, int layer, int h, const MapMeasures *m);

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

/* thumb (B, B) = att (T, T) in blocks of k x k tokens, each the mean of
 * its visible cells (key <= query when causal), 0 when none is. */
static void thumbnail(float *thumb, int B, int k, const float *att, int T, int causal)
{
    for (int bi = 0; bi < B; bi++)
        for (int bj = 0; bj < B; bj++) {
            double sum = 0.0;
            int cells = 0;
            for (int i = bi * k; i < (bi + 1) * k && i < T; i++)
                for (int j = bj * k; j < (bj + 1) * k && j < T; j++)
                    if (!causal || j <= i)
                        sum += att[(size_t)i * T + j], cells++;
            thumb[(size_t)bi * B + bj] = cells ? (float)(sum / cells) : 0.0f;
        }
}

int model_summary_add(ModelSummary *s, const Variant *v, int layer)
{
    const MhaConfig *c = &v->in.cfg;
    LayerRow *row = &s->layers[s->n];
    KeptLayer kept;
    if (!(row->head_role = malloc((size_t)c->n_heads * sizeof *row->head_role)))
        return MHAVIZ_ENOMEM;
    if (kept_layer_build(&kept, c, v->multi.att, v->single.att, v->in.tokens, v->measures) != MHAVIZ_OK) {
        free(row->head_role);
        row->head_role = NULL;
        return MHAVIZ_ENOMEM;
    }
    double heads_norm_mean;
    row->layer = layer;
    row->n_heads = c->n_heads;
    row->rows = kept.rows, row->kept = kept.verdict[KEPT_KEPT], row->lost = kept.verdict[KEPT_LOST];
    kept_layer_free(&kept);
    row->blur = measures_blur(v->measures, c->n_heads, &heads_norm_mean);
    row->draws = v->chance.draws;
    row->blur_r = v->chance.r[CHANCE_BLUR];
    row->kept_r = v->chance.r[CHANCE_KEPT];
    row->lost_r = v->chance.r[CHANCE_LOST];
    for (int h = 0; h < c->n_heads; h++) {
        const MapMeasures *m = &v->measures[h];
        const size_t thumb = (size_t)s->thumb_T * s->thumb_T;
        thumbnail(s->thumbs + ((size_t)s->n * s->n_heads + h) * thumb, s->thumb_T, s->block,
                  v->multi.att + (size_t)h * c->T * c->T, c->T, c->causal);
        row->roles[m->role]++;
        row->head_role[h] = m->role;
        consider(s, layer, h, m);
        PooledHead *ph = &s->pooled[(size_t)s->n * s->n_heads + h];
        *ph = (PooledHead){.m = *m}; /* its rows and shown counted by model_summary_pool */
        memset(ph->m.rows, 0, sizeof ph->m.rows);
        memset(ph->m.shown, 0, sizeof ph->m.shown);
    }
    model_summary_pool(s, s->n, v);
    s->n++;
    return MHAVIZ_OK;
}

static void consider(ModelSummary *s, int layer, int h, const MapMeasures *m)
{
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++) {
        const MeasuresRole p = model_summary_slides[k];
        if (s->best[k].layer < 0 && m->rows[p] > s->best[k].rows)
            s->best[k].rows = m->rows[p];
        if (stronger(m, p, &s->best[k]))
            s->best[k] = (SlideHead){layer, h, m->shown[p], m->rows[p], m->pattern[p], m->role == p};
    }
}

void model_summary_pool(ModelSummary *s, int i, const Variant *v)
{
    const MhaConfig *c = &v->in.cfg;
    /* the rows with a choice: every row but the first under the causal mask */
    const long choice = c->T < 2 ? 0 : c->causal ? c->T - 1 : c->T;
    for (int h = 0; h < c->n_heads; h++) {
        const MapMeasures *m = &v->measures[h];
        PooledHead *ph = &s->pooled[(size_t)i * s->n_heads + h];
        for (int p = 0; p < MEASURES_N_PATTERNS; p++) {
            ph->m.rows[p] += m->rows[p], ph->m.shown[p] += m->shown[p];
            if (m->rows[p] > 0) { /* pattern and even are means over these rows (NAN without any) */
                ph->sum[p] += m->pattern[p] * m->rows[p];
                ph->even[p] += m->even[p] * m->rows[p];
            }
        }
        if (choice > 0)
            ph->entropy_sum += m->entropy_norm * choice;
        ph->choice_rows += choice;
    }
}

void model_summary_pooled_roles(ModelSummary *s)
{
    if (s->sentences < 2)
        return;
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++)
        s->best[k] = (SlideHead){.layer = -1, .head = -1, .share = NAN};
    for (int i = 0; i < s->n; i++) {
        LayerRow *row = &s->layers[i];
        memset(row->roles, 0, sizeof row->roles);
        for (int h = 0; h < s->n_heads; h++) {
            PooledHead *ph = &s->pooled[(size_t)i * s->n_heads + h];
            ph->m.entropy_norm = ph->choice_rows > 0 ? ph->entropy_sum / (double)ph->choice_rows : NAN;
            measures_role_from_sums(&ph->m, ph->sum, ph->even, ph->choice_rows);
            row->roles[ph->m.role]++;
            row->head_role[h] = ph->m.role;
            consider(s, row->layer, h, &ph->m);
        }
    }
}

void model_summary_free(ModelSummary *s)
{
    for (int i = 0; s->layers && i < s->n; i++)
        free(s->layers[i].head_role);
    free(s->layers);
    free(s->thumbs);
    free(s->pooled);
    memset(s, 0, sizeof *s);
}
