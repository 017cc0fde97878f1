/* check_pull.c — the pulls of the heads on one query (pull.h).
 *
 * The identity wide(i, j) = (1/sqrt(h)) sum_h score_h(i, j) is checked on
 * numpy's float64 forward pass (tests/reference.py computes the wide head
 * as one head of width d_model, never as a sum) and on mhaviz's own passes
 * over the samples; the row outcomes and captions on small score tables
 * whose softmax is derived in the comments. */
#include "support.h"
#include "io/input.h"
#include "core/mha.h"
#include "core/pull.h"
#include "text/pull_caption.h"
#include "text/query.h"
#include "pictures/pull_slide.h"
#include "core/status.h"

#include <check.h>
#include <math.h>
#include <stb_image.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* ------------------------------------------------ the identity, on numpy */

static const char *const CASES[] = {"mha", "gqa", "mqa", "noncausal", "t1", "one_head", "ragged", "wide"};

/* n float64 values from <MHAVIZ_REF>/<name>/<file>.bin, as floats. */
static float *reference(const char *name, const char *file, size_t n)
{
    const char *dir = getenv("MHAVIZ_REF");
    ck_assert_msg(dir != NULL, "MHAVIZ_REF is not set: `make test` sets it");
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/%s.bin", dir, name, file);
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    float *a = malloc((n ? n : 1) * sizeof *a);
    ck_assert_ptr_nonnull(a);
    for (size_t k = 0; k < n; k++) {
        double v;
        ck_assert_msg(fread(&v, sizeof v, 1, f) == 1, "%s: too short", path);
        a[k] = (float)v;
    }
    fclose(f);
    return a;
}

/* numpy's wide head, computed as one head of width d_model, is the sum of
 * its heads' scores over sqrt(h): up to rounding the scores to float32
 * (relative 6e-8 each; the sum of h of them, h <= 6, stays under 1e-6 of
 * the largest score). */
START_TEST(identity_holds_on_numpys_pass)
{
    const char *name = CASES[_i];
    char path[1024];
    snprintf(path, sizeof path, "%s/%s/config.txt", getenv("MHAVIZ_REF"), name);
    FILE *f = fopen(path, "r");
    ck_assert_msg(f != NULL, "cannot open %s", path);
    MhaConfig c = {0};
    ck_assert_int_eq(fscanf(f, "%d %d %d %d %d", &c.T, &c.d_model, &c.n_heads, &c.n_kv_heads, &c.causal), 5);
    fclose(f);
    c.head_dim = c.d_model / c.n_heads;
    const size_t map = (size_t)c.T * c.T;
    float *scores = reference(name, "scores", c.n_heads * map);
    float *att = reference(name, "att", c.n_heads * map);
    float *wide = reference(name, "single_scores", map);
    float *wide_att = reference(name, "single_att", map);

    PullLayer p;
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 1), MHAVIZ_OK);
    ck_assert_msg(p.max_abs_score > 0.5, "%s: scores of a few units expected", name);
    ck_assert_msg(p.identity_max_dev <= 1e-6 * p.max_abs_score, "%s: deviation %g (scores up to %g)", name,
                  p.identity_max_dev, p.max_abs_score);

    /* The check can fail: a wide head whose score for one cell is off by
     * 0.01 shows a deviation of 0.01. */
    wide[map - 1] += 0.01f; /* the last row's last key: visible, masked or not */
    pull_layer_free(&p);
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 1), MHAVIZ_OK);
    ck_assert_double_eq_tol(p.identity_max_dev, 0.01, 1e-5);

    /* A wide head of its own: no identity to check. */
    pull_layer_free(&p);
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 0), MHAVIZ_OK);
    ck_assert(isnan(p.identity_max_dev));
    pull_layer_free(&p);
    free(scores), free(att), free(wide), free(wide_att);
}
END_TEST

/* --------------------------------------- the identity, on mhaviz's passes */


/* float32 sums of d_model products in a different grouping (the wide head
 * sums all d_model at once, the heads head_dim at a time): rounding of
 * about d_model * 6e-8 of the largest score; 1e-5 leaves room. */
static const char *const SAMPLES[] = {"samples/lesson1.json", "samples/lesson2_gqa.json",
                                      "samples/lesson3_mqa.json", "samples/base_paper.json",
                                      "samples/random_init.json"};

