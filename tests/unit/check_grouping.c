/* check_grouping.c — which query heads share a K/V head (src/core/grouping.c,
 * pool_layer_grouped in src/core/pool.c). */
#include "core/grouping.h"
#include "core/layer.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/status.h"
#include "io/input.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

static const struct {
    const char *arg;
    const char *says; /* a part of the message */
} BAD[] = {
    {"0,2/1", "head 3 is in no group"},
    {"0,2/1,2", "head 2 is in two groups"},
    {"0,0/1,2", "head 0 is in its group twice"},
    {"0,1,2/3", "the groups differ in size (3 and 1 heads)"},
    {"0,x/1,3", "'x' is not a head"},
    {"0,2//1,3", "'' is not a head"},
    {"", "'' is not a head"},
    {"0,2/1,7", "head 7: the layer has 4 heads (0 to 3)"},
    {"0/1/2/3/4", "more groups than the layer's 4 heads"},
};

START_TEST(bad_groupings_are_named)
{
    Grouping g;
    char err[256];
    ck_assert_int_eq(grouping_parse(BAD[_i].arg, 4, &g, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, BAD[_i].says) && strstr(err, "--kv-groups"), "%s: %s", BAD[_i].arg, err);
}
END_TEST

START_TEST(one_text_per_grouping)
{
    Grouping g;
    char err[256], text[64];
    ck_assert_int_eq(grouping_parse("3,1/2,0", 4, &g, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(g.n_groups, 2);
    grouping_format(text, sizeof text, &g);
    ck_assert_str_eq(text, "0,2/1,3");
    ck_assert(!grouping_is_contiguous(&g));
    ck_assert_int_eq(grouping_parse("0,1/2,3", 4, &g, err, sizeof err), MHAVIZ_OK);
    ck_assert(grouping_is_contiguous(&g));
    ck_assert_int_eq(grouping_parse("0,1,2,3,4,5,6,7,8", 9, &g, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, "at most 8 heads"), "%s", err);
}
END_TEST

/* Neighbours sharing, run as pool_layer_grouped lays it out (one block per
 * query head), gives the maps pool_layer's GQA gives. */
START_TEST(grouped_layout_is_gqa)
{
    MhaInput in;
    char err[256];
    ck_assert_int_eq(input_load("samples/lesson1.json", &in, err, sizeof err), MHAVIZ_OK);
    const int of[4] = {0, 0, 1, 1};
    PooledLayer a, b;
    ck_assert_int_eq(pool_layer(&a, &in.cfg, &in.w, 2, POOL_ALIGNED, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(pool_layer_grouped(&b, &in.cfg, &in.w, of, 2, POOL_ALIGNED, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(b.cfg.n_kv_heads, 4);
    MhaState sa, sb;
    ck_assert_int_eq(mha_state_build(&sa, &a.cfg, 0), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build(&sb, &b.cfg, 0), MHAVIZ_OK);
    mha_forward(&a.cfg, &a.w, in.x, &sa);
    mha_forward(&b.cfg, &b.w, in.x, &sb);
    for (size_t k = 0; k < (size_t)4 * in.cfg.T * in.cfg.T; k++)
        ck_assert_double_eq_tol(sa.att[k], sb.att[k], 1e-6);
    mha_state_free(&sa), mha_state_free(&sb);
    pool_layer_free(&a), pool_layer_free(&b);
    /* an input that already shares K/V heads is refused */
    MhaConfig gqa = in.cfg;
    gqa.n_kv_heads = 2;
    ck_assert_int_eq(pool_layer_grouped(&b, &gqa, &in.w, of, 2, POOL_ALIGNED, err, sizeof err), MHAVIZ_EINPUT);
    input_free(&in);
}
END_TEST

/* Every grouping, ranked. The counts: n! / (s!^(n/s) (n/s)!) for groups of
 * s: 4 heads in pairs 3, 8 in pairs 105, 8 in fours 35, 6 in threes 10.
 * Lesson 1 (designed heads, samples/README.md), plain means (POOL_MEAN):
 * pairing (0,1)/(2,3) or (0,3)/(1,2) moves each head by less than 0.05
 * bits; (0,2)/(1,3) moves head 3 (self) by 0.98 bits over the 10 rows with a
 * choice, and is ranked last: figures of the coordinates the designed heads
 * were written in, which a rotation changes. Aligned, no grouping of lesson 1
 * is unique: its heads use 1 or 2 of their 4 key coordinates. */
START_TEST(lesson1_pairings_ranked)
{
    MhaInput in;
    char err[256];
    ck_assert_int_eq(input_load("samples/lesson1.json", &in, err, sizeof err), MHAVIZ_OK);
    MhaState st;
    ck_assert_int_eq(mha_state_build(&st, &in.cfg, 0), MHAVIZ_OK);
    mha_forward(&in.cfg, &in.w, in.x, &st);
    GroupingScore *s;
    int n;
    ck_assert_int_eq(grouping_rank(&in, st.att, 2, POOL_MEAN, &s, &n), MHAVIZ_OK);
    ck_assert_int_eq(n, 3);
    char text[64];
    grouping_format(text, sizeof text, &s[2].g);
    ck_assert_str_eq(text, "0,2/1,3");
    ck_assert_int_eq(s[2].js_max_head, 3);
    ck_assert_double_eq_tol(s[2].js_max, 0.98, 0.005);
    ck_assert(s[0].js_max < 0.05 && s[1].js_max < 0.05);
    free(s);
    ck_assert_int_eq(grouping_rank(&in, st.att, 2, POOL_ALIGNED, &s, &n), MHAVIZ_OK);
    for (int k = 0; k < n; k++)
        ck_assert(!s[k].unique);
    free(s);
    ck_assert_int_eq(grouping_rank(&in, st.att, 1, POOL_MEAN, &s, &n), MHAVIZ_OK); /* one grouping: MQA */
    ck_assert_int_eq(n, 1);
    free(s);
    mha_state_free(&st);
    input_free(&in);
}
END_TEST

START_TEST(groupings_counted)
{
    MhaInput in = {0};
    const int want[][3] = {{8, 4, 105}, {8, 2, 35}, {6, 2, 10}, {6, 3, 15}};
    for (int k = 0; k < 4; k++) {
        const int H = want[k][0], T = 2, d = H;
        in.cfg = (MhaConfig){T, d, H, H, 1, 1, {0}};
        float *x = calloc((size_t)T * d, sizeof(float)), *w = calloc((size_t)d * d, sizeof(float));
        float *b = calloc((size_t)d, sizeof(float)), *att = calloc((size_t)H * T * T, sizeof(float));
        in.x = x;
        in.w = (MhaWeights){w, w, w, w, b, b, b, b, 0};
        GroupingScore *s;
        int n;
        ck_assert_int_eq(grouping_rank(&in, att, want[k][1], POOL_MEAN, &s, &n), MHAVIZ_OK);
        ck_assert_int_eq(n, want[k][2]);
        free(s), free(x), free(w), free(b), free(att);
    }
}
END_TEST

Suite *grouping_suite(void)
{
    Suite *s = suite_create("grouping");
    TCase *tc = tcase_create("grouping");
    tcase_add_loop_test(tc, bad_groupings_are_named, 0, (int)(sizeof BAD / sizeof BAD[0]));
    tcase_add_test(tc, one_text_per_grouping);
    tcase_add_test(tc, grouped_layout_is_gqa);
    tcase_add_test(tc, lesson1_pairings_ranked);
    tcase_add_test(tc, groupings_counted);
    suite_add_tcase(s, tc);
    return s;
}
