/* cells.c — how a map becomes pixels: its colour scale (softmax weights
 * on 0..1, scores less their row maximum), the grid of cells or averaged
 * blocks, the cells painted and annotated, the colour bar. */
#include "pictures/render_parts.h"
#include "core/measures.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The score maps' mask: mid grey, unlike their near-white zero. */
static const DrawRgb SCORES_MASK_BG = {196, 196, 196}, SCORES_MASK_HATCH = {140, 140, 140};

/* Score cells further below their row's top than the scale reaches: the
 * softmax gives them less than e^-10 of the top key's weight. Dark grey,
 * no colour of the blue scale. */
static const DrawRgb CLIPPED = {70, 70, 70};

RenderColours render_colours(const Renderer *r)
{
    return (RenderColours){r->cmap, r->opt.cmap ? r->opt.cmap : DRAW_CMAP_DEFAULT, r->mask_bg, SCORES_MASK_BG, CLIPPED};
}

/* ------------------------------------------------------------------ scales */

static DrawRgb scale_color(const Scale *s, float v)
{
    if (s->clipped && v < s->lo)
        return CLIPPED;
    return draw_cmap_at(s->table, (v - s->lo) / (s->hi - s->lo) * (float)(s->n - 1) / 255.0f);
}

Scale render_weights_scale(const Renderer *r)
{
    Scale s = {r->cmap, 256, 0.0f, 1.0f, r->mask_bg, r->mask_hatch, 0, 0};
    return s;
}

/* The scores maps' colours reach this far below a row's top score: a key
 * SCORES_WINDOW below the top gets e^-10 = 0.00005 of the top key's
 * weight, nothing a slide can show. What decides the softmax is inside. */
#define SCORES_WINDOW 10.0f

float render_scores_end(const float *scores, int T, int causal, int *clipped)
{
    float m = 0.0f;
    for (int i = 0; i < T; i++) {
        const float *row = scores + (size_t)i * T; /* (T) query i's scores */
        const int n = mha_visible_keys(causal, i, T);
        float top = row[0];
        for (int j = 1; j < n; j++)
            if (row[j] > top)
                top = row[j];
        for (int j = 0; j < n; j++)
            if (top - row[j] > m)
                m = top - row[j];
    }
    if (!(m > 0.0f) || !isfinite(m))
        m = 1.0f;
    *clipped = m > SCORES_WINDOW;
    if (*clipped)
        m = SCORES_WINDOW;
    /* Round the end of the scale up to a number a class can read off the bar
     * (0.757 -> 0.8, 3.6 -> 4): the ticks then fall on m/2 and m. */
    static const float nice[] = {1.0f, 1.2f, 1.5f, 2.0f, 2.5f, 3.0f, 4.0f, 5.0f, 6.0f, 8.0f, 10.0f};
    const float mag = powf(10.0f, floorf(log10f(m)));
    for (size_t k = 0; k < sizeof nice / sizeof nice[0]; k++) {
        if (nice[k] * mag >= m * 0.9999f) {
            m = nice[k] * mag;
            break;
        }
    }
    return m;
}

Scale render_scores_scale(const float *v, int T, int causal)
{
    int clipped;
    const float m = render_scores_end(v, T, causal, &clipped);
    Scale s = {draw_cmap("rdbu"), 128, -m, 0.0f, SCORES_MASK_BG, SCORES_MASK_HATCH, 1, clipped};
    return s;
}

/* Tick values and their labels; returns how many: weights 0, 0.25, ..., 1
 * (5), scores -m, -m/2, 0 (3: m is a round number, its half one too). */
static int scale_ticks(const Scale *s, float tv[5], char tl[5][24])
{
    if (!s->scores) {
        static const char *w[5] = {"0", "0.25", "0.5", "0.75", "1"};
        for (int k = 0; k < 5; k++) {
            tv[k] = (float)k / 4.0f;
            snprintf(tl[k], 24, "%s", w[k]);
        }
        return 5;
    }
    for (int k = 0; k < 3; k++) {
        tv[k] = s->lo * (float)(2 - k) / 2.0f;
        char num[20];
        snprintf(num, sizeof num, "%.3g", fabsf(tv[k]));
        snprintf(tl[k], 24, "%s%s", k < 2 ? "\xe2\x88\x92" : "", num); /* U+2212 minus */
    }
    return 3;
}

