/* mha.c — the multi-head attention forward pass, step by step.
 *
 * Shapes use one notation throughout: (rows, cols), row-major.
 *   x      (T, d_model)       one hidden state per token
 *   q      (T, d_model)       = x W_q + b_q; head h owns columns [h*hd, (h+1)*hd)
 *   k, v   (T, kv_dim)        = x W_k + b_k, x W_v + b_v; K/V head g owns [g*hd, (g+1)*hd)
 *   kt     (n_kv_heads, hd, T) each K/V head's keys transposed (one key per column);
 *                             rows padded to ldkt = kernels_padded_stride(T) floats
 *   att    (n_heads, T, T)    softmax weights, row i = query i, column j = key j
 *   concat (T, d_model)       head h's output in columns [h*hd, (h+1)*hd)
 *   out    (T, d_model)       = concat W_o + b_o
 *
 * The loops that do the arithmetic (matrix products, scores, value mixing)
 * live in kernels.c, each behind a name that says what it computes; they
 * give the same bits as the plain loops written in kernels.h.
 */
#include "mha.h"
#include "bigmem.h"
#include "kernels.h"
#include "status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Query rows per task of the attention loop: enough work per task to
 * amortise scheduling, small enough to balance the causal triangle. */
#define ROWS_PER_TASK 16

/* Steps 2 to 8 of the forward pass, from the projections in s->q, s->k, s->v. */
static void forward_from_qkv(const MhaConfig *c, const MhaWeights *w, MhaState *s);

void mha_forward(const MhaConfig *c, const MhaWeights *w, const float *x, MhaState *s)
{
    const int T = c->T, d_model = c->d_model, kv_dim = mha_kv_dim(c);

    /* 1. Project every token into queries, keys and values. */
    matmul_xw(s->q, x, w->W_q, w->b_q, T, d_model, d_model);
    matmul_xw(s->k, x, w->W_k, w->b_k, T, d_model, kv_dim);
    matmul_xw(s->v, x, w->W_v, w->b_v, T, d_model, kv_dim);

    forward_from_qkv(c, w, s);
}

void mha_forward_same_projections(const MhaConfig *c, const MhaWeights *w, const MhaState *heads,
                                  MhaState *s)
{
    const size_t n = (size_t)c->T * c->d_model; /* q, k and v are all (T, d_model) here */
    /* 1. The projections: the heads' own, bit for bit. */
    memcpy(s->q, heads->q, n * sizeof *s->q);
    memcpy(s->k, heads->k, n * sizeof *s->k);
    memcpy(s->v, heads->v, n * sizeof *s->v);
    forward_from_qkv(c, w, s);
}

