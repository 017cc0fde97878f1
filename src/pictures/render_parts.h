/* render_parts.h — what the picture files of the renderer share (render.c,
 * fit_text.c, map_labels.c, cells.c, heatmap.c, overview.c, sharpness.c,
 * pull_slide.c); not for use outside pictures/.
 * Pictures and their layouts are in render.h. */
#ifndef MHAVIZ_RENDER_PARTS_H
#define MHAVIZ_RENDER_PARTS_H

#include "core/layer.h"
#include "draw/draw.h"
#include "pictures/labels.h"
#include "pictures/render.h"

#include <stddef.h>

struct Renderer {
    RenderOptions opt;
    DrawFont *font;
    DrawCmap cmap;                   /* (256, 3) the softmax maps' colours */
    DrawRgb mask_bg, mask_hatch;     /* masked cells: flat colour with diagonal hatching */
};

/* Frame thickness for a map side: 1 px up to ~900 px, then 2, 3. */
static inline int frame_px(int side)
{
    const int px = (side + 300) / 600;
    return px < 1 ? 1 : px > 3 ? 3 : px;
}

#define LABEL_BYTES RENDER_LABEL_BYTES

/* Text set on at most TEXT_LINES lines. */
#define TEXT_LINES 3

typedef struct {
    char line[TEXT_LINES][320];
    int n;
} TextLines;

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* The token labels of a map's two axes (query rows, key columns: the same
 * tokens, so one plan, labels.h), each token's label as drawn, and where
 * each staggered level starts. */
typedef struct {
    LabelsPlan plan;
    char *text;                       /* (T, LABEL_BYTES) each labelled token as drawn */
    unsigned char *shown;             /* (T) 0: no label, else 1 + its level */
    float *centre;                    /* (T) the label's centre along the axis, pixels from the map's edge */
    float level_w[LABELS_MAX_LEVELS]; /* widest label of each level */
    float from[LABELS_MAX_LEVELS];    /* where each level starts, pixels out from the labels' edge */
} LabelSet;

/* Gap between two staggered levels of labels. */
#define LEVEL_GAP 8.0f

/* How values become colours. */
typedef struct {
    DrawCmap table;                  /* (256, 3) */
    int n;                           /* entries used: 0 .. n - 1 */
    float lo, hi;                    /* values at entries 0 and n - 1 */
    DrawRgb mask_bg, mask_hatch;
    int scores;                      /* 0: weights, ticks 0 .. 1; 1: scores, ticks -m .. 0 */
    int clipped;                     /* 1: values below lo are drawn in CLIPPED, not in the map's colours */
} Scale;

/* How a (T, T) map becomes pixels: B x B blocks of k x k tokens (k = 1: one
 * cell per token), each block cell x cell pixels. With even = 1 (overview
 * panels only) the B blocks share the T tokens out evenly instead: block b
 * holds tokens floor(b T / B) .. floor((b + 1) T / B) - 1, k - 1 or k of
 * them, so a panel of any width is filled. */
typedef struct {
    int k, B, cell, even;
} Grid;

/* The single-map figure's grid for a map of at most target pixels a side:
 * whole-pixel cells, as many as fit (T = 11: 72 px cells, a 792 px map at
 * the default target of 800; T = 40: 20 px); past one pixel per token,
 * blocks of k x k tokens are averaged. cell_px > 0 forces the cell size
 * (blocks are still averaged past 4096 px). */
#define MAP_TARGET_PX 800

/* ---- fit_text.c: text fitted to a width */

/* The ways text is fitted to a width on the pictures (besides
 * draw_ellipsize, the cut with "..." they all end in):
 * render_fit_shrink: text at the largest size from px down to min_px
 * (steps of 1 px) that fits max_w, cut when even min_px does not; returns the size. */
float render_fit_shrink(const DrawFont *font, char *text, size_t cap, float px, float min_px, float max_w);

