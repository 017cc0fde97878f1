/* check_fuzzreplay.c — every fuzz seed and every input the fuzzer once broke
 * the program with, replayed through the fuzz harness (tests/fuzz/).
 *
 * The harness aborts on any broken promise (a status outside the documented
 * ones, a failure without a message, a validated input with bad shapes or
 * non-finite numbers); under `make asan` and `make memcheck` the same replay
 * also catches memory errors and leaks. Expected outcome of each file: the
 * harness returns 0 (the loader accepts it and the forward pass runs, or
 * refuses it with a message). */
#include "support.h"

#include <check.h>
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_FILES 1024
static const char *const folders[] = {"tests/fuzz/corpus", "tests/fuzz/regressions"};
static char *files[MAX_FILES];
static int n_files;

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void list_files(void)
{
    for (size_t f = 0; f < sizeof folders / sizeof folders[0]; f++) {
        DIR *d = opendir(folders[f]);
        if (!d)
            continue;
        struct dirent *e;
        while ((e = readdir(d)) != NULL && n_files < MAX_FILES) {
            if (e->d_name[0] == '.')
                continue;
            size_t n = strlen(folders[f]) + strlen(e->d_name) + 2;
            files[n_files] = malloc(n);
            snprintf(files[n_files], n, "%s/%s", folders[f], e->d_name);
            n_files++;
        }
        closedir(d);
    }
    qsort(files, (size_t)n_files, sizeof files[0], by_name);
}

/* The file at path in a buffer of exactly its size, so ASan sees any read
 * past the end. */
static unsigned char *read_all(const char *path, size_t *len)
{
    size_t n;
    char *buf = slurp(path, &n);
    unsigned char *exact = malloc(n ? n : 1);
    memcpy(exact, buf, n);
    free(buf);
    *len = n;
    return exact;
}

START_TEST(corpus_file_is_handled)
{
    size_t len;
    unsigned char *data = read_all(files[_i], &len);
    ck_assert_msg(LLVMFuzzerTestOneInput(data, len) == 0, "%s", files[_i]);
    free(data);
}
END_TEST

START_TEST(corpus_is_there)
{
    /* The replay must not pass by finding nothing (run from the repo root). */
    ck_assert_int_ge(n_files, 10);
}
END_TEST

static void free_files(void)
{
    for (int i = 0; i < n_files; i++)
        free(files[i]);
    n_files = 0;
}

Suite *fuzzreplay_suite(void)
{
    if (n_files == 0) {
        list_files();
        atexit(free_files);
    }
    Suite *s = suite_create("fuzzreplay");
    TCase *tc = tcase_create("replay");
    tcase_add_test(tc, corpus_is_there);
    tcase_add_loop_test(tc, corpus_file_is_handled, 0, n_files);
    suite_add_tcase(s, tc);
    return s;
}