START_TEST(identity_holds_on_the_samples)
{
    SampleRun r;
    sample_run(&r, SAMPLES[_i]);
    ck_assert_msg(r.p.identity_max_dev <= 1e-5 * r.p.max_abs_score, "%s: deviation %g (scores up to %g)",
                  SAMPLES[_i], r.p.identity_max_dev, r.p.max_abs_score);
    int rows = 0;
    for (int o = 0; o < PULL_N_OUTCOMES; o++)
        rows += r.p.count[o];
    ck_assert_int_eq(rows, r.in.cfg.T);
    ck_assert_int_eq(r.p.count[PULL_NO_CHOICE], 1); /* causal: only token 0 sees one key */
    sample_run_free(&r);
}
END_TEST

/* Lesson 1 as samples/README.md designs it: head 0 looks one token back,
 * head 1 at the first name (Mary, 0), heads 2 and 3 at the token itself
 * (head 2 at an earlier copy when there is one). For "because" (6) the wide
 * head follows head 0 to John (5), with almost all its weight; for the last
 * "Mary" (10) heads 1 and 2 pull to the first Mary (0), head 3 to itself,
 * and the wide head follows head 3. */
START_TEST(lesson1_rows)
{
    SampleRun r;
    sample_run(&r, "samples/lesson1.json");
    const PullLayer *p = &r.p;
    const int *top6 = p->top + 6 * 4, *top10 = p->top + 10 * 4;
    ck_assert_int_eq(top6[0], 5);
    ck_assert_int_eq(top6[1], 0);
    ck_assert_int_eq(top6[3], 6);
    ck_assert_int_eq(p->rows[6].outcome, PULL_FOLLOWED);
    ck_assert_int_eq(p->rows[6].wide_top, 5);
    ck_assert_float_gt(p->rows[6].wide_top_att, 0.9f);
    ck_assert_int_eq(top10[0], 9);
    ck_assert_int_eq(top10[1], 0);
    ck_assert_int_eq(top10[2], 0);
    ck_assert_int_eq(top10[3], 10);
    ck_assert_int_eq(p->rows[10].outcome, PULL_FOLLOWED);
    ck_assert_int_eq(p->rows[10].wide_top, 10);
    char caption[512];
    pull_caption(caption, sizeof caption, p, 6, r.in.tokens, r.single.att);
    ck_assert_msg(strstr(caption, "the wide head's top key 'John' (0.99) is the top key of head 0 too; it gives ") ==
                  caption, "%s", caption);
    /* Two Marys in sight: the caption names which by their index. */
    pull_caption(caption, sizeof caption, p, 10, r.in.tokens, r.single.att);
    ck_assert_msg(strstr(caption, "the wide head's top key 'Mary' 10 (1.00) is the top key of head 3 too; it gives ") ==
                  caption &&
                  strstr(caption, " to 'Mary' 0 (heads 1, 2)"), "%s", caption);
    /* The second John (7): 0.49992 on each John (the heads' margins between
     * them add up to exactly 0): a tie, said as one, and not "0.50". */
    ck_assert_int_eq(p->rows[7].outcome, PULL_TIE);
    ck_assert_float_lt(p->rows[7].wide_top_att, 0.5f);
    pull_caption(caption, sizeof caption, p, 7, r.in.tokens, r.single.att);
    ck_assert_msg(strstr(caption, "a tie: the wide head gives 'John' 5 0.4999 and 'John' 7 0.4999, less than "
                                  "0.005 apart: it chose neither") == caption, "%s", caption);
    sample_run_free(&r);
}
END_TEST

/* A head trained on its own ("single_head" in the input): no identity. */
START_TEST(given_single_head_has_no_identity)
{
    SampleRun r;
    sample_run(&r, "tests/data/good/bias_single_head.json");
    ck_assert(r.in.has_single);
    ck_assert(!r.p.identity);
    ck_assert(isnan(r.p.identity_max_dev));
    char caption[512];
    pull_caption(caption, sizeof caption, &r.p, r.p.default_query, r.in.tokens, r.single.att);
    /* Its own weights: it shares a head's top key, it does not follow it. */
    ck_assert_int_eq(r.p.default_query, 3);
    ck_assert_msg(strstr(caption, "the top key of the one head trained on its own 'down' (") == caption &&
                  strstr(caption, ") is the top key of head 1 too; it gives ") && !strstr(caption, "followed"),
                  "%s", caption);
    sample_run_free(&r);
}
END_TEST

