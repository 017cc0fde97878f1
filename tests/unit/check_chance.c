/* check_chance.c — random layers as chance's yardstick (src/models/chance_draw.c
 * draws them, src/core/chance.c takes their ranges).
 *
 * The reference is `mhaviz init` itself: init_model draws the whole layer
 * (W_v and W_o too), mha_forward and mha_forward_wide run it, and the blur
 * is computed here from measures_map. With 20 draws the range runs from the
 * smallest to the largest (k = floor(20 / 40) = 0), so it must match the
 * extremes of those 20 init layers exactly. */
#include "core/chance.h"
#include "text/chance_words.h"
#include "models/chance_draw.h"
#include "models/init.h"
#include "core/kept.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/status.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define SENTENCE "Mary gave the book to John because John had helped Mary"

/* `mhaviz init`'s layer of seed s on SENTENCE (d_model 16, 4 heads,
 * embeddings), run and measured as a run does: into v its blur (the wide
 * head's normalised entropy less the heads' mean), the rows the wide head
 * kept and lost (kept.h). On the first call *shape and *tokens get the
 * layer's shape and the sentence's tokens (the caller frees them). */
static void init_numbers(uint64_t seed, double v[3], MhaConfig *shape, char ***tokens)
{
    const InitOptions o = {SENTENCE, 16, 4, 0, seed, 1};
    InitModel m;
    char err[256];
    ck_assert_int_eq(init_model(&o, &m, err, sizeof err), MHAVIZ_OK);
    const MhaConfig *c = &m.in.cfg, wide = mha_single_head_config(c);
    MhaState heads, one;
    ck_assert_int_eq(mha_state_build(&heads, c, 1), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build_wide(&one, &wide, 1), MHAVIZ_OK);
    mha_forward(c, &m.in.w, m.in.x, &heads);
    mha_forward_wide(c, &m.in.w, &heads, &one);
    MapMeasures mm[5];
    ck_assert_int_eq(measures_layer(heads.att, 4, one.att, c->T, 1, m.in.tokens, mm), MHAVIZ_OK);
    double norm = 0;
    for (int h = 0; h < 4; h++)
        norm += mm[h].entropy_norm;
    v[0] = mm[4].entropy_norm - norm / 4;
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, c, heads.att, one.att, m.in.tokens, mm), MHAVIZ_OK);
    v[1] = k.verdict[KEPT_KEPT];
    v[2] = k.verdict[KEPT_LOST];
    kept_layer_free(&k);
    if (!*tokens) {
        *shape = *c;
        ck_assert_int_eq(init_tokens_split(SENTENCE, tokens, &shape->T, err, sizeof err), MHAVIZ_OK);
    }
    mha_state_free(&heads), mha_state_free(&one);
    init_model_free(&m);
}

START_TEST(blur_range_is_inits_layers)
{
    double lo = INFINITY, hi = -INFINITY;
    MhaConfig shape = {0};
    char **tokens = NULL;
    for (int seed = 1; seed <= CHANCE_MIN_DRAWS; seed++) {
        double v[3];
        init_numbers((uint64_t)seed, v, &shape, &tokens);
        lo = fmin(lo, v[0]), hi = fmax(hi, v[0]);
    }
    Chance ch;
    ck_assert_int_eq(chance_draw(&ch, &shape, tokens, 0, CHANCE_MIN_DRAWS), MHAVIZ_OK);
    ck_assert_int_eq(ch.draws, CHANCE_MIN_DRAWS);
    ck_assert_int_eq(ch.r[CHANCE_BLUR].n, CHANCE_MIN_DRAWS);
    ck_assert_double_eq_tol(ch.r[CHANCE_BLUR].lo, lo, 1e-12);
    ck_assert_double_eq_tol(ch.r[CHANCE_BLUR].hi, hi, 1e-12);
    init_tokens_free(tokens, shape.T);
}
END_TEST

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Every draw is init's layer of its seed, seeds 1, 2, ..., n: for each n
 * from 20 to 45 draws, the blur's, kept's and lost's ranges are those of
 * init's layers of seeds 1 to n, cut as chance.h says (k = floor(n / 40)
 * at each end: none below 40, one from 40 on). Draw n enters at n draws,
 * so a seed off by one (0 to n - 1) or a layer drawn otherwise moves some
 * range among these 78. */
