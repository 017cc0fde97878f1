/* pool.c — pool K/V heads within each group (MHA -> GQA -> MQA): turn each
 * head toward its group's first (align.h), then average. */
#include "core/pool.h"
#include "core/align.h"
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
 * caller: plain means of w's K/V heads (w may hold them turned: align_heads).
 * n_kv must be valid (pool_check). Returns MHAVIZ_OK or MHAVIZ_ENOMEM
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

/* dst (rows, hd) = src (rows, hd) R for R (hd, hd), row-major, each sum in
 * double in order; src and dst read and written with strides (floats
 * between rows) ss and ds. */
static void turn_rows(float *dst, size_t ds, const float *src, size_t ss, int rows, int hd, const double *R)
{
    for (int p = 0; p < rows; p++)
        for (int j = 0; j < hd; j++) {
            double sum = 0.0;
            for (int i = 0; i < hd; i++)
                sum += (double)src[(size_t)p * ss + i] * R[(size_t)i * hd + j];
            dst[(size_t)p * ds + j] = (float)sum;
        }
}

/* M (hd, hd) = A_m^T A_f for A_x = (W; b) of K/V head x: W (d_model,
 * kv_dim) and b (kv_dim) stacked, head x's columns: its keys (or values) as
 * an affine map of x, the bias a row whose input is always 1. */
static void cross(double *M, const float *W, const float *b, int d_model, size_t kv_dim, int hd, int m, int f)
{
    for (int i = 0; i < hd; i++)
        for (int j = 0; j < hd; j++) {
            double sum = 0.0;
            for (int p = 0; p < d_model; p++)
                sum += (double)W[(size_t)p * kv_dim + (size_t)m * hd + i] * W[(size_t)p * kv_dim + (size_t)f * hd + j];
            sum += (double)b[(size_t)m * hd + i] * b[(size_t)f * hd + j];
            M[(size_t)i * hd + j] = sum;
        }
}

/* Turn the K/V heads of (c, w) toward their group's first head (group_of
 * (n_kv_heads): each K/V head's group): into t[0..6] = W_k, W_v (d_model,
 * kv_dim), b_k, b_v (kv_dim), W_q (d_model, d_model), b_q (d_model), W_o
 * (d_model, d_model), allocated here, owned by the caller. K/V head m of a
 * group whose first head is f != m: its keys by R = align_procrustes(A_m^T
 * A_f) of (W_k; b_k), the columns of its query heads' W_q, b_q by the same R
 * (their scores q R (k R)^T stay as they were); its values by U from (W_v;
 * b_v), W_O's rows of its query heads by U^T (their output v U U^T W_o
 * stays). Every other array is copied as it is. *a: what the turns found.
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM (t holds NULLs). */
static int align_heads(const MhaConfig *c, const MhaWeights *w, const int *group_of, float *t[7], PoolAlignment *a)
{
    const int H = c->n_heads, n_kv = c->n_kv_heads, hd = c->head_dim, d = c->d_model, per = H / n_kv;
    const size_t kv_dim = (size_t)n_kv * hd, dd = (size_t)d * d;
    const size_t len[7] = {(size_t)d * kv_dim, (size_t)d * kv_dim, kv_dim, kv_dim, dd, (size_t)d, dd};
    const float *from[7] = {w->W_k, w->W_v, w->b_k, w->b_v, w->W_q, w->b_q, w->W_o};
    double *M = malloc((size_t)hd * hd * sizeof *M); /* (hd, hd) A_m^T A_f */
    double *R = malloc((size_t)hd * hd * sizeof *R); /* (hd, hd) the turn */
    int rc = MHAVIZ_ENOMEM;
    for (int i = 0; i < 7; i++)
        if ((t[i] = malloc(len[i] * sizeof(float))))
            memcpy(t[i], from[i], len[i] * sizeof(float));
    *a = (PoolAlignment){1, 1, 1.0, -1, 0};
    for (int i = 0; i < 7; i++)
        if (!t[i])
            goto cleanup;
    if (!M || !R)
        goto cleanup;
    for (int m = 0; m < n_kv; m++) {
        int f = 0;
        while (group_of[f] != group_of[m])
            f++; /* the group's first head: the target, left as it is */
        if (f == m)
            continue;
        for (int values = 0; values <= 1; values++) {
            const float *W = values ? w->W_v : w->W_k, *b = values ? w->b_v : w->b_k;
            double ratio;
            cross(M, W, b, d, kv_dim, hd, m, f);
            if (align_procrustes(M, hd, R, &ratio) != 0)
                goto cleanup;
            /* the smallest ratio, the first one that is 0 within float error: a
             * turn of the heads changes only the rounding of those */
            if (ratio < a->ratio && a->ratio >= ALIGN_ZERO_RATIO)
                a->ratio = ratio, a->kv_head = m, a->values = values;
            /* The K/V head's own columns: (W; b) R. */
            turn_rows(t[values] + (size_t)m * hd, kv_dim, W + (size_t)m * hd, kv_dim, d, hd, R);
            turn_rows(t[2 + values] + (size_t)m * hd, 0, b + (size_t)m * hd, 0, 1, hd, R);
            for (int h = m * per; h < (m + 1) * per; h++) { /* the query heads that read it */
                if (!values) { /* W_q, b_q columns of head h: q R */
                    turn_rows(t[4] + (size_t)h * hd, (size_t)d, w->W_q + (size_t)h * hd, (size_t)d, d, hd, R);
                    turn_rows(t[5] + (size_t)h * hd, 0, w->b_q + (size_t)h * hd, 0, 1, hd, R);
                } else /* W_O's rows of head h: U^T W_o, column by column of W_o */
                    for (int col = 0; col < d; col++)
                        for (int j = 0; j < hd; j++) {
                            double sum = 0.0;
                            for (int i = 0; i < hd; i++)
                                sum += R[(size_t)i * hd + j] * w->W_o[((size_t)h * hd + i) * d + col];
                            t[6][((size_t)h * hd + j) * d + col] = (float)sum;
                        }
            }
        }
    }
    a->unique = a->ratio >= ALIGN_UNIQUE_RATIO;
    rc = MHAVIZ_OK;
cleanup:
    free(M), free(R);
    if (rc != MHAVIZ_OK)
        for (int i = 0; i < 7; i++)
            free(t[i]), t[i] = NULL;
    return rc;
}

