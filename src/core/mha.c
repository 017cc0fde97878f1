/* mha.c — the multi-head attention forward pass, step by step.
 *
 * The steps, numbered so in the code below: 1. project x into q, k, v;
 * 2. rotate q and k by position (rotary models only); 3. split into heads;
 * 4. scores; 5. the causal mask (when the layer has one); 6. softmax;
 * 7. mix the values; 8. the heads' outputs side by side (concatenate);
 * 9. the output projection W_o.
 * The single wide head (mha_forward_wide, last) reads steps 1 and 2 in the
 * heads' pass and runs 3 to 7 in wide.c.
 *
 * Shapes use one notation throughout: (rows, cols), row-major; hd = head_dim.
 *   x      (T, d_model)        one hidden state per token
 *   q      (T, d_model)        = x W_q + b_q; head h owns columns [h*hd, (h+1)*hd)
 *   k, v   (T, kv_dim)         = x W_k + b_k, x W_v + b_v; K/V head g owns [g*hd, (g+1)*hd)
 *                              (q and k then rotated by position in place, when the layer has rope)
 *   kt     (n_kv_heads, hd, T) each K/V head's keys as columns (key j = column j)
 *   scores (n_heads, T, T)     q_ih . k_jg / sqrt(hd) before softmax, masked = 0 (when kept)
 *   att    (n_heads, T, T)     softmax weights, row i = query i, column j = key j
 *   concat (T, d_model)        head h's output in columns [h*hd, (h+1)*hd)
 *   out    (T, d_model)        = concat W_o + b_o
 *
 * Query head h reads K/V head g = h / (n_heads / n_kv_heads): g = h in MHA,
 * a group of query heads shares one g in GQA, g = 0 for all in MQA.
 *
 * Determinism: every number is one sum in a fixed order, whichever thread
 * computes it, so the results do not depend on the thread count.
 * How threads, BLIS and the instruction sets are used: docs/speed.md.
 */
#include "core/mha.h"
#include "core/mha_parts.h"
#include "core/matmul.h"
#include "core/parallel.h"
#include "core/rope.h"
#include "core/status.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static void rotate_by_position(float *m, int T, int cols, const MhaRope *rope);
MHA_CLONES static void attend(const MhaConfig *c, const MhaWeights *w, MhaState *s);

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

/* 3. (continued, for step 4) Lay K/V head g's keys out as columns:
 *    kt_g[e][j] = k_jg[e], kt_g (hd, T). Row e of kt_g is element e of
 *    every key, side by side in memory; step 4 reads it so. */
static void keys_as_columns(float *kt, const float *k, int T, int kv_dim, int hd, int g)
{
    float *kt_g = kt + (size_t)g * hd * T; /* (hd, T) */
    for (int j = 0; j < T; j++)
        for (int e = 0; e < hd; e++)
            kt_g[(size_t)e * T + j] = k[(size_t)j * kv_dim + g * hd + e];
}

/* 4. Scores: how well query i matches each key j it may see, the dot
 *    product q_ih . k_jg divided by sqrt(hd), for j = 0..n_visible-1.
 *    The textbook writes one dot product per key:
 *        for (j = 0; j < n_visible; j++) {
 *            dot = 0;
 *            for (e = 0; e < hd; e++)
 *                dot += q_ih[e] * k_jg[e];
 *            att_hi[j] = dot * scale;
 *        }
 *    This is the same loop turned inside out: for each element e, the term
 *    q_ih[e] * k_jg[e] of every key j is added to its key's sum, so every
 *    sum gets the same terms in the same order (e = 0, 1, ...) and the same
 *    bits. The inner loop now runs along row e of kt_g, over all keys at
 *    once, and the processor adds 4, 8 or 16 keys' terms in one instruction
 *    (SSE2, AVX2, AVX-512: MHA_CLONES in mha_parts.h).
 *    The textbook's loop cannot be vectorised without changing the order of
 *    its sum: docs/speed.md measures what it costs. */
