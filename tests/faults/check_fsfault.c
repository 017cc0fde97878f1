/* check_fsfault.c — file-system faults and concurrent runs, through the CLI.
 *
 * Every fault must end with exit 3 (MHAVIZ_EIO), a message on stderr naming
 * the place, no output folder (whole or half-written) and no temporary folder
 * left behind, the input unchanged and any earlier output folder unchanged.
 * Faults are made in the spawned child only (resource limits, capabilities,
 * a private mount namespace), so the test runner itself is never affected.
 *
 * Tests run as root in CI, and root ignores file permissions: for the
 * "unreadable input" and "read-only folder" cases the child drops
 * CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH from its bounding set before it
 * runs mhaviz, and a probe with cat/mkdir first shows the permissions now
 * bite. Where that (or a private tmpfs) is impossible the test prints
 * "SKIPPED:" with the reason on stderr instead of asserting.
 *
 * Inputs: two small valid files from the fuzz seed corpus (they differ in T
 * and n_kv_heads, so their outputs differ). The binary: $MHAVIZ_BIN. */
#define _GNU_SOURCE
#include "io/outdir.h"
#include "core/status.h"

#include "support.h"

#include <check.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <sched.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <stddef.h>
#include <sys/mount.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#define INPUT_A "tests/fuzz/corpus/valid_mha.json"
#define INPUT_B "tests/fuzz/corpus/valid_gqa.json"
#define CAP_DAC_OVERRIDE_BIT 1    /* linux/capability.h: CAP_DAC_OVERRIDE */
#define CAP_DAC_READ_SEARCH_BIT 2 /* linux/capability.h: CAP_DAC_READ_SEARCH */
#define SETUP_FAILED 125          /* the child could not set up the fault */

/* A fault applied in the child before it runs the command. */
typedef struct {
    long fsize;            /* > 0: RLIMIT_FSIZE in bytes (writes over it fail with EFBIG) */
    int fsize_signal;      /* 1: leave SIGXFSZ at its default (kill), as a shell's ulimit -f does */
    int drop_dac;          /* 1: drop the capabilities that let root ignore permissions */
    const char *tmpfs;     /* mount a tmpfs here in a private mount namespace */
    const char *tmpfs_opt; /* its options, e.g. "size=16k" */
    int tmpfs_ro;          /* 1: mount it read-only */
    int refuse_renameat2;  /* > 0: renameat2 fails with this errno (a seccomp filter, as sandboxes set) */
} Fault;

static const Fault NO_FAULT = {0, 0, 0, NULL, NULL, 0, 0};

/* Make the system call nr fail with err in this process and what it runs
 * (a seccomp filter: container runtimes answer calls they do not know
 * this way). 0 when in place. */
static int refuse_syscall(int nr, int err)
{
    struct sock_filter filter[] = {
        BPF_STMT(BPF_LD | BPF_W | BPF_ABS, offsetof(struct seccomp_data, nr)),
        BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (unsigned)nr, 0, 1),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ((unsigned)err & SECCOMP_RET_DATA)),
        BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW),
    };
    struct sock_fprog prog = {(unsigned short)(sizeof filter / sizeof filter[0]), filter};
    return prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) == 0 && prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog) == 0
               ? 0
               : -1;
}

typedef struct {
    int status;       /* exit code, or 128 + signal */
    char err[4096];   /* what it wrote on stderr */
} Result;

static const char *bin(void)
{
    const char *b = getenv("MHAVIZ_BIN");
    ck_assert_msg(b != NULL, "MHAVIZ_BIN is not set (run through make test)");
    return b;
}

