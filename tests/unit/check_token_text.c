/* check_token_text.c — the one way a token is shown (src/text/token_text.c). */
#include "text/token_text.h"

#include <check.h>
#include <string.h>

static const struct {
    const char *token, *shown;
} CASES[] = {
    {"Mary", "Mary"},
    {"", "\"\""},
    {"line\nbreak", "line\\nbreak"},
    {"tab\t", "tab\\t"},
    {"a\rb\vc\fd", "a\\rb\\vc\\fd"},
    {"\x01", "\\x01"},
    {"\x7f", "\\x7F"},
    {" ", "\xe2\x90\xa3"},          /* a space alone: U+2423 */
    {" \n", "\xe2\x90\xa3\\n"},     /* white space only */
    {"a b", "a b"},                  /* a space among letters stays */
    {"caf\xc3\xa9", "caf\xc3\xa9"},
    {"bad\xff", "bad\xef\xbf\xbd"}, /* not UTF-8: U+FFFD */
};

START_TEST(tokens_shown_one_way)
{
    char buf[64];
    ck_assert_str_eq(token_text(buf, sizeof buf, CASES[_i].token), CASES[_i].shown);
}
END_TEST

/* Cut at a code point, with an ellipsis, never past the buffer. */
START_TEST(long_token_cut)
{
    char buf[12];
    token_text(buf, sizeof buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9");
    ck_assert_str_eq(buf, "\xc3\xa9\xc3\xa9\xc3\xa9\xc3\xa9\xe2\x80\xa6");
}
END_TEST

Suite *token_text_suite(void)
{
    Suite *s = suite_create("token_text");
    TCase *tc = tcase_create("token_text");
    tcase_add_loop_test(tc, tokens_shown_one_way, 0, (int)(sizeof CASES / sizeof CASES[0]));
    tcase_add_test(tc, long_token_cut);
    suite_add_tcase(s, tc);
    return s;
}
