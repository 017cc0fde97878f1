/* check_jsonfast.c — the quick reader builds exactly cJSON's tree, or
 * declines. The expected trees and numbers come from cJSON itself
 * (cJSON_ParseWithLengthOpts, as src/input.c calls it) and from strtod:
 * every text the tests give both is compared node by node, every number
 * bit by bit. */
#include "jsonfast.h"

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* 1 when trees a and b hold the same nodes: types, keys, strings, numbers
 * to the bit, valueint, and the same next/prev links (the first child's
 * prev at the last child, as cJSON links them). */
static int same_tree(const cJSON *a, const cJSON *b)
{
    if (a->type != b->type || a->valueint != b->valueint ||
        memcmp(&a->valuedouble, &b->valuedouble, sizeof a->valuedouble) != 0)
        return 0;
    if (!a->string != !b->string || (a->string && strcmp(a->string, b->string) != 0))
        return 0;
    if (!a->valuestring != !b->valuestring || (a->valuestring && strcmp(a->valuestring, b->valuestring) != 0))
        return 0;
    const cJSON *x = a->child, *y = b->child;
    const cJSON *last_x = NULL, *last_y = NULL;
    for (; x && y; last_x = x, x = x->next, last_y = y, y = y->next) {
        if (last_x && (x->prev != last_x || y->prev != last_y))
            return 0;
        if (!same_tree(x, y))
            return 0;
    }
    if (x || y)
        return 0; /* different lengths */
    return !a->child || (a->child->prev == last_x && b->child->prev == last_y);
}

/* Parse text both ways. Returns the quick reader's status; when it is
 * JSONFAST_OK, the trees must be the same. */
static JsonFastStatus compare(const char *text, size_t len, const char *what)
{
    char *copy = malloc(len + 1); /* cJSON wants the NUL; the quick reader must not need it */
    ck_assert_ptr_nonnull(copy);
    memcpy(copy, text, len);
    copy[len] = '\0';
    cJSON *fast = NULL;
    const JsonFastStatus st = jsonfast_parse(copy, len, &fast);
    const char *end = NULL;
    cJSON *slow = cJSON_ParseWithLengthOpts(copy, len + 1, &end, 1);
    if (st == JSONFAST_OK) {
        ck_assert_msg(slow != NULL, "%s: the quick reader took a text cJSON refuses", what);
        ck_assert_msg(same_tree(fast, slow), "%s: the trees differ", what);
    } else {
        ck_assert_ptr_null(fast);
    }
    cJSON_Delete(fast);
    cJSON_Delete(slow);
    free(copy);
    return st;
}

/* Every file in folder dir, both ways; returns how many the quick reader took. */
static int compare_folder(const char *dir)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "cannot open %s", dir);
    int taken = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (e->d_name[0] == '.')
            continue;
        char path[512];
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        struct stat st;
        if (stat(path, &st) != 0 || !S_ISREG(st.st_mode)) /* a folder (samples/trained) */
            continue;
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        fseek(f, 0, SEEK_END);
        const long size = ftell(f);
        rewind(f);
        char *text = malloc(size > 0 ? (size_t)size : 1);
        ck_assert_ptr_nonnull(text);
        const size_t n = fread(text, 1, size > 0 ? (size_t)size : 0, f);
        fclose(f);
        if (!memchr(text, '\0', n)) /* src/input.c refuses NUL bytes before parsing */
            taken += compare(text, n, path) == JSONFAST_OK;
        free(text);
    }
    closedir(d);
    return taken;
}

START_TEST(same_trees_as_cjson_on_the_test_files)
{
    /* The samples are plain JSON: the quick reader must take them all. */
    ck_assert_int_eq(compare_folder("samples"), 5);
    ck_assert_int_gt(compare_folder("tests/data/good"), 0);
    compare_folder("tests/data/bad");
    ck_assert_int_gt(compare_folder("tests/fuzz/corpus"), 0);
    compare_folder("tests/fuzz/regressions");
}
END_TEST

START_TEST(same_trees_on_every_kind_of_value)
{
    const char *text = " {\"a\": [1, -2.5e3, 0, -0, true, false, null, \"s\", [], {}, [[]]],\n"
                       "\t\"a\": {\"k\": \"\xc3\xa9\", \"\": 3e-2}, \"big\": 1e300, \"int\": 2147483648,"
                       " \"neg\": -2147483649, \"inf\": 1e400, \"tab\": \"a\tb\"}\r\n";
    ck_assert_int_eq(compare(text, strlen(text), "every kind"), JSONFAST_OK);
}
END_TEST

/* xorshift64: the same numbers every run. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 7;
    *s ^= *s << 17;
    return *s;
}

/* The quick reader's value for number text num, read as the array "[num]". */
static double read_one(const char *num)
{
    const size_t n = strlen(num) + 2;
    char *text = malloc(n + 1);
    ck_assert_ptr_nonnull(text);
    snprintf(text, n + 1, "[%s]", num);
    cJSON *root = NULL;
    ck_assert_int_eq(jsonfast_parse(text, n, &root), JSONFAST_OK);
    const double v = root->child->valuedouble;
    cJSON_Delete(root);
    free(text);
    return v;
}

