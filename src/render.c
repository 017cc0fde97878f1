/* render.c — attention maps as PNG heatmaps for slides.
 *
 * A picture is drawn into an RGB canvas in memory, then written by
 * png_write (png.c). Text comes from a TrueType font through stb_truetype:
 * each line of text is rasterised into its own coverage mask (one glyph at a
 * time, each glyph's bitmap kept for the next time it is drawn, merged with
 * max so neighbouring glyph boxes never clobber each other), then blended
 * onto the canvas, turned 90 degrees for the key labels.
 *
 * Shapes: a map is (T, T), row i = query i, column j = key j; the canvas is
 * (h, w, 3) bytes, row-major. Everything here is single-threaded per picture;
 * render_jobs draws several pictures at once, each thread in its own
 * workspace (canvas, PNG encoder, glyph bitmaps) kept from picture to
 * picture, so the bytes of each PNG never depend on the thread count; a
 * glyph one thread rasterised is handed to the others through a shared
 * cache (the same bitmap whoever made it). */
#include "render.h"
#include "threads.h"
#include "mapfile.h"
#include "png.h"
#include "status.h"
#include "utf8.h"

#include <stb_truetype.h>

#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* The colormap tables, generated once from published data (sources cited in
 * assets/make_colormaps.py): cmap_viridis, cmap_magma, cmap_cividis,
 * cmap_gray, cmap_rdbu, each (256, 3). */
#include "../assets/colormaps.inc"

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define FONT_MAX_BYTES (64L << 20)

typedef struct { unsigned char r, g, b; } Rgb;

static const Rgb WHITE = {255, 255, 255};
static const Rgb INK = {25, 25, 25};         /* text and tick marks */
static const Rgb FRAME = {60, 60, 60};       /* frame around maps and the colour bar */

struct Renderer {
    RenderOptions opt;
    MappedFile font_file;            /* the whole font file */
    stbtt_fontinfo font;
    int replacement;                 /* glyph of U+FFFD, 0 when the font lacks it */
    int ascii_glyph[128];            /* glyph_for of each ASCII code point, looked up once */
    const unsigned char (*cmap)[3];  /* (256, 3) the softmax maps' colours */
    Rgb mask_bg, mask_hatch;         /* masked cells: flat colour with diagonal hatching */
};

/* ------------------------------------------------------------------ options */

void render_default_options(RenderOptions *o)
{
    o->font_path = NULL;
    o->cmap = "viridis";
    o->cell_px = 0;
    o->annotate = -1;
    o->overview_w = 1920;
    o->overview_h = 1080;
}

static const struct {
    const char *name;
    const unsigned char (*table)[3];
    Rgb mask_bg, mask_hatch;
} CMAPS[] = {
    /* Light grey with darker hatching: no colour of these maps is a grey this light. */
    {"viridis", cmap_viridis, {222, 222, 222}, {168, 168, 168}},
    {"magma", cmap_magma, {222, 222, 222}, {168, 168, 168}},
    {"cividis", cmap_cividis, {222, 222, 222}, {150, 150, 150}},
    /* A grey map needs a mask that is not grey: pale rose with rose hatching. */
    {"gray", cmap_gray, {250, 218, 214}, {214, 120, 110}},
};

/* The diverging map's mask: mid grey, unlike its near-white zero. */
static const Rgb DIV_MASK_BG = {196, 196, 196}, DIV_MASK_HATCH = {140, 140, 140};

int render_cmap_known(const char *name)
{
    for (size_t i = 0; i < sizeof CMAPS / sizeof CMAPS[0]; i++)
        if (strcmp(name, CMAPS[i].name) == 0)
            return 1;
    return 0;
}

/* --------------------------------------------------------- open and close */

/* The glyph drawn for code point cp: the font's own, else its U+FFFD, else
 * -1 (a hollow box is drawn). */
static int glyph_lookup(const Renderer *r, int cp)
{
    int g = stbtt_FindGlyphIndex(&r->font, cp);
    if (g == 0)
        g = r->replacement ? r->replacement : -1;
    return g;
}

/* The same, from the table for ASCII (nearly every character drawn): the
 * font's character map is searched once per code point, not per use. */
static int glyph_for(const Renderer *r, int cp)
{
    return cp >= 0 && cp < 128 ? r->ascii_glyph[cp] : glyph_lookup(r, cp);
}

