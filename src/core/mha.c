/* mha.c — the multi-head attention forward pass, step by step.
 *
 * Shapes use one notation throughout: (rows, cols), row-major; hd = head_dim.
 *   x      (T, d_model)        one hidden state per token
 *   q      (T, d_model)        = x W_q + b_q; head h owns columns [h*hd, (h+1)*hd)
 *   k, v   (T, kv_dim)         = x W_k + b_k, x W_v + b_v; K/V head g owns [g*hd, (g+1)*hd)
 *                              (q and k then rotated by position in place, when the layer has rope)
 *   kt     (n_kv_heads, hd, T) each K/V head's keys transposed (key j = column j)
 *   att    (n_heads, T, T)     softmax weights, row i = query i, column j = key j
 *   concat (T, d_model)        head h's output in columns [h*hd, (h+1)*hd)
 *   out    (T, d_model)        = concat W_o + b_o
 *
 * Determinism: every number is one sum in a fixed order, whichever thread
 * computes it, so the results do not depend on the thread count.
 */
#include "core/mha.h"
#include "core/finite.h"
#include "core/matmul.h"
#include "core/parallel.h"
#include "core/rope.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* attend's and attend_wide's loops are compiled for three instruction sets (see attend). */
#define ATTEND_CLONES __attribute__((target_clones("arch=x86-64-v4", "arch=x86-64-v3", "default")))

static void rotate_by_position(float *m, int T, int cols, const MhaRope *rope);
ATTEND_CLONES static void attend(const MhaConfig *c, const MhaWeights *w, MhaState *s);

/* The forward pass: steps 1 and 2 here, steps 3 to 9 in attend, below. */
void mha_forward(const MhaConfig *c, const MhaWeights *w, const float *x, MhaState *s)
{
    const int T = c->T, d_model = c->d_model, kv_dim = mha_kv_dim(c);

    /* 1. Project every token into a query, a key and a value. */
    matmul_xw(s->q, x, w->W_q, MATMUL_IN_OUT, w->b_q, T, d_model, d_model);
    matmul_xw(s->k, x, w->W_k, MATMUL_IN_OUT, w->b_k, T, d_model, kv_dim);
    matmul_xw(s->v, x, w->W_v, MATMUL_IN_OUT, w->b_v, T, d_model, kv_dim);

    /* 2. Rotate q and k by position (rotary models only: Llama, Mistral,
     *    Qwen2; GPT-2 and the JSON inputs added positions into x instead). */
    if (c->rope.dim > 0) {
        rotate_by_position(s->q, T, d_model, &c->rope);
        rotate_by_position(s->k, T, kv_dim, &c->rope);
    }

    attend(c, w, s);
}

/* 2. Rotate q or k, m (T, cols), by position, one block of rope->dim
 *    columns (one head) at a time: in each block, column e and column
 *    e + dim/2 form a pair, which token t turns by the angle
 *    t * rope_frequency(e), as a point of the plane is turned:
 *        (x1, x2) -> (x1 cos - x2 sin, x2 cos + x1 sin).
 *    A query and a key turned so have a dot product that depends on how
 *    far apart their tokens are, not on where they are. Every head gets the
 *    same turns, so a wide head made of the turned heads side by side still
 *    adds their scores (mha_forward_wide). */
static void rotate_by_position(float *m, int T, int cols, const MhaRope *rope)
{
    const int half = rope->dim / 2;
    for (int e = 0; e < half; e++) {
        const double freq = rope_frequency(rope, e);
        for (int t = 0; t < T; t++) {
            const float cos_te = (float)cos(t * freq), sin_te = (float)sin(t * freq);
            for (int b = 0; b < cols; b += rope->dim) { /* block b: one head's columns */
                float *m_tb = m + (size_t)t * cols + b;  /* (dim) */
                const float x1 = m_tb[e], x2 = m_tb[e + half];
                m_tb[e] = x1 * cos_te - x2 * sin_te;
                m_tb[e + half] = x2 * cos_te + x1 * sin_te;
            }
        }
    }
}

/* 6. Softmax of one row of scores, in place: row (T) holds the scores of
 *    the n_visible keys a query may see. Subtracting the largest score
 *    first keeps every exponent <= 0 (no overflow) and leaves the weights
 *    unchanged. Masked cells are written as exact zeros. */
static void softmax(float *row, int n_visible, int T)
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

