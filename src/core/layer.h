/* layer.h — one attention layer's shape and weights: the types every
 * layer of the program shares (the loader fills them, mha.h runs them). */
#ifndef MHAVIZ_LAYER_H
#define MHAVIZ_LAYER_H

#include <stddef.h>
#include <stdint.h>

/* Rotary positions (RoPE, Su et al. 2021) as Llama, Mistral and Qwen2 use
 * them: q and k are rotated by their token's position before the scores
 * (mha.c, step 2), so a score depends on how far apart two tokens are.
 * Each block of dim columns (one head) is rotated in transformers'
 * "rotate half" convention: column e is paired with column e + dim/2 and
 * the pair turned by the angle position * rope_frequency(e) (core/rope.h).
 * dim 0: no rotation (GPT-2 and the JSON inputs, whose positions are in x). */
typedef struct {
    int dim;        /* width of a rotated block: the model's head_dim (even), or 0 */
    double theta;   /* rope_theta: the frequency of pair e is theta^(-2e/dim) */
    double factor;  /* rope_scaling of type "llama3": its factor, 0 = no scaling */
    double low_freq_factor, high_freq_factor; /* its other fields (with factor) */
    int original_max_position; /* its original_max_position_embeddings */
} MhaRope;

/* Hyper-parameters of one attention layer. */
typedef struct {
    int T;           /* tokens in the sequence */
    int d_model;     /* width of each hidden state */
    int n_heads;     /* query heads */
    int n_kv_heads;  /* key/value heads: n_heads = MHA, 1 = MQA, between = GQA */
    int head_dim;    /* d_model / n_heads */
    int causal;      /* 1: query i sees keys 0..i only */
    MhaRope rope;    /* rotary positions; rope.dim 0 = none */
} MhaConfig;

/* The keys query i may see among T: keys 0..i under the causal mask
 * (i + 1 of them), every key without it. */
static inline int mha_visible_keys(int causal, int i, int T) { return causal ? i + 1 : T; }

/* The (query, key) cells of one map a query may see: mha_visible_keys
 * summed over the T queries, T(T+1)/2 under the causal mask, T^2 without. */
static inline int64_t mha_visible_pairs(int causal, int T)
{
    return causal ? (int64_t)T * (T + 1) / 2 : (int64_t)T * T;
}

/* kv_dim = n_kv_heads * head_dim: width of k and v. */
static inline int mha_kv_dim(const MhaConfig *c) { return c->n_kv_heads * c->head_dim; }

/* Projection weights of one attention layer, "x@W" layout. */
typedef struct {
    float *W_q;   /* (d_model, d_model)  q = x W_q + b_q */
    float *W_k;   /* (d_model, kv_dim)   k = x W_k + b_k */
    float *W_v;   /* (d_model, kv_dim)   v = x W_v + b_v */
    float *W_o;   /* (d_model, d_model)  out = concat W_o + b_o */
    float *b_q;   /* (d_model) zeros when the input gave none */
    float *b_k;   /* (kv_dim) */
    float *b_v;   /* (kv_dim) */
    float *b_o;   /* (d_model) */
    int has_bias; /* 1 when the input gave any bias (the cost table counts them) */
} MhaWeights;

/* The optional "training" of an input whose "single_head" was trained on
 * its own (docs/input.md): the held-out losses of the multi-head model and
 * of the one-head model, trained the same way at each seed. */
#define TRAINING_MAX_SEEDS 32
#define TRAINING_MAX_KV 16 /* "by_kv_heads" entries */
#define TRAINING_MAX_READOUTS 4 /* "by_readout" entries */
#define TRAINING_MAX_READOUT_NAME 32 /* bytes of a readout's name, with its NUL */

/* One set of held-out losses: the multi-head model's, the one head's and,
 * when given, every K/V head count's, at each seed. */
typedef struct {
    double heads[TRAINING_MAX_SEEDS];  /* (n_seeds) the multi-head model */
    double single[TRAINING_MAX_SEEDS]; /* (n_seeds) the one head trained on its own */
    double kv[TRAINING_MAX_KV][TRAINING_MAX_SEEDS]; /* (n_kv_losses, n_seeds) by Training.kv_heads */
} TrainingReadout;