int render_open(Renderer **out, const RenderOptions *o, char *err, size_t errlen)
{
    *out = NULL;
    const char *path = o->font_path ? o->font_path : DEFAULT_FONT;
    int rc = MHAVIZ_OK;
    Renderer *r = calloc(1, sizeof *r);
    if (!r)
        goto oom;
    r->opt = *o;

    const char *cmap = o->cmap ? o->cmap : "viridis";
    for (size_t i = 0; i < sizeof CMAPS / sizeof CMAPS[0]; i++) {
        if (strcmp(cmap, CMAPS[i].name) == 0) {
            r->cmap = CMAPS[i].table;
            r->mask_bg = CMAPS[i].mask_bg;
            r->mask_hatch = CMAPS[i].mask_hatch;
        }
    }
    if (!r->cmap) {
        snprintf(err, errlen, "unknown colormap '%s' (known: viridis, magma, cividis, gray)", cmap);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }

    /* The font: the whole file mapped (stb_truetype reads only the parts
     * it needs), then indexed. */
    const int e = mapfile_open(&r->font_file, path, FONT_MAX_BYTES);
    if (e == ENOMEM)
        goto oom;
    if (e != 0) {
        if (e == ENOENT || e == EACCES)
            snprintf(err, errlen, "font %s: cannot open: %s%s", path, strerror(e),
                     o->font_path ? "" : " (install fonts-dejavu-core, or choose a font with --font)");
        else if (e == EISDIR || e == EINVAL)
            snprintf(err, errlen, "font %s: not a regular file", path);
        else if (e == EFBIG)
            snprintf(err, errlen, "font %s: over %ld MB, not a font file", path, FONT_MAX_BYTES >> 20);
        else if (e == ENODATA)
            snprintf(err, errlen, "font %s: empty file", path);
        else
            snprintf(err, errlen, "font %s: cannot read: %s", path, strerror(e));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    const unsigned char *font = r->font_file.data;
    const int offset = stbtt_GetFontOffsetForIndex(font, 0);
    if (r->font_file.size < 12 || offset < 0 || !stbtt_InitFont(&r->font, font, offset)) {
        snprintf(err, errlen, "font %s: not a TrueType/OpenType font", path);
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    r->replacement = stbtt_FindGlyphIndex(&r->font, 0xFFFD);
    for (int cp = 0; cp < 128; cp++)
        r->ascii_glyph[cp] = glyph_lookup(r, cp);
    goto cleanup;

oom:
    snprintf(err, errlen, "out of memory loading the renderer");
    rc = MHAVIZ_ENOMEM;
cleanup:
    if (rc == MHAVIZ_OK)
        *out = r;
    else
        render_close(r);
    return rc;
}

void render_close(Renderer *r)
{
    if (!r)
        return;
    mapfile_close(&r->font_file);
    free(r);
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

typedef struct GlyphCache {
    CachedGlyph *slot;   /* (cap) the table; cap a power of 2, or 0 before the first glyph */
    size_t cap, n;       /* slots, glyphs kept */
    unsigned char *pool; /* (pool_cap) the bitmaps one after the other, each (h, w) */
    size_t used, pool_cap;
    struct GlyphCache *shared; /* a thread's cache: the one all threads of render_jobs also keep
                                  their glyphs in, looked in when this one lacks a glyph (NULL: none) */
} GlyphCache;

/* Bytes a cache keeps at most (bitmaps and table); beyond, glyphs are drawn uncached. */
#define GLYPH_CACHE_MAX ((size_t)16 << 20)

/* Each row starts with PNG's filter byte (0), so png_write takes the
 * canvas as it is. */
typedef struct {
    int w, h;
    size_t stride;     /* bytes per row: 1 + 3 w */
    unsigned char *px; /* (h, stride): filter byte, then w RGB pixels; the workspace's memory */
    GlyphCache *glyphs; /* the workspace's */
} Canvas;

/* The memory one thread draws and compresses its pictures in, kept from
 * picture to picture: a fresh page costs a fault and the kernel's zeroing
 * the first time it is touched, which for megabytes of pixels took longer
 * than drawing them. */
typedef struct {
    unsigned char *px; /* canvas memory, cap bytes */
    size_t cap;
    PngWriter *png;
    GlyphCache glyphs;
} Workspace;

static void workspace_free(Workspace *ws)
{
    free(ws->px);
    png_writer_free(ws->png);
    free(ws->glyphs.slot);
    free(ws->glyphs.pool);
}

/* A white w x h canvas in ws's memory, grown when too small. */
static int canvas_init(Canvas *c, Workspace *ws, int w, int h)
{
    c->w = w;
    c->h = h;
    c->stride = 1 + (size_t)w * 3;
    const size_t bytes = c->stride * h;
    if (bytes > ws->cap) {
        free(ws->px);
        ws->cap = 0;
        ws->px = malloc(bytes);
        if (!ws->px)
            return MHAVIZ_ENOMEM;
        ws->cap = bytes;
    }
    c->px = ws->px;
    c->glyphs = &ws->glyphs;
    memset(c->px, 255, bytes);
    for (int y = 0; y < h; y++)
        c->px[(size_t)y * c->stride] = 0;
    return MHAVIZ_OK;
}

static inline unsigned char *pixel(Canvas *c, int x, int y)
{
    return c->px + (size_t)y * c->stride + 1 + (size_t)x * 3;
}

static inline void put_px(Canvas *c, int x, int y, Rgb col)
{
    unsigned char *p = pixel(c, x, y);
    p[0] = col.r;
    p[1] = col.g;
    p[2] = col.b;
}

/* Blend col over the pixel at p with coverage a (1..255). */
static inline void blend_px(unsigned char *p, Rgb col, int a)
{
    if (a == 255) { /* covered: the blend below gives col exactly */
        p[0] = col.r, p[1] = col.g, p[2] = col.b;
        return;
    }
    const int b = 255 - a;
    p[0] = (unsigned char)((p[0] * b + col.r * a + 127) / 255);
    p[1] = (unsigned char)((p[1] * b + col.g * a + 127) / 255);
    p[2] = (unsigned char)((p[2] * b + col.b * a + 127) / 255);
}

static void fill_rect(Canvas *c, int x, int y, int w, int h, Rgb col)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        for (int xx = x0; xx < x1; xx++)
            put_px(c, xx, yy, col);
}

static void stroke_rect(Canvas *c, int x, int y, int w, int h, Rgb col)
{
    fill_rect(c, x, y, w, 1, col);
    fill_rect(c, x, y + h - 1, w, 1, col);
    fill_rect(c, x, y, 1, h, col);
    fill_rect(c, x + w - 1, y, 1, h, col);
}

/* A frame of px pixels just outside the w x h region at (x, y): the map's
 * edge stays visible where its cells are as light as the page. */
static void frame_region(Canvas *c, int x, int y, int w, int h, int px)
{
    for (int k = 1; k <= px; k++)
        stroke_rect(c, x - k, y - k, w + 2 * k, h + 2 * k, FRAME);
}

/* Frame thickness for a map side: 1 px up to ~900 px, then 2, 3. */
static int frame_px(int side)
{
    const int px = (side + 300) / 600;
    return px < 1 ? 1 : px > 3 ? 3 : px;
}

/* Masked area: flat mask colour with diagonal hatching, 2 px lines every 8 px
 * measured from (ox, oy), so the hatching runs on across neighbouring cells. */
/* n pixels at p of the hatching: pixel i is hatch when (phase + i) mod 8 < 2.
 * The pattern repeats every 8 pixels, so 8 are set and the rest copied. */
static void hatch_row(unsigned char *p, int n, int phase, Rgb bg, Rgb hatch)
{
    const int first = n < 8 ? n : 8;
    for (int i = 0; i < first; i++) {
        const Rgb col = ((phase + i) & 7) < 2 ? hatch : bg;
        p[3 * i] = col.r, p[3 * i + 1] = col.g, p[3 * i + 2] = col.b;
    }
    for (int done = first; done < n;) {
        const int k = done < n - done ? done : n - done; /* done is a multiple of 8 here */
        memcpy(p + 3 * (size_t)done, p, 3 * (size_t)k);
        done += k;
    }
}

static void fill_masked(Canvas *c, int x, int y, int w, int h, int ox, int oy, Rgb bg, Rgb hatch)
{
    int x0 = x < 0 ? 0 : x, y0 = y < 0 ? 0 : y;
    int x1 = x + w > c->w ? c->w : x + w, y1 = y + h > c->h ? c->h : y + h;
    for (int yy = y0; yy < y1; yy++)
        if (x1 > x0)
            hatch_row(pixel(c, x0, yy), x1 - x0, ((x0 - ox) + (yy - oy)) & 7, bg, hatch);
}

static int write_png(const Canvas *c, Workspace *ws, const char *path, char *err, size_t errlen)
{
    if (!ws->png && !(ws->png = png_writer_new())) {
        snprintf(err, errlen, "%s: out of memory encoding the PNG", path);
        return MHAVIZ_ENOMEM;
    }
    return png_write(ws->png, path, c->px, c->w, c->h, err, errlen);
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
static CachedGlyph *glyph_slot(const GlyphCache *gc, int g, float px, float fx)
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
static void glyph_keep(GlyphCache *gc, int g, float px, float fx, int x0, int y0, int w, int h,
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
        GlyphCache grown = *gc;
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
 * from gc->shared, else rasterised; either of the last two into tmp
 * (GLYPH_MAX^2) and kept in gc. NULL when the box is empty or larger than
 * GLYPH_MAX (the box is still given). gc may be NULL. */
static const unsigned char *glyph_bitmap(const Renderer *r, GlyphCache *gc, int g, float px, float scale,
                                         float fx, unsigned char *tmp, int *x0, int *y0, int *w, int *h)
{
    if (gc && gc->cap) {
        const CachedGlyph *e = glyph_slot(gc, g, px, fx);
        if (e->glyph == g) {
            *x0 = e->x0, *y0 = e->y0, *w = e->w, *h = e->h;
            return gc->pool + e->at;
        }
    }
    GlyphCache *shared = gc ? gc->shared : NULL;
    int found = 0;
    if (shared) {
        /* Drawn by another thread already? Copied into tmp while no
         * thread adds to the shared cache (which may move its memory). */
#pragma omp critical(render_shared_glyphs)
        {
            const CachedGlyph *e = shared->cap ? glyph_slot(shared, g, px, fx) : NULL;
            if (e && e->glyph == g) {
                *x0 = e->x0, *y0 = e->y0, *w = e->w, *h = e->h;
                memcpy(tmp, shared->pool + e->at, (size_t)e->w * (size_t)e->h);
                found = 1;
            }
        }
    }
    if (!found) {
        int x1, y1;
        stbtt_GetGlyphBitmapBoxSubpixel(&r->font, g, scale, scale, fx, 0.0f, x0, y0, &x1, &y1);
        *w = x1 - *x0, *h = y1 - *y0;
        if (*w <= 0 || *h <= 0 || *w > GLYPH_MAX || *h > GLYPH_MAX)
            return NULL;
        stbtt_MakeGlyphBitmapSubpixel(&r->font, tmp, *w, *h, *w, scale, scale, fx, 0.0f, g);
        if (shared) {
            /* the other threads may draw it next: kept there too, unless one just did */
#pragma omp critical(render_shared_glyphs)
            {
                if (shared->cap == 0 || glyph_slot(shared, g, px, fx)->glyph != g)
                    glyph_keep(shared, g, px, fx, *x0, *y0, *w, *h, tmp);
            }
        }
    }
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
static float text_run(const Renderer *r, const char *s, float px, PlacedGlyph *placed, int *n_placed,
                      float fit_w, size_t *fit_bytes)
{
    const float scale = stbtt_ScaleForPixelHeight(&r->font, px);
    const char *start = s;
    float x = 0.0f;
    int prev = 0, n = 0;
    while (*s) {
        const char *here = s;
        const int g = glyph_for(r, utf8_next(&s));
        if (prev > 0 && g > 0)
            x += scale * (float)stbtt_GetGlyphKernAdvance(&r->font, prev, g);
        float adv;
        if (g > 0) {
            int a, lsb;
            stbtt_GetGlyphHMetrics(&r->font, g, &a, &lsb);
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

static float text_width(const Renderer *r, const char *s, float px)
{
    return text_run(r, s, px, NULL, NULL, 0.0f, NULL);
}

/* Merge glyph p (set at line height px, scale) into mask m with max, its
 * bitmap taken from gc when it has it (gc may be NULL); a glyph the font
 * lacks, or too big to draw, becomes a hollow box the height of a capital. */
static void mask_glyph(const Renderer *r, GlyphCache *gc, TextMask *m, PlacedGlyph p, float px, float scale)
{
    int g = p.g;
    if (g > 0) {
        /* The glyph's bitmap at the subpixel offset. */
        unsigned char tmp[GLYPH_MAX * GLYPH_MAX];
        const int ix = (int)floorf(p.x);
        const float fx = p.x - (float)ix;
        int x0, y0, gw, gh;
        const unsigned char *bitmap = glyph_bitmap(r, gc, g, px, scale, fx, tmp, &x0, &y0, &gw, &gh);
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
static int text_mask(const Renderer *r, GlyphCache *gc, const char *s, float px, TextMask *m)
{
    int ascent, descent, gap;
    stbtt_GetFontVMetrics(&r->font, &ascent, &descent, &gap);
    const float scale = stbtt_ScaleForPixelHeight(&r->font, px);
    PlacedGlyph *placed = malloc((strlen(s) + 1) * sizeof *placed); /* (strlen(s) + 1) a glyph a byte at most */
    m->a = NULL;
    if (!placed)
        return MHAVIZ_ENOMEM;
    int n;
    const float w = text_run(r, s, px, placed, &n, 0.0f, NULL);
    m->px = px;
    m->baseline = PAD + (int)ceilf((float)ascent * scale);
    m->h = m->baseline + (int)ceilf((float)-descent * scale) + PAD + 1;
    m->w = (int)ceilf(w) + 2 * PAD + 1;
    m->a = calloc((size_t)m->w * m->h, 1);
    m->ink_x0 = m->w, m->ink_x1 = 0, m->ink_y0 = m->h, m->ink_y1 = 0; /* no ink yet */
    for (int k = 0; m->a && k < n; k++)
        mask_glyph(r, gc, m, placed[k], px, scale);
    free(placed);
    return m->a ? MHAVIZ_OK : MHAVIZ_ENOMEM;
}

/* Where a text's anchor lies. Along the text: START, MID or END. Across it:
 * TOP of the line, the visual MID of its capitals, or BOTTOM. */
enum { START = 0, MID = 1, END = 2 };
#define TOP START
#define BOTTOM END

/* Blend mask m (text set at line height m->px) in colour col so that its
 * anchor (along, across) lands on canvas point (x, y). rotated: turned 90
 * degrees counter-clockwise (read bottom to top). */
static void blit_mask(Canvas *c, const TextMask *m, int x, int y, int along, int across, Rgb col, int rotated)
{
    const int ax = along == START ? PAD : along == MID ? m->w / 2 : m->w - PAD - 1;
    const int ay = across == TOP ? 0 : across == MID ? m->baseline - (int)lroundf(0.32f * m->px) : m->h - 1;
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
            p = pixel(c, x0 + lo, cy);
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
            p = pixel(c, cx, y0 - lo);
            step = -(ptrdiff_t)c->stride;
        }
        for (int mx = lo; mx < hi; mx++)
            if (a[mx])
                blend_px(p + (mx - lo) * step, col, a[mx]);
    }
}

/* Draw s at line height px, anchored as blit_mask says. Returns MHAVIZ_OK
 * or MHAVIZ_ENOMEM. */
static int draw_text(Canvas *c, const Renderer *r, const char *s, float px, int x, int y,
                     int along, int across, Rgb col, int rotated)
{
    if (!*s)
        return MHAVIZ_OK;
    TextMask m;
    if (text_mask(r, c->glyphs, s, px, &m) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    blit_mask(c, &m, x, y, along, across, col, rotated);
    free(m.a);
    return MHAVIZ_OK;
}

/* Shorten s in place with an ellipsis so it is at most max_w wide at px. */
static void ellipsize(const Renderer *r, char *s, size_t cap, float px, float max_w)
{
    if (text_width(r, s, px) <= max_w)
        return;
    static const char ell[] = "\xe2\x80\xa6"; /* U+2026 … */
    const float ell_w = text_width(r, ell, px);
    size_t keep = 0;
    if (max_w - ell_w > 0.0f)
        text_run(r, s, px, NULL, NULL, max_w - ell_w, &keep);
    if (keep + sizeof ell > cap)
        keep = cap - sizeof ell;
    memcpy(s + keep, ell, sizeof ell);
}

#define LABEL_BYTES 160
#define LABEL_MIN_PX 23.0f /* token labels on a single heatmap: line height, capitals ~0.63 of it */

/* The label shown for token tok, into buf (LABEL_BYTES): whitespace made
 * visible (space as U+2423 ␣, newline as \n, tab as \t), the empty token as
 * "", then cut with an ellipsis to max_w pixels at px. */
static void token_label(const Renderer *r, const char *tok, float px, float max_w, char *buf)
{
    size_t n = 0;
    int only_space = *tok != '\0';
    for (const char *p = tok; *p; p++)
        if (!strchr(" \t\n\r\v\f", *p))
            only_space = 0;
    if (!*tok) {
        snprintf(buf, LABEL_BYTES, "\"\"");
    } else {
        const char *p = tok;
        for (; *p && n + 8 < LABEL_BYTES; p++) {
            const char *rep = NULL;
            switch (*p) {
            case '\n': rep = "\\n"; break;
            case '\t': rep = "\\t"; break;
            case '\r': rep = "\\r"; break;
            case '\v': rep = "\\v"; break;
            case '\f': rep = "\\f"; break;
            case ' ': rep = only_space ? "\xe2\x90\xa3" : NULL; break;
            }
            if (rep) {
                size_t k = strlen(rep);
                memcpy(buf + n, rep, k);
                n += k;
            } else {
                buf[n++] = *p;
            }
        }
        if (*p) {
            /* Longer than any margin: cut at a code point boundary and say so. */
            while (n > 0 && ((unsigned char)*p & 0xC0) == 0x80)
                n--, p--;
            memcpy(buf + n, "\xe2\x80\xa6", 4);
        } else {
            buf[n] = '\0';
        }
    }
    ellipsize(r, buf, LABEL_BYTES, px, max_w);
}

/* ------------------------------------------------------------------ scales */

/* How values become colours. */
typedef struct {
    const unsigned char (*table)[3]; /* (256, 3) */
    float lo, hi;                    /* values at entries 0 and 255 */
    Rgb mask_bg, mask_hatch;
    int diverging;                   /* ticks at -m, -m/2, 0, m/2, m */
} Scale;

static Rgb scale_color(const Scale *s, float v)
{
    float t = (v - s->lo) / (s->hi - s->lo);
    int i = t >= 0.0f ? (int)(t * 255.0f + 0.5f) : 0; /* NaN goes to 0 too */
    if (i > 255)
        i = 255;
    Rgb c = {s->table[i][0], s->table[i][1], s->table[i][2]};
    return c;
}

static Scale weights_scale(const Renderer *r)
{
    Scale s = {r->cmap, 0.0f, 1.0f, r->mask_bg, r->mask_hatch, 0};
    return s;
}

static Scale diverging_scale(const float *v, int T, int causal)
{
    float m = 0.0f;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < (causal ? i + 1 : T); j++)
            if (fabsf(v[(size_t)i * T + j]) > m)
                m = fabsf(v[(size_t)i * T + j]);
    if (!(m > 0.0f) || !isfinite(m))
        m = 1.0f;
    /* Round the end of the scale up to a number a class can read off the bar
     * (0.757 -> 0.8, 36 -> 40): the ticks then fall on m/2 and m. */
    static const float nice[] = {1.0f, 1.2f, 1.5f, 2.0f, 2.5f, 3.0f, 4.0f, 5.0f, 6.0f, 8.0f, 10.0f};
    const float mag = powf(10.0f, floorf(log10f(m)));
    for (size_t k = 0; k < sizeof nice / sizeof nice[0]; k++) {
        if (nice[k] * mag >= m * 0.9999f) {
            m = nice[k] * mag;
            break;
        }
    }
    Scale s = {cmap_rdbu, -m, m, DIV_MASK_BG, DIV_MASK_HATCH, 1};
    return s;
}

/* Tick values and their labels (5 ticks). */
static void scale_ticks(const Scale *s, float tv[5], char tl[5][24])
{
    for (int k = 0; k < 5; k++) {
        tv[k] = s->lo + (s->hi - s->lo) * (float)k / 4.0f;
        if (!s->diverging) {
            static const char *w[5] = {"0", "0.25", "0.5", "0.75", "1"};
            snprintf(tl[k], 24, "%s", w[k]);
        } else if (k == 2) {
            tv[k] = 0.0f;
            snprintf(tl[k], 24, "0");
        } else {
            char num[20];
            snprintf(num, sizeof num, "%.3g", fabsf(tv[k]));
            snprintf(tl[k], 24, "%s%s", tv[k] < 0 ? "\xe2\x88\x92" : "", num); /* U+2212 minus */
        }
    }
}

/* Relative brightness of a colour, 0..255, for choosing text colour on it. */
static int luma(Rgb c) { return (2126 * c.r + 7152 * c.g + 722 * c.b) / 10000; }

/* -------------------------------------------------------------- the cells */

/* How a (T, T) map becomes pixels: B x B blocks of k x k tokens (k = 1: one
 * cell per token), each block cell x cell pixels. With even = 1 (overview
 * panels only) the B blocks share the T tokens out evenly instead: block b
 * holds tokens floor(b T / B) .. floor((b + 1) T / B) - 1, k - 1 or k of
 * them, so a panel of any width is filled. */
typedef struct {
    int k, B, cell, even;
} Grid;

/* Tokens [*lo, *hi) of block b. */
static inline void block_range(const Grid *g, int T, int b, int *lo, int *hi)
{
    if (g->even) {
        *lo = (int)((long)b * T / g->B);
        *hi = (int)((long)(b + 1) * T / g->B);
    } else {
        *lo = b * g->k;
        *hi = (b + 1) * g->k < T ? (b + 1) * g->k : T;
    }
}

static Grid grid_for_width(int T, int map_px)
{
    Grid g = {1, T, 1, 0};
    if (map_px >= T) {
        g.k = 1;
        g.B = T;
        g.cell = map_px / T;
    } else {
        g.k = (T + map_px - 1) / map_px;
        g.B = (T + g.k - 1) / g.k;
        g.cell = 1;
    }
    return g;
}

/* The overview panels' grid: one side of map_px pixels whatever T is;
 * past one pixel per token, blocks share the tokens out evenly. */
static Grid grid_for_panel(int T, int map_px)
{
    if (map_px >= T)
        return grid_for_width(T, map_px);
    Grid g = {(T + map_px - 1) / map_px, map_px, 1, 1};
    return g;
}

/* The single-map figure's grid: whole-pixel cells with the map as near
 * MAP_TARGET_PX wide as they allow, never wider than 1600 px: 534..1066 px
 * up to T = 800 (T = 12: 67 px cells, an 804 px map; T = 512: 2 px, a
 * 1024 px map), one pixel per token from T = 801 to 1600.
 * Past T = 1600, blocks of k x k tokens are averaged into a map of at most
 * 1600 px. cell_px > 0 forces the cell size (blocks are still averaged past
 * 4096 px).
 * An 800 px map makes a figure of about 1150 x 1050 px for short tokens:
 * it fits a 1920 x 1080 slide at one picture pixel per screen pixel, so
 * nothing is resampled, and the text, sized from the map, keeps its
 * proportion to it. */
#define MAP_TARGET_PX 800
static Grid grid_for_slide(int T, int cell_px)
{
    Grid g = {1, T, 1, 0};
    if (cell_px > 0) {
        if ((long)T * cell_px > 4096)
            g = grid_for_width(T, 4096 / cell_px);
        g.cell = cell_px;
        return g;
    }
    if (T > 1600)
        return grid_for_width(T, 1600);
    int cell = MAP_TARGET_PX / T; /* map at or just under the target */
    if (cell < 1)
        cell = 1;
    if ((long)(cell + 1) * T <= 1600 && (long)(cell + 1) * T - MAP_TARGET_PX <= MAP_TARGET_PX - (long)cell * T)
        cell++; /* the next size up is nearer the target and still fits */
    g.cell = cell;
    return g;
}

/* Value of block (bi, bj): the mean of its visible cells; *visible = 0 when
 * every cell is masked. Sums in row-major order. */
static inline float block_value(const float *v, int T, int causal, const Grid *g, int bi, int bj, int *visible)
{
    if (g->k == 1) {
        /* one token per cell: the value itself (the loop below gives the same, slower) */
        *visible = !causal || bj <= bi;
        return *visible ? v[(size_t)bi * T + bj] : 0.0f;
    }
    int i0, i1, j0, j1;
    block_range(g, T, bi, &i0, &i1);
    block_range(g, T, bj, &j0, &j1);
    double sum = 0.0;
    int n = 0;
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++)
            if (!causal || j <= i) {
                sum += v[(size_t)i * T + j];
                n++;
            }
    *visible = n > 0;
    return n ? (float)(sum / n) : 0.0f;
}

static void draw_cells(Canvas *c, const float *v, int T, int causal, const Grid *g, int x0, int y0,
                       const Scale *s)
{
    const int side = g->B * g->cell;
    if (x0 < 0 || y0 < 0 || x0 + side > c->w || y0 + side > c->h) {
        /* partly off the canvas (a figure too small for its panels): cell by cell, clipped */
        for (int bi = 0; bi < g->B; bi++) {
            for (int bj = 0; bj < g->B; bj++) {
                int visible;
                const float val = block_value(v, T, causal, g, bi, bj, &visible);
                const int x = x0 + bj * g->cell, y = y0 + bi * g->cell;
                if (visible)
                    fill_rect(c, x, y, g->cell, g->cell, scale_color(s, val));
                else
                    fill_masked(c, x, y, g->cell, g->cell, x0, y0, s->mask_bg, s->mask_hatch);
            }
        }
        return;
    }
    /* Row of blocks bi: the first pixel row of its visible blocks is drawn
     * block by block, then each stretch of visible blocks is copied into the
     * cell's other pixel rows; each stretch of masked blocks is hatched
     * (the hatching moves one pixel per row). */
    for (int bi = 0; bi < g->B; bi++) {
        const int y = y0 + bi * g->cell;
        unsigned char *row0 = pixel(c, x0, y);
        int start = 0, start_visible = 0;
        for (int bj = 0; bj <= g->B; bj++) {
            int visible = 0;
            float val = 0.0f;
            if (bj < g->B)
                val = block_value(v, T, causal, g, bi, bj, &visible);
            if (bj > 0 && (bj == g->B || visible != start_visible)) {
                /* the stretch of blocks start .. bj-1 ends here */
                const int x = x0 + start * g->cell, w = (bj - start) * g->cell;
                if (start_visible)
                    for (int yy = 1; yy < g->cell; yy++)
                        memcpy(pixel(c, x, y + yy), pixel(c, x, y), 3 * (size_t)w);
                else
                    fill_masked(c, x, y, w, g->cell, x0, y0, s->mask_bg, s->mask_hatch);
                start = bj;
            }
            if (bj == 0)
                start_visible = visible;
            else if (bj < g->B && start == bj)
                start_visible = visible;
            if (bj < g->B && visible) {
                const Rgb col = scale_color(s, val);
                unsigned char *p = row0 + 3 * (size_t)bj * g->cell;
                for (int i = 0; i < g->cell; i++)
                    p[3 * i] = col.r, p[3 * i + 1] = col.g, p[3 * i + 2] = col.b;
            }
        }
    }
}

/* The text printed in a cell: two decimals (fewer when the scale is wide), never "-0.00". */
static void cell_text(char txt[32], const char *fmt, float val)
{
    char num[24];
    snprintf(num, sizeof num, fmt, val);
    const int negative = num[0] == '-' && strspn(num + 1, "0.") < strlen(num + 1); /* no "-0.00" */
    /* a minus sign (U+2212), as on the colour bar, not a hyphen */
    snprintf(txt, 32, "%s%s", negative ? "\xe2\x88\x92" : "", num + (num[0] == '-'));
}

/* Print each visible cell's value inside it, dark or light for contrast.
 * Every number of a map gets the same size: as large as the widest one
 * allows in 84 % of the cell width, and its digits at most 40 % of the cell
 * height (DejaVu's digits are 0.63 of the line height). Only for unaveraged
 * maps with cells big enough to read. */
static int annotate_cells(Canvas *c, const Renderer *r, const float *v, int T, int causal,
                          const Grid *g, int x0, int y0, const Scale *s)
{
    /* One number format per map: two decimals, fewer when the scale is wide. */
    const float big = fmaxf(fabsf(s->lo), fabsf(s->hi));
    const char *fmt = big < 9.995f ? "%.2f" : big < 99.95f ? "%.1f" : "%.0f";
    float widest = 0.0f; /* at line height 100 px */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < (causal ? i + 1 : T); j++) {
            char txt[32];
            cell_text(txt, fmt, v[(size_t)i * T + j]);
            widest = fmaxf(widest, text_width(r, txt, 100.0f));
        }
    }
    if (!(widest > 0.0f))
        return MHAVIZ_OK;
    float px = fminf(100.0f * 0.84f * (float)g->cell / widest, 0.40f / 0.63f * (float)g->cell);
    px = floorf(fminf(px, 96.0f));
    if (px < 9.0f)
        return MHAVIZ_OK; /* too small to read: no numbers */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < (causal ? i + 1 : T); j++) {
            const float val = v[(size_t)i * T + j];
            char txt[32];
            cell_text(txt, fmt, val);
            const Rgb ink = luma(scale_color(s, val)) > 140 ? INK : WHITE;
            if (draw_text(c, r, txt, px, x0 + j * g->cell + g->cell / 2, y0 + i * g->cell + g->cell / 2,
                          MID, MID, ink, 0) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* Vertical colour bar at (x, y), w x h, top = s->hi; ticks and their labels
 * to the right at tick_px; when causal a "masked" swatch below. Returns
 * MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int draw_colour_bar(Canvas *c, const Renderer *r, const Scale *s, int x, int y, int w, int h,
                           float tick_px, int causal)
{
    for (int yy = 0; yy < h; yy++) {
        const float v = s->hi - (s->hi - s->lo) * ((float)yy + 0.5f) / (float)h;
        fill_rect(c, x, y + yy, w, 1, scale_color(s, v));
    }
    stroke_rect(c, x - 1, y - 1, w + 2, h + 2, FRAME);
    float tv[5];
    char tl[5][24];
    scale_ticks(s, tv, tl);
    for (int k = 0; k < 5; k++) {
        const int ty = y + (int)lroundf((s->hi - tv[k]) / (s->hi - s->lo) * (float)(h - 1));
        fill_rect(c, x + w, ty, 7, 2, INK);
        if (draw_text(c, r, tl[k], tick_px, x + w + 11, ty + 1, START, MID, INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    if (causal) {
        const int sy = y + h + (int)(0.8f * tick_px);
        fill_masked(c, x, sy, w, w, x, sy, s->mask_bg, s->mask_hatch);
        stroke_rect(c, x - 1, sy - 1, w + 2, w + 2, FRAME);
        if (draw_text(c, r, "masked", tick_px, x + w + 11, sy + w / 2, START, MID, INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Smallest "nice" step (1, 2, 5, 10, 20, 50, ...) with step * pitch >= min_pitch. */
static int label_step(float pitch, float min_pitch)
{
    int step = 1;
    for (int mag = 1;; mag *= 10) {
        static const int nice[3] = {1, 2, 5};
        for (int k = 0; k < 3; k++) {
            step = nice[k] * mag;
            if ((float)step * pitch >= min_pitch || mag > 100000)
                return step;
        }
    }
}

/* Which tokens get a label: every one when step is 1; else the first, the
 * last, and the multiples of step at least `need` tokens from both. */
typedef struct {
    int step; /* label every step-th token */
    int need; /* fewest tokens between two labels that keep them apart */
} LabelPick;

static LabelPick label_pick(float pitch, float min_pitch)
{
    LabelPick lp;
    lp.step = label_step(pitch, min_pitch);
    lp.need = (int)ceilf(min_pitch / pitch);
    if (lp.need < 1)
        lp.need = 1;
    return lp;
}

/* `need` for thinned labels of line height px, pitch pixels per token: the
 * end labels are centred at least px / 2 inside the map (draw_token_labels),
 * and the next label's centre must lie 1.1 px beyond theirs:
 * (t + 1/2) pitch - max(px, pitch) / 2 >= 1.1 px. */
static int label_need(float px, float pitch)
{
    const int need = (int)ceilf((1.1f * px + 0.5f * fmaxf(px, pitch)) / pitch - 0.5f);
    return need < 1 ? 1 : need;
}

static int is_labelled(int t, int T, LabelPick lp)
{
    if (lp.step <= 1 || t == 0 || t == T - 1)
        return 1;
    return t % lp.step == 0 && t >= lp.need && T - 1 - t >= lp.need;
}

/* English ordinal suffix: 2 -> "nd", 5 -> "th", 21 -> "st", 12 -> "th". */
static const char *ordinal(int n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* Labels of the labelled tokens into labels (T, LABEL_BYTES); returns the
 * widest width. */
static float make_labels(const Renderer *r, char *const *tokens, int T, LabelPick lp, float px, float max_w,
                         char *labels)
{
    float widest = 0.0f;
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        char *l = labels + (size_t)t * LABEL_BYTES;
        token_label(r, tokens[t], px, max_w, l);
        const float w = text_width(r, l, px);
        if (w > widest)
            widest = w;
    }
    return widest;
}

/* Query labels left of the rows (right-aligned at x_right) and key labels
 * under the columns (turned, ending at y_top), for the labelled tokens;
 * either side is skipped when its flag is 0. When thinned, a label is
 * never centred closer than half its line to the map's ends. */
static int draw_token_labels(Canvas *c, const Renderer *r, const char *labels, int T, LabelPick lp,
                             float pitch, float px, int map_x, int map_y, int x_right, int y_top,
                             int query, int key)
{
    const int half = (int)ceilf(0.5f * px), side = (int)lroundf(pitch * (float)T);
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        const char *l = labels + (size_t)t * LABEL_BYTES;
        int centre = (int)floorf(((float)t + 0.5f) * pitch);
        if (lp.step > 1 && side > 2 * half) {
            /* thinned: the end labels stay within the map's edges, clear of the next panel's */
            centre = centre < half ? half : centre > side - half ? side - half : centre;
        }
        if ((query && draw_text(c, r, l, px, x_right, map_y + centre, END, MID, INK, 0) != MHAVIZ_OK) ||
            (key && draw_text(c, r, l, px, map_x + centre, y_top, END, MID, INK, 1) != MHAVIZ_OK))
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

static float line_h(float px) { return ceilf(px * 1.15f); }

/* ------------------------------------------------------ one map, one figure */

/* Where everything of a single-map figure goes. */
typedef struct {
    RenderLayout pub;       /* size, map origin, cell, block, label step */
    Grid g;
    int map;                /* map side in pixels */
    float pitch;            /* pixels per token */
    LabelPick lp;           /* which tokens are labelled */
    float label_px, title_px, cap_px, lw, title_w;
    int m, frame, cap_h, bar_x, bar_w, key_top;
    char note[160];         /* under the title when not one labelled cell per token */
} Layout;

/* Lay out the figure for T tokens; fills labels (T, LABEL_BYTES) for the
 * labelled tokens. Left to right: caption, labels, map, colour bar, ticks;
 * top to bottom: title, note, map, key labels, caption. */
static void map_layout(const Renderer *r, int T, char *const *tokens, const char *title, Layout *L,
                       char *labels)
{
    memset(L, 0, sizeof *L);
    L->g = grid_for_slide(T, r->opt.cell_px);
    L->map = L->g.B * L->g.cell;
    L->pitch = (float)L->map / (float)T;
    /* Labels: never under LABEL_MIN_PX (capitals ~14 px high), so past
     * about 48 tokens per 1200 px only every step-th token is labelled. */
    LabelPick lp = label_pick(L->pitch, 1.1f * LABEL_MIN_PX);
    L->label_px = clampf(0.75f * (float)lp.step * L->pitch, LABEL_MIN_PX, fmaxf(28.0f, (float)L->map / 30.0f));
    if (lp.step > 1)
        lp.need = label_need(L->label_px, L->pitch);
    L->lp = lp;
    L->title_px = clampf((float)L->map / 24.0f, 30.0f, 50.0f);
    L->cap_px = clampf(fmaxf(L->label_px * 1.05f, (float)L->map / 40.0f), 22.0f, 36.0f);
    L->m = 24;
    L->frame = frame_px(L->map);
    L->lw = make_labels(r, tokens, T, lp, L->label_px, clampf(8.0f * L->label_px, 110.0f, 260.0f), labels);
    const int step = lp.step;

    const Grid *g = &L->g;
    if (g->k > 1 && step > 1)
        snprintf(L->note, sizeof L->note,
                 "blocks of %d\xc3\x97%d tokens averaged \xc2\xb7 every %d%s token labelled, and the last",
                 g->k, g->k, step, ordinal(step));
    else if (g->k > 1)
        snprintf(L->note, sizeof L->note, "blocks of %d\xc3\x97%d tokens averaged", g->k, g->k);
    else if (step > 1)
        snprintf(L->note, sizeof L->note, "every %d%s token labelled, and the last", step, ordinal(step));

    const int m = L->m, map = L->map;
    L->cap_h = (int)line_h(L->cap_px);
    L->pub.map_x = m + L->cap_h + 10 + (int)ceilf(L->lw) + 10 + L->frame;
    L->pub.map_y = m + (int)line_h(L->title_px) + (L->note[0] ? (int)line_h(L->cap_px) : 0) + 18;
    L->bar_w = (int)clampf((float)map / 24.0f, 24.0f, 40.0f);
    L->bar_x = L->pub.map_x + map + 36;
    const float tick_w = fmaxf(text_width(r, "\xe2\x88\x92" "0.888", L->cap_px), text_width(r, "masked", L->cap_px));
    int W = L->bar_x + L->bar_w + 11 + (int)ceilf(tick_w) + m;
    L->key_top = L->pub.map_y + map + 8 + L->frame;
    int H = L->key_top + (int)ceilf(L->lw) + 10 + L->cap_h + m;
    if (H < L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m)
        H = L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m;
    L->title_w = text_width(r, title ? title : "", L->title_px);
    if (W < (int)ceilf(L->title_w) + 2 * m)
        W = (int)ceilf(L->title_w) + 2 * m;
    L->pub.width = W;
    L->pub.height = H;
    L->pub.cell = g->cell;
    L->pub.block = g->k;
    L->pub.label_step = step;
    L->pub.frame = L->frame;
}

int render_heatmap_layout(Renderer *r, int T, char *const *tokens, const char *title, RenderLayout *out)
{
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        return MHAVIZ_ENOMEM;
    Layout L;
    map_layout(r, T, tokens, title, &L, labels);
    *out = L.pub;
    free(labels);
    return MHAVIZ_OK;
}

static int render_map(Renderer *r, Workspace *ws, const char *png_path, const float *v, int T,
                      char *const *tokens, int causal, const char *title, const Scale *s, char *err,
                      size_t errlen)
{
    int rc = MHAVIZ_OK;
    Canvas c = {0, 0, 0, NULL, NULL};
    Layout L;
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        goto oom;
    if (!title)
        title = "";
    map_layout(r, T, tokens, title, &L, labels);
    const int m = L.m, map = L.map, map_x = L.pub.map_x, map_y = L.pub.map_y;
    const int W = L.pub.width;
    if (canvas_init(&c, ws, W, L.pub.height) != MHAVIZ_OK)
        goto oom;

    /* Title, centred over the map where it fits, and the note under it. */
    int tx = map_x + map / 2;
    if (tx - (int)(L.title_w / 2) < m)
        tx = m + (int)(L.title_w / 2);
    if (tx + (int)(L.title_w / 2) > W - m)
        tx = W - m - (int)(L.title_w / 2);
    if (draw_text(&c, r, title, L.title_px, tx, m, MID, TOP, INK, 0) != MHAVIZ_OK ||
        (L.note[0] && draw_text(&c, r, L.note, L.cap_px, map_x + map / 2, m + (int)line_h(L.title_px), MID,
                                TOP, INK, 0) != MHAVIZ_OK))
        goto oom;

    draw_cells(&c, v, T, causal, &L.g, map_x, map_y, s);
    frame_region(&c, map_x, map_y, map, map, L.frame);
    const int annotate = r->opt.annotate == 1 || (r->opt.annotate == -1 && T <= 16);
    if (annotate && L.g.k == 1 && L.g.cell >= 18 &&
        annotate_cells(&c, r, v, T, causal, &L.g, map_x, map_y, s) != MHAVIZ_OK)
        goto oom;

    /* Labels and the axis captions. */
    if (draw_token_labels(&c, r, labels, T, L.lp, L.pitch, L.label_px, map_x, map_y, map_x - 10 - L.frame,
                          L.key_top, 1, 1) != MHAVIZ_OK ||
        draw_text(&c, r, "query", L.cap_px, m, map_y + map / 2, MID, TOP, INK, 1) != MHAVIZ_OK ||
        draw_text(&c, r, "key", L.cap_px, map_x + map / 2, L.key_top + (int)ceilf(L.lw) + 10, MID, TOP, INK, 0) !=
            MHAVIZ_OK)
        goto oom;

    if (draw_colour_bar(&c, r, s, L.bar_x, map_y, L.bar_w, map, L.cap_px, causal) != MHAVIZ_OK)
        goto oom;

    rc = write_png(&c, ws, png_path, err, errlen);
    goto cleanup;

oom:
    snprintf(err, errlen, "%s: out of memory drawing the picture", png_path);
    rc = MHAVIZ_ENOMEM;
cleanup:
    free(labels);
    return rc;
}

int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen)
{
    const RenderJob j = {RENDER_WEIGHTS, png_path, title, att, NULL, 0, NULL};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

int render_diverging(Renderer *r, const char *png_path, const float *values, int T,
                     char *const *tokens, int causal, const char *title,
                     char *err, size_t errlen)
{
    const RenderJob j = {RENDER_DIVERGING, png_path, title, values, NULL, 0, NULL};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

void render_difference(float *diff, const float *att, int n_heads, const float *single, int T)
{
    const size_t n = (size_t)T * T;
    for (size_t ij = 0; ij < n; ij++) {
        float sum = 0.0f;
        for (int h = 0; h < n_heads; h++)
            sum += att[(size_t)h * n + ij];
        diff[ij] = single[ij] - sum / (float)n_heads;
    }
}

/* --------------------------------------------------------------- overview */

/* Where everything of the overview goes. */
typedef struct {
    RenderOverviewLayout pub; /* size, grid, first map, panel steps, cell, labels */
    Grid g;
    LabelPick lp;
    float title_px, note_px, pt_px, cap_px, lp_px; /* lp_px = 0: no token labels */
    int m, gap, pth, cap_h, lm_left, lm_bottom, title_h;
    int bar_x, bar_y, bar_w, bar_h;
    char note[160]; /* second title line: blocks averaged, labels thinned */
} OvLayout;

/* The overview's axis captions sit in the corners its labels leave free:
 * "query ↓" left of each row's first map, on its title line, and "key →"
 * left of the key labels under the bottom row, so they cost no room. */
#define OV_QUERY "query \xe2\x86\x93"
#define OV_KEY "key \xe2\x86\x92"

/* Pixels left of a panel's map for the query labels (lw wide) or the key
 * caption, whichever is wider (*left), and under it for the key labels or
 * the key caption (*below). */
static void ov_margins(const Renderer *r, const OvLayout *L, float lw, int *left, int *below)
{
    const float capw = fmaxf(text_width(r, OV_QUERY, L->cap_px), text_width(r, OV_KEY, L->cap_px));
    *left = L->pub.frame + 6 + (int)ceilf(fmaxf(lw, capw)) + 6;
    *below = L->pub.frame + 6 + (int)ceilf(fmaxf(lw, (float)L->cap_h)) + 4;
}

/* The largest map side for cols columns in the area aw x ah (rows follow
 * from n_maps), lml pixels left of the maps and lmb under them, with the
 * colour bar in a column of its own (bar_in_slot 0) or in the last row's
 * empty last slot (1; 0 returned when there is no such slot or it is too
 * short for a bar). */
static int ov_fit(const OvLayout *L, int n_maps, int cols, int aw, int ah, int lml, int lmb, int bar_block,
                  int bar_in_slot, int causal)
{
    const int rows = (n_maps + cols - 1) / cols;
    if (bar_in_slot && rows * cols == n_maps)
        return 0;
    const int side_w = (aw - lml - (bar_in_slot ? 0 : bar_block) - (cols - 1) * L->gap) / cols;
    const int side_h = (ah - lmb - rows * L->pth - (rows - 1) * L->gap) / rows;
    int side = side_w < side_h ? side_w : side_h;
    if (bar_in_slot) {
        /* the slot: under the key labels of the panel above, beside nothing */
        const int bar_h = side + L->pth + L->gap - lmb - (int)L->pt_px - (causal ? L->bar_w + (int)(1.5f * L->pt_px) : 0);
        if (bar_block - L->gap > side || bar_h < 2 * side / 5 || bar_h < 60)
            return 0;
    }
    return side;
}

/* Lay out the overview of n_maps maps of T tokens; fills labels (T,
 * LABEL_BYTES) for the labelled tokens. The grid (rows x cols) is the one
 * giving the biggest square maps; token labels get the largest size
 * between H/50 and H/32 at which every token has its own line, else the
 * smallest with only every step-th token labelled, else none. */
static void overview_layout(const Renderer *r, int n_maps, int T, char *const *tokens,
                            int causal, OvLayout *L, char *labels)
{
    memset(L, 0, sizeof *L);
    const int W = r->opt.overview_w, H = r->opt.overview_h;
    L->pub.width = W;
    L->pub.height = H;
    L->m = (int)clampf((float)H / 60.0f, 6.0f, 32.0f);
    L->gap = L->m;
    L->title_px = clampf((float)H / 26.0f, 14.0f, 56.0f);
    L->pt_px = clampf((float)H / 34.0f, 11.0f, 40.0f); /* panel titles, ticks */
    L->note_px = L->cap_px = 0.9f * L->pt_px;
    L->cap_h = (int)line_h(L->cap_px);
    L->pth = (int)line_h(L->pt_px) + 4;
    L->bar_w = (int)clampf((float)W / 64.0f, 12.0f, 40.0f);
    L->pub.frame = frame_px(H / 3);
    const float lp_max = clampf((float)H / 32.0f, 10.0f, 40.0f), lp_min = clampf((float)H / 50.0f, 9.0f, 30.0f);
    const int tick_w = (int)ceilf(fmaxf(text_width(r, "masked", L->pt_px), text_width(r, "0.75", L->pt_px)));
    const int bar_block = L->gap + L->bar_w + 11 + tick_w;

    /* Labels are measured once at 100 px; widths scale with the size. */
    const LabelPick all = {1, 1};
    const float w100 = make_labels(r, tokens, T, all, 100.0f, 600.0f, labels);

    /* The note line (blocks averaged, labels thinned) is known only at the
     * end; its room is kept whenever T is large enough to need it. */
    for (int pass = 0; pass < 2; pass++) {
        L->title_h = (int)line_h(L->title_px) + (pass == 1 ? (int)line_h(L->note_px) : 0);
        const int ay = L->m + L->title_h + L->m / 2, aw = W - 2 * L->m, ah = H - L->m - ay;
        int best = 0, best_cols = 1, best_slot = 0;
        float best_lp = 0.0f;
        int best_step1 = 0;
        /* Descend from the largest label size; stop at the first at which
         * every token has a line of its own. */
        for (float lp = lp_max; lp >= lp_min - 0.01f && !best_step1; lp -= 1.0f) {
            int lml, lmb;
            ov_margins(r, L, w100 * lp / 100.0f, &lml, &lmb);
            int side = 0, cols = 1, slot = 0;
            for (int k = 1; k <= n_maps; k++)
                for (int sl = 0; sl < 2; sl++) {
                    const int sd = ov_fit(L, n_maps, k, aw, ah, lml, lmb, bar_block, sl, causal);
                    if (sd > side)
                        side = sd, cols = k, slot = sl;
                }
            const Grid g = grid_for_panel(T, side > 1 ? side : 1);
            const float pitch = (float)(g.B * g.cell) / (float)T;
            if (pitch >= 1.1f * lp) {
                best = side, best_cols = cols, best_slot = slot, best_lp = lp, best_step1 = 1;
            } else if (lp <= lp_min + 0.5f) {
                /* thinned labels at the smallest size, when the maps are big enough to carry some */
                best = side, best_cols = cols, best_slot = slot;
                best_lp = (float)(g.B * g.cell) >= 4.0f * lp ? lp : 0.0f;
            }
        }
        if (best_lp == 0.0f) {
            /* no labels: captions only */
            int lml, lmb;
            ov_margins(r, L, 0.0f, &lml, &lmb);
            best = 0;
            for (int k = 1; k <= n_maps; k++)
                for (int sl = 0; sl < 2; sl++) {
                    const int sd = ov_fit(L, n_maps, k, aw, ah, lml, lmb, bar_block, sl, causal);
                    if (sd > best)
                        best = sd, best_cols = k, best_slot = sl;
                }
        }
        if (best < 1)
            best = 1; /* more panels than the figure holds: tiny maps, clipped at the edges */
        L->g = grid_for_panel(T, best);
        const int mp = L->g.B * L->g.cell;
        const float pitch = (float)mp / (float)T;
        L->lp_px = best_lp;
        L->lp = label_pick(pitch, 1.1f * (best_lp > 0.0f ? best_lp : 1.0f));
        if (L->lp.step > 1)
            L->lp.need = label_need(best_lp, pitch);
        L->pub.label_step = best_lp > 0.0f ? L->lp.step : 0;
        L->note[0] = '\0';
        char blocks[64] = "";
        if (L->g.k > 1) {
            const int kmin = T / L->g.B; /* even blocks hold kmin or kmin + 1 tokens a side */
            if (kmin == L->g.k || T % L->g.B == 0)
                snprintf(blocks, sizeof blocks, "blocks of %d\xc3\x97%d tokens averaged", L->g.k, L->g.k);
            else
                snprintf(blocks, sizeof blocks, "blocks of %d to %d tokens a side averaged", kmin, L->g.k);
        }
        if (blocks[0] && L->pub.label_step > 1)
            snprintf(L->note, sizeof L->note, "%s \xc2\xb7 every %d%s token labelled, and the last", blocks,
                     L->lp.step, ordinal(L->lp.step));
        else if (blocks[0])
            snprintf(L->note, sizeof L->note, "%s", blocks);
        else if (L->pub.label_step > 1)
            snprintf(L->note, sizeof L->note, "every %d%s token labelled, and the last", L->lp.step,
                     ordinal(L->lp.step));
        if (L->note[0] && pass == 0)
            continue; /* lay out again with room for the note */

        /* Place the grid, centred in the area with the colour bar. */
        const float lw = best_lp > 0.0f ? make_labels(r, tokens, T, L->lp, best_lp, 6.0f * best_lp, labels) : 0.0f;
        ov_margins(r, L, lw, &L->lm_left, &L->lm_bottom);
        const int cols = best_cols, rows = (n_maps + cols - 1) / cols;
        const int gw = L->lm_left + cols * mp + (cols - 1) * L->gap + (best_slot ? 0 : bar_block);
        const int gh = rows * (L->pth + mp) + (rows - 1) * L->gap + L->lm_bottom;
        L->pub.cols = cols;
        L->pub.rows = rows;
        L->pub.side = mp;
        L->pub.cell = L->g.cell;
        L->pub.block = L->g.k;
        L->pub.label_px = best_lp;
        L->pub.dx = mp + L->gap;
        L->pub.dy = L->pth + mp + L->gap;
        L->pub.map_x = L->m + (aw - gw) / 2 + L->lm_left;
        L->pub.map_y = ay + (ah - gh) / 2 + L->pth;
        const int sw = causal ? L->bar_w + (int)(1.5f * L->pt_px) : 0; /* the "masked" swatch under the bar */
        if (best_slot) {
            L->bar_x = L->pub.map_x + (cols - 1) * L->pub.dx + (mp - (L->bar_w + 11 + tick_w)) / 2;
            L->bar_y = L->pub.map_y + (rows - 2) * L->pub.dy + mp + L->lm_bottom + (int)L->pt_px;
            L->bar_h = L->pub.map_y + (rows - 1) * L->pub.dy + mp - sw - L->bar_y;
        } else {
            L->bar_x = L->pub.map_x + (cols - 1) * L->pub.dx + mp + L->pub.frame + L->gap;
            L->bar_y = L->pub.map_y;
            L->bar_h = (rows - 1) * L->pub.dy + mp - sw;
            if (L->bar_h < mp / 2)
                L->bar_h = mp / 2;
        }
        break;
    }
}

int render_overview_layout(Renderer *r, int n_maps, int T, char *const *tokens, int causal,
                           RenderOverviewLayout *out)
{
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        return MHAVIZ_ENOMEM;
    OvLayout L;
    overview_layout(r, n_maps, T, tokens, causal, &L, labels);
    *out = L.pub;
    free(labels);
    return MHAVIZ_OK;
}

int render_overview(Renderer *r, const char *png_path, const float *const *maps, int n_maps,
                    int T, char *const *tokens, int causal, const char *title,
                    char *const *panel_titles, char *err, size_t errlen)
{
    const RenderJob j = {RENDER_OVERVIEW, png_path, title, NULL, maps, n_maps, panel_titles};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

static int draw_overview(Renderer *r, Workspace *ws, const char *png_path, const float *const *maps,
                         int n_maps, int T, char *const *tokens, int causal, const char *title,
                         char *const *panel_titles, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
    Canvas c = {0, 0, 0, NULL, NULL};
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    const Scale s = weights_scale(r);
    OvLayout L;
    if (!labels)
        goto oom;
    overview_layout(r, n_maps, T, tokens, causal, &L, labels);
    const int W = L.pub.width, H = L.pub.height, m = L.m, mp = L.pub.side, cols = L.pub.cols;
    if (canvas_init(&c, ws, W, H) != MHAVIZ_OK)
        goto oom;

    char head[LABEL_BYTES * 2];
    snprintf(head, sizeof head, "%s", title ? title : "");
    ellipsize(r, head, sizeof head, L.title_px, (float)(W - 2 * m));
    if (draw_text(&c, r, head, L.title_px, W / 2, m, MID, TOP, INK, 0) != MHAVIZ_OK ||
        (L.note[0] &&
         draw_text(&c, r, L.note, L.note_px, W / 2, m + (int)line_h(L.title_px), MID, TOP, INK, 0) != MHAVIZ_OK))
        goto oom;

    const float pitch = (float)mp / (float)T;
    for (int p = 0; p < n_maps; p++) {
        const int row = p / cols, col = p % cols;
        const int x = L.pub.map_x + col * L.pub.dx, y = L.pub.map_y + row * L.pub.dy;
        char pt[LABEL_BYTES * 2];
        snprintf(pt, sizeof pt, "%s", panel_titles && panel_titles[p] ? panel_titles[p] : "");
        /* A long title first gets a smaller font (down to 80 %), then an ellipsis. */
        const float avail = (float)mp; /* wider would reach the "query" caption or the next title */
        float tpx = L.pt_px;
        while (tpx > 0.8f * L.pt_px && text_width(r, pt, tpx) > avail)
            tpx -= 1.0f;
        ellipsize(r, pt, sizeof pt, tpx, avail);
        if (draw_text(&c, r, pt, tpx, x + mp / 2, y - 4 - L.pub.frame, MID, BOTTOM, INK, 0) != MHAVIZ_OK)
            goto oom;
        draw_cells(&c, maps[p], T, causal, &L.g, x, y, &s);
        frame_region(&c, x, y, mp, mp, L.pub.frame);
        const int first_col = col == 0, bottom = p + cols >= n_maps;
        if (L.lp_px > 0.0f &&
            draw_token_labels(&c, r, labels, T, L.lp, pitch, L.lp_px, x, y, x - 6 - L.pub.frame,
                              y + mp + 6 + L.pub.frame, first_col, bottom) != MHAVIZ_OK)
            goto oom;
        /* Axis captions in the free corners: "query ↓" on each row's title
         * line, "key →" beside the bottom row's key labels. */
        const int cx = x - 6 - L.pub.frame;
        if ((first_col && draw_text(&c, r, OV_QUERY, L.cap_px, cx, y - 4 - L.pub.frame, END, BOTTOM, INK, 0) !=
                              MHAVIZ_OK) ||
            (first_col && row == L.pub.rows - 1 &&
             draw_text(&c, r, OV_KEY, L.cap_px, cx, y + mp + 6 + L.pub.frame, END, TOP, INK, 0) != MHAVIZ_OK))
            goto oom;
    }

    if (draw_colour_bar(&c, r, &s, L.bar_x, L.bar_y, L.bar_w, L.bar_h, L.pt_px, causal) != MHAVIZ_OK)
        goto oom;
    rc = write_png(&c, ws, png_path, err, errlen);
    goto cleanup;

oom:
    snprintf(err, errlen, "%s: out of memory drawing the picture", png_path);
    rc = MHAVIZ_ENOMEM;
cleanup:
    free(labels);
    return rc;
}

/* --------------------------------------------------------------- the jobs */

static int render_job(Renderer *r, Workspace *ws, const RenderJob *j, int T, char *const *tokens, int causal,
                      char *err, size_t errlen)
{
    Scale s;
    switch (j->kind) {
    case RENDER_WEIGHTS:
        s = weights_scale(r);
        return render_map(r, ws, j->path, j->values, T, tokens, causal, j->title, &s, err, errlen);
    case RENDER_DIVERGING:
        s = diverging_scale(j->values, T, causal);
        return render_map(r, ws, j->path, j->values, T, tokens, causal, j->title, &s, err, errlen);
    case RENDER_OVERVIEW:
        return draw_overview(r, ws, j->path, j->maps, j->n_maps, T, tokens, causal, j->title, j->panel_titles,
                             err, errlen);
    }
    return MHAVIZ_OK;
}

int render_jobs(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens, int causal,
                char *err, size_t errlen)
{
    return render_jobs_progress(r, jobs, n_jobs, T, tokens, causal, NULL, NULL, err, errlen);
}

int render_jobs_progress(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens,
                         int causal, RenderProgress progress, void *ctx, char *err, size_t errlen)
{
    int *rcs = calloc((size_t)n_jobs + 1, sizeof *rcs);
    char *errs = calloc((size_t)n_jobs + 1, MHAVIZ_ERRLEN);
    if (!rcs || !errs) {
        free(rcs);
        free(errs);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    /* Each picture is independent work writing its own file; each thread
     * draws its pictures one after the other in its own workspace. */
    int done = 0, reported = 0; /* pictures finished; the most the caller has reported */
    /* The glyphs every thread rasterised, so that no glyph is rasterised
     * by each thread in turn (the pictures share most of their text). */
    GlyphCache shared = {NULL, 0, 0, NULL, 0, 0, NULL};
#pragma omp parallel if (n_jobs > 1)
    {
        Workspace ws = {NULL, 0, NULL, {NULL, 0, 0, NULL, 0, 0, NULL}};
        int is_caller = 1;
        ThreadPin pin = {0};
#ifdef _OPENMP
        is_caller = omp_get_thread_num() == 0;
        if (omp_get_num_threads() > 1)
            ws.glyphs.shared = &shared;
        threads_pin(omp_get_thread_num(), omp_get_num_threads(), &pin); /* a core each (threads.h) */
#endif
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < n_jobs; k++) {
            rcs[k] = render_job(r, &ws, &jobs[k], T, tokens, causal, errs + (size_t)k * MHAVIZ_ERRLEN,
                                MHAVIZ_ERRLEN);
            int now_done;
#pragma omp atomic capture
            now_done = ++done;
            if (progress && is_caller) {
                progress(ctx, (double)now_done / n_jobs);
                reported = now_done;
            }
        }
        workspace_free(&ws);
        threads_unpin(&pin);
    }
    free(shared.slot);
    free(shared.pool);
    if (progress && reported < n_jobs) /* another thread finished the last picture */
        progress(ctx, 1.0);
    int rc = MHAVIZ_OK;
    for (int k = 0; k < n_jobs && rc == MHAVIZ_OK; k++) {
        if (rcs[k] != MHAVIZ_OK) {
            rc = rcs[k];
            snprintf(err, errlen, "%s", errs + (size_t)k * MHAVIZ_ERRLEN);
        }
    }
    free(rcs);
    free(errs);
    return rc;
}
