/* check_kept.c — the heads' relations kept and lost by the wide head (src/kept.c).
 *
 * Maps written by hand: every expected count follows from the rule in
 * kept.h (a head holds its pattern in a row when the pattern's cells hold
 * at least half of it and the row is sharp; the wide head keeps it when its
 * own cells of that pattern hold at least half of its row). */
#include "core/kept.h"
#include "core/measures.h"
#include "core/status.h"

#include <check.h>
#include <string.h>

static char *const TOKENS[] = {"a", "b", "c", "d"};

/* Two heads over 4 tokens, causal: head 0 all on the previous token, head
 * 1 all on itself (rows 1 to 3; row 0 sees one key). The wide head puts
 * 0.6 on the previous token and 0.4 on itself: it keeps head 0's
 * previous-token pull in rows 1, 2, 3 and halves head 1's self pull there
 * (0.4: at least KEPT_HALVED_AT_LEAST, under a half). */
START_TEST(kept_previous_lost_self)
{
    const MhaConfig c = {4, 4, 2, 2, 2, 1};
    float att[2 * 16] = {0}, wide[16] = {0};
    att[0] = att[16] = wide[0] = 1; /* row 0: its one key */
    for (int i = 1; i < 4; i++) {
        att[i * 4 + i - 1] = 1;      /* head 0 */
        att[16 + i * 4 + i] = 1;     /* head 1 */
        wide[i * 4 + i - 1] = 0.6f;
        wide[i * 4 + i] = 0.4f;
    }
    MapMeasures m[3];
    ck_assert_int_eq(measures_layer(att, 2, wide, 4, 1, TOKENS, m), MHAVIZ_OK);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, wide, TOKENS, m), MHAVIZ_OK);
    ck_assert_int_eq(k.heads[0].relation, MEASURES_PREVIOUS_TOKEN);
    ck_assert(k.heads[0].is_role);
    ck_assert_int_eq(k.heads[0].rows, 3);
    ck_assert_int_eq(k.heads[0].kept, 3);
    ck_assert_int_eq(k.heads[1].relation, MEASURES_SELF);
    ck_assert_int_eq(k.heads[1].rows, 3);
    ck_assert_int_eq(k.heads[1].kept, 0);
    ck_assert_int_eq(k.rows, 6);
    ck_assert_int_eq(k.verdict[KEPT_KEPT], 3);
    ck_assert_int_eq(k.verdict[KEPT_HALVED], 3); /* 0.4 on itself: between a quarter and a half */
    ck_assert_int_eq(k.verdict[KEPT_LOST], 0);
    kept_layer_free(&k);
}
END_TEST

/* A head that spreads every row evenly holds no pull: in row 1 its
 * previous-token cell has 0.5 (half the row) but the row's normalised
 * entropy is 1, not below 0.5. */
START_TEST(diffuse_head_holds_nothing)
{
    const MhaConfig c = {4, 4, 1, 1, 4, 1};
    float att[16] = {0};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j <= i; j++)
            att[i * 4 + j] = 1.0f / (float)(i + 1);
    MapMeasures m[2];
    ck_assert_int_eq(measures_layer(att, 1, att, 4, 1, TOKENS, m), MHAVIZ_OK);
    ck_assert_int_eq(m[0].role, MEASURES_DIFFUSE);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, att, TOKENS, m), MHAVIZ_OK);
    ck_assert(!k.heads[0].is_role);
    ck_assert_int_ge(k.heads[0].relation, 0); /* its strongest pattern */
    ck_assert_int_eq(k.heads[0].rows, 0);
    ck_assert_int_eq(k.rows, 0);
    kept_layer_free(&k);
}
END_TEST

Suite *kept_suite(void)
{
    Suite *s = suite_create("kept");
    TCase *tc = tcase_create("kept");
    tcase_add_test(tc, kept_previous_lost_self);
    tcase_add_test(tc, diffuse_head_holds_nothing);
    suite_add_tcase(s, tc);
    return s;
}
