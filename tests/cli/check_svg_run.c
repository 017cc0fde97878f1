/* check_svg_run.c — `mhaviz --svg` as a user runs it (MHAVIZ_BIN): an SVG
 * beside every PNG, named after it, in the folder that appears whole (its
 * marker lists them), the same PNG bytes and other files as without
 * --svg, the memory estimate covering the documents; --help names the
 * option. What the SVGs hold is checked in
 * tests/unit/check_svg.c. */
#include "support.h"

#include <check.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>

/* Run the binary with arguments args (a shell command's tail, quoted by
 * the caller), its stdout into out_path; returns its exit status. */
static int mhaviz(const char *args, const char *out_path)
{
    const char *bin = getenv("MHAVIZ_BIN");
    ck_assert_msg(bin != NULL, "MHAVIZ_BIN is not set: `make test` sets it to ./mhaviz");
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "'%s' %s > '%s' 2>&1", bin, args, out_path);
    const int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* The entries of folder (files and sub-folders, recursively, as paths
 * relative to it) appended to list (n there already, at most max); returns n. */
static int entries(const char *folder, const char *rel, char **list, int n, int max)
{
    char path[1024];
    snprintf(path, sizeof path, "%s%s%s", folder, rel[0] ? "/" : "", rel);
    DIR *d = opendir(path);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char sub[1024], full[2048];
        snprintf(sub, sizeof sub, "%s%s%s", rel, rel[0] ? "/" : "", e->d_name);
        snprintf(full, sizeof full, "%s/%s", folder, sub);
        ck_assert_int_lt(n, max);
        list[n++] = strdup(sub);
        struct stat st;
        ck_assert_int_eq(stat(full, &st), 0);
        if (S_ISDIR(st.st_mode))
            n = entries(folder, sub, list, n, max);
    }
    closedir(d);
    return n;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static int ends_with(const char *s, const char *end)
{
    const size_t n = strlen(s), k = strlen(end);
    return n >= k && strcmp(s + n - k, end) == 0;
}

/* lesson 1 as MHA, GQA-2 and MQA with --steps: every picture kind, in
 * sub-folders and at the top. */
START_TEST(an_svg_beside_every_png)
{
    char *dir = scratch("svg-run"), args[2048], log[512], with[512], without[512];
    snprintf(log, sizeof log, "%s/log", dir);
    snprintf(with, sizeof with, "%s/with", dir);
    snprintf(without, sizeof without, "%s/without", dir);
    snprintf(args, sizeof args, "-q -t 2 --timing --steps --kv-heads 4,2,1 --svg -o '%s' samples/lesson1.json", with);
    ck_assert_int_eq(mhaviz(args, log), 0);
    /* the memory estimate counts the SVG documents: never under the measured
     * peak, nor far above it (as tests/cli/check_cli.c asks without --svg) */
    char *timing = slurp(log, NULL);
    double estimate, peak;
    timing_memory(timing, &estimate, &peak);
#if !defined(__SANITIZE_ADDRESS__) /* AddressSanitizer's memory is no part of the estimate */
    ck_assert_msg(peak <= estimate && estimate <= 1.4 * peak + 4.0, "estimated %.1f MB, peak %.1f MB", estimate, peak);
#endif
    free(timing);
    snprintf(args, sizeof args, "-q --steps --kv-heads 4,2,1 -o '%s' samples/lesson1.json", without);
    ck_assert_int_eq(mhaviz(args, log), 0);

    char *a[256], *b[256];
    const int n_a = entries(with, "", a, 0, 256), n_b = entries(without, "", b, 0, 256);
    qsort(a, (size_t)n_a, sizeof *a, by_name);
    qsort(b, (size_t)n_b, sizeof *b, by_name);
    /* with --svg: the same entries, and one NAME.svg for each NAME.png */
    int i = 0, pngs = 0;
    char *marker = NULL;
    for (int k = 0; k < n_a; k++) {
        if (strcmp(a[k], ".mhaviz-output") == 0) {
            char path[1200];
            snprintf(path, sizeof path, "%s/%s", with, a[k]);
            marker = slurp(path, NULL);
        }
        if (ends_with(a[k], ".svg")) {
            char png[1024];
            snprintf(png, sizeof png, "%.*s.png", (int)(strlen(a[k]) - 4), a[k]);
            int found = 0;
            for (int j = 0; j < n_a; j++)
                found |= strcmp(a[j], png) == 0;
            ck_assert_msg(found, "%s: no %s beside it", a[k], png);
            continue;
        }
        ck_assert_msg(i < n_b && strcmp(a[k], b[i]) == 0, "%s: not written without --svg", a[k]);
        if (ends_with(a[k], ".png")) {
            char p[1200], q[1200];
            snprintf(p, sizeof p, "%s/%s", with, a[k]);
            snprintf(q, sizeof q, "%s/%s", without, a[k]);
            ck_assert_msg(files_same(p, q), "%s: other bytes with --svg", a[k]);
            pngs++;
        }
        i++;
    }
    ck_assert_int_eq(i, n_b);
    ck_assert_int_eq(n_a, n_b + pngs); /* an SVG for each PNG */
    ck_assert_int_ge(pngs, 3 * 14 + 2);
    /* the marker lists the SVGs: a later run may replace the folder */
    ck_assert_ptr_nonnull(marker);
    ck_assert_msg(strstr(marker, "kv2/head_00.svg") && strstr(marker, "variants.svg"), "%s", marker);
    free(marker);
    for (int k = 0; k < n_a; k++)
        free(a[k]);
    for (int k = 0; k < n_b; k++)
        free(b[k]);
    remove_tree(dir);
    free(dir);
}
END_TEST

START_TEST(help_names_svg)
{
    char *dir = scratch("svg-help"), out[1024];
    snprintf(out, sizeof out, "%s/out", dir);
    ck_assert_int_eq(mhaviz("--help", out), 0);
    char *text = slurp(out, NULL);
    ck_assert_msg(strstr(text, "--svg"), "%s", text);
    free(text);
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *svg_run_suite(void)
{
    Suite *s = suite_create("svg_run");
    TCase *tc = tcase_create("svg_run");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, an_svg_beside_every_png);
    tcase_add_test(tc, help_names_svg);
    suite_add_tcase(s, tc);
    return s;
}
