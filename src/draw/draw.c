/* draw.c — the drawing primitives (see draw.h): the font, the canvas and
 * its shapes, the colour maps; text is in draw_text.c.
 *
 * Text comes from a TrueType font through stb_truetype: each line of text
 * is rasterised into its own coverage mask (one glyph at a time, merged
 * with max so neighbouring glyph boxes never clobber each other), then
 * blended onto the canvas, turned 90 degrees when asked. Each glyph's
 * bitmap is kept with the canvas for the next time it is drawn.
 *
 * Shapes: the canvas is (h, stride) bytes, row-major, each row w RGB
 * pixels; masks and glyph bitmaps are (h, w) coverage bytes 0..255.
 *
 * Each shape's pixels are painted by a static *_px function; the public
 * function calls it and, when the canvas records SVG, appends the shape's
 * element (draw_svg.c). */
#include "draw/draw.h"
#include "draw/draw_parts.h"
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

int draw_glyph_for(const DrawFont *f, int cp)
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

/* f's family name (the name table's record 1, Windows Unicode English, in
 * UTF-16BE) into f->family, its printable ASCII only, quotes and
 * backslashes left out (SVG quotes it); "" when it has none. */
static void font_name(DrawFont *f)
{
    int len = 0;
    const char *name = stbtt_GetFontNameString(&f->info, &len, STBTT_PLATFORM_ID_MICROSOFT,
                                               STBTT_MS_EID_UNICODE_BMP, STBTT_MS_LANG_ENGLISH, 1);
    size_t n = 0;
    for (int i = 0; name && i + 1 < len && n + 1 < sizeof f->family; i += 2) {
        const int unit = (unsigned char)name[i] << 8 | (unsigned char)name[i + 1];
        if (unit >= 0x20 && unit < 0x7F && unit != '\'' && unit != '"' && unit != '\\')
            f->family[n++] = (char)unit;
    }
    f->family[n] = '\0';
}

int draw_font_has(const DrawFont *f, int cp)
{
    const int g = draw_glyph_for(f, cp);
    return g > 0 && (g != f->replacement || cp == 0xFFFD);
}

const char *draw_font_family(const DrawFont *f)
{
    return f->family;
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
    font_name(f);
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
    if (cell < SVG_CELL_MIN_PX || n > SVG_CELLS_MAX) { /* a fine grid: its pixels */
        draw_svg_image(c->svg, c, x, y, n * cell, n * cell);
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

/* ------------------------------------------------------------- colour maps */

static const DrawCmapEntry CMAPS[] = {
    /* Light grey with darker hatching: no colour of these maps is a grey this light. */
    {"viridis", cmap_viridis, 1, {222, 222, 222}, {168, 168, 168}},
    {"magma", cmap_magma, 1, {222, 222, 222}, {168, 168, 168}},
    {"cividis", cmap_cividis, 1, {222, 222, 222}, {150, 150, 150}},
    /* A grey map needs a mask that is not grey: pale rose with rose hatching. */
    {"gray", cmap_gray, 1, {250, 218, 214}, {214, 120, 110}},
    /* Diverging, for the scores (their mask colours are the scores' own). */
    {"rdbu", cmap_rdbu, 0, {0, 0, 0}, {0, 0, 0}},
};
#define N_CMAPS (sizeof CMAPS / sizeof CMAPS[0])

DrawCmap draw_cmap(const char *name)
{
    for (size_t i = 0; i < N_CMAPS; i++)
        if (strcmp(name, CMAPS[i].name) == 0)
            return CMAPS[i].table;
    return NULL;
}

const DrawCmapEntry *draw_cmap_choosable(const char *name)
{
    for (size_t i = 0; i < N_CMAPS; i++)
        if (CMAPS[i].choosable && strcmp(name, CMAPS[i].name) == 0)
            return &CMAPS[i];
    return NULL;
}

void draw_cmap_names(char *buf, size_t cap, int mark_default)
{
    size_t n_choosable = 0, k = 0, len = 0;
    for (size_t i = 0; i < N_CMAPS; i++)
        n_choosable += (size_t)CMAPS[i].choosable;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < N_CMAPS && len < cap; i++) {
        if (!CMAPS[i].choosable)
            continue;
        const char *sep = k == 0 ? "" : k + 1 == n_choosable ? " or " : ", ";
        const int dflt = mark_default && strcmp(CMAPS[i].name, DRAW_CMAP_DEFAULT) == 0;
        const int w = snprintf(buf + len, cap - len, "%s%s%s", sep, CMAPS[i].name, dflt ? " (default)" : "");
        len += w > 0 ? (size_t)w : 0;
        k++;
    }
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

int draw_nomem(char *err, size_t errlen, const char *path)
{
    snprintf(err, errlen, "%s: out of memory drawing the picture", path);
    return MHAVIZ_ENOMEM;
}