START_TEST(every_draw_is_inits_layer_of_its_seed)
{
    enum { N = 45 };
    double ref[3][N]; /* (number, seed - 1) */
    MhaConfig shape = {0};
    char **tokens = NULL;
    for (int s = 1; s <= N; s++) {
        double v[3];
        init_numbers((uint64_t)s, v, &shape, &tokens);
        for (int q = 0; q < 3; q++)
            ref[q][s - 1] = v[q];
    }
    static const ChanceStat stat[3] = {CHANCE_BLUR, CHANCE_KEPT, CHANCE_LOST};
    for (int n = CHANCE_MIN_DRAWS; n <= N; n++) {
        Chance ch;
        ck_assert_int_eq(chance_draw(&ch, &shape, tokens, 0, n), MHAVIZ_OK);
        ck_assert_int_eq(ch.draws, n);
        const int k = n / 40;
        for (int q = 0; q < 3; q++) {
            double sorted[N];
            memcpy(sorted, ref[q], (size_t)n * sizeof *sorted);
            qsort(sorted, (size_t)n, sizeof *sorted, by_value);
            ck_assert_int_eq(ch.r[stat[q]].n, n);
            ck_assert_msg(fabs(ch.r[stat[q]].lo - sorted[k]) <= 1e-12 &&
                          fabs(ch.r[stat[q]].hi - sorted[n - 1 - k]) <= 1e-12,
                          "%d draws, %s: %g to %g, init's seeds 1 to %d: %g to %g", n,
                          chance_stat_name(stat[q]), ch.r[stat[q]].lo, ch.r[stat[q]].hi, n, sorted[k],
                          sorted[n - 1 - k]);
        }
    }
    init_tokens_free(tokens, shape.T);
}
END_TEST

/* The draws run in parallel (60 draws of d_model 64 with a rival: 60 x
 * 16,360 units, over CHANCE_PARALLEL_MIN); the ranges are the same on 1
 * thread and on 2. */
START_TEST(same_on_any_thread_count)
{
    char **tokens;
    int T;
    char err[256];
    ck_assert_int_eq(init_tokens_split(SENTENCE, &tokens, &T, err, sizeof err), MHAVIZ_OK);
    const MhaConfig c = {T, 64, 4, 2, 16, 1, {0}};
    ck_assert_uint_ge(60 * chance_draw_cost(&c, 1), CHANCE_PARALLEL_MIN);
    Chance a, b;
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    ck_assert_int_eq(chance_draw(&a, &c, tokens, 1, 60), MHAVIZ_OK);
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    ck_assert_int_eq(chance_draw(&b, &c, tokens, 1, 60), MHAVIZ_OK);
    ck_assert_int_eq(a.draws, 60);
    for (int k = 0; k < CHANCE_N; k++) {
        ck_assert_int_eq(a.r[k].n, b.r[k].n);
        ck_assert(a.r[k].lo == b.r[k].lo && a.r[k].hi == b.r[k].hi);
    }
    init_tokens_free(tokens, T);
}
END_TEST

/* The budget: a class-size layer gets CHANCE_DRAWS; the base shape (d_model
 * 512, 8 heads, T = 11) 2^22 / (512 * 1024 + 11 * 512 + 4 * 9 * 66) = 7,
 * fewer than CHANCE_MIN_DRAWS, so none; d_model 4096 none (2^22 / 16.8 M = 0). */
START_TEST(budget_caps_the_draws)
{
    const MhaConfig small = {11, 16, 4, 4, 4, 1, {0}}, base = {11, 512, 8, 8, 64, 1, {0}}, big = {11, 4096, 32, 32, 128, 1, {0}};
    ck_assert_int_eq(chance_budget(&small, 0), CHANCE_DRAWS);
    ck_assert_int_eq(chance_budget(&base, 0), 7);
    ck_assert_int_eq(chance_budget(&big, 0), 0);
    char *tokens[11] = {"a", "b", "c", "d", "e", "f", "g", "h", "i", "j", "k"};
    Chance ch;
    ck_assert_int_eq(chance_draw(&ch, &base, tokens, 0, CHANCE_DRAWS), MHAVIZ_OK);
    ck_assert_int_eq(ch.draws, 0);
    ck_assert_int_eq(ch.budget_draws, 7);
    ck_assert_int_eq(ch.r[CHANCE_BLUR].n, 0);
}
END_TEST

