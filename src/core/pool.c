/* pool.c — mean-pool K/V heads within each group (MHA -> GQA -> MQA). */
#include "core/pool.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* dst (rows, n_kv * hd) = group means of src (rows, n_from * hd):
 * column g*hd + e of dst is the mean over m < r of column (g*r + m)*hd + e
 * of src, r = n_from / n_kv. Each mean is summed in double, in order of m. */
static void pool_columns(float *dst, const float *src, int rows, int hd, int n_from, int n_kv)
{
    const int r = n_from / n_kv;
    const size_t from_dim = (size_t)n_from * hd, to_dim = (size_t)n_kv * hd;
    for (int p = 0; p < rows; p++) {
        const float *src_p = src + (size_t)p * from_dim;
        float *dst_p = dst + (size_t)p * to_dim;
        for (int g = 0; g < n_kv; g++)
            for (int e = 0; e < hd; e++) {
                double sum = 0.0;
                for (int m = 0; m < r; m++)
                    sum += src_p[(size_t)(g * r + m) * hd + e];
                dst_p[(size_t)g * hd + e] = (float)(sum / r);
            }
    }
}

/* Divisors of n, as "1, 2, 4", into buf. */
static void list_divisors(char *buf, size_t len, int n)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int d = 1; d <= n && used < len; d++)
        if (n % d == 0)
            used += (size_t)snprintf(buf + used, len - used, used ? ", %d" : "%d", d);
}

/* The four pooled K/V arrays of (c, w) with n_kv K/V heads, into kv[0..3]
 * = W_k, W_v (d_model, n_kv * hd), b_k, b_v (n_kv * hd), owned by the
 * caller. n_kv must be valid (pool_check). Returns MHAVIZ_OK or MHAVIZ_ENOMEM
 * (then kv holds NULLs and err says so). */
static int pool_arrays(const MhaConfig *c, const MhaWeights *w, int n_kv, float *kv[4], char *err,
                       size_t errlen)
{
    const int n_from = c->n_kv_heads, hd = c->head_dim, d_model = c->d_model;
    const size_t kv_dim = (size_t)n_kv * hd;
    kv[0] = malloc((size_t)d_model * kv_dim * sizeof(float)); /* W_k (d_model, kv_dim) */
    kv[1] = malloc((size_t)d_model * kv_dim * sizeof(float)); /* W_v (d_model, kv_dim) */
    kv[2] = malloc(kv_dim * sizeof(float));                   /* b_k (kv_dim) */
    kv[3] = malloc(kv_dim * sizeof(float));                   /* b_v (kv_dim) */
    if (!kv[0] || !kv[1] || !kv[2] || !kv[3]) {
        for (int i = 0; i < 4; i++)
            free(kv[i]), kv[i] = NULL;
        snprintf(err, errlen, "out of memory pooling K/V heads");
        return MHAVIZ_ENOMEM;
    }
    pool_columns(kv[0], w->W_k, d_model, hd, n_from, n_kv);
    pool_columns(kv[1], w->W_v, d_model, hd, n_from, n_kv);
    pool_columns(kv[2], w->b_k, 1, hd, n_from, n_kv);
    pool_columns(kv[3], w->b_v, 1, hd, n_from, n_kv);
    return MHAVIZ_OK;
}

int pool_check(const MhaConfig *c, int n_kv, char *err, size_t errlen)
{
    const int n_from = c->n_kv_heads;
    if (n_kv >= 1 && n_kv <= n_from && n_from % n_kv == 0)
        return MHAVIZ_OK;
    char divisors[128];
    list_divisors(divisors, sizeof divisors, n_from);
    if (n_kv > n_from)
        snprintf(err, errlen, "%d is more K/V heads than the input has (n_kv_heads = %d; one of %s)", n_kv,
                 n_from, divisors);
    else
        snprintf(err, errlen,
                 "the new number of K/V heads must divide the input's n_kv_heads = %d "
                 "(one of %s), got %d", n_from, divisors, n_kv);
    return MHAVIZ_EINPUT;
}

int pool_kv_heads(MhaConfig *c, MhaWeights *w, int n_kv, char *err, size_t errlen)
{
    int rc = pool_check(c, n_kv, err, errlen);
    if (rc != MHAVIZ_OK || n_kv == c->n_kv_heads)
        return rc;
    float *kv[4];
    if ((rc = pool_arrays(c, w, n_kv, kv, err, errlen)) != MHAVIZ_OK)
        return rc;
    free(w->W_k), free(w->W_v), free(w->b_k), free(w->b_v);
    w->W_k = kv[0], w->W_v = kv[1], w->b_k = kv[2], w->b_v = kv[3];
    c->n_kv_heads = n_kv;
    return MHAVIZ_OK;
}

