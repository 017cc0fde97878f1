/* check_json.c — the one JSON writer (io/json.h): its escaping, and
 * numbers that read back to the same bits. */
#include "io/json.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* What json_string writes for s, NUL-terminated in out (n bytes). */
static void written(const char *s, char *out, size_t n)
{
    FILE *f = fmemopen(out, n, "w");
    ck_assert_ptr_nonnull(f);
    json_string(f, s);
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(strings_are_escaped_one_way)
{
    static const struct {
        const char *in, *out;
    } cases[] = {
        {"plain", "\"plain\""},
        {"say \"hi\" \\ bye", "\"say \\\"hi\\\" \\\\ bye\""},
        {"a\nb\tc\rd", "\"a\\nb\\tc\\rd\""},
        {"\x01\x1f", "\"\\u0001\\u001f\""},
        {"caf\xc3\xa9 \xe2\x90\xa3", "\"caf\xc3\xa9 \xe2\x90\xa3\""}, /* UTF-8 as it is */
        {"bad \xff byte", "\"bad \\ufffd byte\""},                  /* not UTF-8: U+FFFD */
        {"cut \xc3", "\"cut \\ufffd\""},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char out[128];
        written(cases[k].in, out, sizeof out);
        ck_assert_str_eq(out, cases[k].out);
        cJSON *j = cJSON_Parse(out); /* and a JSON reader reads it back */
        ck_assert_msg(cJSON_IsString(j), "%s", out);
        cJSON_Delete(j);
    }
}
END_TEST

START_TEST(numbers_read_back_to_the_same_bits)
{
    const float xs[] = {0.1f, -3.4028235e38f, 1.17549435e-38f, 1.0f / 3.0f, 0.0f};
    for (size_t k = 0; k < sizeof xs / sizeof xs[0]; k++) {
        char out[64] = "";
        FILE *f = fmemopen(out, sizeof out, "w");
        json_number(f, xs[k]);
        fclose(f);
        ck_assert_msg(strtof(out, NULL) == xs[k], "%s", out);
    }
    char out[64] = "";
    FILE *f = fmemopen(out, sizeof out, "w");
    json_number(f, NAN);
    fputc(' ', f);
    json_number(f, INFINITY);
    fclose(f);
    ck_assert_str_eq(out, "null null");
}
END_TEST

Suite *json_suite(void)
{
    Suite *s = suite_create("json");
    TCase *t = tcase_create("json");
    tcase_add_test(t, strings_are_escaped_one_way);
    tcase_add_test(t, numbers_read_back_to_the_same_bits);
    suite_add_tcase(s, t);
    return s;
}
