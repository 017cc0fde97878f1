/* support.c — what the tests share (see support.h). */
#define _XOPEN_SOURCE 700 /* nftw */
#include "support.h"
#include "core/status.h"
#include "io/input.h"

#include <check.h>
#include <dirent.h>
#include <ftw.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

char *slurp(const char *path, size_t *len)
{
    FILE *f = fopen(path, "rb");
    ck_assert_msg(f != NULL, "%s: cannot open", path);
    size_t cap = 4096, n = 0, got;
    char *buf = malloc(cap);
    ck_assert_ptr_nonnull(buf);
    while ((got = fread(buf + n, 1, cap - n - 1, f)) > 0)
        if ((n += got) == cap - 1) {
            buf = realloc(buf, cap *= 2);
            ck_assert_ptr_nonnull(buf);
        }
    ck_assert_msg(!ferror(f), "%s: cannot read", path);
    fclose(f);
    buf[n] = '\0';
    if (len)
        *len = n;
    return buf;
}

void slurp_into(const char *path, char *buf, size_t n)
{
    size_t len;
    char *s = slurp(path, &len);
    ck_assert_msg(len < n, "%s: %zu bytes, more than the test keeps (%zu)", path, len, n - 1);
    memcpy(buf, s, len + 1);
    free(s);
}

int files_same(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    ck_assert_msg(fa && fb, "cannot open %s or %s", a, b);
    int ca, cb;
    do {
        ca = getc(fa);
        cb = getc(fb);
    } while (ca == cb && ca != EOF);
    fclose(fa);
    fclose(fb);
    return ca == cb;
}

char *scratch(const char *what)
{
    size_t n = strlen(what) + 32;
    char *dir = malloc(n);
    ck_assert_ptr_nonnull(dir);
    snprintf(dir, n, "/tmp/mhaviz-%s-XXXXXX", what);
    ck_assert_msg(mkdtemp(dir) != NULL, "%s: cannot make the scratch folder", dir);
    return dir;
}

static int remove_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
    (void)st, (void)flag, (void)ftw;
    chmod(path, 0700); /* a test may have made it read-only */
    return remove(path);
}

void remove_tree(const char *path)
{
    chmod(path, 0700);
    nftw(path, remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

const char *need_env(const char *name)
{
    const char *v = getenv(name);
    ck_assert_msg(v != NULL, "%s is not set: `make test` sets it", name);
    return v;
}

const char *binary_path(void)
{
    static char bin[PATH_MAX];
    ck_assert_msg(realpath(need_env("MHAVIZ_BIN"), bin) != NULL, "MHAVIZ_BIN=%s: no such file", getenv("MHAVIZ_BIN"));
    return bin;
}

int run_program(const char *dir, const char *const argv[], const char *out_path, char *err, size_t n)
{
    char err_path[] = "/tmp/mhaviz-stderr-XXXXXX";
    const int err_fd = mkstemp(err_path);
    ck_assert_msg(err_fd >= 0, "%s: cannot make the file for stderr", err_path);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        if ((dir && chdir(dir) != 0) || !freopen(out_path ? out_path : "/dev/null", "w", stdout) ||
            dup2(err_fd, STDERR_FILENO) < 0)
            _exit(127);
        execv(argv[0], (char *const *)argv);
        _exit(127);
    }
    close(err_fd);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    slurp_into(err_path, err, n);
    unlink(err_path);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

int count_entries(const char *dir, const char *except)
{
    DIR *d = opendir(dir);
    ck_assert_msg(d != NULL, "%s: cannot open the folder", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)))
        n += strcmp(e->d_name, ".") != 0 && strcmp(e->d_name, "..") != 0 && (!except || strcmp(e->d_name, except) != 0);
    closedir(d);
    return n;
}

void cannot_run(const char *test, const char *why)
{
    fprintf(stderr, "SKIPPED: %s: %s\n", test, why);
    const char *ci = getenv("CI");
    ck_assert_msg(!ci || strcmp(ci, "true") != 0, "%s cannot run here (%s), and CI=true needs every test to run",
                  test, why);
}

uint32_t xorshift(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

void sample_run(SampleRun *r, const char *path)
{
    char err[MHAVIZ_ERRLEN] = "";
    memset(r, 0, sizeof *r);
    ck_assert_msg(input_load(path, &r->in, err, sizeof err) == MHAVIZ_OK, "%s: %s", path, err);
    const MhaConfig *c = &r->in.cfg;
    const MhaConfig wide_cfg = mha_single_head_config(c);
    ck_assert_int_eq(mha_state_build(&r->multi, c, 1), MHAVIZ_OK);
    mha_forward(c, &r->in.w, r->in.x, &r->multi);
    if (r->in.has_single) {
        ck_assert_int_eq(mha_state_build(&r->single, &wide_cfg, 1), MHAVIZ_OK);
        mha_forward(&wide_cfg, &r->in.single, r->in.x, &r->single);
    } else {
        ck_assert_int_eq(mha_state_build_wide(&r->single, &wide_cfg, 1), MHAVIZ_OK);
        mha_forward_wide(c, &r->in.w, &r->multi, &r->single);
    }
    ck_assert_int_eq(pull_layer_build(&r->p, c, r->multi.scores, r->multi.att, r->single.scores, r->single.att,
                                      !r->in.has_single), MHAVIZ_OK);
}

void sample_run_free(SampleRun *r)
{
    pull_layer_free(&r->p);
    mha_state_free(&r->single);
    mha_state_free(&r->multi);
    input_free(&r->in);
}

void timing_memory(const char *text, double *estimate, double *peak)
{
    const char *e = strstr(text, "estimated memory: "), *p = strstr(text, "peak memory: ");
    *estimate = *peak = -1.0;
    ck_assert_msg(e && p && sscanf(e, "estimated memory: %lf", estimate) == 1 &&
                      sscanf(p, "peak memory: %lf", peak) == 1, "%s", text);
}
