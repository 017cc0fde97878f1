/* check_outdir.c — the output folder appears whole or not at all. */
#include "io/outdir.h"
#include "core/status.h"

#include "support.h"

#include <check.h>
#include <dirent.h>
#include <sys/wait.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

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

/* An output folder at target holding one file, name, with text: committed. */
static void commit_with_file(const char *target, const char *name, const char *text)
{
    OutDir o;
    char err[MHAVIZ_ERRLEN];
    begin_with_file(&o, target, name, text);
    ck_assert_msg(outdir_commit(&o, err, sizeof err) == MHAVIZ_OK, "%s", err);
}

START_TEST(new_folder_appears_on_commit)
{
    char *dir = scratch("outdir"), target[600], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "report.txt", "hello");
    ck_assert(!exists(target)); /* nothing at the target until commit */
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    snprintf(target, sizeof target, "%s/out/report.txt", dir);
    ck_assert(exists(target));
    ck_assert_int_eq(count_entries(dir, NULL), 1); /* no temporary folder left beside it */
    free(dir);
}
END_TEST

START_TEST(abort_leaves_nothing)
{
    char *dir = scratch("outdir"), target[600];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "report.txt", "half");
    outdir_abort(&o);
    ck_assert_int_eq(count_entries(dir, NULL), 0);
    free(dir);
}
END_TEST

START_TEST(replaces_earlier_output_whole)
{
    char *dir = scratch("outdir"), target[600], path[700];
    snprintf(target, sizeof target, "%s/out", dir);
    commit_with_file(target, "head_01.png", "old");

    commit_with_file(target, "head_00.png", "new");
    snprintf(path, sizeof path, "%s/head_00.png", target);
    ck_assert(exists(path));
    snprintf(path, sizeof path, "%s/head_01.png", target);
    ck_assert(!exists(path)); /* replaced as a whole, not merged */
    ck_assert_int_eq(count_entries(dir, NULL), 1);
    free(dir);
}
END_TEST

START_TEST(refuses_foreign_folder)
{
    char *dir = scratch("outdir"), path[700], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/notes.txt", dir);
    write_file(path, "precious");
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, dir, err, sizeof err), MHAVIZ_EIO);
    ck_assert_ptr_nonnull(strstr(err, "does not hold mhaviz outputs"));
    ck_assert_ptr_nonnull(strstr(err, dir));
    ck_assert(exists(path));
    ck_assert_int_eq(count_entries(dir, NULL), 1);
    free(dir);
}
END_TEST

START_TEST(refuses_a_file_as_target)
{
    char *dir = scratch("outdir"), path[700], err[MHAVIZ_ERRLEN];
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
    char *dir = scratch("outdir"), target[600], msg[MHAVIZ_ERRLEN], expected[700], err[MHAVIZ_ERRLEN];
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
    char *dir = scratch("outdir"), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    commit_with_file(target, "head_00.png", "png");
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
    char *dir = scratch("outdir"), real[600], link[600], err[MHAVIZ_ERRLEN];
    snprintf(real, sizeof real, "%s/real", dir);
    snprintf(link, sizeof link, "%s/link", dir);
    OutDir o;
    commit_with_file(real, "head_00.png", "old");
    ck_assert_int_eq(symlink("real", link), 0);

    begin_with_file(&o, link, "head_01.png", "new");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "cannot move the outputs into place") != NULL, "%s", err);
    ck_assert_int_eq(count_entries(real, NULL), 2); /* the marker and head_00.png */
    ck_assert_int_eq(count_entries(dir, NULL), 2);  /* real and link */
    struct stat st;
    ck_assert_int_eq(lstat(link, &st), 0);
    ck_assert(S_ISLNK(st.st_mode));
    free(dir);
}
END_TEST

/* The whole marker file of folder dir; the caller frees it. */
static char *read_marker(const char *dir)
{
    char path[700];
    snprintf(path, sizeof path, "%s/%s", dir, OUTDIR_MARKER);
    FILE *f = fopen(path, "r");
    ck_assert_ptr_nonnull(f);
    char *text = calloc(4096, 1);
    ck_assert_uint_lt(fread(text, 1, 4095, f), 4095);
    fclose(f);
    return text;
}

/* Whatever files and sub-folders a run writes, the marker lists them, so
 * the next run may replace the folder: a new kind of output or a new
 * sub-folder (kv4/) cannot stop it. */
