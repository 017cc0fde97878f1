/* check_contests.c — the rules that make a causal sentence exact: which
 * heads decided a choice (pull_contest), ties (PULL_TIE_*), kept / halved /
 * lost (kept.h), the split role (measures.h) and chance at the heads' own
 * sharpness (chance_sharp). Each threshold is held from both sides. */
#include "support.h"
#include "core/chance.h"
#include "core/kept.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pull.h"
#include "text/pull_caption.h"
#include "core/status.h"
#include "io/input.h"
#include "models/chance_draw.h"
#include "models/init.h"
#include "text/contest.h"

#include <check.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif


/* ------------------------------------------------------- contributions */

/* A part within float error of 0 is no head's push: lesson 1's second
 * "John" (7), with head 0's q and k turned by one orthogonal matrix, gave
 * head 0 a part of +0.000031 between the two Johns, where head 0's margin
 * is 0 (its scores on keys 5 and 7 are equal: it looks one token back),
 * and the sentence listed "head 0 +0.000031" among the heads for. Parts
 * here: 2, 1.5, 3.1e-5, -3.5 over a scale of 20 (float error: at most
 * PULL_TIE_REL x 20 = 2e-4); head 2's part is below it, so unlisted, and
 * so is the margin itself: the tie is said without its noise's digits. */
START_TEST(float_error_part_is_not_listed)
{
    double parts[4] = {2.0, 1.5, 3.1e-5, -3.5};
    const PullContest ct = {5, 7, 3.1e-5, parts, 20.0, 1};
    char text[512];
    contest_text(text, sizeof text, &ct, 4, "'John' 5", "'John' 7");
    ck_assert_str_eq(text, "'John' 5 and 'John' 7 tie (by 0, within float error): head 0 +2.0, head 1 +1.5; "
                           "against: head 3 -3.5");
}
END_TEST

/* Lesson 1's "because" (6): the wide head picks "John" (5) over "because"
 * (6). The heads' scores there, from the designed weights
 * (samples/README.md): head 0 -6 (j - 5)^2: 0 and -6, margin +6; head 1
 * 10 [name] - 1.5 j: 2.5 and -9, +11.5; head 2 (no name code for
 * "because") +4 j: 20 and 24, -4; head 3 3.5 j: 17.5 and 21, -3.5. Each
 * over sqrt(4) = 2: +3, +5.75, -2, -1.75, adding up to the margin 5. */
START_TEST(because_row_split_exactly)
{
    SampleRun r;
    sample_run(&r, "samples/lesson1.json");
    ck_assert_int_eq(r.p.rows[6].wide_top, 5);
    double parts[4];
    PullContest ct;
    pull_contest(&r.in.cfg, r.multi.scores, r.single.scores, r.single.att, 6, 5, 6, parts, &ct);
    const double want[4] = {3, 5.75, -2, -1.75};
    for (int h = 0; h < 4; h++)
        ck_assert_double_eq_tol(parts[h], want[h], 1e-5);
    ck_assert_double_eq_tol(ct.margin, 5, 1e-5);
    ck_assert(!ct.tie);
    char text[256];
    contest_text(text, sizeof text, &ct, 4, "'John'", "'because'");
    ck_assert_str_eq(text, "'John' over 'because' by 5.0: head 1 +5.8, head 0 +3.0; against: head 2 -2.0, head 3 -1.8");
    /* the contested keys: head 1's Mary (0) and heads 2 and 3's because (6), once each */
    int keys[4];
    ck_assert_int_eq(pull_contested(&r.p, 6, keys), 2);
    ck_assert_int_eq(keys[0], 0);
    ck_assert_int_eq(keys[1], 6);
    sample_run_free(&r);
}
END_TEST

/* The identity, contest by contest: on every sample built from its heads,
 * for every row and every pair (the wide head's top key, any visible key),
 * the heads' parts add up to the wide head's own margin. The wide scores
 * are the heads' float scores added up (mha_forward_wide), so the two sums
 * differ by float rounding only: each of the h terms rounded at 6e-8 of
 * its size, under 1e-6 of the scale (the sizes added up). */
static const char *const BUILT[] = {"samples/lesson1.json", "samples/lesson2_gqa.json", "samples/lesson3_mqa.json",
                                    "samples/random_init.json", "samples/trained/lesson1_layer1.json",
                                    "samples/trained/lesson1_layer2.json", "samples/trained/story_layer1.json"};