static void apply_fault(const Fault *f)
{
    if (f->tmpfs) {
        if (unshare(CLONE_NEWNS) != 0 ||
            mount(NULL, "/", NULL, MS_REC | MS_PRIVATE, NULL) != 0 ||
            mount("mhaviz-test", f->tmpfs, "tmpfs", f->tmpfs_ro ? MS_RDONLY : 0, f->tmpfs_opt) != 0)
            _exit(SETUP_FAILED);
    }
    if (f->drop_dac && geteuid() == 0) {
        if (prctl(PR_CAPBSET_DROP, CAP_DAC_OVERRIDE_BIT, 0, 0, 0) != 0 ||
            prctl(PR_CAPBSET_DROP, CAP_DAC_READ_SEARCH_BIT, 0, 0, 0) != 0)
            _exit(SETUP_FAILED);
    }
    if (f->refuse_renameat2 > 0 && refuse_syscall(SYS_renameat2, f->refuse_renameat2) != 0)
        _exit(SETUP_FAILED);
    if (f->fsize > 0) {
        struct rlimit rl = {(rlim_t)f->fsize, (rlim_t)f->fsize};
        signal(SIGXFSZ, f->fsize_signal ? SIG_DFL : SIG_IGN); /* stays so across exec */
        if (setrlimit(RLIMIT_FSIZE, &rl) != 0)
            _exit(SETUP_FAILED);
    }
}

/* Start argv (argv[0] a path) with fault f; *err_fd reads its stderr. */
static pid_t spawn(char *const argv[], const Fault *f, int *err_fd)
{
    int p[2];
    ck_assert_int_eq(pipe2(p, O_CLOEXEC), 0);
    pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        int null = open("/dev/null", O_RDWR);
        dup2(null, 0);
        dup2(null, 1);
        dup2(p[1], 2);
        apply_fault(f);
        execv(argv[0], argv);
        _exit(127);
    }
    close(p[1]);
    *err_fd = p[0];
    return pid;
}

/* Collect the stderr and exit status of a spawned child. */
static void finish(pid_t pid, int fd, Result *r)
{
    size_t n = 0;
    ssize_t got;
    while ((got = read(fd, r->err + n, sizeof r->err - 1 - n)) > 0)
        n += (size_t)got;
    r->err[n] = '\0';
    close(fd);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
}

static void run(char *const argv[], const Fault *f, Result *r)
{
    int fd;
    pid_t pid = spawn(argv, f, &fd);
    finish(pid, fd, r);
}

/* mhaviz -q -o out input, with fault f. */
static void run_mhaviz(const char *input, const char *out, const Fault *f, Result *r)
{
    char *argv[] = {(char *)bin(), "-q", "-t", "2", "-o", (char *)out, (char *)input, NULL};
    run(argv, f, r);
}

/* --- scratch folders and file comparisons --- */

static void remove_scratch(char *dir)
{
    remove_tree(dir);
    free(dir);
}

static char *path2(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    snprintf(p, n, "%s/%s", dir, name);
    return p;
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *data = slurp(from, &n);
    FILE *f = fopen(to, "wb");
    ck_assert_ptr_nonnull(f);
    ck_assert_uint_eq(fwrite(data, 1, n, f), n);
    ck_assert_int_eq(fclose(f), 0);
    free(data);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* Sorted names in dir (besides . and ..); returns the count, -1 if no folder. */
static int list_dir(const char *dir, char names[][256], int max)
{
    DIR *d = opendir(dir);
    if (!d)
        return -1;
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, ".."))
            continue;
        ck_assert_int_lt(n, max);
        snprintf(names[n++], 256, "%s", e->d_name);
    }
    closedir(d);
    char *ptrs[64];
    for (int i = 0; i < n; i++)
        ptrs[i] = strdup(names[i]);
    qsort(ptrs, (size_t)n, sizeof ptrs[0], by_name);
    for (int i = 0; i < n; i++) {
        snprintf(names[i], 256, "%s", ptrs[i]);
        free(ptrs[i]);
    }
    return n;
}

