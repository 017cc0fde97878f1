/* draw_svg.c — the SVG beside the PNG: one layout, two outputs.
 *
 * The idea: a picture is laid out once, by the calls it makes to draw.h.
 * A canvas that records SVG (draw_svg_record) keeps, besides its pixels, a
 * document to which every primitive appends the element it painted: a
 * filled rectangle a <rect>, a line a <line>, a text a <text> with the
 * font, size, baseline and anchor the pixels got, hatching a <rect> filled
 * with a <pattern>. draw_write_png (draw.c) then writes the document
 * beside the PNG. Nothing in pictures/ knows: every picture gets its SVG
 * for free, and the pixels are the same with or without it.
 *
 * Coordinates are the canvas's: pixel (x, y) covers [x, x + 1) x
 * [y, y + 1) in the SVG's user units, so a w x h canvas is a w x h
 * viewBox. A map's cells are <rect>s (neighbours of one colour merged)
 * while they are at least SVG_CELL_MIN_PX a side and at most
 * SVG_CELLS_MAX a side; a finer grid (hundreds of tokens) is one embedded
 * PNG <image> of its pixels, cut from the canvas, as no <rect> would be
 * larger than a pixel or two. */
#include "draw/draw_svg.h"
#include "draw/draw_font_parts.h"
#include "draw/draw_png.h"
#include "text/utf8.h"

#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* A hatching pattern of the document: <pattern id="hN">. */
typedef struct {
    int phase; /* (ox + oy) mod 8 of the hatching's origin */
    DrawRgb bg, hatch;
} SvgPattern;

struct DrawSvg {
    char *buf;       /* (cap) the document so far: its first len bytes */
    size_t len, cap;
    int failed;      /* out of memory: the document is incomplete */
    /* The filled rectangle not yet written: the next one of the same fill
     * that continues it (to the right, or below with the same columns) is
     * merged in, so rows of equal cells and a colour bar's equal stripes
     * become one element. fill: a colour 0xRRGGBB, or -1 - pattern index. */
    int pending, px, py, pw, ph, pfill;
    SvgPattern *pattern; /* (n_patterns) the patterns defined so far */
    int n_patterns, patterns_cap;
};

/* Append printf-style text to the document. */
static void put(DrawSvg *s, const char *fmt, ...)
{
    if (s->failed)
        return;
    for (;;) {
        va_list ap;
        va_start(ap, fmt);
        const int n = vsnprintf(s->buf + s->len, s->cap - s->len, fmt, ap);
        va_end(ap);
        if (n < 0) {
            s->failed = 1;
            return;
        }
        if ((size_t)n < s->cap - s->len) {
            s->len += (size_t)n;
            return;
        }
        size_t cap = 2 * s->cap;
        while (cap - s->len <= (size_t)n)
            cap *= 2;
        char *buf = realloc(s->buf, cap);
        if (!buf) {
            s->failed = 1;
            return;
        }
        s->buf = buf;
        s->cap = cap;
    }
}

/* v with at most two decimals and no trailing zeros ("12", "12.5", "-0.25"). */
static const char *num(char buf[32], float v)
{
    snprintf(buf, 32, "%.2f", (double)v);
    char *end = buf + strlen(buf);
    while (end[-1] == '0')
        *--end = '\0';
    if (end[-1] == '.')
        *--end = '\0';
    if (strcmp(buf, "-0") == 0)
        strcpy(buf, "0");
    return buf;
}

static int rgb(DrawRgb c)
{
    return c.r << 16 | c.g << 8 | c.b;
}

/* Write the pending rectangle. */
static void flush(DrawSvg *s)
{
    if (!s->pending)
        return;
    s->pending = 0;
    if (s->pfill >= 0)
        put(s, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"#%06x\"/>\n", s->px, s->py, s->pw,
            s->ph, s->pfill);
    else
        put(s, "<rect x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" fill=\"url(#h%d)\"/>\n", s->px, s->py, s->pw,
            s->ph, -1 - s->pfill);
}

DrawSvg *draw_svg_new(void)
{
    DrawSvg *s = calloc(1, sizeof *s);
    if (s && !(s->buf = malloc(s->cap = 64 << 10))) {
        free(s);
        return NULL;
    }
    return s;
}

void draw_svg_free(DrawSvg *s)
{
    if (!s)
        return;
    free(s->buf);
    free(s->pattern);
    free(s);
}