START_TEST(parts_add_up_to_the_margin)
{
    SampleRun r;
    sample_run(&r, BUILT[_i]);
    const MhaConfig *c = &r.in.cfg;
    ck_assert(r.p.identity);
    double *parts = malloc((size_t)c->n_heads * sizeof *parts);
    ck_assert_ptr_nonnull(parts);
    int pairs = 0;
    for (int i = 0; i < c->T; i++)
        for (int b = 0; b < r.p.rows[i].n_keys; b++) {
            PullContest ct;
            pull_contest(c, r.multi.scores, r.single.scores, r.single.att, i, r.p.rows[i].wide_top, b, parts, &ct);
            double sum = 0;
            for (int h = 0; h < c->n_heads; h++)
                sum += parts[h];
            ck_assert_msg(fabs(sum - ct.margin) <= 1e-6 * ct.scale + 1e-9, "%s row %d key %d: parts %.9g, margin %.9g",
                          BUILT[_i], i, b, sum, ct.margin);
            ck_assert_double_ge(ct.margin, -1e-6 * ct.scale); /* the top key scores highest */
            pairs++;
        }
    ck_assert_int_gt(pairs, 0);
    free(parts);
    sample_run_free(&r);
}
END_TEST

/* ---------------------------------------------------------------- ties */

/* The tie tolerance, from both sides: weights less than PULL_TIE_WEIGHT
 * (0.005) apart tie, 0.005 or more do not; a margin of at most
 * PULL_TIE_REL (1e-5) of the scale ties, more does not. */
START_TEST(tie_tolerance_both_sides)
{
    ck_assert_double_eq(PULL_TIE_WEIGHT, 0.005);
    ck_assert(pull_ties(0.5024, 0.4976, 1.0, 1.0));   /* 0.0048 apart */
    ck_assert(!pull_ties(0.5026, 0.4974, 1.0, 1.0));  /* 0.0052 */
    ck_assert(pull_ties(0.9, 0.1, 0.0099, 1000.0));   /* within 1e-5 x 1000 = 0.01 */
    ck_assert(!pull_ties(0.9, 0.1, 0.0101, 1000.0));
    ck_assert(pull_ties(0.9, 0.1, -0.0099, 1000.0));  /* either sign */
}
END_TEST

/* A row-level tie: non-causal T = 2, two heads that disagree and each pull
 * (head 0 on key 0, head 1 on key 1); the wide head's weights given as
 * they are: row 0 (0.5024, 0.4976), 0.0048 apart -> tie, not followed;
 * row 1 (0.5026, 0.4974), 0.0052 apart -> followed (head 0's key). Its
 * scores differ by log(0.5024 / 0.4976) = 0.0096 and 0.0104: far from
 * float error at scale 6. */
START_TEST(tie_row_or_followed)
{
    const MhaConfig c = {2, 2, 2, 2, 1, 0, {0}};
    const float scores[2 * 4] = {6, 0, 6, 0, /* head 0 */ 0, 6, 0, 6 /* head 1 */};
    float att[2 * 4];
    for (int k = 0; k < 8; k += 2) { /* each row's softmax: e^6 / (e^6 + 1) on its top key */
        const double top = 1 / (1 + exp(-6.0));
        att[k] = (float)(scores[k] > scores[k + 1] ? top : 1 - top);
        att[k + 1] = 1 - att[k];
    }
    const float wide[4] = {0.0096f, 0, 0.0104f, 0};
    const float wide_att[4] = {0.5024f, 0.4976f, 0.5026f, 0.4974f};
    PullLayer p;
    ck_assert_int_eq(pull_layer_build(&p, &c, scores, att, wide, wide_att, 0), MHAVIZ_OK);
    ck_assert_int_eq(p.rows[0].outcome, PULL_TIE);
    ck_assert_int_eq(p.rows[0].runner_up, 1);
    ck_assert_int_eq(p.rows[1].outcome, PULL_FOLLOWED);
    ck_assert_int_eq(p.count[PULL_TIE], 1);
    char caption[256];
    pull_caption(caption, sizeof caption, &p, 0, (char *const[]){"a", "b"}, wide_att);
    ck_assert_str_eq(caption, "a tie: the one head trained on its own gives 'a' 0.5024 and 'b' 0.4976, less than "
                              "0.005 apart: it chose neither");
    ck_assert_str_eq(pull_outcome_name(PULL_TIE), "tie");
    pull_layer_free(&p);
}
END_TEST

/* `init --designed` writes its weights exactly (9 digits: every float reads
 * back to its bits): a 45-token sentence's exact ties (the heads' margins
 * adding up to 0) come back as margins within float error, where 4 digits
 * made margins of 0.0004 to 0.002. Here the loaded input's weights equal
 * the designed model's bit for bit. */
