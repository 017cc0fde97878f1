/* init.h — starter inputs: a seeded random model, a designed one, and a JSON
 * writer for any model.
 *
 * `mhaviz init` builds a fresh, untrained layer for a teacher's own sentence:
 * every weight drawn from a normal distribution with std 1/sqrt(d_model)
 * (so q, k and v keep roughly the scale of x), from a PRNG of our own
 * (splitmix64 + Box-Muller) so that the same seed gives the same file on
 * every run. Each matrix draws from its own stream of the seed, so the
 * layer depends only on the seed and the shapes (another sentence, same
 * layer), and a word's embedding only on the seed and the word.
 *
 * `mhaviz init --designed` builds instead a layer whose heads do the
 * lesson's jobs on the teacher's sentence, every weight chosen by hand
 * (designed.c says how): head h does job h mod 4, in this order:
 *   0 the previous token, 1 the subject (the earliest mention of a word,
 *   by default the first token), 2 an earlier mention of the same word
 *   (itself when there is none), 3 the token itself.
 * Fewer heads keep the first jobs. The writer and the designed model are
 * also how the shipped samples are produced (lesson 1 is a designed model). */
#ifndef MHAVIZ_INIT_H
#define MHAVIZ_INIT_H

#include "io/input.h"

#include <stdint.h>
#include <stdio.h>

/* splitmix64 state plus the spare normal that Box-Muller makes in pairs. */
typedef struct {
    uint64_t state;
    int has_spare;
    double spare;
} InitRng;

void init_rng_seed(InitRng *r, uint64_t seed);
uint64_t init_rng_u64(InitRng *r);   /* next 64 random bits (splitmix64) */
double init_rng_uniform(InitRng *r); /* uniform in (0, 1] */
double init_rng_normal(InitRng *r);  /* standard normal (Box-Muller) */

/* What `mhaviz init` was asked for. */
typedef struct {
    const char *tokens; /* the sentence; split on white space */
    int d_model;        /* >= 1 */
    int n_heads;        /* >= 1, divides d_model */
    int n_kv_heads;     /* >= 1, divides n_heads; 0 = n_heads */
    uint64_t seed;
    int embeddings;     /* 1: an embeddings table + sinusoidal positions; 0: x */
} InitOptions;

/* A model ready to be written: an input, and optionally the embedding table
 * it came from. Free with init_model_free. */
typedef struct {
    MhaInput in;   /* cfg, tokens, x (T, d_model), weights (x@W layout) */
    int n_vocab;   /* distinct tokens, in order of first appearance; 0 = no table */
    char **vocab;  /* (n_vocab) */
    float *emb;    /* (n_vocab, d_model) embeddings[vocab[v]]; NULL = write x */
    char *comment; /* what the weights are, for the file's "comment"; NULL = none */
} InitModel;

/* Split text on white space into *tokens (*T of them). The caller owns the
 * array and each string; free them with init_tokens_free.
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT (no token; err says so) or MHAVIZ_ENOMEM. */
int init_tokens_split(const char *text, char ***tokens, int *T, char *err, size_t errlen);
void init_tokens_free(char **tokens, int T);

/* Build a random starter model from *o into *m, titled "random, untrained
 * weights (seed N)" (m->in.title). When o->embeddings, x is
 * embeddings[token] + the sinusoidal position code (so *m runs as loaded).
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT (a bad shape: err names the option) or
 * MHAVIZ_ENOMEM. On success the caller frees *m with init_model_free; on
 * failure *m holds nothing to free. */
int init_model(const InitOptions *o, InitModel *m, char *err, size_t errlen);
void init_model_free(InitModel *m);

/* Build the designed model of sentence `tokens` (split on white space) with
 * n_heads heads into *m, titled "weights designed by hand, not trained": head h does job h mod 4 (above); subject names the
 * word head 1 looks for (NULL: the first token); d_model is chosen to fit
 * (init_designed_d_model) and said in m->comment. n_kv_heads (0 = n_heads)
 * mean-pools the K/V heads as init_model_pool does. Returns MHAVIZ_OK,
 * MHAVIZ_EINPUT (no token, n_heads < 1, a subject that is not a token, or
 * n_kv_heads not dividing n_heads: err names the option) or MHAVIZ_ENOMEM.
 * On success the caller frees *m with init_model_free; on failure *m holds
 * nothing to free. */
int init_designed(const char *tokens, int n_heads, int n_kv_heads, const char *subject,
                  InitModel *m, char *err, size_t errlen);

/* Mean-pool m's K/V heads into n_kv (src/core/pool.c, as --kv-heads does) and
 * say so at the end of m->comment and of m->in.title, when there are. Returns what
 * pool_kv_heads returns; m is unchanged on failure. */
int init_model_pool(InitModel *m, int n_kv, char *err, size_t errlen);

/* The d_model a designed model of sentence `tokens` with n_heads heads gets
 * (0 when tokens has no token): the smallest multiple of n_heads that holds
 * x's layout and every head's coordinates (designed.c). */
int init_designed_d_model(const char *tokens, int n_heads);

/* Write m as an mhaviz input (JSON, "x@W" layout) to f, numbers with `digits`
 * significant digits (1..9; 9 round-trips a float). m->in.title, then
 * m->comment, when set, come first. Biases are written when
 * m->in.w.has_bias; "single_head" weights are not written.
 * Returns MHAVIZ_OK or MHAVIZ_EIO (err says the write failed). */
int init_write(FILE *f, const InitModel *m, int digits, char *err, size_t errlen);

#endif
