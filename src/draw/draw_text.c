/* draw_text.c — text on a canvas: each line rasterised glyph by glyph into
 * a coverage mask, then blended onto the canvas (turned 90 degrees when
 * asked); each glyph's bitmap kept with the canvas for the next time. */
#include "draw/draw.h"
#include "draw/draw_parts.h"
#include "draw/draw_font_parts.h"
#include "draw/draw_svg.h"
#include "core/status.h"
#include "text/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------------- text */

/* Next code point of UTF-8 text *s; malformed bytes give U+FFFD, one byte each. */
static int utf8_next(const char **s)
{
    unsigned cp;
    int len = utf8_decode((const unsigned char *)*s, SIZE_MAX, &cp);
    *s += len ? len : 1;
    return len ? (int)cp : 0xFFFD;
}

/* A line of text as a coverage mask; text starts at x = PAD, baseline at row `baseline`. */
typedef struct {
    int w, h, baseline;
    float px;          /* line height the text was set at */
    float advance;     /* its advance width */
    unsigned char *a;  /* (h, w) coverage 0..255 */
    int ink_x0, ink_x1, ink_y0, ink_y1; /* every covered cell lies in columns ink_x0..ink_x1-1, rows
                                           ink_y0..ink_y1-1 (most of a mask is empty: blit_mask skips the rest) */
} TextMask;

/* Widen m's ink box to hold columns x0..x1-1 and rows y0..y1-1 (within the mask). */
static void mask_ink(TextMask *m, int x0, int x1, int y0, int y1)
{
    m->ink_x0 = x0 < m->ink_x0 ? (x0 < 0 ? 0 : x0) : m->ink_x0;
    m->ink_x1 = x1 > m->ink_x1 ? (x1 > m->w ? m->w : x1) : m->ink_x1;
    m->ink_y0 = y0 < m->ink_y0 ? (y0 < 0 ? 0 : y0) : m->ink_y0;
    m->ink_y1 = y1 > m->ink_y1 ? (y1 > m->h ? m->h : y1) : m->ink_y1;
}

#define PAD 1
#define GLYPH_MAX 192  /* largest glyph bitmap side drawn; larger ones become placeholders */

/* The slot of glyph g at (px, fx) in gc: where it is, or the empty slot
 * where it would go. */
static CachedGlyph *glyph_slot(const DrawGlyphs *gc, int g, float px, float fx)
{
    uint32_t bits_px, bits_fx;
    memcpy(&bits_px, &px, 4);
    memcpy(&bits_fx, &fx, 4);
    uint32_t h = (uint32_t)g * 2654435761u ^ bits_px * 2246822519u ^ bits_fx * 3266489917u;
    h ^= h >> 15;
    for (size_t k = h & (gc->cap - 1);; k = (k + 1) & (gc->cap - 1)) {
        CachedGlyph *e = &gc->slot[k];
        if (e->glyph == 0 || (e->glyph == g && e->px == px && e->fx == fx))
            return e;
    }
}

/* Keep bitmap (h, w) of glyph g at (px, fx) in gc; nothing happens when
 * there is no memory for it (the glyph is simply drawn again next time). */
