/* check_outdir.c — the output folder appears whole or not at all. */
#include "outdir.h"
#include "status.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A fresh scratch folder for one test; the caller frees the name. */
static char *scratch(void)
{
    char *dir = strdup("/tmp/mhaviz-outdir-XXXXXX");
    ck_assert_ptr_nonnull(mkdtemp(dir));
    return dir;
}

static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(text, f);
    fclose(f);
}

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* Number of entries in dir besides . and .. */
static int count_entries(const char *dir)
{
    char cmd[512];
    snprintf(cmd, sizeof cmd, "ls -A '%s' | wc -l", dir);
    FILE *p = popen(cmd, "r");
    int n = -1;
    ck_assert_int_eq(fscanf(p, "%d", &n), 1);
    pclose(p);
    return n;
}

/* Begin an output folder for target (which must succeed) and write one
 * file, name, holding text into it; the caller commits or aborts. */
static void begin_with_file(OutDir *o, const char *target, const char *name, const char *text)
{
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(outdir_begin(o, target, err, sizeof err), MHAVIZ_OK);
    char *p = outdir_path(o, name);
    write_file(p, text);
    free(p);
}

START_TEST(new_folder_appears_on_commit)
{
    char *dir = scratch(), target[600], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "report.txt", "hello");
    ck_assert(!exists(target)); /* nothing at the target until commit */
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    snprintf(target, sizeof target, "%s/out/report.txt", dir);
    ck_assert(exists(target));
    ck_assert_int_eq(count_entries(dir), 1); /* no temporary folder left beside it */
    free(dir);
}
END_TEST

START_TEST(abort_leaves_nothing)
{
    char *dir = scratch(), target[600];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "report.txt", "half");
    outdir_abort(&o);
    ck_assert_int_eq(count_entries(dir), 0);
    free(dir);
}
END_TEST

START_TEST(replaces_earlier_output_whole)
{
    char *dir = scratch(), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "head_01.png", "old");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);

    begin_with_file(&o, target, "head_00.png", "new");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    snprintf(path, sizeof path, "%s/head_00.png", target);
    ck_assert(exists(path));
    snprintf(path, sizeof path, "%s/head_01.png", target);
    ck_assert(!exists(path)); /* replaced as a whole, not merged */
    ck_assert_int_eq(count_entries(dir), 1);
    free(dir);
}
END_TEST

START_TEST(refuses_foreign_folder)
{
    char *dir = scratch(), path[700], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    write_file(path, "precious");
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, dir, err, sizeof err), MHAVIZ_EIO);
    ck_assert_ptr_nonnull(strstr(err, "does not hold mhaviz outputs"));
    ck_assert_ptr_nonnull(strstr(err, dir));
    ck_assert(exists(path));
    ck_assert_int_eq(count_entries(dir), 1);
    free(dir);
}
END_TEST

START_TEST(refuses_a_file_as_target)
{
    char *dir = scratch(), path[700], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/input.json", dir);
    write_file(path, "{}");
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, path, err, sizeof err), MHAVIZ_EIO);
    ck_assert_ptr_nonnull(strstr(err, "not a folder"));
    free(dir);
}
END_TEST

START_TEST(messages_name_the_target_not_the_temporary_folder)
{
    char *dir = scratch(), target[600], msg[MHAVIZ_ERRLEN], expected[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, target, err, sizeof err), MHAVIZ_OK);
    char *p = outdir_path(&o, "report.json");
    snprintf(msg, sizeof msg, "%s: cannot write: No space left on device", p);
    free(p);
    outdir_name_target(&o, msg, sizeof msg);
    snprintf(expected, sizeof expected, "%s/report.json: cannot write: No space left on device", target);
    ck_assert_str_eq(msg, expected);
    outdir_abort(&o);
    free(dir);
}
END_TEST

START_TEST(refuses_output_folder_with_a_users_file)
{
    char *dir = scratch(), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "head_00.png", "png");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    /* a teacher saves notes into the output folder: the next run must not delete them */
    snprintf(path, sizeof path, "%s/notes.txt", target);
    write_file(path, "precious");
    ck_assert_int_eq(outdir_begin(&o, target, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "\"notes.txt\", which mhaviz did not write") != NULL, "%s", err);
    ck_assert(exists(path));
    snprintf(path, sizeof path, "%s/head_00.png", target);
    ck_assert(exists(path));
    free(dir);
}
END_TEST

/* A symbolic link to an earlier output folder is refused at the commit, as
 * it always was (rename(2) cannot put a folder in a link's place), and
 * everything is left as it was: the folder it points to keeps its files,
 * nothing else appears beside them. */
START_TEST(refuses_a_link_to_an_output_folder)
{
    char *dir = scratch(), real[600], link[600], err[MHAVIZ_ERRLEN];
    snprintf(real, sizeof real, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    OutDir o;
    begin_with_file(&o, real, "head_00.png", "old");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(symlink("real", link), 0);

    begin_with_file(&o, link, "head_01.png", "new");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "cannot move the outputs into place") != NULL, "%s", err);
    ck_assert_int_eq(count_entries(real), 2); /* the marker and head_00.png */
    ck_assert_int_eq(count_entries(dir), 2);  /* real and link */
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    free(dir);
}
END_TEST

Suite *outdir_suite(void)
{
    Suite *s = suite_create("outdir");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, new_folder_appears_on_commit);
    tcase_add_test(tc, abort_leaves_nothing);
    tcase_add_test(tc, replaces_earlier_output_whole);
    tcase_add_test(tc, refuses_foreign_folder);
    tcase_add_test(tc, refuses_output_folder_with_a_users_file);
    tcase_add_test(tc, refuses_a_file_as_target);
    tcase_add_test(tc, messages_name_the_target_not_the_temporary_folder);
    tcase_add_test(tc, refuses_a_link_to_an_output_folder);
    suite_add_tcase(s, tc);
    return s;
}
