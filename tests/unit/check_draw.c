/* check_draw.c — the drawing primitives, checked pixel by pixel, and
 * draw_write_png's files decoded back.
 *
 * Expected pixels follow from draw.h's definitions (derivations in the
 * comments); colour map entries come from the committed tables in
 * assets/colormaps.inc. The PNG decoder is stb_image (libstb), a reader
 * independent of the writer: every picture written is decoded and
 * compared pixel by pixel. */
#include "draw/draw.h"
#include "core/status.h"

#include "support.h"

#include <check.h>
#include <stb_image.h>

#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../assets/colormaps.inc"

static int is(const DrawCanvas *c, int x, int y, DrawRgb col)
{
    const unsigned char *p = draw_pixel(c, x, y);
    return p[0] == col.r && p[1] == col.g && p[2] == col.b;
}

static int all_white(const DrawCanvas *c)
{
    for (int y = 0; y < c->h; y++)
        for (int x = 0; x < c->w; x++)
            if (!is(c, x, y, DRAW_WHITE))
                return 0;
    return 1;
}

START_TEST(a_new_canvas_is_white_and_rects_clip)
{
    DrawCanvas *c = draw_canvas_new(20, 10);
    ck_assert_ptr_nonnull(c);
    ck_assert(all_white(c));
    const DrawRgb red = {200, 10, 20};
    draw_fill_rect(c, -5, -5, 10, 8, red); /* covers x 0..4, y 0..2 */
    for (int y = 0; y < 10; y++)
        for (int x = 0; x < 20; x++)
            ck_assert_msg(is(c, x, y, x < 5 && y < 3 ? red : DRAW_WHITE), "pixel (%d, %d)", x, y);
    ck_assert_int_eq(draw_canvas_reset(c, 30, 40), MHAVIZ_OK);
    ck_assert_int_eq(c->w, 30);
    ck_assert_int_eq(c->h, 40);
    ck_assert(all_white(c));
    draw_canvas_free(c);
}
END_TEST

/* A horizontal line 3 px thick along y = 20.5 from x = 10.5 to 50.5: pixel
 * centres (x + 0.5, y + 0.5) at distance d from the segment are covered by
 * 1.5 + 0.5 - d. Rows 19..21 (d <= 1) are covered fully, rows 18 and 22
 * (d = 2) not at all; with round ends, columns 9 and 51 (d = 1) fully, 8
 * and 52 (d = 2) not at all. */
START_TEST(a_thick_horizontal_line_covers_exactly_its_band)
{
    DrawCanvas *c = draw_canvas_new(64, 40);
    draw_line(c, 10.5f, 20.5f, 50.5f, 20.5f, 3.0f, DRAW_INK);
    for (int y = 0; y < 40; y++)
        for (int x = 0; x < 64; x++) {
            const int inside = y >= 19 && y <= 21 && x >= 9 && x <= 51;
            const int corner = (x == 9 || x == 51) && y != 20; /* d = sqrt 2: partly covered */
            if (!corner)
                ck_assert_msg(is(c, x, y, inside ? DRAW_INK : DRAW_WHITE), "pixel (%d, %d)", x, y);
        }
    draw_canvas_free(c);
}
END_TEST

/* A diagonal line is smoothed: some pixels get a colour between ink and
 * paper; drawn from either end it gives the same pixels. */
START_TEST(a_diagonal_line_is_smooth_and_has_no_direction)
{
    DrawCanvas *a = draw_canvas_new(50, 50), *b = draw_canvas_new(50, 50);
    draw_line(a, 5.0f, 7.0f, 44.0f, 31.0f, 2.0f, DRAW_INK);
    draw_line(b, 44.0f, 31.0f, 5.0f, 7.0f, 2.0f, DRAW_INK);
    int partial = 0, full = 0;
    for (int y = 0; y < 50; y++)
        for (int x = 0; x < 50; x++) {
            ck_assert(memcmp(draw_pixel(a, x, y), draw_pixel(b, x, y), 3) == 0);
            const unsigned char v = draw_pixel(a, x, y)[0];
            partial += v > DRAW_INK.r && v < 255;
            full += v == DRAW_INK.r;
        }
    ck_assert_int_gt(partial, 20);
    ck_assert_int_gt(full, 20);
    draw_canvas_free(a);
    draw_canvas_free(b);
}
END_TEST