/* ------------------------------------------- outcomes, on derived tables */

static char *const ABC[] = {"a", "b", "c"};

/* The softmax of each of the n rows of scores (each T wide, n_i visible
 * keys), into att (in double, then rounded). */
static void softmax_rows(const MhaConfig *c, const float *scores, int n, float *att)
{
    const int T = c->T;
    for (int r = 0; r < n; r++) {
        const int i = r % T, n_i = c->causal ? i + 1 : T;
        double sum = 0;
        for (int j = 0; j < n_i; j++)
            sum += exp(scores[r * T + j]);
        for (int j = 0; j < T; j++)
            att[r * T + j] = j < n_i ? (float)(exp(scores[r * T + j]) / sum) : 0;
    }
}

/* The pulls of two heads' scores (2, T, T) with a wide head built from
 * them: wide (T, T) = (1/sqrt(2)) (head 0 + head 1), wide_att (T, T) its
 * softmax over each row's visible keys (in double, then rounded); the
 * heads' own softmax the same way. */
static void pull_of_two(const MhaConfig *c, const float *scores, float *wide_att, PullLayer *p)
{
    const int T = c->T;
    float wide[16], att[32]; /* (T, T) and (2, T, T), T <= 4 */
    ck_assert_int_le(T, 4);
    for (int i = 0; i < T; i++)
        for (int j = 0; j < T; j++)
            wide[i * T + j] = (float)((scores[i * T + j] + scores[T * T + i * T + j]) / sqrt(2.0));
    softmax_rows(c, wide, T, wide_att);
    softmax_rows(c, scores, 2 * T, att);
    ck_assert_int_eq(pull_layer_build(p, c, scores, att, wide, wide_att, 1), MHAVIZ_OK);
}

/* Two heads, three tokens, causal:
 *   row 0: one key                                     -> no choice
 *   row 1: head 0 (0, 4), head 1 (4, 0): each pulls (0.98 on its top key,
 *          normalised entropy 0.13); wide (4, 4)/sqrt 2, weights 0.5
 *          and 0.5: no key gets more than half          -> a tie (pull.h)
 *   row 2: head 0 (0, 8, 6.5), head 1 (8, 0, 6.5): each pulls (0.82,
 *          normalised entropy 0.43); wide (8, 8, 13)/sqrt 2: key 2 gets
 *          1/(1 + 2 e^-3.536) = 0.945 and is neither head's top key -> own choice
 * Rows 1 and 2 both have 2 different top keys: the default is the later, 2. */
static const float TABLE_A[2 * 9] = {
    0, 0, 0,  0, 4, 0,  0, 8, 6.5f, /* head 0 */
    0, 0, 0,  4, 0, 0,  8, 0, 6.5f, /* head 1 */
};

START_TEST(outcomes_split_and_own_choice)
{
    const MhaConfig c = {3, 2, 2, 2, 1, 1, {0}};
    float wide_att[9];
    PullLayer p;
    pull_of_two(&c, TABLE_A, wide_att, &p);
    ck_assert_int_eq(p.rows[0].outcome, PULL_NO_CHOICE);
    ck_assert_int_eq(p.rows[1].outcome, PULL_TIE); /* 0.5 and 0.5 */
    ck_assert_int_eq(p.rows[2].outcome, PULL_OWN);
    ck_assert_int_eq(p.rows[2].wide_top, 2);
    ck_assert_double_eq_tol(p.rows[2].wide_top_att, 1 / (1 + 2 * exp(-5 / sqrt(2.0))), 1e-6);
    ck_assert_int_eq(p.count[PULL_NO_CHOICE], 1);
    ck_assert_int_eq(p.count[PULL_TIE], 1);
    ck_assert_int_eq(p.count[PULL_OWN], 1);
    ck_assert_int_eq(p.n_blur, 1);
    ck_assert_int_eq(p.default_query, 2);
    ck_assert_double_eq_tol(p.identity_max_dev, 0, 1e-6);

    char caption[512];
    pull_caption(caption, sizeof caption, &p, 0, ABC, wide_att);
    ck_assert_str_eq(caption, "'a' sees only itself: no choice to make");
    pull_caption(caption, sizeof caption, &p, 1, ABC, wide_att);
    ck_assert_str_eq(caption, "a tie: the wide head gives 'a' 0.5000 and 'b' 0.5000, less than 0.005 apart: it "
                              "chose neither");
    /* e^-3.536 / (1 + 2 e^-3.536) = 0.028 */
    pull_caption(caption, sizeof caption, &p, 2, ABC, wide_att);
    ck_assert_str_eq(caption, "the wide head's top key 'c' (0.94) is no head's top key; it gives 0.03 to "
                              "'b' (head 0), 0.03 to 'a' (head 1)");
    pull_layer_free(&p);
}
END_TEST