/* 1 when folders a and b hold the same file names with the same bytes. */
static int same_folder(const char *a, const char *b)
{
    static char na[64][256], nb[64][256];
    int ca = list_dir(a, na, 64), cb = list_dir(b, nb, 64);
    if (ca < 0 || ca != cb)
        return 0;
    for (int i = 0; i < ca; i++) {
        if (strcmp(na[i], nb[i]))
            return 0;
        char *pa = path2(a, na[i]), *pb = path2(b, nb[i]);
        int same = files_same(pa, pb);
        free(pa);
        free(pb);
        if (!same)
            return 0;
    }
    return 1;
}

/* Size of the largest file in dir. */
static long largest_file(const char *dir)
{
    static char names[64][256];
    int n = list_dir(dir, names, 64);
    long max = 0;
    for (int i = 0; i < n; i++) {
        char *p = path2(dir, names[i]);
        struct stat st;
        ck_assert_int_eq(stat(p, &st), 0);
        if (st.st_size > max)
            max = (long)st.st_size;
        free(p);
    }
    return max;
}

/* Entries in dir whose names are not in the allowed list (NULL-terminated). */
static int strangers(const char *dir, const char *const *allowed)
{
    static char names[64][256];
    int n = list_dir(dir, names, 64), count = 0;
    for (int i = 0; i < n; i++) {
        int ok = 0;
        for (const char *const *a = allowed; *a; a++)
            ok |= !strcmp(names[i], *a);
        if (!ok) {
            fprintf(stderr, "fsfault: unexpected %s/%s\n", dir, names[i]);
            count++;
        }
    }
    return count;
}

/* The common promise of every fault: exit 3, one "mhaviz: " message naming
 * place, and the folder holds exactly the allowed entries afterwards. */
static void assert_refused(const Result *r, const char *place, const char *dir,
                           const char *const *allowed)
{
    ck_assert_msg(r->status == MHAVIZ_EIO, "exit %d, expected 3; stderr: %s", r->status, r->err);
    ck_assert_msg(strncmp(r->err, "mhaviz: ", 8) == 0, "message should start 'mhaviz: ': %s", r->err);
    ck_assert_msg(strstr(r->err, place) != NULL, "message should name %s: %s", place, r->err);
    ck_assert_int_eq(strangers(dir, allowed), 0);
}

/* A successful reference run of input into dir/name. */
static char *reference(const char *dir, const char *name, const char *input)
{
    char *out = path2(dir, name);
    Result r;
    run_mhaviz(input, out, &NO_FAULT, &r);
    ck_assert_msg(r.status == 0, "reference run: exit %d: %s", r.status, r.err);
    return out;
}

/* Run a probe command under fault f: 1 when it fails (the fault bites). */
static int probe_fails(char *const argv[], const Fault *f)
{
    Result r;
    run(argv, f, &r);
    return r.status != 0;
}

/* --- reading the input --- */

START_TEST(missing_input)
{
    char *s = scratch("fsfault"), *in = path2(s, "missing.json"), *out = path2(s, "out");
    Result r;
    run_mhaviz(in, out, &NO_FAULT, &r);
    const char *none[] = {NULL};
    assert_refused(&r, in, s, none);
    free(in), free(out), remove_scratch(s);
}
END_TEST

START_TEST(folder_as_input)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *out = path2(s, "out");
    ck_assert_int_eq(mkdir(in, 0755), 0);
    Result r;
    run_mhaviz(in, out, &NO_FAULT, &r);
    const char *allowed[] = {"in.json", NULL};
    assert_refused(&r, in, s, allowed);
    free(in), free(out), remove_scratch(s);
}
END_TEST

START_TEST(unreadable_input)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *out = path2(s, "out");
    copy_file(INPUT_A, in);
    ck_assert_int_eq(chmod(in, 0), 0);
    Fault f = NO_FAULT;
    f.drop_dac = 1;
    char *cat[] = {"/bin/cat", in, NULL};
    if (!probe_fails(cat, &f)) {
        cannot_run("fsfault unreadable_input", "cannot make a file unreadable here (root without capability control)");
    } else {
        Result r;
        run_mhaviz(in, out, &f, &r);
        const char *allowed[] = {"in.json", NULL};
        assert_refused(&r, in, s, allowed);
        chmod(in, 0644);
        ck_assert(files_same(in, INPUT_A));
    }
    free(in), free(out), remove_scratch(s);
}
END_TEST