static void glyph_keep(DrawGlyphs *gc, int g, float px, float fx, int x0, int y0, int w, int h,
                       const unsigned char *bitmap)
{
    const size_t bytes = (size_t)w * (size_t)h;
    if (gc->used + bytes + 2 * (gc->n + 1) * 2 * sizeof *gc->slot > GLYPH_CACHE_MAX)
        return; /* the bitmaps, and a table that may double */
    if (2 * (gc->n + 1) > gc->cap) { /* at most half full: grow and place every glyph again */
        const size_t cap = gc->cap ? 2 * gc->cap : 256;
        CachedGlyph *slot = calloc(cap, sizeof *slot);
        if (!slot)
            return;
        DrawGlyphs grown = *gc;
        grown.slot = slot;
        grown.cap = cap;
        for (size_t k = 0; k < gc->cap; k++)
            if (gc->slot[k].glyph != 0)
                *glyph_slot(&grown, gc->slot[k].glyph, gc->slot[k].px, gc->slot[k].fx) = gc->slot[k];
        free(gc->slot);
        *gc = grown;
    }
    if (gc->used + bytes > gc->pool_cap) {
        size_t cap = gc->pool_cap ? 2 * gc->pool_cap : (size_t)64 << 10;
        while (cap < gc->used + bytes)
            cap *= 2;
        unsigned char *pool = realloc(gc->pool, cap);
        if (!pool)
            return;
        gc->pool = pool;
        gc->pool_cap = cap;
    }
    memcpy(gc->pool + gc->used, bitmap, bytes);
    CachedGlyph e = {g, px, fx, x0, y0, w, h, gc->used};
    *glyph_slot(gc, g, px, fx) = e;
    gc->used += bytes;
    gc->n++;
}

/* Glyph g's coverage bitmap at line height px (scale) and subpixel offset
 * fx, its box in *x0, *y0, *w, *h: from gc when it was drawn before, else
 * rasterised into tmp (GLYPH_MAX^2) and kept in gc. NULL when the box is
 * empty or larger than GLYPH_MAX (the box is still given). gc may be NULL. */
static const unsigned char *glyph_bitmap(const DrawFont *f, DrawGlyphs *gc, int g, float px, float scale,
                                         float fx, unsigned char *tmp, int *x0, int *y0, int *w, int *h)
{
    if (gc && gc->cap) {
        const CachedGlyph *e = glyph_slot(gc, g, px, fx);
        if (e->glyph == g) {
            *x0 = e->x0, *y0 = e->y0, *w = e->w, *h = e->h;
            return gc->pool + e->at;
        }
    }
    int x1, y1;
    stbtt_GetGlyphBitmapBoxSubpixel(&f->info, g, scale, scale, fx, 0.0f, x0, y0, &x1, &y1);
    *w = x1 - *x0, *h = y1 - *y0;
    if (*w <= 0 || *h <= 0 || *w > GLYPH_MAX || *h > GLYPH_MAX)
        return NULL;
    stbtt_MakeGlyphBitmapSubpixel(&f->info, tmp, *w, *h, *w, scale, scale, fx, 0.0f, g);
    if (gc)
        glyph_keep(gc, g, px, fx, *x0, *y0, *w, *h, tmp);
    return tmp;
}

/* One glyph of a line of text: which (-1: the placeholder box) and the
 * pen position it starts at. */
typedef struct {
    int g;
    float x;
} PlacedGlyph;

/* Lay out s at line height px, left to right from x = 0, with kerning.
 * With placed (room for strlen(s) glyphs), put each glyph and its pen
 * position there and their count in *n_placed. When fit_w > 0, stop before
 * the first code point that would end beyond fit_w and set *fit_bytes to
 * the bytes kept. Returns the advance width. */
static float text_run(const DrawFont *f, const char *s, float px, PlacedGlyph *placed, int *n_placed,
                      float fit_w, size_t *fit_bytes)
{
    const float scale = stbtt_ScaleForPixelHeight(&f->info, px);
    const char *start = s;
    float x = 0.0f;
    int prev = 0, n = 0;
    while (*s) {
        const char *here = s;
        const int g = draw_glyph_for(f, utf8_next(&s));
        if (prev > 0 && g > 0)
            x += scale * (float)stbtt_GetGlyphKernAdvance(&f->info, prev, g);
        float adv;
        if (g > 0) {
            int a, lsb;
            stbtt_GetGlyphHMetrics(&f->info, g, &a, &lsb);
            adv = (float)a * scale;
        } else {
            adv = 0.6f * px;
        }
        if (fit_w > 0.0f && x + adv > fit_w) {
            *fit_bytes = (size_t)(here - start);
            return x;
        }
        if (placed)
            placed[n++] = (PlacedGlyph){g, x};
        x += adv;
        prev = g;
    }
    if (n_placed)
        *n_placed = n;
    if (fit_bytes)
        *fit_bytes = (size_t)(s - start);
    return x;
}