static void assert_as_strtod(const char *num)
{
    const double want = strtod(num, NULL), got = read_one(num);
    ck_assert_msg(memcmp(&want, &got, sizeof want) == 0, "%.40s (%zu characters): %.17g, strtod gives %.17g", num,
                  strlen(num), got, want);
}

START_TEST(numbers_as_strtod_reads_them)
{
    /* Edges of the exact path (2^53, 10^22) and of doubles themselves. */
    const char *edge[] = {
        "0", "-0", "0.0", "-0.0e5", "0e-400", "1", "-1", "0.1", "0.125730217", "-1.26542151",
        "1.04e-05", "3.4028235e38", "9007199254740992", "9007199254740993", "9007199254740991.5",
        "1e22", "1e23", "1e-22", "1e-23", "123456789012345e-22", "4.9e-324", "2.4703282292062327e-324",
        "2.2250738585072014e-308", "1.7976931348623157e308", "1.7976931348623159e308", "1e309",
        "12345678901234567890123", "0.000000000000000000000000000001", "1E5", "1e+5", "1.5E-5",
    };
    for (size_t i = 0; i < sizeof edge / sizeof edge[0]; i++)
        assert_as_strtod(edge[i]);
    /* An exponent too long to keep whole, cancelled by as many zeros after
     * the point: 0.(99 999 zeros)1e1000010 is 1e900010, infinite. */
    static char cancel[100032];
    size_t n = (size_t)sprintf(cancel, "0.");
    memset(cancel + n, '0', 99999);
    n += 99999;
    sprintf(cancel + n, "1e1000010");
    assert_as_strtod(cancel);
    /* Random numbers of every shape: 1 to 25 digits, a point anywhere or
     * none, exponents from -340 to 340 or none. */
    uint64_t s = 0x9E3779B97F4A7C15u;
    for (int k = 0; k < 50000; k++) {
        char num[64], *o = num;
        if (next_random(&s) & 1)
            *o++ = '-';
        const int digits = 1 + (int)(next_random(&s) % 25);
        const int point = (int)(next_random(&s) % (uint64_t)(digits + 1)); /* digits before it */
        for (int j = 0; j < digits; j++) {
            if (j == point && j > 0)
                *o++ = '.';
            int d = (int)(next_random(&s) % 10);
            if (j == 0 && d == 0 && point != 1) /* no leading zero before more digits */
                d = 1;
            *o++ = (char)('0' + d);
        }
        if (next_random(&s) % 3 == 0)
            o += sprintf(o, "e%d", (int)(next_random(&s) % 681) - 340);
        *o = '\0';
        assert_as_strtod(num);
    }
}
END_TEST

START_TEST(declines_what_only_cjson_reads)
{
    /* Escapes, numbers outside RFC 8259 (cJSON's strtod takes some of them),
     * other whitespace, errors of every kind, a number that ends the text. */
    const char *declined[] = {
        "[\"a\\nb\"]", "{\"\\u00e9\": 1}", "[01]", "[1.]", "[-.5]", "[.5]", "[+1]", "[1e]",
        "[1e+]", "[-]", "[0x10]", "[1,]", "{\"a\": 1,}", "[1 2]", "{\"a\" 1}", "{1: 2}",
        "[\f1]", "[1]\v", "[1] x", "5", "[\"open", "[tru]", "[nul]", "[truex]", "", "   ",
        "[1]]", "{\"a\": [1, {\"b\": 2]}",
    };
    for (size_t i = 0; i < sizeof declined / sizeof declined[0]; i++)
        ck_assert_msg(compare(declined[i], strlen(declined[i]), declined[i]) == JSONFAST_DECLINED,
                      "took %s", declined[i]);
}
END_TEST

/* An allocator that fails once a given number of calls have succeeded. */
static int allocations_left;
static void *failing_malloc(size_t n)
{
    return allocations_left-- > 0 ? malloc(n) : NULL;
}

START_TEST(out_of_memory_at_every_allocation)
{
    const char *text = "{\"tokens\": [\"a\", \"b\"], \"x\": [[1, 2], [3, 4]], \"causal\": true}";
    cJSON_Hooks hooks = {failing_malloc, free};
    cJSON_InitHooks(&hooks);
    allocations_left = 1000;
    cJSON *root = NULL;
    ck_assert_int_eq(jsonfast_parse(text, strlen(text), &root), JSONFAST_OK);
    cJSON_Delete(root);
    const int needed = 1000 - allocations_left;
    ck_assert_int_gt(needed, 10);
    for (int k = 0; k < needed; k++) { /* fail each allocation in turn: nothing leaks (memcheck) */
        allocations_left = k;
        ck_assert_int_eq(jsonfast_parse(text, strlen(text), &root), JSONFAST_NOMEM);
        ck_assert_ptr_null(root);
    }
    cJSON_InitHooks(NULL);
}
END_TEST

Suite *jsonfast_suite(void)
{
    Suite *s = suite_create("jsonfast");
    TCase *tc = tcase_create("core");
    tcase_set_timeout(tc, 30);
    tcase_add_test(tc, same_trees_as_cjson_on_the_test_files);
    tcase_add_test(tc, same_trees_on_every_kind_of_value);
    tcase_add_test(tc, numbers_as_strtod_reads_them);
    tcase_add_test(tc, declines_what_only_cjson_reads);
    tcase_add_test(tc, out_of_memory_at_every_allocation);
    suite_add_tcase(s, tc);
    return s;
}
