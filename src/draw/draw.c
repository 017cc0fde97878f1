/* draw.c — the canvas (see draw.h): made, reset and freed, its shapes,
 * and draw_write_png, which writes it as a PNG and, when it records SVG,
 * the SVG document beside it. The canvas is the one level of draw/ that
 * knows both outputs: the PNG encoder (draw_png.c) and the SVG document
 * (draw_svg.c) know no canvas and not each other's files. Text is in
 * draw_text.c, the font in draw_font.c, the colours in draw_colour.c.
 *
 * The canvas is (h, stride) bytes, row-major, each row w RGB pixels. Each
 * shape's pixels are painted by a static *_px function; the public
 * function calls it and, when the canvas records SVG, appends the shape's
 * element (draw_svg.c). */
#include "draw/draw.h"
#include "draw/draw_parts.h"
#include "draw/draw_png.h"
#include "draw/draw_svg.h"
#include "core/status.h"
#include "io/outdir.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------------ canvas */

/* Whether canvases made from now on record SVG (draw_svg_record): set by
 * the caller before any drawing thread starts, only read after. */
static int svg_on;

void draw_svg_record(int on)
{
    svg_on = on;
}

int draw_svg_recording(void)
{
    return svg_on;
}

int draw_canvas_reset(DrawCanvas *c, int w, int h)
{
    const size_t stride = (size_t)w * 3, bytes = stride * (size_t)h;
    if (bytes > c->cap) {
        free(c->px);
        c->cap = 0;
        c->w = c->h = 0;
        /* kept from picture to picture: a fresh page costs a fault and the
         * kernel's zeroing the first time it is touched, which for
         * megabytes of pixels took longer than drawing them */
        if (!(c->px = malloc(bytes)))
            return MHAVIZ_ENOMEM;
        c->cap = bytes;
    }
    c->w = w;
    c->h = h;
    c->stride = stride;
    memset(c->px, 255, bytes);
    if (c->svg)
        draw_svg_begin(c->svg, w, h);
    return MHAVIZ_OK;
}

DrawCanvas *draw_canvas_new(int w, int h)
{
    DrawCanvas *c = calloc(1, sizeof *c);
    if (c && (!(c->glyphs = calloc(1, sizeof *c->glyphs)) || (draw_svg_recording() && !(c->svg = draw_svg_new())) ||
              draw_canvas_reset(c, w, h) != MHAVIZ_OK)) {
        draw_canvas_free(c);
        return NULL;
    }
    return c;
}

void draw_canvas_free(DrawCanvas *c)
{
    if (!c)
        return;
    free(c->px);
    draw_svg_free(c->svg);
    if (c->glyphs) {
        free(c->glyphs->slot);
        free(c->glyphs->pool);
        free(c->glyphs);
    }
    free(c);
}

static inline void put_px(DrawCanvas *c, int x, int y, DrawRgb col)
{
    unsigned char *p = draw_pixel(c, x, y);
    p[0] = col.r;
    p[1] = col.g;
    p[2] = col.b;
}

void draw_blend(unsigned char *p, DrawRgb col, int a)
{
    if (a <= 0)
        return;
    if (a >= 255) { /* covered: the blend below gives col exactly */
        p[0] = col.r, p[1] = col.g, p[2] = col.b;
        return;
    }
    const int b = 255 - a;
    p[0] = (unsigned char)((p[0] * b + col.r * a + 127) / 255);
    p[1] = (unsigned char)((p[1] * b + col.g * a + 127) / 255);
    p[2] = (unsigned char)((p[2] * b + col.b * a + 127) / 255);
}

/* The pixels of draw_fill_rect, and those of an outline and a frame
 * (drawn as rectangles 1 pixel wide); the public functions below also add
 * their element to the SVG. */
static void fill_px(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            put_px(c, xx, yy, col);
}

static void stroke_px(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    fill_px(c, x, y, w, 1, col);
    fill_px(c, x, y + h - 1, w, 1, col);
    fill_px(c, x, y, 1, h, col);
    fill_px(c, x + w - 1, y, 1, h, col);
}

void draw_fill_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    fill_px(c, x, y, w, h, col);
    if (c->svg)
        draw_svg_rect(c->svg, x, y, w, h, col);
}

void draw_stroke_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    stroke_px(c, x, y, w, h, col);
    if (c->svg && (w <= 2 || h <= 2)) /* no hole inside: a filled rectangle */
        draw_svg_rect(c->svg, x, y, w, h, col);
    else if (c->svg) /* the line's centre half a pixel inside */
        draw_svg_stroke(c->svg, (float)x + 0.5f, (float)y + 0.5f, (float)w - 1.0f, (float)h - 1.0f, 1.0f, col);
}

void draw_frame(DrawCanvas *c, int x, int y, int w, int h, int px, DrawRgb col)
{
    for (int k = 1; k <= px; k++)
        stroke_px(c, x - k, y - k, w + 2 * k, h + 2 * k, col);
    if (c->svg && px > 0) /* a line px wide, its centre px / 2 outside */
        draw_svg_stroke(c->svg, (float)x - 0.5f * (float)px, (float)y - 0.5f * (float)px, (float)(w + px),
                        (float)(h + px), (float)px, col);
}

