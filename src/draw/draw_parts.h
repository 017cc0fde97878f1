/* draw_parts.h — what draw.c and draw_text.c share; not for use outside
 * draw/. */
#ifndef MHAVIZ_DRAW_PARTS_H
#define MHAVIZ_DRAW_PARTS_H

#include "draw/draw.h"

#include <stb_truetype.h>

#include <stddef.h>

struct DrawFont {
    unsigned char *data;  /* (size) the whole font file */
    size_t size;
    stbtt_fontinfo info;
    int replacement;      /* glyph of U+FFFD, 0 when the font lacks it */
    int ascii_glyph[128]; /* glyph_for of each ASCII code point, looked up once */
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
int glyph_for(const DrawFont *f, int cp);

#endif
