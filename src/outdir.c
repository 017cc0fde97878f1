/* outdir.c — write outputs into a temporary folder, then rename it into place. */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (Linux) */
#include "outdir.h"
#include "status.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <fnmatch.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* How often commit retries when another run replaces the target meanwhile. */
#define COMMIT_TRIES 20

/* "dir/.base.<what>-XXXXXX" beside path, for mkdtemp; caller frees. */
static char *sibling_template(const char *path, const char *what)
{
    const char *slash = strrchr(path, '/');
    int dir_len = slash ? (int)(slash - path) + 1 : 0;
    const char *base = slash ? slash + 1 : path;
    size_t n = strlen(path) + strlen(what) + 16;
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s.%s.%s-XXXXXX", dir_len, path, base, what);
    return s;
}

/* Remove folder dir and everything in it: files, and the sub-folders of a
 * run of several variants (kv4/, kv2/, ...). A symbolic link is removed,
 * never followed. */
static void remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            size_t n = strlen(dir) + strlen(e->d_name) + 2;
            char *p = malloc(n);
            if (!p)
                break;
            snprintf(p, n, "%s/%s", dir, e->d_name);
            struct stat st;
            if (lstat(p, &st) == 0 && S_ISDIR(st.st_mode))
                remove_folder(p);
            else
                unlink(p);
            free(p);
        }
        closedir(d);
    }
    rmdir(dir);
}

/* The names an mhaviz run writes (outdir_begin writes OUTDIR_MARKER). */
static const char *const OUTPUT_NAMES[] = {
    OUTDIR_MARKER, "report.txt", "report.json", "overview.png", "difference.png",
    "single_head.png", "head_[0-9][0-9]*.png", "head_[0-9][0-9]*_scores.png",
    "architecture.png", "variants.png", "kv_cache.png",
};

/* The sub-folders a run of several variants writes, one per variant (variants.h). */
#define OUTPUT_SUBFOLDER "kv[1-9]*"

static int is_output_name(const char *name)
{
    for (size_t i = 0; i < sizeof OUTPUT_NAMES / sizeof OUTPUT_NAMES[0]; i++)
        if (fnmatch(OUTPUT_NAMES[i], name, FNM_PATHNAME | FNM_PERIOD) == 0)
            return 1;
    return 0;
}

/* 1 when dir/name is a folder (not a link to one) of a variant's outputs:
 * named as OUTPUT_SUBFOLDER and holding nothing but files an mhaviz run
 * writes. Else other gets "name/file" of the first entry that is not, or
 * "name" itself. */
static int is_output_subfolder(const char *dir, const char *name, char *other, size_t other_len)
{
    if (fnmatch(OUTPUT_SUBFOLDER, name, FNM_PATHNAME | FNM_PERIOD) != 0)
        return 0;
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/%s", dir, name);
    DIR *d = lstat(path, &st) == 0 && S_ISDIR(st.st_mode) ? opendir(path) : NULL;
    if (!d)
        return 0;
    int ok = 1;
    struct dirent *e;
    while (ok && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        snprintf(path, sizeof path, "%s/%s/%s", dir, name, e->d_name);
        if (!is_output_name(e->d_name) || !strcmp(e->d_name, OUTDIR_MARKER) ||
            lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
            snprintf(other, other_len, "%s/%s", name, e->d_name);
            ok = 0;
        }
    }
    closedir(d);
    return ok;
}

/* 1 when dir is empty, or holds the mhaviz marker and nothing but files an
 * mhaviz run writes (and the sub-folders of a run of several variants). *marked says whether the marker is there; other gets
 * the first entry an mhaviz run does not write ("" when none). */
static int replaceable(const char *dir, int *marked, char *other, size_t other_len)
{
    other[0] = '\0';
    *marked = 0;
    DIR *d = opendir(dir);
    if (!d)
        return 0;
    int empty = 1;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        empty = 0;
        if (!strcmp(e->d_name, OUTDIR_MARKER))
            *marked = 1;
        else if (!other[0] && !is_output_name(e->d_name)) {
            char inner[2 * NAME_MAX + 2] = "";
            if (!is_output_subfolder(dir, e->d_name, inner, sizeof inner))
                snprintf(other, other_len, "%s", inner[0] ? inner : e->d_name);
        }
    }
    closedir(d);
    return empty || (*marked && !other[0]);
}

/* MHAVIZ_OK when target is absent or may be replaced; else err says why.
 * Another run may move the folder away while we look into it (its commit):
 * the answer counts only when the same folder is still there afterwards. */
static int check_target(const char *target, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < COMMIT_TRIES; attempt++) {
        struct stat before, after;
        if (stat(target, &before) != 0) {
            if (errno == ENOENT)
                return MHAVIZ_OK;
            snprintf(err, errlen, "%s: %s", target, strerror(errno));
            return MHAVIZ_EIO;
        }
        if (!S_ISDIR(before.st_mode)) {
            snprintf(err, errlen, "%s: exists and is not a folder; choose another with -o", target);
            return MHAVIZ_EIO;
        }
        char other[2 * NAME_MAX + 2]; /* "name" or "kv2/name" */
        int marked;
        const int ok = replaceable(target, &marked, other, sizeof other);
        if (stat(target, &after) != 0 || after.st_ino != before.st_ino || after.st_dev != before.st_dev)
            continue; /* it changed under us: look again */
        if (ok)
            return MHAVIZ_OK;
        if (other[0] && marked)
            snprintf(err, errlen,
                     "%s: folder exists and holds \"%s\", which mhaviz did not write; "
                     "refusing to replace it (move that file, or choose another folder with -o)",
                     target, other);
        else
            snprintf(err, errlen,
                     "%s: folder exists and does not hold mhaviz outputs; "
                     "refusing to replace it (choose another with -o)", target);
        return MHAVIZ_EIO;
    }
    snprintf(err, errlen, "%s: the folder keeps changing (other runs writing it?); try again", target);
    return MHAVIZ_EIO;
}

