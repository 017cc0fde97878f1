/* draw.c — the drawing primitives (see draw.h).
 *
 * Text comes from a TrueType font through stb_truetype: each line of text
 * is rasterised into its own coverage mask (one glyph at a time, merged
 * with max so neighbouring glyph boxes never clobber each other), then
 * blended onto the canvas, turned 90 degrees when asked. Each glyph's
 * bitmap is kept with the canvas for the next time it is drawn.
 *
 * Shapes: the canvas is (h, stride) bytes, row-major, each row w RGB
 * pixels; masks and glyph bitmaps are (h, w) coverage bytes 0..255. */
#include "draw/draw.h"
#include "core/status.h"
#include "text/utf8.h"

#include <stb_truetype.h>

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* The colormap tables, generated once from published data (sources cited in
 * assets/make_colormaps.py): cmap_viridis, cmap_magma, cmap_cividis,
 * cmap_gray, cmap_rdbu, each (256, 3). */
#include "../../assets/colormaps.inc"

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define FONT_MAX_BYTES (64L << 20)

struct DrawFont {
    unsigned char *data;  /* (size) the whole font file */
    size_t size;
    stbtt_fontinfo info;
    int replacement;      /* glyph of U+FFFD, 0 when the font lacks it */
    int ascii_glyph[128]; /* glyph_for of each ASCII code point, looked up once */
};

/* -------------------------------------------------------------------- font */

/* The glyph drawn for code point cp: the font's own, else its U+FFFD, else
 * -1 (a hollow box is drawn). */
static int glyph_lookup(const DrawFont *f, int cp)
{
    int g = stbtt_FindGlyphIndex(&f->info, cp);
    if (g == 0)
        g = f->replacement ? f->replacement : -1;
    return g;
}

/* The same, from the table for ASCII (nearly every character drawn): the
 * font's character map is searched once per code point, not per use. */
static int glyph_for(const DrawFont *f, int cp)
{
    return cp >= 0 && cp < 128 ? f->ascii_glyph[cp] : glyph_lookup(f, cp);
}

/* The whole regular file at path into f->data and f->size. Returns 0, or
 * an errno value: the one open, fstat or read gave, EISDIR or EINVAL (not
 * a regular file), EFBIG (over FONT_MAX_BYTES), ENODATA (empty), ENOMEM. A
 * file that shrinks while it is read gives the bytes it still had. */
static int read_font_file(DrawFont *f, const char *path)
{
    /* O_NONBLOCK: a FIFO would otherwise wait for a writer; it is refused below. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (st.st_size > FONT_MAX_BYTES)
        e = EFBIG;
    else if (st.st_size == 0)
        e = ENODATA;
    else if (!(f->data = malloc((size_t)st.st_size)))
        e = ENOMEM;
    while (!e && f->size < (size_t)st.st_size) {
        const ssize_t n = read(fd, f->data + f->size, (size_t)st.st_size - f->size);
        if (n < 0 && errno != EINTR)
            e = errno;
        else if (n == 0)
            break; /* shorter than fstat said */
        else if (n > 0)
            f->size += (size_t)n;
    }
    close(fd);
    return e;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* stb_truetype reads a font's tables without checking that they lie within
 * the file: a font cut short would be read past its end. The table
 * directory at offset (the OpenType "sfnt" header: the table count at
 * bytes 4-5, then a 16-byte record per table, its offset and length at
 * bytes 8 and 12) is checked against the file's n bytes first. Returns
 * NULL when every table fits, else the record of the first one that does
 * not (or of the directory itself: the record's place in the file). */
static const unsigned char *table_past_end(const unsigned char *d, size_t n, size_t offset, uint64_t *end)
{
    const size_t count = offset + 6 <= n ? (size_t)(d[offset + 4] << 8 | d[offset + 5]) : 0;
    *end = offset + 12 + 16 * (uint64_t)count;
    if (*end > n)
        return d + offset;
    for (size_t k = 0; k < count; k++) {
        const unsigned char *rec = d + offset + 12 + 16 * k;
        *end = (uint64_t)be32(rec + 8) + be32(rec + 12);
        if (*end > n)
            return rec;
    }
    return NULL;
}

int draw_font_open(DrawFont **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    const int chosen = path != NULL;
    if (!path)
        path = DEFAULT_FONT;
    DrawFont *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "font %s: out of memory", path);
        return MHAVIZ_ENOMEM;
    }
    /* The whole file read (about 740 KB for DejaVu Sans), then indexed. */
    const int e = read_font_file(f, path);
    int rc = MHAVIZ_EIO;
    int offset = -1;
    const unsigned char *bad;
    uint64_t end;
    if (e == ENOMEM) {
        snprintf(err, errlen, "font %s: out of memory", path);
        rc = MHAVIZ_ENOMEM;
    } else if (e == ENOENT || e == EACCES) {
        snprintf(err, errlen, "font %s: cannot open: %s%s", path, strerror(e),
                 chosen ? "" : " (install fonts-dejavu-core, or choose a font with --font)");
    } else if (e == EISDIR || e == EINVAL) {
        snprintf(err, errlen, "font %s: not a regular file", path);
    } else if (e == EFBIG) {
        snprintf(err, errlen, "font %s: over %ld MB, not a font file", path, FONT_MAX_BYTES >> 20);
    } else if (e == ENODATA) {
        snprintf(err, errlen, "font %s: empty file", path);
    } else if (e != 0) {
        snprintf(err, errlen, "font %s: cannot read: %s", path, strerror(e));
    } else if (f->size < 16 || (offset = stbtt_GetFontOffsetForIndex(f->data, 0)) < 0 ||
               (size_t)offset + 12 > f->size) {
        snprintf(err, errlen, "font %s: not a TrueType/OpenType font", path);
    } else if ((bad = table_past_end(f->data, f->size, (size_t)offset, &end)) != NULL) {
        if (bad == f->data + offset)
            snprintf(err, errlen, "font %s: cut short: its table directory ends at byte %llu, past the file's %zu bytes",
                     path, (unsigned long long)end, f->size);
        else
            snprintf(err, errlen, "font %s: cut short: its table '%.4s' ends at byte %llu, past the file's %zu bytes",
                     path, (const char *)bad, (unsigned long long)end, f->size);
    } else if (!stbtt_InitFont(&f->info, f->data, offset)) {
        snprintf(err, errlen, "font %s: not a TrueType/OpenType font", path);
    } else {
        rc = MHAVIZ_OK;
    }
    if (rc != MHAVIZ_OK) {
        draw_font_close(f);
        return rc;
    }
    f->replacement = stbtt_FindGlyphIndex(&f->info, 0xFFFD);
    for (int cp = 0; cp < 128; cp++)
        f->ascii_glyph[cp] = glyph_lookup(f, cp);
    *out = f;
    return MHAVIZ_OK;
}

