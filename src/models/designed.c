/* designed.c — a designed model: the lesson's four heads (previous token,
 * subject, earlier mention, self) on any sentence, every weight chosen by
 * hand (samples/README.md explains them). */
#include "models/init.h"
#include "core/status.h"

#include <ctype.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

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

/* The designed layer's buffers (x, the weights, the title and comment),
 * zeroed; MHAVIZ_ENOMEM when one cannot be had (m is then freed by the caller). */
static int design_alloc(InitModel *m, const Design *g, int d, int H, int hd)
{
    MhaWeights *w = &m->in.w;
    const size_t dd = (size_t)d * (size_t)d;
    m->in.x = calloc((size_t)m->in.cfg.T * (size_t)d, sizeof(float)); /* (T, d_model) */
    w->W_q = calloc(dd, sizeof(float));                                /* (d_model, d_model) */
    w->W_k = calloc(dd, sizeof(float));
    w->W_v = calloc(dd, sizeof(float));
    w->W_o = calloc(dd, sizeof(float));
    w->b_q = calloc((size_t)d, sizeof(float));                         /* (d_model) */
    w->b_k = calloc((size_t)d, sizeof(float));
    w->b_v = calloc((size_t)d, sizeof(float));
    w->b_o = calloc((size_t)d, sizeof(float));
    m->comment = malloc(512);
    m->in.title = strdup("weights designed by hand, not trained");
    if (!m->in.x || !w->W_q || !w->W_k || !w->W_v || !w->W_o || !w->b_q || !w->b_k || !w->b_v ||
        !w->b_o || !m->comment || !m->in.title)
        return MHAVIZ_ENOMEM;
    snprintf(m->comment, 512,
             "Designed by mhaviz init --designed, every weight chosen by hand (samples/README.md "
             "explains the construction): d_model %d = %d heads of %d, the smallest that holds x "
             "(one-hot of %d words, 1, t, t^2) and every head's coordinates. Head h does job h mod 4: "
             "the previous token, the subject (%s, at %d), an earlier mention of the same word, itself.",
             d, H, hd, g->n_words, m->in.tokens[g->subject_at], g->subject_at);
    return MHAVIZ_OK;
}

#define AT(W, p, h, e) (W)[(size_t)(p) * d + (size_t)(h) * hd + (e)]

/* Head h's columns of W_q, W_k and W_v (d_model, d_model, head_dim hd):
 * job h mod 4, one block each, in the order samples/README.md explains
 * them, then the values every head shares. */
static void design_head(MhaWeights *w, const Design *g, int h, int d, int hd)
{
    const int V = g->n_words, ONE = V, POS = V + 1, POS2 = V + 2;
    /* scores are divided by sqrt(head_dim): every query weight is multiplied
     * by S so that a head's score is exactly the formula named */
    const float S = sqrtf((float)hd);
    const int P = (g->n_repeated + 1) / 2; /* the earlier-mention head's position coordinate */
    /* M: a repeated word first seen at i scores M - 2 i on itself, which
     * must beat 0 (a key with another word) by DUP_MATCH */
    const float M = g->dup_match;
    const float subj_key = SUBJ_NAME + SUBJ_EARLY * (float)g->subject_at;
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
            if (g->is_subject[v])
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
            int k = g->repeat[v];
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
        if (g->repeat[v] >= 0) {
            AT(w->W_v, v, h, g->repeat[v]) = 1;
            AT(w->W_v, v, h, g->n_repeated) = -1;
        }
    AT(w->W_v, ONE, h, g->n_repeated) = 1;
    AT(w->W_v, POS, h, g->n_repeated + 1) = 1;
}
#undef AT

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
    const int H = n_heads;
    const int hd = design_head_dim(&g, H), d = H * hd;
    m->in.cfg = (MhaConfig){T, d, H, H, hd, 1, {0}};
    if (design_alloc(m, &g, d, H, hd) != MHAVIZ_OK) {
        design_free(&g);
        init_model_free(m);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }

    /* x_t = word one-hot + (1, t, t^2) */
    const int ONE = g.n_words, POS = ONE + 1, POS2 = ONE + 2;
    for (int t = 0; t < T; t++) {
        float *x_t = m->in.x + (size_t)t * d;
        x_t[g.word[t]] = 1.0f;
        x_t[ONE] = 1.0f;
        x_t[POS] = (float)t;
        x_t[POS2] = (float)t * (float)t;
    }
    for (int h = 0; h < H; h++)
        design_head(&m->in.w, &g, h, d, hd);
    for (int p = 0; p < d; p++) /* W_o is the identity */
        m->in.w.W_o[(size_t)p * d + p] = 1;
    design_free(&g);
    if (n_kv_heads && (rc = init_model_pool(m, n_kv_heads, err, errlen)) != MHAVIZ_OK) {
        init_model_free(m);
        return rc;
    }
    return MHAVIZ_OK;
}