float draw_text_width(const DrawFont *f, const char *s, float px)
{
    return text_run(f, s, px, NULL, NULL, 0.0f, NULL);
}

/* Merge glyph p (set at line height px, scale) into mask m with max, its
 * bitmap taken from gc when it has it (gc may be NULL); a glyph the font
 * lacks, or too big to draw, becomes a hollow box the height of a capital. */
static void mask_glyph(const DrawFont *f, DrawGlyphs *gc, TextMask *m, PlacedGlyph p, float px, float scale)
{
    int g = p.g;
    if (g > 0) {
        /* The glyph's bitmap at the subpixel offset. */
        unsigned char tmp[GLYPH_MAX * GLYPH_MAX];
        const int ix = (int)floorf(p.x);
        const float fx = p.x - (float)ix;
        int x0, y0, gw, gh;
        const unsigned char *bitmap = glyph_bitmap(f, gc, g, px, scale, fx, tmp, &x0, &y0, &gw, &gh);
        if (bitmap) {
            const int left = PAD + ix + x0; /* mask column of the bitmap's column 0 */
            const int xx0 = left < 0 ? -left : 0, xx1 = left + gw > m->w ? m->w - left : gw;
            mask_ink(m, left + xx0, left + xx1, m->baseline + y0, m->baseline + y0 + gh);
            for (int yy = 0; yy < gh; yy++) {
                const int my = m->baseline + y0 + yy;
                if (my < 0 || my >= m->h)
                    continue;
                unsigned char *d = m->a + (size_t)my * m->w; /* the mask row */
                const unsigned char *b = bitmap + (size_t)yy * gw;
                for (int xx = xx0; xx < xx1; xx++)
                    if (b[xx] > d[left + xx])
                        d[left + xx] = b[xx];
            }
            return;
        }
        if (gw <= 0 || gh <= 0)
            return; /* nothing to draw (a space) */
    }
    const int bx0 = PAD + (int)floorf(p.x + 0.1f * px), bx1 = PAD + (int)floorf(p.x + 0.5f * px);
    const int by0 = m->baseline - (int)(0.62f * px), by1 = m->baseline;
    mask_ink(m, bx0, bx1 + 1, by0, by1 + 1);
    for (int yy = by0; yy <= by1; yy++)
        for (int xx = bx0; xx <= bx1; xx++)
            if ((yy == by0 || yy == by1 || xx == bx0 || xx == bx1) && yy >= 0 && yy < m->h && xx >= 0 &&
                xx < m->w)
                m->a[(size_t)yy * m->w + xx] = 255;
}

/* Rasterise s at line height px into a new mask (free m->a), with glyphs
 * from gc (may be NULL): laid out once, then each glyph merged in. */
static int text_mask(const DrawFont *f, DrawGlyphs *gc, const char *s, float px, TextMask *m)
{
    int ascent, descent, gap;
    stbtt_GetFontVMetrics(&f->info, &ascent, &descent, &gap);
    const float scale = stbtt_ScaleForPixelHeight(&f->info, px);
    PlacedGlyph *placed = malloc((strlen(s) + 1) * sizeof *placed); /* (strlen(s) + 1) a glyph a byte at most */
    m->a = NULL;
    if (!placed)
        return MHAVIZ_ENOMEM;
    int n;
    const float w = text_run(f, s, px, placed, &n, 0.0f, NULL);
    m->px = px;
    m->advance = w;
    m->baseline = PAD + (int)ceilf((float)ascent * scale);
    m->h = m->baseline + (int)ceilf((float)-descent * scale) + PAD + 1;
    m->w = (int)ceilf(w) + 2 * PAD + 1;
    m->a = calloc((size_t)m->w * m->h, 1);
    m->ink_x0 = m->w, m->ink_x1 = 0, m->ink_y0 = m->h, m->ink_y1 = 0; /* no ink yet */
    for (int k = 0; m->a && k < n; k++)
        mask_glyph(f, gc, m, placed[k], px, scale);
    free(placed);
    return m->a ? MHAVIZ_OK : MHAVIZ_ENOMEM;
}

