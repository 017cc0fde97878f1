/* outdir.c — write outputs into a temporary folder, then rename it into place. */
#define _GNU_SOURCE /* renameat2 and RENAME_EXCHANGE (Linux) */
#include "io/outdir.h"
#include "core/status.h"
#include "io/path.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
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

/* Remove folder dir and everything in it (only for the temporary folder,
 * which holds nothing but this run's outputs). */
static void remove_folder(const char *dir)
{
    DIR *d = opendir(dir);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)) != NULL) {
            if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
                continue;
            char *p = path_join(dir, e->d_name);
            if (!p)
                break;
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

/* ------------------------------------------------------------------------ */
/* The marker: what a run wrote                                             */

/* Every mhaviz output folder holds OUTDIR_MARKER: a first line for people,
 * then one line per entry the run wrote, its path inside the folder, a
 * folder's with a "/" after it, parents before their contents:
 *     written by mhaviz; a later run may replace this folder
 *     report.txt
 *     kv4/
 *     kv4/head_00.png
 * So whatever files and sub-folders a run writes, the next run knows them
 * all, and anything else in the folder is someone else's. */
#define MARKER_FIRST_LINE "written by mhaviz; a later run may replace this folder\n"

/* Called by walk for each entry of the walked folder, with its path inside
 * that folder as the marker lists it ("kv4/" for a folder). Returns 0 to go
 * on (into a folder too), 1 to stop the walk, -1 for an error. */
typedef int (*Visit)(const char *entry, void *ctx);

/* Visit every entry under root/rel (rel "" for root itself, whose marker is
 * left out), a folder before its contents. Returns 0 when all were
 * visited, 1 when a visit stopped the walk, -1 when a folder cannot be read,
 * memory runs out or a visit failed. */
static int walk(const char *root, const char *rel, Visit visit, void *ctx)
{
    char *dir = rel[0] ? path_join(root, rel) : strdup(root);
    DIR *d = dir ? opendir(dir) : NULL;
    int rc = d ? 0 : -1;
    struct dirent *e;
    while (d && rc == 0 && (e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..") || (!rel[0] && !strcmp(e->d_name, OUTDIR_MARKER)))
            continue;
        char *sub = rel[0] ? path_join(rel, e->d_name) : strdup(e->d_name);
        char *full = sub ? path_join(root, sub) : NULL;
        struct stat st;
        if (!full || lstat(full, &st) != 0) {
            rc = -1;
        } else if (!S_ISDIR(st.st_mode)) {
            rc = visit(sub, ctx);
        } else {
            char *listed = path_join(sub, ""); /* "kv4/" */
            rc = listed ? visit(listed, ctx) : -1;
            if (rc == 0)
                rc = walk(root, sub, visit, ctx);
            free(listed);
        }
        free(sub);
        free(full);
    }
    if (d)
        closedir(d);
    free(dir);
    return rc;
}

/* A marker line for entry, into the FILE ctx. */
static int write_entry(const char *entry, void *ctx)
{
    return fprintf((FILE *)ctx, "%s\n", entry) < 0 ? -1 : 0;
}

/* The marker's text as a list of lines: entries (n) point into *text; the
 * caller frees both. 0, or -1 when there is no marker or no memory. */
typedef struct {
    char *text;     /* the marker's bytes, newlines replaced by NULs */
    char **entries; /* (n) sorted, the first line left out */
    size_t n;
} MarkerList;

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void marker_list_free(MarkerList *m)
{
    free(m->text);
    free(m->entries);
    m->text = NULL, m->entries = NULL, m->n = 0;
}

static int marker_read(const char *dir, MarkerList *m)
{
    m->text = NULL, m->entries = NULL, m->n = 0;
    char *path = path_join(dir, OUTDIR_MARKER);
    FILE *f = path ? fopen(path, "r") : NULL;
    free(path);
    if (!f)
        return -1;
    size_t len = 0, cap = 0;
    int c;
    while ((c = fgetc(f)) != EOF) {
        if (len + 1 >= cap) {
            char *p = realloc(m->text, cap = cap ? 2 * cap : 4096);
            if (!p) {
                fclose(f);
                marker_list_free(m);
                return -1;
            }
            m->text = p;
        }
        m->text[len++] = c == '\n' ? '\0' : (char)c;
    }
    fclose(f);
    size_t lines = 0;
    for (size_t i = 0; i < len; i++)
        lines += m->text[i] == '\0';
    m->entries = malloc((lines + 1) * sizeof *m->entries);
    if (!m->entries) {
        marker_list_free(m);
        return -1;
    }
    for (size_t i = 0, start = 0, line = 0; i < len; i++) {
        if (m->text[i] != '\0')
            continue;
        if (line++ > 0 && i > start) /* the first line is for people */
            m->entries[m->n++] = m->text + start;
        start = i + 1;
    }
    qsort(m->entries, m->n, sizeof *m->entries, cmp_str);
    return 0;
}

static int marker_lists(const MarkerList *m, const char *entry)
{
    return m->n > 0 && bsearch(&entry, m->entries, m->n, sizeof *m->entries, cmp_str) != NULL;
}

/* What replaceable looks for with walk, and what it found. */
typedef struct {
    const MarkerList *m;
    char *other; /* the first entry m does not list; "" while none */
    size_t other_len;
} Unlisted;

static int check_entry(const char *entry, void *ctx)
{
    Unlisted *u = ctx;
    if (marker_lists(u->m, entry))
        return 0;
    snprintf(u->other, u->other_len, "%s", entry);
    return 1;
}

/* 1 when dir is empty, or holds the mhaviz marker and nothing it does not
 * list. *marked: 0 no marker; 1 a marker that lists nothing (an mhaviz older
 * than the list wrote it); 2 a marker with its list. other gets the first
 * entry the marker does not list ("" when none). */
static int replaceable(const char *dir, int *marked, char *other, size_t other_len)
{
    other[0] = '\0';
    MarkerList m;
    *marked = marker_read(dir, &m) != 0 ? 0 : m.n == 0 ? 1 : 2;
    Unlisted u = {&m, other, other_len};
    const int readable = walk(dir, "", check_entry, &u) >= 0;
    marker_list_free(&m);
    return readable && !other[0]; /* without a marker, only an empty folder passes */
}

/* MHAVIZ_OK when target is absent or may be replaced; else err says why.
 * Another run may move the folder away while we look into it (its commit):
 * the answer counts only when the same folder is still there afterwards. */
static int check_target(const char *target, char *err, size_t errlen)
{
    for (int attempt = 0; attempt < COMMIT_TRIES; attempt++) {
        struct stat before, after;
        if (stat(target, &before) != 0) {
            if (errno == ENOENT || errno == ENOTDIR)
                return MHAVIZ_OK; /* none yet (outdir_begin names a parent that cannot hold it) */
            snprintf(err, errlen, "%s: %s", target, strerror(errno));
            return MHAVIZ_EIO;
        }
        if (!S_ISDIR(before.st_mode)) {
            snprintf(err, errlen, "%s: exists and is not a folder; choose another with -o", target);
            return MHAVIZ_EIO;
        }
        char other[NAME_MAX + 1];
        int marked;
        const int ok = replaceable(target, &marked, other, sizeof other);
        if (stat(target, &after) != 0 || after.st_ino != before.st_ino || after.st_dev != before.st_dev)
            continue; /* it changed under us: look again */
        if (ok)
            return MHAVIZ_OK;
        if (other[0] && marked == 1)
            snprintf(err, errlen,
                     "%s: folder was written by an older mhaviz, whose marker does not list its files; "
                     "refusing to replace it (remove the folder, or choose another with -o)", target);
        else if (other[0] && marked)
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
        /* the folder the output folder goes in: what the user can fix */
        const char *slash = strrchr(o->target, '/');
        const int len = slash ? (slash == o->target ? 1 : (int)(slash - o->target)) : 1;
        const char *parent = slash ? o->target : ".";
        if (errno == ENOENT)
            snprintf(err, errlen, "%s: cannot create the output folder: the folder %.*s does not exist "
                     "(create it first, or choose another place with -o)", target, len, parent);
        else if (errno == ENOTDIR)
            snprintf(err, errlen, "%s: cannot create the output folder: %.*s is not a folder (choose another "
                     "place with -o)", target, len, parent);
        else
            snprintf(err, errlen, "%s: cannot create the output folder in %.*s: %s", target, len, parent,
                     strerror(errno));
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
    int ok = f && fputs(MARKER_FIRST_LINE, f) >= 0; /* the list follows at the commit */
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
    return path_join(o->tmp, name);
}

/* Complete the marker of the temporary folder: its first line, then every
 * entry the run wrote. Returns MHAVIZ_OK or MHAVIZ_EIO (err says why). */
static int marker_write(const OutDir *o, char *err, size_t errlen)
{
    char *path = outdir_path(o, OUTDIR_MARKER);
    FILE *f = path ? fopen(path, "w") : NULL;
    int ok = f && fputs(MARKER_FIRST_LINE, f) >= 0 && walk(o->tmp, "", write_entry, f) == 0;
    int e = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok)
        snprintf(err, errlen, "%s: cannot write in the output folder: %s", o->target, strerror(e ? e : EIO));
    free(path);
    return ok ? MHAVIZ_OK : MHAVIZ_EIO;
}

/* 1 when a marker's entry stays inside its folder: no "..", not absolute. */
static int entry_inside(const char *entry)
{
    if (entry[0] == '/')
        return 0;
    for (const char *p = entry; *p; p = strchr(p, '/') ? strchr(p, '/') + 1 : p + strlen(p))
        if (p[0] == '.' && p[1] == '.' && (p[2] == '/' || p[2] == '\0'))
            return 0;
    return 1;
}

/* Add folder where (taken over; NULL when out of memory) to the list kept,
 * "a" or "a and b": a commit that tried again may have discarded more than
 * one earlier output. */
static void add_kept(char **kept, char *where)
{
    if (!where || !*kept) {
        *kept = *kept ? *kept : where;
        return;
    }
    size_t n = strlen(*kept) + strlen(where) + sizeof " and ";
    char *both = malloc(n);
    if (both) {
        snprintf(both, n, "%s and %s", *kept, where);
        free(*kept);
        *kept = both;
    }
    free(where);
}

/* Remove the earlier output folder old (moved out of the target's place):
 * only what its marker lists, the marker, then the folder. Anything else in
 * it was saved there by someone after the check: the folder is then kept
 * beside the target as "<target>.kept-XXXXXX" and added to kept (its
 * caller frees it); nothing in it is lost. */
static void discard_old(const char *old, const char *target, char **kept)
{
    MarkerList m;
    if (marker_read(old, &m) == 0) {
        for (size_t i = m.n; i-- > 0;) { /* sorted: "kv4/x.png" before "kv4/" in this order */
            const char *entry = m.entries[i];
            char *p = entry_inside(entry) ? path_join(old, entry) : NULL;
            if (p && entry[strlen(entry) - 1] == '/')
                rmdir(p); /* fails, as it should, when it still holds something */
            else if (p)
                unlink(p);
            free(p);
        }
        marker_list_free(&m);
        char *marker = path_join(old, OUTDIR_MARKER);
        if (marker)
            unlink(marker);
        free(marker);
    }
    if (rmdir(old) == 0 || errno == ENOENT)
        return;
    size_t n = strlen(target) + sizeof ".kept-XXXXXX";
    char *aside = malloc(n);
    if (aside) {
        snprintf(aside, n, "%s.kept-XXXXXX", target);
        if (mkdtemp(aside) && rename(old, aside) == 0) {
            add_kept(kept, aside);
            return;
        }
        rmdir(aside);
        free(aside);
    }
    /* It cannot even be moved: leave it where it is, under its hidden name. */
    add_kept(kept, strdup(old));
}

/* One attempt to swap the finished folder into place. Returns 0 on
 * success, else errno of the failing step. */
static int swap_into_place(OutDir *o, char **kept, char *err, size_t errlen)
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
            discard_old(o->tmp, o->target, kept);
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
    if (e == 0 && rename(o->tmp, o->target) != 0)
        e = errno;
    /* ENOTEMPTY or EEXIST: another run placed its folder between our two
     * renames. That run replaced the earlier output, which is discarded as
     * that run would have (what its marker does not list is kept), and we
     * try again. It is not put back even when the place is free again: a
     * folder that left the target never returns, so a check that finds the
     * same folder there before and after its look has seen that folder. */
    if (moved_old && (e == 0 || e == ENOTEMPTY || e == EEXIST))
        discard_old(trash, o->target, kept);
    else if (moved_old && rename(trash, o->target) != 0) /* put the earlier output back */
        snprintf(err, errlen, "%s: cannot move the outputs into place: %s; the earlier output is in %s",
                 o->target, strerror(e), trash);
    else
        rmdir(trash); /* empty: the earlier output went back, or there was none */
    free(trash);
    return e;
}

int outdir_commit(OutDir *o, char *err, size_t errlen)
{
    int e = 0;
    char *kept = NULL;
    err[0] = '\0';
    if (marker_write(o, err, errlen) != MHAVIZ_OK) {
        outdir_abort(o);
        return MHAVIZ_EIO;
    }
    for (int attempt = 0; attempt < COMMIT_TRIES; attempt++) {
        e = swap_into_place(o, &kept, err, errlen);
        /* ENOTEMPTY/EEXIST after a clean check: another run placed its
         * folder between our steps; its outputs are whole, try again. */
        if (e == 0 || err[0] || (e != ENOTEMPTY && e != EEXIST))
            break;
    }
    if (e != 0 && !err[0])
        snprintf(err, errlen, "%s: cannot move the outputs into place: %s", o->target, strerror(e));
    if (kept) { /* after the error, if any: an attempt before it discarded an earlier output */
        size_t used = strlen(err);
        snprintf(err + used, errlen - used, "%s%s: files saved into the earlier output while mhaviz ran are kept in %s",
                 used ? "; " : "", o->target, kept);
    }
    free(kept);
    if (e != 0) {
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

void outdir_head_name(char *buf, size_t len, int h, int n_heads)
{
    snprintf(buf, len, "head_%0*d", n_heads >= 100 ? 3 : 2, h);
}

void outdir_variant_folder(char *buf, size_t len, int n_kv)
{
    snprintf(buf, len, "kv%d", n_kv);
}

char *outdir_svg_beside(const char *png_path)
{
    size_t stem = strlen(png_path);
    if (stem >= 4 && strcmp(png_path + stem - 4, ".png") == 0)
        stem -= 4;
    char *p = malloc(stem + sizeof ".svg");
    if (p)
        snprintf(p, stem + sizeof ".svg", "%.*s.svg", (int)stem, png_path);
    return p;
}

void outdir_layer_folder(char *buf, size_t len, int layer)
{
    snprintf(buf, len, "layer_%02d", layer);
}

void outdir_query_name(char *buf, size_t len, int q, int T)
{
    int digits = 2;
    for (int t = T - 1; t >= 100; t /= 10)
        digits++;
    snprintf(buf, len, "query_%0*d" OUTDIR_PNG, digits, q);
}
