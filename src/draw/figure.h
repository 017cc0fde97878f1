/* figure.h — a picture being drawn with draw.h: its canvas, its font, and
 * whether any text failed (out of memory), so that a picture of many texts
 * checks once, when it is written.
 *
 * architecture.png, variants.png and kv_cache.png are figures:
 *   Figure f;  figure_begin(&f, NULL, font, 1920, 1080, ...);
 *   figure_text(&f, ...); draw_line(f.c, ...); ...
 *   return figure_write(&f, path, ...); */
#ifndef MHAVIZ_FIGURE_H
#define MHAVIZ_FIGURE_H

#include "draw/draw.h"

#include <stddef.h>

typedef struct {
    DrawCanvas *c;     /* draw on this with draw.h */
    const DrawFont *f; /* the run's font (not owned) */
    int failed;        /* a text could not be drawn: out of memory */
    int owns_canvas;   /* c is the figure's own, freed by figure_write */
} Figure;

/* A white w x h figure in font f, drawn on canvas (reset to w x h; the
 * caller keeps it) or, when canvas is NULL, on a canvas of its own.
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM (err says so). */
int figure_begin(Figure *fig, DrawCanvas *canvas, const DrawFont *f, int w, int h, char *err, size_t errlen);

/* draw_text in the figure's font, not rotated; a failure is kept for figure_write. */
void figure_text(Figure *fig, const char *s, float px, int x, int y, int along, int across, DrawRgb col);

/* Write the figure as the PNG at path and free its own canvas. Returns
 * MHAVIZ_OK, MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM (also when a
 * text failed). */
int figure_write(Figure *fig, const char *path, char *err, size_t errlen);

#endif
