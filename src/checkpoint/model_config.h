/* model_config.h — a checkpoint's config.json: the hyper-parameters of the
 * model families mhaviz runs (transformers' field names). */
#ifndef MHAVIZ_MODEL_CONFIG_H
#define MHAVIZ_MODEL_CONFIG_H

#include "core/layer.h"

#include <stddef.h>

/* The model_type values mhaviz runs, for messages. */
#define MODEL_TYPES "gpt2, llama, mistral, qwen2"

/* How a block is built: GPT-2's (LayerNorm, learned positions, gelu_new
 * MLP) or Llama's, which Mistral and Qwen2 share (RMSNorm, rotary
 * positions, SwiGLU MLP). */
typedef enum { MODEL_GPT2, MODEL_LLAMA } ModelFamily;

typedef struct {
    char type[16];      /* model_type: "gpt2", "llama", "mistral" or "qwen2" */
    ModelFamily family;
    int n_layers;       /* n_layer / num_hidden_layers */
    int d_model;        /* n_embd / hidden_size */
    int n_heads;        /* n_head / num_attention_heads */
    int n_kv_heads;     /* num_key_value_heads (GPT-2: n_heads) */
    int head_dim;       /* head_dim when given, else d_model / n_heads */
    int d_ff;           /* the MLP's hidden width: n_inner (default 4 n_embd) / intermediate_size */
    int vocab_size;
    int max_positions;  /* n_positions / max_position_embeddings */
    int sliding_window; /* Mistral's and Qwen2's window of keys, 0 = none */
    double norm_eps;    /* layer_norm_epsilon / rms_norm_eps */
    int gelu_exact;     /* GPT-2's activation_function "gelu" (erf); 0: "gelu_new" (tanh) */
    int qkv_bias;       /* q, k and v have biases (Qwen2; Llama's attention_bias) */
    int o_bias;         /* the output projection has one (Llama's attention_bias) */
    int tied;           /* tie_word_embeddings: the unembedding is the embedding */
    MhaRope rope;       /* rope_theta, rope_scaling (Llama family); dim 0 for GPT-2 */
} ModelConfig;

/* Read dir/config.json into *c. A field missing, of the wrong type or out
 * of range, a model_type or activation mhaviz does not run, a rope_scaling
 * other than llama3's, or heads that side by side are not d_model wide:
 * MHAVIZ_EINPUT with err naming the file and the field. Also MHAVIZ_EIO,
 * MHAVIZ_ENOMEM. */
int model_config_load(const char *dir, ModelConfig *c, char *err, size_t errlen);

/* The model's parameters as transformers counts them (the embeddings, every
 * layer, the final norm, and the unembedding unless tied). */
long long model_config_parameters(const ModelConfig *c);

#endif