/* --- writing the outputs --- */

START_TEST(output_parent_is_a_file)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *file = path2(s, "file"), *out = path2(file, "out");
    copy_file(INPUT_A, in);
    copy_file(INPUT_B, file);
    Result r;
    run_mhaviz(in, out, &NO_FAULT, &r);
    const char *allowed[] = {"in.json", "file", NULL};
    assert_refused(&r, file, s, allowed);
    ck_assert(files_same(file, INPUT_B));
    ck_assert(files_same(in, INPUT_A));
    free(in), free(file), free(out), remove_scratch(s);
}
END_TEST

START_TEST(output_folder_not_writable)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *ro = path2(s, "ro"), *out = path2(ro, "out");
    copy_file(INPUT_A, in);
    ck_assert_int_eq(mkdir(ro, 0555), 0);
    Fault f = NO_FAULT;
    f.drop_dac = 1;
    char *probe_dir = path2(ro, "probe");
    char *mk[] = {"/bin/mkdir", probe_dir, NULL};
    if (!probe_fails(mk, &f)) {
        cannot_run("fsfault output_folder_not_writable", "cannot make a folder read-only here");
    } else {
        Result r;
        run_mhaviz(in, out, &f, &r);
        const char *allowed[] = {"in.json", "ro", NULL};
        assert_refused(&r, ro, s, allowed);
        const char *none[] = {NULL};
        ck_assert_int_eq(strangers(ro, none), 0);
        ck_assert(files_same(in, INPUT_A));
    }
    free(probe_dir), free(in), free(ro), free(out), remove_scratch(s);
}
END_TEST

START_TEST(output_inside_read_only_mount)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *ro = path2(s, "ro"), *out = path2(ro, "out");
    copy_file(INPUT_A, in);
    ck_assert_int_eq(mkdir(ro, 0755), 0);
    Fault f = NO_FAULT;
    f.tmpfs = ro;
    f.tmpfs_opt = "size=64k";
    f.tmpfs_ro = 1;
    Result r;
    run_mhaviz(in, out, &f, &r);
    if (r.status == SETUP_FAILED) {
        cannot_run("fsfault output_inside_read_only_mount", "no private mount namespace here");
    } else {
        const char *allowed[] = {"in.json", "ro", NULL};
        assert_refused(&r, ro, s, allowed);
        ck_assert(files_same(in, INPUT_A));
    }
    free(in), free(ro), free(out), remove_scratch(s);
}
END_TEST

/* Files may be at most limit bytes (RLIMIT_FSIZE): every limit below the
 * largest output file must fail cleanly and leave the earlier output as it
 * was; a limit of exactly the largest file must succeed with the same bytes. */
START_TEST(file_size_limit_sweep)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *out = path2(s, "out");
    char *ref_a = reference(s, "ref_a", INPUT_A);
    copy_file(INPUT_B, in);
    char *ref_b = reference(s, "ref_b", in);
    long max = largest_file(ref_b);
    ck_assert_int_gt(max, 100);

    /* An earlier output of another input sits at the target. */
    Result r;
    run_mhaviz(INPUT_A, out, &NO_FAULT, &r);
    ck_assert_int_eq(r.status, 0);

    const long limits[] = {1, 100, max / 4, max / 2, max - 1};
    const char *allowed[] = {"in.json", "out", "ref_a", "ref_b", NULL};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        Fault f = NO_FAULT;
        f.fsize = limits[i] > 0 ? limits[i] : 1;
        run_mhaviz(in, out, &f, &r);
        ck_assert_msg(r.status == MHAVIZ_EIO, "file size limit %ld: exit %d; stderr: %s",
                      f.fsize, r.status, r.err);
        assert_refused(&r, s, s, allowed);
        ck_assert_msg(same_folder(out, ref_a), "file size limit %ld: the earlier output changed", f.fsize);
        ck_assert(files_same(in, INPUT_B));
    }
    Fault f = NO_FAULT;
    f.fsize = max;
    run_mhaviz(in, out, &f, &r);
    ck_assert_msg(r.status == 0, "limit = largest file (%ld): exit %d: %s", max, r.status, r.err);
    ck_assert(same_folder(out, ref_b));
    ck_assert_int_eq(strangers(s, allowed), 0);
    free(ref_a), free(ref_b), free(in), free(out), remove_scratch(s);
}
END_TEST