/* Under POOL_ALIGNED, when shared (some group of group_of (n_kv_heads of
 * c) holds two heads or more): turn (c, w)'s heads (align_heads) into turned[], point
 * p->w's W_q, b_q, W_o at their turned copies (p owns them) and *src at a
 * view of w whose K/V arrays are the turned ones. Otherwise *src = *w.
 * Returns MHAVIZ_OK, or MHAVIZ_ENOMEM with err set; free turned[0..3] after
 * pooling (p->own[4..6] keep the rest). */
static int turn_if_aligned(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, const int *group_of, int shared,
                           PoolMethod method, MhaWeights *src, float *turned[7], char *err, size_t errlen)
{
    *src = *w;
    for (int i = 0; i < 7; i++)
        turned[i] = NULL;
    if (method != POOL_ALIGNED || !shared)
        return MHAVIZ_OK;
    if (align_heads(c, w, group_of, turned, &p->alignment) != MHAVIZ_OK) {
        snprintf(err, errlen, "out of memory aligning K/V heads (or LAPACK's SVD failed)");
        return MHAVIZ_ENOMEM;
    }
    src->W_k = turned[0], src->W_v = turned[1], src->b_k = turned[2], src->b_v = turned[3];
    p->own[4] = turned[4], p->own[5] = turned[5], p->own[6] = turned[6];
    p->w.W_q = turned[4], p->w.b_q = turned[5], p->w.W_o = turned[6];
    return MHAVIZ_OK;
}