START_TEST(marker_lists_every_file_and_subfolder)
{
    char *dir = scratch("outdir"), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    begin_with_file(&o, target, "report.json", "{}");
    char *p = outdir_path(&o, "a_kind_never_seen.xyz");
    write_file(p, "new");
    free(p);
    p = outdir_path(&o, "kv4");
    ck_assert_int_eq(mkdir(p, 0777), 0);
    free(p);
    p = outdir_path(&o, "kv4/head_00.png");
    write_file(p, "png");
    free(p);
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    ck_assert_str_eq(err, "");
    char *marker = read_marker(target);
    const char *lines[] = {"written by mhaviz; a later run may replace this folder\n", "\nreport.json\n",
                           "\na_kind_never_seen.xyz\n", "\nkv4/\n", "\nkv4/head_00.png\n"};
    for (size_t k = 0; k < sizeof lines / sizeof lines[0]; k++)
        ck_assert_msg(strstr(marker, lines[k]) != NULL, "no line %s in:\n%s", lines[k], marker);
    ck_assert_msg(strncmp(marker, lines[0], strlen(lines[0])) == 0, "%s", marker);
    ck_assert(strstr(marker, "\nkv4/\n") < strstr(marker, "\nkv4/head_00.png\n")); /* folder first */
    free(marker);

    commit_with_file(target, "head_00.png", "new");
    ck_assert_str_eq(err, "");
    ck_assert_int_eq(count_entries(target, NULL), 2); /* the marker and head_00.png: the rest went */
    ck_assert_int_eq(count_entries(dir, NULL), 1);    /* out, and nothing kept beside it */

    /* A user's file inside a sub-folder is as safe as one at the top. */
    commit_with_file(target, "kv4", "");
    ck_assert_int_eq(unlink(strcat(strcpy(path, target), "/kv4")), 0);
    ck_assert_int_eq(mkdir(path, 0777), 0); /* kv4 now a folder the marker lists as a file */
    ck_assert_int_eq(outdir_begin(&o, target, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "\"kv4/\", which mhaviz did not write") != NULL, "%s", err);
    free(dir);
}
END_TEST

/* A marker that lists a folder does not cover a file a user saved in it. */
START_TEST(refuses_a_users_file_in_a_subfolder)
{
    char *dir = scratch("outdir"), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, target, err, sizeof err), MHAVIZ_OK);
    char *p = outdir_path(&o, "kv2");
    ck_assert_int_eq(mkdir(p, 0777), 0);
    free(p);
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_OK);
    snprintf(path, sizeof path, "%s/kv2/notes.txt", target);
    write_file(path, "precious");
    ck_assert_int_eq(outdir_begin(&o, target, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "\"kv2/notes.txt\", which mhaviz did not write") != NULL, "%s", err);
    ck_assert(exists(path));
    free(dir);
}
END_TEST

/* A file saved into the earlier output after outdir_begin checked it: the
 * commit checks again and refuses; the file and the earlier output stay. */
START_TEST(file_saved_after_the_check_refuses_the_commit)
{
    char *dir = scratch("outdir"), target[600], path[700], err[MHAVIZ_ERRLEN];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    commit_with_file(target, "head_00.png", "old");
    begin_with_file(&o, target, "head_00.png", "new");
    snprintf(path, sizeof path, "%s/notes.txt", target);
    write_file(path, "precious");
    ck_assert_int_eq(outdir_commit(&o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "\"notes.txt\", which mhaviz did not write") != NULL, "%s", err);
    ck_assert(exists(path));
    snprintf(path, sizeof path, "%s/head_00.png", target);
    ck_assert(exists(path));
    ck_assert_int_eq(count_entries(target, NULL), 3); /* marker, head_00.png, notes.txt */
    ck_assert_int_eq(count_entries(dir, NULL), 1);    /* no temporary folder left */
    free(dir);
}
END_TEST

/* Path of the one file named name in dir or in a "out.kept-*" folder of
 * dir, into found; 0 when it is nowhere. */
static int find_saved(const char *dir, const char *name, char *found, size_t n)
{
    snprintf(found, n, "%s/out/%s", dir, name);
    if (exists(found))
        return 1;
    DIR *d = opendir(dir);
    struct dirent *e;
    int hit = 0;
    while (!hit && (e = readdir(d)) != NULL) {
        if (strncmp(e->d_name, "out.kept-", 9) != 0)
            continue;
        snprintf(found, n, "%s/%s/%s", dir, e->d_name, name);
        hit = exists(found);
    }
    closedir(d);
    return hit;
}

/* A user saves a file into the output folder while runs replace it: with
 * every timing (before the commit's check, between the check and the swap,
 * after the swap) the file survives, in the folder or kept beside it. Each
 * round a child writes its file the moment the parent starts committing. */