/* A run of several variants (sub-folders kv2/ and kv1/, the comparison on
 * top) that fails part-way: in the first sub-folder, or after both are
 * written, at the top's largest picture. Exit 3 and nothing left behind:
 * no output folder, no temporary one with its sub-folders. */
START_TEST(file_size_limit_variants)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *out = path2(s, "out"), *ref = path2(s, "ref");
    copy_file(INPUT_A, in);
    char *ok[] = {(char *)bin(), "-q", "--kv-heads", "2,1", "-o", ref, in, NULL};
    Result r;
    run(ok, &NO_FAULT, &r);
    ck_assert_msg(r.status == 0, "reference run: exit %d: %s", r.status, r.err);
    char *sub = path2(ref, "kv2");
    const long in_sub = largest_file(sub), on_top = largest_file(ref);
    ck_assert_msg(on_top > in_sub, "variants.png (%ld bytes) should be the largest file (kv2/: %ld)", on_top,
                  in_sub);
    const long limits[] = {in_sub / 2, in_sub, on_top - 1};
    const char *allowed[] = {"in.json", "ref", NULL};
    char *argv[] = {(char *)bin(), "-q", "--kv-heads", "2,1", "-o", out, in, NULL};
    for (size_t i = 0; i < sizeof limits / sizeof limits[0]; i++) {
        Fault f = NO_FAULT;
        f.fsize = limits[i];
        run(argv, &f, &r);
        assert_refused(&r, s, s, allowed);
    }
    free(sub), free(ref), free(in), free(out), remove_scratch(s);
}
END_TEST

/* As after `ulimit -f` in a shell: SIGXFSZ would kill the run mid-write and
 * leave its temporary folder; mhaviz ignores it and fails cleanly. */
START_TEST(file_size_limit_with_default_signal)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *out = path2(s, "out");
    copy_file(INPUT_A, in);
    Fault f = NO_FAULT;
    f.fsize = 1000; /* the marker fits, no picture does */
    f.fsize_signal = 1;
    Result r;
    run_mhaviz(in, out, &f, &r);
    const char *allowed[] = {"in.json", NULL};
    assert_refused(&r, s, s, allowed);
    ck_assert(files_same(in, INPUT_A));
    free(in), free(out), remove_scratch(s);
}
END_TEST

/* A real full disk: a small private tmpfs (ENOSPC instead of EFBIG). */
START_TEST(disk_full)
{
    char *s = scratch("fsfault"), *in = path2(s, "in.json"), *mnt = path2(s, "small"), *out = path2(mnt, "out");
    copy_file(INPUT_A, in);
    ck_assert_int_eq(mkdir(mnt, 0755), 0);
    Fault f = NO_FAULT;
    f.tmpfs = mnt;
    f.tmpfs_opt = "size=8k"; /* two pages: the marker and part of one picture */
    Result r;
    run_mhaviz(in, out, &f, &r);
    if (r.status == SETUP_FAILED) {
        cannot_run("fsfault disk_full", "no private tmpfs here (the file size limit test covers EFBIG)");
    } else {
        const char *allowed[] = {"in.json", "small", NULL};
        assert_refused(&r, mnt, s, allowed);
        ck_assert(files_same(in, INPUT_A));
    }
    free(in), free(mnt), free(out), remove_scratch(s);
}
END_TEST