/* The mask pixel (*ax, *ay) of m that anchor (along, across) names: the
 * pen's start (column PAD), the middle or the end of the text; the top of
 * the mask, the visual middle of its capitals (0.32 of the line height
 * above the baseline), or its bottom. */
static void anchor_in_mask(const TextMask *m, int along, int across, int *ax, int *ay)
{
    *ax = along == DRAW_START ? PAD : along == DRAW_MID ? m->w / 2 : m->w - PAD - 1;
    *ay = across == DRAW_TOP ? 0 : across == DRAW_MID ? m->baseline - (int)lroundf(0.32f * m->px) : m->h - 1;
}

/* Blend mask m (text set at line height m->px) in colour col so that its
 * anchor (along, across) lands on canvas point (x, y). rotated: turned 90
 * degrees counter-clockwise (read bottom to top). */
static void blit_mask(DrawCanvas *c, const TextMask *m, int x, int y, int along, int across, DrawRgb col, int rotated)
{
    int ax, ay;
    anchor_in_mask(m, along, across, &ax, &ay);
    for (int my = m->ink_y0; my < m->ink_y1; my++) {
        const unsigned char *a = m->a + (size_t)my * m->w;
        /* Mask row my lands on canvas row y + my - ay (unrotated) or on
         * canvas column x + my - ay (rotated); the inked mask columns that
         * land on the canvas, lo..hi-1, are found once per row, and the
         * canvas pixel under mask column mx is p + (mx - lo) * step. */
        int lo = m->ink_x0, hi = m->ink_x1;
        unsigned char *p;
        ptrdiff_t step;
        if (!rotated) {
            const int cy = y + (my - ay), x0 = x - ax;
            if (cy < 0 || cy >= c->h)
                continue;
            if (x0 + lo < 0)
                lo = -x0;
            if (x0 + hi > c->w)
                hi = c->w - x0;
            if (lo >= hi)
                continue;
            p = draw_pixel(c, x0 + lo, cy);
            step = 3;
        } else {
            const int cx = x + (my - ay), y0 = y + ax; /* mask column mx lands on canvas row y0 - mx */
            if (cx < 0 || cx >= c->w)
                continue;
            if (y0 - (hi - 1) < 0)
                hi = y0 + 1;
            if (y0 - lo >= c->h)
                lo = y0 - c->h + 1;
            if (lo >= hi)
                continue;
            p = draw_pixel(c, cx, y0 - lo);
            step = -(ptrdiff_t)c->stride;
        }
        for (int mx = lo; mx < hi; mx++)
            if (a[mx])
                draw_blend(p + (mx - lo) * step, col, a[mx]);
    }
}

/* The calling thread's record of the texts drawn (draw_text_log), or NULL. */
static _Thread_local DrawTextLog *text_log;

void draw_text_log(DrawTextLog *log)
{
    text_log = log;
}

