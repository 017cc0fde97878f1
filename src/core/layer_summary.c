/* layer_summary.c — the layer measured once, for every writer. */
#include "core/layer_summary.h"
#include "core/parallel.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void layer_summary_free(LayerSummary *s)
{
    free(s->heads);
    free(s->cmp);
    free(s->rows_entropy_norm);
    kept_layer_free(&s->kept);
    memset(s, 0, sizeof *s);
}

int layer_summary_kv_head(const LayerSummary *s, int h)
{
    return s->kv_of ? s->kv_of[h] : h / (s->c->n_heads / s->c->n_kv_heads);
}

/* The K/V cache per token of each model of t (trained with t->kv_heads[r]
 * K/V heads, then the one head of width d_model) at c's shapes. */
static void trained_kv_bytes(LayerSummary *s, const MhaConfig *c, const Training *t)
{
    for (int r = 0; r <= t->n_kv_losses; r++) {
        const int kv = r < t->n_kv_losses ? t->kv_heads[r] : 0; /* 0: the one head */
        MhaConfig k = *c;
        k.n_kv_heads = kv ? kv : c->n_heads;
        CostTable cost;
        measures_cost(&k, 0, 0, &cost);
        s->trained_kv_bytes[r] = kv ? cost.input.kv_cache_bytes : cost.wide.kv_cache_bytes;
    }
}

int layer_summary_build(LayerSummary *s, const MhaInput *in, const MhaState *multi, const MhaState *single,
                        int single_given, const MapMeasures *m, const int *kv_of)
{
    const MhaConfig *c = &in->cfg;
    const int T = c->T;
    const size_t map = (size_t)T * T;
    memset(s, 0, sizeof *s);
    s->c = c;
    s->wide_att = single->att;
    s->kv_of = kv_of;
    s->heads = malloc((size_t)c->n_heads * sizeof *s->heads);
    s->cmp = malloc((size_t)c->n_heads * sizeof *s->cmp);
    s->rows_entropy_norm = malloc(((size_t)c->n_heads + 1) * T * sizeof *s->rows_entropy_norm);
    /* Each map's measures: the caller's (computed once for the pictures and
     * the reports), else computed here the same way. */
    MapMeasures *computed = NULL; /* (n_heads + 1) when the caller has none */
    if (s->heads && s->cmp && s->rows_entropy_norm && !m) {
        computed = malloc(((size_t)c->n_heads + 1) * sizeof *computed);
        if (computed &&
            measures_layer(multi->att, c->n_heads, s->wide_att, T, c->causal, in->tokens, computed) == MHAVIZ_OK)
            m = computed;
    }
    if (!s->heads || !s->cmp || !s->rows_entropy_norm || !m) {
        free(computed);
        layer_summary_free(s);
        return MHAVIZ_ENOMEM;
    }
    memcpy(s->heads, m, (size_t)c->n_heads * sizeof *s->heads);
    s->wide = m[c->n_heads];
    s->blur = measures_blur(m, c->n_heads, &s->heads_norm_mean);
    s->heads_norm_min = m[0].entropy_norm;
    for (int h = 1; h < c->n_heads; h++)
        s->heads_norm_min = fmin(s->heads_norm_min, m[h].entropy_norm);
    const int kept_rc = kept_layer_build(&s->kept, c, multi->att, s->wide_att, in->tokens, m);
    free(computed);
    if (kept_rc != MHAVIZ_OK) {
        layer_summary_free(s);
        return MHAVIZ_ENOMEM;
    }
#pragma omp parallel for schedule(dynamic) if ((size_t)c->n_heads * map >= PARALLEL_MIN_CELLS)
    for (int h = 0; h < c->n_heads; h++)
        measures_compare(multi->att + (size_t)h * map, s->wide_att, T, c->causal, &s->cmp[h]);
#pragma omp parallel for schedule(dynamic) if (((size_t)c->n_heads + 1) * map >= PARALLEL_MIN_CELLS)
    for (int p = 0; p <= c->n_heads; p++) /* (T) each: map p's rows */
        measures_row_entropy_norm(p < c->n_heads ? multi->att + (size_t)p * map : s->wide_att, T, c->causal,
                                  s->rows_entropy_norm + (size_t)p * T);
    double bits_sum = 0.0;
    for (int h = 0; h < c->n_heads; h++) /* in head order: the same sum for any thread count */
        bits_sum += s->heads[h].entropy_bits;
    s->heads_bits_mean = bits_sum / c->n_heads;
    s->rel_diff = measures_output_rel_diff(multi->out, single->out, T, c->d_model);
    s->cosine = measures_output_cosine(multi->out, single->out, T, c->d_model);
    const int wide_bias = single_given ? in->single.has_bias : in->w.has_bias;
    measures_cost(c, in->w.has_bias, wide_bias, &s->cost);
    trained_kv_bytes(s, c, &in->training);
    return MHAVIZ_OK;
}
