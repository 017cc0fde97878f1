/* draw_colour.h — colours: DrawRgb, the colour maps looked up by name,
 * the palette that tells heads apart, and a colour's brightness. Part of
 * draw.h (which includes it); it knows nothing else of drawing. */
#ifndef MHAVIZ_DRAW_COLOUR_H
#define MHAVIZ_DRAW_COLOUR_H

#include <stddef.h>

typedef struct {
    unsigned char r, g, b;
} DrawRgb;

#define DRAW_WHITE ((DrawRgb){255, 255, 255})
#define DRAW_INK ((DrawRgb){25, 25, 25})   /* text, ticks, lines */
#define DRAW_FRAME ((DrawRgb){60, 60, 60}) /* frames around maps and colour bars */

/* The colour map called name, (256, 3) entries from low to high, or NULL
 * when there is none: "viridis", "magma", "cividis", "gray" (sequential)
 * and "rdbu" (diverging, blue-white-red). The tables are static. */
typedef const unsigned char (*DrawCmap)[3];
DrawCmap draw_cmap(const char *name);

/* One colour map of the table every other place reads: its name, its
 * colours, whether a user may choose it for the softmax maps (--cmap: the
 * sequential ones; rdbu is the scores' map), and for those the colours of a
 * masked cell, which no colour of the map resembles. */
typedef struct {
    const char *name;
    DrawCmap table;        /* (256, 3) */
    int choosable;         /* 1: viridis, magma, cividis, gray */
    DrawRgb mask_bg;       /* a masked cell's background ... */
    DrawRgb mask_hatch;    /* ... and its hatching */
} DrawCmapEntry;

/* The map the softmax maps use unless the user chooses another. */
#define DRAW_CMAP_DEFAULT "viridis"

/* The entry of the map called name that a user may choose, or NULL. */
const DrawCmapEntry *draw_cmap_choosable(const char *name);

/* The names of the maps a user may choose into buf (cap bytes), in the
 * table's order, as "viridis, magma, cividis or gray"; with mark_default
 * the default one is followed by " (default)". */
void draw_cmap_names(char *buf, size_t cap, int mark_default);

/* The colour of map at t in [0, 1]: entry round(255 t); below 0 (and NaN)
 * entry 0, above 1 entry 255. */
DrawRgb draw_cmap_at(DrawCmap map, float t);

/* Relative brightness of col, 0..255 (Rec. 709 weights): text on a colour
 * of luma above about 140 reads best in DRAW_INK, below it in white. */
int draw_luma(DrawRgb col);

/* Colour k of the palette for things told apart by colour (one per head),
 * cycled past DRAW_N_COLOURS: Okabe and Ito's colour-blind safe set, its
 * yellow darkened to show on white. Every picture that colours heads takes
 * them from here, so head 0 has one colour on every slide of a run. */
#define DRAW_N_COLOURS 8
DrawRgb draw_colour(int k);

#endif