START_TEST(designed_weights_written_exactly)
{
    static const char SENTENCE[] = "Mary gave the old book to John because John had helped Mary move . Then John";
    InitModel m;
    char err[MHAVIZ_ERRLEN] = "", path[PATH_MAX], *dir = scratch("designed");
    snprintf(path, sizeof path, "%s/designed.json", dir);
    ck_assert_msg(init_designed(SENTENCE, 4, 0, NULL, &m, err, sizeof err) == MHAVIZ_OK, "%s", err);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    ck_assert_int_eq(init_write(f, &m, 9, err, sizeof err), MHAVIZ_OK);
    fclose(f);
    MhaInput in;
    ck_assert_msg(input_load(path, &in, err, sizeof err) == MHAVIZ_OK, "%s", err);
    const size_t d = (size_t)in.cfg.d_model;
    ck_assert_int_eq(memcmp(in.w.W_q, m.in.w.W_q, d * d * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(in.w.W_k, m.in.w.W_k, d * (size_t)mha_kv_dim(&in.cfg) * sizeof(float)), 0);
    ck_assert_int_eq(memcmp(in.x, m.in.x, (size_t)in.cfg.T * d * sizeof(float)), 0);
    input_free(&in);
    init_model_free(&m);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* --------------------------------------------------- kept, halved, lost */

/* The halved bound and the half, each from both sides. */
START_TEST(verdict_thresholds_both_sides)
{
    ck_assert_double_eq(KEPT_HALVED_AT_LEAST, 0.25);
    ck_assert_int_eq(kept_verdict(0.5), KEPT_KEPT);
    ck_assert_int_eq(kept_verdict(0.4999), KEPT_HALVED);
    ck_assert_int_eq(kept_verdict(0.25), KEPT_HALVED);
    ck_assert_int_eq(kept_verdict(0.2499), KEPT_LOST);
    ck_assert_str_eq(kept_verdict_name(KEPT_HALVED), "halved");
}
END_TEST

/* Two heads on the same relation count once. Causal T = 4, heads 0 and 1
 * both all on the previous token in rows 1 to 3 (row 0 sees one key): one
 * relation, 3 rows (not 6). The wide head's previous-token share in rows
 * 1, 2, 3: 0.5 (kept), 0.25 (halved: the bound itself), 0.2 (lost), the
 * rest on the token itself; its mean share (0.5 + 0.25 + 0.2) / 3. (0.25f
 * and 0.5f are exact in float; 0.2f is below 0.25 either way.) */
START_TEST(relation_rows_counted_once)
{
    static char *const TOKENS[] = {"a", "b", "c", "d"};
    const MhaConfig c = {4, 4, 2, 2, 2, 1, {0}};
    const float prev[4] = {0, 0.5f, 0.25f, 0.2f};
    float att[2 * 16] = {0}, wide[16] = {0};
    att[0] = att[16] = wide[0] = 1;
    for (int i = 1; i < 4; i++) {
        att[i * 4 + i - 1] = att[16 + i * 4 + i - 1] = 1;
        wide[i * 4 + i - 1] = prev[i];
        wide[i * 4 + i] = 1 - prev[i];
    }
    MapMeasures m[3];
    ck_assert_int_eq(measures_layer(att, 2, wide, 4, 1, TOKENS, m), MHAVIZ_OK);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, wide, TOKENS, m), MHAVIZ_OK);
    ck_assert_int_eq(k.n_relations, 1);
    ck_assert_int_eq(k.heads[0].of, 0);
    ck_assert_int_eq(k.heads[1].of, 0);
    ck_assert_int_eq(k.heads[0].rows, 3); /* each head holds it in 3 rows */
    ck_assert_int_eq(k.rows, 3);          /* the relation: 3 rows, once each */
    ck_assert_int_eq(k.verdict[KEPT_KEPT], 1);
    ck_assert_int_eq(k.verdict[KEPT_HALVED], 1);
    ck_assert_int_eq(k.verdict[KEPT_LOST], 1);
    ck_assert_double_eq_tol(k.relations[0].share_sum / k.relations[0].rows, (0.5 + 0.25 + (double)0.2f) / 3, 1e-7);
    kept_layer_free(&k);
}
END_TEST

/* ---------------------------------------------------------- split role */

/* The split rule's thresholds (measures.h), each from both sides, on the
 * rival's numbers: previous 0.39 (even 0.19), first 0.26 (even 0.16). */
START_TEST(split_rule_both_sides)
{
    ck_assert(measures_is_split(0.39, 0.19, 0.26, 0.16));
    ck_assert(measures_is_split(0.39, 0.19, 0.20, 0.16));  /* MEASURES_SPLIT_EACH exactly */
    ck_assert(!measures_is_split(0.39, 0.19, 0.199, 0.16));
    ck_assert(measures_is_split(0.5, 0.19, 0.26, 0.16));   /* a role's share, no role: no edge there */
    ck_assert(measures_is_split(0.499, 0.19, 0.26, 0.16));
    ck_assert(measures_is_split(0.744, 0.19, 0.26, 0.16)); /* together 1.004: within 1 + MEASURES_TIE_SHARE */
    ck_assert(!measures_is_split(0.75, 0.19, 0.26, 0.16)); /* together 1.01: from different rows */
    ck_assert(!measures_is_split(0.39, 0.19, 0.26, 0.26)); /* not above its even share */
    ck_assert(!measures_is_split(0.26, 0.25, 0.25, 0.2)); /* 0.51 < 1.5 x 0.45 */
    ck_assert(measures_is_split(0.26, 0.10, 0.25, 0.2));   /* 0.51 >= 1.5 x 0.30 */
    ck_assert(!measures_is_split(0.26, 0.10, 0.23, 0.1));  /* together under 0.5 */
}
END_TEST

