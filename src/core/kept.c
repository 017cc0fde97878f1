/* kept.c — the heads' relations, row by row, kept or lost by the wide head (kept.h). */
#include "core/kept.h"
#include "core/status.h"

#include <stdlib.h>
#include <string.h>

int kept_layer_build(KeptLayer *k, const MhaConfig *c, const float *att, const float *wide,
                     char *const *tokens, const MapMeasures *m)
{
    const int T = c->T, H = c->n_heads;
    const size_t map = (size_t)T * T;
    memset(k, 0, sizeof *k);
    int *ids = malloc((size_t)T * sizeof *ids); /* (T) first index of each token */
    k->heads = calloc((size_t)H, sizeof *k->heads);
    if (!ids || !k->heads) {
        free(ids);
        kept_layer_free(k);
        return MHAVIZ_ENOMEM;
    }
    k->n_heads = H;
    measures_token_ids(tokens, T, ids);
    for (int h = 0; h < H; h++) {
        KeptHead *kh = &k->heads[h];
        kh->is_role = m[h].role < MEASURES_N_PATTERNS;
        kh->relation = kh->is_role ? (int)m[h].role : m[h].strongest;
        if (kh->relation < 0)
            continue;
        const MeasuresRole p = (MeasuresRole)kh->relation;
        const float *att_h = att + (size_t)h * map; /* (T, T) head h's map */
        for (int i = 0; i < T; i++) {
            if ((c->causal ? i + 1 : T) < 2)
                continue; /* one key: no choice, no relation */
            const float *a_i = att_h + (size_t)i * T; /* (T) head h's row i */
            if (measures_row_share(a_i, i, T, c->causal, ids, m[h].fixed_key, p) < MEASURES_SHOWN_SHARE ||
                !(measures_row_norm_entropy(a_i, c->causal ? i + 1 : T) < MEASURES_SHARP_BELOW))
                continue; /* not held, or not sharp enough to pull */
            kh->rows++;
            kh->kept += measures_row_share(wide + (size_t)i * T, i, T, c->causal, ids, m[h].fixed_key, p) >= MEASURES_SHOWN_SHARE;
        }
        k->rows += kh->rows;
        k->kept += kh->kept;
    }
    free(ids);
    return MHAVIZ_OK;
}

void kept_layer_free(KeptLayer *k)
{
    free(k->heads);
    memset(k, 0, sizeof *k);
}
