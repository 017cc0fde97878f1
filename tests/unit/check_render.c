/* check_render.c — the heatmaps, checked at the pixel level.
 *
 * Each test draws a small map, decodes the PNG with stb_image and looks at
 * pixels where render_heatmap_layout says the cells are. Expected colours
 * come from the committed tables in assets/colormaps.inc (entry
 * round(255 * (v - lo) / (hi - lo))), never from the renderer's own
 * colour function; the mask colours are the ones pictures/render.c and cells.c document. */
#include "support.h"
#include "pictures/architecture.h"
#include "pictures/labels.h"
#include "pictures/render.h"
#include "core/measures.h"
#include "core/status.h"

#include <check.h>
#include <stb_image.h>

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#include "../assets/colormaps.inc"

/* Masked cells for the viridis map and the score maps (pictures/render.c, cells.c). */
static const unsigned char MASK_BG[3] = {222, 222, 222}, MASK_HATCH[3] = {168, 168, 168};
static const unsigned char DIV_BG[3] = {196, 196, 196}, DIV_HATCH[3] = {140, 140, 140};

typedef struct {
    int w, h;
    unsigned char *px; /* (h, w, 3) */
} Image;

static Image load_png(const char *path)
{
    Image im;
    int n;
    im.px = stbi_load(path, &im.w, &im.h, &n, 3);
    ck_assert_msg(im.px != NULL, "%s does not decode", path);
    return im;
}

static const unsigned char *pix(const Image *im, int x, int y)
{
    ck_assert(x >= 0 && y >= 0 && x < im->w && y < im->h);
    return im->px + ((size_t)y * im->w + x) * 3;
}

static int same(const unsigned char *a, const unsigned char *b)
{
    return a[0] == b[0] && a[1] == b[1] && a[2] == b[2];
}

static void assert_rgb(const unsigned char *got, const unsigned char *want, const char *what)
{
    ck_assert_msg(same(got, want), "%s: got (%d,%d,%d), want (%d,%d,%d)", what, got[0], got[1], got[2],
                  want[0], want[1], want[2]);
}

/* Pixels in the rectangle darker than a label's ink threshold. */
static int ink(const Image *im, int x0, int y0, int x1, int y1)
{
    int n = 0;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < im->h; y++)
        for (int x = x0 < 0 ? 0 : x0; x < x1 && x < im->w; x++) {
            const unsigned char *p = pix(im, x, y);
            n += p[0] + p[1] + p[2] < 3 * 100;
        }
    return n;
}

static char dir[64]; /* this test's scratch folder (each test runs in its own fork) */

static void remove_scratch(void)
{
    if (dir[0]) {
        remove_tree(dir);
        dir[0] = '\0';
    }
}

