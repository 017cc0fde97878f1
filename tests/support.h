/* support.h — what the tests share: files read whole and compared, scratch
 * folders, a seeded random sequence. Every helper fails the calling test,
 * naming the file, when it cannot do its job: nothing is cut short or
 * quietly read as empty. */
#ifndef MHAVIZ_TEST_SUPPORT_H
#define MHAVIZ_TEST_SUPPORT_H

#include "core/layer.h"
#include "core/mha.h"
#include "core/pull.h"

#include <stddef.h>
#include <stdint.h>

/* The whole file at path, NUL-terminated (caller frees); *len its size in
 * bytes (len may be NULL). Fails the test when it cannot be read. */
char *slurp(const char *path, size_t *len);

/* The same into buf (n bytes, NUL-terminated): fails the test when the file
 * cannot be read or holds n bytes or more. */
void slurp_into(const char *path, char *buf, size_t n);

/* 1 when files a and b hold the same bytes, else 0; the calling test
 * fails when either cannot be opened. */
int files_same(const char *a, const char *b);

/* A new, empty folder /tmp/mhaviz-<what>-XXXXXX (caller frees the name;
 * remove it with remove_tree). */
char *scratch(const char *what);

/* rm -r path: every file and folder below it, read-only ones too. */
void remove_tree(const char *path);

/* The environment variable name (`make test` sets it); fails the test
 * when it is not set. */
const char *need_env(const char *name);

/* MHAVIZ_BIN, the binary under test, as an absolute path (the runs change
 * folder) in a static buffer; fails the test when it names no file. */
const char *binary_path(void);

/* Run argv (argv[0]: the program's path; NULL-terminated) with fork +
 * exec in folder dir (NULL: this one), its stdout into the file out_path
 * (NULL: /dev/null), its stderr captured into err (n bytes,
 * NUL-terminated; a longer one fails the test). Returns the exit code, or
 * -1 when it did not exit normally. */
int run_program(const char *dir, const char *const argv[], const char *out_path, char *err, size_t n);

/* The entries of folder dir but for "." and ".." and, when not NULL,
 * except: what runs left there. */
int count_entries(const char *dir, const char *except);

/* A test that cannot run on this machine (it lacks what the test needs:
 * why) says so on stderr, "SKIPPED: test: why"; under CI=true that fails
 * the test, so a green CI means every test ran. The caller returns after. */
void cannot_run(const char *test, const char *why);

/* The next number of the xorshift32 sequence seeded with *s (not 0): the
 * same "random" numbers on every run and machine. */
uint32_t xorshift(uint32_t *s);

/* A sample's heads and wide head, run as the CLI runs them (the wide head
 * from its own weights when the input gives them, else built from the
 * heads' projections), and the pulls between them: check_pull and
 * check_contests share it. Free with sample_run_free. */
typedef struct {
    MhaInput in;
    MhaState multi, single;
    PullLayer p;
} SampleRun;

/* Load path and run it into *r; fails the test on any error. */
void sample_run(SampleRun *r, const char *path);
void sample_run_free(SampleRun *r);

/* The memory figures --timing printed into text (mhaviz's stderr), in
 * MB: *estimate ("estimated memory: ") and *peak ("peak memory: "); fails
 * the test when either is missing. */
void timing_memory(const char *text, double *estimate, double *peak);

/* Built with AddressSanitizer (make asan), the binary under test is too. (SANITIZED: a test of memory
 * figures skips what its shadow memory and redzones change) */
#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif

#endif
