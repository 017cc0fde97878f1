/* variants_summary.c — the variants compared once, for every writer. */
#include "core/variants_summary.h"
#include "core/parallel.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

void variants_summary_free(VariantsSummary *s)
{
    for (int i = 0; s->ranks && i < s->n; i++)
        free(s->ranks[i].scores);
    free(s->ranks);
    free(s->cmp);
    memset(s, 0, sizeof *s);
}

const MapComparison *variants_summary_cmp(const VariantsSummary *s, int i) { return s->cmp + (size_t)i * s->n_heads; }

/* Each GQA variant's groupings ranked into s->ranks, as variants_summary_build says. */
static int rank_groupings(VariantsSummary *s, const Variant *v)
{
    const MhaConfig *c = &v[0].in.cfg;
    if (c->n_kv_heads != c->n_heads || c->n_heads > GROUPING_MAX_HEADS)
        return MHAVIZ_OK;
    for (int i = 1; i < s->n; i++) {
        GroupingRanking *rk = &s->ranks[i];
        const int G = v[i].in.cfg.n_kv_heads;
        if (G == 1 || G == c->n_heads)
            continue;
        if (grouping_rank(&v[0].in, v[0].multi.att, G, v[i].pool, &rk->scores, &rk->n) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
        int unique = v[i].pool == POOL_ALIGNED;
        for (int k = 0; k < rk->n; k++)
            unique &= rk->scores[k].unique;
        if (!unique) {
            free(rk->scores);
            *rk = (GroupingRanking){NULL, 0, 1};
        }
    }
    return MHAVIZ_OK;
}

int variants_summary_build(VariantsSummary *s, const Variant *v, int n)
{
    const MhaConfig *c = &v[0].in.cfg;
    const int H = c->n_heads, T = c->T;
    const size_t map = (size_t)T * T;
    memset(s, 0, sizeof *s);
    s->n = n;
    s->n_heads = H;
    s->cmp = malloc((size_t)n * H * sizeof *s->cmp);
    s->ranks = calloc((size_t)n, sizeof *s->ranks);
    if (!s->cmp || !s->ranks) {
        variants_summary_free(s);
        return MHAVIZ_ENOMEM;
    }
    /* Each head against its reference self, head by head in parallel. */
    for (int i = 0; i < n; i++) {
        MapComparison *cmp = s->cmp + (size_t)i * H; /* (n_heads) */
        const float *att = v[i].multi.att;           /* (n_heads, T, T) */
#pragma omp parallel for schedule(dynamic) if ((size_t)H * map >= PARALLEL_MIN_CELLS)
        for (int h = 0; h < H; h++)
            measures_compare(att + (size_t)h * map, v[0].multi.att + (size_t)h * map, T, c->causal, &cmp[h]);
    }
    if (rank_groupings(s, v) != MHAVIZ_OK) {
        variants_summary_free(s);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}
