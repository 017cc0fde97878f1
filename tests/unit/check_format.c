/* check_format.c — numbers as the report and the pictures print them
 * (src/text/format.c). Every expected text is the number rounded by hand. */
#include "text/format.h"

#include <check.h>
#include <math.h>

START_TEST(grouped_in_thousands)
{
    char buf[32];
    ck_assert_str_eq(format_grouped(buf, 16384), "16,384");
    ck_assert_str_eq(format_grouped(buf, 999), "999");
    ck_assert_str_eq(format_grouped(buf, -1234567), "-1,234,567");
}
END_TEST

/* Never "5.68e+03": large numbers rounded and grouped, small ones in
 * plain decimals, without trailing zeros. */
START_TEST(significant_without_exponents)
{
    char buf[FORMAT_SIGNIFICANT_BYTES];
    ck_assert_str_eq(format_significant(buf, 5678.2, 3), "5,680");
    ck_assert_str_eq(format_significant(buf, 14921.3, 3), "14,900");
    ck_assert_str_eq(format_significant(buf, 999.6, 3), "1,000");
    ck_assert_str_eq(format_significant(buf, 123.4, 3), "123");
    ck_assert_str_eq(format_significant(buf, 12.34, 3), "12.3");
    ck_assert_str_eq(format_significant(buf, 0.00028113, 2), "0.00028");
    ck_assert_str_eq(format_significant(buf, 0.000012, 2), "0.000012");
    ck_assert_str_eq(format_significant(buf, 0.5, 2), "0.5");
    ck_assert_str_eq(format_significant(buf, 2.0, 3), "2");
    ck_assert_str_eq(format_significant(buf, -31.49, 3), "-31.5");
    ck_assert_str_eq(format_significant(buf, 0.0, 3), "0");
    ck_assert_str_eq(format_significant(buf, 3e20, 2), "300000000000000000000");
    ck_assert_str_eq(format_significant(buf, INFINITY, 3), "inf");
}
END_TEST

Suite *format_suite(void)
{
    Suite *s = suite_create("format");
    TCase *tc = tcase_create("format");
    tcase_add_test(tc, grouped_in_thousands);
    tcase_add_test(tc, significant_without_exponents);
    suite_add_tcase(s, tc);
    return s;
}