/* A sandbox that refuses renameat2 (seccomp's "fail with EPERM", also
 * EOPNOTSUPP and ENOSYS): the earlier output is still replaced, by the
 * two-step way, with nothing left beside it. */
START_TEST(swap_refused_by_a_sandbox)
{
    const int errs[] = {EPERM, EOPNOTSUPP, ENOSYS};
    for (size_t k = 0; k < sizeof errs / sizeof errs[0]; k++) {
        char *s = scratch("fsfault"), *ref = reference(s, "ref", INPUT_B), *out = reference(s, "out", INPUT_A);
        Fault f = NO_FAULT;
        f.refuse_renameat2 = errs[k];
        Result r;
        run_mhaviz(INPUT_B, out, &f, &r);
        if (r.status == SETUP_FAILED) {
            cannot_run("fsfault swap_refused_by_a_sandbox", "no seccomp filter here");
        } else {
            ck_assert_msg(r.status == 0, "renameat2 refused with %s: exit %d: %s", strerror(errs[k]), r.status,
                          r.err);
            ck_assert_msg(same_folder(out, ref), "the earlier output was not replaced");
            const char *allowed[] = {"ref", "out", NULL};
            ck_assert_int_eq(strangers(s, allowed), 0);
        }
        free(ref), free(out), remove_scratch(s);
    }
}
END_TEST

/* "-o out/" names the folder out: the outputs land there, with the
 * temporary folder beside it (it used to be looked for inside it). */
START_TEST(output_name_with_trailing_slash)
{
    char *s = scratch("fsfault"), *ref = reference(s, "ref", INPUT_A), *out = path2(s, "out//");
    Result r;
    run_mhaviz(INPUT_A, out, &NO_FAULT, &r);
    ck_assert_msg(r.status == 0, "exit %d: %s", r.status, r.err);
    char *plain = path2(s, "out");
    ck_assert(same_folder(plain, ref));
    const char *allowed[] = {"ref", "out", NULL};
    ck_assert_int_eq(strangers(s, allowed), 0);
    free(plain), free(ref), free(out), remove_scratch(s);
}
END_TEST

/* The output folder gets the mode mkdir gives (0777 less the umask), not
 * mkdtemp's private 0700: the pictures are made to be shown and shared. */
START_TEST(output_folder_mode_follows_umask)
{
    char *s = scratch("fsfault");
    const mode_t old = umask(022);
    char *out = reference(s, "out", INPUT_A);
    umask(old);
    struct stat st;
    ck_assert_int_eq(stat(out, &st), 0);
    ck_assert_msg((st.st_mode & 07777) == 0755, "mode %o, expected 755 under umask 022",
                  (unsigned)(st.st_mode & 07777));
    free(out), remove_scratch(s);
}
END_TEST

START_TEST(empty_output_name)
{
    Result r;
    run_mhaviz(INPUT_A, "", &NO_FAULT, &r);
    ck_assert_int_eq(r.status, MHAVIZ_EIO);
    ck_assert_msg(strstr(r.err, "mhaviz: the output folder name is empty") != NULL, "%s", r.err);
}
END_TEST

/* --- runs at the same time --- */

#define N_RUNS 4 /* CLI runs at once */
#define N_WRITERS 6 /* library-level writers at once */

