/* check_png.c — png_write_rows writes files any PNG decoder reads back exactly.
 *
 * The reference decoder is stb_image (libstb), independent of png.c: every
 * test encodes a picture, decodes it and compares every pixel. */
#include "png.h"
#include "status.h"

#include <check.h>
#include <stb_image.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

static char path[64];

static void make_path(void)
{
    snprintf(path, sizeof path, "/tmp/mhaviz-png-XXXXXX");
    int fd = mkstemp(path);
    ck_assert_int_ge(fd, 0);
    close(fd);
}

static void remove_path(void)
{
    if (path[0])
        unlink(path);
}

/* xorshift32: a seeded generator of our own (never rand()). */
static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* Adler-32 by its definition (RFC 1950: a = 1 + sum of bytes, b = sum of
 * the a's, both mod 65521), one byte at a time. */
static uint32_t adler_by_definition(const unsigned char *s, size_t n)
{
    uint64_t a = 1, b = 0;
    for (size_t k = 0; k < n; k++) {
        a = (a + s[k]) % 65521;
        b = (b + a) % 65521;
    }
    return (uint32_t)(b << 16 | a);
}

/* The container, checked by definition rather than by a decoder: every
 * chunk's CRC-32 (bit by bit, polynomial 0xEDB88320, PNG annex D) and the
 * zlib stream's Adler-32 of the uncompressed rows (RFC 1950: a = 1 + sum of
 * bytes, b = sum of the a's, both mod 65521). */
static void check_container(const unsigned char *rows, size_t n)
{
    FILE *f = fopen(path, "rb");
    ck_assert_ptr_nonnull(f);
    fseek(f, 0, SEEK_END);
    long size = ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *d = malloc((size_t)size);
    ck_assert_int_eq(fread(d, 1, (size_t)size, f), (size_t)size);
    fclose(f);
    ck_assert(memcmp(d, "\x89PNG\r\n\x1a\n", 8) == 0);
    /* The zlib stream may be cut into several IDAT chunks: its Adler-32 ends the last one. */
    long last_idat_end = -1;
    for (long i = 8; i < size;) {
        const uint32_t len = be32(d + i);
        uint32_t crc = 0xFFFFFFFFu;
        for (uint32_t k = 0; k < len + 4; k++) {
            crc ^= d[i + 4 + k];
            for (int bit = 0; bit < 8; bit++)
                crc = crc & 1 ? (crc >> 1) ^ 0xEDB88320u : crc >> 1;
        }
        ck_assert_msg((crc ^ 0xFFFFFFFFu) == be32(d + i + 8 + len), "bad CRC in chunk %.4s", (char *)d + i + 4);
        if (memcmp(d + i + 4, "IDAT", 4) == 0 && len >= 4)
            last_idat_end = i + 8 + (long)len;
        i += 12 + (long)len;
    }
    ck_assert_int_gt(last_idat_end, 0);
    ck_assert_uint_eq(be32(d + last_idat_end - 4), adler_by_definition(rows, n));
    free(d);
}

typedef void (*Fill)(unsigned char *px, int x, int y, uint32_t *seed);

/* Rows (h, 1 + 3w) as png_write takes them: each the filter byte 0, then w
 * pixels set by fill from the generator seeded with seed. Free them. */
static unsigned char *make_rows(int w, int h, Fill fill, uint32_t seed)
{
    const size_t stride = 1 + (size_t)w * 3;
    unsigned char *rows = malloc(stride * h);
    ck_assert_ptr_nonnull(rows);
    for (int y = 0; y < h; y++) {
        rows[(size_t)y * stride] = 0;
        for (int x = 0; x < w; x++)
            fill(rows + (size_t)y * stride + 1 + (size_t)x * 3, x, y, &seed);
    }
    return rows;
}

/* The file at path decodes to exactly rows (h, 1 + 3w), pixel by pixel,
 * and its chunks and zlib stream carry the right checksums. */
static void assert_written(const unsigned char *rows, int w, int h)
{
    const size_t stride = 1 + (size_t)w * 3;
    int dw, dh, n;
    unsigned char *d = stbi_load(path, &dw, &dh, &n, 3);
    ck_assert_msg(d != NULL, "%dx%d does not decode: %s", w, h, stbi_failure_reason());
    ck_assert_int_eq(dw, w);
    ck_assert_int_eq(dh, h);
    ck_assert_int_eq(n, 3);
    for (int y = 0; y < h; y++)
        ck_assert_msg(memcmp(d + (size_t)y * w * 3, rows + (size_t)y * stride + 1, (size_t)w * 3) == 0,
                      "%dx%d: row %d differs", w, h, y);
    stbi_image_free(d);
    check_container(rows, stride * h);
}

/* Encode rows built by fill, decode, compare pixel by pixel. */
static void roundtrip(int w, int h, Fill fill)
{
    unsigned char *rows = make_rows(w, h, fill, 12345);
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(png_write_rows(path, rows, w, h, err, sizeof err), MHAVIZ_OK);
    assert_written(rows, w, h);
    free(rows);
}

static void noise(unsigned char *px, int x, int y, uint32_t *seed)
{
    (void)x, (void)y;
    uint32_t r = next(seed);
    px[0] = (unsigned char)r, px[1] = (unsigned char)(r >> 8), px[2] = (unsigned char)(r >> 16);
}

/* What heatmaps hold: flat cells, repeated rows, diagonal hatching, a bit of noise. */
static void heatmap_like(unsigned char *px, int x, int y, uint32_t *seed)
{
    uint32_t r = next(seed);
    if (((x + y) & 7) < 2 && x > y)
        px[0] = px[1] = px[2] = 168;
    else if (x > y)
        px[0] = px[1] = px[2] = 222;
    else
        px[0] = (unsigned char)(x / 13 * 40), px[1] = (unsigned char)(y / 13 * 30), px[2] = 90;
    if (r % 97 == 0)
        px[1] = (unsigned char)r;
}

static void flat(unsigned char *px, int x, int y, uint32_t *seed)
{
    (void)x, (void)y, (void)seed;
    px[0] = 68, px[1] = 1, px[2] = 84;
}

/* A random 7 x 5 tile repeated: copies from 21 bytes back, which only the
 * hash lookup finds (like repeated digits in annotated cells). */
static void tiles(unsigned char *px, int x, int y, uint32_t *seed)
{
    (void)seed;
    uint32_t t = (uint32_t)(x % 7) * 2654435761u ^ (uint32_t)(y % 5) * 40503u;
    px[0] = (unsigned char)t, px[1] = (unsigned char)(t >> 8), px[2] = (unsigned char)(t >> 16);
}

START_TEST(noise_round_trips)
{
    roundtrip(97, 61, noise);
    roundtrip(200, 120, noise); /* over 32768 literals: several deflate blocks */
}
END_TEST

START_TEST(repeated_tiles_round_trip)
{
    roundtrip(301, 77, tiles);
}
END_TEST

START_TEST(heatmap_round_trips)
{
    roundtrip(640, 480, heatmap_like);
    roundtrip(7, 5, heatmap_like);
}
END_TEST

START_TEST(flat_and_tiny_round_trip)
{
    roundtrip(1, 1, flat);
    roundtrip(2, 1, flat);
    roundtrip(1, 300, flat);  /* every copy is from the row above */
    roundtrip(1000, 3, flat); /* long runs of the pixel to the left */
}
END_TEST

START_TEST(rows_longer_than_the_window_round_trip)
{
    /* 1 + 3 * 11000 bytes a row: the row above lies beyond deflate's 32 KiB window */
    roundtrip(11000, 3, heatmap_like);
}
END_TEST

/* Rows equal to the row above are written as copies of it, 258 bytes at a
 * time, never leaving a piece under 3 bytes: rows of 259 (w = 86), 514
 * (171) and 517 (172) bytes, and the narrowest row, 4 bytes. */
static void stripes(unsigned char *px, int x, int y, uint32_t *seed)
{
    (void)seed;
    px[0] = (unsigned char)(y / 3 * 50), px[1] = (unsigned char)(x * 7), px[2] = (unsigned char)(x % 5);
}

START_TEST(repeated_rows_round_trip)
{
    static const int widths[] = {1, 85, 86, 171, 172, 3000};
    for (size_t k = 0; k < sizeof widths / sizeof widths[0]; k++)
        roundtrip(widths[k], 7, stripes);
}
END_TEST

/* One encoder writes several pictures: nothing of one leaks into the next. */
START_TEST(one_writer_for_several_pictures)
{
    PngWriter *pw = png_writer_new();
    ck_assert_ptr_nonnull(pw);
    static const int sizes[3][2] = {{200, 120}, {7, 5}, {640, 480}};
    for (int k = 0; k < 3; k++) {
        const int w = sizes[k][0], h = sizes[k][1];
        unsigned char *rows = make_rows(w, h, k == 0 ? noise : heatmap_like, 777u + (uint32_t)k);
        char err[MHAVIZ_ERRLEN];
        ck_assert_int_eq(png_write(pw, path, rows, w, h, err, sizeof err), MHAVIZ_OK);
        assert_written(rows, w, h);
        free(rows);
    }
    png_writer_free(pw);
}
END_TEST

/* Sizes png.h does not promise are refused before any file is made. */
START_TEST(sizes_out_of_range_are_refused)
{
    unsigned char rows[4] = {0, 1, 2, 3};
    char err[MHAVIZ_ERRLEN] = "";
    unlink(path);
    static const int sizes[][2] = {{0, 1}, {1, 0}, {-3, 5}, {PNG_MAX_SIDE + 1, 1}, {1, PNG_MAX_SIDE + 1}};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        ck_assert_int_eq(png_write_rows(path, rows, sizes[k][0], sizes[k][1], err, sizeof err), MHAVIZ_EINPUT);
        ck_assert_msg(strstr(err, path) && strstr(err, "pixels"), "%s", err);
        ck_assert_int_ne(access(path, F_OK), 0); /* no file made */
    }
}
END_TEST

