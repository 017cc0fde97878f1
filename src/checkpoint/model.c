/* model.c — GPT-2 and Llama-family blocks, run up to the layer shown,
 * in the manner of llama2.c's run.c: a config (model_config.h), the
 * weights as tensors of the mapped checkpoint (safetensors.h), a layer's
 * weights converted to floats one layer at a time, and a run state whose
 * buffers every layer reuses.
 *
 * Shapes: T tokens, d = d_model, ff = the MLP's hidden width.
 *   h    (T, d)  the residual stream: the embeddings, plus each block's outputs
 *   x    (T, d)  a norm of h: what the attention or the MLP reads
 *   ff_a (T, ff) the MLP's hidden units (GPT-2: c_fc; Llama: gate)
 *   ff_b (T, ff) Llama's up projection
 */
#include "checkpoint/model.h"
#include "checkpoint/model_config.h"
#include "checkpoint/safetensors.h"
#include "checkpoint/tokenizer.h"
#include "core/big_alloc.h"
#include "core/matmul.h"
#include "core/memory.h"
#include "core/mha.h"
#include "core/parallel.h"
#include "core/status.h"
#include "io/input.h"

#include <blis.h>
#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One layer's weights as floats, "x@W" layout: (in, out). */
typedef struct {
    MhaWeights attn;     /* W_q (d, d), W_k and W_v (d, kv_dim), W_o (d, d) and the biases (zeros when none) */
    float *norm1, *norm1_b; /* (d) ln_1 / input_layernorm: scale; GPT-2's shift */
    float *norm2, *norm2_b; /* (d) ln_2 / post_attention_layernorm */
    /* GPT-2's MLP as floats, stored (in, out) as its Conv1D is: */
    float *fc, *fc_b;    /* c_fc (d, ff) and (ff) */
    float *proj, *proj_b; /* c_proj (ff, d) and (d) */
    /* Llama's MLP (no biases) left in the mapped checkpoint, each Linear
     * (out, in) converted block by block as the product reads it
     * (matmul_rows): 83% of a layer's weights, never converted whole. */
    const StTensor *gate, *up; /* (ff, d) */
    const StTensor *down;      /* (d, ff) */
    MatmulScratch rows;  /* the blocks of rows converted (core/matmul.h) */
    float *raw;          /* GPT-2's c_attn as stored, before it is split */
} LayerWeights;

/* The buffers of a run, reused by every layer. */
typedef struct {
    float *h;      /* (T, d) */
    float *x;      /* (T, d) */
    float *ff_a;   /* (T, ff) */
    float *ff_b;   /* (T, ff) */
    MhaState att;  /* the attention's buffers (core/mha.h) */
} RunState;

/* The checkpoint open: what every function below reads. */
typedef struct {
    ModelConfig c;
    Safetensors st;
    const char *dir;
    const char *prefix; /* "", "transformer." or "model.": how its tensors are named */
    char *err;
    size_t errlen;
} Model;

/* The tensor named by fmt (after the prefix), whose shape must be (rows,
 * cols), or (rows) when cols is 0; fields names the config.json fields the
 * shape comes from, for the message. NULL with err set when it is missing
 * or its shape is not that. */
static const StTensor *tensor(Model *m, long long rows, long long cols, const char *fields, const char *fmt, ...)
{
    char name[256], full[300];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(name, sizeof name, fmt, ap);
    va_end(ap);
    snprintf(full, sizeof full, "%s%s", m->prefix, name);
    const StTensor *t = safetensors_find(&m->st, full);
    if (!t) {
        snprintf(m->err, m->errlen, "%s: the checkpoint has no tensor '%s'", m->dir, full);
        return NULL;
    }
    const int n_dims = cols ? 2 : 1;
    if (t->n_dims != n_dims || t->shape[0] != rows || (cols && t->shape[1] != cols)) {
        char got[128] = "";
        for (int i = 0; i < t->n_dims; i++)
            snprintf(got + strlen(got), sizeof got - strlen(got), "%s%lld", i ? ", " : "", t->shape[i]);
        if (cols)
            snprintf(m->err, m->errlen, "%s: tensor '%s' has shape (%s); config.json's %s give (%lld, %lld)", t->file,
                     full, got, fields, rows, cols);
        else
            snprintf(m->err, m->errlen, "%s: tensor '%s' has shape (%s); config.json's %s give (%lld)", t->file, full,
                     got, fields, rows);
        return NULL;
    }
    return t;
}

/* Tensor t as floats into dst, all of it. */
static int load(Model *m, const StTensor *t, float *dst)
{
    return safetensors_floats(t, 0, (size_t)t->count, dst, m->err, m->errlen);
}

/* A weight (rows, cols) of the checkpoint read a block of rows at a time,
 * from several threads at once (core/matmul.h's MatmulRowsFn). */
typedef struct {
    Model *m;
    const StTensor *t;
    int cols;
    int first_bad; /* the first row of the first block that failed (none: the tensor's rows) */
} RowReader;

static RowReader row_reader(Model *m, const StTensor *t)
{
    return (RowReader){m, t, (int)t->shape[1], (int)t->shape[0]};
}

/* dst (count, cols) = rows [first, first + count) as floats; the message of
 * the first block (in the tensor's order) that fails goes into m->err. */
static int read_rows(void *ctx, int first, int count, float *dst)
{
    RowReader *r = ctx;
    char err[512];
    const int rc = safetensors_floats(r->t, (size_t)first * r->cols, (size_t)count * r->cols, dst, err, sizeof err);
    if (rc != MHAVIZ_OK) {
#pragma omp critical(model_read_rows)
        if (first < r->first_bad) {
            r->first_bad = first;
            snprintf(r->m->err, r->m->errlen, "%s", err);
        }
    }
    return rc;
}

/* Rows of a Linear's weight converted, then transposed, by one thread at a
 * time: in tiles of TILE x TILE, so that the band read and the rows of dst
 * written stay in the cache (at 2048 x 2048 here: 51 ms element by element,
 * 19 ms in tiles of 16; tiles of 32 were no faster, their 32 rows of dst,
 * 8 KB apart, share one cache set). */
#define TILE 16

/* A Linear's weight, named by name, of shape (out, in), into dst (in, out),
 * the "x@W" layout of core/layer.h: bands of TILE rows, each converted into
 * the thread's slot of lw->rows and written transposed from there; the
 * bands are shared out among threads (disjoint columns of dst). */