START_TEST(concurrent_runs_different_folders)
{
    char *s = scratch("fsfault");
    char *ref = reference(s, "ref", INPUT_A);
    char *outs[N_RUNS];
    pid_t pids[N_RUNS];
    int fds[N_RUNS];
    for (int i = 0; i < N_RUNS; i++) {
        char name[16];
        snprintf(name, sizeof name, "out%d", i);
        outs[i] = path2(s, name);
        char *argv[] = {(char *)bin(), "-q", "-t", "1", "-o", outs[i], INPUT_A, NULL};
        pids[i] = spawn(argv, &NO_FAULT, &fds[i]);
    }
    for (int i = 0; i < N_RUNS; i++) {
        Result r;
        finish(pids[i], fds[i], &r);
        ck_assert_msg(r.status == 0, "run %d: exit %d: %s", i, r.status, r.err);
    }
    for (int i = 0; i < N_RUNS; i++) {
        ck_assert_msg(same_folder(outs[i], ref), "run %d's folder differs from a lone run's", i);
        free(outs[i]);
    }
    const char *allowed[] = {"ref", "out0", "out1", "out2", "out3", NULL};
    ck_assert_int_eq(strangers(s, allowed), 0);
    free(ref), remove_scratch(s);
}
END_TEST

/* Runs of two different inputs aimed at one folder: each succeeds, and the
 * folder ends up exactly one run's outputs, never a mix. */
START_TEST(concurrent_runs_same_folder)
{
    char *s = scratch("fsfault");
    char *ref_a = reference(s, "ref_a", INPUT_A), *ref_b = reference(s, "ref_b", INPUT_B);
    char *out = path2(s, "out");
    for (int round = 0; round < 2; round++) {
        pid_t pids[N_RUNS];
        int fds[N_RUNS];
        for (int i = 0; i < N_RUNS; i++) {
            char *argv[] = {(char *)bin(), "-q", "-t", "1", "-o", out,
                            (char *)((i + round) % 2 ? INPUT_B : INPUT_A), NULL};
            pids[i] = spawn(argv, &NO_FAULT, &fds[i]);
        }
        for (int i = 0; i < N_RUNS; i++) {
            Result r;
            finish(pids[i], fds[i], &r);
            ck_assert_msg(r.status == 0, "round %d run %d: exit %d: %s", round, i, r.status, r.err);
        }
        ck_assert_msg(same_folder(out, ref_a) || same_folder(out, ref_b),
                      "round %d: the folder is not one run's outputs", round);
        const char *allowed[] = {"ref_a", "ref_b", "out", NULL};
        ck_assert_int_eq(strangers(s, allowed), 0);
    }
    free(out), free(ref_a), free(ref_b), remove_scratch(s);
}
END_TEST

/* The same race at the library level, without the CLI: processes that each
 * write N_FILES files holding their own id and commit them to one target. */
#define N_FILES 8

static void write_run(const char *target, int id, int refuse_renameat2)
{
    char err[MHAVIZ_ERRLEN];
    OutDir o;
    if (refuse_renameat2 && refuse_syscall(SYS_renameat2, EPERM) != 0)
        _exit(SETUP_FAILED);
    if (outdir_begin(&o, target, err, sizeof err) != MHAVIZ_OK) {
        fprintf(stderr, "writer %d: %s\n", id, err);
        _exit(10);
    }
    for (int k = 0; k < N_FILES; k++) {
        char name[24];
        snprintf(name, sizeof name, "head_%02d.png", k); /* names an mhaviz run writes */
        char *p = outdir_path(&o, name);
        FILE *f = fopen(p, "w");
        free(p);
        if (!f)
            _exit(11);
        fprintf(f, "%d\n", id);
        fclose(f);
    }
    if (outdir_commit(&o, err, sizeof err) != MHAVIZ_OK) {
        fprintf(stderr, "writer %d: %s\n", id, err);
        _exit(12);
    }
    _exit(0);
}

/* Kept in statics, so that the forked writers (which _exit) hold no
 * unreachable memory: under valgrind (CK_FORK=no) they are leak-checked too. */
static char *race_dir, *race_target;

/* Rounds of N_WRITERS writers at once; every round each succeeds, the
 * target holds one writer's files, and nothing is left beside it. With
 * refuse_renameat2 the writers run in a sandbox that refuses the swap, so
 * every commit takes the two-step way (which otherwise only the first
 * round, with no target yet, takes). 0 when seccomp is not available. */
