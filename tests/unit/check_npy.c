/* check_npy.c — .npy files read and written (src/io/npy.c), called directly.
 *
 * The files are written here byte by byte, as the format says (numpy's
 * NEP 1): the magic "\x93NUMPY", the version (major, minor), the header's
 * length (2 bytes little-endian in 1.0, 4 in 2.0 and 3.0), the header
 * dict, then the data. The data starts right after the header: at 10 +
 * header length in 1.0, 12 + header length in 2.0 and 3.0. Each item holds
 * its own index plus one half (0.5, 1.5, ...), so data read from any other
 * offset gives other numbers. tests/unit/check_input.c loads .npy files
 * through the input file. */
#include "core/status.h"
#include "io/npy.h"
#include "support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROWS = 3, COLS = 4, N = ROWS * COLS };

/* Write dir/name: format major.0, dtype descr ("<f4" or "<f8"), shape
 * (ROWS, COLS), items k + 0.5, the header dict padded with pad spaces
 * before its newline. Returns where the data starts. */
static size_t write_npy(const char *dir, const char *name, int major, const char *descr, int pad)
{
    char path[512], header[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%d, %d), }", descr,
                     ROWS, COLS);
    memset(header + n, ' ', (size_t)pad);
    n += pad;
    header[n++] = '\n';
    FILE *f = fopen(path, "wb");
    ck_assert_ptr_nonnull(f);
    const unsigned char magic[8] = {0x93, 'N', 'U', 'M', 'P', 'Y', (unsigned char)major, 0};
    ck_assert_uint_eq(fwrite(magic, 1, 8, f), 8);
    const unsigned char len[4] = {(unsigned char)(n & 0xff), (unsigned char)(n >> 8), 0, 0};
    const size_t len_bytes = major == 1 ? 2 : 4;
    ck_assert_uint_eq(fwrite(len, 1, len_bytes, f), len_bytes);
    ck_assert_uint_eq(fwrite(header, 1, (size_t)n, f), (size_t)n);
    for (int k = 0; k < N; k++) {
        if (descr[2] == '4') {
            const float v = (float)k + 0.5f;
            ck_assert_uint_eq(fwrite(&v, sizeof v, 1, f), 1);
        } else {
            const double v = k + 0.5;
            ck_assert_uint_eq(fwrite(&v, sizeof v, 1, f), 1);
        }
    }
    ck_assert_int_eq(fclose(f), 0);
    return 8 + len_bytes + (size_t)n;
}

static void assert_items(const float *a, const char *what)
{
    for (int k = 0; k < N; k++)
        ck_assert_msg(a[k] == (float)k + 0.5f, "%s: item %d is %g, not %g", what, k, (double)a[k], k + 0.5);
}

/* Versions 1.0, 2.0 and 3.0, float32 and float64, headers of four lengths
 * (so that the data starts at each remainder modulo 4): every item read
 * from its place, by npy_read_floats and by npy_load_floats, which reads a
 * float32 file in place exactly when its data starts at a multiple of 4
 * bytes (and then points at the data, not at the file's start). */
START_TEST(data_starts_after_the_header)
{
    char *dir = scratch("npy");
    static const char *descr[2] = {"<f4", "<f8"};
    for (int major = 1; major <= 3; major++)
        for (int d = 0; d < 2; d++)
            for (int pad = 0; pad < 4; pad++) {
                char name[64], what[96], msg[256] = "";
                snprintf(name, sizeof name, "v%d_%s_%d.npy", major, descr[d] + 1, pad);
                const size_t start = write_npy(dir, name, major, descr[d], pad);
                snprintf(what, sizeof what, "%s (data at byte %zu)", name, start);
                float a[N];
                ck_assert_msg(npy_read_floats(dir, name, ROWS, COLS, 0, a, msg, sizeof msg) == MHAVIZ_OK, "%s", msg);
                assert_items(a, what);
                float *data;
                MappedFile map;
                ck_assert_msg(npy_load_floats(dir, name, ROWS, COLS, 0, &data, &map, msg, sizeof msg) == MHAVIZ_OK,
                              "%s", msg);
                assert_items(data, what);
                const int in_place = d == 0 && start % 4 == 0;
                ck_assert_msg((map.addr != NULL) == in_place, "%s: %s", what, in_place ? "copied" : "mapped");
                if (in_place) {
                    ck_assert_ptr_eq(data, (const char *)map.addr + start);
                    npy_unmap(&map);
                } else {
                    free(data);
                }
            }
    remove_tree(dir);
    free(dir);
}
END_TEST

/* A file whose length field says one byte more or less than its header
 * holds puts the data one byte off: its size no longer matches the shape,
 * and the message names the file and the bytes it has. */
START_TEST(data_offset_off_by_one_refused)
{
    char *dir = scratch("npy");
    char path[512], msg[256] = "";
    write_npy(dir, "a.npy", 1, "<f4", 0);
    snprintf(path, sizeof path, "%s/a.npy", dir);
    FILE *f = fopen(path, "r+b");
    ck_assert_ptr_nonnull(f);
    unsigned char len[2];
    ck_assert_int_eq(fseek(f, 8, SEEK_SET), 0);
    ck_assert_uint_eq(fread(len, 1, 2, f), 2);
    len[0]++; /* the header "ends" one byte into the data */
    ck_assert_int_eq(fseek(f, 8, SEEK_SET), 0);
    ck_assert_uint_eq(fwrite(len, 1, 2, f), 2);
    ck_assert_int_eq(fclose(f), 0);
    float a[N];
    ck_assert_int_eq(npy_read_floats(dir, "a.npy", ROWS, COLS, 0, a, msg, sizeof msg), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(msg, "a.npy: 47 bytes of data, but shape (3, 4) of float32 needs 48"), "%s", msg);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* npy_write_floats writes what numpy.save writes: version 1.0, the
 * header's length in bytes 8 and 9, the data right after the header at a
 * multiple of 64 bytes, the floats as they are in memory; read back the
 * same. */
START_TEST(written_data_after_its_header)
{
    char *dir = scratch("npy");
    char path[512], msg[256] = "";
    snprintf(path, sizeof path, "%s/w.npy", dir);
    float a[N], back[N];
    for (int k = 0; k < N; k++)
        a[k] = (float)k + 0.5f;
    ck_assert_msg(npy_write_floats(path, ROWS, COLS, a, msg, sizeof msg) == MHAVIZ_OK, "%s", msg);
    size_t len;
    char *file = slurp(path, &len);
    ck_assert_int_eq(memcmp(file, "\x93NUMPY\x01\x00", 8), 0);
    const size_t start = 10 + ((unsigned char)file[8] | (size_t)(unsigned char)file[9] << 8);
    ck_assert_uint_eq(start % 64, 0);
    ck_assert_int_eq(file[start - 1], '\n');
    ck_assert_uint_eq(len, start + sizeof a);
    ck_assert_int_eq(memcmp(file + start, a, sizeof a), 0);
    free(file);
    ck_assert_msg(npy_read_floats(dir, "w.npy", ROWS, COLS, 0, back, msg, sizeof msg) == MHAVIZ_OK, "%s", msg);
    assert_items(back, "w.npy");
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *npy_suite(void)
{
    Suite *s = suite_create("npy");
    TCase *tc = tcase_create("npy");
    tcase_add_test(tc, data_starts_after_the_header);
    tcase_add_test(tc, data_offset_off_by_one_refused);
    tcase_add_test(tc, written_data_after_its_header);
    suite_add_tcase(s, tc);
    return s;
}