static int load_linear(Model *m, LayerWeights *lw, float *dst, int out, int in, const char *fields, const char *name,
                       int layer)
{
    const StTensor *t = tensor(m, out, in, fields, name, layer);
    if (!t)
        return MHAVIZ_EINPUT;
    RowReader r = row_reader(m, t);
    const int threaded = (size_t)out * in >= PARALLEL_MIN_CELLS && lw->rows.slots > 1;
#pragma omp parallel for schedule(static) if (threaded) num_threads(lw->rows.slots)
    for (int r0 = 0; r0 < out; r0 += TILE) {
        const int n = out - r0 < TILE ? out - r0 : TILE;
        float *band = matmul_scratch_slot(&lw->rows); /* (n, in): rows r0.. of the weight */
        if (read_rows(&r, r0, n, band) != MHAVIZ_OK)
            continue;
        for (int c0 = 0; c0 < in; c0 += TILE)
            for (int c = c0; c < in && c < c0 + TILE; c++)
                for (int i = 0; i < n; i++)
                    dst[(size_t)c * out + r0 + i] = band[(size_t)i * in + c];
    }
    return r.first_bad < out ? MHAVIZ_EINPUT : MHAVIZ_OK;
}

/* A vector of n named by name into dst. */
static int load_vector(Model *m, float *dst, int n, const char *fields, const char *name, int layer)
{
    const StTensor *t = tensor(m, n, 0, fields, name, layer);
    return t && load(m, t, dst) == MHAVIZ_OK ? MHAVIZ_OK : MHAVIZ_EINPUT;
}

/* Columns [from, from + n) of src (rows, cols) into dst (rows, n). */
static void columns(float *dst, const float *src, int rows, int cols, int from, int n)
{
    for (int r = 0; r < rows; r++)
        memcpy(dst + (size_t)r * n, src + (size_t)r * cols + from, (size_t)n * sizeof *dst);
}

/* GPT-2's layer l: Conv1D weights are stored (in, out) already, and c_attn
 * holds W_q, W_k and W_v side by side, (d, 3d). */
static int load_gpt2_layer(Model *m, int l, LayerWeights *lw)
{
    const int d = m->c.d_model, ff = m->c.d_ff;
    MhaWeights *a = &lw->attn;
    const StTensor *t;
    if (!(t = tensor(m, d, 3 * d, "n_embd (n_embd, 3 n_embd)", "h.%d.attn.c_attn.weight", l)) ||
        load(m, t, lw->raw) != MHAVIZ_OK)
        return MHAVIZ_EINPUT;
    columns(a->W_q, lw->raw, d, 3 * d, 0, d);
    columns(a->W_k, lw->raw, d, 3 * d, d, d);
    columns(a->W_v, lw->raw, d, 3 * d, 2 * d, d);
    if (!(t = tensor(m, 3 * d, 0, "n_embd (3 n_embd)", "h.%d.attn.c_attn.bias", l)) || load(m, t, lw->raw) != MHAVIZ_OK)
        return MHAVIZ_EINPUT;
    memcpy(a->b_q, lw->raw, (size_t)d * sizeof(float));
    memcpy(a->b_k, lw->raw + d, (size_t)d * sizeof(float));
    memcpy(a->b_v, lw->raw + 2 * d, (size_t)d * sizeof(float));
    if (!(t = tensor(m, d, d, "n_embd", "h.%d.attn.c_proj.weight", l)) || load(m, t, a->W_o) != MHAVIZ_OK ||
        load_vector(m, a->b_o, d, "n_embd", "h.%d.attn.c_proj.bias", l) != MHAVIZ_OK ||
        load_vector(m, lw->norm1, d, "n_embd", "h.%d.ln_1.weight", l) != MHAVIZ_OK ||
        load_vector(m, lw->norm1_b, d, "n_embd", "h.%d.ln_1.bias", l) != MHAVIZ_OK ||
        load_vector(m, lw->norm2, d, "n_embd", "h.%d.ln_2.weight", l) != MHAVIZ_OK ||
        load_vector(m, lw->norm2_b, d, "n_embd", "h.%d.ln_2.bias", l) != MHAVIZ_OK ||
        !(t = tensor(m, d, ff, "n_embd and n_inner", "h.%d.mlp.c_fc.weight", l)) || load(m, t, lw->fc) != MHAVIZ_OK ||
        load_vector(m, lw->fc_b, ff, "n_inner", "h.%d.mlp.c_fc.bias", l) != MHAVIZ_OK ||
        !(t = tensor(m, ff, d, "n_inner and n_embd", "h.%d.mlp.c_proj.weight", l)) ||
        load(m, t, lw->proj) != MHAVIZ_OK ||
        load_vector(m, lw->proj_b, d, "n_embd", "h.%d.mlp.c_proj.bias", l) != MHAVIZ_OK)
        return MHAVIZ_EINPUT;
    a->has_bias = 1;
    return MHAVIZ_OK;
}

/* A Llama-family layer l: every Linear stored (out, in), transposed here. */
static int load_llama_layer(Model *m, int l, LayerWeights *lw)
{
    const ModelConfig *c = &m->c;
    const int d = c->d_model, ff = c->d_ff, kv = c->n_kv_heads * c->head_dim;
    MhaWeights *a = &lw->attn;
    const char *q_fields = "num_attention_heads x head_dim and hidden_size";
    const char *kv_fields = "num_key_value_heads x head_dim and hidden_size";
    const char *ff_fields = "intermediate_size and hidden_size";
    /* each a status: MHAVIZ_OK is 0, so the first that fails stops the list;
     * the MLP's tensors only found and checked here, read by block() */
    if (load_linear(m, lw, a->W_q, d, d, q_fields, "layers.%d.self_attn.q_proj.weight", l) ||
        load_linear(m, lw, a->W_k, kv, d, kv_fields, "layers.%d.self_attn.k_proj.weight", l) ||
        load_linear(m, lw, a->W_v, kv, d, kv_fields, "layers.%d.self_attn.v_proj.weight", l) ||
        load_linear(m, lw, a->W_o, d, d, q_fields, "layers.%d.self_attn.o_proj.weight", l) ||
        load_vector(m, lw->norm1, d, "hidden_size", "layers.%d.input_layernorm.weight", l) ||
        load_vector(m, lw->norm2, d, "hidden_size", "layers.%d.post_attention_layernorm.weight", l) ||
        !(lw->gate = tensor(m, ff, d, ff_fields, "layers.%d.mlp.gate_proj.weight", l)) ||
        !(lw->up = tensor(m, ff, d, ff_fields, "layers.%d.mlp.up_proj.weight", l)) ||
        !(lw->down = tensor(m, d, ff, "hidden_size and intermediate_size", "layers.%d.mlp.down_proj.weight", l)))
        return MHAVIZ_EINPUT;
    if (c->qkv_bias && (load_vector(m, a->b_q, d, "hidden_size", "layers.%d.self_attn.q_proj.bias", l) ||
                        load_vector(m, a->b_k, kv, "num_key_value_heads x head_dim", "layers.%d.self_attn.k_proj.bias", l) ||
                        load_vector(m, a->b_v, kv, "num_key_value_heads x head_dim", "layers.%d.self_attn.v_proj.bias", l)))
        return MHAVIZ_EINPUT;
    if (c->o_bias && load_vector(m, a->b_o, d, "hidden_size", "layers.%d.self_attn.o_proj.bias", l))
        return MHAVIZ_EINPUT;
    a->has_bias = c->qkv_bias || c->o_bias;
    return MHAVIZ_OK;
}

