/* draw.h — the drawing primitives every picture of mhaviz is made of.
 *
 * A DrawCanvas is an RGB picture in memory, white when made. On it: filled
 * and outlined rectangles, hatched areas, lines of any thickness, and text
 * in a TrueType font (DrawFont), horizontal or turned to read bottom to
 * top. The colours and the colour maps, looked up by name, are in
 * draw_colour.h, the font in draw_font.h; this header includes both.
 * draw_write_png writes the canvas as a PNG file. Every picture of
 * pictures/ (one file each: heatmap.c, overview.c, ...) is drawn with these;
 * a new kind of picture (a chart, a diagram) is a file of its own there.
 *
 * Coordinates are pixels, x to the right, y down, (0, 0) the top-left
 * pixel; whatever falls outside the canvas is clipped. Drawing is
 * single-threaded per canvas; several threads may draw on canvases of
 * their own with one DrawFont. The same calls give the same pixels, and
 * the same PNG bytes, whatever thread makes them.
 *
 * With draw_svg_record(1) every canvas also records what is drawn on it
 * as an SVG document (draw_svg.c): one layout, written twice, as pixels
 * and as vector shapes with real text. */
#ifndef MHAVIZ_DRAW_H
#define MHAVIZ_DRAW_H

#include "draw/draw_colour.h"
#include "draw/draw_font.h"

#include <stddef.h>

/* A slide: every picture is made for a 16:9 projector of this size (the
 * overview's and sharpness.png's can be changed with --size). */
#define SLIDE_W 1920
#define SLIDE_H 1080

/* "<path>: out of memory drawing the picture" into err; returns
 * MHAVIZ_ENOMEM, for a picture's failure to return. */
int draw_nomem(char *err, size_t errlen, const char *path);

/* ------------------------------------------------------------------ canvas */

typedef struct DrawGlyphs DrawGlyphs;
typedef struct DrawSvg DrawSvg;

/* w x h pixels at px: pixel (x, y) is the 3 bytes R, G, B at
 * px + y stride + 3 x (draw_pixel). The other fields are the canvas's own. */
typedef struct {
    int w, h;
    size_t stride;      /* bytes from one row to the next: 3 w */
    unsigned char *px;  /* (h, w, 3) */
    size_t cap;         /* bytes px has room for */
    DrawGlyphs *glyphs; /* glyph bitmaps this canvas's text used, kept for the next text */
    DrawSvg *svg;       /* NULL, or the SVG document of what is drawn (draw_svg_record) */
} DrawCanvas;

/* SVG beside every PNG: after draw_svg_record(1), every canvas made with
 * draw_canvas_new also records each rectangle, line, hatching, text and
 * map drawn on it as an element of an SVG document, begun again at each
 * draw_canvas_reset, and draw_write_png writes it beside the PNG
 * (outdir_svg_beside: head_00.png -> head_00.svg). Set it before any
 * drawing thread starts. The pixels, and the PNG bytes, are the same
 * either way. draw_svg_recording says whether it is set. */
void draw_svg_record(int on);
int draw_svg_recording(void);

/* About the most bytes the SVG document of a picture takes that holds
 * maps maps (draw_cells) of n x n cells, side pixels a side, for a run's
 * memory estimate. */
size_t draw_svg_bytes(int maps, int n, int side);

/* A white w x h canvas (w, h >= 1), or NULL when out of memory. The caller
 * owns it and frees it with draw_canvas_free. */
DrawCanvas *draw_canvas_new(int w, int h);

/* Make c a white w x h canvas again, keeping its memory (grown when too
 * small) and its glyphs: a thread drawing many pictures makes one canvas
 * and resets it for each. Returns MHAVIZ_OK or MHAVIZ_ENOMEM (c is then
 * still a canvas to free). */
int draw_canvas_reset(DrawCanvas *c, int w, int h);

/* Free c and all it holds; NULL is fine. */
void draw_canvas_free(DrawCanvas *c);

static inline unsigned char *draw_pixel(const DrawCanvas *c, int x, int y)
{
    return c->px + (size_t)y * c->stride + (size_t)x * 3;
}

/* Blend col over the pixel at p with coverage a (0 = none .. 255 = col). */
void draw_blend(unsigned char *p, DrawRgb col, int a);

/* Fill the w x h rectangle with top-left pixel (x, y). */
void draw_fill_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col);