/* Steps 3 to 9 of the forward pass, from the projections in s->q, s->k,
 * s->v (steps 1 and 2, in mha_forward above). Compiled for three instruction sets,
 * AVX-512, AVX2 and SSE2, x86-64's minimum; the processor's best runs: at
 * T = 512, d_model 768 AVX2 takes the loops from 740 to 116 million
 * instructions a forward pass against SSE2 (callgrind). Each number is
 * still the same sum in the same order.
 * One function, long on purpose: the lesson's steps 3 to 9 read top to
 * bottom, each a short commented block. */
ATTEND_CLONES static void attend(const MhaConfig *c, const MhaWeights *w, MhaState *s)
{
    const int T = c->T, d_model = c->d_model, hd = c->head_dim;
    const int kv_dim = mha_kv_dim(c);
    const int kv_mul = c->n_heads / c->n_kv_heads; /* query heads per K/V head */
    const float scale = 1.0f / sqrtf((float)hd);
    const int threaded = (double)c->n_heads * T * T * hd >= PARALLEL_MIN_WORK;
    (void)threaded; /* read only by the OpenMP pragmas: unused without OpenMP */

    /* 3. Split into heads. Head h reads its columns of q and K/V head g's
     *    columns of k and v. Each K/V head's keys are laid out as columns
     *    (kt_g[e][j] = k_jg[e]), so that the scores of one query against
     *    all keys run along a row. */
#pragma omp parallel for if (threaded)
    for (int g = 0; g < c->n_kv_heads; g++) {
        float *kt_g = s->kt + (size_t)g * hd * T; /* (hd, T) */
        for (int j = 0; j < T; j++)
            for (int e = 0; e < hd; e++)
                kt_g[(size_t)e * T + j] = s->k[(size_t)j * kv_dim + g * hd + e];
    }

    /* Every head and every query row is independent work: it writes its own
     * row of att and its own columns of concat. */
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if (threaded)
    for (int h = 0; h < c->n_heads; h++) {
        for (int i = 0; i < T; i++) {
            int g = h / kv_mul;                                      /* the K/V head h reads */
            const float *q_ih = s->q + (size_t)i * d_model + h * hd; /* (hd) */
            const float *kt_g = s->kt + (size_t)g * hd * T;          /* (hd, T) */
            float *att_hi = s->att + ((size_t)h * T + i) * T;        /* (T) */
            float *out_ih = s->concat + (size_t)i * d_model + h * hd; /* (hd) */

            /* 4. Scores: how well query i matches key j, q_ih . k_jg / sqrt(hd),
             * 5. for the keys the mask lets it see: 0..n_visible-1 (causal:
             *    itself and the tokens before it). Textbooks set the other
             *    scores to -infinity so that softmax gives them exp(-inf) = 0;
             *    here they are never computed, and written as exact zeros.
             *    The textbook's loop is one dot product per key:
             *        for (int j = 0; j < n_visible; j++) {
             *            const float *k_jg = s->k + j * kv_dim + g * hd;
             *            float dot = 0.0f;
             *            for (int e = 0; e < hd; e++)
             *                dot += q_ih[e] * k_jg[e];
             *            att_hi[j] = dot * scale;
             *        }
             *    The loops below add the same terms in the same order (e = 0,
             *    1, ...), with the keys transposed (kt_g, step 3): element e
             *    of every key is one row, so the inner loop runs along memory
             *    over all keys at once. */
            const int n_visible = mha_visible_keys(c->causal, i, T);
            for (int j = 0; j < n_visible; j++)
                att_hi[j] = 0.0f;
            for (int e = 0; e < hd; e++) {
                const float q_ihe = q_ih[e];
                const float *kt_ge = kt_g + (size_t)e * T; /* (T) element e of every key */
                for (int j = 0; j < n_visible; j++)
                    att_hi[j] += q_ihe * kt_ge[j];
            }
            for (int j = 0; j < n_visible; j++)
                att_hi[j] *= scale;
            if (s->scores) { /* kept for the pulls and --steps; masked cells 0 */
                float *scores_hi = s->scores + ((size_t)h * T + i) * T;
                memcpy(scores_hi, att_hi, (size_t)n_visible * sizeof *att_hi);
                memset(scores_hi + n_visible, 0, (size_t)(T - n_visible) * sizeof *att_hi);
            }

            /* 6. Softmax over the visible keys (softmax above). */
            softmax(att_hi, n_visible, T);

            /* 7. Mix the values: head h's output for token i is the mean of
             *    the values v_jg weighted by att_hi[j]. */
            for (int e = 0; e < hd; e++)
                out_ih[e] = 0.0f;
            for (int j = 0; j < n_visible; j++) {
                const float a = att_hi[j];
                const float *v_jg = s->v + (size_t)j * kv_dim + g * hd; /* (hd) */
                for (int e = 0; e < hd; e++)
                    out_ih[e] += a * v_jg[e];
            }
        }
    }

    /* 8. Concatenate: the heads wrote their outputs side by side into concat.
     * 9. Output projection: mix what the heads found. */
    matmul_xw(s->out, s->concat, w->W_o, MATMUL_IN_OUT, w->b_o, T, d_model, d_model);
}

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
ATTEND_CLONES
static void attend_wide(const MhaConfig *c, const MhaState *heads, MhaState *s)
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
        float *att_i = s->att + (size_t)i * T;          /* (T) */
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
        if (s->scores) { /* kept for the pulls and --steps; masked cells 0 */
            float *scores_i = s->scores + (size_t)i * T;
            memcpy(scores_i, att_i, (size_t)n_visible * sizeof *att_i);
            memset(scores_i + n_visible, 0, (size_t)(T - n_visible) * sizeof *att_i);
        }

        /* 6. Softmax over the visible keys. */
        softmax(att_i, n_visible, T);

        /* 7. Mix the values: K/V head g's into the columns of its first query
         *    head, then copied to the other query heads that read it. */
        for (int g = 0; g < c->n_kv_heads; g++) {
            float *out_ig = out_i + (size_t)g * kv_mul * hd; /* (hd) */
            for (int e = 0; e < hd; e++)
                out_ig[e] = 0.0f;
            for (int j = 0; j < n_visible; j++) {
                const float a = att_i[j];
                const float *v_jg = heads->v + (size_t)j * kv_dim + g * hd; /* (hd) */
                for (int e = 0; e < hd; e++)
                    out_ig[e] += a * v_jg[e];
            }
            for (int m = 1; m < kv_mul; m++)
                memcpy(out_ig + (size_t)m * hd, out_ig, (size_t)hd * sizeof *out_ig);
        }
    }
}