/* -------------------------------------------------------------- the cells */

/* Tokens [*lo, *hi) of block b. */
static inline void block_range(const Grid *g, int T, int b, int *lo, int *hi)
{
    if (g->even) {
        *lo = (int)((long)b * T / g->B);
        *hi = (int)((long)(b + 1) * T / g->B);
    } else {
        *lo = b * g->k;
        *hi = (b + 1) * g->k < T ? (b + 1) * g->k : T;
    }
}

static Grid grid_for_width(int T, int map_px)
{
    Grid g = {1, T, 1, 0};
    if (map_px >= T) {
        g.k = 1;
        g.B = T;
        g.cell = map_px / T;
    } else {
        g.k = (T + map_px - 1) / map_px;
        g.B = (T + g.k - 1) / g.k;
        g.cell = 1;
    }
    return g;
}

Grid render_grid_for_panel(int T, int map_px)
{
    if (map_px >= T)
        return grid_for_width(T, map_px);
    Grid g = {(T + map_px - 1) / map_px, map_px, 1, 1};
    return g;
}

Grid render_grid_for_slide(int T, int cell_px, int target)
{
    Grid g = {1, T, 1, 0};
    if (cell_px > 0) {
        if ((long)T * cell_px > 4096)
            g = grid_for_width(T, 4096 / cell_px);
        g.cell = cell_px;
        return g;
    }
    if (T > target)
        return grid_for_width(T, target);
    g.cell = target / T;
    return g;
}

/* Value of block (bi, bj): the mean of its visible cells; *visible = 0 when
 * every cell is masked. Sums in row-major order. */
static inline float block_value(const float *v, int T, int causal, const Grid *g, int bi, int bj, int *visible)
{
    if (g->k == 1) {
        /* one token per cell: the value itself (the loop below gives the same, slower) */
        *visible = !causal || bj <= bi;
        return *visible ? v[(size_t)bi * T + bj] : 0.0f;
    }
    int i0, i1, j0, j1;
    block_range(g, T, bi, &i0, &i1);
    block_range(g, T, bj, &j0, &j1);
    double sum = 0.0;
    int n = 0;
    for (int i = i0; i < i1; i++)
        for (int j = j0; j < j1; j++)
            if (!causal || j <= i) {
                sum += v[(size_t)i * T + j];
                n++;
            }
    *visible = n > 0;
    return n ? (float)(sum / n) : 0.0f;
}

/* What draw_cells asks the colour of: a map's blocks on its scale. */
typedef struct {
    const float *v; /* (T, T) */
    int T, causal;
    const Grid *g;
    const Scale *s;
} MapCells;

static int block_colour(const void *ctx, int bi, int bj, DrawRgb *col)
{
    const MapCells *m = ctx;
    int visible;
    const float val = block_value(m->v, m->T, m->causal, m->g, bi, bj, &visible);
    if (visible)
        *col = scale_color(m->s, val);
    return visible;
}

void render_paint_cells(DrawCanvas *c, const float *v, int T, int causal, const Grid *g, int x0, int y0,
                       const Scale *s)
{
    const MapCells m = {v, T, causal, g, s};
    draw_cells(c, x0, y0, g->B, g->cell, block_colour, &m, s->mask_bg, s->mask_hatch);
}

/* The text printed in a cell: a weight as measures_weight_text prints it
 * (never "0.50" for a weight that is not one half); a score with two
 * decimals (fewer when the scale is wide), never "-0.00". */
static void cell_text(char txt[32], const Scale *s, const char *fmt, float val)
{
    if (!s->scores) {
        measures_weight_text(txt, 32, val);
        return;
    }
    char num[24];
    snprintf(num, sizeof num, fmt, val);
    const int negative = num[0] == '-' && strspn(num + 1, "0.") < strlen(num + 1); /* no "-0.00" */
    /* a minus sign (U+2212), as on the colour bar, not a hyphen */
    snprintf(txt, 32, "%s%s", negative ? "\xe2\x88\x92" : "", num + (num[0] == '-'));
}