/* n pixels at p of the hatching: pixel i is hatch when (phase + i) mod 8 < 2.
 * The pattern repeats every 8 pixels, so 8 are set and the rest copied. */
static void hatch_row(unsigned char *p, int n, int phase, DrawRgb bg, DrawRgb hatch)
{
    const int first = n < 8 ? n : 8;
    for (int i = 0; i < first; i++) {
        const DrawRgb col = ((phase + i) & 7) < 2 ? hatch : bg;
        p[3 * i] = col.r, p[3 * i + 1] = col.g, p[3 * i + 2] = col.b;
    }
    for (int done = first; done < n;) {
        const int k = done < n - done ? done : n - done; /* done is a multiple of 8 here */
        memcpy(p + 3 * (size_t)done, p, 3 * (size_t)k);
        done += k;
    }
}

static void hatched_px(DrawCanvas *c, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        if (x1 > x0)
            hatch_row(draw_pixel(c, x0, yy), x1 - x0, ((x0 - ox) + (yy - oy)) & 7, bg, hatch);
}

void draw_fill_hatched(DrawCanvas *c, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch)
{
    hatched_px(c, x, y, w, h, ox, oy, bg, hatch);
    if (c->svg)
        draw_svg_hatched(c->svg, x, y, w, h, ox, oy, bg, hatch);
}

/* The pixels of draw_cells. */
static void cells_px(DrawCanvas *c, int x0, int y0, int n, int cell, DrawCellColour colour, const void *ctx,
                     DrawRgb bg, DrawRgb hatch)
{
    const int side = n * cell;
    if (x0 < 0 || y0 < 0 || x0 + side > c->w || y0 + side > c->h) {
        /* partly off the canvas (a figure too small for its panels): cell by cell, clipped */
        for (int i = 0; i < n; i++) {
            for (int j = 0; j < n; j++) {
                DrawRgb col;
                const int x = x0 + j * cell, y = y0 + i * cell;
                if (colour(ctx, i, j, &col))
                    fill_px(c, x, y, cell, cell, col);
                else
                    hatched_px(c, x, y, cell, cell, x0, y0, bg, hatch);
            }
        }
        return;
    }
    /* Row of cells i: the first pixel row of its visible cells is drawn
     * cell by cell, then each stretch of visible cells is copied into the
     * cell's other pixel rows; each stretch of masked cells is hatched
     * (the hatching moves one pixel per row). */
    for (int i = 0; i < n; i++) {
        const int y = y0 + i * cell;
        unsigned char *row0 = draw_pixel(c, x0, y);
        int start = 0, start_visible = 0;
        for (int j = 0; j <= n; j++) {
            int visible = 0;
            DrawRgb col;
            if (j < n)
                visible = colour(ctx, i, j, &col);
            if (j > 0 && (j == n || visible != start_visible)) {
                /* the stretch of cells start .. j-1 ends here */
                const int x = x0 + start * cell, w = (j - start) * cell;
                if (start_visible)
                    for (int yy = 1; yy < cell; yy++)
                        memcpy(draw_pixel(c, x, y + yy), draw_pixel(c, x, y), 3 * (size_t)w);
                else
                    hatched_px(c, x, y, w, cell, x0, y0, bg, hatch);
                start = j;
            }
            if (j == 0)
                start_visible = visible;
            else if (j < n && start == j)
                start_visible = visible;
            if (j < n && visible) {
                unsigned char *p = row0 + 3 * (size_t)j * cell;
                for (int k = 0; k < cell; k++)
                    p[3 * k] = col.r, p[3 * k + 1] = col.g, p[3 * k + 2] = col.b;
            }
        }
    }
}

void draw_cells(DrawCanvas *c, int x, int y, int n, int cell, DrawCellColour colour, const void *ctx, DrawRgb bg,
                DrawRgb hatch)
{
    cells_px(c, x, y, n, cell, colour, ctx, bg, hatch);
    if (!c->svg)
        return;
    const int side = n * cell;
    if (cell < SVG_CELL_MIN_PX || n > SVG_CELLS_MAX) { /* a fine grid: its pixels, those on the canvas */
        const int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
        const int x1 = x + side > c->w ? c->w : x + side, y1 = y + side > c->h ? c->h : y + side;
        if (x1 > x0 && y1 > y0)
            draw_svg_image(c->svg, x0, y0, x1 - x0, y1 - y0, draw_pixel(c, x0, y0), c->stride);
        return;
    }
    for (int i = 0; i < n; i++) {
        for (int j = 0; j < n; j++) {
            DrawRgb col;
            if (colour(ctx, i, j, &col))
                draw_svg_rect(c->svg, x + j * cell, y + i * cell, cell, cell, col);
            else
                draw_svg_hatched(c->svg, x + j * cell, y + i * cell, cell, cell, x, y, bg, hatch);
        }
    }
}

