/* generate.c — writes the shipped samples (run by `make samples`).
 *
 *   generate_samples DIR   ->  DIR/lesson1.json, lesson2_gqa.json, lesson3_mqa.json,
 *                              DIR/base_paper.json, DIR/random_init.json
 *
 * lesson1.json is designed by hand: every weight below is chosen so that
 * each head does one thing the lesson names (samples/README.md explains the
 * construction). lesson2 and lesson3 are lesson1 with its K/V heads
 * mean-pooled into 2 groups, then 1 (src/pool.c, as `--kv-heads` does).
 * base_paper.json and random_init.json are seeded random models, exactly
 * what `mhaviz init` writes for the same options. Same program, same bytes. */
#include "init.h"
#include "input.h"
#include "pool.h"
#include "status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- lesson 1: the sentence and the layout of x ------------------------ */

static const char *const SENTENCE[] = {
    "Mary", "gave", "the", "book", "to", "John", "because", "John", "had", "helped", "Mary",
};
enum { T = sizeof SENTENCE / sizeof SENTENCE[0] };

/* The words, in order of first appearance: dimension w of x is 1 when the
 * token is word w (token identity, one-hot). */
static const char *const WORDS[] = {
    "Mary", "gave", "the", "book", "to", "John", "because", "had", "helped",
};
enum { N_WORDS = sizeof WORDS / sizeof WORDS[0] };
enum { MARY = 0, JOHN = 5 };

/* Position: x[ONE] = 1, x[POS] = t, x[POS2] = t^2. Dimensions 12..15 stay 0. */
enum { ONE = 9, POS = 10, POS2 = 11 };
enum { D_MODEL = 16, N_HEADS = 4, HEAD_DIM = 4 };
/* Scores are divided by sqrt(HEAD_DIM) = 2: every query weight below is
 * multiplied by S = 2 so that a head's score is exactly the formula named. */
#define S 2.0f

/* The strengths (score units; a gap of 3 is about 20:1 after softmax). */
#define PREV_A 6.0f      /* head 0: score = -A (j - (i-1))^2 */
#define SUBJ_NAME 10.0f  /* head 1: score = 10 [j is a name] - 1.5 j */
#define SUBJ_EARLY 1.5f
#define DUP_MATCH 12.0f  /* head 2: score = 12 c_i c_j - 2 j (names) or + 4 j (other words) */
#define DUP_EARLY 2.0f
#define DUP_LATE 4.0f
#define SELF_LATE 3.5f   /* head 3: score = 3.5 j */

static int word_index(const char *s)
{
    for (int w = 0; w < N_WORDS; w++)
        if (strcmp(WORDS[w], s) == 0)
            return w;
    return -1;
}

/* Element (row p, column h*HEAD_DIM + e) of a (D_MODEL, D_MODEL) matrix. */
static float *at(float *W, int p, int h, int e)
{
    return &W[p * D_MODEL + h * HEAD_DIM + e];
}

static int build_lesson1(InitModel *m)
{
    memset(m, 0, sizeof *m);
    MhaInput *in = &m->in;
    in->cfg = (MhaConfig){T, D_MODEL, N_HEADS, N_HEADS, HEAD_DIM, 1};
    in->tokens = calloc(T, sizeof *in->tokens);
    in->x = calloc(T * D_MODEL, sizeof(float));
    MhaWeights *w = &in->w;
    w->W_q = calloc(D_MODEL * D_MODEL, sizeof(float));
    w->W_k = calloc(D_MODEL * D_MODEL, sizeof(float));
    w->W_v = calloc(D_MODEL * D_MODEL, sizeof(float));
    w->W_o = calloc(D_MODEL * D_MODEL, sizeof(float));
    w->b_q = calloc(D_MODEL, sizeof(float));
    w->b_k = calloc(D_MODEL, sizeof(float));
    w->b_v = calloc(D_MODEL, sizeof(float));
    w->b_o = calloc(D_MODEL, sizeof(float));
    if (!in->tokens || !in->x || !w->W_q || !w->W_k || !w->W_v || !w->W_o || !w->b_q ||
        !w->b_k || !w->b_v || !w->b_o)
        return MHAVIZ_ENOMEM;

    /* x_t = word one-hot + (1, t, t^2) */
    for (int t = 0; t < T; t++) {
        if (!(in->tokens[t] = strdup(SENTENCE[t])))
            return MHAVIZ_ENOMEM;
        float *x_t = in->x + t * D_MODEL;
        x_t[word_index(SENTENCE[t])] = 1.0f;
        x_t[ONE] = 1.0f;
        x_t[POS] = (float)t;
        x_t[POS2] = (float)(t * t);
    }
    float *Wq = w->W_q, *Wk = w->W_k;

    /* Head 0, previous token: score(i, j) = A (2 (i-1) j - j^2)
     *   = -A (j - (i-1))^2 + (terms of i alone, which softmax ignores).
     * coordinate 0: q = 2A (t - 1), k = t;  coordinate 1: q = -A, k = t^2 */
    *at(Wq, POS, 0, 0) = S * 2 * PREV_A;
    *at(Wq, ONE, 0, 0) = -S * 2 * PREV_A;
    *at(Wk, POS, 0, 0) = 1;
    *at(Wq, ONE, 0, 1) = -S * PREV_A;
    *at(Wk, POS2, 0, 1) = 1;

    /* Head 1, the subject (the first name): every query asks the same thing,
     * keys answer "I am a name, and early": coordinate 2: q = 1,
     * k = 10 [Mary or John] - 1.5 t */
    *at(Wq, ONE, 1, 2) = S;
    *at(Wk, MARY, 1, 2) = SUBJ_NAME;
    *at(Wk, JOHN, 1, 2) = SUBJ_NAME;
    *at(Wk, POS, 1, 2) = -SUBJ_EARLY;

    /* Head 2, duplicate token (an earlier mention of the current name):
     * coordinate 0, the name code c (Mary +1, John -1, other words 0):
     *   q = 12 c, k = c, so the same name scores +12 and the other -12;
     * coordinate 1, k = t: a name's query weighs it by -2 (prefer the
     *   earliest mention, i.e. not itself), another word's by +4 (nothing
     *   to look up: rest on the latest token, itself). */
    *at(Wq, MARY, 2, 0) = S * DUP_MATCH;
    *at(Wq, JOHN, 2, 0) = -S * DUP_MATCH;
    *at(Wk, MARY, 2, 0) = 1;
    *at(Wk, JOHN, 2, 0) = -1;
    *at(Wq, ONE, 2, 1) = S * DUP_LATE;
    *at(Wq, MARY, 2, 1) = -S * (DUP_EARLY + DUP_LATE);
    *at(Wq, JOHN, 2, 1) = -S * (DUP_EARLY + DUP_LATE);
    *at(Wk, POS, 2, 1) = 1;

    /* Head 3, self: prefer the latest visible key, the token itself.
     * coordinate 2: q = 3.5, k = t */
    *at(Wq, ONE, 3, 2) = S * SELF_LATE;
    *at(Wk, POS, 3, 2) = 1;

    /* Values: every head carries the same four facts about the token it
     * looks at: [is Mary, is John, is another word, its position t].
     * W_o is the identity, so output dims 4h..4h+3 say what head h found. */
    for (int h = 0; h < N_HEADS; h++) {
        *at(w->W_v, MARY, h, 0) = 1;
        *at(w->W_v, JOHN, h, 1) = 1;
        *at(w->W_v, ONE, h, 2) = 1;
        *at(w->W_v, MARY, h, 2) = -1;
        *at(w->W_v, JOHN, h, 2) = -1;
        *at(w->W_v, POS, h, 3) = 1;
    }
    for (int p = 0; p < D_MODEL; p++)
        w->W_o[p * D_MODEL + p] = 1;
    return MHAVIZ_OK;
}