static int race_rounds(int refuse_renameat2)
{
    race_dir = scratch("fsfault");
    race_target = path2(race_dir, "out");
    const char *s = race_dir, *target = race_target;
    for (int round = 0; round < 10; round++) {
        pid_t pids[N_WRITERS];
        for (int i = 0; i < N_WRITERS; i++) {
            pids[i] = fork();
            ck_assert_int_ge(pids[i], 0);
            if (pids[i] == 0)
                write_run(target, i, refuse_renameat2);
        }
        int setup_failed = 0;
        for (int i = 0; i < N_WRITERS; i++) {
            int st;
            ck_assert_int_eq(waitpid(pids[i], &st, 0), pids[i]);
            setup_failed |= WIFEXITED(st) && WEXITSTATUS(st) == SETUP_FAILED;
            ck_assert_msg(setup_failed || (WIFEXITED(st) && WEXITSTATUS(st) == 0),
                          "round %d writer %d failed (%d)", round, i, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
        }
        if (setup_failed) {
            free(race_target), remove_scratch(race_dir);
            race_target = race_dir = NULL;
            return 0;
        }
        /* Every file holds the same writer's id. */
        int id = -1;
        for (int k = 0; k < N_FILES; k++) {
            char name[32];
            snprintf(name, sizeof name, "out/head_%02d.png", k);
            char *p = path2(s, name);
            FILE *f = fopen(p, "r");
            ck_assert_msg(f != NULL, "round %d: %s missing", round, p);
            int got = -2;
            ck_assert_int_eq(fscanf(f, "%d", &got), 1);
            fclose(f);
            free(p);
            if (id < 0)
                id = got;
            ck_assert_msg(got == id, "round %d: a mix of writers %d and %d", round, id, got);
        }
        const char *allowed[] = {"out", NULL};
        ck_assert_msg(strangers(s, allowed) == 0, "round %d: something is left beside the target", round);
    }
    free(race_target), remove_scratch(race_dir);
    race_target = race_dir = NULL;
    return 1;
}

START_TEST(outdir_commit_race)
{
    race_rounds(0);
}
END_TEST

/* The same race where renameat2 cannot swap: a writer that moved the
 * earlier output aside and then finds another writer's folder in its place
 * cannot put it back, and must not leave it beside the target. */
START_TEST(outdir_commit_race_two_step)
{
    if (!race_rounds(1))
        cannot_run("fsfault outdir_commit_race_two_step", "no seccomp filter here");
}
END_TEST

Suite *fsfault_suite(void)
{
    Suite *s = suite_create("fsfault");
    TCase *lib = tcase_create("outdir_race");
    tcase_add_test(lib, outdir_commit_race);
    tcase_add_test(lib, outdir_commit_race_two_step);
    tcase_set_timeout(lib, 60);
    suite_add_tcase(s, lib);
    TCase *tc = tcase_create("cli");
    tcase_add_test(tc, missing_input);
    tcase_add_test(tc, folder_as_input);
    tcase_add_test(tc, unreadable_input);
    tcase_add_test(tc, output_parent_is_a_file);
    tcase_add_test(tc, output_folder_not_writable);
    tcase_add_test(tc, output_inside_read_only_mount);
    tcase_add_test(tc, file_size_limit_sweep);
    tcase_add_test(tc, file_size_limit_with_default_signal);
    tcase_add_test(tc, file_size_limit_variants);
    tcase_add_test(tc, disk_full);
    tcase_add_test(tc, swap_refused_by_a_sandbox);
    tcase_add_test(tc, output_name_with_trailing_slash);
    tcase_add_test(tc, empty_output_name);
    tcase_add_test(tc, output_folder_mode_follows_umask);
    tcase_add_test(tc, concurrent_runs_different_folders);
    tcase_add_test(tc, concurrent_runs_same_folder);
    tcase_set_timeout(tc, 120);
    suite_add_tcase(s, tc);
    return s;
}