void draw_svg_begin(DrawSvg *s, int w, int h)
{
    s->len = 0;
    s->failed = 0;
    s->pending = 0;
    s->n_patterns = 0;
    /* xml:space="preserve": a token's spaces are kept as the PNG shows them */
    put(s, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
           "<svg xmlns=\"http://www.w3.org/2000/svg\" xmlns:xlink=\"http://www.w3.org/1999/xlink\" version=\"1.1\" "
           "width=\"%d\" height=\"%d\" viewBox=\"0 0 %d %d\" xml:space=\"preserve\">\n"
           "<rect x=\"0\" y=\"0\" width=\"%d\" height=\"%d\" fill=\"#ffffff\"/>\n",
        w, h, w, h, w, h);
}

/* A w x h rectangle at (x, y) in fill (0xRRGGBB, or a pattern's), joined
 * to the pending one when it continues it. */
static void draw_svg_fill(DrawSvg *s, int x, int y, int w, int h, int fill)
{
    if (w <= 0 || h <= 0)
        return;
    if (s->pending && s->pfill == fill) {
        if (y == s->py && h == s->ph && x == s->px + s->pw) { /* continues it to the right */
            s->pw += w;
            return;
        }
        if (x == s->px && w == s->pw && y == s->py + s->ph) { /* continues it below */
            s->ph += h;
            return;
        }
    }
    flush(s);
    s->pending = 1;
    s->px = x, s->py = y, s->pw = w, s->ph = h, s->pfill = fill;
}

void draw_svg_rect(DrawSvg *s, int x, int y, int w, int h, DrawRgb col)
{
    draw_svg_fill(s, x, y, w, h, rgb(col));
}

/* The pattern of hatching from origin (ox, oy) in bg and hatch, defined
 * when first used; its fill (-1 - index), or 0 when out of memory. The
 * canvas's hatching is pixel (x, y) in hatch when (x - ox + y - oy) mod 8
 * < 2: pixel centres with x + y + 1 in {1, 2} + phase (mod 8), the band
 * x + y in [phase + 0.5, phase + 2.5] of a tile 8 wide, as polygons. */
static int pattern(DrawSvg *s, int ox, int oy, DrawRgb bg, DrawRgb hatch)
{
    const int phase = ((ox + oy) % 8 + 8) % 8;
    for (int k = 0; k < s->n_patterns; k++) {
        const SvgPattern *p = &s->pattern[k];
        if (p->phase == phase && rgb(p->bg) == rgb(bg) && rgb(p->hatch) == rgb(hatch))
            return -1 - k;
    }
    if (s->n_patterns == s->patterns_cap) {
        const int cap = s->patterns_cap ? 2 * s->patterns_cap : 8;
        SvgPattern *p = realloc(s->pattern, (size_t)cap * sizeof *p);
        if (!p) {
            s->failed = 1;
            return 0;
        }
        s->pattern = p;
        s->patterns_cap = cap;
    }
    const int k = s->n_patterns++;
    s->pattern[k] = (SvgPattern){phase, bg, hatch};
    flush(s);
    put(s, "<defs><pattern id=\"h%d\" patternUnits=\"userSpaceOnUse\" x=\"0\" y=\"0\" width=\"8\" height=\"8\">"
           "<rect width=\"8\" height=\"8\" fill=\"#%06x\"/>",
        k, rgb(bg));
    /* the band and its copies 8 apart that cross the tile (x + y from 0 to 16) */
    for (int b = -8; b <= 8; b += 8) {
        char a0[32], a1[32], a2[32], a3[32];
        const float lo = (float)phase + 0.5f + (float)b, hi = lo + 2.0f;
        put(s, "<polygon points=\"%s,-8 -8,%s -8,%s %s,-8\" fill=\"#%06x\"/>", num(a0, lo + 8.0f),
            num(a1, lo + 8.0f), num(a2, hi + 8.0f), num(a3, hi + 8.0f), rgb(hatch));
    }
    put(s, "</pattern></defs>\n");
    return -1 - k;
}

void draw_svg_hatched(DrawSvg *s, int x, int y, int w, int h, int ox, int oy, DrawRgb bg, DrawRgb hatch)
{
    if (w <= 0 || h <= 0)
        return;
    const int fill = pattern(s, ox, oy, bg, hatch);
    if (fill < 0)
        draw_svg_fill(s, x, y, w, h, fill);
}

void draw_svg_stroke(DrawSvg *s, float x, float y, float w, float h, float width, DrawRgb col)
{
    char a[4][32], b[32];
    flush(s);
    put(s, "<rect x=\"%s\" y=\"%s\" width=\"%s\" height=\"%s\" fill=\"none\" stroke=\"#%06x\" stroke-width=\"%s\"/>\n",
        num(a[0], x), num(a[1], y), num(a[2], w), num(a[3], h), rgb(col), num(b, width));
}

