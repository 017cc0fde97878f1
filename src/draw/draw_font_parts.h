/* draw_font_parts.h — the font's insides, for the files of draw/ that set
 * text (draw_text.c) or name its glyphs (draw_svg.c); not for use outside
 * draw/. */
#ifndef MHAVIZ_DRAW_FONT_PARTS_H
#define MHAVIZ_DRAW_FONT_PARTS_H

#include "draw/draw_font.h"

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

/* The glyph drawn for code point cp: the font's own, else its U+FFFD, else
 * -1 (a hollow box is drawn). ASCII (nearly every character drawn) comes
 * from a table: the font's character map is searched once per code point,
 * not per use. */
int draw_glyph_for(const DrawFont *f, int cp);

/* 1 when f has a glyph of its own for code point cp (not U+FFFD's). */
int draw_font_has(const DrawFont *f, int cp);

/* f's family name, as SVG names the font of a text. */
const char *draw_font_family(const DrawFont *f);

#endif
