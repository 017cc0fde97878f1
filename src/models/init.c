/* init.c — a seeded random starter model (designed.c: a designed one;
 * init_write.c: either written as JSON). */
#include "models/init.h"
#include "core/pool.h"
#include "core/status.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ---- PRNG: splitmix64 (Steele, Lea, Flood 2014) + Box-Muller ---------- */

void init_rng_seed(InitRng *r, uint64_t seed)
{
    r->state = seed;
    r->has_spare = 0;
    r->spare = 0.0;
}

uint64_t init_rng_u64(InitRng *r)
{
    uint64_t z = (r->state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
}

double init_rng_uniform(InitRng *r)
{
    /* the top 53 bits, plus one so that 0 never comes out (log(0) below) */
    return (double)((init_rng_u64(r) >> 11) + 1) * 0x1.0p-53;
}

double init_rng_normal(InitRng *r)
{
    if (r->has_spare) {
        r->has_spare = 0;
        return r->spare;
    }
    /* Box-Muller: two uniforms give two independent standard normals. */
    const double two_pi = 6.283185307179586;
    double radius = sqrt(-2.0 * log(init_rng_uniform(r)));
    double angle = two_pi * init_rng_uniform(r);
    r->spare = radius * sin(angle);
    r->has_spare = 1;
    return radius * cos(angle);
}

/* A seed for stream `id` of the generator seeded with `seed`: each matrix
 * and each word draws from its own stream, so the layer depends only on the
 * seed and the shapes (not on the sentence), and a word's embedding only on
 * the seed and the word. */
static uint64_t stream_seed(uint64_t seed, uint64_t id)
{
    InitRng r;
    init_rng_seed(&r, seed ^ (id * 0xd1342543de82ef95ULL));
    return init_rng_u64(&r);
}

/* FNV-1a, 64 bits: a word's stream id. */
static uint64_t word_id(const char *s)
{
    uint64_t h = 0xcbf29ce484222325ULL;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        h = (h ^ *p) * 0x100000001b3ULL;
    return h;
}

/* ---- tokens ------------------------------------------------------------ */

void init_tokens_free(char **tokens, int T)
{
    if (!tokens)
        return;
    for (int t = 0; t < T; t++)
        free(tokens[t]);
    free(tokens);
}

/* The next token at *p (tokens are separated by white space): its start,
 * its length in *len, *p moved past it; NULL when none is left. */
static const char *next_token(const char **p, size_t *len)
{
    const char *s = *p;
    while (*s && isspace((unsigned char)*s))
        s++;
    if (!*s)
        return NULL;
    const char *start = s;
    while (*s && !isspace((unsigned char)*s))
        s++;
    *p = s;
    *len = (size_t)(s - start);
    return start;
}

int init_tokens_split(const char *text, char ***tokens, int *T, char *err, size_t errlen)
{
    *tokens = NULL;
    *T = 0;
    int n = 0;
    size_t len;
    for (const char *p = text; next_token(&p, &len);)
        n++;
    if (n == 0) {
        snprintf(err, errlen, "--tokens: no token in \"%s\" (tokens are separated by spaces)", text);
        return MHAVIZ_EINPUT;
    }
    char **out = calloc((size_t)n, sizeof *out); /* (T) */
    if (!out)
        goto oom;
    const char *p = text, *start;
    for (int t = 0; (start = next_token(&p, &len)); t++) {
        out[t] = malloc(len + 1);
        if (!out[t])
            goto oom;
        memcpy(out[t], start, len);
        out[t][len] = '\0';
    }
    *tokens = out;
    *T = n;
    return MHAVIZ_OK;
oom:
    init_tokens_free(out, n);
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

/* ---- a random starter model -------------------------------------------- */

float *init_random_normal(uint64_t seed, InitStream id, size_t n, double std)
{
    InitRng r;
    init_rng_seed(&r, stream_seed(seed, (uint64_t)id));
    float *a = malloc(n * sizeof *a); /* (n) */
    if (a)
        for (size_t i = 0; i < n; i++)
            a[i] = (float)(std * init_rng_normal(&r));
    return a;
}

/* A word's embedding (d) drawn from N(0, 1) on the word's own stream. */
static float *word_embedding(uint64_t seed, const char *word, size_t d)
{
    InitRng r;
    init_rng_seed(&r, stream_seed(seed, word_id(word)));
    float *a = malloc(d * sizeof *a); /* (d) */
    if (a)
        for (size_t i = 0; i < d; i++)
            a[i] = (float)init_rng_normal(&r);
    return a;
}

float *init_random_x(uint64_t seed, char *const *tokens, int T, int d_model)
{
    const size_t d = (size_t)d_model;
    float *x = malloc((size_t)T * d * sizeof *x); /* (T, d_model) */
    for (int t = 0; x && t < T; t++) {
        float *e = word_embedding(seed, tokens[t], d); /* (d_model) */
        if (!e) {
            free(x);
            return NULL;
        }
        memcpy(x + (size_t)t * d, e, d * sizeof *e);
        free(e);
    }
    if (x)
        input_add_positions(x, T, d_model);
    return x;
}

void init_model_free(InitModel *m)
{
    input_free(&m->in);
    init_tokens_free(m->vocab, m->n_vocab);
    free(m->emb);
    free(m->comment);
    memset(m, 0, sizeof *m);
}

/* Index of token s in vocab[0..n), or -1. */
static int vocab_find(char *const *vocab, int n, const char *s)
{
    for (int v = 0; v < n; v++)
        if (strcmp(vocab[v], s) == 0)
            return v;
    return -1;
}

int init_model(const InitOptions *o, InitModel *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    const int n_kv = o->n_kv_heads ? o->n_kv_heads : o->n_heads;
    if (o->d_model < 1 || o->n_heads < 1 || o->d_model % o->n_heads != 0) {
        snprintf(err, errlen, "--heads %d must divide --d-model %d", o->n_heads, o->d_model);
        return MHAVIZ_EINPUT;
    }
    if (n_kv < 1 || o->n_heads % n_kv != 0) {
        snprintf(err, errlen, "--kv-heads %d must divide --heads %d", n_kv, o->n_heads);
        return MHAVIZ_EINPUT;
    }
    int rc = init_tokens_split(o->tokens, &m->in.tokens, &m->in.cfg.T, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    char title[64];
    snprintf(title, sizeof title, "random, untrained weights (seed %llu)", (unsigned long long)o->seed);
    if (!(m->in.title = strdup(title)))
        goto oom;

    MhaConfig *c = &m->in.cfg;
    c->d_model = o->d_model;
    c->n_heads = o->n_heads;
    c->n_kv_heads = n_kv;
    c->head_dim = o->d_model / o->n_heads;
    c->causal = 1;
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    const double std = 1.0 / sqrt((double)d);

    MhaWeights *w = &m->in.w;
    if (o->embeddings) {
        m->vocab = calloc(T, sizeof *m->vocab); /* (at most T) */
        if (!m->vocab)
            goto oom;
        for (size_t t = 0; t < T; t++)
            if (vocab_find(m->vocab, m->n_vocab, m->in.tokens[t]) < 0) {
                if (!(m->vocab[m->n_vocab] = strdup(m->in.tokens[t])))
                    goto oom;
                m->n_vocab++;
            }
        /* embeddings[v] ~ N(0, 1): unit-scale hidden states, like x */
        if (!(m->emb = malloc((size_t)m->n_vocab * d * sizeof(float)))) /* (n_vocab, d_model) */
            goto oom;
        for (int v = 0; v < m->n_vocab; v++) {
            float *row = word_embedding(o->seed, m->vocab[v], d); /* (d_model) */
            if (!row)
                goto oom;
            memcpy(m->emb + (size_t)v * d, row, d * sizeof(float));
            free(row);
        }
        if (!(m->in.x = init_random_x(o->seed, m->in.tokens, c->T, c->d_model)))
            goto oom;
    } else if (!(m->in.x = init_random_normal(o->seed, INIT_STREAM_X, T * d, 1.0))) { /* x ~ N(0, 1) */
        goto oom;
    }
    w->W_q = init_random_normal(o->seed, INIT_STREAM_W_Q, d * d, std);
    w->W_k = init_random_normal(o->seed, INIT_STREAM_W_K, d * kv, std);
    w->W_v = init_random_normal(o->seed, INIT_STREAM_W_V, d * kv, std);
    w->W_o = init_random_normal(o->seed, INIT_STREAM_W_O, d * d, std);
    w->b_q = calloc(d, sizeof(float));
    w->b_k = calloc(kv, sizeof(float));
    w->b_v = calloc(kv, sizeof(float));
    w->b_o = calloc(d, sizeof(float));
    if (!w->W_q || !w->W_k || !w->W_v || !w->W_o || !w->b_q || !w->b_k || !w->b_v || !w->b_o)
        goto oom;
    return MHAVIZ_OK;
oom:
    init_model_free(m);
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

int init_model_pool(InitModel *m, int n_kv, char *err, size_t errlen)
{
    const int n_from = m->in.cfg.n_kv_heads;
    int rc = pool_kv_heads(&m->in.cfg, &m->in.w, n_kv, err, errlen);
    if (rc != MHAVIZ_OK || n_kv == n_from)
        return rc;
    if (m->in.title) { /* the pictures say it too, from the first K/V heads (pooled twice: once) */
        static const char said[] = " \xc2\xb7 K/V heads mean-pooled from ";
        char *before = strstr(m->in.title, said), line[96];
        int n_first = n_from;
        if (before && sscanf(before + strlen(said), "%d", &n_first) == 1)
            *before = '\0';
        snprintf(line, sizeof line, "%s%d into %d, not retrained", said, n_first, n_kv);
        char *t = realloc(m->in.title, strlen(m->in.title) + strlen(line) + 1);
        if (t)
            m->in.title = strcat(t, line);
    }
    if (!m->comment)
        return MHAVIZ_OK;
    char note[128];
    snprintf(note, sizeof note, "Then its %d K/V heads were mean-pooled into %d (as --kv-heads %d does).",
             n_from, n_kv, n_kv);
    size_t len = strlen(m->comment) + 1 + strlen(note) + 1;
    char *c = realloc(m->comment, len);
    if (!c) /* the note is lost, the pooled model stands */
        return MHAVIZ_OK;
    strcat(strcat(c, " "), note);
    m->comment = c;
    return MHAVIZ_OK;
}