START_TEST(file_saved_during_the_commit_is_never_lost)
{
    char *dir = scratch("outdir"), target[600], err[MHAVIZ_ERRLEN], name[32], found[900];
    snprintf(target, sizeof target, "%s/out", dir);
    OutDir o;
    for (int round = 0; round < 200; round++) { /* deleting the earlier output whole fails here in most runs */
        begin_with_file(&o, target, "head_00.png", "png");
        int go[2];
        ck_assert_int_eq(pipe(go), 0);
        snprintf(name, sizeof name, "notes-%d.txt", round);
        pid_t pid = fork();
        ck_assert_int_ge(pid, 0);
        if (pid == 0) {
            char c, path[700];
            close(go[1]);
            if (read(go[0], &c, 1) != 1)
                _exit(1);
            for (volatile int spin = 0; spin < (round % 10) * 2000; spin++) /* vary the moment */
                ;
            snprintf(path, sizeof path, "%s/%s", target, name);
            FILE *f = fopen(path, "w");
            _exit(f && fputs("precious", f) >= 0 && fclose(f) == 0 ? 0 : 1);
        }
        close(go[0]);
        ck_assert_int_eq(write(go[1], "g", 1), 1);
        close(go[1]);
        const int rc = outdir_commit(&o, err, sizeof err);
        int st;
        ck_assert_int_eq(waitpid(pid, &st, 0), pid);
        if (WIFEXITED(st) && WEXITSTATUS(st) == 0)
            ck_assert_msg(find_saved(dir, name, found, sizeof found), "round %d (commit %d: %s): %s lost",
                          round, rc, err, name);
        else /* the target was missing for a moment (the first round): nothing was saved */
            ck_assert_int_eq(round, 0);
        /* tidy up for the next round: the user takes their file away */
        if (find_saved(dir, name, found, sizeof found))
            ck_assert_int_eq(unlink(found), 0);
        DIR *d = opendir(dir);
        struct dirent *e;
        while ((e = readdir(d)) != NULL)
            if (strncmp(e->d_name, "out.kept-", 9) == 0) {
                char kept[900];
                snprintf(kept, sizeof kept, "%s/%s", dir, e->d_name);
                ck_assert_int_eq(rmdir(kept), 0); /* emptied above: it held nothing else */
            }
        closedir(d);
    }
    free(dir);
}
END_TEST

/* A folder an mhaviz older than the marker's list wrote (its marker is one
 * line) is not replaced, and the message says why instead of calling its
 * pictures someone else's. */
START_TEST(names_an_older_mhavizs_folder)
{
    char *dir = scratch("outdir"), path[700], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "%s/%s", dir, OUTDIR_MARKER);
    write_file(path, "written by mhaviz; a later run may replace this folder\n");
    snprintf(path, sizeof path, "%s/head_00.png", dir);
    write_file(path, "png");
    OutDir o;
    ck_assert_int_eq(outdir_begin(&o, dir, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "folder was written by an older mhaviz, whose marker does not list its files") != NULL,
                  "%s", err);
    ck_assert(exists(path));
    free(dir);
}
END_TEST

/* The names of a run's files: two digits up to 99 heads, three from 100
 * (so that they sort in head order), and kvN for a variant's folder. */
START_TEST(file_names_of_heads_and_variants)
{
    char b[32];
    outdir_head_name(b, sizeof b, 7, 4);
    ck_assert_str_eq(b, "head_07");
    outdir_head_name(b, sizeof b, 98, 99);
    ck_assert_str_eq(b, "head_98");
    outdir_head_name(b, sizeof b, 7, 100);
    ck_assert_str_eq(b, "head_007");
    outdir_variant_folder(b, sizeof b, 2);
    ck_assert_str_eq(b, "kv2");
}
END_TEST

Suite *outdir_suite(void)
{
    Suite *s = suite_create("outdir");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, new_folder_appears_on_commit);
    tcase_add_test(tc, file_names_of_heads_and_variants);
    tcase_add_test(tc, abort_leaves_nothing);
    tcase_add_test(tc, replaces_earlier_output_whole);
    tcase_add_test(tc, refuses_foreign_folder);
    tcase_add_test(tc, refuses_output_folder_with_a_users_file);
    tcase_add_test(tc, refuses_a_file_as_target);
    tcase_add_test(tc, messages_name_the_target_not_the_temporary_folder);
    tcase_add_test(tc, refuses_a_link_to_an_output_folder);
    tcase_add_test(tc, marker_lists_every_file_and_subfolder);
    tcase_add_test(tc, refuses_a_users_file_in_a_subfolder);
    tcase_add_test(tc, file_saved_after_the_check_refuses_the_commit);
    tcase_add_test(tc, file_saved_during_the_commit_is_never_lost);
    tcase_add_test(tc, names_an_older_mhavizs_folder);
    tcase_set_timeout(tc, 30);
    suite_add_tcase(s, tc);
    return s;
}
