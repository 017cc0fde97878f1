/* pool.c — mean-pool K/V heads within each group (MHA -> GQA -> MQA). */
#include "pool.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>

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

int pool_kv_heads(MhaConfig *c, MhaWeights *w, int n_kv, char *err, size_t errlen)
{
    const int n_from = c->n_kv_heads, hd = c->head_dim, d_model = c->d_model;
    if (n_kv < 1 || n_kv > n_from || n_from % n_kv != 0) {
        char divisors[128];
        list_divisors(divisors, sizeof divisors, n_from);
        snprintf(err, errlen,
                 "the new number of K/V heads must divide the input's n_kv_heads = %d "
                 "(one of %s), got %d", n_from, divisors, n_kv);
        return MHAVIZ_EINPUT;
    }
    if (n_kv == n_from)
        return MHAVIZ_OK;

    const size_t kv_dim = (size_t)n_kv * hd;
    int rc = MHAVIZ_OK;
    float *W_k = malloc((size_t)d_model * kv_dim * sizeof(float)); /* (d_model, kv_dim) */
    float *W_v = malloc((size_t)d_model * kv_dim * sizeof(float)); /* (d_model, kv_dim) */
    float *b_k = malloc(kv_dim * sizeof(float));                   /* (kv_dim) */
    float *b_v = malloc(kv_dim * sizeof(float));                   /* (kv_dim) */
    if (!W_k || !W_v || !b_k || !b_v) {
        snprintf(err, errlen, "out of memory pooling K/V heads");
        rc = MHAVIZ_ENOMEM;
        goto cleanup;
    }
    pool_columns(W_k, w->W_k, d_model, hd, n_from, n_kv);
    pool_columns(W_v, w->W_v, d_model, hd, n_from, n_kv);
    pool_columns(b_k, w->b_k, 1, hd, n_from, n_kv);
    pool_columns(b_v, w->b_v, 1, hd, n_from, n_kv);

    /* Swap the pooled arrays in; the old ones are freed below. */
    float *tmp;
    tmp = w->W_k; w->W_k = W_k; W_k = tmp;
    tmp = w->W_v; w->W_v = W_v; W_v = tmp;
    tmp = w->b_k; w->b_k = b_k; b_k = tmp;
    tmp = w->b_v; w->b_v = b_v; b_v = tmp;
    c->n_kv_heads = n_kv;

cleanup:
    free(W_k);
    free(W_v);
    free(b_k);
    free(b_v);
    return rc;
}

void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to)
{
    const char *kind = n_to == 1 ? "multi-query attention (MQA)"
                     : n_to == n_heads ? "multi-head attention (MHA)"
                     : "grouped-query attention (GQA)";
    snprintf(buf, len,
             "converted on the fly (--kv-heads %d): the input's %d K/V heads were mean-pooled\n"
             "into %d, each the mean of %d (Ainslie et al. 2023, without uptraining): this is\n"
             "now %s.",
             n_to, n_from, n_to, n_from / n_to, kind);
}