/* render_fit_two_lines: text word-wrapped onto two lines, first and rest (cap bytes
 * each), at the largest size from px down (steps of 2 px) whose second
 * line fits max_w; at min_px or below the second line is cut instead.
 * Returns the size. */
float render_fit_two_lines(const DrawFont *font, const char *text, float px, float min_px, float max_w, char *first,
                           char *rest, size_t cap);

/* render_wrap_parts: break text into lines of at most max_w pixels at px, between its parts
 * (separated by " · "); a part too long for a line, and whatever would go
 * past the last line, is cut with an ellipsis. */
void render_wrap_parts(const DrawFont *font, const char *text, float px, float max_w, TextLines *out);

/* ---- map_labels.c: the maps' token labels (which tokens get one: labels.h) */

/* A LabelSet for T tokens (1: allocated; 0: out of memory, free it anyway). */
int render_labelset_alloc(LabelSet *s, int T);
void render_labelset_free(LabelSet *s);

/* Plan s's labels for T tokens at pitch pixels a token (labels_plan), at
 * most max_px and max_levels, each cut to max_w pixels; returns the pixels
 * the labels take across the axis (every level and the gaps between). */
float render_plan_labels(const Renderer *r, char *const *tokens, int T, float pitch, float max_px, int max_levels,
                         float max_w, LabelSet *s);

/* The widest label of all T tokens at line height px, cut at max_w. */
float render_widest_label(const Renderer *r, char *const *tokens, int T, float px, float max_w);

/* Query labels left of the rows (right-aligned at x_right) and key labels
 * under the columns (turned, ending at y_top), as s planned them: a label
 * of a further level set beyond the levels before it, with a thin tick
 * back to the map so the eye finds its row. Either side is skipped when
 * its flag is 0. */
int render_paint_labels(DrawCanvas *c, const Renderer *r, const LabelSet *s, int T, int map_x, int map_y, int x_right,
                        int y_top, int query, int key);

/* ---- cells.c: how values become coloured cells, and the colour bar */

Scale render_weights_scale(const Renderer *r);

/* Scores less their row's maximum, v (T, T), all <= 0: on the blue half
 * of the diverging map (entries 0..127), dark blue at -m to near-white at
 * 0, so each row's winner is its lightest cell. m is the largest |v| among
 * visible cells, rounded up to a round number, at most SCORES_WINDOW (10):
 * cells further down are clipped (drawn dark grey, said so under the
 * colour bar). */
Scale render_scores_scale(const float *v, int T, int causal);

/* The overview panels' grid: one side of map_px pixels whatever T is;
 * past one pixel per token, blocks share the tokens out evenly. */
Grid render_grid_for_panel(int T, int map_px);

Grid render_grid_for_slide(int T, int cell_px, int target);

void render_paint_cells(DrawCanvas *c, const float *v, int T, int causal, const Grid *g, int x0, int y0,
                       const Scale *s);

/* Print each visible cell's value inside it, dark or light for contrast.
 * Every number of a map gets the same size: as large as the widest one
 * allows in 84 % of the cell width, and its digits at most 40 % of the cell
 * height (DejaVu's digits are 0.63 of the line height). Only for unaveraged
 * maps with cells big enough to read. */
int render_annotate_cells(DrawCanvas *c, const Renderer *r, const float *v, int T, int causal,
                          const Grid *g, int x0, int y0, const Scale *s);

/* 1 when T tokens' maps have a masked cell: causal and T > 1 (at T = 1
 * the mask hides nothing, and no "masked" swatch is drawn). */
int render_masks_some(int causal, int T);

/* Vertical colour bar at (x, y), w x h, top = s->hi; ticks and their labels
 * to the right at tick_px; below it a "clipped" swatch when s clips, and
 * a "masked" one when causal masks a cell of T tokens' maps
 * (render_masks_some). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_colour_bar(DrawCanvas *c, const Renderer *r, const Scale *s, int x, int y, int w, int h,
                           float tick_px, int causal, int T);



#endif