/* A write that fails half way (here: the file size limit, as a full disk
 * would) is an I/O error, and the half-written file is removed. */
START_TEST(half_written_file_is_removed)
{
    enum { W = 200, H = 120 };
    unsigned char *rows = make_rows(W, H, noise, 99);
    /* In a child process of its own (the limit must not outlive the write,
     * also when the tests run without forking), which says through a pipe
     * whether png_write_rows answered MHAVIZ_EIO naming the file (not by
     * its exit status, which valgrind may replace). */
    int fds[2];
    ck_assert_int_eq(pipe(fds), 0);
    fflush(NULL);
    const pid_t pid = fork();
    ck_assert_int_ge(pid, 0);
    if (pid == 0) {
        close(fds[0]);
        signal(SIGXFSZ, SIG_IGN); /* writes past the limit fail with EFBIG instead */
        const struct rlimit small = {4096, 4096};
        char err[MHAVIZ_ERRLEN] = "";
        const int ok = setrlimit(RLIMIT_FSIZE, &small) == 0 &&
                       png_write_rows(path, rows, W, H, err, sizeof err) == MHAVIZ_EIO && strstr(err, path);
        const char verdict = ok ? 'y' : 'n';
        if (write(fds[1], &verdict, 1) != 1)
            _exit(2);
        free(rows);
        _exit(0);
    }
    close(fds[1]);
    char verdict = '?';
    const ssize_t got = read(fds[0], &verdict, 1);
    close(fds[0]);
    int st;
    ck_assert_int_eq(waitpid(pid, &st, 0), pid);
    ck_assert_msg(got == 1 && verdict == 'y', "the write past the limit was not an I/O error naming %s", path);
    ck_assert_int_ne(access(path, F_OK), 0);
    free(rows);
}
END_TEST