/* ---- writing ------------------------------------------------------------ */

/* Set m's title (shown under the overview's title) to a copy of title. */
static int set_title(InitModel *m, const char *title)
{
    free(m->in.title);
    m->in.title = strdup(title);
    return m->in.title ? MHAVIZ_OK : MHAVIZ_ENOMEM;
}

static int write_model(const char *dir, const char *name, const InitModel *m, int digits)
{
    char path[4096], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "generate_samples: cannot write %s\n", path);
        return MHAVIZ_EIO;
    }
    int rc = init_write(f, m, digits, err, sizeof err);
    if (fclose(f) != 0 && rc == MHAVIZ_OK)
        rc = MHAVIZ_EIO;
    if (rc != MHAVIZ_OK)
        fprintf(stderr, "generate_samples: %s: %s\n", path, err);
    return rc;
}

/* A random model exactly as `mhaviz init` makes it (titled "random,
 * untrained weights, seed N"), written to dir/name. */
static int write_random(const char *dir, const char *name, const InitOptions *o, int digits)
{
    InitModel m;
    char err[MHAVIZ_ERRLEN];
    int rc = init_model(o, &m, err, sizeof err);
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "generate_samples: %s: %s\n", name, err);
        return rc;
    }
    rc = write_model(dir, name, &m, digits);
    init_model_free(&m);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc != 2) {
        fprintf(stderr, "usage: generate_samples DIR\n");
        return MHAVIZ_EUSAGE;
    }
    const char *dir = argv[1];
    char err[MHAVIZ_ERRLEN];
    InitModel m;

    /* Lesson 1 (MHA), then the same layer with 2 K/V groups, then 1. */
    int rc = build_lesson1(&m);
    if (rc == MHAVIZ_OK && (rc = set_title(&m, "lesson 1: four heads built by hand, one pattern each")) == MHAVIZ_OK)
        rc = write_model(dir, "lesson1.json", &m, 6);
    if (rc == MHAVIZ_OK && (rc = pool_kv_heads(&m.in.cfg, &m.in.w, 2, err, sizeof err)) == MHAVIZ_OK &&
        (rc = set_title(&m, "lesson 2: lesson 1's K/V heads mean-pooled into 2, not retrained")) == MHAVIZ_OK)
        rc = write_model(dir, "lesson2_gqa.json", &m, 6);
    if (rc == MHAVIZ_OK && (rc = pool_kv_heads(&m.in.cfg, &m.in.w, 1, err, sizeof err)) == MHAVIZ_OK &&
        (rc = set_title(&m, "lesson 3: lesson 1's K/V heads mean-pooled into 1, not retrained")) == MHAVIZ_OK)
        rc = write_model(dir, "lesson3_mqa.json", &m, 6);
    init_model_free(&m);
    if (rc != MHAVIZ_OK)
        return rc;

    /* The original Transformer's base shape: d_model 512, 8 heads of 64,
     * embeddings + sinusoidal positions, as in Vaswani et al. 2017. Two
     * digits per number keep the file small (the cost table needs shapes). */
    const InitOptions base = {"the animal didn't cross the street because it was too tired",
                              512, 8, 0, 2017, 1};
    if ((rc = write_random(dir, "base_paper.json", &base, 2)) != MHAVIZ_OK)
        return rc;

    /* Lesson 1's sentence and shape, before any training. */
    const InitOptions fresh = {"Mary gave the book to John because John had helped Mary",
                               16, 4, 0, 1, 1};
    return write_random(dir, "random_init.json", &fresh, 4);
}
