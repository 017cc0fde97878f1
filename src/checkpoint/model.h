/* model.h — a checkpoint run up to one of its layers: that layer's
 * attention with its input, as mhaviz shows any layer (core/layer.h).
 *
 * embed the tokens -> for each layer before the one asked for: its block
 * (norm -> attention -> residual -> norm -> MLP -> residual) -> that
 * layer's first norm: the x its attention reads. The attention is
 * core/mha.h's mha_forward, the lesson's forward pass. */
#ifndef MHAVIZ_MODEL_H
#define MHAVIZ_MODEL_H

#include "checkpoint/model_config.h"
#include "core/layer.h"

#include <stddef.h>

/* Run the checkpoint in folder dir (config.json, model.safetensors or its
 * shards) on the token ids (T of them) once, up to the last of the n layers
 * listed (from 0, ascending, none twice), and fill in[i] with layers[i]:
 * cfg (with the rope settings), x (T, d_model) the attention's input after
 * the layer's first norm, w its projections in the "x@W" layout, and
 * in[i].model (its ids copied). in[i].tokens is left NULL for the caller
 * to fill (T display strings). The checkpoint's weights are converted one
 * layer at a time, never whole. Returns MHAVIZ_OK, or MHAVIZ_EINPUT (err
 * names the file and the field or tensor: a missing tensor, a shape
 * config.json contradicts, an id past the vocabulary, more tokens than the
 * model's positions, a layer out of range), MHAVIZ_EIO or MHAVIZ_ENOMEM;
 * in[0..n) are then zeroed. Free each with io/input.h's input_free.
 * logprobs (vocab_size), when not NULL: the forward runs through every
 * layer, then the final norm (ln_f / norm) and the unembedding (the
 * embedding when tied, else lm_head) of the last token: the log-softmax of
 * its logits, the model's prediction of the next token. off (n_layers,
 * n_heads; NULL: none) switches heads off: head h of layer l, when
 * off[l n_heads + h], has its output zeroed before W_o (the layers shown
 * are kept before their heads are). */
int model_layers(const char *dir, const int *ids, int T, const int *layers, int n, MhaInput *in, double *logprobs,
                 const unsigned char *off, char *err, size_t errlen);

/* model_layers for the one layer `layer`. */
int model_layer(const char *dir, const int *ids, int T, int layer, MhaInput *in, char *err, size_t errlen);

/* Bytes model_load holds at most for the checkpoint in folder dir of
 * config c on T tokens, keeping n_kept layers, with prediction the model's
 * next tokens (its log-probabilities, also with head effects): one
 * layer's converted weights, the run state, the mapped pages of the tensor
 * being converted, the n_kept layers kept (held until the caller frees
 * them), and tokenizer.json parsed. */
size_t model_memory(const char *dir, const ModelConfig *c, int T, int n_kept, int prediction);

/* The model's most likely next tokens after the text. */
#define MODEL_TOP_K 5
typedef struct {
    int n;                      /* MODEL_TOP_K, or the vocabulary when smaller */
    int ids[MODEL_TOP_K];       /* the most likely first, the lower id on ties */
    double logprob[MODEL_TOP_K]; /* natural log of each one's probability */
    char *text[MODEL_TOP_K];    /* each one's piece as shown (malloc'd) */
    int n_layers, n_heads;
    double *effect;             /* (n_layers, n_heads) the change in the top token's log-probability
                                 * when that one head is switched off (model_layers' off):
                                 * model_head_effects (malloc'd); NULL when not asked */
    /* With ModelAsk's off: the prediction with those heads switched off at once. */
    unsigned char *off;         /* (n_layers, n_heads) 1: switched off (malloc'd copy); NULL: none asked */
    int off_n;                  /* as n */
    int off_ids[MODEL_TOP_K];   /* as ids, with the heads off */
    double off_logprob[MODEL_TOP_K];
    char *off_text[MODEL_TOP_K];
    double off_top;             /* the log-probability of ids[0] (the top token with every head on) with them off */
} ModelPrediction;

/* A head "matters" to the prediction when switching it off alone lowers
 * the top token's log-probability by more than this (natural log: its
 * probability falls by a tenth or more). */
#define MODEL_EFFECT_MATTERS 0.1

/* What a run over a model asks besides its layers (model_load). */
typedef struct {
    int effects;               /* 1: every head's effect (one forward per head of the model) */
    const unsigned char *off;  /* (n_layers, n_heads) 1: switch off for a second prediction; NULL: none */
    int repeat;                /* 1: the text's tokens twice over, the post-processor's BOS (and
                                * end tokens) once: the induction demo */
} ModelAsk;

/* top (n_layers, n_heads) = token's log-probability (as model_layers'
 * logprobs) with each head switched off alone, in turn: the residual
 * stream before layer l is the same whichever of l's heads is off, so
 * each of them runs from there, layers l to the last. Status as
 * model_layers; a token outside the vocabulary is MHAVIZ_EINPUT. */
int model_head_effects(const char *dir, const int *ids, int T, int token, double *top, char *err, size_t errlen);

/* Free what pred holds and zero it. */
void model_prediction_free(ModelPrediction *pred);

/* The same on text, tokenized by dir's tokenizer.json as Hugging Face's
 * tokenizers does (checkpoint/tokenizer.h, BOS included; with ask->repeat
 * the text's own tokens twice, between the BOS and any end token): in[i].tokens are
 * its pieces as shown ("ĠMary" -> " Mary"), in[i].title names the folder and
 * the layer ("gpt2, layer 5 (of layers 0 to 11)"). Returns as model_layers does (a
 * tokenizer.json it cannot read, or an empty text: MHAVIZ_EINPUT with err
 * naming the file and the field). pred, when not NULL, gets the model's
 * top MODEL_TOP_K next tokens (free with model_prediction_free), with
 * ask->effects each head's effect (one forward per head of the model), and
 * with ask->off the prediction with those heads off (one more forward; the
 * layers in[] are those of the forward with every head on). ask NULL: none
 * of these. More tokens than the model's positions (also after --repeat's
 * doubling, which the message says): MHAVIZ_EINPUT. */
int model_load(const char *dir, const char *text, const int *layers, int n, MhaInput *in, ModelPrediction *pred,
               const ModelAsk *ask, char *err, size_t errlen);

#endif