/* Two heads, two tokens, not causal (every row below: each head pulls,
 * 0.95 or more on its top key):
 *   row 0: head 0 (0, 6), head 1 (4, 0): wide (4, 6)/sqrt 2; key 1 gets
 *          1/(1 + e^-1.414) = 0.804: head 0's top key   -> followed head 0
 *   row 1: head 0 (0, 4), head 1 (0, 3): both prefer key 1 -> agreed; wide
 *          (0, 7)/sqrt 2, key 1 gets 1/(1 + e^-4.950) = 0.993 */
START_TEST(outcomes_followed_and_agreed)
{
    const MhaConfig c = {2, 2, 2, 2, 1, 0, {0}};
    const float scores[2 * 4] = {0, 6, 0, 4, /* head 0 */ 4, 0, 0, 3 /* head 1 */};
    float wide_att[4];
    PullLayer p;
    pull_of_two(&c, scores, wide_att, &p);
    ck_assert_int_eq(p.rows[0].outcome, PULL_FOLLOWED);
    ck_assert_int_eq(p.rows[1].outcome, PULL_AGREED);
    ck_assert_int_eq(p.rows[0].n_top_keys, 2);
    ck_assert_int_eq(p.rows[1].n_top_keys, 1);
    ck_assert_int_eq(p.default_query, 0);
    char caption[512];
    pull_caption(caption, sizeof caption, &p, 0, ABC, wide_att);
    ck_assert_str_eq(caption, "the wide head's top key 'b' (0.80) is the top key of head 0 too; it gives 0.20 to 'a' "
                              "(head 1)");
    pull_caption(caption, sizeof caption, &p, 1, ABC, wide_att);
    ck_assert_str_eq(caption, "every head's top key is 'b', and the wide head's too (0.99): nothing lost");
    pull_layer_free(&p);
}
END_TEST

/* The sum identity makes a key the wide head's top key only when it is
 * every head's, pulling or not: the pulling heads agreeing is not enough.
 * Two heads, T = 3, not causal; row 0:
 *   head 0 (3, 0, 0): 0.91 on key 0, normalised entropy 0.33 -> pulls
 *   head 1 (0, 4, 3.5): 0.62 on key 1, but normalised entropy 0.65
 *          (weights 0.62, 0.37, 0.01) -> does not pull
 *   wide (3, 4, 3.5)/sqrt 2: key 1 is its top key, with
 *          e^2.83 / (e^2.12 + e^2.83 + e^2.47) = 0.46
 * The only pulling head wants key 0, the wide head key 1: not agreed (it
 * blurs, so split). Rows 1 and 2 are flat in both heads: no pull. */
START_TEST(pulling_heads_agreeing_do_not_decide)
{
    const MhaConfig c = {3, 2, 2, 2, 1, 0, {0}};
    const float scores[2 * 9] = {3, 0, 0, 0, 0, 0, 0, 0, 0, /* head 0 */
                                 0, 4, 3.5f, 0, 0, 0, 0, 0, 0 /* head 1 */};
    float wide_att[9];
    PullLayer p;
    pull_of_two(&c, scores, wide_att, &p);
    ck_assert_int_eq(p.rows[0].n_pulling, 1);
    ck_assert_int_eq(p.rows[0].wide_top, 1);
    ck_assert_double_eq_tol(p.rows[0].wide_top_att,
                            exp(4 / sqrt(2.0)) / (exp(3 / sqrt(2.0)) + exp(4 / sqrt(2.0)) + exp(3.5 / sqrt(2.0))),
                            1e-6);
    ck_assert_int_ne(p.rows[0].outcome, PULL_AGREED);
    ck_assert_int_eq(p.rows[0].outcome, PULL_SPLIT);
    pull_layer_free(&p);
}
END_TEST

