/* init.h — starter inputs: a seeded random model, and a JSON writer for any model.
 *
 * `mhaviz init` builds a fresh, untrained layer for a teacher's own sentence:
 * every weight drawn from a normal distribution with std 1/sqrt(d_model)
 * (so q, k and v keep roughly the scale of x), from a PRNG of our own
 * (splitmix64 + Box-Muller) so that the same seed gives the same file on
 * every run. Each matrix draws from its own stream of the seed, so the
 * layer depends only on the seed and the shapes (another sentence, same
 * layer), and a word's embedding only on the seed and the word. The writer
 * is also how the shipped samples are produced. */
#ifndef MHAVIZ_INIT_H
#define MHAVIZ_INIT_H

#include "input.h"

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

/* Write m as an mhaviz input (JSON, "x@W" layout) to f, numbers with `digits`
 * significant digits (1..9; 9 round-trips a float); m->in.title first, when
 * set. Biases are written when
 * m->in.w.has_bias; "single_head" weights are not written.
 * Returns MHAVIZ_OK or MHAVIZ_EIO (err says the write failed). */
int init_write(FILE *f, const InitModel *m, int digits, char *err, size_t errlen);

#endif