typedef struct {
    int n_seeds;                            /* 0: the input gave no "training" */
    int seeds[TRAINING_MAX_SEEDS];          /* (n_seeds) distinct */
    int seed;                               /* the seed whose weights the input holds: one of seeds */
    int steps;                              /* training steps, the same for both models */
    double loss_heads[TRAINING_MAX_SEEDS];  /* (n_seeds) held-out loss in nats, the multi-head model */
    double loss_single[TRAINING_MAX_SEEDS]; /* (n_seeds) the one head trained on its own */
    int n_kv_losses;                        /* 0: no "by_kv_heads" */
    int kv_heads[TRAINING_MAX_KV];          /* (n_kv_losses) K/V head counts, most first */
    double loss_kv[TRAINING_MAX_KV][TRAINING_MAX_SEEDS]; /* (n_kv_losses, n_seeds) the same model
                                             * trained with kv_heads[i] K/V heads, from the same start */
    int n_readouts;                         /* 0: no "by_readout" */
    char readout_name[TRAINING_MAX_READOUTS][TRAINING_MAX_READOUT_NAME]; /* (n_readouts) "previous token" */
    TrainingReadout readout[TRAINING_MAX_READOUTS]; /* (n_readouts) each readout's own losses, of the
                                             * same models as the ones above (their mean, or total) */
} Training;

/* A file mapped into memory read-only, which an array of an input points
 * into instead of holding a copy (io/npy.c maps .npy files so). */
typedef struct {
    void *addr;        /* the mapping: the whole file */
    size_t len;        /* its length in bytes */
    const float *data; /* the array in it, after the file's header: never given to free() */
} MappedFile;

/* Where a layer read from a checkpoint came from (checkpoint/model.h), for
 * report.json's "model" and "token_ids". */
typedef struct {
    char *name;           /* the model folder's name, e.g. "gpt2" */
    char *type;           /* config.json's model_type */
    int layer;            /* the layer shown, counted from 0 */
    int n_layers;         /* the model's layers */
    char *dtype;          /* the layer's weights as stored: "F32", "F16" or "BF16" */
    long long parameters; /* the whole model's, as transformers counts them */
    int *token_ids;       /* (T) the ids the model saw */
} ModelSource;

/* The arrays an input may read in place from files: x and the 8 of each layer. */
#define MHA_INPUT_MAX_MAPS 17

/* A layer with its input: the tokens, their hidden states and the weights.
 * The loader builds it (io/input.h: input_load, input_parse) and frees it
 * (input_free); variants make views of it with other weights. x and the
 * weights are either the input's own memory or point into maps (read-only:
 * nothing may write into them). */
typedef struct {
    MhaConfig cfg;
    char **tokens;     /* (T) NUL-terminated UTF-8 strings */
    char *title;       /* the optional "title" (UTF-8, at most INPUT_MAX_TITLE_BYTES of io/input.h), or NULL */
    float *x;          /* (T, d_model) input hidden states */
    MhaWeights w;      /* the multi-head layer */
    int has_single;    /* 1 when "single_head" gave its own weights */
    MhaWeights single; /* (d_model, d_model) each; valid when has_single */
    Training training; /* n_seeds 0 unless the input gave "training" (then has_single is 1) */
    char *warnings;    /* newline-separated warnings (e.g. unknown keys), or NULL */
    size_t parse_bytes; /* memory the JSON text and cJSON's tree took while parsed (counted
                         * before parsing: one 80-byte node per value, each string's copy) */
    MappedFile maps[MHA_INPUT_MAX_MAPS]; /* (n_maps) the .npy files x and the weights read in place */
    int n_maps;
    ModelSource *model; /* the checkpoint the layer was run from, or NULL (a JSON input) */
    int layer;          /* in a file of "layers" (docs/input.md): this layer's index there, from 0 */
    int n_layers;       /* the layers of that file; 0: a file of one layer, or a checkpoint's (model) */
} MhaInput;

/* Free the arrays of a weights struct and zero it. Safe on a zeroed struct. */
void mha_weights_free(MhaWeights *w);

/* Free a ModelSource and what it holds. Safe on NULL. */
void mha_model_source_free(ModelSource *m);

#endif