int render_annotate_cells(DrawCanvas *c, const Renderer *r, const float *v, int T, int causal,
                          const Grid *g, int x0, int y0, const Scale *s)
{
    /* One number format per map: two decimals, fewer when the scale is wide (scores). */
    const float big = fmaxf(fabsf(s->lo), fabsf(s->hi));
    const char *fmt = big < 9.995f ? "%.2f" : big < 99.95f ? "%.1f" : "%.0f";
    /* One size for the map's numbers, from their widest two-decimal text: a
     * weight next to one half ("0.499") is set smaller on its own, below,
     * rather than every number of the map with it. */
    float widest = 0.0f; /* at line height 100 px */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < mha_visible_keys(causal, i, T); j++) {
            char txt[32];
            const float val = v[(size_t)i * T + j];
            if (s->scores)
                cell_text(txt, s, fmt, val);
            else
                snprintf(txt, sizeof txt, "%.2f", val);
            widest = fmaxf(widest, draw_text_width(r->font, txt, 100.0f));
        }
    }
    if (!(widest > 0.0f))
        return MHAVIZ_OK;
    const float room = 0.84f * (float)g->cell; /* the width a number may take in its cell */
    float px = fminf(100.0f * room / widest, 0.40f / 0.63f * (float)g->cell);
    px = floorf(fminf(px, 96.0f));
    if (px < 9.0f)
        return MHAVIZ_OK; /* too small to read: no numbers */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < mha_visible_keys(causal, i, T); j++) {
            const float val = v[(size_t)i * T + j];
            if (!s->scores && val < 0.005f)
                continue; /* a weight that would print as 0.00: nothing, so the weights that count stand out */
            char txt[32];
            cell_text(txt, s, fmt, val);
            const DrawRgb ink = draw_luma(scale_color(s, val)) > 140 ? DRAW_INK : DRAW_WHITE;
            const float w = draw_text_width(r->font, txt, px);
            const float size = w > room ? floorf(px * room / w) : px; /* a three-decimal weight fits too */
            if (draw_text(c, r->font, txt, size, x0 + j * g->cell + g->cell / 2, y0 + i * g->cell + g->cell / 2,
                          DRAW_MID, DRAW_MID, ink, 0) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

int render_masks_some(int causal, int T)
{
    return mha_visible_keys(causal, 0, T) < T; /* row 0 sees fewer than T keys */
}

int render_colour_bar(DrawCanvas *c, const Renderer *r, const Scale *s, int x, int y, int w, int h,
                           float tick_px, int causal, int T)
{
    for (int yy = 0; yy < h; yy++) {
        const float v = s->hi - (s->hi - s->lo) * ((float)yy + 0.5f) / (float)h;
        draw_fill_rect(c, x, y + yy, w, 1, scale_color(s, v));
    }
    draw_stroke_rect(c, x - 1, y - 1, w + 2, h + 2, DRAW_FRAME);
    float tv[5];
    char tl[5][24];
    const int n_ticks = scale_ticks(s, tv, tl);
    for (int k = 0; k < n_ticks; k++) {
        const int ty = y + (int)lroundf((s->hi - tv[k]) / (s->hi - s->lo) * (float)(h - 1));
        draw_fill_rect(c, x + w, ty, 7, 2, DRAW_INK);
        if (draw_text(c, r->font, tl[k], tick_px, x + w + 11, ty + 1, DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    int sy = y + h + (int)(0.8f * tick_px); /* the swatches under the bar */
    if (s->clipped) {
        char below[40];
        snprintf(below, sizeof below, "< %s: clipped", tl[0]);
        draw_fill_rect(c, x, sy, w, w, CLIPPED);
        draw_stroke_rect(c, x - 1, sy - 1, w + 2, w + 2, DRAW_FRAME);
        if (draw_text(c, r->font, below, tick_px, x + w + 11, sy + w / 2, DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
        sy += w + (int)(0.5f * tick_px);
    }
    if (render_masks_some(causal, T)) {
        draw_fill_hatched(c, x, sy, w, w, x, sy, s->mask_bg, s->mask_hatch);
        draw_stroke_rect(c, x - 1, sy - 1, w + 2, w + 2, DRAW_FRAME);
        if (draw_text(c, r->font, "masked", tick_px, x + w + 11, sy + w / 2, DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}
