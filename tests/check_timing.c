/* check_timing.c — --timing's lines and the progress line's rules (issue 7):
 * the progress line appears only when allowed (stderr is a terminal) and
 * after about a second, and timing_end clears it. stderr is captured in a
 * file for each check (every test runs in its own fork). */
#include "timing.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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

/* One line per phase in order, 0.0 for phases the run did not reach, then
 * the peak memory. */
START_TEST(print_has_a_line_per_phase)
{
    Timing t;
    timing_begin(&t, 0);
    timing_phase(&t, TIMING_LOAD);
    timing_phase(&t, TIMING_FORWARD);
    t.phase_start_ms -= 41.25; /* the forward phase took 41.25 ms more */
    timing_end(&t);
    char buf[512] = "";
    FILE *f = fmemopen(buf, sizeof buf - 1, "w");
    ck_assert_ptr_nonnull(f);
    timing_print(&t, f);
    fclose(f);
    double load, forward, mb;
    char rest[256];
    ck_assert_msg(sscanf(buf, "load: %lf ms\nforward: %lf ms\nrender: 0.0 ms\nwrite: 0.0 ms\npeak memory: %lf MB%255c",
                         &load, &forward, &mb, rest) == 4,
                  "%s", buf);
    ck_assert(load >= 0.0 && load < 1000.0);
    ck_assert(forward >= 41.2 && forward < 1041.25);
    ck_assert(mb > 0.0);
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