/* The attention's shape, as core/layer.h holds it. */
static MhaConfig attention_config(const ModelConfig *c, int T)
{
    return (MhaConfig){T, c->d_model, c->n_heads, c->n_kv_heads, c->head_dim, 1, c->rope};
}

/* Allocate an attention's weights of shape c: the matrices uninitialised
 * (every loader writes them whole), the biases zeroed (they stay zero when
 * the checkpoint has none). */
static int attention_alloc(MhaWeights *a, const ModelConfig *c)
{
    const size_t d = (size_t)c->d_model, kv = (size_t)c->n_kv_heads * c->head_dim;
    memset(a, 0, sizeof *a);
    a->W_q = big_alloc(d * d * sizeof(float)), a->W_k = big_alloc(d * kv * sizeof(float));
    a->W_v = big_alloc(d * kv * sizeof(float)), a->W_o = big_alloc(d * d * sizeof(float));
    a->b_q = calloc(d, sizeof(float)), a->b_k = calloc(kv, sizeof(float));
    a->b_v = calloc(kv, sizeof(float)), a->b_o = calloc(d, sizeof(float));
    if (!a->W_q || !a->W_k || !a->W_v || !a->W_o || !a->b_q || !a->b_k || !a->b_v || !a->b_o) {
        mha_weights_free(a);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

static void layer_weights_free(LayerWeights *lw)
{
    mha_weights_free(&lw->attn);
    free(lw->norm1), free(lw->norm1_b), free(lw->norm2), free(lw->norm2_b);
    free(lw->fc), free(lw->fc_b), free(lw->proj), free(lw->proj_b), free(lw->raw);
    matmul_scratch_free(&lw->rows);
    memset(lw, 0, sizeof *lw);
}

/* One layer's buffers, reused by every layer (big_alloc: huge pages). */
static int layer_weights_alloc(LayerWeights *lw, const ModelConfig *c)
{
    const size_t d = (size_t)c->d_model, ff = (size_t)c->d_ff;
    memset(lw, 0, sizeof *lw);
    if (attention_alloc(&lw->attn, c) != MHAVIZ_OK ||
        matmul_scratch_alloc(&lw->rows, c->d_model > c->d_ff ? c->d_model : c->d_ff) != MHAVIZ_OK)
        goto fail;
    lw->norm1 = malloc(d * sizeof(float)), lw->norm1_b = calloc(d, sizeof(float));
    lw->norm2 = malloc(d * sizeof(float)), lw->norm2_b = calloc(d, sizeof(float));
    if (c->family == MODEL_GPT2) {
        lw->fc = big_alloc(d * ff * sizeof(float)), lw->fc_b = calloc(ff, sizeof(float));
        lw->proj = big_alloc(ff * d * sizeof(float)), lw->proj_b = calloc(d, sizeof(float));
        lw->raw = big_alloc(3 * d * d * sizeof(float)); /* c_attn (d, 3d) */
        if (!lw->fc || !lw->fc_b || !lw->proj || !lw->proj_b || !lw->raw)
            goto fail;
    }
    if (!lw->norm1 || !lw->norm1_b || !lw->norm2 || !lw->norm2_b)
        goto fail;
    return MHAVIZ_OK;
fail:
    layer_weights_free(lw);
    return MHAVIZ_ENOMEM;
}

static void run_state_free(RunState *s)
{
    free(s->h), free(s->x), free(s->ff_a), free(s->ff_b);
    mha_state_free(&s->att);
    memset(s, 0, sizeof *s);
}

static int run_state_alloc(RunState *s, const ModelConfig *c, int T)
{
    const size_t d = (size_t)c->d_model, ff = (size_t)c->d_ff;
    const MhaConfig ac = attention_config(c, T);
    memset(s, 0, sizeof *s);
    s->h = big_alloc((size_t)T * d * sizeof(float)), s->x = big_alloc((size_t)T * d * sizeof(float));
    s->ff_a = big_alloc((size_t)T * ff * sizeof(float)), s->ff_b = big_alloc((size_t)T * ff * sizeof(float));
    if (!s->h || !s->x || !s->ff_a || !s->ff_b || mha_state_build(&s->att, &ac, 0) != MHAVIZ_OK) {
        run_state_free(s);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* x = the norm of each row of h (T, d): GPT-2's LayerNorm (subtract the
 * mean, divide by the standard deviation, scale and shift) or Llama's
 * RMSNorm (divide by the root mean square, scale). Sums in double. */
static void norm(float *x, const float *h, const float *scale, const float *shift, int T, int d, double eps,
                 ModelFamily family)
{
    for (int t = 0; t < T; t++) {
        const float *h_t = h + (size_t)t * d;
        float *x_t = x + (size_t)t * d;
        double mean = 0.0, var = 0.0;
        if (family == MODEL_GPT2) {
            for (int i = 0; i < d; i++)
                mean += h_t[i];
            mean /= d;
        }
        for (int i = 0; i < d; i++)
            var += (h_t[i] - mean) * (h_t[i] - mean);
        const double inv = 1.0 / sqrt(var / d + eps);
        for (int i = 0; i < d; i++)
            x_t[i] = (float)((h_t[i] - mean) * inv) * scale[i] + shift[i];
    }
}

/* h (T, d) += y (T, d): a residual connection. */
static void add(float *h, const float *y, size_t n)
{
    for (size_t i = 0; i < n; i++)
        h[i] += y[i];
}

/* One block of layer l, on s->h; off (n_heads; NULL: none) marks the
 * heads whose output is zeroed before W_o (switched off). MHAVIZ_OK, or
 * MHAVIZ_EINPUT with m->err set when a weight of Llama's MLP is not finite. */
static int block(Model *m, LayerWeights *lw, RunState *s, int T, const unsigned char *off)
{
    const ModelConfig *c = &m->c;
    const int d = c->d_model, ff = c->d_ff;
    const size_t n_h = (size_t)T * d, n_ff = (size_t)T * ff;
    const MhaConfig ac = attention_config(c, T);

    /* 1. Norm: the attention reads a normalised h. */
    norm(s->x, s->h, lw->norm1, lw->norm1_b, T, d, c->norm_eps, c->family);
    /* 2. Attention: the lesson's forward pass (core/mha.c). */
    mha_forward(&ac, &lw->attn, s->x, &s->att);
    int any_off = 0;
    for (int h = 0; off && h < c->n_heads; h++)
        if (off[h]) {
            any_off = 1;
            for (int t = 0; t < T; t++)
                memset(s->att.concat + (size_t)t * d + (size_t)h * c->head_dim, 0, (size_t)c->head_dim * sizeof(float));
        }
    if (any_off) /* the output again from the heads left on: concat (T, d) W_o + b_o */
        matmul_xw(s->att.out, s->att.concat, lw->attn.W_o, MATMUL_IN_OUT, lw->attn.b_o, T, d, d);
    /* 3. Residual: its output is added to h. */
    add(s->h, s->att.out, n_h);
    /* 4. Norm again, for the MLP. */
    norm(s->x, s->h, lw->norm2, lw->norm2_b, T, d, c->norm_eps, c->family);
    /* 5. MLP, each token on its own (the activations: disjoint elements, shared out among threads). */
    const int threaded = n_ff >= PARALLEL_MIN_CELLS;
    if (c->family == MODEL_GPT2) {
        /* GPT-2: c_fc, gelu_new, 0.5 a (1 + tanh(sqrt(2/pi) (a + 0.044715 a^3))), or the exact gelu, c_proj */
        matmul_xw(s->ff_a, s->x, lw->fc, MATMUL_IN_OUT, lw->fc_b, T, d, ff);
#pragma omp parallel for schedule(static) if (threaded)
        for (size_t i = 0; i < n_ff; i++) {
            const double a = s->ff_a[i];
            s->ff_a[i] = (float)(c->gelu_exact ? 0.5 * a * (1.0 + erf(a / sqrt(2.0)))
                                               : 0.5 * a * (1.0 + tanh(sqrt(2.0 / M_PI) * (a + 0.044715 * a * a * a))));
        }
        matmul_xw(s->x, s->ff_a, lw->proj, MATMUL_IN_OUT, lw->proj_b, T, ff, d);
    } else {
        /* Llama: SwiGLU, down (silu(gate) * up), silu(a) = a / (1 + e^-a); each
         * weight read from the checkpoint as the product goes */
        RowReader gate = row_reader(m, lw->gate), up = row_reader(m, lw->up), down = row_reader(m, lw->down);
        int rc;
        if ((rc = matmul_rows(s->ff_a, s->x, read_rows, &gate, &lw->rows, NULL, T, d, ff)) != MHAVIZ_OK ||
            (rc = matmul_rows(s->ff_b, s->x, read_rows, &up, &lw->rows, NULL, T, d, ff)) != MHAVIZ_OK)
            return rc;
#pragma omp parallel for schedule(static) if (threaded)
        for (size_t i = 0; i < n_ff; i++) {
            const double a = s->ff_a[i];
            s->ff_a[i] = (float)(a / (1.0 + exp(-a))) * s->ff_b[i];
        }
        if ((rc = matmul_rows(s->x, s->ff_a, read_rows, &down, &lw->rows, NULL, T, ff, d)) != MHAVIZ_OK)
            return rc;
    }
    /* 6. Residual: the MLP's output is added to h. */
    add(s->h, s->x, n_h);
    return MHAVIZ_OK;
}

/* h (T, d) = the tokens' embeddings (GPT-2: plus their positions'). */
static int embed(Model *m, const int *ids, int T, float *h)
{
    const ModelConfig *c = &m->c;
    const int d = c->d_model;
    const int gpt2 = c->family == MODEL_GPT2;
    const char *fields = gpt2 ? "vocab_size and n_embd" : "vocab_size and hidden_size";
    const StTensor *wte = tensor(m, c->vocab_size, d, fields, gpt2 ? "wte.weight" : "embed_tokens.weight");
    const StTensor *wpe = gpt2 && wte ? tensor(m, c->max_positions, d, "n_positions and n_embd", "wpe.weight") : NULL;
    if (!wte || (gpt2 && !wpe))
        return MHAVIZ_EINPUT;
    float *pos = malloc((size_t)d * sizeof *pos); /* (d) one position's embedding */
    if (!pos)
        return MHAVIZ_ENOMEM;
    int rc = MHAVIZ_OK;
    for (int t = 0; t < T && rc == MHAVIZ_OK; t++) {
        if (ids[t] < 0 || ids[t] >= c->vocab_size) {
            snprintf(m->err, m->errlen, "token %d: id %d is outside the vocabulary of %s/config.json's "
                     "\"vocab_size\" %d", t, ids[t], m->dir, c->vocab_size);
            rc = MHAVIZ_EINPUT;
            break;
        }
        float *h_t = h + (size_t)t * d;
        rc = safetensors_floats(wte, (size_t)ids[t] * d, (size_t)d, h_t, m->err, m->errlen);
        if (rc == MHAVIZ_OK && gpt2 &&
            (rc = safetensors_floats(wpe, (size_t)t * d, (size_t)d, pos, m->err, m->errlen)) == MHAVIZ_OK)
            for (int i = 0; i < d; i++)
                h_t[i] += pos[i];
    }
    free(pos);
    return rc;
}

/* The folder's own name: "gpt2" of "models/gpt2/". */
static char *folder_name(const char *dir)
{
    size_t n = strlen(dir);
    while (n > 1 && dir[n - 1] == '/')
        n--;
    size_t start = n;
    while (start > 0 && dir[start - 1] != '/')
        start--;
    char *s = malloc(n - start + 1);
    if (s)
        snprintf(s, n - start + 1, "%.*s", (int)(n - start), dir + start);
    return s;
}

/* in->model: where the layer came from. */
static int describe(const Model *m, const int *ids, int T, int layer, const char *dtype, MhaInput *in)
{
    ModelSource *src = calloc(1, sizeof *src);
    if (!(in->model = src))
        return MHAVIZ_ENOMEM;
    src->name = folder_name(m->dir);
    src->type = strdup(m->c.type);
    src->dtype = strdup(dtype);
    src->token_ids = malloc((size_t)T * sizeof *src->token_ids);
    if (!src->name || !src->type || !src->dtype || !src->token_ids)
        return MHAVIZ_ENOMEM;
    memcpy(src->token_ids, ids, (size_t)T * sizeof *ids);
    src->layer = layer;
    src->n_layers = m->c.n_layers;
    src->parameters = model_config_parameters(&m->c);
    return MHAVIZ_OK;
}

/* Which prefix the checkpoint's names carry: GPT-2's "transformer." or
 * none, Llama's "model." or none (as transformers saves a bare model or
 * one with its head). */
static int find_prefix(Model *m)
{
    const char *const gpt2[] = {"", "transformer."}, *const llama[] = {"model.", ""};
    const char *const *p = m->c.family == MODEL_GPT2 ? gpt2 : llama;
    const char *embedding = m->c.family == MODEL_GPT2 ? "wte.weight" : "embed_tokens.weight";
    for (int i = 0; i < 2; i++) {
        char name[64];
        snprintf(name, sizeof name, "%s%s", p[i], embedding);
        if (safetensors_find(&m->st, name)) {
            m->prefix = p[i];
            return MHAVIZ_OK;
        }
    }
    snprintf(m->err, m->errlen, "%s: the checkpoint has no tensor '%s%s' (nor '%s%s'): not a %s checkpoint", m->dir,
             p[0], embedding, p[1], embedding, m->c.type);
    return MHAVIZ_EINPUT;
}

/* Rows of the unembedding converted to floats at once (4 MB at d 2048). */
#define UNEMBED_ROWS 512

/* logprobs (vocab) = the log-softmax of the last position's logits: h's
 * last row through the final norm (GPT-2's ln_f, Llama's norm), then the
 * unembedding (the embedding when tied, else lm_head, named without the
 * prefix as transformers saves it): logits in float (BLIS), the softmax's
 * sums in double. */
static int unembed(Model *m, RunState *s, int T, double *logprobs)
{
    const ModelConfig *c = &m->c;
    const int d = c->d_model, gpt2 = c->family == MODEL_GPT2;
    const char *dfield = gpt2 ? "n_embd" : "hidden_size";
    float *scale = malloc((size_t)d * sizeof *scale), *shift = calloc((size_t)d, sizeof *shift);
    const int chunk = UNEMBED_ROWS; /* rows of the unembedding converted at once */
    float *rows = malloc((size_t)chunk * d * sizeof *rows); /* (chunk, d) */
    float *logits = malloc((size_t)chunk * sizeof *logits); /* (chunk) */
    int rc = scale && shift && rows && logits ? MHAVIZ_OK : MHAVIZ_ENOMEM;
    if (rc == MHAVIZ_OK)
        rc = load_vector(m, scale, d, dfield, gpt2 ? "ln_f.weight" : "norm.weight", 0);
    if (rc == MHAVIZ_OK && gpt2)
        rc = load_vector(m, shift, d, dfield, "ln_f.bias", 0);
    const StTensor *W = NULL;
    if (rc == MHAVIZ_OK) {
        const char *fields = gpt2 ? "vocab_size and n_embd" : "vocab_size and hidden_size";
        if (gpt2 || c->tied)
            W = tensor(m, c->vocab_size, d, fields, gpt2 ? "wte.weight" : "embed_tokens.weight");
        else if (!(W = safetensors_find(&m->st, "lm_head.weight")) || W->n_dims != 2 ||
                 W->shape[0] != c->vocab_size || W->shape[1] != d) {
            snprintf(m->err, m->errlen, "%s: the checkpoint has no tensor 'lm_head.weight' of shape (%d, %d), and "
                     "config.json's \"tie_word_embeddings\" is false", m->dir, c->vocab_size, d);
            W = NULL;
        }
        if (!W)
            rc = MHAVIZ_EINPUT;
    }
    if (rc == MHAVIZ_OK) {
        const float *last = s->h + (size_t)(T - 1) * d; /* (d) */
        norm(s->x, last, scale, shift, 1, d, c->norm_eps, c->family);
        double top = -INFINITY, sum = 0.0;
        for (int v0 = 0; v0 < c->vocab_size && rc == MHAVIZ_OK; v0 += chunk) {
            const int n = c->vocab_size - v0 < chunk ? c->vocab_size - v0 : chunk;
            rc = safetensors_floats(W, (size_t)v0 * d, (size_t)n * d, rows, m->err, m->errlen);
            /* logits (n) = rows (n, d) x (d) */
            cblas_sgemv(CblasRowMajor, CblasNoTrans, n, d, 1.0f, rows, d, s->x, 1, 0.0f, logits, 1);
            for (int j = 0; j < n; j++) {
                logprobs[v0 + j] = logits[j];
                top = fmax(top, logits[j]);
            }
        }
        for (int v = 0; v < c->vocab_size; v++)
            sum += exp(logprobs[v] - top);
        for (int v = 0; v < c->vocab_size; v++)
            logprobs[v] -= top + log(sum);
    }
    free(scale), free(shift), free(rows), free(logits);
    return rc;
}

/* in[0..n) zeroed, after freeing what each holds. */
static void inputs_clear(MhaInput *in, int n)
{
    for (int i = 0; i < n; i++) {
        free(in[i].x);
        mha_weights_free(&in[i].w);
        mha_model_source_free(in[i].model);
        memset(&in[i], 0, sizeof in[i]);
    }
}

/* The layer shown at l: its weights (lw, taken), and its first norm of h (s), the x its attention reads. */
static int keep_layer(Model *m, LayerWeights *lw, RunState *s, const int *ids, int T, int l, MhaInput *in)
{
    const ModelConfig *c = &m->c;
    const size_t n_h = (size_t)T * c->d_model;
    if (!(in->x = malloc(n_h * sizeof *in->x)) || attention_alloc(&in->w, c) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    norm(in->x, s->h, lw->norm1, lw->norm1_b, T, c->d_model, c->norm_eps, c->family);
    in->cfg = attention_config(c, T);
    /* a copy of the attention's weights: lw's are overwritten by the next layer */
    const size_t d = (size_t)c->d_model, kv = (size_t)c->n_kv_heads * c->head_dim;
    const MhaWeights *a = &lw->attn;
    memcpy(in->w.W_q, a->W_q, d * d * sizeof(float)), memcpy(in->w.W_k, a->W_k, d * kv * sizeof(float));
    memcpy(in->w.W_v, a->W_v, d * kv * sizeof(float)), memcpy(in->w.W_o, a->W_o, d * d * sizeof(float));
    memcpy(in->w.b_q, a->b_q, d * sizeof(float)), memcpy(in->w.b_k, a->b_k, kv * sizeof(float));
    memcpy(in->w.b_v, a->b_v, kv * sizeof(float)), memcpy(in->w.b_o, a->b_o, d * sizeof(float));
    in->w.has_bias = a->has_bias;
    char q_name[128]; /* the layer's query weight, whose dtype the report names */
    snprintf(q_name, sizeof q_name, c->family == MODEL_GPT2 ? "%sh.%d.attn.c_attn.weight"
                                                            : "%slayers.%d.self_attn.q_proj.weight", m->prefix, l);
    return describe(m, ids, T, l, safetensors_find(&m->st, q_name)->dtype, in);
}

/* MHAVIZ_OK when the model takes T tokens, else MHAVIZ_EINPUT with err
 * naming config.json's field; why: how the tokens came to be so many
 * ("" or a clause such as " (--repeat: ...)"). */
static int positions_check(const char *dir, const ModelConfig *c, int T, const char *why, char *err, size_t errlen)
{
    if (T >= 1 && T <= c->max_positions && T <= INPUT_MAX_T && (c->sliding_window <= 0 || T <= c->sliding_window))
        return MHAVIZ_OK;
    const char *pos_field = c->family == MODEL_GPT2 ? "n_positions" : "max_position_embeddings";
    const int max = c->sliding_window > 0 && c->sliding_window < c->max_positions ? c->sliding_window
                                                                                    : c->max_positions;
    snprintf(err, errlen, "%s/config.json: the text has %d tokens%s; the model takes 1 to %d (\"%s\")%s", dir, T,
             why, max < INPUT_MAX_T ? max : INPUT_MAX_T, max == c->sliding_window ? "sliding_window" : pos_field,
             max > INPUT_MAX_T ? ", mhaviz at most 4096" : "");
    return MHAVIZ_EINPUT;
}

/* Layer l's weights into lw, as its family stores them. */
static int load_layer(Model *m, int l, LayerWeights *lw)
{
    return m->c.family == MODEL_GPT2 ? load_gpt2_layer(m, l, lw) : load_llama_layer(m, l, lw);
}

/* The checkpoint of m->dir (m->c loaded) opened, one layer's buffers and
 * the run's allocated, and s->h the embeddings of ids (T): before layer 0.
 * session_close frees what it opened, whatever it returned. */
static int session_open(Model *m, LayerWeights *lw, RunState *s, const int *ids, int T)
{
    int rc;
    if ((rc = safetensors_open(m->dir, &m->st, m->err, m->errlen)) != MHAVIZ_OK || (rc = find_prefix(m)) != MHAVIZ_OK)
        return rc;
    if ((rc = layer_weights_alloc(lw, &m->c)) != MHAVIZ_OK || (rc = run_state_alloc(s, &m->c, T)) != MHAVIZ_OK)
        return rc;
    return embed(m, ids, T, s->h);
}

static void session_close(Model *m, LayerWeights *lw, RunState *s)
{
    layer_weights_free(lw);
    run_state_free(s);
    safetensors_close(&m->st);
}

int model_layers(const char *dir, const int *ids, int T, const int *layers, int n, MhaInput *in, double *logprobs,
                 const unsigned char *off, char *err, size_t errlen)
{
    Model m = {.dir = dir, .err = err, .errlen = errlen};
    LayerWeights lw = {0};
    RunState s = {0};
    memset(in, 0, (size_t)n * sizeof *in);
    int rc = model_config_load(dir, &m.c, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const ModelConfig *c = &m.c;
    rc = MHAVIZ_EINPUT;
    for (int i = 0; i < n; i++)
        if (layers[i] < 0 || layers[i] >= c->n_layers || (i > 0 && layers[i] <= layers[i - 1])) {
            snprintf(err, errlen, "%s/config.json: layer %d does not exist%s: the model has %d layers, 0 to %d (\"%s\")",
                     dir, layers[i], i > 0 && layers[i] <= layers[i - 1] ? " after the layers before it" : "",
                     c->n_layers, c->n_layers - 1, c->family == MODEL_GPT2 ? "n_layer" : "num_hidden_layers");
            return rc;
        }
    if ((rc = positions_check(dir, c, T, "", err, errlen)) != MHAVIZ_OK)
        return rc;
    if ((rc = session_open(&m, &lw, &s, ids, T)) != MHAVIZ_OK)
        goto cleanup;
    /* One forward up to the last layer shown (with logprobs: through every
     * layer), each block converted in turn into the same buffers; a layer
     * shown is kept before its block runs. */
    for (int l = 0, next = 0; next < n || (logprobs && l < c->n_layers); l++) {
        if ((rc = load_layer(&m, l, &lw)) != MHAVIZ_OK)
            goto cleanup;
        if (next < n && l == layers[next] && (rc = keep_layer(&m, &lw, &s, ids, T, l, &in[next++])) != MHAVIZ_OK)
            goto cleanup;
        if ((next < n || logprobs) &&
            (rc = block(&m, &lw, &s, T, off ? off + (size_t)l * c->n_heads : NULL)) != MHAVIZ_OK)
            goto cleanup;
    }
    if (logprobs)
        rc = unembed(&m, &s, T, logprobs);

cleanup:
    if (rc != MHAVIZ_OK) {
        inputs_clear(in, n);
        if (rc == MHAVIZ_ENOMEM)
            snprintf(err, errlen, "out of memory");
    }
    session_close(&m, &lw, &s);
    return rc;
}

int model_layer(const char *dir, const int *ids, int T, int layer, MhaInput *in, char *err, size_t errlen)
{
    return model_layers(dir, ids, T, &layer, 1, in, NULL, NULL, err, errlen);
}

/* The top MODEL_TOP_K of logprobs (vocab) into ids and logprob (*n of
 * them): the largest first, the lower id on ties. */
static void top_k(const double *logprobs, int vocab, int *n, int *ids, double *logprob)
{
    *n = vocab < MODEL_TOP_K ? vocab : MODEL_TOP_K;
    for (int k = 0; k < *n; k++) {
        int best = -1;
        for (int v = 0; v < vocab; v++) {
            int taken = 0;
            for (int j = 0; j < k; j++)
                taken |= ids[j] == v;
            if (!taken && (best < 0 || logprobs[v] > logprobs[best]))
                best = v;
        }
        ids[k] = best;
        logprob[k] = logprobs[best];
    }
}

/* The heads off (n_layers, n_heads) at once: one forward, its top
 * MODEL_TOP_K into pred->off_*, and the log-probability of pred->ids[0]. */
static int heads_off(const char *dir, const int *ids, int T, const ModelConfig *c, const unsigned char *off,
                     double *logprobs, ModelPrediction *pred, char *err, size_t errlen)
{
    const size_t n = (size_t)c->n_layers * c->n_heads;
    if (!(pred->off = malloc(n)))
        return MHAVIZ_ENOMEM;
    memcpy(pred->off, off, n);
    pred->n_layers = c->n_layers, pred->n_heads = c->n_heads;
    MhaInput none; /* no layer kept */
    int rc = model_layers(dir, ids, T, NULL, 0, &none, logprobs, off, err, errlen);
    if (rc == MHAVIZ_OK) {
        top_k(logprobs, c->vocab_size, &pred->off_n, pred->off_ids, pred->off_logprob);
        pred->off_top = logprobs[pred->ids[0]];
    }
    return rc;
}

/* ids (*T of them, malloc'd) with the text's own tokens, those between the
 * tokenizer's n_prefix and n_suffix special ones, twice over; *T updated. */
static int repeat_ids(int **ids, int *T, int n_prefix, int n_suffix)
{
    const int own = *T - n_prefix - n_suffix, twice = *T + own;
    int *r = malloc((size_t)twice * sizeof *r);
    if (!r)
        return MHAVIZ_ENOMEM;
    memcpy(r, *ids, (size_t)(n_prefix + own) * sizeof *r);
    memcpy(r + n_prefix + own, *ids + n_prefix, (size_t)(own + n_suffix) * sizeof *r);
    free(*ids);
    *ids = r;
    *T = twice;
    return MHAVIZ_OK;
}

int model_head_effects(const char *dir, const int *ids, int T, int token, double *top, char *err, size_t errlen)
{
    Model m = {.dir = dir, .err = err, .errlen = errlen};
    LayerWeights lw = {0};
    RunState s = {0};
    int rc = model_config_load(dir, &m.c, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const ModelConfig *c = &m.c;
    const size_t n_h = (size_t)T * c->d_model;
    unsigned char *off = calloc((size_t)c->n_layers * c->n_heads, 1); /* (n_layers, n_heads) 1: switched off */
    float *saved = malloc(n_h * sizeof *saved);                         /* (T, d) h before layer l */
    double *logprobs = malloc((size_t)c->vocab_size * sizeof *logprobs); /* (vocab) */
    rc = off && saved && logprobs ? MHAVIZ_OK : MHAVIZ_ENOMEM;
    if (rc == MHAVIZ_OK && (token < 0 || token >= c->vocab_size)) {
        snprintf(err, errlen, "%s/config.json: token %d is outside the vocabulary (\"vocab_size\" %d)", dir, token,
                 c->vocab_size);
        rc = MHAVIZ_EINPUT;
    }
    if (rc == MHAVIZ_OK && (rc = positions_check(dir, c, T, "", err, errlen)) == MHAVIZ_OK)
        rc = session_open(&m, &lw, &s, ids, T);
    /* The residual stream before layer l is the same whichever head of l
     * is off: it is saved, and each of l's heads runs from there. */
    for (int l = 0; l < c->n_layers && rc == MHAVIZ_OK; l++) {
        memcpy(saved, s.h, n_h * sizeof *saved);
        for (int h = 0; h < c->n_heads && rc == MHAVIZ_OK; h++) {
            const int k = l * c->n_heads + h;
            off[k] = 1;
            for (int j = l; j < c->n_layers && rc == MHAVIZ_OK; j++)
                if ((rc = load_layer(&m, j, &lw)) == MHAVIZ_OK)
                    rc = block(&m, &lw, &s, T, off + (size_t)j * c->n_heads);
            if (rc == MHAVIZ_OK && (rc = unembed(&m, &s, T, logprobs)) == MHAVIZ_OK)
                top[k] = logprobs[token];
            off[k] = 0;
            memcpy(s.h, saved, n_h * sizeof *saved);
        }
        /* the clean stream on, to before layer l + 1 */
        if (rc == MHAVIZ_OK && (rc = load_layer(&m, l, &lw)) == MHAVIZ_OK)
            rc = block(&m, &lw, &s, T, NULL);
    }
    if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "out of memory");
    session_close(&m, &lw, &s);
    free(logprobs), free(saved), free(off);
    return rc;
}

/* pred->effect: each head of the model switched off in turn, the top
 * token's log-probability against clean's (vocab). */
static int head_effects(const char *dir, const int *ids, int T, const ModelConfig *c, const double *clean,
                        ModelPrediction *pred, char *err, size_t errlen)
{
    const int n = c->n_layers * c->n_heads;
    if (!(pred->effect = malloc((size_t)n * sizeof *pred->effect)))
        return MHAVIZ_ENOMEM;
    pred->n_layers = c->n_layers, pred->n_heads = c->n_heads;
    const int rc = model_head_effects(dir, ids, T, pred->ids[0], pred->effect, err, errlen);
    for (int k = 0; k < n && rc == MHAVIZ_OK; k++)
        pred->effect[k] -= clean[pred->ids[0]];
    return rc;
}

void model_prediction_free(ModelPrediction *pred)
{
    free(pred->effect);
    free(pred->off);
    for (int k = 0; k < MODEL_TOP_K; k++)
        free(pred->text[k]), free(pred->off_text[k]);
    memset(pred, 0, sizeof *pred);
}

/* Every id the tokenizer gave lies in the checkpoint's embedding table;
 * else the folder's tokenizer.json is another model's (MHAVIZ_EINPUT,
 * naming the token, both files and what to do). */
static int ids_in_vocabulary(const char *dir, const Tokenizer *tok, const int *ids, int T, const ModelConfig *c,
                             char *err, size_t errlen)
{
    for (int t = 0; t < T; t++)
        if (ids[t] < 0 || ids[t] >= c->vocab_size) {
            char *piece = tokenizer_piece_text(tok, ids[t]);
            snprintf(err, errlen, "%s/tokenizer.json does not match the model's checkpoint: it gives token %d "
                     "('%s') the id %d, and config.json's \"vocab_size\" is %d (ids 0 to %d); put the "
                     "tokenizer.json that came with this checkpoint into the folder (the same hub repository's)",
                     dir, t, piece ? piece : "", ids[t], c->vocab_size, c->vocab_size - 1);
            free(piece);
            return MHAVIZ_EINPUT;
        }
    return MHAVIZ_OK;
}

int model_load(const char *dir, const char *text, const int *layers, int n, MhaInput *in, ModelPrediction *pred,
               const ModelAsk *ask, char *err, size_t errlen)
{
    const ModelAsk none = {0};
    int *ids = NULL, T = 0;
    if (!ask)
        ask = &none;
    memset(in, 0, (size_t)n * sizeof *in);
    if (pred)
        memset(pred, 0, sizeof *pred);
    Tokenizer *tok = tokenizer_load(dir, err, errlen);
    if (!tok)
        return MHAVIZ_EINPUT;
    ModelConfig c;
    int rc = tokenizer_encode(tok, text, &ids, &T, err, errlen);
    if (rc == MHAVIZ_OK)
        rc = model_config_load(dir, &c, err, errlen);
    if (rc == MHAVIZ_OK)
        rc = ids_in_vocabulary(dir, tok, ids, T, &c, err, errlen);
    if (rc == MHAVIZ_OK && ask->repeat) {
        /* The induction demo: the sentence's tokens twice; too many for the model's positions names --repeat. */
        int n_prefix, n_suffix;
        char why[96];
        tokenizer_specials(tok, &n_prefix, &n_suffix);
        snprintf(why, sizeof why, " (--repeat: its %d own tokens twice)", T - n_prefix - n_suffix);
        if ((rc = repeat_ids(&ids, &T, n_prefix, n_suffix)) == MHAVIZ_OK)
            rc = positions_check(dir, &c, T, why, err, errlen);
    }
    double *logprobs = NULL; /* (vocab) with pred */
    if (rc == MHAVIZ_OK && pred) {
        if (!(logprobs = malloc((size_t)c.vocab_size * sizeof *logprobs)))
            rc = MHAVIZ_ENOMEM;
        if (rc == MHAVIZ_OK && (rc = model_layers(dir, ids, T, layers, n, in, logprobs, NULL, err, errlen)) == MHAVIZ_OK) {
            top_k(logprobs, c.vocab_size, &pred->n, pred->ids, pred->logprob);
            double *scratch = malloc((size_t)c.vocab_size * sizeof *scratch); /* (vocab) heads switched off */
            if (!scratch)
                rc = MHAVIZ_ENOMEM;
            if (rc == MHAVIZ_OK && ask->effects)
                rc = head_effects(dir, ids, T, &c, logprobs, pred, err, errlen);
            if (rc == MHAVIZ_OK && ask->off)
                rc = heads_off(dir, ids, T, &c, ask->off, scratch, pred, err, errlen);
            free(scratch);
            for (int k = 0; k < pred->n && rc == MHAVIZ_OK; k++) {
                char *piece = tokenizer_piece_text(tok, pred->ids[k]);
                if (!(pred->text[k] = piece ? piece : strdup("")))
                    rc = MHAVIZ_ENOMEM;
            }
            for (int k = 0; pred->off && k < pred->off_n && rc == MHAVIZ_OK; k++) {
                char *piece = tokenizer_piece_text(tok, pred->off_ids[k]);
                if (!(pred->off_text[k] = piece ? piece : strdup("")))
                    rc = MHAVIZ_ENOMEM;
            }
        }
    } else if (rc == MHAVIZ_OK)
        rc = model_layers(dir, ids, T, layers, n, in, NULL, NULL, err, errlen);
    free(logprobs);
    for (int i = 0; rc == MHAVIZ_OK && i < n; i++) {
        /* The tokens as the pictures and the report show them, and a title naming the layer. */
        const size_t len = strlen(in[i].model->name) + 64;
        in[i].tokens = calloc((size_t)T, sizeof *in[i].tokens);
        in[i].title = malloc(len);
        for (int t = 0; in[i].tokens && t < T; t++) {
            char *piece = tokenizer_piece_text(tok, ids[t]); /* NULL: an id past the tokenizer's pieces */
            if (!(in[i].tokens[t] = piece ? piece : strdup("")))
                rc = MHAVIZ_ENOMEM;
        }
        if (!in[i].tokens || !in[i].title)
            rc = MHAVIZ_ENOMEM;
        else
            snprintf(in[i].title, len, "%.*s, layer %d (of layers 0 to %d)", INPUT_MAX_TITLE_BYTES - 40,
                     in[i].model->name, layers[i], in[i].model->n_layers - 1);
    }
    if (rc != MHAVIZ_OK && pred)
        model_prediction_free(pred);
    if (rc == MHAVIZ_ENOMEM) {
        for (int i = 0; i < n; i++)
            input_free(&in[i]);
        snprintf(err, errlen, "out of memory");
    }
    free(ids);
    tokenizer_free(tok);
    return rc;
}

size_t model_memory(const char *dir, const ModelConfig *c, int T, int n_kept, int prediction)
{
    const double d = c->d_model, ff = c->d_ff, kv = (double)c->n_kv_heads * c->head_dim, H = c->n_heads;
    double floats = 0;
    /* layer_weights_alloc: the attention's, the norms'; GPT-2's MLP (c_fc, c_proj and their biases)
     * and c_attn as stored (raw); Llama's MLP is converted a block of rows at a time (bytes below) */
    floats += 2 * d * d + 2 * d * kv + 2 * d + 2 * kv + 4 * d;
    if (c->family == MODEL_GPT2)
        floats += 2 * d * ff + ff + d + 3 * d * d;
    /* run_state_alloc: h, x, ff_a, ff_b, and the attention's state (q k v kt, att, concat, out) */
    floats += 2 * T * d + 2 * T * ff + 3 * T * d + 3 * T * kv + H * T * T;
    /* the one tensor whose mapped pages a conversion holds (safetensors_floats gives them back
     * after it), at 4 bytes a value at most: the largest of a layer's */
    floats += fmax(3 * d * d, d * ff);
    /* keep_layer: each layer shown, x and its attention's weights */
    floats += n_kept * (T * d + 2 * d * d + 2 * d * kv + 2 * d + 2 * kv);
    /* layer_weights_alloc's scratch: a block of rows for each thread (core/matmul.h) */
    double bytes = floats * sizeof(float) + (double)matmul_scratch_bytes(c->d_model > c->d_ff ? c->d_model : c->d_ff);
    if (prediction) /* model_load's two log-probabilities and model_head_effects', unembed's rows, h saved (T, d) */
        bytes += 3.0 * c->vocab_size * sizeof(double) + (UNEMBED_ROWS + 1.0 + T) * d * sizeof(float);
    /* tokenizer.json parsed (text and tree; core/memory.h's factor), its tables kept */
    char path[4096];
    struct stat sb;
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    if (stat(path, &sb) == 0)
        bytes += (double)sb.st_size * MEMORY_JSON_FACTOR;
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}
