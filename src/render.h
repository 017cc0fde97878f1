/* render.h — attention maps as PNG heatmaps for slides.
 *
 * A Renderer holds what every picture shares (the font, the colormap), so a
 * run loads them once. Every function returns MHAVIZ_OK, MHAVIZ_EIO (cannot
 * load the font or write the PNG; err names the file) or MHAVIZ_ENOMEM. */
#ifndef MHAVIZ_RENDER_H
#define MHAVIZ_RENDER_H

#include <stddef.h>

typedef struct {
    const char *font_path; /* NULL: DejaVu Sans at its Debian path */
    const char *cmap;      /* "viridis" (default), "magma", "cividis", "gray" */
    int cell_px;           /* cell size in pixels; 0 = chosen for slides */
    int annotate;          /* -1 = when T <= 16, 0 = never, 1 = always */
} RenderOptions;

/* Defaults: DejaVu Sans, viridis, automatic cell size and annotation. */
void render_default_options(RenderOptions *o);

typedef struct Renderer Renderer;

/* Load the font and colormap. On success *out is owned by the caller and
 * freed with render_close. */
int render_open(Renderer **out, const RenderOptions *o, char *err, size_t errlen);
void render_close(Renderer *r);

/* Write att (T, T), row = query, as a heatmap PNG at png_path: query labels
 * left, key labels below, title on top, colour bar at the right. When causal,
 * cells with key > query are drawn in the mask colour. */
int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen);

#endif