/* draw_line visits only the pixels of each row near the segment; every
 * pixel comes out as draw.h's definition gives it, computed here at every
 * pixel of the canvas (the same float operations): random segments, steep,
 * level, short and partly off the canvas, thin and thick. */
START_TEST(a_line_is_its_definition_at_every_pixel)
{
    const int W = 72, H = 64;
    DrawCanvas *c = draw_canvas_new(W, H), *ref = draw_canvas_new(W, H);
    ck_assert(c && ref);
    uint32_t state = 12345;
    for (int k = 0; k < 400; k++) {
        float v[5];
        for (int i = 0; i < 5; i++)
            v[i] = (float)(xorshift(&state) % 10000) / 10000.0f;
        const float x0 = -20.0f + 112.0f * v[0], y0 = -20.0f + 104.0f * v[1];
        const float x1 = k % 4 == 0 ? x0 + 40.0f * v[2] : -20.0f + 112.0f * v[2]; /* a quarter level */
        const float y1 = k % 4 == 0 ? y0 : -20.0f + 104.0f * v[3];
        const float thickness = 0.5f + 12.0f * v[4];
        const DrawRgb col = draw_colour(k);
        draw_line(c, x0, y0, x1, y1, thickness, col);
        const float half = 0.5f * thickness, dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
        for (int y = 0; y < H; y++)
            for (int x = 0; x < W; x++) {
                const float px = (float)x + 0.5f - x0, py = (float)y + 0.5f - y0;
                float u = len2 > 0.0f ? (px * dx + py * dy) / len2 : 0.0f;
                u = u < 0.0f ? 0.0f : u > 1.0f ? 1.0f : u;
                const float ex = px - u * dx, ey = py - u * dy;
                const float cover = half + 0.5f - sqrtf(ex * ex + ey * ey);
                if (cover > 0.0f)
                    draw_blend(draw_pixel(ref, x, y), col, cover >= 1.0f ? 255 : (int)lroundf(cover * 255.0f));
            }
        for (int y = 0; y < H; y++)
            ck_assert_msg(memcmp(draw_pixel(c, 0, y), draw_pixel(ref, 0, y), 3 * (size_t)W) == 0,
                          "line %d (%.2f, %.2f)-(%.2f, %.2f), %.2f px: row %d differs", k, x0, y0, x1, y1,
                          thickness, y);
    }
    draw_canvas_free(c);
    draw_canvas_free(ref);
}
END_TEST

START_TEST(lines_off_the_canvas_are_clipped)
{
    DrawCanvas *c = draw_canvas_new(16, 16);
    draw_line(c, -100.0f, -50.0f, -10.0f, 200.0f, 4.0f, DRAW_INK); /* wholly left of it */
    draw_line(c, 3.0f, 3.0f, 3.0f, 3.0f, 0.0f, DRAW_INK);           /* no thickness */
    draw_line(c, NAN, 3.0f, 8.0f, 3.0f, 2.0f, DRAW_INK);             /* no point */
    ck_assert(all_white(c));
    /* across it, 1 px thick along y = 7.5: row 7 (d = 0) covered, rows 6 and 8 (d = 1) not */
    draw_line(c, -1000.0f, 7.5f, 1000.0f, 7.5f, 1.0f, DRAW_INK);
    for (int x = 0; x < 16; x++)
        ck_assert(is(c, x, 7, DRAW_INK) && is(c, x, 6, DRAW_WHITE) && is(c, x, 8, DRAW_WHITE));
    draw_canvas_free(c);
}
END_TEST

/* Text: wider when longer or larger, inked where it is anchored, and the
 * turned text is the horizontal one rotated (its ink spans as many rows as
 * the horizontal one spans columns). */
