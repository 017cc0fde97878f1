/* render_sharpness.h — sharpness.png: how sharp each query's attention is,
 * in every head and in the single wide head, as lines on one slide.
 *
 * For each query token i (x axis, labelled with the tokens) and each map,
 * the normalised entropy of row i (measures_row_entropy_norm): 0 = all of
 * the attention on one key, 1 = spread evenly over the keys query i may
 * see. A row with one visible key has none: the line has a gap there (no
 * point is drawn at 0). One line per head in a colour of its own (more
 * than RENDER_SHARPNESS_COLOURS heads: thin grey lines), the wide head's
 * line in ink and bold, a legend on the right. The class sees where the
 * wide head is blurrier than the heads, and where it is not.
 * render.c draws it for a RENDER_SHARPNESS job (render.h). */
#ifndef MHAVIZ_RENDER_SHARPNESS_H
#define MHAVIZ_RENDER_SHARPNESS_H

#include "draw/draw.h"
#include "pictures/render.h"

#include <stddef.h>

#define RENDER_SHARPNESS_COLOURS DRAW_N_COLOURS /* heads drawn in colours of their own, at most */

/* The layout of a w x h sharpness.png for n_maps maps of T tokens whose
 * legend lines are legend[p] (NULL: "map p"), under subtitle (NULL: none).
 * Returns MHAVIZ_OK. */
int render_sharpness_layout_at(const DrawFont *font, int w, int h, int n_maps, int T, char *const *tokens,
                               char *const *legend, const char *subtitle, RenderSharpnessLayout *out);

/* Draw sharpness.png on c (w x h) and write it to png_path: maps (n_maps)
 * pointers to (T, T) softmax maps, the last the single wide head's; title
 * and subtitle (NULL: none) on top. Returns MHAVIZ_OK, MHAVIZ_EIO (err
 * names the file) or MHAVIZ_ENOMEM. */
int render_sharpness_draw(DrawCanvas *c, const DrawFont *font, int w, int h, const char *png_path,
                          const float *const *maps, int n_maps, int T, char *const *tokens, int causal,
                          const char *title, const char *subtitle, char *const *legend, char *err, size_t errlen);

#endif