static inline void score_keys(float *att_hi, const float *q_ih, const float *kt_g, int n_visible,
                              int T, int hd, float scale)
{
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
}

/* Steps 3 to 9 of the forward pass, from the projections in s->q, s->k,
 * s->v (steps 1 and 2, in mha_forward above). */
MHA_CLONES static void attend(const MhaConfig *c, const MhaWeights *w, MhaState *s)
{
    const int T = c->T, d_model = c->d_model, hd = c->head_dim;
    const int kv_dim = mha_kv_dim(c);
    const int kv_mul = c->n_heads / c->n_kv_heads; /* query heads per K/V head */
    const float scale = 1.0f / sqrtf((float)hd);
    const int threaded = (double)c->n_heads * T * T * hd >= PARALLEL_MIN_WORK;
    (void)threaded; /* read only by the OpenMP pragmas: unused without OpenMP */

    /* 3. Split into heads: head h reads its columns of q, and K/V head g's
     *    columns of k and v, g = h / kv_mul. The keys, once per K/V head, as
     *    columns for step 4 (keys_as_columns). */
#pragma omp parallel for if (threaded)
    for (int g = 0; g < c->n_kv_heads; g++)
        keys_as_columns(s->kt, s->k, T, kv_dim, hd, g);

    /* Every head and every query row is independent work: it writes its own
     * row of att and its own columns of concat. */
#pragma omp parallel for collapse(2) schedule(dynamic, 8) if (threaded)
    for (int h = 0; h < c->n_heads; h++) {
        for (int i = 0; i < T; i++) {
            const int g = h / kv_mul;                                 /* the K/V head h reads */
            const float *q_ih = s->q + (size_t)i * d_model + h * hd;  /* (hd) */
            const float *kt_g = s->kt + (size_t)g * hd * T;           /* (hd, T) */
            float *att_hi = s->att + ((size_t)h * T + i) * T;         /* (T) scores, then weights */
            float *out_ih = s->concat + (size_t)i * d_model + h * hd; /* (hd) */

            /* 4. Scores, q_ih . k_jg / sqrt(hd) (score_keys),
             * 5. for the keys the mask lets query i see: 0..n_visible-1
             *    (causal: itself and the tokens before it). Textbooks set the
             *    other scores to -infinity so that softmax gives them
             *    exp(-inf) = 0; here they are never computed, and written as
             *    exact zeros. The scores are kept for the pulls and --steps. */
            const int n_visible = mha_visible_keys(c->causal, i, T);
            score_keys(att_hi, q_ih, kt_g, n_visible, T, hd, scale);
            mha_keep_scores(s->scores, (size_t)h * T + i, att_hi, n_visible, T);

            /* 6. Softmax over the visible keys (mha_parts.h). */
            mha_softmax(att_hi, n_visible, T);

            /* 7. Mix the values: head h's output for token i is the mean of
             *    the values v_jg weighted by att_hi[j] (mha_parts.h). */
            mha_mix_values(out_ih, att_hi, n_visible, s->v + g * hd, kv_dim, hd);
        }
    }

    /* 8. Concatenate: the heads wrote their outputs side by side into concat.
     * 9. Output projection: mix what the heads found. */
    matmul_xw(s->out, s->concat, w->W_o, MATMUL_IN_OUT, w->b_o, T, d_model, d_model);
}

/* The single wide head, from the heads' pass: steps 3 to 7 in wide.c. */
void mha_forward_wide(const MhaConfig *c, const MhaWeights *w, const MhaState *heads, MhaState *s)
{
    /* 1. and 2. The projections, rotated: none to compute. The wide head's
     *    queries are the heads' q side by side, its keys and values their k
     *    and v with each K/V head's columns repeated for the query heads
     *    that read it: so its scores are the heads' scores summed and
     *    divided by sqrt(n_heads) (wide.c says why), and its values the
     *    heads' v, both read in the heads' state. */
    /* 3. to 7. One head of width d_model, from the heads' scores. */
    mha_attend_wide(c, heads, s);
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
