/* check_timing.c — --timing's lines and the progress line's rules (issue 7):
 * the progress line appears only when allowed (stderr is a terminal) and
 * after about a second, and timing_end clears it. stderr is captured in a
 * file for each check (every test runs in its own fork). */
#include "core/timing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static char path[64];
static int saved_fd = -1;

/* From here on, stderr goes to a scratch file. */
static void capture(void)
{
    snprintf(path, sizeof path, "/tmp/mhaviz-timing-XXXXXX");
    const int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    fflush(stderr);
    saved_fd = dup(STDERR_FILENO);
    ck_assert_int_ge(dup2(fd, STDERR_FILENO), 0);
    close(fd);
}

/* stderr back, and what was written to it. */
static char *captured(void)
{
    fflush(stderr);
    dup2(saved_fd, STDERR_FILENO);
    close(saved_fd);
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    char *buf = calloc(4096, 1);
    fread(buf, 1, 4095, f);
    fclose(f);
    unlink(path);
    return buf;
}

START_TEST(no_progress_line_unless_allowed)
{
    capture();
    Timing t;
    timing_begin(&t, 0); /* stderr not a terminal */
    timing_phase(&t, TIMING_RENDER);
    t.start_ms -= 5000.0; /* as if the run had begun 5 s ago */
    timing_progress(&t, 0.5);
    timing_end(&t);
    char *out = captured();
    ck_assert_str_eq(out, "");
    free(out);
}
END_TEST

START_TEST(progress_line_after_a_second_then_cleared)
{
    capture();
    Timing t;
    timing_begin(&t, 1);
    timing_phase(&t, TIMING_RENDER);
    timing_progress(&t, 0.5); /* a fresh run: too early */
    t.start_ms -= 2000.0;     /* 2 s on */
    timing_progress(&t, 0.5);
    timing_progress(&t, 1.5); /* clamped to 100 % */
    timing_end(&t);
    char *out = captured();
    ck_assert_str_eq(out, "\rmhaviz: render   50%\033[K\rmhaviz: render  100%\033[K\r\033[K");
    free(out);
}
END_TEST

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* One line per phase in order, 0.0 for phases the run did not reach, the
 * estimate, then the peak memory. The times add up to the time that passed
 * (plus the 41.25 ms the test adds to the forward phase); the peak counts
 * the 32 MiB (33.6 MB) this test touched before. */
START_TEST(print_has_a_line_per_phase)
{
    const size_t touched = (size_t)32 << 20;
    volatile char *ballast = malloc(touched); /* volatile: the writes stay */
    ck_assert(ballast != NULL);
    for (size_t i = 0; i < touched; i += 4096)
        ballast[i] = 1;
    const double start = now_ms();
    Timing t;
    timing_begin(&t, 0);
    timing_phase(&t, TIMING_LOAD);
    timing_phase(&t, TIMING_FORWARD);
    t.phase_start_ms -= 41.25; /* the forward phase took 41.25 ms more */
    timing_end(&t);
    const double elapsed = now_ms() - start;
    t.estimate_bytes = 50100000;
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    ck_assert_ptr_nonnull(f);
    timing_print(&t, f);
    fclose(f);
    double load, forward, mb;
    char rest[256];
    ck_assert_msg(sscanf(buf, "load: %lf ms\nforward: %lf ms\nchance: 0.0 ms\nrender: 0.0 ms\nwrite: 0.0 ms\n"
                              "estimated memory: 50.1 MB\npeak memory: %lf MB%255c",
                         &load, &forward, &mb, rest) == 4,
                  "%s", buf);
    ck_assert(load >= 0.0 && forward >= 41.2);
    ck_assert_msg(load + forward <= elapsed + 41.25 + 0.1, "%.1f + %.1f ms in %.2f ms", load, forward, elapsed + 41.25);
    ck_assert_msg(mb >= 33.5, "peak memory %.1f MB, but 33.6 MB were touched", mb);
    free((void *)ballast);
}
END_TEST

Suite *timing_suite(void)
{
    Suite *s = suite_create("timing");
    TCase *tc = tcase_create("timing");
    tcase_add_test(tc, no_progress_line_unless_allowed);
    tcase_add_test(tc, progress_line_after_a_second_then_cleared);
    tcase_add_test(tc, print_has_a_line_per_phase);
    suite_add_tcase(s, tc);
    return s;
}
