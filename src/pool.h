/* pool.h — share keys and values between query heads by mean-pooling K/V heads.
 *
 * Grouped-query attention (Ainslie et al. 2023, "GQA: Training Generalized
 * Multi-Query Transformer Models from Multi-Head Checkpoints") turns a
 * multi-head layer into one with fewer K/V heads by replacing each group of
 * K/V heads with their mean, then uptraining. mhaviz does the first step only,
 * so a class can see what sharing keys and values does to each head's map:
 *
 *   K/V head g' of the result = mean of input K/V heads g'*r .. g'*r + r-1,
 *   r = n_kv_heads / n_kv (the group size); query heads are untouched.
 *
 * Query head h used input K/V head h / (n_heads / n_kv_heads); it now uses
 * pooled head h / (n_heads / n_kv), the group that contains its old K/V head. */
#ifndef MHAVIZ_POOL_H
#define MHAVIZ_POOL_H

#include "input.h"

#include <stddef.h>

/* Pool the K/V projections of (c, w) in place into n_kv K/V heads:
 * W_k, W_v (d_model, kv_dim) and b_k, b_v (kv_dim) shrink to kv_dim =
 * n_kv * head_dim and c->n_kv_heads becomes n_kv. n_kv = c->n_kv_heads
 * leaves everything as it was. W_q, W_o and their biases are not touched.
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT when n_kv < 1 or n_kv does not divide
 * c->n_kv_heads (err says which values would), or MHAVIZ_ENOMEM (then
 * (c, w) are unchanged). The arrays stay owned by w. */
int pool_kv_heads(MhaConfig *c, MhaWeights *w, int n_kv, char *err, size_t errlen);

/* One line for the report saying that the input's n_from K/V heads were
 * pooled into n_to (and what that makes the layer: GQA or MQA). */
void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to);

#endif
