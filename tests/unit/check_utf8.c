/* check_utf8.c — utf8_decode accepts exactly the well-formed UTF-8 of
 * Unicode's Table 3-7 (The Unicode Standard, ch. 3, "Well-Formed UTF-8
 * Byte Sequences"); the expected code points are the bytes decoded by hand. */
#include "text/utf8.h"

#include <check.h>
#include <stdint.h>

START_TEST(well_formed_sequences)
{
    unsigned cp = 0;
    ck_assert_int_eq(utf8_decode((const unsigned char *)"A", 1, &cp), 1);
    ck_assert_uint_eq(cp, 0x41);
    /* U+00E9 é = C3 A9: (0x03 << 6) | 0x29 = 0xE9 */
    ck_assert_int_eq(utf8_decode((const unsigned char *)"\xC3\xA9", 2, &cp), 2);
    ck_assert_uint_eq(cp, 0xE9);
    /* U+2423 ␣ = E2 90 A3: (0x2 << 12) | (0x10 << 6) | 0x23 = 0x2423 */
    ck_assert_int_eq(utf8_decode((const unsigned char *)"\xE2\x90\xA3", 3, &cp), 3);
    ck_assert_uint_eq(cp, 0x2423);
    /* U+1F600 = F0 9F 98 80: (0x1F << 12) | (0x18 << 6) | 0x00 = 0x1F600 */
    ck_assert_int_eq(utf8_decode((const unsigned char *)"\xF0\x9F\x98\x80", 4, &cp), 4);
    ck_assert_uint_eq(cp, 0x1F600);
    /* the last code point, U+10FFFF = F4 8F BF BF */
    ck_assert_int_eq(utf8_decode((const unsigned char *)"\xF4\x8F\xBF\xBF", 4, NULL), 4);
}
END_TEST

START_TEST(ill_formed_sequences)
{
    const struct { const char *bytes; size_t n; } bad[] = {
        {"\x80", 1},             /* a continuation byte alone */
        {"\xC0\xAF", 2},         /* overlong '/' (C0, C1 never occur) */
        {"\xE0\x80\xAF", 3},     /* overlong 3-byte form */
        {"\xF0\x80\x80\xAF", 4}, /* overlong 4-byte form */
        {"\xED\xA0\x80", 3},     /* U+D800, a UTF-16 surrogate */
        {"\xF4\x90\x80\x80", 4}, /* U+110000, beyond Unicode */
        {"\xF5\x80\x80\x80", 4}, /* F5..FF never occur */
        {"\xC3", 1},             /* cut short by n */
        {"\xE2\x90", SIZE_MAX},  /* cut short by the NUL terminator */
        {"\xE2\x41\xA3", 3},     /* a missing continuation byte */
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        ck_assert_msg(utf8_decode((const unsigned char *)bad[i].bytes, bad[i].n, NULL) == 0,
                      "case %zu was accepted", i);
}
END_TEST

Suite *utf8_suite(void)
{
    Suite *s = suite_create("utf8");
    TCase *tc = tcase_create("decode");
    tcase_add_test(tc, well_formed_sequences);
    tcase_add_test(tc, ill_formed_sequences);
    suite_add_tcase(s, tc);
    return s;
}