static char *scratch_png(const char *name)
{
    if (!dir[0]) {
        snprintf(dir, sizeof dir, "/tmp/mhaviz-render-XXXXXX");
        ck_assert_ptr_nonnull(mkdtemp(dir));
    }
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* A renderer with the default options but the colormap (NULL: the
 * default), the annotation setting and the cell size (0: automatic). */
static Renderer *open_with(const char *cmap, int annotate, int cell)
{
    RenderOptions o;
    render_default_options(&o);
    if (cmap)
        o.cmap = cmap;
    o.annotate = annotate;
    o.cell_px = cell;
    Renderer *r = NULL;
    char err[MHAVIZ_ERRLEN];
    ck_assert_msg(render_open(&r, &o, err, sizeof err) == MHAVIZ_OK, "%s", err);
    return r;
}

static Renderer *open_renderer(int annotate, int cell) { return open_with(NULL, annotate, cell); }

/* Centre pixel of cell (i, j). */
static const unsigned char *cell_px(const Image *im, const RenderLayout *l, int i, int j)
{
    return pix(im, l->map_x + j * l->cell + l->cell / 2, l->map_y + i * l->cell + l->cell / 2);
}

static char *TOK4[] = {"The", "cat", "sat", "down"};

/* A 4-token causal map whose visible cells hold 0, 0.25, 0.5, 0.75, 1, ... */
static void map4(float att[16])
{
    const float v[16] = {1.0f, 0, 0, 0,
                         0.25f, 0.75f, 0, 0,
                         0.0f, 0.5f, 0.5f, 0,
                         0.1f, 0.2f, 0.3f, 0.4f};
    memcpy(att, v, sizeof v);
}

START_TEST(cells_have_the_colormap_colour)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    char *png = scratch_png("cells.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "head 0 of 1", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    ck_assert_int_eq(render_heatmap_layout(r, 4, TOK4, "head 0 of 1", NULL, &l), MHAVIZ_OK);
    Image im = load_png(png);
    ck_assert_int_eq(im.w, l.width);
    ck_assert_int_eq(im.h, l.height);
    /* Slide size: one cell per token, map between 480 and 1600 pixels. */
    ck_assert_int_eq(l.block, 1);
    ck_assert_int_ge(4 * l.cell, 480);
    ck_assert_int_le(4 * l.cell, 1600);
    for (int i = 0; i < 4; i++) {
        for (int j = 0; j <= i; j++) {
            /* expected: viridis entry round(255 v), e.g. 0.25 -> 64, 0.5 -> 128 */
            const int k = (int)(att[i * 4 + j] * 255.0f + 0.5f);
            char what[64];
            snprintf(what, sizeof what, "cell (%d,%d) = %.2f", i, j, att[i * 4 + j]);
            assert_rgb(cell_px(&im, &l, i, j), cmap_viridis[k], what);
            /* the whole cell, edge to edge */
            assert_rgb(pix(&im, l.map_x + j * l.cell, l.map_y + i * l.cell), cmap_viridis[k], what);
            assert_rgb(pix(&im, l.map_x + (j + 1) * l.cell - 1, l.map_y + (i + 1) * l.cell - 1), cmap_viridis[k],
                       what);
        }
    }
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

START_TEST(masked_cells_have_the_mask_colour)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    char *png = scratch_png("mask.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
    Image im = load_png(png);
    for (int i = 0; i < 4; i++) {
        for (int j = i + 1; j < 4; j++) {
            int bg = 0, hatch = 0;
            for (int y = 0; y < l.cell; y++)
                for (int x = 0; x < l.cell; x++) {
                    const unsigned char *p = pix(&im, l.map_x + j * l.cell + x, l.map_y + i * l.cell + y);
                    ck_assert_msg(same(p, MASK_BG) || same(p, MASK_HATCH), "masked cell (%d,%d) has (%d,%d,%d)",
                                  i, j, p[0], p[1], p[2]);
                    bg += same(p, MASK_BG);
                    hatch += same(p, MASK_HATCH);
                }
            /* hatching: 2 px lines every 8 px, so a quarter of the pixels */
            ck_assert_int_gt(hatch, l.cell * l.cell / 8);
            ck_assert_int_gt(bg, l.cell * l.cell / 2);
        }
    }
    /* Weight 0 (cell (2,0)) is far from the mask colour. */
    const unsigned char *zero = cell_px(&im, &l, 2, 0);
    ck_assert_int_gt(abs(zero[0] - MASK_BG[0]) + abs(zero[1] - MASK_BG[1]) + abs(zero[2] - MASK_BG[2]), 200);
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

START_TEST(not_causal_has_no_mask)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    for (int k = 0; k < 16; k++)
        att[k] = 0.25f; /* uniform rows: viridis entry round(255 / 4) = 64 */
    char *png = scratch_png("full.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 0, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
    Image im = load_png(png);
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 4; j++)
            assert_rgb(cell_px(&im, &l, i, j), cmap_viridis[64], "uniform cell");
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

START_TEST(labels_title_and_bar_have_ink)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    char *tok[] = {"The", " ", "\n", ""}; /* whitespace-only and empty tokens are shown too */
    char *png = scratch_png("labels.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, tok, 1, "head 0 of 1", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, tok, "head 0 of 1", NULL, &l);
    Image im = load_png(png);
    for (int t = 0; t < 4; t++) {
        /* query label: the strip left of row t */
        const int y0 = l.map_y + t * l.cell, x0 = l.map_x + t * l.cell;
        ck_assert_msg(ink(&im, 0, y0, l.map_x - 2, y0 + l.cell) > 10, "no query label for token %d", t);
        /* key label: the strip under column t */
        ck_assert_msg(ink(&im, x0, l.map_y + 4 * l.cell + 2, x0 + l.cell, im.h) > 10, "no key label for token %d",
                      t);
    }
    ck_assert_msg(ink(&im, 0, 0, im.w, l.map_y) > 50, "no title");
    /* colour bar and its tick labels, right of the map */
    ck_assert_msg(ink(&im, l.map_x + 4 * l.cell + 2, l.map_y, im.w, l.map_y + 4 * l.cell) > 50, "no colour bar");
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

/* Pixels in cell (i, j) unlike the cell's own colour. */
static int marks_in_cell(const Image *im, const RenderLayout *l, int i, int j)
{
    const unsigned char *bg = pix(im, l->map_x + j * l->cell + 1, l->map_y + i * l->cell + 1);
    int n = 0;
    for (int y = 2; y < l->cell - 2; y++)
        for (int x = 2; x < l->cell - 2; x++) {
            const unsigned char *p = pix(im, l->map_x + j * l->cell + x, l->map_y + i * l->cell + y);
            n += abs(p[0] - bg[0]) + abs(p[1] - bg[1]) + abs(p[2] - bg[2]) > 120;
        }
    return n;
}

START_TEST(annotated_cells_show_their_digits)
{
    float att[16];
    map4(att);
    char *png = scratch_png("annot.png"), *png0 = scratch_png("plain.png"), err[MHAVIZ_ERRLEN];
    Renderer *r = open_renderer(-1, 0); /* default: annotate when T <= 16 */
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
    render_close(r);
    r = open_renderer(0, 0);
    ck_assert_int_eq(render_heatmap(r, png0, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    render_close(r);
    Image a = load_png(png), p = load_png(png0);
    /* "0.25" in dark-purple cell (1,0) (light text) and "1.00" in yellow (0,0) (dark text) */
    ck_assert_int_gt(marks_in_cell(&a, &l, 1, 0), 40);
    ck_assert_int_gt(marks_in_cell(&a, &l, 0, 0), 40);
    ck_assert_int_eq(marks_in_cell(&p, &l, 1, 0), 0);
    /* dark text on the bright cell: its marks are darker than the cell */
    const unsigned char *c00 = cell_px(&p, &l, 0, 0);
    ck_assert_int_gt(c00[0] + c00[1] + c00[2], 400);
    ck_assert_int_gt(ink(&a, l.map_x, l.map_y, l.map_x + l.cell, l.map_y + l.cell), 20);
    stbi_image_free(a.px);
    stbi_image_free(p.px);
    free(png);
    free(png0);
}
END_TEST

/* A cell's number never lands on one half, where the report counts a row's
 * half, unless the weight is one half (measures_weight_text): row 1 holds
 * 0.5003 and 0.4997 ("0.501", "0.499"), row 2 one half twice ("0.50"). */
START_TEST(cell_numbers_keep_their_side_of_half)
{
    const float att[16] = {1.0f, 0, 0, 0,
                           0.5003f, 0.4997f, 0, 0,
                           0.0f, 0.5f, 0.5f, 0,
                           0.1f, 0.2f, 0.3f, 0.4f};
    static const char *const want[] = {"1.00", "0.501", "0.499", "0.50", "0.50", "0.10", "0.20", "0.30", "0.40"};
    char *png = scratch_png("half.png"), err[MHAVIZ_ERRLEN];
    Renderer *r = open_renderer(1, 0);
    RenderLayout l;
    ck_assert_int_eq(render_heatmap_layout(r, 4, TOK4, "t", NULL, &l), MHAVIZ_OK);
    DrawTextLog log = {0};
    draw_text_log(&log);
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    draw_text_log(NULL);
    render_close(r);
    /* the texts drawn inside the map, in drawing order (row by row) */
    int n = 0;
    for (int a = 0; a < log.n; a++) {
        const DrawTextEntry *e = &log.e[a];
        if (e->x0 < l.map_x || e->x1 > l.map_x + 4 * l.cell || e->y0 < l.map_y || e->y1 > l.map_y + 4 * l.cell)
            continue;
        ck_assert_int_lt(n, 9);
        ck_assert_str_eq(e->text, want[n]);
        n++;
    }
    ck_assert_int_eq(n, 9);
    free(log.e);
    free(png);
}
END_TEST

/* Scores less their row's maximum, by hand (causal, T = 4):
 *   row 0 (7)            -> (0)
 *   row 1 (3, 1)         -> (0, -2)
 *   row 2 (1, 5, -1)     -> (-4, 0, -6)
 *   row 3 (10, 10, 10, 10) -> zeros; masked cells 0.
 * The largest distance is 6, a round number: the scale is [-6, 0] on the
 * blue half of rdbu, entries 0..127: v -> rdbu[round(127 (v + 6) / 6)]:
 * -6 -> 0, -4 -> 42 (42.33), -2 -> 85 (84.67), 0 -> 127. */
START_TEST(scores_map_rows_less_their_maximum)
{
    const float sc[16] = {7, 99, 99, 99,
                          3, 1, 99, 99,
                          1, 5, -1, 99,
                          10, 10, 10, 10};
    const float want[16] = {0, 0, 0, 0,
                            0, -2, 0, 0,
                            -4, 0, -6, 0,
                            0, 0, 0, 0};
    float out[16];
    render_scores_less_row_max(out, sc, 4, 1);
    for (int k = 0; k < 16; k++)
        ck_assert_float_eq(out[k], want[k]);
    /* not causal: row 0 sees 99 too */
    render_scores_less_row_max(out, sc, 4, 0);
    ck_assert_float_eq(out[0], 7.0f - 99.0f);
    ck_assert_float_eq(out[5], 1.0f - 99.0f);

    Renderer *r = open_renderer(0, 0);
    char *png = scratch_png("scores.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_scores(r, png, sc, 4, TOK4, 1, "scores", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "scores", NULL, &l);
    Image im = load_png(png);
    assert_rgb(cell_px(&im, &l, 0, 0), cmap_rdbu[127], "row 0's winner");
    assert_rgb(cell_px(&im, &l, 1, 0), cmap_rdbu[127], "row 1's winner");
    assert_rgb(cell_px(&im, &l, 1, 1), cmap_rdbu[85], "-2");
    assert_rgb(cell_px(&im, &l, 2, 0), cmap_rdbu[42], "-4");
    assert_rgb(cell_px(&im, &l, 2, 2), cmap_rdbu[0], "-6");
    assert_rgb(cell_px(&im, &l, 3, 2), cmap_rdbu[127], "a tie: every cell wins");
    ck_assert_int_ge(cmap_rdbu[127][0], 240); /* the winner is (near) white: the lightest cell */
    const unsigned char *m = cell_px(&im, &l, 0, 3);
    ck_assert(same(m, DIV_BG) || same(m, DIV_HATCH));
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

/* A weight below 0.005 would print as "0.00": nothing is printed; 0.006
 * prints "0.01". */
START_TEST(tiny_weights_print_nothing)
{
    const float att[16] = {1.0f, 0, 0, 0,
                           0.004f, 0.996f, 0, 0,
                           0.006f, 0.5f, 0.494f, 0,
                           0.0f, 0.2f, 0.3f, 0.5f};
    char *png = scratch_png("tiny.png"), err[MHAVIZ_ERRLEN];
    Renderer *r = open_renderer(1, 0);
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
    render_close(r);
    Image im = load_png(png);
    ck_assert_int_eq(marks_in_cell(&im, &l, 1, 0), 0);
    ck_assert_int_eq(marks_in_cell(&im, &l, 3, 0), 0);
    ck_assert_int_gt(marks_in_cell(&im, &l, 2, 0), 40);
    ck_assert_int_gt(marks_in_cell(&im, &l, 3, 1), 40);
    stbi_image_free(im.px);
    free(png);
}
END_TEST

START_TEST(large_T_is_averaged_in_blocks)
{
    const int T = 2048;
    Renderer *r = open_renderer(-1, 0);
    float *att = calloc((size_t)T * T, sizeof *att);
    char **tok = malloc(T * sizeof *tok);
    char (*names)[16] = malloc((size_t)T * 16);
    for (int t = 0; t < T; t++) {
        snprintf(names[t], 16, "t%d", t);
        tok[t] = names[t];
    }
    /* causal rows, weight on the row's own token only: 1 on the diagonal */
    for (int i = 0; i < T; i++)
        att[(size_t)i * T + i] = 1.0f;
    char *png = scratch_png("big.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, T, tok, 1, "head 0 of 1", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, T, tok, "head 0 of 1", NULL, &l);
    /* 2048 tokens in a map of at most 800 px: blocks of ceil(2048 / 800) = 3 */
    ck_assert_int_eq(l.block, 3);
    ck_assert_int_gt(l.label_step, 1);
    ck_assert_int_le((T + 2) / 3 * l.cell, 800);
    ck_assert_int_le(l.height, 1080);
    Image im = load_png(png);
    ck_assert_int_eq(im.w, l.width);
    ck_assert_int_eq(im.h, l.height);
    /* diagonal block (b, b) sees its 6 cells on and below the diagonal, 3 of
     * them 1: mean 1/2 -> viridis entry round(255 / 2) = 128; block below it: 0 */
    const int k = 128;
    for (int b = 0; b < T / 3; b += 97) {
        assert_rgb(pix(&im, l.map_x + b * l.cell, l.map_y + b * l.cell), cmap_viridis[k], "diagonal block");
        if (b + 1 < T / 3)
            assert_rgb(pix(&im, l.map_x + b * l.cell, l.map_y + (b + 1) * l.cell), cmap_viridis[0], "zero block");
        if (b + 1 < T / 3) {
            const unsigned char *m = pix(&im, l.map_x + (b + 1) * l.cell, l.map_y + b * l.cell);
            ck_assert(same(m, MASK_BG) || same(m, MASK_HATCH));
        }
    }
    stbi_image_free(im.px);
    render_close(r);
    free(att);
    free(tok);
    free(names);
    free(png);
}
END_TEST

START_TEST(overview_has_the_asked_size)
{
    RenderOptions o;
    render_default_options(&o);
    o.overview_w = 960;
    o.overview_h = 540;
    Renderer *r = NULL;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_OK);
    float att[16];
    map4(att);
    const float *maps[3] = {att, att, att};
    char *titles[3] = {"head 0", "head 1", "single wide head"};
    char *png = scratch_png("overview.png");
    ck_assert_int_eq(render_overview(r, png, maps, 3, 4, TOK4, 1, "2 heads", titles, err, sizeof err), MHAVIZ_OK);
    Image im = load_png(png);
    ck_assert_int_eq(im.w, 960);
    ck_assert_int_eq(im.h, 540);
    ck_assert_int_gt(ink(&im, 0, 0, im.w, 40), 50); /* the title */
    /* the map colours appear: viridis(1.0) from cell (0,0) of each panel */
    int yellow = 0;
    for (int y = 0; y < im.h; y++)
        for (int x = 0; x < im.w; x++)
            yellow += same(pix(&im, x, y), cmap_viridis[255]);
    ck_assert_int_gt(yellow, 3 * 100);
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

static Renderer *open_cmap(const char *cmap, int annotate) { return open_with(cmap, annotate, 0); }

/* Top-left pixel of panel p's map in an overview of n maps (render.h). */
static void ov_origin(const RenderOverviewLayout *l, int n, int p, int *x, int *y)
{
    if (l->apart && p == n - 1) {
        *x = l->wide_x, *y = l->wide_y;
    } else {
        *x = l->map_x + (p % l->cols) * l->dx;
        *y = l->map_y + (p / l->cols) * l->dy;
    }
}

/* Dark: what the frame (60, 60, 60) and the text ink are, unlike any page or mask colour. */
static int dark(const unsigned char *p) { return p[0] + p[1] + p[2] < 3 * 100; }

/* The pixels just outside the map region (x, y, side) are dark all round. */
static void assert_framed(const Image *im, int x, int y, int side, const char *what)
{
    for (int k = 0; k < side; k += 3) {
        ck_assert_msg(dark(pix(im, x - 1, y + k)), "%s: no frame left of row pixel %d", what, k);
        ck_assert_msg(dark(pix(im, x + side, y + k)), "%s: no frame right of row pixel %d", what, k);
        ck_assert_msg(dark(pix(im, x + k, y - 1)), "%s: no frame above column pixel %d", what, k);
        ck_assert_msg(dark(pix(im, x + k, y + side)), "%s: no frame below column pixel %d", what, k);
    }
}

/* Every colormap: the map has a dark frame, and weight 1 (the table's last
 * entry) is drawn in a colour unlike the white page. gray runs from white
 * (0: no ink on paper) to black (1) (assets/make_colormaps.py): a zero
 * weight is the page's white, and the masked cells are not. */
START_TEST(maps_are_framed_and_their_top_is_not_white)
{
    static const struct {
        const char *name;
        const unsigned char (*table)[3];
    } maps[] = {{"viridis", cmap_viridis}, {"magma", cmap_magma}, {"cividis", cmap_cividis}, {"gray", cmap_gray}};
    float att[16];
    map4(att); /* cell (0, 0) = 1 */
    for (size_t k = 0; k < sizeof maps / sizeof maps[0]; k++) {
        Renderer *r = open_cmap(maps[k].name, 0);
        char *png = scratch_png("framed.png"), err[MHAVIZ_ERRLEN];
        ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
        RenderLayout l;
        render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
        Image im = load_png(png);
        ck_assert_int_ge(l.frame, 1);
        assert_framed(&im, l.map_x, l.map_y, 4 * l.cell, maps[k].name);
        /* the frame is outside: the corner cells keep their colours to the edge */
        assert_rgb(pix(&im, l.map_x, l.map_y), maps[k].table[255], maps[k].name);
        const unsigned char *top = cell_px(&im, &l, 0, 0);
        ck_assert_msg(abs(top[0] - 255) + abs(top[1] - 255) + abs(top[2] - 255) >= 60,
                      "%s: weight 1 is (%d,%d,%d), too close to the white page", maps[k].name, top[0], top[1], top[2]);
        stbi_image_free(im.px);
        render_close(r);
        free(png);
    }
    ck_assert_int_eq(cmap_gray[255][0], 0);
    ck_assert_int_eq(cmap_gray[0][0], 255);
    Renderer *r = open_cmap("gray", 0);
    char *png = scratch_png("gray.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, TOK4, "t", NULL, &l);
    Image im = load_png(png);
    static const unsigned char white[3] = {255, 255, 255};
    assert_rgb(cell_px(&im, &l, 2, 0), white, "gray: weight 0");
    ck_assert(!same(cell_px(&im, &l, 0, 3), white)); /* masked */
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

/* Rows of the cell (i, j) holding marks unlike the cell's colour: the
 * height of the printed number. */
static int marks_height(const Image *im, const RenderLayout *l, int i, int j)
{
    const unsigned char *bg = pix(im, l->map_x + j * l->cell + 1, l->map_y + i * l->cell + 1);
    int top = -1, bottom = -1;
    for (int y = 0; y < l->cell; y++)
        for (int x = 0; x < l->cell; x++) {
            const unsigned char *p = pix(im, l->map_x + j * l->cell + x, l->map_y + i * l->cell + y);
            if (abs(p[0] - bg[0]) + abs(p[1] - bg[1]) + abs(p[2] - bg[2]) > 120) {
                if (top < 0)
                    top = y;
                bottom = y;
            }
        }
    return top < 0 ? 0 : bottom - top + 1;
}

/* An 11-token map (the lesson's size): cells of 72 px (floor(800 / 11)), the numbers as wide as 84 % of a cell allows: "1.00" is 1.91
 * line heights wide in DejaVu Sans (digits 0.636 em, period 0.318 em, line
 * 1.164 em), so a 32 px line, digits 0.63 of it: about 20 px, more than a
 * quarter of the cell. Asserted: at least 18 px and 22 % of the cell (the
 * old 10 px fails). The figure is about 1150 x 1030 px, shown at its own
 * size on a 1920 x 1080 slide: 18 px is what 24 px was in the earlier
 * 1500 px figures once scaled to the slide's height. */
START_TEST(cell_numbers_are_large)
{
    enum { T = 11 };
    char buf[T][8], *tok[T];
    float att[T * T];
    for (int i = 0; i < T; i++) {
        snprintf(buf[i], sizeof buf[i], "w%d", i);
        tok[i] = buf[i];
        for (int j = 0; j < T; j++)
            att[i * T + j] = j <= i ? 1.0f / (float)(i + 1) : 0.0f; /* uniform causal rows */
    }
    Renderer *r = open_renderer(-1, 0);
    char *png = scratch_png("numbers.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, T, tok, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, T, tok, "t", NULL, &l);
    Image im = load_png(png);
    ck_assert_int_eq(l.cell, 72);
    /* "1.00" on yellow (dark text), "0.50" and "0.33" on purple-blue (light text) */
    const int cells[3][2] = {{0, 0}, {1, 0}, {2, 1}};
    for (int k = 0; k < 3; k++) {
        const int h = marks_height(&im, &l, cells[k][0], cells[k][1]);
        ck_assert_msg(h >= 18 && h >= 22 * l.cell / 100, "cell (%d,%d): number %d px high in a %d px cell",
                      cells[k][0], cells[k][1], h, l.cell);
        ck_assert_int_le(h, 45 * l.cell / 100);
    }
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

/* Map sizes for slides: whole-pixel cells, floor(800 / T) px, so the map
 * is at most 800 px (T = 12: 66 px cells, a 792 px map; T = 401..800: one
 * pixel a token); past T = 800 blocks are averaged into at most 800 px.
 * Every figure fits a 1920 x 1080 slide. */
START_TEST(maps_are_sized_for_slides)
{
    static const int Ts[] = {1, 2, 4, 11, 16, 40, 41, 60, 64, 100, 320, 333, 400, 401, 512, 799, 800,
                             801, 1024, 1600, 1601, 2048};
    Renderer *r = open_renderer(-1, 0);
    char (*names)[16] = malloc(2048 * 16);
    char **tok = malloc(2048 * sizeof *tok);
    for (int t = 0; t < 2048; t++) {
        snprintf(names[t], 16, "t%d", t);
        tok[t] = names[t];
    }
    for (size_t k = 0; k < sizeof Ts / sizeof Ts[0]; k++) {
        const int T = Ts[k];
        RenderLayout l;
        ck_assert_int_eq(render_heatmap_layout(r, T, tok, "t", NULL, &l), MHAVIZ_OK);
        const int map = (T + l.block - 1) / l.block * l.cell;
        if (T <= 800)
            ck_assert_msg(l.block == 1 && l.cell == 800 / T, "T = %d: cell %d, block %d", T, l.cell, l.block);
        else
            ck_assert_msg(l.block > 1 && l.cell == 1 && map <= 800 && map >= 400, "T = %d: map %d px", T, map);
        ck_assert_msg(l.width <= 1920 && l.height <= 1080, "T = %d: %d x %d px", T, l.width, l.height);
    }
    free(names);
    free(tok);
    render_close(r);
}
END_TEST

/* Where label thinning starts (labels.h, docs/pictures.md): every token
 * has a label up to T = 48, at LABELS_MIN_PX or more (on two levels if
 * need be); past 48, one level at LABELS_MIN_PX, every token while a cell
 * has 1.1 lines (15.4 px: floor(800 / 50) = 16 px cells), thinned from
 * T = 51 (15 px cells: every 2nd, and the first and the last).
 * So also with a two-line subtitle and 30-character tokens (cut to fit),
 * and the figure stays within a 1920 x 1080 slide. */
START_TEST(label_thinning_starts_after_48_tokens)
{
    enum { MAX_T = 51 };
    char words[MAX_T][40], longs[MAX_T][40], *w[MAX_T], *lg[MAX_T];
    for (int t = 0; t < MAX_T; t++) {
        snprintf(words[t], sizeof words[t], "word%d", t);
        snprintf(longs[t], sizeof longs[t], "a_very_long_token_number_%05d", t);
        w[t] = words[t];
        lg[t] = longs[t];
    }
    const char *sub = "lesson 1: four heads built by hand, one pattern each \xc2\xb7 "
                      "MHA: each head has its own keys and values \xc2\xb7 K/V mean-pooled from 4 heads, not retrained";
    Renderer *r = open_renderer(-1, 0);
    for (int T = 1; T <= MAX_T; T++) {
        RenderLayout a, b;
        ck_assert_int_eq(render_heatmap_layout(r, T, w, "head 0 of 4 \xc2\xb7 self \xc2\xb7 0.50 bits", NULL, &a),
                         MHAVIZ_OK);
        ck_assert_int_eq(render_heatmap_layout(r, T, lg, "head 0 of 4 \xc2\xb7 self \xc2\xb7 0.50 bits", sub, &b),
                         MHAVIZ_OK);
        ck_assert_int_eq(a.labelled, (T <= 50 ? T : 26)); /* 51: 0, 2, ..., 48 and 50 */
        if (T <= 48)
            ck_assert_int_eq(b.labelled, T);
        else /* past 48: one level, at the smallest size */
            ck_assert(b.label_levels == 1 && b.label_px == LABELS_MIN_PX);
        ck_assert_float_ge(a.label_px, LABELS_MIN_PX);
        ck_assert_float_ge(b.label_px, LABELS_MIN_PX);
        ck_assert_msg(b.width <= 1920 && b.height <= 1080, "T = %d: %d x %d px", T, b.width, b.height);
    }
    render_close(r);
}
END_TEST

/* Ink rows in the query-label strip between y0 and y1: the label's height. */
static int ink_height(const Image *im, int x0, int x1, int y0, int y1)
{
    int top = -1, bottom = -1;
    for (int y = y0 < 0 ? 0 : y0; y < y1 && y < im->h; y++)
        for (int x = x0; x < x1; x++)
            if (dark(pix(im, x, y))) {
                if (top < 0)
                    top = y;
                bottom = y;
                break;
            }
    return top < 0 ? 0 : bottom - top + 1;
}

/* 60 tokens: labels stay readable (a line of at least LABELS_MIN_PX = 14
 * px, capitals 0.63 of it: at least 8 px) by labelling every 2nd token (13
 * px per token: a 14 px label line needs 15.4), and the last; the note
 * says so. Tokens "T0".."T59": a capital T and digits. */
START_TEST(many_tokens_get_thinned_readable_labels)
{
    enum { T = 60 };
    char buf[T][8], *tok[T];
    float *att = calloc(T * T, sizeof *att);
    for (int i = 0; i < T; i++) {
        snprintf(buf[i], sizeof buf[i], "T%d", i);
        tok[i] = buf[i];
        att[i * T] = 1.0f;
    }
    Renderer *r = open_renderer(-1, 0);
    char *png = scratch_png("sixty.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, T, tok, 1, "head 0 of 1", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, T, tok, "head 0 of 1", NULL, &l);
    Image im = load_png(png);
    ck_assert_int_eq(l.cell, 13);
    ck_assert_int_eq(l.label_step, 2);
    /* token 0's query label: one line centred on row 0, at least 14 px of capitals and digits */
    const int h = ink_height(&im, 0, l.map_x - l.frame - 2, l.map_y - l.cell, l.map_y + l.cell + l.cell / 2);
    ck_assert_msg(h >= 8, "label of token 0 is %d px high", h);
    /* token 1 (odd) has no label: nothing beside the middle of its row, away from label 0's line */
    const int y1 = l.map_y + l.cell + l.cell / 2;
    ck_assert_int_eq(ink(&im, l.map_x - 80, y1 + 4, l.map_x - l.frame - 2, y1 + 5), 0);
    /* the last token (59, odd) is labelled, and its key label too */
    const int yl = l.map_y + (T - 1) * l.cell;
    ck_assert_msg(ink(&im, 0, yl, l.map_x - l.frame - 2, yl + l.cell) > 10, "no label for the last token");
    ck_assert_msg(ink(&im, l.map_x + (T - 1) * l.cell, l.map_y + T * l.cell + l.frame + 2, l.map_x + T * l.cell,
                      im.h) > 10, "no key label for the last token");
    /* the subtitle line between title and map */
    ck_assert_int_gt(ink(&im, l.map_x, l.map_y - 45, l.map_x + T * l.cell, l.map_y - 8), 50);
    stbi_image_free(im.px);
    render_close(r);
    free(att);
    free(png);
}
END_TEST

/* The overview of 5 maps of 11 tokens on 1920x1080: the 4 heads in a 2x2
 * grid (the one with the biggest maps), the wide head apart on the right
 * behind a rule, every map framed and inside the slide, the panels not
 * overlapping, labels at least H / 50 px, the "query" and "key" captions
 * drawn, the wide head's own labels too. */
START_TEST(overview_uses_the_slide)
{
    static const struct {
        int w, h, min_side;
    } sizes[] = {{1920, 1080, 340}, {1280, 720, 220}};
    enum { T = 11, N = 5 };
    char buf[T][12], *tok[T];
    float att[T * T];
    for (int i = 0; i < T; i++) {
        snprintf(buf[i], sizeof buf[i], "word%d", i);
        tok[i] = buf[i];
        for (int j = 0; j < T; j++)
            att[i * T + j] = j == i ? 1.0f : 0.0f;
    }
    const float *maps[N] = {att, att, att, att, att};
    char *titles[N] = {"head 0", "head 1", "head 2", "head 3", "single wide head"};
    for (size_t k = 0; k < sizeof sizes / sizeof sizes[0]; k++) {
        RenderOptions o;
        render_default_options(&o);
        o.overview_w = sizes[k].w;
        o.overview_h = sizes[k].h;
        Renderer *r = NULL;
        char err[MHAVIZ_ERRLEN];
        ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_OK);
        char *png = scratch_png("ov.png");
        ck_assert_int_eq(render_overview(r, png, maps, N, T, tok, 1, "5 maps", titles, err, sizeof err), MHAVIZ_OK);
        RenderOverviewLayout l;
        ck_assert_int_eq(render_overview_layout(r, N, T, tok, 1, NULL, &l), MHAVIZ_OK);
        Image im = load_png(png);
        ck_assert_int_eq(im.w, sizes[k].w);
        ck_assert_int_eq(im.h, sizes[k].h);
        ck_assert_int_eq(l.cols, 2);
        ck_assert_int_eq(l.rows, 2);
        ck_assert_int_eq(l.apart, 1);
        ck_assert_msg(l.side >= sizes[k].min_side, "%dx%d: maps of %d px", im.w, im.h, l.side);
        ck_assert_int_eq(l.side, T * l.cell);
        ck_assert_int_ge(l.dx, l.side);
        ck_assert_int_gt(l.dy, l.side);
        ck_assert_int_eq(l.label_step, 1);
        ck_assert_msg(l.label_px >= (float)im.h / 50.0f, "labels at %.1f px", (double)l.label_px);
        for (int p = 0; p < N; p++) {
            int x, y;
            ov_origin(&l, N, p, &x, &y);
            ck_assert(x - l.frame >= 0 && y - l.frame >= 0 && x + l.side + l.frame <= im.w &&
                      y + l.side + l.frame <= im.h);
            assert_framed(&im, x, y, l.side, titles[p]);
            assert_rgb(pix(&im, x + l.cell / 2, y + l.cell / 2), cmap_viridis[255], "cell (0, 0)");
        }
        /* "query" on each row's title line, left of the first map; "key" left of the bottom row's key labels */
        for (int row = 0; row < l.rows; row++) {
            const int y = l.map_y + row * l.dy;
            ck_assert_msg(ink(&im, 0, y - (int)(1.6f * l.label_px), l.map_x - l.frame - 2, y - l.frame - 1) > 30,
                          "no query caption for row %d", row);
        }
        const int yb = l.map_y + (l.rows - 1) * l.dy + l.side + l.frame + 2;
        ck_assert_msg(ink(&im, 0, yb, l.map_x - l.cell, yb + (int)(1.6f * l.label_px)) > 30, "no key caption");
        /* the wide head: right of the grid with room between, a rule in that
         * room, its own query labels and key labels */
        const int grid_right = l.map_x + (l.cols - 1) * l.dx + l.side;
        ck_assert_int_gt(l.wide_x - grid_right, 2 * l.dx - 2 * l.side);
        int rule = 0;
        for (int x = grid_right + l.frame + 2; x < l.wide_x - l.side / 4 && !rule; x++)
            rule = dark(pix(&im, x, l.map_y + l.side / 2)) && dark(pix(&im, x, l.map_y + l.dy + l.side / 2));
        ck_assert_msg(rule, "no rule between the heads and the wide head");
        ck_assert_msg(ink(&im, l.wide_x - l.side / 3, l.wide_y, l.wide_x - l.frame - 2, l.wide_y + l.side) > 30,
                      "no query labels for the wide head");
        ck_assert_msg(ink(&im, l.wide_x, l.wide_y + l.side + l.frame + 2, l.wide_x + l.side,
                          l.wide_y + l.side + l.side / 3) > 30, "no key labels for the wide head");
        stbi_image_free(im.px);
        render_close(r);
        free(png);
    }
}
END_TEST

/* An overview whose panels are narrower than T: the tokens are shared out
 * evenly over the panel's pixels (blocks of 1 or 2 tokens a side for
 * T = 300), so the maps fill their panels instead of shrinking to T / 2 =
 * 150 px. Every visible cell is 0.5, so every visible block is too
 * (viridis entry round(255 / 2) = 128); a block right of the diagonal
 * holds only keys after all its queries: masked. */
START_TEST(overview_panels_are_filled_past_one_pixel_per_token)
{
    enum { T = 300 };
    RenderOptions o;
    render_default_options(&o);
    o.overview_w = 960;
    o.overview_h = 540;
    Renderer *r = NULL;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_OK);
    float *att = calloc((size_t)T * T, sizeof *att);
    char (*names)[8] = malloc((size_t)T * 8);
    char **tok = malloc(T * sizeof *tok);
    for (int i = 0; i < T; i++) {
        snprintf(names[i], 8, "t%d", i);
        tok[i] = names[i];
        for (int j = 0; j <= i; j++)
            att[(size_t)i * T + j] = 0.5f;
    }
    const float *maps[6] = {att, att, att, att, att, att};
    char *titles[6] = {"a", "b", "c", "d", "e", "f"};
    char *png = scratch_png("even.png");
    ck_assert_int_eq(render_overview(r, png, maps, 6, T, tok, 1, "t", titles, err, sizeof err), MHAVIZ_OK);
    RenderOverviewLayout l;
    render_overview_layout(r, 6, T, tok, 1, NULL, &l);
    Image im = load_png(png);
    ck_assert_int_lt(l.side, T);
    ck_assert_int_gt(l.side, T / 2);
    ck_assert_int_eq(l.block, 2);
    for (int p = 0; p < 6; p++) {
        int x, y;
        ov_origin(&l, 6, p, &x, &y);
        assert_framed(&im, x, y, l.side, titles[p]);
        for (int b = 0; b < l.side; b += 7) {
            assert_rgb(pix(&im, x + b, y + b), cmap_viridis[128], "diagonal block");
            assert_rgb(pix(&im, x, y + b), cmap_viridis[128], "first column");
            if (b + 1 < l.side) {
                const unsigned char *m = pix(&im, x + b + 1, y + b);
                ck_assert(same(m, MASK_BG) || same(m, MASK_HATCH));
            }
        }
    }
    stbi_image_free(im.px);
    render_close(r);
    free(att);
    free(names);
    free(tok);
    free(png);
}
END_TEST

/* sharpness.png for two heads and the wide head, T = 4, causal, on the
 * default 1920 x 1080 slide. Each row's effective number of keys, 2^H in
 * bits (measures.h's entropy):
 *   head 0, all on one key:          1, 1, 1, 1
 *   head 1, spread evenly:           1, 2, 3, 4
 *   wide: (1), (.5 .5), (1 0 0), (.5 .25 .25 0):  1, 2, 1, 2^1.5 = 2.83
 * The axis runs from 1 to 4 keys; heads with one value lie side by side,
 * head 0 half a gap above its value, head 1 half a gap below. Colours
 * (draw_colour): head 0 blue (0, 114, 178), head 1 orange (230, 159, 0),
 * the wide head ink (25, 25, 25) and bold. */
/* sharpness.png's rows (n, T) of maps (n) of (T, T): each map's rows'
 * normalised entropy, as the layer's summary measures them (caller frees). */
static double *sharpness_rows(const float *const *maps, int n, int T)
{
    double *rows = malloc((size_t)n * T * sizeof *rows);
    ck_assert_ptr_nonnull(rows);
    for (int p = 0; p < n; p++)
        measures_row_entropy_norm(maps[p], T, 1, rows + (size_t)p * T);
    return rows;
}

START_TEST(sharpness_lines_per_head)
{
    enum { T = 4 };
    const float one[T * T] = {1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0, 1, 0, 0, 0};
    const float even[T * T] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 1.0f / 3, 1.0f / 3, 1.0f / 3, 0,
                               0.25f, 0.25f, 0.25f, 0.25f};
    const float wide[T * T] = {1, 0, 0, 0, 0.5f, 0.5f, 0, 0, 1, 0, 0, 0, 0.5f, 0.25f, 0.25f, 0};
    const float *maps[3] = {one, even, wide};
    double *rows = sharpness_rows(maps, 3, T);
    char *legend[3] = {"head 0 \xc2\xb7 first-token", "head 1 \xc2\xb7 diffuse", "wide head \xc2\xb7 mixed"};
    Renderer *r = open_renderer(-1, 0);
    char *png = scratch_png("sharpness.png"), err[MHAVIZ_ERRLEN];
    const RenderJob job = {.draw = render_draw_sharpness, .path = png, .title = "sharpness", .rows = rows,
                           .n_maps = 3, .panel_titles = legend, .subtitle = "lesson"};
    ck_assert_int_eq(render_jobs(r, &job, 1, T, TOK4, 1, err, sizeof err), MHAVIZ_OK);
    RenderSharpnessLayout l;
    ck_assert_int_eq(render_sharpness_layout(r, rows, 3, T, TOK4, 1, legend, "lesson", &l), MHAVIZ_OK);
    Image im = load_png(png);
    ck_assert_int_eq(im.w, 1920);
    ck_assert_int_eq(im.h, 1080);
    ck_assert_int_eq(l.keys_max, 4);
    static const unsigned char blue[3] = {0, 114, 178}, orange[3] = {230, 159, 0}, ink3[3] = {25, 25, 25};
    const int bottom = l.plot_y + l.plot_h;
    const float span = (float)(l.plot_h - l.lift) / 3.0f; /* pixels per key */
    int x[T];
    for (int i = 0; i < T; i++)
        x[i] = l.plot_x + (int)(((float)i + 0.5f) * l.pitch);
#define Y_OF(v) ((float)l.plot_y + (4.0f - (v)) * span)
    /* one key lies above the x axis, not on it */
    ck_assert_int_ge(l.lift, 8);
    /* head 0 at 1 key (half a gap up), head 1 at 4 (half a gap down) */
    assert_rgb(pix(&im, x[2], (int)lroundf(Y_OF(1.0f) - 0.5f * l.head_gap)), blue, "head 0 at token 2");
    assert_rgb(pix(&im, x[3], (int)lroundf(Y_OF(4.0f) + 0.5f * l.head_gap)), orange, "head 1 at token 3");
    /* the wide head at 2.83 for token 3, in ink */
    assert_rgb(pix(&im, x[3], (int)lroundf(Y_OF(2.8284f))), ink3, "the wide head at token 3");
    /* bold: halfway from token 1 (2) to token 2 (1) its line is at 1.5, and
     * at least wide_px thick there; the heads' lines are thinner */
    ck_assert_float_gt(l.wide_px, 2.0f * l.head_px);
    const int xm = (x[1] + x[2]) / 2, ym = (int)lroundf(Y_OF(1.5f));
    int run = 0;
    for (int y = ym - 40; y < ym + 40 && y < bottom; y++)
        run += dark(pix(&im, xm, y));
    ck_assert_int_ge(run, (int)l.wide_px);
#undef Y_OF
    ck_assert_int_eq(l.label_step, 1);
    ck_assert_int_eq(l.labelled, T);
    stbi_image_free(im.px);
    render_close(r);
    free(png), free(rows);
}
END_TEST

/* T = 1: no row has a choice; the picture says so beside its one point. */
START_TEST(sharpness_without_values)
{
    const float one[1] = {1};
    const float *maps[2] = {one, one};
    double *rows = sharpness_rows(maps, 2, 1);
    char *tok[1] = {"alone"};
    Renderer *r = open_renderer(-1, 0);
    char *png = scratch_png("sharp1.png"), err[MHAVIZ_ERRLEN];
    const RenderJob job = {.draw = render_draw_sharpness, .path = png, .title = "t", .rows = rows, .n_maps = 2};
    ck_assert_int_eq(render_jobs(r, &job, 1, 1, tok, 1, err, sizeof err), MHAVIZ_OK);
    RenderSharpnessLayout l;
    render_sharpness_layout(r, rows, 2, 1, tok, 1, NULL, NULL, &l);
    Image im = load_png(png);
    /* the sentence in the middle of the plot */
    ck_assert_int_gt(ink(&im, l.plot_x, l.plot_y + l.plot_h / 2 - 20, l.plot_x + l.plot_w, l.plot_y + l.plot_h / 2 + 20),
                     200);
    stbi_image_free(im.px);
    render_close(r);
    free(png), free(rows);
}
END_TEST

static void assert_same_file(const char *a, const char *b)
{
    ck_assert_msg(files_same(a, b), "%s and %s differ", a, b);
}

/* Draw job alone (on a fresh canvas), then after an overview on the same
 * thread (a bigger canvas left behind, other glyphs cached), into two
 * files named after name, and check they are the same file. */
static void assert_same_after_an_overview(Renderer *r, RenderJob job, const char *name)
{
    float att[16];
    map4(att);
    const float *maps[2] = {att, att};
    char *titles[2] = {"a", "b"}, file[64];
    snprintf(file, sizeof file, "%s_first.png", name);
    char *first = scratch_png(file), *ov = scratch_png("ov.png");
    snprintf(file, sizeof file, "%s_again.png", name);
    char *again = scratch_png(file);
    char err[MHAVIZ_ERRLEN];
#ifdef _OPENMP
    omp_set_num_threads(1);
#endif
    job.path = first;
    ck_assert_int_eq(render_jobs(r, &job, 1, 4, TOK4, 1, err, sizeof err), MHAVIZ_OK);
    job.path = again;
    RenderJob after[2] = {
        {.draw = render_draw_overview, .path = ov, .title = "o", .maps = maps, .n_maps = 2, .panel_titles = titles},
        job,
    };
    ck_assert_int_eq(render_jobs(r, after, 2, 4, TOK4, 1, err, sizeof err), MHAVIZ_OK);
    assert_same_file(first, again);
    free(first), free(ov), free(again);
}

/* At T = 1 the causal mask hides no cell: the heatmap and the overview
 * show no "masked" swatch under the colour bar, so each is the same file
 * causal or not (the one cell is visible either way). */
START_TEST(one_token_shows_no_masked_swatch)
{
    Renderer *r = open_renderer(0, 0);
    const float att[1] = {1.0f};
    const float *maps[2] = {att, att};
    char *tok[1] = {"hello"}, *titles[2] = {"head 0", "wide head"}, err[MHAVIZ_ERRLEN];
    char *png[2] = {scratch_png("one_causal.png"), scratch_png("one_full.png")};
    char *ov[2] = {scratch_png("one_ov_causal.png"), scratch_png("one_ov_full.png")};
    for (int causal = 1; causal >= 0; causal--) {
        ck_assert_int_eq(render_heatmap(r, png[1 - causal], att, 1, tok, causal, "t", err, sizeof err), MHAVIZ_OK);
        ck_assert_int_eq(render_overview(r, ov[1 - causal], maps, 2, 1, tok, causal, "t", titles, err, sizeof err),
                         MHAVIZ_OK);
    }
    assert_same_file(png[0], png[1]);
    assert_same_file(ov[0], ov[1]);
    for (int k = 0; k < 2; k++)
        free(png[k]), free(ov[k]);
    render_close(r);
}
END_TEST

/* A thread keeps its canvas memory and the glyphs it rasterised from one
 * picture to the next: a picture drawn after others (a bigger canvas left
 * behind, glyphs taken from the cache) is the same file as drawn first. */
START_TEST(a_picture_drawn_after_others_is_the_same_bytes)
{
    Renderer *r = open_renderer(-1, 0);
    float att[16];
    map4(att);
    assert_same_after_an_overview(r, (RenderJob){.draw = render_draw_weights, .title = "head 0 of 1", .values = att},
                                  "heatmap");
    render_close(r);
}
END_TEST

/* So is a slide drawn by a function of its own (here the
 * architecture diagram, as mhaviz draws it) on a thread's canvas. */
typedef struct {
    const Renderer *r;
    MhaConfig c;
} ArchitectureJob;

static int draw_architecture_job(Renderer *r, DrawCanvas *canvas, const RenderJob *j, int T, char *const *tokens,
                                 int causal, char *err, size_t errlen)
{
    (void)T, (void)tokens, (void)causal;
    const ArchitectureJob *a = j->arg;
    return architecture_draw(canvas, render_font(r), j->path, &a->c, NULL, 16640, 1, err, errlen);
}

START_TEST(a_slide_drawn_on_a_used_canvas_is_the_same_bytes)
{
    Renderer *r = open_renderer(-1, 0);
    const ArchitectureJob arch = {r, {.T = 4, .d_model = 64, .n_heads = 4, .n_kv_heads = 2, .head_dim = 16, .causal = 1}};
    assert_same_after_an_overview(r, (RenderJob){.draw = draw_architecture_job, .arg = &arch},
                                  "architecture");
    render_close(r);
}
END_TEST

/* Progress while the pictures are drawn: reported from the calling thread
 * only, never going back, ending at 1. */
typedef struct {
    int calls, off_thread;
    double seen[16];
} Progress;

static void note_progress(void *ctx, double fraction)
{
    Progress *p = ctx;
#ifdef _OPENMP
    p->off_thread += omp_get_thread_num() != 0;
#endif
    if (p->calls < 16)
        p->seen[p->calls] = fraction;
    p->calls++;
}

START_TEST(progress_comes_from_the_calling_thread_and_ends_at_one)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    enum { N = 5 };
    char *p[N];
    RenderJob jobs[N];
    for (int k = 0; k < N; k++) {
        char name[16];
        snprintf(name, sizeof name, "p%d.png", k);
        p[k] = scratch_png(name);
        jobs[k] = (RenderJob){.draw = render_draw_weights, .path = p[k], .title = "w", .values = att};
    }
    char err[MHAVIZ_ERRLEN];
    for (int threads = 1; threads <= 3; threads += 2) {
#ifdef _OPENMP
        omp_set_num_threads(threads);
#endif
        Progress pr = {0, 0, {0}};
        ck_assert_int_eq(render_jobs_progress(r, jobs, N, 4, TOK4, 1, note_progress, &pr, err, sizeof err),
                         MHAVIZ_OK);
        ck_assert_int_ge(pr.calls, 1);
        ck_assert_int_le(pr.calls, N + 1);
        ck_assert_int_eq(pr.off_thread, 0);
        for (int k = 0; k < pr.calls; k++) {
            ck_assert(pr.seen[k] > 0.0 && pr.seen[k] <= 1.0);
            if (k > 0)
                ck_assert(pr.seen[k] >= pr.seen[k - 1]);
        }
        ck_assert(pr.seen[pr.calls - 1] == 1.0);
        if (threads == 1)
            ck_assert_int_eq(pr.calls, N); /* one thread: after every picture, 1/5 .. 5/5 */
    }
    for (int k = 0; k < N; k++)
        free(p[k]);
    render_close(r);
}
END_TEST

START_TEST(bytes_do_not_depend_on_threads)
{
    Renderer *r = open_renderer(-1, 0);
    float att[16];
    map4(att);
    const float *maps[2] = {att, att};
    char *titles[2] = {"a", "b"};
    char *p[2][3];
    const char *names[2][3] = {{"d1a.png", "d1b.png", "d1c.png"}, {"d2a.png", "d2b.png", "d2c.png"}};
    char err[MHAVIZ_ERRLEN];
    for (int run = 0; run < 2; run++) {
#ifdef _OPENMP
        omp_set_num_threads(run == 0 ? 1 : 3);
#endif
        for (int k = 0; k < 3; k++)
            p[run][k] = scratch_png(names[run][k]);
        RenderJob jobs[3] = {
            {.draw = render_draw_overview, .path = p[run][0], .title = "o", .maps = maps, .n_maps = 2, .panel_titles = titles},
            {.draw = render_draw_weights, .path = p[run][1], .title = "w", .values = att},
            {.draw = render_draw_scores, .path = p[run][2], .title = "d", .values = att},
        };
        ck_assert_int_eq(render_jobs(r, jobs, 3, 4, TOK4, 1, err, sizeof err), MHAVIZ_OK);
    }
    for (int k = 0; k < 3; k++) {
        assert_same_file(p[0][k], p[1][k]);
        free(p[0][k]);
        free(p[1][k]);
    }
    render_close(r);
}
END_TEST

START_TEST(unwritable_png_is_an_io_error)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    char err[MHAVIZ_ERRLEN] = "";
    const char *path = "/nonexistent-folder/head_00.png";
    ck_assert_int_eq(render_heatmap(r, path, att, 4, TOK4, 1, "t", err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, path) != NULL, "message does not name the file: %s", err);
    /* render_jobs reports the first failed job in list order */
    RenderJob jobs[2] = {{.draw = render_draw_weights, .path = "/nonexistent-a/x.png", .title = "t", .values = att},
                         {.draw = render_draw_weights, .path = "/nonexistent-b/y.png", .title = "t", .values = att}};
    ck_assert_int_eq(render_jobs(r, jobs, 2, 4, TOK4, 1, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "/nonexistent-a/x.png") != NULL, "%s", err);
    render_close(r);
}
END_TEST

START_TEST(bad_font_and_cmap_are_refused)
{
    RenderOptions o;
    render_default_options(&o);
    Renderer *r = NULL;
    char err[MHAVIZ_ERRLEN];
    o.font_path = "/nonexistent/font.ttf";
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_ptr_null(r);
    ck_assert_msg(strstr(err, "/nonexistent/font.ttf") != NULL, "%s", err);
    /* a file that is not a font */
    char *notfont = scratch_png("notfont.ttf");
    FILE *f = fopen(notfont, "w");
    fputs("this is not a font, just text long enough to look at", f);
    fclose(f);
    o.font_path = notfont;
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, notfont) != NULL, "%s", err);
    /* an empty file, a folder */
    f = fopen(notfont, "w");
    fclose(f);
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, notfont) && strstr(err, "empty file"), "%s", err);
    o.font_path = dir;
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, dir) && strstr(err, "not a regular file"), "%s", err);
    ck_assert_ptr_null(r);
    free(notfont);
    render_default_options(&o);
    o.cmap = "jet";
    ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert(render_cmap_known("magma") && render_cmap_known("cividis") && render_cmap_known("gray"));
    ck_assert(!render_cmap_known("jet"));
}
END_TEST

START_TEST(odd_tokens_render_visibly)
{
    Renderer *r = open_renderer(0, 0);
    float att[16];
    map4(att);
    char longtok[400];
    memset(longtok, 'w', sizeof longtok - 1);
    longtok[sizeof longtok - 1] = '\0';
    /* a private-use code point DejaVu lacks, broken UTF-8, a very long token */
    char *tok[] = {"\xee\x80\x80", "\xff\xfe", longtok, "caf\xc3\xa9"};
    char *png = scratch_png("odd.png"), err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(render_heatmap(r, png, att, 4, tok, 1, "t", err, sizeof err), MHAVIZ_OK);
    RenderLayout l;
    render_heatmap_layout(r, 4, tok, "t", NULL, &l);
    Image im = load_png(png);
    for (int t = 0; t < 4; t++) {
        const int y0 = l.map_y + t * l.cell;
        ck_assert_msg(ink(&im, 0, y0, l.map_x - 2, y0 + l.cell) > 10, "no label for odd token %d", t);
    }
    /* the long token is cut: the labels' margin stays within a slide */
    ck_assert_int_lt(l.map_x, 400);
    ck_assert_int_lt(im.h, l.map_y + 4 * l.cell + 400);
    stbi_image_free(im.px);
    render_close(r);
    free(png);
}
END_TEST

/* Tokens of random bytes (broken UTF-8, control characters, long runs):
 * the picture is still drawn and every label has ink. */
START_TEST(random_byte_tokens_render)
{
    Renderer *r = open_renderer(1, 0);
    enum { T = 8 };
    char buf[T][48], *tok[T];
    uint32_t seed = 2463534242u;
    for (int round = 0; round < 4; round++) {
        for (int t = 0; t < T; t++) {
            seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
            int n = 1 + (int)(seed % 40);
            for (int k = 0; k < n; k++) {
                seed ^= seed << 13, seed ^= seed >> 17, seed ^= seed << 5;
                buf[t][k] = (char)(1 + seed % 255); /* any byte but NUL */
            }
            buf[t][n] = '\0';
            tok[t] = buf[t];
        }
        float att[T * T];
        for (int i = 0; i < T; i++)
            for (int j = 0; j < T; j++)
                att[i * T + j] = j <= i ? 1.0f / (float)(i + 1) : 0.0f; /* uniform causal rows */
        char *png = scratch_png("random.png"), err[MHAVIZ_ERRLEN];
        ck_assert_int_eq(render_heatmap(r, png, att, T, tok, 1, "random", err, sizeof err), MHAVIZ_OK);
        RenderLayout l;
        render_heatmap_layout(r, T, tok, "random", NULL, &l);
        Image im = load_png(png);
        ck_assert_int_eq(im.w, l.width);
        for (int t = 0; t < T; t++) {
            const int y0 = l.map_y + t * l.cell;
            ck_assert_msg(ink(&im, 0, y0, l.map_x - 2, y0 + l.cell) > 5, "round %d: no label for token %d", round, t);
        }
        stbi_image_free(im.px);
        free(png);
    }
    render_close(r);
}
END_TEST

/* The CLI writes every picture; with --steps the scores maps too. */
START_TEST(cli_writes_all_pictures)
{
    const char *bin = getenv("MHAVIZ_BIN");
    if (!bin)
        bin = "./mhaviz";
    char *out = scratch_png("cli_out");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "%s -q -t 2 --steps --size 800x450 -o %s tests/data/render_small.json 2>/dev/null",
             bin, out);
    int st = system(cmd);
    ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "mhaviz failed: %s", cmd);
    const char *files[] = {"overview.png", "head_00.png", "head_01.png", "single_head.png", "sharpness.png",
                           "head_00_scores.png", "head_01_scores.png", "single_head_scores.png"};
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", out, files[k]);
        Image im = load_png(path);
        if (k == 0) {
            ck_assert_int_eq(im.w, 800);
            ck_assert_int_eq(im.h, 450);
        }
        stbi_image_free(im.px);
    }
    /* the same pictures, byte for byte, with one thread */
    char *out1 = scratch_png("cli_out_t1");
    snprintf(cmd, sizeof cmd, "%s -q -t 1 --steps --size 800x450 -o %s tests/data/render_small.json 2>/dev/null",
             bin, out1);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == 0);
    for (size_t k = 0; k < sizeof files / sizeof files[0]; k++) {
        char a[1024], b[1024];
        snprintf(a, sizeof a, "%s/%s", out, files[k]);
        snprintf(b, sizeof b, "%s/%s", out1, files[k]);
        assert_same_file(a, b);
    }
    free(out1);
    /* bad picture options are usage errors */
    snprintf(cmd, sizeof cmd, "%s -q --cmap jet -o %s/x tests/data/render_small.json 2>/dev/null", bin, out);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == MHAVIZ_EUSAGE);
    snprintf(cmd, sizeof cmd, "%s -q --size 12 -o %s/x tests/data/render_small.json 2>/dev/null", bin, out);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == MHAVIZ_EUSAGE);
    /* a missing font is a file-system error, and no output folder is left */
    snprintf(cmd, sizeof cmd, "%s -q --font /nonexistent.ttf -o %s/y tests/data/render_small.json 2>/dev/null", bin,
             out);
    st = system(cmd);
    ck_assert(WIFEXITED(st) && WEXITSTATUS(st) == MHAVIZ_EIO);
    char y[1024];
    snprintf(y, sizeof y, "%s/y", out);
    struct stat sb;
    ck_assert(stat(y, &sb) != 0);
    free(out);
}
END_TEST

