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

#include "core/layer.h"

#include <stddef.h>

/* MHAVIZ_OK when (c) can be pooled into n_kv K/V heads: 1 <= n_kv <=
 * c->n_kv_heads and n_kv divides it. Else MHAVIZ_EINPUT and err names n_kv
 * and the counts that would do ("3 is more K/V heads than the input has
 * (n_kv_heads = 2; one of 1, 2)"). */
int pool_check(const MhaConfig *c, int n_kv, char *err, size_t errlen);

/* Pool the K/V projections of (c, w) in place into n_kv K/V heads:
 * W_k, W_v (d_model, kv_dim) and b_k, b_v (kv_dim) shrink to kv_dim =
 * n_kv * head_dim and c->n_kv_heads becomes n_kv. n_kv = c->n_kv_heads
 * leaves everything as it was. W_q, W_o and their biases are not touched.
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT when pool_check refuses n_kv (err says
 * why), or MHAVIZ_ENOMEM (then (c, w) are unchanged). The arrays stay owned by w,
 * and w must own them (malloc'd: it frees the old K/V arrays), so never a
 * loaded input's weights, which may be mapped from files (pool_layer). */
int pool_kv_heads(MhaConfig *c, MhaWeights *w, int n_kv, char *err, size_t errlen);

/* A layer with n_kv K/V heads made from another, which stays as it was. */
typedef struct {
    MhaConfig cfg; /* the input's, with n_kv_heads = n_kv */
    MhaWeights w;  /* W_q, W_o, b_q, b_o: the input's arrays (borrowed); W_k, W_v, b_k, b_v:
                    * own[] (pooled), or the input's when n_kv is the input's n_kv_heads */
    float *own[4]; /* the pooled W_k, W_v (d_model, kv_dim), b_k, b_v (kv_dim), or NULLs */
} PooledLayer;

/* Build *p from (c, w) pooled into n_kv K/V heads, with the same numbers
 * pool_kv_heads gives, bit for bit; (c, w) are not changed and must outlive
 * *p. Returns as pool_kv_heads does; on success free *p with pool_layer_free
 * (safe on a zeroed or failed one). */
int pool_layer(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, int n_kv, char *err, size_t errlen);
void pool_layer_free(PooledLayer *p);

/* Build *p from the multi-head layer (c, w) (n_kv_heads = n_heads) with
 * its K/V heads shared as group_of (n_heads) says: the heads of group k
 * share one K/V head, the mean of theirs (summed in double in head order),
 * n_groups groups of the same size. For the forward pass each query head
 * keeps a K/V block of its own (p->cfg.n_kv_heads = n_heads), a copy of its
 * group's mean: the same keys and values as one shared K/V head per group,
 * whichever heads a group holds (mha.c maps head h to K/V head h / (n_heads
 * / n_kv_heads), which holds only for groups of neighbours). Returns
 * MHAVIZ_OK, MHAVIZ_EINPUT (not a multi-head layer) or MHAVIZ_ENOMEM; free
 * *p with pool_layer_free. */
int pool_layer_grouped(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, const int *group_of, int n_groups,
                       char *err, size_t errlen);

/* One line for the report saying that the input's n_from K/V heads were
 * pooled into n_to (and what that makes the layer: GQA or MQA); groups:
 * the heads that share, as --kv-groups writes them, or "" for neighbours. */
void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to, const char *groups);

#endif