int pool_layer(PooledLayer *p, const MhaConfig *c, const MhaWeights *w, int n_kv, PoolMethod method, char *err,
               size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = *c;
    p->w = *w;
    p->alignment = (PoolAlignment){0, 1, 1.0, -1, 0};
    int rc = pool_check(c, n_kv, err, errlen);
    if (rc != MHAVIZ_OK || n_kv == c->n_kv_heads)
        return rc;
    int *group_of = malloc((size_t)c->n_kv_heads * sizeof *group_of); /* (n_kv_heads) each K/V head's group */
    if (!group_of) {
        snprintf(err, errlen, "out of memory pooling K/V heads");
        return MHAVIZ_ENOMEM;
    }
    const int r = c->n_kv_heads / n_kv;
    for (int m = 0; m < c->n_kv_heads; m++)
        group_of[m] = m / r;
    MhaWeights src;
    float *turned[7];
    if ((rc = turn_if_aligned(p, c, w, group_of, 1, method, &src, turned, err, errlen)) == MHAVIZ_OK)
        rc = pool_arrays(c, &src, n_kv, p->own, err, errlen);
    for (int i = 0; i < 4; i++)
        free(turned[i]);
    free(group_of);
    if (rc != MHAVIZ_OK) {
        pool_layer_free(p);
        return rc;
    }
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
                       PoolMethod method, char *err, size_t errlen)
{
    memset(p, 0, sizeof *p);
    p->cfg = *c;
    p->w = *w;
    p->alignment = (PoolAlignment){0, 1, 1.0, -1, 0};
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
    MhaWeights src;
    float *turned[7];
    if (turn_if_aligned(p, c, w, group_of, n_groups < H, method, &src, turned, err, errlen) != MHAVIZ_OK) {
        pool_layer_free(p);
        return MHAVIZ_ENOMEM;
    }
    pool_grouped_columns(p->own[0], src.W_k, d, hd, H, group_of);
    pool_grouped_columns(p->own[1], src.W_v, d, hd, H, group_of);
    pool_grouped_columns(p->own[2], src.b_k, 1, hd, H, group_of);
    pool_grouped_columns(p->own[3], src.b_v, 1, hd, H, group_of);
    for (int i = 0; i < 4; i++)
        free(turned[i]);
    p->w.W_k = p->own[0], p->w.W_v = p->own[1], p->w.b_k = p->own[2], p->w.b_v = p->own[3];
    return MHAVIZ_OK;
}

void pool_layer_free(PooledLayer *p)
{
    for (int i = 0; i < 7; i++)
        free(p->own[i]);
    memset(p, 0, sizeof *p);
}

void pool_note(char *buf, size_t len, int n_heads, int n_from, int n_to, const char *groups, PoolMethod method,
               const PoolAlignment *a)
{
    const char *kind = n_to == 1 ? "multi-query attention (MQA)"
                     : n_to == n_heads ? "multi-head attention (MHA)"
                     : "grouped-query attention (GQA)";
    const char *mean = method == POOL_MEAN ? " --pool mean" : "";
    char from[32];
    if (n_from == n_heads)
        snprintf(from, sizeof from, "MHA");
    else
        snprintf(from, sizeof from, "%d K/V heads", n_from);
    int used;
    if (groups && groups[0])
        used = snprintf(buf, len, "pooled from %s, before uptraining (--kv-heads %d --kv-groups %s%s): the heads\n"
                        "of each group share one K/V head, the mean of theirs", from, n_to, groups, mean);
    else
        used = snprintf(buf, len, "pooled from %s, before uptraining (--kv-heads %d%s): the input's %d K/V heads\n"
                        "became %d, each the mean of %d", from, n_to, mean, n_from, n_to, n_from / n_to);
    if (used < (int)len)
        used += snprintf(buf + used, len - (size_t)used, "%s",
                         method == POOL_MEAN
                             ? " as their coordinates happen to lie. That depends on coordinates\n"
                               "inside each head, which mean nothing: turning a head's q and k together changes\n"
                               "none of its own maps, but changes this mean."
                             : ", after each head was turned toward its group's first\n"
                               "(orthogonal Procrustes on keys, then on values; its queries and W_O's rows turned\n"
                               "with it, so that its own map stays; Jin et al. 2025).");
    if (used < (int)len)
        used += snprintf(buf + used, len - (size_t)used,
                         " Ainslie et al. 2023 pool so, then uptrain; nothing\nwas trained here: this is %s, "
                         "untrained.", kind);
    if (used < (int)len && a->aligned && !a->unique) {
        char ratio[48];
        if (a->ratio < ALIGN_ZERO_RATIO)
            snprintf(ratio, sizeof ratio, "0 of the largest, within float error");
        else
            snprintf(ratio, sizeof ratio, "%.2g of the largest", a->ratio);
        snprintf(buf + used, len - (size_t)used,
                 "\nThe turn is not unique: K/V head %d's %s use fewer directions than head_dim\n"
                 "(smallest singular value %s), so this pooled result\n"
                 "is one of many: turning a head inside its own coordinates can change it.",
                 a->kv_head, a->values ? "values" : "keys", ratio);
    }
}