/* One token, with the mask or without: no query sees two keys, every
 * number compared is null or 0 for any layer, and none is drawn (it was
 * 200 draws giving "0 to 0"). Two tokens have a choice again. */
START_TEST(one_token_draws_none)
{
    char *tokens[2] = {"solo", "duo"};
    for (int causal = 0; causal < 2; causal++) {
        const MhaConfig one = {1, 16, 4, 4, 4, causal, {0}}, two = {2, 16, 4, 4, 4, causal, {0}};
        ck_assert(!chance_has_choice(&one));
        ck_assert(chance_has_choice(&two));
        ck_assert_int_eq(chance_budget(&one, 0), 0);
        ck_assert_int_eq(chance_budget(&one, 1), 0);
        ck_assert_int_eq(chance_budget(&two, 0), CHANCE_DRAWS);
        Chance ch;
        ck_assert_int_eq(chance_draw(&ch, &one, tokens, 0, CHANCE_DRAWS), MHAVIZ_OK);
        ck_assert_int_eq(ch.draws, 0);
        ck_assert_int_eq(ch.budget_draws, 0);
        ck_assert_int_eq(ch.r[CHANCE_KEPT].n, 0);
        ck_assert_int_eq(chance_pooling(&ch, &one, tokens, 2, NULL, POOL_ALIGNED, CHANCE_DRAWS), MHAVIZ_OK);
        ck_assert_int_eq(ch.pool_draws, 0);
    }
}
END_TEST

/* Pooling into as many K/V heads as there are heads changes nothing: every
 * head of every draw keeps JS 0 and top-1 1. Into 2, the heads move. */
START_TEST(pooling_ranges)
{
    char **tokens;
    int T;
    char err[256];
    ck_assert_int_eq(init_tokens_split(SENTENCE, &tokens, &T, err, sizeof err), MHAVIZ_OK);
    const MhaConfig c = {T, 16, 4, 4, 4, 1, {0}};
    Chance ch = {0};
    ck_assert_int_eq(chance_pooling(&ch, &c, tokens, 4, NULL, POOL_ALIGNED, CHANCE_MIN_DRAWS), MHAVIZ_OK);
    ck_assert_int_eq(ch.pool_draws, CHANCE_MIN_DRAWS);
    ck_assert_int_eq(ch.r[CHANCE_POOL_JS].n, 4 * CHANCE_MIN_DRAWS);
    ck_assert_double_eq_tol(ch.r[CHANCE_POOL_JS].hi, 0, 1e-12);
    ck_assert_double_eq(ch.r[CHANCE_POOL_TOP1].lo, 1);
    ck_assert_int_eq(chance_pooling(&ch, &c, tokens, 2, NULL, POOL_ALIGNED, CHANCE_MIN_DRAWS), MHAVIZ_OK);
    ck_assert(ch.r[CHANCE_POOL_JS].hi > 0.01);
    init_tokens_free(tokens, T);
}
END_TEST

START_TEST(side_of_a_range)
{
    const ChanceRange r = {40, -0.1, 0.1}, none = {0, NAN, NAN};
    ck_assert_int_eq(chance_side(&r, -0.2), -1);
    ck_assert_int_eq(chance_side(&r, 0.1), 0);
    ck_assert_int_eq(chance_side(&r, 0.11), 1);
    ck_assert_int_eq(chance_side(&r, NAN), 0);
    ck_assert_int_eq(chance_side(&none, 5), 0);
    ck_assert_str_eq(chance_words(1), "more than chance gives");
}
END_TEST

Suite *chance_suite(void)
{
    Suite *s = suite_create("chance");
    TCase *tc = tcase_create("chance");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, blur_range_is_inits_layers);
    tcase_add_test(tc, every_draw_is_inits_layer_of_its_seed);
    tcase_add_test(tc, same_on_any_thread_count);
    tcase_add_test(tc, budget_caps_the_draws);
    tcase_add_test(tc, one_token_draws_none);
    tcase_add_test(tc, pooling_ranges);
    tcase_add_test(tc, side_of_a_range);
    suite_add_tcase(s, tc);
    return s;
}
