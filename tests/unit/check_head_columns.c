/* check_head_columns.c — which heads a picture shows (src/pictures/head_columns.c). */
#include "pictures/head_columns.h"

#include <check.h>

/* Up to max heads: all of them, in order. */
START_TEST(few_heads_all_shown)
{
    int col[8];
    ck_assert_int_eq(head_columns(4, 8, col), 4);
    for (int h = 0; h < 4; h++)
        ck_assert_int_eq(col[h], h);
    ck_assert_int_eq(head_columns(8, 8, col), 8);
    ck_assert_int_eq(col[7], 7);
}
END_TEST

/* More: the first max - 3, "...", the last two. 32 heads in 8 columns:
 * 0 1 2 3 4 ... 30 31; 9 heads: 0 1 2 3 4 ... 7 8. */
START_TEST(many_heads_middle_left_out)
{
    int col[8];
    const int want32[8] = {0, 1, 2, 3, 4, HEAD_COLUMNS_ELIDED, 30, 31};
    ck_assert_int_eq(head_columns(32, 8, col), 8);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(col[i], want32[i]);
    const int want9[8] = {0, 1, 2, 3, 4, HEAD_COLUMNS_ELIDED, 7, 8};
    ck_assert_int_eq(head_columns(9, 8, col), 8);
    for (int i = 0; i < 8; i++)
        ck_assert_int_eq(col[i], want9[i]);
}
END_TEST

Suite *head_columns_suite(void)
{
    Suite *s = suite_create("head_columns");
    TCase *tc = tcase_create("head_columns");
    tcase_add_test(tc, few_heads_all_shown);
    tcase_add_test(tc, many_heads_middle_left_out);
    suite_add_tcase(s, tc);
    return s;
}