/* The line under the overview's title: the input's "title", and after
 * --kv-heads the pooling note. Lesson 1 with its title, the same without
 * it, and that again pooled with --kv-heads 2: the panels sit where the
 * layout with a one-line subtitle puts them, or without one, and the band
 * between the title and the panels holds the subtitle's ink. */
START_TEST(cli_subtitle_says_title_and_pooling)
{
    const char *bin = getenv("MHAVIZ_BIN");
    if (!bin)
        bin = "./mhaviz";
    char *tok[11] = {"Mary", "gave", "the", "book", "to", "John", "because", "John", "had", "helped", "Mary"};
    Renderer *r = open_renderer(-1, 0);
    RenderOverviewLayout with, without;
    ck_assert_int_eq(render_overview_layout(r, 5, 11, tok, 1, "a line", &with), MHAVIZ_OK);
    ck_assert_int_eq(render_overview_layout(r, 5, 11, tok, 1, NULL, &without), MHAVIZ_OK);
    render_close(r);
    ck_assert_int_gt(with.map_y, without.map_y);
    char *untitled = scratch_png("untitled.json"), *o[3] = {scratch_png("t"), scratch_png("u"), scratch_png("p")};
    char cmd[2048];
    snprintf(cmd, sizeof cmd, "grep -v '^  \"title\": ' samples/lesson1.json > %s", untitled);
    ck_assert_int_eq(system(cmd), 0);
    const char *runs[3][2] = {{"", "samples/lesson1.json"}, {"", untitled}, {"--kv-heads 2", untitled}};
    for (int k = 0; k < 3; k++) {
        snprintf(cmd, sizeof cmd, "%s -q %s -o %s %s 2>/dev/null", bin, runs[k][0], o[k], runs[k][1]);
        const int st = system(cmd);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == 0, "mhaviz failed: %s", cmd);
        char path[1024];
        snprintf(path, sizeof path, "%s/overview.png", o[k]);
        Image im = load_png(path);
        const RenderOverviewLayout *l = k == 1 ? &without : &with;
        assert_framed(&im, l->map_x, l->map_y, l->side, runs[k][1]);
        /* the subtitle: under the title (18 + 48 px at 1080), above the panels' title line (dy - dx:
         * dy = title line + side + gap, dx = side + gap) */
        if (k != 1)
            ck_assert_int_gt(ink(&im, 0, 18 + 50, im.w, with.map_y - (with.dy - with.dx)), 200);
        stbi_image_free(im.px);
    }
    for (int k = 0; k < 3; k++)
        free(o[k]);
    free(untitled);
}
END_TEST