/* The line between split and followed: a row blurs when the wide head
 * gives its top key at most PULL_BLUR_AT_MOST = 1/2. Non-causal T = 2, two
 * heads that disagree in both rows and each pull (head 0 puts 0.998 on key
 * 0, head 1 on key 1); the wide head's weights, given as they are: row 0 (0.5, 0.5), the tie, top
 * key 0 (the lower index), at most 1/2, and a tie (weights less than 0.005 apart); row 1 (0.51, 0.49), over
 * 1/2 on head 0's key -> followed. */
START_TEST(split_or_followed_at_one_half)
{
    const MhaConfig c = {2, 2, 2, 2, 1, 0, {0}};
    const float scores[2 * 4] = {6, 0, 6, 0, /* head 0 */ 0, 6, 0, 6 /* head 1 */};
    float att[2 * 4];
    softmax_rows(&c, scores, 4, att);
    const float wide[4] = {0, 0, 0.04f, 0};                 /* log(0.51 / 0.49) = 0.04 */
    const float wide_att[4] = {0.5f, 0.5f, 0.51f, 0.49f};
    PullLayer p;
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 0), MHAVIZ_OK);
    ck_assert_int_eq(p.rows[0].wide_top, 0);
    ck_assert(p.rows[0].blurs);
    ck_assert_int_eq(p.rows[0].outcome, PULL_TIE); /* 0.5 and 0.5: a tie before a split (check_contests.c) */
    ck_assert_int_eq(p.rows[1].wide_top, 0);
    ck_assert(!p.rows[1].blurs);
    ck_assert_int_eq(p.rows[1].outcome, PULL_FOLLOWED);
    pull_layer_free(&p);
}
END_TEST

/* In a tie the wide head's top key is the first of the tied keys, not the
 * one float noise put on top (a rotation of the heads moves that noise):
 * the setting of split_or_followed_at_one_half, row 0's wide weights given
 * as (0.4999, 0.5001) and then (0.5001, 0.4999), scores 0.0004 apart
 * (log(0.5001 / 0.4999)): both a tie, both name key 0 first and key 1 as
 * the runner-up, the row's largest weight 0.5001 deciding it does not blur. */
START_TEST(a_tie_names_its_first_key)
{
    const MhaConfig c = {2, 2, 2, 2, 1, 0, {0}};
    const float scores[2 * 4] = {6, 0, 6, 0, /* head 0 */ 0, 6, 0, 6 /* head 1 */};
    float att[2 * 4];
    softmax_rows(&c, scores, 4, att);
    for (int flip = 0; flip < 2; flip++) {
        const float wide[4] = {flip ? 0.0004f : 0, flip ? 0 : 0.0004f, 0.04f, 0};
        const float wide_att[4] = {flip ? 0.5001f : 0.4999f, flip ? 0.4999f : 0.5001f, 0.51f, 0.49f};
        PullLayer p;
        ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 0), MHAVIZ_OK);
        ck_assert_int_eq(p.rows[0].outcome, PULL_TIE);
        ck_assert_int_eq(p.rows[0].wide_top, 0);
        ck_assert_int_eq(p.rows[0].runner_up, 1);
        ck_assert_float_eq(p.rows[0].wide_top_att, wide_att[0]);
        ck_assert_float_eq(p.rows[0].runner_up_att, wide_att[1]);
        ck_assert(!p.rows[0].blurs);
        pull_layer_free(&p);
    }
}
END_TEST

