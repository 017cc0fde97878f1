/* main.c — runs every suite; exits non-zero when any test failed.
 *
 * The suites are found by their files' names (SUITES, below). Check forks
 * each test, and no OpenMP region runs here before the forks, so every
 * test starts with a fresh thread pool. */
#include "core/blas_setup.h"

#include <check.h>
#include <stdlib.h>

/* SUITES is SUITE(name) for each tests/<kind>/check_<name>.c, which exports
 * Suite *<name>_suite(void): the Makefile lists them from the file names. */
#define SUITE(name) Suite *name##_suite(void);
SUITES
#undef SUITE

int main(void)
{
    blas_setup(); /* the kernels mhaviz itself uses */
#define SUITE(name) name##_suite,
    Suite *(*const suites[])(void) = {SUITES};
#undef SUITE
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
