/* draw_parts.h — what draw.c and draw_text.c share: the glyph bitmaps a
 * canvas keeps (draw.c frees them, draw_text.c fills and reads them); not
 * for use outside draw/. */
#ifndef MHAVIZ_DRAW_PARTS_H
#define MHAVIZ_DRAW_PARTS_H

#include "draw/draw.h"

#include <stddef.h>

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

#endif
