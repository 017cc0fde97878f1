/* render_parts.h — what the picture files of the renderer share (render.c,
 * labels.c, cells.c, heatmap.c, overview.c); not for use outside pictures/.
 * Pictures and their layouts are in render.h. */
#ifndef MHAVIZ_RENDER_PARTS_H
#define MHAVIZ_RENDER_PARTS_H

#include "core/layer.h"
#include "draw/draw.h"
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

/* Token labels on a single heatmap: line height at least LABEL_MIN_PX
 * (capitals ~0.63 of it), every token labelled while a token has 1.1 times
 * that: with the default 800 px map, up to T = 40 (20 px a token); past it
 * every step-th. */
#define LABEL_MIN_PX 18.0f

/* Text set on at most TEXT_LINES lines. */
#define TEXT_LINES 3

typedef struct {
    char line[TEXT_LINES][320];
    int n;
} TextLines;

static inline float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

/* Which tokens get a label: every one when step is 1; else the first, the
 * last, and the multiples of step at least `need` tokens from both. */
typedef struct {
    int step; /* label every step-th token */
    int need; /* fewest tokens between two labels that keep them apart */
} LabelPick;

/* How values become colours. */
typedef struct {
    DrawCmap table;                  /* (256, 3) */
    int n;                           /* entries used: 0 .. n - 1 */
    float lo, hi;                    /* values at entries 0 and n - 1 */
    DrawRgb mask_bg, mask_hatch;
    int scores;                      /* 0: weights, ticks 0 .. 1; 1: scores, ticks -m .. 0 */
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

/* ---- labels.c: token labels, which tokens get one, and wrapped text */

/* The ways text is fitted to a width on the pictures (besides
 * draw_ellipsize, the cut with "..." they all end in):
 * fit_shrink: text at the largest size from px down to min_px (steps of
 * 1 px) that fits max_w, cut when even min_px does not; returns the size. */
float fit_shrink(const DrawFont *font, char *text, size_t cap, float px, float min_px, float max_w);

/* fit_two_lines: text word-wrapped onto two lines, first and rest (cap bytes
 * each), at the largest size from px down (steps of 2 px) whose second
 * line fits max_w; at min_px or below the second line is cut instead.
 * Returns the size. */
float fit_two_lines(const DrawFont *font, const char *text, float px, float min_px, float max_w, char *first,
                    char *rest, size_t cap);

/* wrap_parts: break text into lines of at most max_w pixels at px, between its parts
 * (separated by " · "); a part too long for a line, and whatever would go
 * past the last line, is cut with an ellipsis. */
void wrap_parts(const DrawFont *font, const char *text, float px, float max_w, TextLines *out);

LabelPick label_pick(float pitch, float min_pitch);

/* `need` for thinned labels of line height px, pitch pixels per token: the
 * end labels are centred at least px / 2 inside the map (draw_token_labels),
 * and the next label's centre must lie 1.1 px beyond theirs:
 * (t + 1/2) pitch - max(px, pitch) / 2 >= 1.1 px. */
int label_need(float px, float pitch);

/* Which tokens get a label when not all fit (labels.c: three rules, one
 * per kind of picture): sharpness.png's axis, and the pull slide's keys
 * (the maps' rule is label_pick's). */
int is_labelled_axis(int t, int T, int step);
int key_label_step(float line_h, float slot);
int is_labelled_key(int j, int n, int step);

/* English ordinal suffix: 2 -> "nd", 5 -> "th", 21 -> "st", 12 -> "th". */
const char *ordinal(int n);

/* Labels of the labelled tokens into labels (T, LABEL_BYTES); returns the
 * widest width. */
float make_labels(const Renderer *r, char *const *tokens, int T, LabelPick lp, float px, float max_w,
                  char *labels);

/* Query labels left of the rows (right-aligned at x_right) and key labels
 * under the columns (turned, ending at y_top), for the labelled tokens;
 * either side is skipped when its flag is 0. When thinned, a label is
 * never centred closer than half its line to the map's ends. */
int token_labels(DrawCanvas *c, const Renderer *r, const char *labels, int T, LabelPick lp,
                 float pitch, float px, int map_x, int map_y, int x_right, int y_top,
                 int query, int key);

/* ---- cells.c: how values become coloured cells, and the colour bar */

Scale weights_scale(const Renderer *r);

/* Scores less their row's maximum, v (T, T), all <= 0: on the blue half
 * of the diverging map (entries 0..127), dark blue at -m (m = the largest
 * |v| among visible cells, rounded up) to near-white at 0, so each row's
 * winner is its lightest cell. */
Scale scores_scale(const float *v, int T, int causal);

/* The overview panels' grid: one side of map_px pixels whatever T is;
 * past one pixel per token, blocks share the tokens out evenly. */
Grid grid_for_panel(int T, int map_px);

Grid grid_for_slide(int T, int cell_px, int target);

void paint_cells(DrawCanvas *c, const float *v, int T, int causal, const Grid *g, int x0, int y0,
                 const Scale *s);

/* Print each visible cell's value inside it, dark or light for contrast.
 * Every number of a map gets the same size: as large as the widest one
 * allows in 84 % of the cell width, and its digits at most 40 % of the cell
 * height (DejaVu's digits are 0.63 of the line height). Only for unaveraged
 * maps with cells big enough to read. */
int annotate_cells(DrawCanvas *c, const Renderer *r, const float *v, int T, int causal,
                   const Grid *g, int x0, int y0, const Scale *s);

/* Vertical colour bar at (x, y), w x h, top = s->hi; ticks and their labels
 * to the right at tick_px; when causal a "masked" swatch below. Returns
 * MHAVIZ_OK or MHAVIZ_ENOMEM. */
int colour_bar(DrawCanvas *c, const Renderer *r, const Scale *s, int x, int y, int w, int h,
               float tick_px, int causal);



#endif