START_TEST(text_is_measured_and_drawn_where_anchored)
{
    char err[MHAVIZ_ERRLEN];
    DrawFont *f;
    ck_assert_int_eq(draw_font_open(&f, NULL, err, sizeof err), MHAVIZ_OK);
    const float w = draw_text_width(f, "attention", 30.0f);
    ck_assert_float_gt(w, 60.0f);
    ck_assert_float_lt(w, 30.0f * 9);
    ck_assert_float_eq_tol(draw_text_width(f, "attention", 60.0f), 2.0f * w, 1.0f);
    /* the horizontal text centred on (190, 40), the turned one on (40, 180): their inks lie
     * right and left of x = 80 */
    DrawCanvas *c = draw_canvas_new(300, 300);
    ck_assert_int_eq(draw_text(c, f, "attention", 30.0f, 190, 40, DRAW_MID, DRAW_MID, DRAW_INK, 0), MHAVIZ_OK);
    ck_assert_int_eq(draw_text(c, f, "attention", 30.0f, 40, 180, DRAW_MID, DRAW_MID, DRAW_INK, 1), MHAVIZ_OK);
    int x0 = 300, x1 = -1, y0 = 300, y1 = -1;     /* ink box of the horizontal text */
    int rx0 = 300, rx1 = -1, ry0 = 300, ry1 = -1; /* and of the turned one */
    for (int y = 0; y < 300; y++)
        for (int x = 0; x < 300; x++) {
            if (is(c, x, y, DRAW_WHITE))
                continue;
            if (x >= 80)
                x0 = x < x0 ? x : x0, x1 = x > x1 ? x : x1, y0 = y < y0 ? y : y0, y1 = y > y1 ? y : y1;
            else
                rx0 = x < rx0 ? x : rx0, rx1 = x > rx1 ? x : rx1, ry0 = y < ry0 ? y : ry0, ry1 = y > ry1 ? y : ry1;
        }
    ck_assert_int_le(abs((x0 + x1) / 2 - 190), 2); /* centred on x = 190 */
    ck_assert_int_ge(x1 - x0 + 1, (int)w - 6);
    ck_assert_int_lt(y1 - y0, 30);
    ck_assert_int_le(abs((ry0 + ry1) / 2 - 180), 2); /* turned: centred on y = 180 */
    ck_assert_int_le(abs((ry1 - ry0) - (x1 - x0)), 1);
    ck_assert_int_le(abs((rx1 - rx0) - (y1 - y0)), 1);
    draw_canvas_free(c);

    char s[32] = "a rather long caption";
    draw_ellipsize(f, s, sizeof s, 30.0f, 120.0f);
    ck_assert_float_le(draw_text_width(f, s, 30.0f), 120.0f);
    ck_assert_str_eq(s + strlen(s) - 3, "\xe2\x80\xa6"); /* ends with U+2026 */
    draw_font_close(f);
}
END_TEST

START_TEST(colour_maps_by_name_and_position)
{
    ck_assert(memcmp(draw_cmap("viridis"), cmap_viridis, sizeof cmap_viridis) == 0);
    ck_assert(memcmp(draw_cmap("rdbu"), cmap_rdbu, sizeof cmap_rdbu) == 0);
    ck_assert_ptr_null(draw_cmap("jet"));
    const DrawCmap m = draw_cmap("magma");
    /* entry round(255 t): t = 0.5 -> 128 (127.5 rounds up), t = 0.2 -> 51 */
    const float ts[] = {0.0f, 0.2f, 0.5f, 1.0f, -3.0f, 7.0f, NAN, INFINITY};
    const int entry[] = {0, 51, 128, 255, 0, 255, 0, 255};
    for (int k = 0; k < 8; k++) {
        const DrawRgb c = draw_cmap_at(m, ts[k]);
        ck_assert_msg(c.r == cmap_magma[entry[k]][0] && c.g == cmap_magma[entry[k]][1] &&
                          c.b == cmap_magma[entry[k]][2],
                      "t = %g", (double)ts[k]);
    }
    /* luma by Rec. 709: white 255, black 0, pure green 0.7152 * 255 = 182 */
    ck_assert_int_eq(draw_luma(DRAW_WHITE), 255);
    ck_assert_int_eq(draw_luma((DrawRgb){0, 0, 0}), 0);
    ck_assert_int_eq(draw_luma((DrawRgb){0, 255, 0}), 182);
}
END_TEST

