/* figure.c — a picture drawn with draw.h, written once (see figure.h). */
#include "draw/figure.h"
#include "core/status.h"

#include <stdio.h>

int figure_begin(Figure *fig, DrawCanvas *canvas, const DrawFont *f, int w, int h, char *err, size_t errlen)
{
    fig->owns_canvas = !canvas;
    fig->c = canvas ? canvas : draw_canvas_new(w, h);
    fig->f = f;
    fig->failed = 0;
    if (fig->c && (fig->owns_canvas || draw_canvas_reset(fig->c, w, h) == MHAVIZ_OK))
        return MHAVIZ_OK;
    if (fig->owns_canvas)
        draw_canvas_free(fig->c);
    fig->c = NULL;
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

void figure_text(Figure *fig, const char *s, float px, int x, int y, int along, int across, DrawRgb col)
{
    fig->failed |= draw_text(fig->c, fig->f, s, px, x, y, along, across, col, 0) != MHAVIZ_OK;
}

int figure_write(Figure *fig, const char *path, char *err, size_t errlen)
{
    const int rc = fig->failed ? draw_nomem(err, errlen, path) : draw_write_png(fig->c, path, err, errlen);
    if (fig->owns_canvas)
        draw_canvas_free(fig->c);
    fig->c = NULL;
    return rc;
}
