/* check_bigmem.c — big arrays: usable whole, and from BIGMEM_HUGE_MIN bytes
 * on (on Linux) starting on a huge-page boundary, so that they can take
 * 2 MiB pages. */
#include "bigmem.h"

#include <check.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* Sizes around the huge-page threshold and page sizes, each written and
 * read back whole (an allocation rounded the wrong way would be too short). */
START_TEST(every_size_is_usable_whole)
{
    const size_t sizes[] = {0, 1, 4096, BIGMEM_HUGE_MIN - 1, BIGMEM_HUGE_MIN, BIGMEM_HUGE_PAGE - 1,
                            BIGMEM_HUGE_PAGE, BIGMEM_HUGE_PAGE + 1, 3 * BIGMEM_HUGE_PAGE + 12345};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        const size_t n = sizes[k];
        unsigned char *p = bigmem_alloc(n);
        ck_assert_msg(p != NULL, "bigmem_alloc(%zu) failed", n);
        memset(p, 0xA5, n);
        for (size_t i = 0; i < n; i += 997)
            ck_assert_int_eq(p[i], 0xA5);
        if (n)
            ck_assert_int_eq(p[n - 1], 0xA5);
        free(p);
    }
}
END_TEST

START_TEST(big_blocks_start_on_a_huge_page)
{
#if defined(__linux__)
    const size_t sizes[] = {BIGMEM_HUGE_MIN, BIGMEM_HUGE_PAGE + 1, 5 * BIGMEM_HUGE_PAGE};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        void *p = bigmem_alloc(sizes[k]);
        ck_assert_ptr_nonnull(p);
        ck_assert_msg((uintptr_t)p % BIGMEM_HUGE_PAGE == 0, "bigmem_alloc(%zu) = %p", sizes[k], p);
        free(p);
    }
#endif
}
END_TEST

Suite *bigmem_suite(void)
{
    Suite *s = suite_create("bigmem");
    TCase *tc = tcase_create("bigmem");
    tcase_add_test(tc, every_size_is_usable_whole);
    tcase_add_test(tc, big_blocks_start_on_a_huge_page);
    suite_add_tcase(s, tc);
    return s;
}
