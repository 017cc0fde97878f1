/* init.c — a seeded random starter model, a designed one, and the JSON writer for models. */
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

/* ---- a designed model: the lesson's heads on any sentence -------------- */

/* x_t = one-hot of the token's word (words numbered in order of first
 * appearance, dims 0 .. n_words-1), then a constant 1, the position t and
 * t^2; the remaining dims stay 0. Each head reads only the dims its weights
 * name (samples/README.md walks through lesson 1's numbers).
 *
 * The words that come back (m of them, "repeated words" r_0 .. r_m-1 in
 * order of first appearance) get a code for the earlier-mention head: r_k
 * is +1 (k even) or -1 (k odd) in code coordinate k / 2, so the same word
 * scores +1, the other word of its pair -1, any other word 0. */
typedef struct {
    int n_words;     /* distinct words */
    int *word;       /* (T) the word of each token */
    int *first;      /* (n_words) position of each word's first mention */
    int *repeat;     /* (n_words) k when the word is repeated word r_k, else -1 */
    int n_repeated;  /* m */
    int *is_subject; /* (n_words) 1 for a word head 1 looks for */
    int subject_at;  /* the earliest mention of a subject word */
    float dup_match; /* M, the earlier-mention head's match strength (design_words) */
} Design;

/* The strengths, in score units (a gap of 3 is about 20 : 1 after softmax,
 * a gap of 6 about 400 : 1). */
#define PREV_A 6.0f      /* previous token: score = -6 (j - (i-1))^2 */
#define SUBJ_NAME 10.0f  /* subject: score = 10 at its first mention s, -1.5 j elsewhere */
#define SUBJ_EARLY 1.5f
#define DUP_GAP 4.0f     /* earlier mention: score = M c_i c_j - 2 j (repeated words) or + 4 j, */
#define DUP_EARLY 2.0f   /* M just large enough that the same word wins by DUP_GAP */
#define DUP_LATE 4.0f
#define SELF_LATE 3.5f   /* self: score = 3.5 j */

enum { JOB_PREVIOUS, JOB_SUBJECT, JOB_DUPLICATE, JOB_SELF, N_JOBS };

/* What head_dim must hold: the previous-token head's coordinates 0-1, the
 * subject's and self's coordinate 2, the earlier-mention head's codes and
 * its position coordinate (ceil(m / 2) + 1), and the values: one
 * coordinate per repeated word, "another word", and the position (m + 2,
 * which covers the codes). Then d_model = n_heads * head_dim must hold x. */
static int design_head_dim(const Design *g, int n_heads)
{
    int need = g->n_repeated + 2 > 3 ? g->n_repeated + 2 : 3;
    int x_dims = g->n_words + 3; /* one-hot, 1, t, t^2 */
    if ((x_dims + n_heads - 1) / n_heads > need)
        need = (x_dims + n_heads - 1) / n_heads;
    return need;
}

static void design_free(Design *g)
{
    free(g->word);
    free(g->first);
    free(g->repeat);
    free(g->is_subject);
}

/* The number of the word s among g's words so far, or g->n_words. */
static int design_find(const Design *g, char *const *tokens, const char *s)
{
    int w = 0;
    while (w < g->n_words && strcmp(tokens[g->first[w]], s) != 0)
        w++;
    return w;
}

/* Number the words of tokens (T) into g; subject names head 1's words,
 * separated by spaces (NULL: the first token's). Returns MHAVIZ_OK,
 * MHAVIZ_EINPUT (a subject word is not a token) or MHAVIZ_ENOMEM. */
