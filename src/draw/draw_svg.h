/* draw_svg.h — the SVG document a canvas records (draw_svg.c says how):
 * each function appends the element its primitive painted; a failure (out
 * of memory) is kept for draw_svg_document. It knows no canvas: draw.c
 * calls it for each shape, draw_text.c for each text. Not for use outside
 * draw/. */
#ifndef MHAVIZ_DRAW_SVG_H
#define MHAVIZ_DRAW_SVG_H

#include "draw/draw_colour.h"
#include "draw/draw_font.h"

#include <stddef.h>

typedef struct DrawSvg DrawSvg;

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
/* the w x h RGB pixels at px (rows stride bytes apart) as an embedded PNG
 * with its top-left pixel at (x, y) */
void draw_svg_image(DrawSvg *s, int x, int y, int w, int h, const unsigned char *px, size_t stride);

/* The document drawn so far, closed, as *len bytes; NULL when it ran out
 * of memory. The bytes are s's, valid until the next call on s: the
 * document stays open, and more may still be drawn. */
const unsigned char *draw_svg_document(DrawSvg *s, size_t *len);

#endif