static void forward_from_qkv(const MhaConfig *c, const MhaWeights *w, MhaState *s)
{
    const int T = c->T, d_model = c->d_model, hd = c->head_dim;
    const int kv_dim = mha_kv_dim(c);
    const int kv_mul = c->n_heads / c->n_kv_heads; /* query heads per K/V head */
    const float scale = 1.0f / sqrtf((float)hd);
    const int row_tasks = (T + ROWS_PER_TASK - 1) / ROWS_PER_TASK;
    const int ldkt = kernels_padded_stride(T);
    /* Threads only when it pays: the multiply-adds of the scores and the mixing. */
    const int threaded = 2.0 * c->n_heads * T * T * hd >= KERNELS_PARALLEL_MIN_WORK;
    (void)threaded; /* read only by the OpenMP pragmas: unused without OpenMP */

    /* 2. Split into heads: head h reads its slice of q and K/V head g's slices
     *    of k and v. The score kernel wants each K/V head's keys as columns. */
#pragma omp parallel for schedule(static) if (threaded)
    for (int g = 0; g < c->n_kv_heads; g++)
        transpose(s->kt + (size_t)g * hd * ldkt, ldkt, s->k + g * hd, kv_dim, T, hd);

    /* Each head, and within it each block of ROWS_PER_TASK query rows, is
     * independent work: it writes its own rows of att and its own columns
     * of concat. (For one head and one query row i, steps 3 to 6 are:
     *   scores[j] = q_ih . k_jg / sqrt(hd)    for the keys j that i may see
     *   att[j]    = softmax(scores)[j]        0 for the keys it may not
     *   out_ih    = sum_j att[j] * v_jg
     * the kernels do them for a block of rows at once.) */
#pragma omp parallel for collapse(2) schedule(dynamic) if (threaded)
    for (int h = 0; h < c->n_heads; h++) {
        for (int task = 0; task < row_tasks; task++) {
            const int g = h / kv_mul;
            const int i0 = task * ROWS_PER_TASK;
            const int i1 = i0 + ROWS_PER_TASK < T ? i0 + ROWS_PER_TASK : T;
            const float *q_h = s->q + h * hd;                  /* (T, hd), row stride d_model */
            const float *kt_g = s->kt + (size_t)g * hd * ldkt; /* (hd, T), row stride ldkt */
            const float *v_g = s->v + g * hd;                  /* (T, hd), row stride kv_dim */
            float *att_h = s->att + (size_t)h * T * T;         /* (T, T) */

            /* 3. Scores: how well query i matches each key j, scaled by 1/sqrt(hd).
             *    When causal, only keys j <= i are scored: the masked triangle
             *    is never computed. */
            attention_scores(att_h, T, q_h, d_model, kt_g, ldkt, T, hd, i0, i1, c->causal, scale);

            for (int i = i0; i < i1; i++) {
                /* 4. Mask: query i may see keys 0..n_visible-1 (causal: itself and
                 *    earlier tokens). Textbooks set the other scores to -infinity
                 *    so that the softmax gives them weight exp(-inf) = 0; here the
                 *    softmax simply stops at n_visible and writes exact zeros. */
                const int n_visible = c->causal ? i + 1 : T;
                float *att_hi = att_h + (size_t)i * T;
                if (s->scores) { /* keep the scores for the --steps pictures */
                    float *scores_hi = s->scores + ((size_t)h * T + i) * T;
                    memcpy(scores_hi, att_hi, (size_t)n_visible * sizeof *att_hi);
                    memset(scores_hi + n_visible, 0, (size_t)(T - n_visible) * sizeof *att_hi);
                }
                /* 5. Softmax: one distribution over the visible keys; masked cells = 0. */
                softmax_row(att_hi, n_visible, T);
            }

            /* 6. Mix values: head h's output for token i is the weighted mean of v_g. */
            attention_mix(s->concat + h * hd, d_model, att_h, T, v_g, kv_dim, T, hd, i0, i1, c->causal);
        }
    }

    /* 7. Concatenate (the heads wrote side by side into concat) and
     *    8. mix what the heads found with the output projection. */
    matmul_xw(s->out, s->concat, w->W_o, w->b_o, T, d_model, d_model);
}

/* Bytes of a slice of n floats in the state block, rounded up to whole
 * cache lines so that every slice starts on one. */
static size_t slice_bytes(size_t n)
{
    return (n * sizeof(float) + 63) / 64 * 64;
}

/* Under AddressSanitizer every buffer is its own allocation, so that an
 * overrun from one into the next is caught (in one block it would not be). */
#if defined(__SANITIZE_ADDRESS__)
#define STATE_ONE_BLOCK 0
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STATE_ONE_BLOCK 0
#endif
#endif
#ifndef STATE_ONE_BLOCK
#define STATE_ONE_BLOCK 1
#endif

