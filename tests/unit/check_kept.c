/* check_kept.c — the heads' relations kept and lost by the wide head (src/core/kept.c).
 *
 * Maps written by hand: every expected count follows from the rule in
 * kept.h (a head holds its pattern in a row when the pattern's cells hold
 * at least half of it and the row is sharp; the wide head keeps it when its
 * own cells of that pattern hold at least half of its row). */
#include "core/kept.h"
#include "core/measures.h"
#include "core/status.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

static char *const TOKENS[] = {"a", "b", "c", "d"};

/* A head whose strongest patterns tie holds no one relation: list order
 * would name one of them. One head, causal T = 16, rows 1..15 at 0.5 on the
 * previous token and 0.5 on itself (measures: split, previous and self
 * each 0.5, check_measures.c tied_patterns_make_no_role); its rows 4..15
 * are sharp (1 bit of log2(5) or more) and show both at exactly half. */
START_TEST(tied_strongest_patterns_hold_no_relation)
{
    enum { T = 16 };
    static char *tokens[T];
    static char names[T][4];
    for (int t = 0; t < T; t++) {
        snprintf(names[t], sizeof names[t], "w%d", t);
        tokens[t] = names[t];
    }
    const MhaConfig c = {T, 1, 1, 1, 1, 1, {0}};
    float att[T * T] = {0};
    att[0] = 1;
    for (int i = 1; i < T; i++)
        att[i * T + i - 1] = att[i * T + i] = 0.5f;
    MapMeasures m[2];
    ck_assert_int_eq(measures_layer(att, 1, att, T, 1, tokens, m), MHAVIZ_OK);
    ck_assert_int_eq(m[0].role, MEASURES_SPLIT);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, att, tokens, m), MHAVIZ_OK);
    ck_assert_int_eq(k.heads[0].relation, -1);
    ck_assert_int_eq(k.heads[0].rows, 0);
    ck_assert_int_eq(k.n_relations, 0);
    ck_assert_int_eq(k.rows, 0);
    kept_layer_free(&k);
}
END_TEST

/* Two heads over 4 tokens, causal: head 0 all on the previous token, head
 * 1 all on itself (rows 1 to 3; row 0 sees one key). The wide head puts
 * 0.6 on the previous token and 0.4 on itself: it keeps head 0's
 * previous-token pull in rows 1, 2, 3 and halves head 1's self pull there
 * (0.4: at least KEPT_HALVED_AT_LEAST, under a half). */
START_TEST(kept_previous_lost_self)
{
    const MhaConfig c = {4, 4, 2, 2, 2, 1, {0}};
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
    const MhaConfig c = {4, 4, 1, 1, 4, 1, {0}};
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
    /* its strongest patterns, the previous token and itself, tie at
     * (1/2 + 1/3 + 1/4) / 3 each: no one relation */
    ck_assert_int_eq(k.heads[0].relation, -1);
    ck_assert_int_eq(k.heads[0].rows, 0);
    ck_assert_int_eq(k.rows, 0);
    kept_layer_free(&k);
}
END_TEST

/* The wide head's threshold, held from both sides: it keeps a relation
 * in a row where the pattern's cells hold MEASURES_SHOWN_SHARE (0.5) of
 * its row, exactly, and does not keep it at 0.49 and at 0.46 (there it
 * halves it: both are at least KEPT_HALVED_AT_LEAST; a threshold moved to
 * 0.45 keeps those; one made strict, > 0.5, loses the first). Head 0:
 * all on the previous token in rows 1 to 3 (causal; row 0 sees one key).
 * The wide head's rows 1, 2, 3 put 0.5, 0.49, 0.46 on the previous token
 * and the rest on the token itself (0.5f and 0.49f are below 0.5 or equal
 * to it in float as in double). */
START_TEST(kept_at_half_lost_below)
{
    const MhaConfig c = {4, 4, 1, 1, 4, 1, {0}};
    const float prev[4] = {0, 0.5f, 0.49f, 0.46f};
    float att[16] = {0}, wide[16] = {0};
    att[0] = wide[0] = 1;
    for (int i = 1; i < 4; i++) {
        att[i * 4 + i - 1] = 1;
        wide[i * 4 + i - 1] = prev[i];
        wide[i * 4 + i] = 1 - prev[i];
    }
    MapMeasures m[2];
    ck_assert_int_eq(measures_layer(att, 1, wide, 4, 1, TOKENS, m), MHAVIZ_OK);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, wide, TOKENS, m), MHAVIZ_OK);
    ck_assert_int_eq(k.heads[0].relation, MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(k.heads[0].rows, 3);
    ck_assert_int_eq(k.heads[0].kept, 1); /* row 1 only */
    ck_assert_int_eq(k.rows, 3);
    ck_assert_int_eq(k.verdict[KEPT_KEPT], 1);
    ck_assert_int_eq(k.verdict[KEPT_HALVED], 2); /* rows 2 and 3 */
    ck_assert_int_eq(k.verdict[KEPT_LOST], 0);
    kept_layer_free(&k);
}
END_TEST

/* Each row counts once: without the mask (every row sees 4 keys, row 0
 * too), heads 0 and 1 both put all of every row on the token itself, so
 * each holds 4 rows, and the layer's one relation (self) 4 relation-rows
 * (a row held by two heads counts once: relations are counted, not heads).
 * The wide head is on itself in rows 1 and 2, on the next token in row 0
 * and on the previous one in row 3: the relation kept in 2 rows, lost in 2
 * (row 0, which only an unmasked map counts, among the lost). */
START_TEST(each_row_counted_once)
{
    const MhaConfig c = {4, 4, 2, 2, 2, 0, {0}};
    float att[2 * 16] = {0}, wide[16] = {0};
    for (int i = 0; i < 4; i++) {
        att[i * 4 + i] = att[16 + i * 4 + i] = 1;
        wide[i * 4 + (i == 0 ? 1 : i == 3 ? 2 : i)] = 1;
    }
    MapMeasures m[3];
    ck_assert_int_eq(measures_layer(att, 2, wide, 4, 0, TOKENS, m), MHAVIZ_OK);
    KeptLayer k;
    ck_assert_int_eq(kept_layer_build(&k, &c, att, wide, TOKENS, m), MHAVIZ_OK);
    for (int h = 0; h < 2; h++) {
        ck_assert_int_eq(k.heads[h].relation, MEASURES_SELF);
        ck_assert_int_eq(k.heads[h].rows, 4);
        ck_assert_int_eq(k.heads[h].kept, 2);
    }
    ck_assert_int_eq(k.n_relations, 1);
    ck_assert_int_eq(k.relations[0].rows, 4);
    ck_assert_int_eq(k.rows, 4);
    ck_assert_int_eq(k.verdict[KEPT_KEPT], 2);
    ck_assert_int_eq(k.verdict[KEPT_LOST], 2);
    kept_layer_free(&k);
}
END_TEST

Suite *kept_suite(void)
{
    Suite *s = suite_create("kept");
    TCase *tc = tcase_create("kept");
    tcase_add_test(tc, kept_previous_lost_self);
    tcase_add_test(tc, diffuse_head_holds_nothing);
    tcase_add_test(tc, kept_at_half_lost_below);
    tcase_add_test(tc, each_row_counted_once);
    tcase_add_test(tc, tied_strongest_patterns_hold_no_relation);
    suite_add_tcase(s, tc);
    return s;
}