static int design_words(char *const *tokens, int T, const char *subject, Design *g,
                        char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    g->word = malloc((size_t)T * sizeof *g->word);       /* (T) */
    g->first = malloc((size_t)T * sizeof *g->first);     /* (at most T) */
    g->repeat = malloc((size_t)T * sizeof *g->repeat);   /* (at most T) */
    g->is_subject = calloc((size_t)T, sizeof *g->is_subject); /* (at most T) */
    if (!g->word || !g->first || !g->repeat || !g->is_subject) {
        design_free(g);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    for (int t = 0; t < T; t++) {
        int w = design_find(g, tokens, tokens[t]);
        if (w == g->n_words) {
            g->first[w] = t;
            g->repeat[w] = -1;
            g->n_words++;
        } else if (g->repeat[w] < 0) {
            g->repeat[w] = 0; /* numbered below, in order of first mention */
        }
        g->word[t] = w;
    }
    for (int w = 0; w < g->n_words; w++)
        if (g->repeat[w] == 0)
            g->repeat[w] = g->n_repeated++;

    /* M: at the first mention i of a repeated word, itself scores M - 2 i;
     * the best other key is the earliest j0 < i whose word's code does not
     * oppose it (c_i c_j0 = 0), scoring -2 j0. M = 2 (i - j0) + DUP_GAP,
     * the largest over such i, lets the word win there and its later
     * mentions find it (lesson 1: John at 5, "gave" at 1: M = 12). */
    for (int w = 0; w < g->n_words; w++) {
        int i = g->first[w], k = g->repeat[w];
        for (int j = 0; k >= 0 && j < i; j++) {
            int kj = g->repeat[g->word[j]];
            if (kj < 0 || kj / 2 != k / 2) { /* code product 0 */
                float need = DUP_EARLY * (float)(i - j) + DUP_GAP;
                if (need > g->dup_match)
                    g->dup_match = need;
                break;
            }
        }
    }

    /* the subject: the first token's word, or each word named */
    char **names = NULL;
    int n_names = 0, rc = MHAVIZ_OK;
    if (!subject) {
        g->is_subject[g->word[0]] = 1;
    } else if ((rc = init_tokens_split(subject, &names, &n_names, err, errlen)) != MHAVIZ_OK) {
        if (rc == MHAVIZ_EINPUT)
            snprintf(err, errlen, "--subject \"%s\": no word (name one of the tokens)", subject);
        design_free(g);
        return rc;
    }
    for (int n = 0; n < n_names; n++) {
        int w = design_find(g, tokens, names[n]);
        if (w == g->n_words) {
            snprintf(err, errlen, "--subject: \"%s\" is not one of the tokens", names[n]);
            init_tokens_free(names, n_names);
            design_free(g);
            return MHAVIZ_EINPUT;
        }
        g->is_subject[w] = 1;
    }
    init_tokens_free(names, n_names);
    g->subject_at = T;
    for (int w = 0; w < g->n_words; w++)
        if (g->is_subject[w] && g->first[w] < g->subject_at)
            g->subject_at = g->first[w];
    return MHAVIZ_OK;
}

int init_designed_d_model(const char *tokens, int n_heads)
{
    char **tok, err[MHAVIZ_ERRLEN];
    int T;
    Design g;
    if (n_heads < 1 || init_tokens_split(tokens, &tok, &T, err, sizeof err) != MHAVIZ_OK)
        return 0;
    int d = 0;
    if (design_words(tok, T, NULL, &g, err, sizeof err) == MHAVIZ_OK) {
        d = n_heads * design_head_dim(&g, n_heads);
        design_free(&g);
    }
    init_tokens_free(tok, T);
    return d;
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

int init_designed(const char *tokens, int n_heads, int n_kv_heads, const char *subject,
                  InitModel *m, char *err, size_t errlen)
{
    memset(m, 0, sizeof *m);
    if (n_heads < 1) {
        snprintf(err, errlen, "--heads %d: a designed layer needs at least one head", n_heads);
        return MHAVIZ_EINPUT;
    }
    if (n_kv_heads < 0 || (n_kv_heads && n_heads % n_kv_heads != 0)) {
        snprintf(err, errlen, "--kv-heads %d must divide --heads %d", n_kv_heads, n_heads);
        return MHAVIZ_EINPUT;
    }
    Design g = {0};
    int rc = init_tokens_split(tokens, &m->in.tokens, &m->in.cfg.T, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const int T = m->in.cfg.T;
    if ((rc = design_words(m->in.tokens, T, subject, &g, err, errlen)) != MHAVIZ_OK) {
        init_model_free(m);
        return rc;
    }
    MhaConfig *c = &m->in.cfg;
    const int H = n_heads;
    const int hd = design_head_dim(&g, H), d = H * hd;
    *c = (MhaConfig){T, d, H, H, hd, 1};
    const int V = g.n_words, ONE = V, POS = V + 1, POS2 = V + 2;
    /* scores are divided by sqrt(head_dim): every query weight is multiplied
     * by S so that a head's score is exactly the formula named */
    const float S = sqrtf((float)hd);
    const int P = (g.n_repeated + 1) / 2; /* the earlier-mention head's position coordinate */
    /* M: a repeated word first seen at i scores M - 2 i on itself, which
     * must beat 0 (a key with another word) by DUP_MATCH */
    const float M = g.dup_match;
    const float subj_key = SUBJ_NAME + SUBJ_EARLY * (float)g.subject_at;

    MhaWeights *w = &m->in.w;
    const size_t dd = (size_t)d * (size_t)d;
    m->in.x = calloc((size_t)T * (size_t)d, sizeof(float)); /* (T, d_model) */
    w->W_q = calloc(dd, sizeof(float));                      /* (d_model, d_model) */
    w->W_k = calloc(dd, sizeof(float));
    w->W_v = calloc(dd, sizeof(float));
    w->W_o = calloc(dd, sizeof(float));
    w->b_q = calloc((size_t)d, sizeof(float));               /* (d_model) */
    w->b_k = calloc((size_t)d, sizeof(float));
    w->b_v = calloc((size_t)d, sizeof(float));
    w->b_o = calloc((size_t)d, sizeof(float));
    m->comment = malloc(512);
    m->in.title = strdup("weights designed by hand, not trained");
    if (!m->in.x || !w->W_q || !w->W_k || !w->W_v || !w->W_o || !w->b_q || !w->b_k || !w->b_v ||
        !w->b_o || !m->comment || !m->in.title)
        goto oom;
    snprintf(m->comment, 512,
             "Designed by mhaviz init --designed, every weight chosen by hand (samples/README.md "
             "explains the construction): d_model %d = %d heads of %d, the smallest that holds x "
             "(one-hot of %d words, 1, t, t^2) and every head's coordinates. Head h does job h mod 4: "
             "the previous token, the subject (%s, at %d), an earlier mention of the same word, itself.",
             d, H, hd, V, m->in.tokens[g.subject_at], g.subject_at);

    /* x_t = word one-hot + (1, t, t^2) */
    for (int t = 0; t < T; t++) {
        float *x_t = m->in.x + (size_t)t * d;
        x_t[g.word[t]] = 1.0f;
        x_t[ONE] = 1.0f;
        x_t[POS] = (float)t;
        x_t[POS2] = (float)t * (float)t;
    }
#define AT(W, p, h, e) (W)[(size_t)(p) * d + (size_t)(h) * hd + (e)]
    for (int h = 0; h < H; h++) {
        float *Wq = w->W_q, *Wk = w->W_k;
        switch (h % N_JOBS) {
        case JOB_PREVIOUS:
            /* score(i, j) = A (2 (i-1) j - j^2) = -A (j - (i-1))^2 + (terms of i
             * alone, which softmax ignores). coordinate 0: q = 2A (t - 1),
             * k = t; coordinate 1: q = -A, k = t^2 */
            AT(Wq, POS, h, 0) = S * 2 * PREV_A;
            AT(Wq, ONE, h, 0) = -S * 2 * PREV_A;
            AT(Wk, POS, h, 0) = 1;
            AT(Wq, ONE, h, 1) = -S * PREV_A;
            AT(Wk, POS2, h, 1) = 1;
            break;
        case JOB_SUBJECT:
            /* every query asks the same thing; keys answer "I am the subject,
             * and early": coordinate 2: q = 1, k = (10 + 1.5 s) [subject] - 1.5 t,
             * s = the subject's earliest mention, which then scores 10, every
             * other key less */
            AT(Wq, ONE, h, 2) = S;
            for (int v = 0; v < V; v++)
                if (g.is_subject[v])
                    AT(Wk, v, h, 2) = subj_key;
            AT(Wk, POS, h, 2) = -SUBJ_EARLY;
            break;
        case JOB_DUPLICATE:
            /* codes: q = M c, k = c, so the same word scores +M, the other
             * word of its pair -M; coordinate P, k = t: a repeated word's
             * query weighs it by -2 (prefer the earliest mention, not
             * itself), another word's by +4 (nothing to look up: rest on the
             * latest key, itself) */
            for (int v = 0; v < V; v++) {
                int k = g.repeat[v];
                if (k < 0)
                    continue;
                float code = k % 2 == 0 ? 1.0f : -1.0f;
                AT(Wq, v, h, k / 2) = S * M * code;
                AT(Wk, v, h, k / 2) = code;
                AT(Wq, v, h, P) = -S * (DUP_EARLY + DUP_LATE);
            }
            AT(Wq, ONE, h, P) = S * DUP_LATE;
            AT(Wk, POS, h, P) = 1;
            break;
        case JOB_SELF:
            /* prefer the latest visible key, the token itself.
             * coordinate 2: q = 3.5, k = t */
            AT(Wq, ONE, h, 2) = S * SELF_LATE;
            AT(Wk, POS, h, 2) = 1;
            break;
        }
        /* values: [is r_0, ..., is r_m-1, is another word, position t];
         * W_o is the identity, so output dims h*hd .. say what head h found */
        for (int v = 0; v < V; v++)
            if (g.repeat[v] >= 0) {
                AT(w->W_v, v, h, g.repeat[v]) = 1;
                AT(w->W_v, v, h, g.n_repeated) = -1;
            }
        AT(w->W_v, ONE, h, g.n_repeated) = 1;
        AT(w->W_v, POS, h, g.n_repeated + 1) = 1;
    }
#undef AT
    for (int p = 0; p < d; p++)
        w->W_o[(size_t)p * d + p] = 1;
    design_free(&g);
    if (n_kv_heads && (rc = init_model_pool(m, n_kv_heads, err, errlen)) != MHAVIZ_OK) {
        init_model_free(m);
        return rc;
    }
    return MHAVIZ_OK;
oom:
    design_free(&g);
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
    if (m->comment) {
        fputs("  \"comment\": ", f);
        write_string(f, m->comment);
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