static void outdir_clear(OutDir *o)
{
    free(o->target);
    free(o->tmp);
    o->target = o->tmp = NULL;
}

int outdir_begin(OutDir *o, const char *target, char *err, size_t errlen)
{
    o->target = o->tmp = NULL;
    /* "out/" and "out//" name the folder "out": the temporary folder goes
     * beside it, not inside it. */
    size_t n = strlen(target);
    while (n > 1 && target[n - 1] == '/')
        n--;
    if (n == 0) {
        snprintf(err, errlen, "the output folder name is empty; choose one with -o");
        return MHAVIZ_EIO;
    }
    o->target = strndup(target, n);
    if (!o->target) {
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    int rc = check_target(o->target, err, errlen);
    if (rc != MHAVIZ_OK) {
        outdir_clear(o);
        return rc;
    }
    o->tmp = sibling_template(o->target, "tmp");
    if (!o->tmp) {
        outdir_clear(o);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    if (!mkdtemp(o->tmp)) {
        snprintf(err, errlen, "%s: cannot create the output folder beside it: %s",
                 target, strerror(errno));
        outdir_clear(o);
        return MHAVIZ_EIO;
    }
    /* mkdtemp makes the folder private (0700); the outputs are for showing:
     * give the folder the mode mkdir would (0777 less the umask). */
    const mode_t mask = umask(0);
    umask(mask);
    chmod(o->tmp, 0777 & ~mask);
    char *marker = outdir_path(o, OUTDIR_MARKER);
    FILE *f = marker ? fopen(marker, "w") : NULL;
    int ok = f && fputs("written by mhaviz; a later run may replace this folder\n", f) >= 0;
    if (f && fclose(f) != 0)
        ok = 0;
    free(marker);
    if (!ok) {
        snprintf(err, errlen, "%s: cannot write in the output folder: %s", o->tmp, strerror(errno));
        outdir_abort(o);
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

char *outdir_path(const OutDir *o, const char *name)
{
    size_t n = strlen(o->tmp) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", o->tmp, name);
    return p;
}

/* One attempt to swap the finished folder into place. Returns 0 on
 * success, else errno of the failing step. */
static int swap_into_place(OutDir *o, char *err, size_t errlen)
{
    int rc = check_target(o->target, err, errlen);
    if (rc != MHAVIZ_OK)
        return EEXIST;
#ifdef RENAME_EXCHANGE
    /* Linux swaps the two folders in one step: the target is never missing
     * meanwhile, and the earlier output lands under the temporary name, to
     * be removed. (The two-step way below makes a trash folder and renames
     * onto it, which costs ext4 as much as removing a folder: about 0.3 ms
     * of a class-size run's 1.3 ms commit.) Only a folder is swapped, never
     * a symbolic link to one, which would have the earlier output removed
     * through it (the two-step way refuses it). When the swap fails (no
     * target, one gone meanwhile, a file system or a sandbox that cannot
     * swap: ENOENT, EINVAL, ENOSYS, EPERM, ...) it has changed nothing, and
     * the two-step way does the work and reports its own errors. */
    struct stat st;
    if (lstat(o->target, &st) == 0 && S_ISDIR(st.st_mode)) {
        if (renameat2(AT_FDCWD, o->tmp, AT_FDCWD, o->target, RENAME_EXCHANGE) == 0) {
            remove_folder(o->tmp);
            return 0;
        }
    }
#endif
    /* The earlier output goes to a trash folder first, so a failure can put it back. */
    char *trash = sibling_template(o->target, "old");
    if (!trash || !mkdtemp(trash)) {
        int e = trash ? errno : ENOMEM;
        free(trash);
        return e;
    }
    int moved_old = rename(o->target, trash) == 0; /* fails with ENOENT when there is none */
    int e = (!moved_old && errno != ENOENT) ? errno : 0;
    if (e == 0 && rename(o->tmp, o->target) != 0) {
        e = errno;
        if (moved_old)
            rename(trash, o->target); /* put the earlier output back */
    }
    remove_folder(trash);
    free(trash);
    return e;
}

int outdir_commit(OutDir *o, char *err, size_t errlen)
{
    int e = 0;
    err[0] = '\0';
    for (int attempt = 0; attempt < COMMIT_TRIES; attempt++) {
        e = swap_into_place(o, err, errlen);
        /* ENOTEMPTY/EEXIST after a clean check: another run placed its
         * folder between our steps; its outputs are whole, try again. */
        if (e == 0 || err[0] || (e != ENOTEMPTY && e != EEXIST))
            break;
    }
    if (e != 0) {
        if (!err[0])
            snprintf(err, errlen, "%s: cannot move the outputs into place: %s",
                     o->target, strerror(e));
        outdir_abort(o);
        return MHAVIZ_EIO;
    }
    outdir_clear(o);
    return MHAVIZ_OK;
}

void outdir_name_target(const OutDir *o, char *msg, size_t msglen)
{
    char *at = o->tmp ? strstr(msg, o->tmp) : NULL;
    if (!at)
        return;
    size_t n = strlen(msg) + strlen(o->target) + 1;
    char *copy = malloc(n);
    if (!copy)
        return;
    snprintf(copy, n, "%.*s%s%s", (int)(at - msg), msg, o->target, at + strlen(o->tmp));
    snprintf(msg, msglen, "%s", copy);
    free(copy);
}

void outdir_abort(OutDir *o)
{
    if (o->tmp)
        remove_folder(o->tmp);
    outdir_clear(o);
}
