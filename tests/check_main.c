/* check_main.c — runs every suite; exits non-zero when any test failed.
 *
 * Each tests/check_<module>.c exports Suite *<module>_suite(void); add it
 * to the list below. Check forks each test, and no OpenMP region runs here
 * before the forks, so every test starts with a fresh thread pool. */
#include "core/blas_setup.h"

#include <check.h>
#include <stdlib.h>

Suite *cli_suite(void);
Suite *input_suite(void);
Suite *mha_suite(void);
Suite *outdir_suite(void);
Suite *pool_suite(void);
Suite *init_suite(void);
Suite *samples_suite(void);
Suite *trained_suite(void);
Suite *fsfault_suite(void);
Suite *fuzzreplay_suite(void);
Suite *finite_suite(void);
Suite *render_suite(void);
Suite *draw_suite(void);
Suite *measures_suite(void);
Suite *report_suite(void);
Suite *utf8_suite(void);
Suite *timing_suite(void);
Suite *pull_suite(void);
Suite *head_columns_suite(void);

int main(void)
{
    blas_setup(); /* the kernels mhaviz itself uses */
    Suite *(*const suites[])(void) = {
        cli_suite,
        input_suite,
        mha_suite,
        outdir_suite,
        pool_suite,
        init_suite,
        samples_suite,
        trained_suite,
        fsfault_suite,
        fuzzreplay_suite,
        finite_suite,
        render_suite,
        draw_suite,
        measures_suite,
        report_suite,
        utf8_suite,
        timing_suite,
        pull_suite,
        head_columns_suite,
    };
    SRunner *sr = srunner_create(NULL);
    for (size_t i = 0; i < sizeof suites / sizeof suites[0]; i++)
        srunner_add_suite(sr, suites[i]());
    srunner_run_all(sr, CK_NORMAL);
    int failed = srunner_ntests_failed(sr);
    srunner_free(sr);
    return failed == 0 ? EXIT_SUCCESS : EXIT_FAILURE;
}
