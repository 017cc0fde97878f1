/* kept.c — the heads' relations, row by row, kept, halved or lost by the wide head (kept.h). */
#include "core/kept.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

KeptVerdict kept_verdict(double share)
{
    return share >= MEASURES_SHOWN_SHARE ? KEPT_KEPT : share >= KEPT_HALVED_AT_LEAST ? KEPT_HALVED : KEPT_LOST;
}

const char *kept_verdict_name(KeptVerdict v)
{
    static const char *const names[3] = {"kept", "halved", "lost"};
    return names[v];
}

/* 1 when head h holds its relation (pattern p) in row i of its map att_h. */
static int holds(const MhaConfig *c, const float *att_h, int i, const int *ids, const MapMeasures *m, MeasuresRole p)
{
    const int n = mha_visible_keys(c->causal, i, c->T);
    if (n < 2)
        return 0; /* one key: no choice, no relation */
    const float *a_i = att_h + (size_t)i * c->T; /* (T) the head's row i */
    return measures_row_share(a_i, i, c->T, c->causal, ids, m->fixed_key, p) >= MEASURES_SHOWN_SHARE &&
           measures_row_norm_entropy(a_i, n) < MEASURES_SHARP_BELOW;
}

int kept_layer_build(KeptLayer *k, const MhaConfig *c, const float *att, const float *wide,
                     char *const *tokens, const MapMeasures *m)
{
    const int T = c->T, H = c->n_heads;
    const size_t map = (size_t)T * T;
    memset(k, 0, sizeof *k);
    int *ids = malloc((size_t)T * sizeof *ids); /* (T) first index of each token */
    k->heads = calloc((size_t)H, sizeof *k->heads);
    k->relations = calloc((size_t)H, sizeof *k->relations);
    if (!ids || !k->heads || !k->relations) {
        free(ids);
        kept_layer_free(k);
        return MHAVIZ_ENOMEM;
    }
    k->n_heads = H;
    measures_token_ids(tokens, T, ids);

    /* Each head's relation, and the relations: heads on the same pattern
     * (fixed-token: the same key) share one. */
    for (int h = 0; h < H; h++) {
        KeptHead *kh = &k->heads[h];
        kh->is_role = m[h].role < MEASURES_N_PATTERNS;
        kh->relation = kh->is_role ? (int)m[h].role : m[h].strongest;
        if (!kh->is_role && kh->relation >= 0 && measures_tied_with(&m[h], kh->relation) >= 0)
            kh->relation = -1; /* its strongest ties another: no one relation (list order would pick it) */
        kh->of = -1;
        if (kh->relation < 0)
            continue;
        const int key = kh->relation == MEASURES_FIXED_TOKEN ? m[h].fixed_key : -1;
        int r = 0;
        while (r < k->n_relations && (k->relations[r].relation != kh->relation || k->relations[r].fixed_key != key))
            r++;
        if (r == k->n_relations) {
            k->relations[r].relation = kh->relation;
            k->relations[r].fixed_key = key;
            k->n_relations++;
        }
        k->relations[r].is_role |= kh->is_role;
        kh->of = r;
    }

    /* Row by row: the heads that hold a relation there, and the wide
     * head's share of its cells, once per relation. */
    for (int r = 0; r < k->n_relations; r++) {
        KeptRelation *kr = &k->relations[r];
        const MeasuresRole p = (MeasuresRole)kr->relation;
        for (int i = 0; i < T; i++) {
            int held = 0;
            for (int h = 0; h < H; h++) {
                if (k->heads[h].of != r || !holds(c, att + (size_t)h * map, i, ids, &m[h], p))
                    continue;
                held = 1;
                k->heads[h].rows++;
            }
            if (!held)
                continue;
            const double share = measures_row_share(wide + (size_t)i * T, i, T, c->causal, ids, kr->fixed_key, p);
            const KeptVerdict v = kept_verdict(share);
            kr->rows++;
            kr->verdict[v]++;
            kr->share_sum += share;
            for (int h = 0; h < H; h++) /* the heads that held it here: kept for each of them */
                k->heads[h].kept += v == KEPT_KEPT && k->heads[h].of == r &&
                                    holds(c, att + (size_t)h * map, i, ids, &m[h], p);
        }
        k->rows += kr->rows;
        for (int v = 0; v < 3; v++)
            k->verdict[v] += kr->verdict[v];
    }
    free(ids);
    return MHAVIZ_OK;
}

void kept_layer_free(KeptLayer *k)
{
    free(k->heads);
    free(k->relations);
    memset(k, 0, sizeof *k);
}
