/* pool.h — share keys and values between query heads by pooling K/V heads.
 *
 * Grouped-query attention (Ainslie et al. 2023, "GQA: Training Generalized
 * Multi-Query Transformer Models from Multi-Head Checkpoints") turns a
 * multi-head layer into one with fewer K/V heads by replacing each group of
 * K/V heads with their mean, then uptraining. mhaviz does the first step only
 * (pooled from MHA, before uptraining), so a class can see what sharing keys
 * and values does to each head's map:
 *
 *   K/V head g' of the result = mean of input K/V heads g'*r .. g'*r + r-1,
 *   r = n_kv_heads / n_kv (the group size).
 *
 * A head's coordinates are arbitrary (align.h), so a plain mean of two
 * heads' keys depends on coordinates that mean nothing: POOL_MEAN. By
 * default (POOL_ALIGNED) each K/V head is first turned toward its group's
 * first head, its keys by the orthogonal R that brings its (W_k; b_k) closest
 * to the first head's, its values likewise by U on (W_v; b_v), and its query
 * heads' W_q, b_q columns by the same R, W_O's rows of its query heads by
 * U's transpose: every head's own map and output stay as they were, and the
 * mean no longer depends on how any head's coordinates were drawn. The
 * group's first head is the target (not an iterated common mean): one
 * Procrustes per head, and the first head's keys are kept as they are.
 *
 * Query head h used input K/V head h / (n_heads / n_kv_heads); it now uses
 * pooled head h / (n_heads / n_kv), the group that contains its old K/V head. */
#ifndef MHAVIZ_POOL_H
#define MHAVIZ_POOL_H

#include "core/layer.h"

#include <stddef.h>

/* How a group's K/V heads become one. */
typedef enum {
    POOL_ALIGNED, /* turn each head toward its group's first head, then average (the default) */
    POOL_MEAN     /* average the heads as their coordinates happen to lie (--pool mean) */
} PoolMethod;

/* What the alignment of a pooling found. */
typedef struct {
    int aligned;  /* 1 when heads were turned before the mean (POOL_ALIGNED, a group of two or more) */
    int unique;   /* 1 when every turn was unique (align.h): then the result does not depend on any
                   * head's coordinates */
    double ratio; /* the smallest singular-value ratio of the turns (align_procrustes; 1 when none;
                   * the first below ALIGN_ZERO_RATIO, 0 within float error, when some are) */
    int kv_head;  /* the input K/V head of that turn, -1 when none was made */
    int values;   /* 1: that turn was of its values, 0: of its keys */
} PoolAlignment;

/* MHAVIZ_OK when (c) can be pooled into n_kv K/V heads: 1 <= n_kv <=
 * c->n_kv_heads and n_kv divides it. Else MHAVIZ_EINPUT and err names n_kv
 * and the counts that would do ("3 is more K/V heads than the input has
 * (n_kv_heads = 2; one of 1, 2)"). */
int pool_check(const MhaConfig *c, int n_kv, char *err, size_t errlen);

/* Mean-pool (POOL_MEAN) the K/V projections of (c, w) in place into n_kv K/V heads:
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
    MhaWeights w;  /* W_k, W_v, b_k, b_v: own[0..3] (pooled), or the input's when n_kv is the input's
                    * n_kv_heads; W_q, b_q, W_o: own[4..6] when heads were turned, else the input's
                    * (borrowed, as b_o always is) */
    float *own[7]; /* W_k, W_v (d_model, kv_dim), b_k, b_v (kv_dim) pooled; W_q (d_model, d_model),
                    * b_q (d_model), W_o (d_model, d_model) turned; or NULLs */
    PoolAlignment alignment; /* what turning the heads found (aligned 0 under POOL_MEAN) */
} PooledLayer;

/* Build *p from (c, w) pooled into n_kv K/V heads by method; under
 * POOL_MEAN the same numbers pool_kv_heads gives, bit for bit; (c, w) are
 * not changed and must outlive *p. Returns as pool_kv_heads does, or
 * MHAVIZ_ENOMEM when the SVD fails; on success free *p with pool_layer_free
 * (safe on a zeroed or failed one). */
int pool_layer(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, int n_kv, PoolMethod method, char *err,
               size_t errlen);
void pool_layer_free(PooledLayer *p);

/* Build *p from the multi-head layer (c, w) (n_kv_heads = n_heads) with
 * its K/V heads shared as group_of (n_heads) says: the heads of group k
 * share one K/V head, the mean of theirs (summed in double in head order;
 * turned toward the group's first head before, under POOL_ALIGNED),
 * n_groups groups of the same size. For the forward pass each query head
 * keeps a K/V block of its own (p->cfg.n_kv_heads = n_heads), a copy of its
 * group's mean: the same keys and values as one shared K/V head per group,
 * whichever heads a group holds (mha.c maps head h to K/V head h / (n_heads
 * / n_kv_heads), which holds only for groups of neighbours). Returns
 * MHAVIZ_OK, MHAVIZ_EINPUT (not a multi-head layer) or MHAVIZ_ENOMEM; free
 * *p with pool_layer_free. */
int pool_layer_grouped(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, const int *group_of, int n_groups,
                       PoolMethod method, char *err, size_t errlen);

/* One line for the report saying that the input's n_from K/V heads were
 * pooled into n_to (and what that makes the layer: GQA or MQA), how
 * (method, and what the alignment a found); groups: the heads that share,
 * as --kv-groups writes them, or "" for neighbours. */
void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to, const char *groups, PoolMethod method,
               const PoolAlignment *a);

#endif