/* ---------------------------------------------------------------- PNG files */

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

typedef void (*Fill)(unsigned char *px, int x, int y, uint32_t *seed);

static void noise(unsigned char *px, int x, int y, uint32_t *seed)
{
    (void)x, (void)y;
    uint32_t r = xorshift(seed);
    px[0] = (unsigned char)r, px[1] = (unsigned char)(r >> 8), px[2] = (unsigned char)(r >> 16);
}

/* What heatmaps hold: flat cells, repeated rows, diagonal hatching, a bit of noise. */
static void heatmap_like(unsigned char *px, int x, int y, uint32_t *seed)
{
    uint32_t r = xorshift(seed);
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

/* c made a w x h canvas with pixels set by fill from the generator seeded with seed. */
static void paint(DrawCanvas *c, int w, int h, Fill fill, uint32_t seed)
{
    ck_assert_int_eq(draw_canvas_reset(c, w, h), MHAVIZ_OK);
    for (int y = 0; y < h; y++)
        for (int x = 0; x < w; x++)
            fill(draw_pixel(c, x, y), x, y, &seed);
}

/* Write c to path, decode the file, compare every pixel. */
static void assert_round_trip(const DrawCanvas *c)
{
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(draw_write_png(c, path, err, sizeof err), MHAVIZ_OK);
    int dw, dh, n;
    unsigned char *d = stbi_load(path, &dw, &dh, &n, 3);
    ck_assert_msg(d != NULL, "%dx%d does not decode: %s", c->w, c->h, stbi_failure_reason());
    ck_assert_int_eq(dw, c->w);
    ck_assert_int_eq(dh, c->h);
    ck_assert_int_eq(n, 3);
    for (int y = 0; y < c->h; y++)
        ck_assert_msg(memcmp(d + (size_t)y * c->w * 3, draw_pixel(c, 0, y), (size_t)c->w * 3) == 0,
                      "%dx%d: row %d differs", c->w, c->h, y);
    stbi_image_free(d);
}

/* Pictures of every kind and size, one canvas reused for all of them:
 * nothing of one picture leaks into the next. */
START_TEST(pictures_decode_to_their_pixels)
{
    static const struct {
        int w, h;
        Fill fill;
    } pics[] = {
        {97, 61, noise},   {200, 120, noise}, {640, 480, heatmap_like}, {7, 5, heatmap_like},
        {1, 1, flat},      {2, 1, flat},      {1, 300, flat},           {1000, 3, flat},
        {11000, 3, heatmap_like}, /* rows longer than deflate's 32 KiB window */
    };
    DrawCanvas *c = draw_canvas_new(1, 1);
    for (size_t k = 0; k < sizeof pics / sizeof pics[0]; k++) {
        paint(c, pics[k].w, pics[k].h, pics[k].fill, 12345u + (uint32_t)k);
        assert_round_trip(c);
    }
    draw_canvas_free(c);
}
END_TEST

/* The same pixels give the same bytes: each run, and from a canvas of the
 * same picture made afresh. */
START_TEST(same_pixels_same_bytes)
{
    DrawCanvas *a = draw_canvas_new(1, 1), *b = draw_canvas_new(2000, 2000);
    paint(a, 300, 200, heatmap_like, 5);
    paint(b, 300, 200, heatmap_like, 5);
    char err[MHAVIZ_ERRLEN], other[] = "/tmp/mhaviz-png-b-XXXXXX";
    const int fd = mkstemp(other);
    ck_assert_int_ge(fd, 0);
    close(fd);
    ck_assert_int_eq(draw_write_png(a, path, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(draw_write_png(b, other, err, sizeof err), MHAVIZ_OK);
    FILE *fa = fopen(path, "rb"), *fb = fopen(other, "rb");
    int ca, cb;
    long n = 0;
    do {
        ca = fgetc(fa), cb = fgetc(fb), n++;
        ck_assert_msg(ca == cb, "byte %ld differs", n);
    } while (ca != EOF);
    ck_assert_int_gt(n, 100);
    fclose(fa);
    fclose(fb);
    unlink(other);
    draw_canvas_free(a);
    draw_canvas_free(b);
}
END_TEST

/* A write that fails half way (here: the file size limit, as a full disk
 * would) is an I/O error naming the file, and the half-written file is
 * removed. */
START_TEST(half_written_file_is_removed)
{
    DrawCanvas *c = draw_canvas_new(1, 1);
    paint(c, 200, 120, noise, 99); /* noise: the file is about 72 KB, past the 4 KB limit */
    /* In a child process of its own (the limit must not outlive the write,
     * also when the tests run without forking), which says through a pipe
     * whether draw_write_png answered MHAVIZ_EIO naming the file (not by
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
                       draw_write_png(c, path, err, sizeof err) == MHAVIZ_EIO && strstr(err, path);
        const char verdict = ok ? 'y' : 'n';
        if (write(fds[1], &verdict, 1) != 1)
            _exit(2);
        draw_canvas_free(c);
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
    draw_canvas_free(c);
}
END_TEST

START_TEST(unwritable_path_is_an_io_error)
{
    DrawCanvas *c = draw_canvas_new(1, 1);
    char err[MHAVIZ_ERRLEN] = "";
    ck_assert_int_eq(draw_write_png(c, "/nonexistent-dir/x.png", err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "/nonexistent-dir/x.png") != NULL, "%s", err);
    /* a full disk: /dev/full accepts the open and fails the writes */
    if (access("/dev/full", W_OK) == 0) {
        ck_assert_int_eq(draw_write_png(c, "/dev/full", err, sizeof err), MHAVIZ_EIO);
        ck_assert_msg(strstr(err, "/dev/full") != NULL, "%s", err);
    }
    draw_canvas_free(c);
}
END_TEST

/* A canvas past what the encoder counts ((3 w + 1) h bytes in an int) is
 * refused before any pixel is read or any file made: here one that claims
 * 40000 x 20000 pixels over a single pixel's memory. */
START_TEST(too_big_for_the_encoder_is_refused)
{
    unsigned char one[3] = {0, 0, 0};
    const DrawCanvas c = {40000, 20000, 3 * 40000, one, sizeof one, NULL, NULL};
    char err[MHAVIZ_ERRLEN] = "";
    unlink(path);
    ck_assert_int_eq(draw_write_png(&c, path, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_msg(strstr(err, path) && strstr(err, "40000 x 20000"), "%s", err);
    ck_assert_int_ne(access(path, F_OK), 0);
}
END_TEST

Suite *draw_suite(void)
{
    Suite *s = suite_create("draw");
    TCase *tc = tcase_create("primitives");
    tcase_add_test(tc, a_new_canvas_is_white_and_rects_clip);
    tcase_add_test(tc, a_thick_horizontal_line_covers_exactly_its_band);
    tcase_add_test(tc, a_diagonal_line_is_smooth_and_has_no_direction);
    tcase_add_test(tc, a_line_is_its_definition_at_every_pixel);
    tcase_add_test(tc, lines_off_the_canvas_are_clipped);
    tcase_add_test(tc, text_is_measured_and_drawn_where_anchored);
    tcase_add_test(tc, colour_maps_by_name_and_position);
    suite_add_tcase(s, tc);
    tc = tcase_create("png");
    tcase_add_checked_fixture(tc, make_path, remove_path);
    tcase_add_test(tc, pictures_decode_to_their_pixels);
    tcase_add_test(tc, same_pixels_same_bytes);
    tcase_add_test(tc, half_written_file_is_removed);
    tcase_add_test(tc, unwritable_path_is_an_io_error);
    tcase_add_test(tc, too_big_for_the_encoder_is_refused);
    suite_add_tcase(s, tc);
    return s;
}