/* The rival sample's one head trained on its own is named for what it
 * does: split between the previous token and the first. */
START_TEST(rival_named_split)
{
    SampleRun r;
    sample_run(&r, "samples/trained/rival.json");
    MapMeasures m[5];
    ck_assert_int_eq(measures_layer(r.multi.att, 4, r.single.att, r.in.cfg.T, 1, r.in.tokens, m), MHAVIZ_OK);
    ck_assert_int_eq(m[4].role, MEASURES_SPLIT);
    ck_assert_int_eq(m[4].split[0], MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(m[4].split[1], MEASURES_FIRST_TOKEN);
    ck_assert_str_eq(measures_role_name(MEASURES_SPLIT), "split");
    /* two heads on each relation: 11 + 10 relation-rows, not 42 head-rows */
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &r.in.cfg, r.multi.att, r.single.att, r.in.tokens, m), MHAVIZ_OK);
    ck_assert_int_eq(k.n_relations, 2);
    ck_assert_int_eq(k.rows, k.relations[0].rows + k.relations[1].rows);
    ck_assert_int_le(k.rows, r.in.cfg.T * 2);
    kept_layer_free(&k);
    sample_run_free(&r);
}
END_TEST

/* --------------------------------------------- chance at the heads' sharpness */

static const char SENTENCE[] = "Mary gave the book to John because John had helped Mary";

/* Layers scaled to a reachable sharpness give shares on any thread count
 * alike (60 draws of d_model 64 with a rival: over CHANCE_PARALLEL_MIN);
 * with no sharpness to match (null), no draw and no range: no fair
 * baseline. */
START_TEST(sharp_draws_any_thread_count)
{
    char **tokens;
    int T;
    char err[256];
    ck_assert_int_eq(init_tokens_split(SENTENCE, &tokens, &T, err, sizeof err), MHAVIZ_OK);
    const MhaConfig c = {T, 64, 4, 4, 16, 1, {0}};
    Chance a = {0}, b = {0}, none = {0};
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    ck_assert_int_eq(chance_sharp(&a, &c, tokens, 1, 0.05, 0.5, 60), MHAVIZ_OK);
#ifdef _OPENMP
    omp_set_num_threads(2);
#endif
    ck_assert_int_eq(chance_sharp(&b, &c, tokens, 1, 0.05, 0.5, 60), MHAVIZ_OK);
    ck_assert_int_eq(a.sharp_draws, 60);
    for (int k = CHANCE_KEPT_SHARE; k <= CHANCE_LOST_SHARE; k++) {
        ck_assert_int_eq(a.r[k].n, b.r[k].n);
        ck_assert_int_ge(a.r[k].n, CHANCE_MIN_DRAWS);
        ck_assert(a.r[k].lo == b.r[k].lo && a.r[k].hi == b.r[k].hi);
        ck_assert(a.r[k].lo >= 0 && a.r[k].hi <= 1);
    }
    ck_assert_int_eq(chance_sharp(&none, &c, tokens, 0, NAN, NAN, 60), MHAVIZ_OK);
    ck_assert_int_eq(none.sharp_draws, 0);
    ck_assert_int_eq(none.r[CHANCE_LOST_SHARE].n, 0);
    init_tokens_free(tokens, T);
}
END_TEST

Suite *contests_suite(void)
{
    Suite *s = suite_create("contests");
    TCase *tc = tcase_create("contests");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, because_row_split_exactly);
    tcase_add_test(tc, float_error_part_is_not_listed);
    tcase_add_loop_test(tc, parts_add_up_to_the_margin, 0, (int)(sizeof BUILT / sizeof BUILT[0]));
    tcase_add_test(tc, tie_tolerance_both_sides);
    tcase_add_test(tc, tie_row_or_followed);
    tcase_add_test(tc, designed_weights_written_exactly);
    tcase_add_test(tc, verdict_thresholds_both_sides);
    tcase_add_test(tc, relation_rows_counted_once);
    tcase_add_test(tc, split_rule_both_sides);
    tcase_add_test(tc, rival_named_split);
    tcase_add_test(tc, sharp_draws_any_thread_count);
    suite_add_tcase(s, tc);
    return s;
}
