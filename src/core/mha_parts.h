/* mha_parts.h — what the heads' pass (mha.c) and the single wide head's
 * (wide.c) share: private to core/. The shared steps are static inline, so
 * that each is compiled into its caller's instruction-set versions
 * (MHA_CLONES; a function of another file would run in one version only). */
#ifndef MHAVIZ_MHA_PARTS_H
#define MHAVIZ_MHA_PARTS_H

#include "core/mha.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

/* The attention loops are compiled for AVX-512, AVX2 and SSE2 (x86-64's
 * minimum), and the processor's best runs; each version adds the same terms
 * in the same order (docs/speed.md). */
#define MHA_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

/* Keep row `row` of scores (rows, T), when scores are kept (not NULL): the
 * n_visible scores of att_row, then exact zeros for the masked keys. */
static inline void mha_keep_scores(float *scores, size_t row, const float *att_row, int n_visible,
                                   int T)
{
    if (!scores)
        return;
    float *scores_row = scores + row * T; /* (T) */
    memcpy(scores_row, att_row, (size_t)n_visible * sizeof *att_row);
    memset(scores_row + n_visible, 0, (size_t)(T - n_visible) * sizeof *att_row);
}

/* 6. Softmax of one row of scores, in place: row (T) holds the scores of
 *    the n_visible keys a query may see. Subtracting the largest score
 *    first keeps every exponent <= 0 (no overflow) and leaves the weights
 *    unchanged. Masked cells are written as exact zeros. */
static inline void mha_softmax(float *row, int n_visible, int T)
{
    float max = row[0];
    for (int j = 1; j < n_visible; j++)
        max = row[j] > max ? row[j] : max;
    float sum = 0.0f;
    for (int j = 0; j < n_visible; j++) {
        row[j] = expf(row[j] - max);
        sum += row[j];
    }
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f; /* sum >= 1 unless a score is NaN */
    for (int j = 0; j < n_visible; j++)
        row[j] *= inv;
    for (int j = n_visible; j < T; j++)
        row[j] = 0.0f;
}

/* 7. Mix the values: out (hd) = the sum over the n_visible keys j of
 *    att_row[j] v_j, where v_j = v + j * stride (hd) is key j's value;
 *    added in the order j = 0, 1, ... */
static inline void mha_mix_values(float *out, const float *att_row, int n_visible, const float *v,
                                  int stride, int hd)
{
    for (int e = 0; e < hd; e++)
        out[e] = 0.0f;
    for (int j = 0; j < n_visible; j++) {
        const float a = att_row[j];
        const float *v_j = v + (size_t)j * stride; /* (hd) */
        for (int e = 0; e < hd; e++)
            out[e] += a * v_j[e];
    }
}

/* Steps 3 to 7 of the single wide head (wide.c), from the heads' pass:
 * fills s->att, s->concat and, when kept, s->scores. mha_forward_wide
 * then projects concat (steps 8 and 9). */
void mha_attend_wide(const MhaConfig *c, const MhaState *heads, MhaState *s);

#endif