int pool_layer(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, int n_kv, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = *c;
    p->w = *w;
    int rc = pool_check(c, n_kv, err, errlen);
    if (rc != MHAVIZ_OK || n_kv == c->n_kv_heads)
        return rc;
    if ((rc = pool_arrays(c, w, n_kv, p->own, err, errlen)) != MHAVIZ_OK)
        return rc;
    p->w.W_k = p->own[0], p->w.W_v = p->own[1], p->w.b_k = p->own[2], p->w.b_v = p->own[3];
    p->cfg.n_kv_heads = n_kv;
    return MHAVIZ_OK;
}

/* dst (rows, n * hd) = src (rows, n * hd) with block h replaced by the
 * mean of the blocks of h's group (group_of, n heads), in head order. */
static void pool_grouped_columns(float *dst, const float *src, int rows, int hd, int n, const int *group_of)
{
    const size_t dim = (size_t)n * hd;
    for (int p = 0; p < rows; p++)
        for (int h = 0; h < n; h++)
            for (int e = 0; e < hd; e++) {
                double sum = 0.0;
                int members = 0;
                for (int m = 0; m < n; m++)
                    if (group_of[m] == group_of[h]) {
                        sum += src[(size_t)p * dim + (size_t)m * hd + e];
                        members++;
                    }
                dst[(size_t)p * dim + (size_t)h * hd + e] = (float)(sum / members);
            }
}

int pool_layer_grouped(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, const int *group_of, int n_groups,
                       char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = *c;
    p->w = *w;
    const int H = c->n_heads, hd = c->head_dim, d = c->d_model;
    if (c->n_kv_heads != H || n_groups < 1 || H % n_groups != 0) {
        snprintf(err, errlen, "K/V groups need a multi-head layer (n_kv_heads = n_heads = %d), in groups "
                 "of one size", H);
        return MHAVIZ_EINPUT;
    }
    const size_t kv_dim = (size_t)H * hd;
    p->own[0] = malloc((size_t)d * kv_dim * sizeof(float)); /* W_k (d_model, n_heads * hd) */
    p->own[1] = malloc((size_t)d * kv_dim * sizeof(float)); /* W_v (d_model, n_heads * hd) */
    p->own[2] = malloc(kv_dim * sizeof(float));             /* b_k (n_heads * hd) */
    p->own[3] = malloc(kv_dim * sizeof(float));             /* b_v (n_heads * hd) */
    if (!p->own[0] || !p->own[1] || !p->own[2] || !p->own[3]) {
        pool_layer_free(p);
        snprintf(err, errlen, "out of memory pooling K/V heads");
        return MHAVIZ_ENOMEM;
    }
    pool_grouped_columns(p->own[0], w->W_k, d, hd, H, group_of);
    pool_grouped_columns(p->own[1], w->W_v, d, hd, H, group_of);
    pool_grouped_columns(p->own[2], w->b_k, 1, hd, H, group_of);
    pool_grouped_columns(p->own[3], w->b_v, 1, hd, H, group_of);
    p->w.W_k = p->own[0], p->w.W_v = p->own[1], p->w.b_k = p->own[2], p->w.b_v = p->own[3];
    return MHAVIZ_OK;
}

void pool_layer_free(PooledLayer *p)
{
    for (int i = 0; i < 4; i++)
        free(p->own[i]);
    memset(p, 0, sizeof *p);
}

void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to, const char *groups)
{
    const char *kind = n_to == 1 ? "multi-query attention (MQA)"
                     : n_to == n_heads ? "multi-head attention (MHA)"
                     : "grouped-query attention (GQA)";
    if (groups && groups[0])
        snprintf(buf, len,
                 "converted on the fly (--kv-heads %d --kv-groups %s): the heads of each group\n"
                 "share one K/V head, the mean of theirs (Ainslie et al. 2023, without uptraining):\n"
                 "this is now %s.",
                 n_to, groups, kind);
    else
        snprintf(buf, len,
                 "converted on the fly (--kv-heads %d): the input's %d K/V heads were mean-pooled\n"
                 "into %d, each the mean of %d (Ainslie et al. 2023, without uptraining): this is\n"
                 "now %s.",
                 n_to, n_from, n_to, n_from / n_to, kind);
}