/* Add text s, drawn from mask m anchored as blit_mask places it, to the log. */
static int log_text(const char *s, const TextMask *m, int x, int y, int along, int across, int rotated)
{
    DrawTextLog *log = text_log;
    if (log->n == log->cap) {
        const int cap = log->cap ? 2 * log->cap : 64;
        DrawTextEntry *e = realloc(log->e, (size_t)cap * sizeof *e);
        if (!e)
            return MHAVIZ_ENOMEM;
        log->e = e, log->cap = cap;
    }
    DrawTextEntry *e = &log->e[log->n++];
    snprintf(e->text, sizeof e->text, "%s", s);
    e->px = m->px;
    e->rotated = rotated;
    int ax, ay;
    anchor_in_mask(m, along, across, &ax, &ay);
    if (!rotated) {
        e->x0 = x - ax + m->ink_x0, e->x1 = x - ax + m->ink_x1;
        e->y0 = y - ay + m->ink_y0, e->y1 = y - ay + m->ink_y1;
    } else {
        e->x0 = x - ay + m->ink_y0, e->x1 = x - ay + m->ink_y1;
        e->y0 = y + ax - m->ink_x1 + 1, e->y1 = y + ax - m->ink_x0 + 1;
    }
    return MHAVIZ_OK;
}

/* Text s, drawn from mask m anchored as blit_mask places it, as an SVG
 * <text>: the font size is the em square stb_truetype scaled to px, the
 * anchor along the text is the same point of the pen's line (the pen
 * starts at mask column PAD: the text's start, middle or end), and across
 * it the baseline (the top edge of mask row m->baseline). Unrotated, mask
 * point (u, v) lies at canvas (x - ax + u, y - ay + v); rotated, at
 * (x - ay + v, y + ax + 1 - u) (blit_mask: mask row my on canvas column
 * x + my - ay, mask column mx on canvas row y + ax - mx). */
static void svg_of_text(DrawSvg *svg, const DrawFont *f, const char *s, const TextMask *m, int x, int y,
                        int along, int across, DrawRgb col, int rotated)
{
    int ax, ay;
    anchor_in_mask(m, along, across, &ax, &ay);
    const float u = (float)PAD + (along == DRAW_START ? 0.0f : along == DRAW_MID ? 0.5f : 1.0f) * m->advance;
    const float v = (float)m->baseline;
    const float em = stbtt_ScaleForPixelHeight(&f->info, m->px) / stbtt_ScaleForMappingEmToPixels(&f->info, 1.0f);
    if (!rotated)
        draw_svg_text(svg, f, s, em, (float)(x - ax) + u, (float)(y - ay) + v, along, 0, col);
    else
        draw_svg_text(svg, f, s, em, (float)(x - ay) + v, (float)(y + ax + 1) - u, along, 1, col);
}

/* Draw s at line height px, anchored as blit_mask says. Returns MHAVIZ_OK
 * or MHAVIZ_ENOMEM. */
int draw_text(DrawCanvas *c, const DrawFont *f, const char *s, float px, int x, int y,
              int along, int across, DrawRgb col, int rotated)
{
    if (!*s)
        return MHAVIZ_OK;
    TextMask m;
    if (text_mask(f, c->glyphs, s, px, &m) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    blit_mask(c, &m, x, y, along, across, col, rotated);
    if (c->svg)
        svg_of_text(c->svg, f, s, &m, x, y, along, across, col, rotated);
    const int rc = text_log ? log_text(s, &m, x, y, along, across, rotated) : MHAVIZ_OK;
    free(m.a);
    return rc;
}

/* Shorten s in place with an ellipsis so it is at most max_w wide at px. */
void draw_ellipsize(const DrawFont *f, char *s, size_t cap, float px, float max_w)
{
    if (draw_text_width(f, s, px) <= max_w)
        return;
    static const char ell[] = "\xe2\x80\xa6"; /* U+2026 … */
    const float ell_w = draw_text_width(f, ell, px);
    size_t keep = 0;
    if (max_w - ell_w > 0.0f)
        text_run(f, s, px, NULL, NULL, max_w - ell_w, &keep);
    if (keep + sizeof ell > cap)
        keep = cap - sizeof ell;
    memcpy(s + keep, ell, sizeof ell);
}

float draw_line_height(float px)
{
    return ceilf(px * 1.15f);
}