/* A font file cut short (a copy that stopped half way) is refused with a
 * message naming it, before stb_truetype would read past its end: by the
 * library, and by the CLI with exit code 3 (never a crash). Cut in the
 * table directory (100 bytes), in the middle, and 4 KB before the end
 * (inside the last table). */
START_TEST(a_font_cut_short_is_refused_naming_it)
{
    FILE *in = fopen("/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf", "rb");
    ck_assert_ptr_nonnull(in);
    static unsigned char font[1 << 20];
    const size_t size = fread(font, 1, sizeof font, in);
    fclose(in);
    ck_assert_uint_gt(size, 100000);
    char *cut = scratch_png("cut.ttf");
    const size_t cuts[] = {100, size / 2, size - 4096};
    for (size_t k = 0; k < sizeof cuts / sizeof cuts[0]; k++) {
        FILE *f = fopen(cut, "wb");
        ck_assert_uint_eq(fwrite(font, 1, cuts[k], f), cuts[k]);
        fclose(f);
        RenderOptions o;
        render_default_options(&o);
        o.font_path = cut;
        Renderer *r = NULL;
        char err[MHAVIZ_ERRLEN] = "";
        ck_assert_int_eq(render_open(&r, &o, err, sizeof err), MHAVIZ_EIO);
        ck_assert_ptr_null(r);
        ck_assert_msg(strstr(err, cut) && strstr(err, "cut short"), "%zu bytes: %s", cuts[k], err);
    }
    const char *bin = getenv("MHAVIZ_BIN");
    if (bin) {
        char cmd[2048], msg[MHAVIZ_ERRLEN] = "";
        snprintf(cmd, sizeof cmd, "%s -q --font %s -o %s.out tests/data/render_small.json 2>&1 >/dev/null", bin, cut,
                 cut);
        FILE *p = popen(cmd, "r");
        ck_assert_ptr_nonnull(p);
        const size_t n = fread(msg, 1, sizeof msg - 1, p);
        msg[n] = '\0';
        const int st = pclose(p);
        ck_assert_msg(WIFEXITED(st) && WEXITSTATUS(st) == MHAVIZ_EIO, "status %d: %s", st, msg);
        ck_assert_msg(strstr(msg, cut) && strstr(msg, "cut short"), "%s", msg);
    }
    free(cut);
}
END_TEST