int mha_state_build(MhaState *s, const MhaConfig *c, int keep_scores)
{
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    const size_t maps = (size_t)c->n_heads * T * T;
    const size_t kt = kv * (size_t)kernels_padded_stride(c->T);
    memset(s, 0, sizeof *s);
    /* One block: q, k, v, kt, att, concat, out, then scores when kept. */
    float **slice[8] = {&s->q, &s->k, &s->v, &s->kt, &s->att, &s->concat, &s->out, &s->scores};
    const size_t n[8] = {T * d, T * kv, T * kv, kt, maps, T * d, T * d, keep_scores ? maps : 0};
    if (!STATE_ONE_BLOCK) {
        for (int i = 0; i < 8; i++)
            if (n[i] && !(*slice[i] = bigmem_alloc(n[i] * sizeof(float)))) {
                mha_state_free(s);
                return MHAVIZ_ENOMEM;
            }
        return MHAVIZ_OK;
    }
    size_t total = 0;
    for (int i = 0; i < 8; i++)
        total += slice_bytes(n[i]);
    char *block = bigmem_alloc(total);
    if (!block)
        return MHAVIZ_ENOMEM;
    s->block = block;
    for (int i = 0; i < 8; i++) {
        *slice[i] = n[i] ? (float *)block : NULL;
        block += slice_bytes(n[i]);
    }
    return MHAVIZ_OK;
}

void mha_state_free(MhaState *s)
{
    if (s->block) {
        free(s->block);
    } else { /* built one buffer at a time (AddressSanitizer) */
        free(s->q), free(s->k), free(s->v), free(s->kt);
        free(s->att), free(s->concat), free(s->out), free(s->scores);
    }
    memset(s, 0, sizeof *s);
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

static float *copy_floats(const float *src, size_t n)
{
    float *dst = bigmem_alloc(n * sizeof(float));
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
    wide->W_k = bigmem_alloc(d * d * sizeof(float));
    wide->W_v = bigmem_alloc(d * d * sizeof(float));
    wide->b_k = bigmem_alloc(d * sizeof(float));
    wide->b_v = bigmem_alloc(d * sizeof(float));
    if (!wide->W_q || !wide->W_o || !wide->b_q || !wide->b_o ||
        !wide->W_k || !wide->W_v || !wide->b_k || !wide->b_v) {
        input_weights_free(wide);
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

int mha_single_head_layer(const MhaConfig *c, const MhaWeights *w, MhaConfig *wide_cfg,
                          MhaWeights *own, const MhaWeights **wide)
{
    memset(own, 0, sizeof *own);
    if (c->n_kv_heads == c->n_heads) { /* K/V head g = query head g: nothing to spread */
        *wide_cfg = mha_single_head_config(c);
        *wide = w;
        return MHAVIZ_OK;
    }
    *wide = own;
    return mha_single_head_weights(c, w, wide_cfg, own);
}

int mha_check_finite(const MhaConfig *c, const MhaState *s, const char *what, char *err,
                     size_t errlen)
{
    const int T = c->T, d_model = c->d_model, kv_dim = mha_kv_dim(c);
    /* The steps in the order they run: the first overflow is the cause. */
    const struct {
        const char *name;
        const float *m;
        size_t n;
        int cols;
    } steps[] = {
        {"q", s->q, (size_t)T * d_model, d_model},
        {"k", s->k, (size_t)T * kv_dim, kv_dim},
        {"v", s->v, (size_t)T * kv_dim, kv_dim},
        {"attention", s->att, (size_t)c->n_heads * T * T, T},
        {"the heads' concatenated output", s->concat, (size_t)T * d_model, d_model},
        {"the output", s->out, (size_t)T * d_model, d_model},
    };
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        const long i = kernels_first_nonfinite(steps[k].m, steps[k].n);
        if (i < 0)
            continue;
        char place[128];
        const long row = i / steps[k].cols, col = i % steps[k].cols;
        if (steps[k].m == s->att)
            snprintf(place, sizeof place, "the attention of head %ld, query %ld, key %ld "
                     "(its scores q.k overflowed)", row / T, row % T, col);
        else
            snprintf(place, sizeof place, "%s at token %ld, column %ld", steps[k].name, row, col);
        snprintf(err, errlen, "%s: the numbers overflow float32: %s is %s; "
                 "scale the weights or the inputs down", what, place,
                 isnan(steps[k].m[i]) ? "not a number" : "infinite");
        return MHAVIZ_EINPUT;
    }
    return MHAVIZ_OK;
}
