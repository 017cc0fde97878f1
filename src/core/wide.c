/* wide.c — the single wide head of a layer: one head of width d_model
 * built from the same parameters as the layer's heads (the lesson's
 * comparison), run from the heads' pass (mha_forward_wide, mha.c), or
 * built as weights of its own (mha_single_head_weights).
 *
 * Shapes, as in mha.c (hd = head_dim):
 *   heads->scores (n_heads, T, T)  the heads' scores, kept by mha_forward
 *   heads->v      (T, kv_dim)      the heads' values
 *   att           (T, T)           the wide head's softmax weights
 *   concat        (T, d_model)     its output (one head: d_model columns)
 */
#include "core/mha.h"
#include "core/mha_parts.h"
#include "core/parallel.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Steps 3 to 7 of the single wide head (step 3, the split, is none: one
 * head of width d_model), from the heads' pass (heads, of
 * layer shape c; it kept its scores) into s (of the wide head's shape).
 *
 * Why the wide head's scores are the heads' scores added up and divided by
 * sqrt(n_heads): its query q_i is the heads' queries q_ih side by side, and
 * its key k_j the heads' keys k_jg side by side, so its dot product is the
 * heads' dot products added up, q_i . k_j = sum over h of q_ih . k_jg. Each
 * head divided its own by sqrt(hd) (score_h = q_ih . k_jg / sqrt(hd)); the
 * wide head divides the sum by sqrt(d_model) = sqrt(n_heads) sqrt(hd). So
 *
 *     wide(i, j) = sum over h of score_h(i, j) / sqrt(n_heads),
 *
 * n_heads additions a cell instead of d_model multiply-adds: the lesson's
 * identity (core/pull.h). The two ways give the same number, rounded
 * differently in float (they differ by about 1e-7 of the scores;
 * tests/unit/check_mha.c compares them with the direct definition,
 * mha_single_head_weights run through mha_forward).
 *
 * Its values are v's columns repeated the same way, so the query heads that
 * share a K/V head get the same mixed values: each K/V head's are mixed once
 * and copied (the same sums, in the same order, as mixing each copy). */
MHA_CLONES static void attend_wide(const MhaConfig *c, const MhaState *heads, MhaState *s)
{
    const int T = c->T, H = c->n_heads, hd = c->head_dim, d_model = c->d_model;
    const int kv_dim = mha_kv_dim(c);
    const int kv_mul = H / c->n_kv_heads; /* query heads per K/V head */
    const float per_head = 1.0f / sqrtf((float)H);
    const int threaded = (double)T * T * (H + kv_dim) >= PARALLEL_MIN_WORK;
    (void)threaded; /* read only by the OpenMP pragma: unused without OpenMP */

#pragma omp parallel for schedule(dynamic, 8) if (threaded)
    for (int i = 0; i < T; i++) {
        const int n_visible = mha_visible_keys(c->causal, i, T);
        float *att_i = s->att + (size_t)i * T;          /* (T) scores, then weights */
        float *out_i = s->concat + (size_t)i * d_model; /* (d_model) */

        /* 4. and 5. Scores of the visible keys: the heads' scores added up,
         *    divided by sqrt(n_heads). */
        for (int j = 0; j < n_visible; j++)
            att_i[j] = 0.0f;
        for (int h = 0; h < H; h++) {
            const float *score_hi = heads->scores + ((size_t)h * T + i) * T; /* (T) */
            for (int j = 0; j < n_visible; j++)
                att_i[j] += score_hi[j];
        }
        for (int j = 0; j < n_visible; j++)
            att_i[j] *= per_head;
        mha_keep_scores(s->scores, (size_t)i, att_i, n_visible, T);

        /* 6. Softmax over the visible keys. */
        mha_softmax(att_i, n_visible, T);

        /* 7. Mix the values: K/V head g's into the columns of its first query
         *    head, then copied to the other query heads that read it. */
        for (int g = 0; g < c->n_kv_heads; g++) {
            float *out_ig = out_i + (size_t)g * kv_mul * hd; /* (hd) */
            mha_mix_values(out_ig, att_i, n_visible, heads->v + g * hd, kv_dim, hd);
            for (int m = 1; m < kv_mul; m++)
                memcpy(out_ig + (size_t)m * hd, out_ig, (size_t)hd * sizeof *out_ig);
        }
    }
}

/* A plain function around the versions of attend_wide: gcc lets no other
 * file call a function's target_clones versions. */
void mha_attend_wide(const MhaConfig *c, const MhaState *heads, MhaState *s) { attend_wide(c, heads, s); }

static float *copy_floats(const float *src, size_t n)
{
    float *dst = malloc(n * sizeof(float));
    if (dst)
        memcpy(dst, src, n * sizeof(float));
    return dst;
}

MhaConfig mha_single_head_config(const MhaConfig *c)
{
    MhaConfig wide = *c;
    wide.n_heads = 1;
    wide.n_kv_heads = 1;
    wide.head_dim = c->d_model;
    return wide;
}

/* Copy K/V head g's columns [g*hd, (g+1)*hd) of src (rows, kv_dim) into
 * query head h's columns of dst (rows, d_model), for every query head h. */
static void spread_kv_columns(float *dst, const float *src, int rows, const MhaConfig *c)
{
    const int hd = c->head_dim, kv_dim = mha_kv_dim(c), d_model = c->d_model;
    const int kv_mul = c->n_heads / c->n_kv_heads;
    for (int r = 0; r < rows; r++)
        for (int h = 0; h < c->n_heads; h++) {
            int g = h / kv_mul;
            memcpy(dst + (size_t)r * d_model + h * hd, src + (size_t)r * kv_dim + g * hd,
                   (size_t)hd * sizeof(float));
        }
}

int mha_single_head_weights(const MhaConfig *c, const MhaWeights *w,
                            MhaConfig *wide_cfg, MhaWeights *wide)
{
    const size_t d = (size_t)c->d_model;
    *wide_cfg = mha_single_head_config(c);

    memset(wide, 0, sizeof *wide);
    wide->has_bias = w->has_bias;
    wide->W_q = copy_floats(w->W_q, d * d);
    wide->W_o = copy_floats(w->W_o, d * d);
    wide->b_q = copy_floats(w->b_q, d);
    wide->b_o = copy_floats(w->b_o, d);
    wide->W_k = malloc(d * d * sizeof(float));
    wide->W_v = malloc(d * d * sizeof(float));
    wide->b_k = malloc(d * sizeof(float));
    wide->b_v = malloc(d * sizeof(float));
    if (!wide->W_q || !wide->W_o || !wide->b_q || !wide->b_o ||
        !wide->W_k || !wide->W_v || !wide->b_k || !wide->b_v) {
        mha_weights_free(wide);
        return MHAVIZ_ENOMEM;
    }
    /* K/V head g serves query heads g*kv_mul .. (g+1)*kv_mul-1: lay its
     * columns out once per query head, so the wide key/value has width d_model. */
    spread_kv_columns(wide->W_k, w->W_k, c->d_model, c);
    spread_kv_columns(wide->W_v, w->W_v, c->d_model, c);
    spread_kv_columns(wide->b_k, w->b_k, 1, c);
    spread_kv_columns(wide->b_v, w->b_v, 1, c);
    return MHAVIZ_OK;
}