size_t draw_svg_bytes(int maps, int n, int side)
{
    /* a map as draw_cells writes it: one <image> (base64 of a PNG no larger
     * than its pixels, 4 bytes a pixel) or n x n <rect>s of at most about
     * 64 bytes; 512 KB for the texts, lines and the rest */
    const int image = n > 0 && (side / n < SVG_CELL_MIN_PX || n > SVG_CELLS_MAX);
    const size_t map = image ? (size_t)4 * (size_t)side * (size_t)side : (size_t)64 * (size_t)n * (size_t)n;
    return (size_t)maps * map + ((size_t)512 << 10);
}

/* Each pixel near the line is covered by how far its centre lies inside
 * the band of half-width thickness / 2 around the segment: fully from half
 * a pixel inside, not at all from half a pixel outside, linearly between
 * (a one-pixel smoothing of the edge). */
void draw_line(DrawCanvas *c, float x0, float y0, float x1, float y1, float thickness, DrawRgb col)
{
    const float half = 0.5f * thickness;
    if (!(half > 0.0f) || !isfinite(x0) || !isfinite(y0) || !isfinite(x1) || !isfinite(y1))
        return;
    const float dx = x1 - x0, dy = y1 - y0, len2 = dx * dx + dy * dy;
    const float reach = half + 1.0f;
    const float bx0 = fmaxf(fminf(x0, x1) - reach, 0.0f), bx1 = fminf(fmaxf(x0, x1) + reach, (float)c->w);
    const float by0 = fmaxf(fminf(y0, y1) - reach, 0.0f), by1 = fminf(fmaxf(y0, y1) + reach, (float)c->h);
    for (int y = (int)by0; y < (int)ceilf(by1); y++) {
        /* A pixel of row y near the segment lies within reach of the part of
         * the segment within reach of the row, from u_a to u_b along it; the
         * other pixels of the row's span are not visited (a steep line's box
         * is mostly such pixels). One pixel more each side keeps rounding off
         * the edge: every pixel the segment covers is visited as before. */
        float rx0 = bx0, rx1 = bx1;
        if (dy != 0.0f) {
            const float u_a = fminf(fmaxf(((float)y + 0.5f - reach - y0) / dy, 0.0f), 1.0f);
            const float u_b = fminf(fmaxf(((float)y + 0.5f + reach - y0) / dy, 0.0f), 1.0f);
            const float xa = x0 + u_a * dx, xb = x0 + u_b * dx;
            rx0 = fmaxf(fminf(xa, xb) - reach - 1.0f, bx0);
            rx1 = fminf(fmaxf(xa, xb) + reach + 1.0f, bx1);
        }
        for (int x = (int)rx0; x < (int)ceilf(rx1); x++) {
            /* distance from the pixel's centre to the nearest point of the segment */
            const float px = (float)x + 0.5f - x0, py = (float)y + 0.5f - y0;
            float u = len2 > 0.0f ? (px * dx + py * dy) / len2 : 0.0f;
            u = u < 0.0f ? 0.0f : u > 1.0f ? 1.0f : u;
            const float ex = px - u * dx, ey = py - u * dy;
            const float cover = half + 0.5f - sqrtf(ex * ex + ey * ey);
            if (cover > 0.0f)
                draw_blend(draw_pixel(c, x, y), col, cover >= 1.0f ? 255 : (int)lroundf(cover * 255.0f));
        }
    }
    if (c->svg)
        draw_svg_line(c->svg, x0, y0, x1, y1, thickness, col);
}

int draw_nomem(char *err, size_t errlen, const char *path)
{
    snprintf(err, errlen, "%s: out of memory drawing the picture", path);
    return MHAVIZ_ENOMEM;
}

/* --------------------------------------------------------------- the files */

/* The SVG document s beside the PNG at png_path (outdir_svg_beside). */
static int write_svg_beside(DrawSvg *s, const char *png_path, char *err, size_t errlen)
{
    char *path = outdir_svg_beside(png_path);
    if (!path)
        return draw_nomem(err, errlen, png_path);
    size_t n;
    const unsigned char *doc = draw_svg_document(s, &n);
    const int rc = doc ? draw_write_file(path, doc, n, "SVG", err, errlen) : draw_nomem(err, errlen, path);
    free(path);
    return rc;
}

int draw_write_png(const DrawCanvas *c, const char *path, char *err, size_t errlen)
{
    if (c->w < 1 || c->h < 1 || draw_png_too_big(c->w, c->h)) {
        snprintf(err, errlen, "%s: a picture of %d x %d pixels is too big for a PNG here", path, c->w, c->h);
        return MHAVIZ_EINPUT;
    }
    int len = 0;
    unsigned char *png = draw_png_encode(c->px, c->stride, c->w, c->h, &len);
    if (!png) {
        snprintf(err, errlen, "%s: out of memory encoding the PNG", path);
        return MHAVIZ_ENOMEM;
    }
    int rc = draw_write_file(path, png, (size_t)len, "PNG", err, errlen);
    free(png);
    if (rc == MHAVIZ_OK && c->svg)
        rc = write_svg_beside(c->svg, path, err, errlen);
    return rc;
}