/* Every Adler-32 version (portable, SSE2, AVX2: each one this machine
 * has) against the definition: every length 0..600 (whole steps and the
 * bytes after them), lengths around the 5536-byte chunks where the
 * remainders are taken, and all-255 bytes, the largest sums. */
START_TEST(adler32_every_version_matches_the_definition)
{
    const size_t n_max = 3 * 5536 + 100;
    unsigned char *s = malloc(n_max);
    ck_assert_ptr_nonnull(s);
    uint32_t seed = 7;
    for (int fill = 0; fill < 2; fill++) {
        for (size_t k = 0; k < n_max; k++)
            s[k] = fill == 0 ? (unsigned char)next(&seed) : 255;
        const size_t lengths[] = {5535, 5536, 5537, 5552, 5553, 2 * 5536 + 31, 3 * 5536 + 33, n_max};
        for (size_t k = 0; k < 601 + sizeof lengths / sizeof *lengths; k++) {
            const size_t n = k <= 600 ? k : lengths[k - 601];
            const uint32_t want = adler_by_definition(s, n);
            for (int simd = PNG_SIMD_NONE; simd <= PNG_SIMD_BEST; simd++)
                ck_assert_msg(png_adler32(s, n, (PngSimd)simd) == want, "png_adler32 at most %d, %zu bytes", simd, n);
        }
    }
    free(s);
}
END_TEST

START_TEST(unwritable_path_is_an_io_error)
{
    unsigned char rows[4] = {0, 1, 2, 3};
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_int_eq(png_write_rows("/nonexistent-dir/x.png", rows, 1, 1, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "/nonexistent-dir/x.png") != NULL, "%s", err);
    /* a full disk: /dev/full accepts the open and fails the writes */
    if (access("/dev/full", W_OK) == 0) {
        ck_assert_int_eq(png_write_rows("/dev/full", rows, 1, 1, err, sizeof err), MHAVIZ_EIO);
        ck_assert_msg(strstr(err, "/dev/full") != NULL, "%s", err);
    }
}
END_TEST

Suite *png_suite(void)
{
    Suite *s = suite_create("png");
    TCase *tc = tcase_create("roundtrip");
    tcase_add_checked_fixture(tc, make_path, remove_path);
    tcase_add_test(tc, noise_round_trips);
    tcase_add_test(tc, heatmap_round_trips);
    tcase_add_test(tc, repeated_tiles_round_trip);
    tcase_add_test(tc, flat_and_tiny_round_trip);
    tcase_add_test(tc, rows_longer_than_the_window_round_trip);
    tcase_add_test(tc, repeated_rows_round_trip);
    tcase_add_test(tc, one_writer_for_several_pictures);
    tcase_add_test(tc, sizes_out_of_range_are_refused);
    tcase_add_test(tc, half_written_file_is_removed);
    tcase_add_test(tc, unwritable_path_is_an_io_error);
    tcase_add_test(tc, adler32_every_version_matches_the_definition);
    suite_add_tcase(s, tc);
    return s;
}