/* A head pulls only when its top key wins its row: weights of 0.5001 and
 * 0.4999 on two keys are a tie (PULL_TIE_WEIGHT), the same for a head as
 * for the wide head, whatever side of one half the larger lies on. Two
 * heads, T = 6, not causal; head 0's row 0 scores (12 + e, 12 - e, 0, 0,
 * 0, 0) with e = ln(0.5001 / 0.4999) / 2 = 0.0002: weights 0.50008 and
 * 0.49988 (the four others e^-12 / 2 = 3e-6 each), normalised entropy
 * 1.00 / log2(6) = 0.39, sharp: a tie, no pull. Its row 1 (12.02, 11.98,
 * 0, ...): 0.51 and 0.49, 0.02 apart: a pull. Head 1 is flat (all scores
 * 0, normalised entropy 1): it never pulls. */
START_TEST(near_tie_in_a_head_is_no_pull)
{
    const MhaConfig c = {6, 2, 2, 2, 1, 0, {0}};
    float scores[2 * 36] = {0}, att[2 * 36], wide[36], wide_att[36];
    const float e = (float)(log(0.5001 / 0.4999) / 2);
    scores[0] = 12 + e, scores[1] = 12 - e;
    scores[6] = 12.02f, scores[7] = 11.98f;
    for (int k = 0; k < 36; k++)
        wide[k] = (float)((scores[k] + scores[36 + k]) / sqrt(2.0));
    softmax_rows(&c, scores, 12, att);
    softmax_rows(&c, wide, 6, wide_att);
    ck_assert_float_gt(att[0], 0.5f); /* the input is what the comment says */
    ck_assert_float_lt(att[0] - att[1], (float)PULL_TIE_WEIGHT);
    PullLayer p;
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 1), MHAVIZ_OK);
    ck_assert_int_eq(p.pulls[0 * 2 + 0], 0);
    ck_assert_int_eq(p.rows[0].n_pulling, 0);
    ck_assert_int_eq(p.rows[0].outcome, PULL_NO_PULL);
    ck_assert_int_eq(p.pulls[1 * 2 + 0], 1);
    ck_assert_int_eq(p.rows[1].n_pulling, 1);
    pull_layer_free(&p);
}
END_TEST

/* A pulling head and one that does not pull (three tokens, not causal,
 * row 0): head 0 (2.5, 0, 0) puts 0.86 on key 0 (normalised entropy 0.46:
 * a pull); head 1 (0, 2, 2) puts 0.47 on keys 1 and 2 each (no pull). Wide
 * (2.5, 2, 2)/sqrt 2 = (1.768, 1.414, 1.414): key 0 gets e^1.768 /
 * (e^1.768 + 2 e^1.414) = 0.416, so the row blurs though the only pull
 * is kept. Rows 1 and 2 (all scores 0): no head pulls. */
START_TEST(agreed_and_blurred)
{
    const MhaConfig c = {3, 2, 2, 2, 1, 0, {0}};
    float scores[2 * 9] = {0};
    scores[0] = 2.5f;
    scores[9 + 1] = scores[9 + 2] = 2.0f;
    float wide_att[9];
    PullLayer p;
    pull_of_two(&c, scores, wide_att, &p);
    ck_assert_int_eq(p.rows[0].outcome, PULL_AGREED);
    ck_assert_int_eq(p.rows[0].n_pulling, 1);
    ck_assert(p.rows[0].blurs);
    ck_assert_int_eq(p.rows[1].outcome, PULL_NO_PULL);
    ck_assert_int_eq(p.count[PULL_NO_PULL], 2);
    char caption[512];
    pull_caption(caption, sizeof caption, &p, 0, ABC, wide_att);
    ck_assert_str_eq(caption, "every pulling head's top key is 'a', and the wide head's too (0.42): nothing lost; "
                              "no key gets more than half its attention: the row blurs");
    pull_caption(caption, sizeof caption, &p, 1, ABC, wide_att);
    /* all three keys at 1/3: no top key to name */
    ck_assert_str_eq(caption, "no head is sharp enough to pull (more than half of its row on one key, not tied with "
                              "another, its row's normalised entropy below 0.5); the wide head ties 'a' and 'b' "
                              "(0.3333 and 0.3333): no top key");
    pull_layer_free(&p);
}
END_TEST

/* The contributions: each head's scores less its top score, over sqrt 2
 * (table A, row 2: (0, 8, 6.5) - 8 and (8, 0, 6.5) - 8); their sum is the
 * wide head's score (8, 8, 13)/sqrt 2 less 16/sqrt 2. */