void mha_forward_wide(const MhaConfig *c, const MhaWeights *w, const MhaState *heads, MhaState *s)
{
    /* 1. and 2. The projections, rotated: none to compute. The wide head's queries are the
     *    heads' q side by side, its keys and values their k and v with each
     *    K/V head's columns repeated for the query heads that read it: so
     *    its scores are the heads' scores summed, and its values the heads'
     *    v, both read in the heads' state. */
    /* 3. to 7. One head of width d_model, from the heads' scores. */
    attend_wide(c, heads, s);
    /* 8. and 9. Its output, concat (one head: its own output), projected. */
    matmul_xw(s->out, s->concat, w->W_o, MATMUL_IN_OUT, w->b_o, c->T, c->d_model, c->d_model);
}

/* The buffers of one pass; projections 0 leaves q, k, v and kt out. */
static int state_build(MhaState *s, const MhaConfig *c, int keep_scores, int projections)
{
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    const size_t maps = (size_t)c->n_heads * T * T;
    memset(s, 0, sizeof *s);
    if (projections) {
        s->q = malloc(T * d * sizeof(float));
        s->k = malloc(T * kv * sizeof(float));
        s->v = malloc(T * kv * sizeof(float));
        s->kt = malloc(kv * T * sizeof(float));
    }
    s->att = malloc(maps * sizeof(float));
    s->concat = malloc(T * d * sizeof(float));
    s->out = malloc(T * d * sizeof(float));
    if (keep_scores)
        s->scores = malloc(maps * sizeof(float));
    if ((projections && (!s->q || !s->k || !s->v || !s->kt)) || !s->att || !s->concat || !s->out ||
        (keep_scores && !s->scores)) {
        mha_state_free(s);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

int mha_state_build(MhaState *s, const MhaConfig *c, int keep_scores) { return state_build(s, c, keep_scores, 1); }

int mha_state_build_wide(MhaState *s, const MhaConfig *wide, int keep_scores)
{
    return state_build(s, wide, keep_scores, 0);
}

void mha_state_free(MhaState *s)
{
    free(s->q), free(s->k), free(s->v), free(s->kt);
    free(s->att), free(s->concat), free(s->out), free(s->scores);
    memset(s, 0, sizeof *s);
}

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
        if (!steps[k].m)
            continue; /* the wide head built from the heads keeps no q, k, v of its own */
        const size_t i = finite_first_bad(steps[k].m, steps[k].n);
        if (i == steps[k].n)
            continue;
        char place[128];
        const long row = (long)(i / steps[k].cols), col = (long)(i % steps[k].cols);
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