void draw_svg_line(DrawSvg *s, float x0, float y0, float x1, float y1, float width, DrawRgb col)
{
    char a[4][32], b[32];
    flush(s);
    put(s, "<line x1=\"%s\" y1=\"%s\" x2=\"%s\" y2=\"%s\" stroke=\"#%06x\" stroke-width=\"%s\" "
           "stroke-linecap=\"round\"/>\n",
        num(a[0], x0), num(a[1], y0), num(a[2], x1), num(a[3], y1), rgb(col), num(b, width));
}

/* 1 when XML 1.0 may hold code point cp in a document (its Char rule). */
static int xml_char(unsigned cp)
{
    return cp == 0x9 || cp == 0xA || cp == 0xD || (cp >= 0x20 && cp <= 0xD7FF) || (cp >= 0xE000 && cp <= 0xFFFD) ||
           (cp >= 0x10000 && cp <= 0x10FFFF);
}

/* Append UTF-8 text t as XML character data: & < > " escaped; a code
 * point the font has no glyph for (a control character, a malformed byte)
 * written as U+FFFD, as the PNG draws it. */
static void put_text(DrawSvg *s, const DrawFont *f, const char *t)
{
    while (*t && !s->failed) {
        unsigned cp;
        const int len = utf8_decode((const unsigned char *)t, SIZE_MAX, &cp);
        const char *at = t;
        t += len ? len : 1;
        if (!len || !xml_char(cp) || !draw_font_has(f, (int)cp)) {
            put(s, "\xef\xbf\xbd");
            continue;
        }
        switch (cp) {
        case '&': put(s, "&amp;"); break;
        case '<': put(s, "&lt;"); break;
        case '>': put(s, "&gt;"); break;
        case '"': put(s, "&quot;"); break;
        default: put(s, "%.*s", (int)(t - at), at);
        }
    }
}

void draw_svg_text(DrawSvg *s, const DrawFont *f, const char *t, float em, float x, float y, int along, int rotated,
                   DrawRgb col)
{
    static const char *const anchor[] = {"", " text-anchor=\"middle\"", " text-anchor=\"end\""};
    char ax[32], ay[32], size[32];
    flush(s);
    put(s, "<text x=\"%s\" y=\"%s\" font-family=\"'", num(ax, x), num(ay, y));
    put_text(s, f, draw_font_family(f));
    put(s, "', sans-serif\" font-size=\"%s\" fill=\"#%06x\"%s", num(size, em), rgb(col), anchor[along]);
    if (rotated) /* read bottom to top, turned about the anchor */
        put(s, " transform=\"rotate(-90 %s %s)\"", ax, ay);
    put(s, ">");
    put_text(s, f, t);
    put(s, "</text>\n");
}

/* Append n bytes as base64 (RFC 4648). */
static void put_base64(DrawSvg *s, const unsigned char *d, size_t n)
{
    static const char digits[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    char quad[5] = "";
    for (size_t i = 0; i < n && !s->failed; i += 3) {
        const uint32_t v = (uint32_t)d[i] << 16 | (i + 1 < n ? (uint32_t)d[i + 1] << 8 : 0) | (i + 2 < n ? d[i + 2] : 0);
        quad[0] = digits[v >> 18];
        quad[1] = digits[v >> 12 & 63];
        quad[2] = i + 1 < n ? digits[v >> 6 & 63] : '=';
        quad[3] = i + 2 < n ? digits[v & 63] : '=';
        put(s, "%s", quad);
    }
}

void draw_svg_image(DrawSvg *s, int x, int y, int w, int h, const unsigned char *px, size_t stride)
{
    int len;
    unsigned char *png = draw_png_encode(px, stride, w, h, &len);
    if (!png) {
        s->failed = 1;
        return;
    }
    flush(s);
    /* pixelated: a viewer that scales the slide up keeps the cells sharp */
    put(s, "<image x=\"%d\" y=\"%d\" width=\"%d\" height=\"%d\" preserveAspectRatio=\"none\" "
           "image-rendering=\"optimizeSpeed\" style=\"image-rendering:pixelated\" xlink:href=\"data:image/png;base64,",
        x, y, w, h);
    put_base64(s, png, (size_t)len);
    put(s, "\"/>\n");
    free(png);
}

const unsigned char *draw_svg_document(DrawSvg *s, size_t *len)
{
    flush(s);
    const size_t body = s->len;
    put(s, "</svg>\n");
    *len = s->len;
    s->len = body; /* still open: the next element is written over the end tag */
    return s->failed ? NULL : (const unsigned char *)s->buf;
}