START_TEST(contributions_add_up)
{
    const MhaConfig c = {3, 2, 2, 2, 1, 1, {0}};
    float contrib[2 * 3];
    pull_contributions(&c, TABLE_A, 2, contrib);
    const double r = 1 / sqrt(2.0);
    const double want[6] = {-8 * r, 0, -1.5 * r, 0, -8 * r, -1.5 * r};
    for (int k = 0; k < 6; k++)
        ck_assert_double_eq_tol(contrib[k], want[k], 1e-6);
    for (int j = 0; j < 3; j++)
        ck_assert_double_eq_tol(contrib[j] + contrib[3 + j], (TABLE_A[6 + j] + TABLE_A[15 + j] - 16) * r, 1e-6);
}
END_TEST

/* ------------------------------------------------------------ the slide */

/* The wide head's softmax bars are (40, 40, 40): pixels of that colour in
 * column x between rows y0 and y1 of image px (w wide). */
static int wide_bar_px(const unsigned char *px, int w, int x, int y0, int y1)
{
    int n = 0;
    for (int y = y0; y < y1; y++) {
        const unsigned char *p = px + ((size_t)y * w + x) * 3;
        n += p[0] == 40 && p[1] == 40 && p[2] == 40;
    }
    return n;
}

/* Lesson 1, "because" (6): a 1920 x 1080 slide whose wide softmax chart
 * (the lowest row of the right-hand column, x from 1120 to 1884, seven
 * keys of 109 pixels) has a bar about 0.99 of its height over John (5) and
 * none over Mary (0), where the wide head puts 0.00. */
START_TEST(slide_of_because)
{
    SampleRun r;
    sample_run(&r, "samples/lesson1.json");
    char dir[] = "/tmp/mhaviz-pull-XXXXXX", path[64], err[MHAVIZ_ERRLEN] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/query_06.png", dir);
    DrawFont *font;
    ck_assert_int_eq(draw_font_open(&font, NULL, err, sizeof err), MHAVIZ_OK);
    DrawCanvas *cv = draw_canvas_new(1, 1); /* the slide resets it to its size */
    ck_assert_ptr_nonnull(cv);
    ck_assert_int_eq(render_pull(cv, font, path, &r.in.cfg, r.in.tokens, &r.multi, &r.single, &r.p, 6, err, sizeof err),
                     MHAVIZ_OK);
    int w, h, n;
    unsigned char *px = stbi_load(path, &w, &h, &n, 3);
    ck_assert_ptr_nonnull(px);
    ck_assert_int_eq(w, 1920);
    ck_assert_int_eq(h, 1080);
    const float slot = (1920 - 36 - 1120) / 7.0f;
    const int john = wide_bar_px(px, w, 1120 + (int)(5.5f * slot), 640, 1080);
    const int mary = wide_bar_px(px, w, 1120 + (int)(0.5f * slot), 640, 1080);
    ck_assert_msg(john > 250 && mary == 0, "John %d px, Mary %d px", john, mary);
    stbi_image_free(px);

    /* A folder that does not exist: an I/O error that names the file. */
    snprintf(path, sizeof path, "%s/no/query_06.png", dir);
    ck_assert_int_eq(render_pull(cv, font, path, &r.in.cfg, r.in.tokens, &r.multi, &r.single, &r.p, 6, err, sizeof err),
                     MHAVIZ_EIO);
    ck_assert_msg(strstr(err, path), "%s", err);
    draw_canvas_free(cv);
    draw_font_close(font);
    snprintf(path, sizeof path, "%s/query_06.png", dir);
    remove(path);
    rmdir(dir);
    sample_run_free(&r);
}
END_TEST

/* The slide shows a token as every other picture does (render.h's
 * render_token_label): a newline as \n, a tab as \t, the empty token as
 * "". So lesson 1 with tokens 2, 3 and 4 made "\n", "" and "\t" draws the
 * same slide as with them spelled out as those labels; before, the slide
 * drew the raw bytes (U+FFFD boxes, nothing). */