/* Outline the w x h rectangle at (x, y) with a line 1 pixel wide inside it. */
void draw_stroke_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col);

/* A frame px pixels thick just outside the w x h rectangle at (x, y). */
void draw_frame(DrawCanvas *c, int x, int y, int w, int h, int px, DrawRgb col);

/* Fill the w x h rectangle at (x, y) with bg crossed by diagonal hatching
 * in hatch: lines 2 pixels wide every 8, measured from (ox, oy), so that
 * neighbouring rectangles hatched from the same origin join up. */
void draw_fill_hatched(DrawCanvas *c, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch);

/* The colour of cell (i, j) of a grid (row i, column j) into *col;
 * returns 0 when the cell is masked (hatched instead). */
typedef int (*DrawCellColour)(const void *ctx, int i, int j, DrawRgb *col);

/* A map: n x n cells of cell x cell pixels, the first's top-left pixel at
 * (x, y); cell (i, j) filled in the colour colour(ctx, i, j, ...) gives,
 * or when masked hatched as draw_fill_hatched from (x, y) in bg and
 * hatch. In the SVG each cell is a <rect>, or the whole map one <image>
 * when its cells are too small or too many (draw_svg.c). */
void draw_cells(DrawCanvas *c, int x, int y, int n, int cell, DrawCellColour colour, const void *ctx, DrawRgb bg,
                DrawRgb hatch);

/* A straight line thickness pixels wide from point (x0, y0) to (x1, y1),
 * with round ends and smoothed edges. Points are in pixel units: pixel
 * (x, y) covers [x, x + 1) x [y, y + 1), so (x + 0.5, y + 0.5) is its
 * centre. */
void draw_line(DrawCanvas *c, float x0, float y0, float x1, float y1, float thickness, DrawRgb col);

/* Write c as the PNG file path (8-bit RGB), through stb_image_write with
 * libdeflate as its compressor (draw_png.c), and when c records SVG its
 * document beside it. The PNG's bytes depend only on the pixels (and on
 * libdeflate's version). Returns MHAVIZ_OK, MHAVIZ_EIO
 * (cannot create or write the file, full disk included; err names it; a
 * regular file left half-written is removed), MHAVIZ_ENOMEM, or
 * MHAVIZ_EINPUT when the canvas is too big for the encoder (over 2 GB). */
int draw_write_png(const DrawCanvas *c, const char *path, char *err, size_t errlen);

/* -------------------------------------------------------------------- text */

/* Where a text's anchor point lies. Along the text: DRAW_START, DRAW_MID
 * or DRAW_END. Across it: DRAW_TOP of the line, the visual DRAW_MID of its
 * capitals, or DRAW_BOTTOM. */
enum { DRAW_START = 0, DRAW_MID = 1, DRAW_END = 2 };
#define DRAW_TOP DRAW_START
#define DRAW_BOTTOM DRAW_END

/* The advance width in pixels of UTF-8 text s set at line height px. */
float draw_text_width(const DrawFont *f, const char *s, float px);

/* The height of a line of text set at px, spacing included. */
float draw_line_height(float px);

/* Draw UTF-8 text s at line height px in col so that its anchor (along,
 * across) lands on pixel (x, y); rotated = 1 turns it 90 degrees
 * counter-clockwise (read bottom to top: "along" then runs upwards).
 * A character the font lacks is drawn as its U+FFFD, else a hollow box.
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int draw_text(DrawCanvas *c, const DrawFont *f, const char *s, float px, int x, int y, int along, int across,
              DrawRgb col, int rotated);

/* For the tests: a record of the texts drawn, each with its line height
 * and the box of its inked pixels on the canvas, [x0, x1) x [y0, y1).
 * While draw_text_log(log) is set, every draw_text on the calling thread
 * adds one entry (a text longer than the entry is cut). */
typedef struct {
    char text[96];
    float px;
    int rotated;
    int x0, y0, x1, y1;
} DrawTextEntry;

typedef struct {
    DrawTextEntry *e; /* (cap) the first n in use; the log's owner frees it */
    int n, cap;
} DrawTextLog;

/* Start recording into log (appending), or stop with NULL. */
void draw_text_log(DrawTextLog *log);

/* Shorten s (a buffer of cap bytes) in place, ending it with an ellipsis,
 * so that it is at most max_w pixels wide at px; s is left alone when it
 * fits. */
void draw_ellipsize(const DrawFont *f, char *s, size_t cap, float px, float max_w);

#endif
