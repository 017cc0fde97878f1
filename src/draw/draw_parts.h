/* draw_parts.h — what draw.c and draw_text.c share; not for use outside
 * draw/. */
#ifndef MHAVIZ_DRAW_PARTS_H
#define MHAVIZ_DRAW_PARTS_H

#include "draw/draw.h"

#include <stb_truetype.h>

#include <stddef.h>

struct DrawFont {
    unsigned char *data;  /* (size) the whole font file */
    char family[64];      /* its family name, for SVG text ("DejaVu Sans") */
    size_t size;
    stbtt_fontinfo info;
    int replacement;      /* glyph of U+FFFD, 0 when the font lacks it */
    int ascii_glyph[128]; /* draw_glyph_for of each ASCII code point, looked up once */
};

/* Glyph bitmaps already rasterised, found again by glyph, size and
 * subpixel offset: every picture of a run draws the same digits and
 * letters, and stb_truetype would otherwise rasterise each one each time.
 * An open-addressing hash table (linear probing, at most half full) over a
 * pool of bitmaps. */
typedef struct {
    int glyph;      /* 0: empty slot */
    float px, fx;   /* line height, subpixel offset */
    int x0, y0, w, h; /* the bitmap's box relative to the pen */
    size_t at;      /* the bitmap in the pool, (h, w) */
} CachedGlyph;

/* Bytes a canvas's glyphs keep at most (bitmaps and table); beyond, glyphs are drawn uncached. */
#define GLYPH_CACHE_MAX ((size_t)16 << 20)

struct DrawGlyphs {
    CachedGlyph *slot;   /* (cap) the table; cap a power of 2, or 0 before the first glyph */
    size_t cap, n;       /* slots, glyphs kept */
    unsigned char *pool; /* (pool_cap) the bitmaps one after the other, each (h, w) */
    size_t used, pool_cap;
};

/* The same, from the table for ASCII (nearly every character drawn): the
 * font's character map is searched once per code point, not per use. */
int draw_glyph_for(const DrawFont *f, int cp);

/* 1 when f has a glyph of its own for code point cp (not U+FFFD's). */
int draw_font_has(const DrawFont *f, int cp);

/* f's family name, as SVG names the font of a text. */
const char *draw_font_family(const DrawFont *f);

/* ---- draw_png.c */

/* The w x h pixels of c at (x, y) (on the canvas) as PNG bytes, *len of
 * them, which the caller frees; NULL when out of memory. */
unsigned char *draw_png_encode(const DrawCanvas *c, int x, int y, int w, int h, int *len);

/* Write n bytes to the file path, what it holds ("PNG", "SVG") named in
 * a message; a regular file left half-written is removed. Returns
 * MHAVIZ_OK or MHAVIZ_EIO (err names the file). */
int draw_write_file(const char *path, const unsigned char *bytes, size_t n, const char *what, char *err, size_t errlen);

/* ---- draw_svg.c: the SVG document a canvas records (see its comment).
 * Each function appends the element its primitive painted; a failure
 * (out of memory) is kept for draw_svg_write. */

/* A map's cells are <rect>s while they are at least SVG_CELL_MIN_PX a
 * side and at most SVG_CELLS_MAX a side; else one PNG <image>. */
#define SVG_CELL_MIN_PX 4
#define SVG_CELLS_MAX 128

DrawSvg *draw_svg_new(void); /* NULL when out of memory */
void draw_svg_free(DrawSvg *s);
void draw_svg_begin(DrawSvg *s, int w, int h); /* a new document of a white w x h canvas */
void draw_svg_rect(DrawSvg *s, int x, int y, int w, int h, DrawRgb col);
void draw_svg_hatched(DrawSvg *s, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch);
/* the outline of the rectangle at (x, y), w x h, a line width wide centred on it */
void draw_svg_stroke(DrawSvg *s, float x, float y, float w, float h, float width, DrawRgb col);
void draw_svg_line(DrawSvg *s, float x0, float y0, float x1, float y1, float width, DrawRgb col);
/* text t of font f at em (the font size: its em square), its anchor
 * (along: DRAW_START, DRAW_MID, DRAW_END) on the baseline at (x, y) */
void draw_svg_text(DrawSvg *s, const DrawFont *f, const char *t, float em, float x, float y, int along, int rotated,
                   DrawRgb col);
/* c's pixels in the rectangle (clipped to c) as an embedded PNG */
void draw_svg_image(DrawSvg *s, const DrawCanvas *c, int x, int y, int w, int h);
/* Write the document beside the PNG at png_path (outdir_svg_beside).
 * Returns MHAVIZ_OK, MHAVIZ_EIO or MHAVIZ_ENOMEM (err names the file). */
int draw_svg_write(DrawSvg *s, const char *png_path, char *err, size_t errlen);

#endif