START_TEST(slide_shows_whitespace_tokens_as_labels)
{
    SampleRun r;
    sample_run(&r, "samples/lesson1.json");
    char dir[] = "/tmp/mhaviz-pull-XXXXXX", raw[64], spelled[64], err[MHAVIZ_ERRLEN] = "";
    ck_assert_ptr_nonnull(mkdtemp(dir));
    snprintf(raw, sizeof raw, "%s/raw.png", dir);
    snprintf(spelled, sizeof spelled, "%s/spelled.png", dir);
    DrawFont *font;
    ck_assert_int_eq(draw_font_open(&font, NULL, err, sizeof err), MHAVIZ_OK);
    DrawCanvas *cv = draw_canvas_new(1, 1);
    ck_assert_ptr_nonnull(cv);
    char *tokens[11];
    memcpy(tokens, r.in.tokens, sizeof tokens);
    char *const as_bytes[3] = {"\n", "", "\t"}, *const as_labels[3] = {"\\n", "\"\"", "\\t"};
    for (int k = 0; k < 3; k++)
        tokens[2 + k] = as_bytes[k];
    ck_assert_int_eq(render_pull(cv, font, raw, &r.in.cfg, tokens, &r.multi, &r.single, &r.p, 7, err, sizeof err),
                     MHAVIZ_OK);
    for (int k = 0; k < 3; k++)
        tokens[2 + k] = as_labels[k];
    ck_assert_int_eq(render_pull(cv, font, spelled, &r.in.cfg, tokens, &r.multi, &r.single, &r.p, 7, err, sizeof err),
                     MHAVIZ_OK);
    ck_assert_msg(files_same(raw, spelled), "%s and %s differ", raw, spelled);
    draw_canvas_free(cv);
    draw_font_close(font);
    remove(raw);
    remove(spelled);
    rmdir(dir);
    sample_run_free(&r);
}
END_TEST

/* ------------------------------------------------------------- --query */

START_TEST(find_query)
{
    char *const tokens[] = {"Mary", "gave", "John", "Mary", "7"};
    char err[256] = "";
    ck_assert_int_eq(query_find("2", tokens, 5, err, sizeof err), 2);
    ck_assert_int_eq(query_find("Mary", tokens, 5, err, sizeof err), 3); /* the last one */
    ck_assert_int_eq(query_find("gave", tokens, 5, err, sizeof err), 1);
    ck_assert_int_eq(query_find("5", tokens, 5, err, sizeof err), -1);
    ck_assert_str_eq(err, "--query 5: out of range, the sentence has 5 tokens (0 to 4)");
    ck_assert_int_eq(query_find("-1", tokens, 5, err, sizeof err), -1);
    ck_assert_str_eq(err, "--query -1: out of range, the sentence has 5 tokens (0 to 4)");
    ck_assert_int_eq(query_find("7", tokens, 5, err, sizeof err), -1); /* a number is an index */
    ck_assert_int_eq(query_find("mary", tokens, 5, err, sizeof err), -1);
    ck_assert_str_eq(err, "--query 'mary': no token 'mary' in the sentence (give its text exactly, or its "
                          "index from 0 to 4)");
}
END_TEST

Suite *pull_suite(void)
{
    Suite *s = suite_create("pull");
    TCase *t = tcase_create("pull");
    tcase_set_timeout(t, 30);
    tcase_add_loop_test(t, identity_holds_on_numpys_pass, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_loop_test(t, identity_holds_on_the_samples, 0, (int)(sizeof SAMPLES / sizeof SAMPLES[0]));
    tcase_add_test(t, lesson1_rows);
    tcase_add_test(t, given_single_head_has_no_identity);
    tcase_add_test(t, outcomes_split_and_own_choice);
    tcase_add_test(t, outcomes_followed_and_agreed);
    tcase_add_test(t, agreed_and_blurred);
    tcase_add_test(t, pulling_heads_agreeing_do_not_decide);
    tcase_add_test(t, split_or_followed_at_one_half);
    tcase_add_test(t, near_tie_in_a_head_is_no_pull);
    tcase_add_test(t, a_tie_names_its_first_key);
    tcase_add_test(t, contributions_add_up);
    tcase_add_test(t, find_query);
    tcase_add_test(t, slide_of_because);
    tcase_add_test(t, slide_shows_whitespace_tokens_as_labels);
    suite_add_tcase(s, t);
    return s;
}
