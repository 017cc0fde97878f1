/* init.c — a seeded random starter model, and the JSON writer for models. */
#include "init.h"
#include "status.h"

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

int init_tokens_split(const char *text, char ***tokens, int *T, char *err, size_t errlen)
{
    *tokens = NULL;
    *T = 0;
    int n = 0;
    for (const char *p = text; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        n++;
        while (*p && !isspace((unsigned char)*p))
            p++;
    }
    if (n == 0) {
        snprintf(err, errlen, "--tokens: no token in \"%s\" (tokens are separated by spaces)", text);
        return MHAVIZ_EINPUT;
    }
    char **out = calloc((size_t)n, sizeof *out); /* (T) */
    if (!out)
        goto oom;
    int t = 0;
    for (const char *p = text; *p;) {
        while (*p && isspace((unsigned char)*p))
            p++;
        if (!*p)
            break;
        const char *start = p;
        while (*p && !isspace((unsigned char)*p))
            p++;
        size_t len = (size_t)(p - start);
        out[t] = malloc(len + 1);
        if (!out[t])
            goto oom;
        memcpy(out[t], start, len);
        out[t][len] = '\0';
        t++;
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

/* n numbers drawn from N(0, std^2), in order, from stream `id` of `seed`. */
static float *random_normal(uint64_t seed, uint64_t id, size_t n, double std)
{
    InitRng r;
    init_rng_seed(&r, stream_seed(seed, id));
    float *a = malloc(n * sizeof *a); /* (n) */
    if (a)
        for (size_t i = 0; i < n; i++)
            a[i] = (float)(std * init_rng_normal(&r));
    return a;
}

/* Stream ids of the matrices (words use word_id). */
enum { STREAM_X = 1, STREAM_W_Q, STREAM_W_K, STREAM_W_V, STREAM_W_O };

void init_model_free(InitModel *m)
{
    input_free(&m->in);
    init_tokens_free(m->vocab, m->n_vocab);
    free(m->emb);
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
            float *row = random_normal(o->seed, word_id(m->vocab[v]), d, 1.0); /* (d_model) */
            if (!row)
                goto oom;
            memcpy(m->emb + (size_t)v * d, row, d * sizeof(float));
            free(row);
        }
        if (!(m->in.x = malloc(T * d * sizeof(float)))) /* (T, d_model) */
            goto oom;
        for (size_t t = 0; t < T; t++) {
            int v = vocab_find(m->vocab, m->n_vocab, m->in.tokens[t]);
            memcpy(m->in.x + t * d, m->emb + (size_t)v * d, d * sizeof(float));
        }
        input_add_positions(m->in.x, c->T, c->d_model);
    } else if (!(m->in.x = random_normal(o->seed, STREAM_X, T * d, 1.0))) { /* x ~ N(0, 1) */
        goto oom;
    }
    w->W_q = random_normal(o->seed, STREAM_W_Q, d * d, std);
    w->W_k = random_normal(o->seed, STREAM_W_K, d * kv, std);
    w->W_v = random_normal(o->seed, STREAM_W_V, d * kv, std);
    w->W_o = random_normal(o->seed, STREAM_W_O, d * d, std);
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

/* ---- the JSON writer --------------------------------------------------- */

/* s as a JSON string: quotes, backslashes and control characters escaped;
 * other bytes (UTF-8) as they are. */
static void write_string(FILE *f, const char *s)
{
    fputc('"', f);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        if (*p == '"' || *p == '\\')
            fprintf(f, "\\%c", *p);
        else if (*p == '\n')
            fputs("\\n", f);
        else if (*p == '\t')
            fputs("\\t", f);
        else if (*p < 0x20)
            fprintf(f, "\\u%04x", *p);
        else
            fputc(*p, f);
    }
    fputc('"', f);
}

/* One row of n numbers: [a, b, c]; rows wider than 64 numbers without the
 * spaces (a 512-wide layer is then a seventh smaller). */
static void write_row(FILE *f, const float *a, size_t n, int digits)
{
    const char *sep = n > 64 ? ",%.*g" : ", %.*g";
    fputc('[', f);
    for (size_t j = 0; j < n; j++)
        fprintf(f, j ? sep : "%.*g", digits, (double)a[j]);
    fputc(']', f);
}

/* "key": [[...], [...]] with one row per line, indented by `indent`. */
static void write_matrix(FILE *f, const char *indent, const char *key, const float *a,
                         size_t rows, size_t cols, int digits)
{
    fprintf(f, ",\n%s\"%s\": [\n", indent, key);
    for (size_t r = 0; r < rows; r++) {
        fprintf(f, "%s  ", indent);
        write_row(f, a + r * cols, cols, digits);
        fputs(r + 1 < rows ? ",\n" : "\n", f);
    }
    fprintf(f, "%s]", indent);
}

static void write_vector(FILE *f, const char *indent, const char *key, const float *a,
                         size_t n, int digits)
{
    fprintf(f, ",\n%s\"%s\": ", indent, key);
    write_row(f, a, n, digits);
}

/* The projections of w, d_model rows each; kv columns for W_k and W_v. */
static void write_weights(FILE *f, const char *indent, const MhaWeights *w, size_t d,
                          size_t kv, int digits)
{
    write_matrix(f, indent, "W_q", w->W_q, d, d, digits);
    write_matrix(f, indent, "W_k", w->W_k, d, kv, digits);
    write_matrix(f, indent, "W_v", w->W_v, d, kv, digits);
    write_matrix(f, indent, "W_o", w->W_o, d, d, digits);
    if (w->has_bias) {
        write_vector(f, indent, "b_q", w->b_q, d, digits);
        write_vector(f, indent, "b_k", w->b_k, kv, digits);
        write_vector(f, indent, "b_v", w->b_v, kv, digits);
        write_vector(f, indent, "b_o", w->b_o, d, digits);
    }
}

int init_write(FILE *f, const InitModel *m, int digits, char *err, size_t errlen)
{
    const MhaConfig *c = &m->in.cfg;
    const size_t T = (size_t)c->T, d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c);
    if (digits < 1)
        digits = 1;
    if (digits > 9)
        digits = 9;

    fputs("{\n", f);
    if (m->in.title) {
        fputs("  \"title\": ", f);
        write_string(f, m->in.title);
        fputs(",\n", f);
    }
    fputs("  \"tokens\": [", f);
    for (size_t t = 0; t < T; t++) {
        if (t)
            fputs(", ", f);
        write_string(f, m->in.tokens[t]);
    }
    fprintf(f, "],\n  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"n_kv_heads\": %d,\n"
               "  \"causal\": %s",
            c->d_model, c->n_heads, c->n_kv_heads, c->causal ? "true" : "false");
    if (m->emb) {
        /* positions: the format's default, "sinusoidal" */
        fputs(",\n  \"embeddings\": {\n", f);
        for (int v = 0; v < m->n_vocab; v++) {
            fputs("    ", f);
            write_string(f, m->vocab[v]);
            fputs(": ", f);
            write_row(f, m->emb + (size_t)v * d, d, digits);
            fputs(v + 1 < m->n_vocab ? ",\n" : "\n", f);
        }
        fputs("  }", f);
    } else {
        write_matrix(f, "  ", "x", m->in.x, T, d, digits);
    }
    write_weights(f, "  ", &m->in.w, d, kv, digits);
    fputs("\n}\n", f);
    if (fflush(f) != 0 || ferror(f)) {
        snprintf(err, errlen, "write failed (disk full, or output closed?)");
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}
