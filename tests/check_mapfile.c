/* check_mapfile.c — a whole file mapped: the same bytes as the file, and
 * each refusal with its errno (expected values: mapfile.h's list). */
#include "mapfile.h"

#include <check.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* A scratch folder with a file of n pseudo-random bytes in it. */
static void write_file(const char *path, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    unsigned s = 12345u;
    for (size_t i = 0; i < n; i++) {
        s = s * 1103515245u + 12345u;
        fputc((int)(s >> 16) & 0xff, f);
    }
    ck_assert_int_eq(fclose(f), 0);
}

START_TEST(maps_the_whole_file)
{
    char dir[] = "/tmp/mhaviz-mapfile-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    const size_t sizes[] = {1, 4095, 4096, 70001};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        snprintf(path, sizeof path, "%s/f%zu", dir, k);
        write_file(path, sizes[k]);
        unsigned char *want = malloc(sizes[k]);
        FILE *f = fopen(path, "rb");
        ck_assert_uint_eq(fread(want, 1, sizes[k], f), sizes[k]);
        fclose(f);
        MappedFile m;
        ck_assert_int_eq(mapfile_open(&m, path, 1 << 20), 0);
        ck_assert_uint_eq(m.size, sizes[k]);
        ck_assert_int_eq(m.mapped, 1);
        ck_assert_mem_eq(m.data, want, sizes[k]);
        mapfile_close(&m);
        ck_assert_ptr_null(m.data);
        free(want);
        unlink(path);
    }
    rmdir(dir);
}
END_TEST

START_TEST(refusals_say_why)
{
    char dir[] = "/tmp/mhaviz-mapfile-XXXXXX", path[64];
    ck_assert_ptr_nonnull(mkdtemp(dir));
    MappedFile m;
    snprintf(path, sizeof path, "%s/missing", dir);
    ck_assert_int_eq(mapfile_open(&m, path, 1 << 20), ENOENT);
    ck_assert_ptr_null(m.data);
    ck_assert_int_eq(mapfile_open(&m, dir, 1 << 20), EISDIR);
    snprintf(path, sizeof path, "%s/empty", dir);
    write_file(path, 0);
    ck_assert_int_eq(mapfile_open(&m, path, 1 << 20), ENODATA);
    unlink(path);
    snprintf(path, sizeof path, "%s/big", dir);
    write_file(path, 1001);
    ck_assert_int_eq(mapfile_open(&m, path, 1000), EFBIG);
    ck_assert_int_eq(mapfile_open(&m, path, 1001), 0); /* exactly the limit is fine */
    mapfile_close(&m);
    unlink(path);
    snprintf(path, sizeof path, "%s/fifo", dir);
    ck_assert_int_eq(mkfifo(path, 0600), 0);
    ck_assert_int_eq(mapfile_open(&m, path, 1 << 20), EINVAL); /* at once: no writer awaited */
    unlink(path);
    MappedFile zero = {0};
    mapfile_close(&zero); /* safe on a zeroed one */
    rmdir(dir);
}
END_TEST

Suite *mapfile_suite(void)
{
    Suite *s = suite_create("mapfile");
    TCase *tc = tcase_create("mapfile");
    tcase_add_test(tc, maps_the_whole_file);
    tcase_add_test(tc, refusals_say_why);
    suite_add_tcase(s, tc);
    return s;
}