void draw_font_close(DrawFont *f)
{
    if (!f)
        return;
    free(f->data);
    free(f);
}

/* ------------------------------------------------------------------ canvas */

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

struct DrawGlyphs {
    CachedGlyph *slot;   /* (cap) the table; cap a power of 2, or 0 before the first glyph */
    size_t cap, n;       /* slots, glyphs kept */
    unsigned char *pool; /* (pool_cap) the bitmaps one after the other, each (h, w) */
    size_t used, pool_cap;
};

/* Bytes a canvas's glyphs keep at most (bitmaps and table); beyond, glyphs are drawn uncached. */
#define GLYPH_CACHE_MAX ((size_t)16 << 20)

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
    return MHAVIZ_OK;
}

DrawCanvas *draw_canvas_new(int w, int h)
{
    DrawCanvas *c = calloc(1, sizeof *c);
    if (c && (!(c->glyphs = calloc(1, sizeof *c->glyphs)) || draw_canvas_reset(c, w, h) != MHAVIZ_OK)) {
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

void draw_fill_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            put_px(c, xx, yy, col);
}

void draw_stroke_rect(DrawCanvas *c, int x, int y, int w, int h, DrawRgb col)
{
    draw_fill_rect(c, x, y, w, 1, col);
    draw_fill_rect(c, x, y + h - 1, w, 1, col);
    draw_fill_rect(c, x, y, 1, h, col);
    draw_fill_rect(c, x + w - 1, y, 1, h, col);
}

void draw_frame(DrawCanvas *c, int x, int y, int w, int h, int px, DrawRgb col)
{
    for (int k = 1; k <= px; k++)
        draw_stroke_rect(c, x - k, y - k, w + 2 * k, h + 2 * k, col);
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

void draw_fill_hatched(DrawCanvas *c, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        if (x1 > x0)
            hatch_row(draw_pixel(c, x0, yy), x1 - x0, ((x0 - ox) + (yy - oy)) & 7, bg, hatch);
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
        for (int x = (int)bx0; x < (int)ceilf(bx1); x++) {
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
}

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
        const int g = glyph_for(f, utf8_next(&s));
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

/* Blend mask m (text set at line height m->px) in colour col so that its
 * anchor (along, across) lands on canvas point (x, y). rotated: turned 90
 * degrees counter-clockwise (read bottom to top). */
static void blit_mask(DrawCanvas *c, const TextMask *m, int x, int y, int along, int across, DrawRgb col, int rotated)
{
    const int ax = along == DRAW_START ? PAD : along == DRAW_MID ? m->w / 2 : m->w - PAD - 1;
    const int ay = across == DRAW_TOP ? 0 : across == DRAW_MID ? m->baseline - (int)lroundf(0.32f * m->px) : m->h - 1;
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
    free(m.a);
    return MHAVIZ_OK;
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

/* ------------------------------------------------------------- colour maps */

static const struct {
    const char *name;
    DrawCmap table;
} CMAPS[] = {
    {"viridis", cmap_viridis}, {"magma", cmap_magma}, {"cividis", cmap_cividis},
    {"gray", cmap_gray},       {"rdbu", cmap_rdbu},
};

DrawCmap draw_cmap(const char *name)
{
    for (size_t i = 0; i < sizeof CMAPS / sizeof CMAPS[0]; i++)
        if (strcmp(name, CMAPS[i].name) == 0)
            return CMAPS[i].table;
    return NULL;
}

DrawRgb draw_cmap_at(DrawCmap map, float t)
{
    const int i = !(t >= 0.0f) ? 0 : t >= 1.0f ? 255 : (int)(t * 255.0f + 0.5f); /* NaN: 0 */
    return (DrawRgb){map[i][0], map[i][1], map[i][2]};
}

int draw_luma(DrawRgb col)
{
    return (2126 * col.r + 7152 * col.g + 722 * col.b) / 10000;
}

DrawRgb draw_colour(int k)
{
    static const DrawRgb colours[DRAW_N_COLOURS] = {
        {0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {213, 94, 0},
        {204, 121, 167}, {86, 180, 233}, {170, 150, 20}, {110, 110, 110},
    };
    return colours[k % DRAW_N_COLOURS];
}