Suite *render_suite(void)
{
    Suite *s = suite_create("render");
    TCase *tc = tcase_create("pixels");
    tcase_set_timeout(tc, 30);
    tcase_add_checked_fixture(tc, NULL, remove_scratch);
    tcase_add_test(tc, cells_have_the_colormap_colour);
    tcase_add_test(tc, masked_cells_have_the_mask_colour);
    tcase_add_test(tc, not_causal_has_no_mask);
    tcase_add_test(tc, one_token_shows_no_masked_swatch);
    tcase_add_test(tc, labels_title_and_bar_have_ink);
    tcase_add_test(tc, annotated_cells_show_their_digits);
    tcase_add_test(tc, cell_numbers_keep_their_side_of_half);
    tcase_add_test(tc, scores_map_rows_less_their_maximum);
    tcase_add_test(tc, tiny_weights_print_nothing);
    tcase_add_test(tc, sharpness_lines_per_head);
    tcase_add_test(tc, sharpness_without_values);
    tcase_add_test(tc, cli_subtitle_says_title_and_pooling);
    tcase_add_test(tc, large_T_is_averaged_in_blocks);
    tcase_add_test(tc, overview_has_the_asked_size);
    tcase_add_test(tc, bytes_do_not_depend_on_threads);
    tcase_add_test(tc, progress_comes_from_the_calling_thread_and_ends_at_one);
    tcase_add_test(tc, a_picture_drawn_after_others_is_the_same_bytes);
    tcase_add_test(tc, a_slide_drawn_on_a_used_canvas_is_the_same_bytes);
    tcase_add_test(tc, unwritable_png_is_an_io_error);
    tcase_add_test(tc, bad_font_and_cmap_are_refused);
    tcase_add_test(tc, a_font_cut_short_is_refused_naming_it);
    tcase_add_test(tc, odd_tokens_render_visibly);
    tcase_add_test(tc, random_byte_tokens_render);
    tcase_add_test(tc, cli_writes_all_pictures);
    tcase_add_test(tc, maps_are_framed_and_their_top_is_not_white);
    tcase_add_test(tc, cell_numbers_are_large);
    tcase_add_test(tc, maps_are_sized_for_slides);
    tcase_add_test(tc, label_thinning_starts_after_48_tokens);
    tcase_add_test(tc, many_tokens_get_thinned_readable_labels);
    tcase_add_test(tc, overview_uses_the_slide);
    tcase_add_test(tc, overview_panels_are_filled_past_one_pixel_per_token);
    suite_add_tcase(s, tc);
    return s;
}
