/* check_threads.c — the default thread count: what /proc/loadavg's text
 * says about other programs, and the rule that turns it into a count (the
 * expected values follow from threads.h's rule by hand); and keeping a
 * thread to one core and giving it its cores back. */
#define _GNU_SOURCE /* sched_getaffinity, cpu_set_t */
#include "threads.h"

#include <check.h>
#include <sched.h>
#include <stdio.h>

START_TEST(loadavg_text_gives_the_others)
{
    ck_assert_int_eq(threads_others_running("0.52 0.58 0.59 3/345 6789\n"), 2);
    ck_assert_int_eq(threads_others_running("0.00 0.01 0.05 1/120 42"), 0); /* only this one */
    ck_assert_int_eq(threads_others_running("12.10 9.00 8.75 17/2000 1"), 16);
    ck_assert_int_eq(threads_others_running("0.52 0.58 0.59 0/345 6789"), 0);
    ck_assert_int_eq(threads_others_running(""), 0);
    ck_assert_int_eq(threads_others_running("garbage"), 0);
    ck_assert_int_eq(threads_others_running("0.52 0.58"), 0);
    ck_assert_int_eq(threads_others_running(NULL), 0);
}
END_TEST

START_TEST(this_machine_gives_a_count)
{
    /* whatever runs now: never negative */
    ck_assert_int_ge(threads_others_now(), 0);
}
END_TEST

START_TEST(idle_cores_are_used)
{
    /* max_threads, procs, online, others before, others after the load */
    ck_assert_int_eq(threads_default(2, 2, 2, 0, 0), 2);
    ck_assert_int_eq(threads_default(8, 8, 8, 3, 3), 5);
}
END_TEST

START_TEST(busy_cores_are_left_alone_and_the_smaller_count_wins)
{
    ck_assert_int_eq(threads_default(2, 2, 2, 1, 1), 1);
    ck_assert_int_eq(threads_default(2, 2, 2, 1, 0), 2); /* a program that ended during the load */
    ck_assert_int_eq(threads_default(2, 2, 2, 0, 1), 2); /* one that only started */
    ck_assert_int_eq(threads_default(4, 4, 4, 2, 3), 2);
}
END_TEST

START_TEST(never_fewer_than_one_nor_more_than_openmp_would_use)
{
    ck_assert_int_eq(threads_default(2, 2, 2, 5, 7), 1); /* every core taken */
    ck_assert_int_eq(threads_default(1, 8, 8, 0, 0), 1); /* OMP_NUM_THREADS=1 */
    ck_assert_int_eq(threads_default(3, 8, 8, 2, 2), 3);
    ck_assert_int_eq(threads_default(16, 8, 8, 0, 0), 8); /* OMP_NUM_THREADS above the cores */
}
END_TEST

START_TEST(machine_load_is_ignored_when_some_cores_are_not_ours)
{
    /* taskset or a cpuset: 2 of 8 online cores; the 6 busy ones may be the others */
    ck_assert_int_eq(threads_default(2, 2, 8, 6, 6), 2);
    ck_assert_int_eq(threads_default(1, 1, 8, 6, 6), 1);
}
END_TEST

/* A thread of a team of 2 or more keeps to one core, the k-th it may run
 * on, and gets its cores back after; a team larger than the cores, or of
 * one, is left alone. */
START_TEST(pinning_a_thread_and_giving_its_cores_back)
{
    cpu_set_t had, now;
    ck_assert_int_eq(sched_getaffinity(0, sizeof had, &had), 0);
    const int cores = CPU_COUNT(&had);
    ThreadPin pin;
    ck_assert_int_eq(threads_pin(0, 1, &pin), 0); /* a team of one */
    ck_assert_int_eq(threads_pin(0, cores + 1, &pin), 0); /* more threads than cores */
    ck_assert_int_eq(sched_getaffinity(0, sizeof now, &now), 0);
    ck_assert(CPU_EQUAL(&had, &now));
    if (cores < 2) {
        fprintf(stderr, "SKIPPED: threads pinning: this process may run on one core only\n");
        return;
    }
    const int k = cores - 1; /* the last core of the set */
    ck_assert_int_eq(threads_pin(k, cores, &pin), 1);
    ck_assert_int_eq(sched_getaffinity(0, sizeof now, &now), 0);
    ck_assert_int_eq(CPU_COUNT(&now), 1);
    int last = -1;
    for (int c = 0; c < CPU_SETSIZE; c++)
        if (CPU_ISSET(c, &had))
            last = c;
    ck_assert(CPU_ISSET(last, &now));
    threads_unpin(&pin);
    ck_assert_int_eq(sched_getaffinity(0, sizeof now, &now), 0);
    ck_assert(CPU_EQUAL(&had, &now));
}
END_TEST

Suite *threads_suite(void)
{
    Suite *s = suite_create("threads");
    TCase *tc = tcase_create("default");
    tcase_add_test(tc, loadavg_text_gives_the_others);
    tcase_add_test(tc, this_machine_gives_a_count);
    tcase_add_test(tc, idle_cores_are_used);
    tcase_add_test(tc, busy_cores_are_left_alone_and_the_smaller_count_wins);
    tcase_add_test(tc, never_fewer_than_one_nor_more_than_openmp_would_use);
    tcase_add_test(tc, machine_load_is_ignored_when_some_cores_are_not_ours);
    tcase_add_test(tc, pinning_a_thread_and_giving_its_cores_back);
    suite_add_tcase(s, tc);
    return s;
}
