/* mha.h — the multi-head attention forward pass (mha.c), and the single
 * wide head built from the same projections (wide.c).
 *
 * project -> split into heads -> scores -> mask -> softmax -> mix values ->
 * concatenate -> output projection. Heads and query rows run in parallel
 * (OpenMP); every sum runs in a fixed order, so results do not depend on
 * the thread count. */
#ifndef MHAVIZ_MHA_H
#define MHAVIZ_MHA_H

#include "core/layer.h"

/* Everything the forward pass computes. Build with mha_state_build,
 * free with mha_state_free. */
typedef struct {
    float *q;      /* (T, d_model) queries; head h = columns [h*head_dim, (h+1)*head_dim) */
    float *k;      /* (T, kv_dim) keys; K/V head g = columns [g*head_dim, (g+1)*head_dim) */
    float *v;      /* (T, kv_dim) values, same split as k */
    float *kt;     /* (n_kv_heads, head_dim, T) K/V head g's keys transposed (scratch) */
    float *scores; /* (n_heads, T, T) q.k/sqrt(head_dim) before softmax; masked = 0; NULL unless kept */
    float *att;    /* (n_heads, T, T) softmax weights, row = query; masked = exactly 0 */
    float *concat; /* (T, d_model) head outputs side by side */
    float *out;    /* (T, d_model) concat W_o + b_o */
} MhaState;

/* Allocate the buffers for config c; keep_scores also keeps the pre-softmax
 * scores. Returns MHAVIZ_OK or MHAVIZ_ENOMEM (then *s holds nothing). */
int mha_state_build(MhaState *s, const MhaConfig *c, int keep_scores);

/* The same for the single wide head run by mha_forward_wide (wide:
 * mha_single_head_config of the layer): its att, concat, out and, with
 * keep_scores, scores; q, k, v and kt stay NULL, since its queries, keys
 * and values are the heads' own. */
int mha_state_build_wide(MhaState *s, const MhaConfig *wide, int keep_scores);

/* Free what mha_state_build or mha_state_build_wide allocated and zero *s.
 * Safe on a zeroed state. */
void mha_state_free(MhaState *s);

/* Run the forward pass of layer (c, w) on x (T, d_model) into s, on as
 * many threads as OpenMP would use (omp_set_num_threads, OMP_NUM_THREADS);
 * the same bits with any thread count. */
void mha_forward(const MhaConfig *c, const MhaWeights *w, const float *x, MhaState *s);

/* The single wide head of layer (c, w) from the heads' pass: heads holds
 * mha_forward(c, w, x, heads) and kept its scores (mha_state_build with
 * keep_scores), s was built by mha_state_build_wide for
 * mha_single_head_config(c).
 * The wide head's queries, keys and values are x times the weights
 * mha_single_head_weights builds, which are the heads' q, k and v with each
 * K/V head's columns repeated for the query heads that read it (the same
 * bits: each column is its own sum): so they are read in heads instead of
 * computed again, and its scores are the heads' scores added up
 * and divided by sqrt(n_heads) (wide.c says why; equal to the direct
 * definition up to float rounding). Softmax, the mixing and the output
 * projection (W_o and b_o of w) then run as in mha_forward. */
void mha_forward_wide(const MhaConfig *c, const MhaWeights *w, const MhaState *heads, MhaState *s);

/* The single wide head's shape and weights (wide.c). */

/* The shape of the single wide head for layer shape c: the same T, d_model
 * and mask, one head of width d_model (n_heads = n_kv_heads = 1). */
MhaConfig mha_single_head_config(const MhaConfig *c);

/* The single wide head built from the same parameters: one head of width
 * d_model whose query is all of q and whose key/value are the K/V head
 * columns laid out per query head (head h's block is K/V head g's block).
 * Fills *wide_cfg (n_heads = n_kv_heads = 1, head_dim = d_model) and *wide
 * (owned by the caller: free with mha_weights_free).
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int mha_single_head_weights(const MhaConfig *c, const MhaWeights *w,
                            MhaConfig *wide_cfg, MhaWeights *wide);

#endif
