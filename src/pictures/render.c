/* render.c — attention maps as PNG heatmaps for slides.
 *
 * Each picture is laid out here and drawn with draw.h's primitives into a
 * canvas in memory, then written as a PNG.
 *
 * Shapes: a map is (T, T), row i = query i, column j = key j. Everything
 * here is single-threaded per picture; render_jobs draws several pictures
 * at once, each thread on a canvas of its own kept from picture to picture
 * (with the glyphs its text used), so the bytes of each PNG never depend
 * on the thread count. */
#include "pictures/render.h"
#include "core/status.h"
#include "draw/draw.h"
#include "pictures/sharpness.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

struct Renderer {
    RenderOptions opt;
    DrawFont *font;
    DrawCmap cmap;                   /* (256, 3) the softmax maps' colours */
    DrawRgb mask_bg, mask_hatch;     /* masked cells: flat colour with diagonal hatching */
};

/* ------------------------------------------------------------------ options */

void render_default_options(RenderOptions *o)
{
    o->font_path = NULL;
    o->cmap = "viridis";
    o->cell_px = 0;
    o->annotate = -1;
    o->overview_w = 1920;
    o->overview_h = 1080;
}

/* The colour maps a user may choose (draw_cmap has them), each with the
 * colours of its masked cells. */
static const struct {
    const char *name;
    DrawRgb mask_bg, mask_hatch;
} CMAPS[] = {
    /* Light grey with darker hatching: no colour of these maps is a grey this light. */
    {"viridis", {222, 222, 222}, {168, 168, 168}},
    {"magma", {222, 222, 222}, {168, 168, 168}},
    {"cividis", {222, 222, 222}, {150, 150, 150}},
    /* A grey map needs a mask that is not grey: pale rose with rose hatching. */
    {"gray", {250, 218, 214}, {214, 120, 110}},
};

/* The score maps' mask: mid grey, unlike their near-white zero. */
static const DrawRgb SCORES_MASK_BG = {196, 196, 196}, SCORES_MASK_HATCH = {140, 140, 140};

int render_cmap_known(const char *name)
{
    for (size_t i = 0; i < sizeof CMAPS / sizeof CMAPS[0]; i++)
        if (strcmp(name, CMAPS[i].name) == 0)
            return 1;
    return 0;
}

/* --------------------------------------------------------- open and close */

int render_open(Renderer **out, const RenderOptions *o, char *err, size_t errlen)
{
    *out = NULL;
    int rc = MHAVIZ_OK;
    Renderer *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory loading the renderer");
        return MHAVIZ_ENOMEM;
    }
    r->opt = *o;

    const char *cmap = o->cmap ? o->cmap : "viridis";
    for (size_t i = 0; i < sizeof CMAPS / sizeof CMAPS[0]; i++) {
        if (strcmp(cmap, CMAPS[i].name) == 0) {
            r->cmap = draw_cmap(cmap);
            r->mask_bg = CMAPS[i].mask_bg;
            r->mask_hatch = CMAPS[i].mask_hatch;
        }
    }
    if (!r->cmap) {
        snprintf(err, errlen, "unknown colormap '%s' (known: viridis, magma, cividis, gray)", cmap);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    rc = draw_font_open(&r->font, o->font_path, err, errlen);

cleanup:
    if (rc == MHAVIZ_OK)
        *out = r;
    else
        render_close(r);
    return rc;
}

void render_close(Renderer *r)
{
    if (!r)
        return;
    draw_font_close(r->font);
    free(r);
}

const DrawFont *render_font(const Renderer *r)
{
    return r->font;
}

/* Frame thickness for a map side: 1 px up to ~900 px, then 2, 3. */
static int frame_px(int side)
{
    const int px = (side + 300) / 600;
    return px < 1 ? 1 : px > 3 ? 3 : px;
}

/* -------------------------------------------------------------------- text */

#define LABEL_BYTES RENDER_LABEL_BYTES
/* Token labels on a single heatmap: line height at least LABEL_MIN_PX
 * (capitals ~0.63 of it), every token labelled while a token has 1.1 times
 * that: with the default 800 px map, up to T = 40 (20 px a token); past it
 * every step-th. */
#define LABEL_MIN_PX 18.0f

void render_token_label(const DrawFont *font, const char *tok, float px, float max_w, char *buf)
{
    size_t n = 0;
    int only_space = *tok != '\0';
    for (const char *p = tok; *p; p++)
        if (!strchr(" \t\n\r\v\f", *p))
            only_space = 0;
    if (!*tok) {
        snprintf(buf, LABEL_BYTES, "\"\"");
    } else {
        const char *p = tok;
        for (; *p && n + 8 < LABEL_BYTES; p++) {
            const char *rep = NULL;
            switch (*p) {
            case '\n': rep = "\\n"; break;
            case '\t': rep = "\\t"; break;
            case '\r': rep = "\\r"; break;
            case '\v': rep = "\\v"; break;
            case '\f': rep = "\\f"; break;
            case ' ': rep = only_space ? "\xe2\x90\xa3" : NULL; break;
            }
            if (rep) {
                size_t k = strlen(rep);
                memcpy(buf + n, rep, k);
                n += k;
            } else {
                buf[n++] = *p;
            }
        }
        if (*p) {
            /* Longer than any margin: cut at a code point boundary and say so. */
            while (n > 0 && ((unsigned char)*p & 0xC0) == 0x80)
                n--, p--;
            memcpy(buf + n, "\xe2\x80\xa6", 4);
        } else {
            buf[n] = '\0';
        }
    }
    draw_ellipsize(font, buf, LABEL_BYTES, px, max_w);
}

/* Text set on at most TEXT_LINES lines. */
#define TEXT_LINES 3
typedef struct {
    char line[TEXT_LINES][320];
    int n;
} TextLines;

/* Break text into lines of at most max_w pixels at px, between its parts
 * (separated by " · "); a part too long for a line, and whatever would go
 * past the last line, is cut with an ellipsis. */
static void wrap_parts(const DrawFont *font, const char *text, float px, float max_w, TextLines *out)
{
    static const char sep[] = " \xc2\xb7 ";
    out->n = 0;
    for (const char *p = text; p && *p;) {
        const char *end = strstr(p, sep);
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char *cur = out->line[out->n > 0 ? out->n - 1 : 0];
        char joined[sizeof out->line[0]];
        snprintf(joined, sizeof joined, "%s%s%.*s", cur, sep, (int)len, p);
        if (out->n > 0 && (draw_text_width(font, joined, px) <= max_w || out->n == TEXT_LINES))
            snprintf(cur, sizeof out->line[0], "%s", joined);
        else
            snprintf(out->line[out->n++], sizeof out->line[0], "%.*s", (int)len, p);
        p = end ? end + strlen(sep) : NULL;
    }
    for (int k = 0; k < out->n; k++)
        draw_ellipsize(font, out->line[k], sizeof out->line[k], px, max_w);
}

/* ------------------------------------------------------------------ scales */

/* How values become colours. */
typedef struct {
    DrawCmap table;                  /* (256, 3) */
    int n;                           /* entries used: 0 .. n - 1 */
    float lo, hi;                    /* values at entries 0 and n - 1 */
    DrawRgb mask_bg, mask_hatch;
    int scores;                      /* 0: weights, ticks 0 .. 1; 1: scores, ticks -m .. 0 */
} Scale;

static DrawRgb scale_color(const Scale *s, float v)
{
    return draw_cmap_at(s->table, (v - s->lo) / (s->hi - s->lo) * (float)(s->n - 1) / 255.0f);
}

static Scale weights_scale(const Renderer *r)
{
    Scale s = {r->cmap, 256, 0.0f, 1.0f, r->mask_bg, r->mask_hatch, 0};
    return s;
}

/* Scores less their row's maximum, v (T, T), all <= 0: on the blue half
 * of the diverging map (entries 0..127), dark blue at -m (m = the largest
 * |v| among visible cells, rounded up) to near-white at 0, so each row's
 * winner is its lightest cell. */
static Scale scores_scale(const float *v, int T, int causal)
{
    float m = 0.0f;
    for (int i = 0; i < T; i++)
        for (int j = 0; j < (causal ? i + 1 : T); j++)
            if (fabsf(v[(size_t)i * T + j]) > m)
                m = fabsf(v[(size_t)i * T + j]);
    if (!(m > 0.0f) || !isfinite(m))
        m = 1.0f;
    /* Round the end of the scale up to a number a class can read off the bar
     * (0.757 -> 0.8, 36 -> 40): the ticks then fall on m/2 and m. */
    static const float nice[] = {1.0f, 1.2f, 1.5f, 2.0f, 2.5f, 3.0f, 4.0f, 5.0f, 6.0f, 8.0f, 10.0f};
    const float mag = powf(10.0f, floorf(log10f(m)));
    for (size_t k = 0; k < sizeof nice / sizeof nice[0]; k++) {
        if (nice[k] * mag >= m * 0.9999f) {
            m = nice[k] * mag;
            break;
        }
    }
    Scale s = {draw_cmap("rdbu"), 128, -m, 0.0f, SCORES_MASK_BG, SCORES_MASK_HATCH, 1};
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

/* How a (T, T) map becomes pixels: B x B blocks of k x k tokens (k = 1: one
 * cell per token), each block cell x cell pixels. With even = 1 (overview
 * panels only) the B blocks share the T tokens out evenly instead: block b
 * holds tokens floor(b T / B) .. floor((b + 1) T / B) - 1, k - 1 or k of
 * them, so a panel of any width is filled. */
typedef struct {
    int k, B, cell, even;
} Grid;

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

/* The overview panels' grid: one side of map_px pixels whatever T is;
 * past one pixel per token, blocks share the tokens out evenly. */
static Grid grid_for_panel(int T, int map_px)
{
    if (map_px >= T)
        return grid_for_width(T, map_px);
    Grid g = {(T + map_px - 1) / map_px, map_px, 1, 1};
    return g;
}

/* The single-map figure's grid for a map of at most target pixels a side:
 * whole-pixel cells, as many as fit (T = 11: 72 px cells, a 792 px map at
 * the default target of 800; T = 40: 20 px); past one pixel per token,
 * blocks of k x k tokens are averaged. cell_px > 0 forces the cell size
 * (blocks are still averaged past 4096 px). */
#define MAP_TARGET_PX 800
static Grid grid_for_slide(int T, int cell_px, int target)
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

static void paint_cells(DrawCanvas *c, const float *v, int T, int causal, const Grid *g, int x0, int y0,
                       const Scale *s)
{
    const int side = g->B * g->cell;
    if (x0 < 0 || y0 < 0 || x0 + side > c->w || y0 + side > c->h) {
        /* partly off the canvas (a figure too small for its panels): cell by cell, clipped */
        for (int bi = 0; bi < g->B; bi++) {
            for (int bj = 0; bj < g->B; bj++) {
                int visible;
                const float val = block_value(v, T, causal, g, bi, bj, &visible);
                const int x = x0 + bj * g->cell, y = y0 + bi * g->cell;
                if (visible)
                    draw_fill_rect(c, x, y, g->cell, g->cell, scale_color(s, val));
                else
                    draw_fill_hatched(c, x, y, g->cell, g->cell, x0, y0, s->mask_bg, s->mask_hatch);
            }
        }
        return;
    }
    /* Row of blocks bi: the first pixel row of its visible blocks is drawn
     * block by block, then each stretch of visible blocks is copied into the
     * cell's other pixel rows; each stretch of masked blocks is hatched
     * (the hatching moves one pixel per row). */
    for (int bi = 0; bi < g->B; bi++) {
        const int y = y0 + bi * g->cell;
        unsigned char *row0 = draw_pixel(c, x0, y);
        int start = 0, start_visible = 0;
        for (int bj = 0; bj <= g->B; bj++) {
            int visible = 0;
            float val = 0.0f;
            if (bj < g->B)
                val = block_value(v, T, causal, g, bi, bj, &visible);
            if (bj > 0 && (bj == g->B || visible != start_visible)) {
                /* the stretch of blocks start .. bj-1 ends here */
                const int x = x0 + start * g->cell, w = (bj - start) * g->cell;
                if (start_visible)
                    for (int yy = 1; yy < g->cell; yy++)
                        memcpy(draw_pixel(c, x, y + yy), draw_pixel(c, x, y), 3 * (size_t)w);
                else
                    draw_fill_hatched(c, x, y, w, g->cell, x0, y0, s->mask_bg, s->mask_hatch);
                start = bj;
            }
            if (bj == 0)
                start_visible = visible;
            else if (bj < g->B && start == bj)
                start_visible = visible;
            if (bj < g->B && visible) {
                const DrawRgb col = scale_color(s, val);
                unsigned char *p = row0 + 3 * (size_t)bj * g->cell;
                for (int i = 0; i < g->cell; i++)
                    p[3 * i] = col.r, p[3 * i + 1] = col.g, p[3 * i + 2] = col.b;
            }
        }
    }
}

/* The text printed in a cell: two decimals (fewer when the scale is wide), never "-0.00". */
static void cell_text(char txt[32], const char *fmt, float val)
{
    char num[24];
    snprintf(num, sizeof num, fmt, val);
    const int negative = num[0] == '-' && strspn(num + 1, "0.") < strlen(num + 1); /* no "-0.00" */
    /* a minus sign (U+2212), as on the colour bar, not a hyphen */
    snprintf(txt, 32, "%s%s", negative ? "\xe2\x88\x92" : "", num + (num[0] == '-'));
}

/* Print each visible cell's value inside it, dark or light for contrast.
 * Every number of a map gets the same size: as large as the widest one
 * allows in 84 % of the cell width, and its digits at most 40 % of the cell
 * height (DejaVu's digits are 0.63 of the line height). Only for unaveraged
 * maps with cells big enough to read. */
static int annotate_cells(DrawCanvas *c, const Renderer *r, const float *v, int T, int causal,
                          const Grid *g, int x0, int y0, const Scale *s)
{
    /* One number format per map: two decimals, fewer when the scale is wide. */
    const float big = fmaxf(fabsf(s->lo), fabsf(s->hi));
    const char *fmt = big < 9.995f ? "%.2f" : big < 99.95f ? "%.1f" : "%.0f";
    float widest = 0.0f; /* at line height 100 px */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < (causal ? i + 1 : T); j++) {
            char txt[32];
            cell_text(txt, fmt, v[(size_t)i * T + j]);
            widest = fmaxf(widest, draw_text_width(r->font, txt, 100.0f));
        }
    }
    if (!(widest > 0.0f))
        return MHAVIZ_OK;
    float px = fminf(100.0f * 0.84f * (float)g->cell / widest, 0.40f / 0.63f * (float)g->cell);
    px = floorf(fminf(px, 96.0f));
    if (px < 9.0f)
        return MHAVIZ_OK; /* too small to read: no numbers */
    for (int i = 0; i < T; i++) {
        for (int j = 0; j < (causal ? i + 1 : T); j++) {
            const float val = v[(size_t)i * T + j];
            if (!s->scores && val < 0.005f)
                continue; /* a weight that would print as 0.00: nothing, so the weights that count stand out */
            char txt[32];
            cell_text(txt, fmt, val);
            const DrawRgb ink = draw_luma(scale_color(s, val)) > 140 ? DRAW_INK : DRAW_WHITE;
            if (draw_text(c, r->font, txt, px, x0 + j * g->cell + g->cell / 2, y0 + i * g->cell + g->cell / 2,
                          DRAW_MID, DRAW_MID, ink, 0) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* Vertical colour bar at (x, y), w x h, top = s->hi; ticks and their labels
 * to the right at tick_px; when causal a "masked" swatch below. Returns
 * MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int colour_bar(DrawCanvas *c, const Renderer *r, const Scale *s, int x, int y, int w, int h,
                           float tick_px, int causal)
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
    if (causal) {
        const int sy = y + h + (int)(0.8f * tick_px);
        draw_fill_hatched(c, x, sy, w, w, x, sy, s->mask_bg, s->mask_hatch);
        draw_stroke_rect(c, x - 1, sy - 1, w + 2, w + 2, DRAW_FRAME);
        if (draw_text(c, r->font, "masked", tick_px, x + w + 11, sy + w / 2, DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

static float clampf(float v, float lo, float hi) { return v < lo ? lo : v > hi ? hi : v; }

int render_label_step(float pitch, float min_pitch)
{
    int step = 1;
    for (int mag = 1;; mag *= 10) {
        static const int nice[3] = {1, 2, 5};
        for (int k = 0; k < 3; k++) {
            step = nice[k] * mag;
            if ((float)step * pitch >= min_pitch || mag > 100000)
                return step;
        }
    }
}

/* Which tokens get a label: every one when step is 1; else the first, the
 * last, and the multiples of step at least `need` tokens from both. */
typedef struct {
    int step; /* label every step-th token */
    int need; /* fewest tokens between two labels that keep them apart */
} LabelPick;

static LabelPick label_pick(float pitch, float min_pitch)
{
    LabelPick lp;
    lp.step = render_label_step(pitch, min_pitch);
    lp.need = (int)ceilf(min_pitch / pitch);
    if (lp.need < 1)
        lp.need = 1;
    return lp;
}

/* `need` for thinned labels of line height px, pitch pixels per token: the
 * end labels are centred at least px / 2 inside the map (draw_token_labels),
 * and the next label's centre must lie 1.1 px beyond theirs:
 * (t + 1/2) pitch - max(px, pitch) / 2 >= 1.1 px. */
static int label_need(float px, float pitch)
{
    const int need = (int)ceilf((1.1f * px + 0.5f * fmaxf(px, pitch)) / pitch - 0.5f);
    return need < 1 ? 1 : need;
}

static int is_labelled(int t, int T, LabelPick lp)
{
    if (lp.step <= 1 || t == 0 || t == T - 1)
        return 1;
    return t % lp.step == 0 && t >= lp.need && T - 1 - t >= lp.need;
}

/* English ordinal suffix: 2 -> "nd", 5 -> "th", 21 -> "st", 12 -> "th". */
static const char *ordinal(int n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

/* Labels of the labelled tokens into labels (T, LABEL_BYTES); returns the
 * widest width. */
static float make_labels(const Renderer *r, char *const *tokens, int T, LabelPick lp, float px, float max_w,
                         char *labels)
{
    float widest = 0.0f;
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        char *l = labels + (size_t)t * LABEL_BYTES;
        render_token_label(r->font, tokens[t], px, max_w, l);
        const float w = draw_text_width(r->font, l, px);
        if (w > widest)
            widest = w;
    }
    return widest;
}

/* Query labels left of the rows (right-aligned at x_right) and key labels
 * under the columns (turned, ending at y_top), for the labelled tokens;
 * either side is skipped when its flag is 0. When thinned, a label is
 * never centred closer than half its line to the map's ends. */
static int token_labels(DrawCanvas *c, const Renderer *r, const char *labels, int T, LabelPick lp,
                             float pitch, float px, int map_x, int map_y, int x_right, int y_top,
                             int query, int key)
{
    const int half = (int)ceilf(0.5f * px), side = (int)lroundf(pitch * (float)T);
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        const char *l = labels + (size_t)t * LABEL_BYTES;
        int centre = (int)floorf(((float)t + 0.5f) * pitch);
        if (lp.step > 1 && side > 2 * half) {
            /* thinned: the end labels stay within the map's edges, clear of the next panel's */
            centre = centre < half ? half : centre > side - half ? side - half : centre;
        }
        if ((query && draw_text(c, r->font, l, px, x_right, map_y + centre, DRAW_END, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK) ||
            (key && draw_text(c, r->font, l, px, map_x + centre, y_top, DRAW_END, DRAW_MID, DRAW_INK, 1) != MHAVIZ_OK))
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* ------------------------------------------------------ one map, one figure */

/* Where everything of a single-map figure goes. */
typedef struct {
    RenderLayout pub;       /* size, map origin, cell, block, label step */
    Grid g;
    int map;                /* map side in pixels */
    float pitch;            /* pixels per token */
    LabelPick lp;           /* which tokens are labelled */
    float label_px, title_px, cap_px, lw;
    int m, frame, cap_h, bar_x, bar_w, key_top;
    char title[LABEL_BYTES * 2]; /* as drawn: cut to the slide's width */
    TextLines sub;          /* the subtitle as drawn: wrapped to the figure's width */
    char note[160];         /* under the subtitle when not one labelled cell per token */
} Layout;

/* A single map's figure fits a slide of SLIDE_W x SLIDE_H at the default
 * cell size: the map is made smaller when the labels need the room. */
#define SLIDE_W 1920
#define SLIDE_H 1080

/* Lay out the figure for T tokens with a map of at most target pixels;
 * fills labels (T, LABEL_BYTES) for the labelled tokens, cut to label_w
 * pixels (0: as wide as 8 lines of them, 110 to 260 px). Left to right:
 * caption, labels, map, colour bar, ticks; top to bottom: title,
 * subtitle, note, map, key labels, caption. */
static void map_layout_at(const Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                          int target, float label_w, Layout *L, char *labels)
{
    memset(L, 0, sizeof *L);
    L->g = grid_for_slide(T, r->opt.cell_px, target);
    L->map = L->g.B * L->g.cell;
    L->pitch = (float)L->map / (float)T;
    LabelPick lp = label_pick(L->pitch, 1.1f * LABEL_MIN_PX);
    L->label_px = clampf(0.75f * (float)lp.step * L->pitch, LABEL_MIN_PX, fmaxf(28.0f, (float)L->map / 30.0f));
    if (lp.step > 1)
        lp.need = label_need(L->label_px, L->pitch);
    L->lp = lp;
    L->title_px = clampf((float)L->map / 24.0f, 30.0f, 50.0f);
    L->cap_px = clampf(fmaxf(L->label_px * 1.05f, (float)L->map / 40.0f), 22.0f, 36.0f);
    L->m = 24;
    L->frame = frame_px(L->map);
    if (!(label_w > 0.0f))
        label_w = clampf(8.0f * L->label_px, 110.0f, 260.0f);
    L->lw = make_labels(r, tokens, T, lp, L->label_px, label_w, labels);
    const int step = lp.step;

    const Grid *g = &L->g;
    if (g->k > 1 && step > 1)
        snprintf(L->note, sizeof L->note,
                 "blocks of %d\xc3\x97%d tokens averaged \xc2\xb7 every %d%s token labelled, and the last",
                 g->k, g->k, step, ordinal(step));
    else if (g->k > 1)
        snprintf(L->note, sizeof L->note, "blocks of %d\xc3\x97%d tokens averaged", g->k, g->k);
    else if (step > 1)
        snprintf(L->note, sizeof L->note, "every %d%s token labelled, and the last", step, ordinal(step));

    const int m = L->m, map = L->map;
    L->cap_h = (int)draw_line_height(L->cap_px);
    L->pub.map_x = m + L->cap_h + 10 + (int)ceilf(L->lw) + 10 + L->frame;
    L->bar_w = (int)clampf((float)map / 24.0f, 24.0f, 40.0f);
    L->bar_x = L->pub.map_x + map + 36;
    const float tick_w = fmaxf(draw_text_width(r->font, "\xe2\x88\x92" "0.888", L->cap_px), draw_text_width(r->font, "masked", L->cap_px));
    int W = L->bar_x + L->bar_w + 11 + (int)ceilf(tick_w) + m;
    /* The title may widen the figure up to the slide; the subtitle wraps. */
    snprintf(L->title, sizeof L->title, "%s", title ? title : "");
    draw_ellipsize(r->font, L->title, sizeof L->title, L->title_px, (float)(SLIDE_W - 2 * m));
    const int title_w = (int)ceilf(draw_text_width(r->font, L->title, L->title_px));
    if (W < title_w + 2 * m)
        W = title_w + 2 * m;
    wrap_parts(r->font, subtitle, L->cap_px, (float)(W - 2 * m), &L->sub);
    L->pub.map_y = m + (int)draw_line_height(L->title_px) + (L->sub.n + (L->note[0] ? 1 : 0)) * L->cap_h + 18;
    L->key_top = L->pub.map_y + map + 8 + L->frame;
    int H = L->key_top + (int)ceilf(L->lw) + 10 + L->cap_h + m;
    if (H < L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m)
        H = L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m;
    L->pub.width = W;
    L->pub.height = H;
    L->pub.cell = g->cell;
    L->pub.block = g->k;
    L->pub.label_step = step;
    L->pub.frame = L->frame;
}

/* map_layout_at with the largest map (up to MAP_TARGET_PX) that keeps the
 * figure within SLIDE_W x SLIDE_H: the key labels are first cut shorter
 * (down to 4 lines' width), then the map made smaller. A forced cell size
 * (--cell) is laid out as it is. */
static void map_layout(const Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                       Layout *L, char *labels)
{
    int target = MAP_TARGET_PX;
    map_layout_at(r, T, tokens, title, subtitle, target, 0.0f, L, labels);
    for (int tries = 0; tries < 8 && r->opt.cell_px == 0 && L->pub.height > SLIDE_H; tries++) {
        const float over = (float)(L->pub.height - SLIDE_H);
        const float label_w = fmaxf(L->lw - over, 4.0f * L->label_px);
        const int shrink = (int)ceilf(over - (L->lw - label_w)); /* what shorter labels do not win */
        if (shrink > 0)
            target = L->map - shrink > 64 ? L->map - shrink : 64;
        map_layout_at(r, T, tokens, title, subtitle, target, label_w, L, labels);
    }
}

int render_heatmap_layout(Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                          RenderLayout *out)
{
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        return MHAVIZ_ENOMEM;
    Layout L;
    map_layout(r, T, tokens, title, subtitle, &L, labels);
    *out = L.pub;
    free(labels);
    return MHAVIZ_OK;
}

/* x at which text w pixels wide is centred over the map (map_x, map pixels
 * wide), moved in to keep m pixels from the figure's edges (W wide). */
static int centre_over(int map_x, int map, float w, int m, int W)
{
    int x = map_x + map / 2;
    if (x - (int)(w / 2) < m)
        x = m + (int)(w / 2);
    if (x + (int)(w / 2) > W - m)
        x = W - m - (int)(w / 2);
    return x;
}

static int render_map(Renderer *r, DrawCanvas *c, const char *png_path, const float *v, int T,
                      char *const *tokens, int causal, const char *title, const char *subtitle, const Scale *s,
                      char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
        Layout L;
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        goto oom;
    map_layout(r, T, tokens, title, subtitle, &L, labels);
    const int m = L.m, map = L.map, map_x = L.pub.map_x, map_y = L.pub.map_y;
    const int W = L.pub.width;
    if (draw_canvas_reset(c, W, L.pub.height) != MHAVIZ_OK)
        goto oom;

    /* Title, subtitle and note, each centred over the map where it fits. */
    int y = m;
    if (draw_text(c, r->font, L.title, L.title_px, centre_over(map_x, map, draw_text_width(r->font, L.title, L.title_px), m, W), y,
                  DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;
    y += (int)draw_line_height(L.title_px);
    for (int k = 0; k <= L.sub.n; k++) {
        const char *line = k < L.sub.n ? L.sub.line[k] : L.note;
        if (line[0] && draw_text(c, r->font, line, L.cap_px, centre_over(map_x, map, draw_text_width(r->font, line, L.cap_px), m, W),
                                 y, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            goto oom;
        y += L.cap_h;
    }

    paint_cells(c, v, T, causal, &L.g, map_x, map_y, s);
    draw_frame(c, map_x, map_y, map, map, L.frame, DRAW_FRAME);
    const int annotate = r->opt.annotate == 1 || (r->opt.annotate == -1 && T <= 16);
    if (annotate && L.g.k == 1 && L.g.cell >= 18 &&
        annotate_cells(c, r, v, T, causal, &L.g, map_x, map_y, s) != MHAVIZ_OK)
        goto oom;

    /* Labels and the axis captions. */
    if (token_labels(c, r, labels, T, L.lp, L.pitch, L.label_px, map_x, map_y, map_x - 10 - L.frame,
                          L.key_top, 1, 1) != MHAVIZ_OK ||
        draw_text(c, r->font, "query", L.cap_px, m, map_y + map / 2, DRAW_MID, DRAW_TOP, DRAW_INK, 1) != MHAVIZ_OK ||
        draw_text(c, r->font, "key", L.cap_px, map_x + map / 2, L.key_top + (int)ceilf(L.lw) + 10, DRAW_MID, DRAW_TOP, DRAW_INK, 0) !=
            MHAVIZ_OK)
        goto oom;

    if (colour_bar(c, r, s, L.bar_x, map_y, L.bar_w, map, L.cap_px, causal) != MHAVIZ_OK)
        goto oom;

    rc = draw_write_png(c, png_path, err, errlen);
    goto cleanup;

oom:
    snprintf(err, errlen, "%s: out of memory drawing the picture", png_path);
    rc = MHAVIZ_ENOMEM;
cleanup:
    free(labels);
    return rc;
}

int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen)
{
    const RenderJob j = {.kind = RENDER_WEIGHTS, .path = png_path, .title = title, .values = att};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

int render_scores(Renderer *r, const char *png_path, const float *scores, int T,
                  char *const *tokens, int causal, const char *title,
                  char *err, size_t errlen)
{
    const RenderJob j = {.kind = RENDER_SCORES, .path = png_path, .title = title, .values = scores};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

void render_scores_less_row_max(float *out, const float *scores, int T, int causal)
{
    for (int i = 0; i < T; i++) {
        const float *s_i = scores + (size_t)i * T; /* (T) row i */
        float *o_i = out + (size_t)i * T;
        const int n_i = causal ? i + 1 : T;       /* keys query i may see */
        float max = s_i[0];
        for (int j = 1; j < n_i; j++)
            if (s_i[j] > max)
                max = s_i[j];
        for (int j = 0; j < T; j++)
            o_i[j] = j < n_i ? s_i[j] - max : 0.0f;
    }
}

/* --------------------------------------------------------------- overview */

/* Where everything of the overview goes. */
typedef struct {
    RenderOverviewLayout pub; /* size, grid, first map, panel steps, cell, labels, the wide panel */
    Grid g;
    LabelPick lp;
    float title_px, note_px, pt_px, cap_px, lp_px; /* lp_px = 0: no token labels */
    int m, gap, sep, pth, cap_h, lm_left, lm_bottom, title_h;
    int bar_x, bar_y, bar_w, bar_h;
    int rule_x, rule_y0, rule_y1; /* the line between the heads and the wide head (apart only) */
    TextLines sub;  /* the subtitle as drawn, wrapped to the figure's width */
    char note[160]; /* last title line: blocks averaged, labels thinned */
} OvLayout;

/* The overview's axis captions sit in the corners its labels leave free:
 * "query ↓" left of each row's first map, on its title line, and "key →"
 * left of the key labels under the bottom row, so they cost no room. */
#define OV_QUERY "query \xe2\x86\x93"
#define OV_KEY "key \xe2\x86\x92"

/* Pixels left of a panel's map for the query labels (lw wide) or the key
 * caption, whichever is wider (*left), and under it for the key labels or
 * the key caption (*below). */
static void ov_margins(const Renderer *r, const OvLayout *L, float lw, int *left, int *below)
{
    const float capw = fmaxf(draw_text_width(r->font, OV_QUERY, L->cap_px), draw_text_width(r->font, OV_KEY, L->cap_px));
    *left = L->pub.frame + 6 + (int)ceilf(fmaxf(lw, capw)) + 6;
    *below = L->pub.frame + 6 + (int)ceilf(fmaxf(lw, (float)L->cap_h)) + 4;
}

/* The largest map side for the heads' grid of cols columns in the area
 * aw x ah (rows follow from n_grid), lml pixels left of each block of maps
 * and lmb under them, then (apart) the separator and the wide head's panel
 * with its own labels, then the colour bar. */
static int ov_fit(const OvLayout *L, int n_grid, int apart, int cols, int aw, int ah, int lml, int lmb,
                  int bar_block)
{
    const int rows = (n_grid + cols - 1) / cols;
    const int side_w = (aw - lml - bar_block - (cols - 1) * L->gap - (apart ? L->sep + lml : 0)) / (cols + apart);
    const int side_h = (ah - lmb - rows * L->pth - (rows - 1) * L->gap) / rows;
    return side_w < side_h ? side_w : side_h;
}

/* The best grid for margins lml, lmb: *cols and the map side. */
static int ov_best(const OvLayout *L, int n_grid, int apart, int aw, int ah, int lml, int lmb, int bar_block,
                   int *cols)
{
    int best = 0;
    *cols = 1;
    for (int k = 1; k <= n_grid; k++) {
        const int sd = ov_fit(L, n_grid, apart, k, aw, ah, lml, lmb, bar_block);
        if (sd > best)
            best = sd, *cols = k;
    }
    return best;
}

/* Lay out the overview of n_maps maps of T tokens; fills labels (T,
 * LABEL_BYTES) for the labelled tokens. With two maps or more the last
 * (the wide head's) stands apart: the others in a grid, then a rule, then
 * its panel with labels of its own. The grid is the one giving the
 * biggest square maps; token labels get the largest size between H/50 and
 * H/32 at which every token has its own line, else the smallest with only
 * every step-th token labelled, else none. */
static void overview_layout(const Renderer *r, int n_maps, int T, char *const *tokens, int causal,
                            const char *subtitle, OvLayout *L, char *labels)
{
    memset(L, 0, sizeof *L);
    const int W = r->opt.overview_w, H = r->opt.overview_h;
    const int apart = n_maps > 1, n_grid = n_maps - apart;
    L->pub.width = W;
    L->pub.height = H;
    L->pub.apart = apart;
    L->m = (int)clampf((float)H / 60.0f, 6.0f, 32.0f);
    L->gap = L->m;
    L->sep = 4 * L->m; /* the rule in the middle */
    L->title_px = clampf((float)H / 26.0f, 14.0f, 56.0f);
    L->pt_px = clampf((float)H / 34.0f, 11.0f, 40.0f); /* panel titles, ticks */
    L->note_px = L->cap_px = 0.9f * L->pt_px;
    L->cap_h = (int)draw_line_height(L->cap_px);
    L->pth = (int)draw_line_height(L->pt_px) + 4;
    L->bar_w = (int)clampf((float)W / 64.0f, 12.0f, 40.0f);
    L->pub.frame = frame_px(H / 3);
    wrap_parts(r->font, subtitle, L->note_px, (float)(W - 2 * L->m), &L->sub);
    const float lp_max = clampf((float)H / 32.0f, 10.0f, 40.0f), lp_min = clampf((float)H / 50.0f, 9.0f, 30.0f);
    const int tick_w = (int)ceilf(fmaxf(draw_text_width(r->font, "masked", L->pt_px), draw_text_width(r->font, "0.75", L->pt_px)));
    const int bar_block = L->gap + L->bar_w + 11 + tick_w;

    /* Labels are measured once at 100 px; widths scale with the size. */
    const LabelPick all = {1, 1};
    const float w100 = make_labels(r, tokens, T, all, 100.0f, 600.0f, labels);

    /* The note line (blocks averaged, labels thinned) is known only at the
     * end; its room is kept whenever T is large enough to need it. */
    for (int pass = 0; pass < 2; pass++) {
        L->title_h = (int)draw_line_height(L->title_px) + (L->sub.n + pass) * (int)draw_line_height(L->note_px);
        const int ay = L->m + L->title_h + L->m / 2, aw = W - 2 * L->m, ah = H - L->m - ay;
        int best = 0, best_cols = 1;
        float best_lp = 0.0f;
        /* Descend from the largest label size; stop at the first at which
         * every token has a line of its own. */
        for (float lp = lp_max; lp >= lp_min - 0.01f; lp -= 1.0f) {
            int lml, lmb, cols;
            ov_margins(r, L, w100 * lp / 100.0f, &lml, &lmb);
            const int side = ov_best(L, n_grid, apart, aw, ah, lml, lmb, bar_block, &cols);
            const Grid g = grid_for_panel(T, side > 1 ? side : 1);
            const float pitch = (float)(g.B * g.cell) / (float)T;
            if (pitch >= 1.1f * lp) {
                best = side, best_cols = cols, best_lp = lp;
                break;
            }
            if (lp <= lp_min + 0.5f) {
                /* thinned labels at the smallest size, when the maps are big enough to carry some */
                best = side, best_cols = cols;
                best_lp = (float)(g.B * g.cell) >= 4.0f * lp ? lp : 0.0f;
            }
        }
        if (best_lp == 0.0f) {
            /* no labels: captions only */
            int lml, lmb;
            ov_margins(r, L, 0.0f, &lml, &lmb);
            best = ov_best(L, n_grid, apart, aw, ah, lml, lmb, bar_block, &best_cols);
        }
        if (best < 1)
            best = 1; /* more panels than the figure holds: tiny maps, clipped at the edges */
        L->g = grid_for_panel(T, best);
        const int mp = L->g.B * L->g.cell;
        const float pitch = (float)mp / (float)T;
        L->lp_px = best_lp;
        L->lp = label_pick(pitch, 1.1f * (best_lp > 0.0f ? best_lp : 1.0f));
        if (L->lp.step > 1)
            L->lp.need = label_need(best_lp, pitch);
        L->pub.label_step = best_lp > 0.0f ? L->lp.step : 0;
        L->note[0] = '\0';
        char blocks[64] = "";
        if (L->g.k > 1) {
            const int kmin = T / L->g.B; /* even blocks hold kmin or kmin + 1 tokens a side */
            if (kmin == L->g.k || T % L->g.B == 0)
                snprintf(blocks, sizeof blocks, "blocks of %d\xc3\x97%d tokens averaged", L->g.k, L->g.k);
            else
                snprintf(blocks, sizeof blocks, "blocks of %d to %d tokens a side averaged", kmin, L->g.k);
        }
        if (blocks[0] && L->pub.label_step > 1)
            snprintf(L->note, sizeof L->note, "%s \xc2\xb7 every %d%s token labelled, and the last", blocks,
                     L->lp.step, ordinal(L->lp.step));
        else if (blocks[0])
            snprintf(L->note, sizeof L->note, "%s", blocks);
        else if (L->pub.label_step > 1)
            snprintf(L->note, sizeof L->note, "every %d%s token labelled, and the last", L->lp.step,
                     ordinal(L->lp.step));
        if (L->note[0] && pass == 0)
            continue; /* lay out again with room for the note */

        /* Place the grid, the wide panel and the bar, centred in the area. */
        const float lw = best_lp > 0.0f ? make_labels(r, tokens, T, L->lp, best_lp, 6.0f * best_lp, labels) : 0.0f;
        ov_margins(r, L, lw, &L->lm_left, &L->lm_bottom);
        const int cols = best_cols, rows = (n_grid + cols - 1) / cols;
        const int grid_w = L->lm_left + cols * mp + (cols - 1) * L->gap;
        const int gw = grid_w + (apart ? L->sep + L->lm_left + mp : 0) + bar_block;
        const int gh = rows * (L->pth + mp) + (rows - 1) * L->gap + L->lm_bottom;
        L->pub.cols = cols;
        L->pub.rows = rows;
        L->pub.side = mp;
        L->pub.cell = L->g.cell;
        L->pub.block = L->g.k;
        L->pub.label_px = best_lp;
        L->pub.dx = mp + L->gap;
        L->pub.dy = L->pth + mp + L->gap;
        L->pub.map_x = L->m + (aw - gw) / 2 + L->lm_left;
        L->pub.map_y = ay + (ah - gh) / 2 + L->pth;
        int right = L->pub.map_x + (cols - 1) * L->pub.dx + mp; /* right edge of the last map */
        if (apart) {
            /* the wide head's panel: centred on the grid's height */
            L->rule_x = L->pub.map_x - L->lm_left + grid_w + L->sep / 2;
            L->rule_y0 = L->pub.map_y - L->pth;
            L->rule_y1 = L->pub.map_y + gh - L->pth;
            L->pub.wide_x = L->rule_x + L->sep / 2 + L->lm_left;
            L->pub.wide_y = L->pub.map_y + (gh - (L->pth + mp + L->lm_bottom)) / 2;
            right = L->pub.wide_x + mp;
        }
        const int sw = causal ? L->bar_w + (int)(1.5f * L->pt_px) : 0; /* the "masked" swatch under the bar */
        L->bar_x = right + L->pub.frame + L->gap;
        L->bar_y = L->pub.map_y;
        L->bar_h = (rows - 1) * L->pub.dy + mp - sw;
        if (L->bar_h < mp / 2)
            L->bar_h = mp / 2;
        break;
    }
}

int render_overview_layout(Renderer *r, int n_maps, int T, char *const *tokens, int causal, const char *subtitle,
                           RenderOverviewLayout *out)
{
    char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    if (!labels)
        return MHAVIZ_ENOMEM;
    OvLayout L;
    overview_layout(r, n_maps, T, tokens, causal, subtitle, &L, labels);
    *out = L.pub;
    free(labels);
    return MHAVIZ_OK;
}

int render_overview(Renderer *r, const char *png_path, const float *const *maps, int n_maps,
                    int T, char *const *tokens, int causal, const char *title,
                    char *const *panel_titles, char *err, size_t errlen)
{
    const RenderJob j = {.kind = RENDER_OVERVIEW, .path = png_path, .title = title, .maps = maps,
                         .n_maps = n_maps, .panel_titles = panel_titles};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

/* One panel of the overview at map origin (x, y): its title, cells, frame,
 * query labels (when `query`), key labels (when `key`), and the "query ↓" /
 * "key →" captions beside them. */
static int overview_panel(DrawCanvas *c, const Renderer *r, const OvLayout *L, const char *labels, const float *map, int T,
                      int causal, const Scale *s, const char *panel_title, int x, int y, int query, int key)
{
    const int mp = L->pub.side, frame = L->pub.frame;
    char pt[LABEL_BYTES * 2];
    snprintf(pt, sizeof pt, "%s", panel_title ? panel_title : "");
    /* A long title first gets a smaller font (down to 80 %), then an ellipsis. */
    const float avail = (float)mp; /* wider would reach the "query" caption or the next title */
    float tpx = L->pt_px;
    while (tpx > 0.8f * L->pt_px && draw_text_width(r->font, pt, tpx) > avail)
        tpx -= 1.0f;
    draw_ellipsize(r->font, pt, sizeof pt, tpx, avail);
    if (draw_text(c, r->font, pt, tpx, x + mp / 2, y - 4 - frame, DRAW_MID, DRAW_BOTTOM, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    paint_cells(c, map, T, causal, &L->g, x, y, s);
    draw_frame(c, x, y, mp, mp, frame, DRAW_FRAME);
    if (L->lp_px > 0.0f &&
        token_labels(c, r, labels, T, L->lp, (float)mp / (float)T, L->lp_px, x, y, x - 6 - frame,
                          y + mp + 6 + frame, query, key) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    /* Axis captions in the free corners: "query ↓" on the title line,
     * "key →" beside the key labels. */
    const int cx = x - 6 - frame;
    if ((query && draw_text(c, r->font, OV_QUERY, L->cap_px, cx, y - 4 - frame, DRAW_END, DRAW_BOTTOM, DRAW_INK, 0) != MHAVIZ_OK) ||
        (query && key && draw_text(c, r->font, OV_KEY, L->cap_px, cx, y + mp + 6 + frame, DRAW_END, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK))
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

static int overview_picture(Renderer *r, DrawCanvas *c, const char *png_path, const float *const *maps,
                         int n_maps, int T, char *const *tokens, int causal, const char *title,
                         const char *subtitle, char *const *panel_titles, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
        char *labels = calloc((size_t)T, LABEL_BYTES); // (T, LABEL_BYTES) each token as drawn
    const Scale s = weights_scale(r);
    OvLayout L;
    if (!labels)
        goto oom;
    overview_layout(r, n_maps, T, tokens, causal, subtitle, &L, labels);
    const int W = L.pub.width, H = L.pub.height, m = L.m, cols = L.pub.cols;
    const int n_grid = n_maps - L.pub.apart;
    if (draw_canvas_reset(c, W, H) != MHAVIZ_OK)
        goto oom;

    /* The title, then the subtitle and the note, each centred. */
    char head[LABEL_BYTES * 2];
    snprintf(head, sizeof head, "%s", title ? title : "");
    draw_ellipsize(r->font, head, sizeof head, L.title_px, (float)(W - 2 * m));
    int y = m;
    if (draw_text(c, r->font, head, L.title_px, W / 2, y, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;
    y += (int)draw_line_height(L.title_px);
    for (int k = 0; k <= L.sub.n; k++) {
        const char *line = k < L.sub.n ? L.sub.line[k] : L.note;
        if (line[0] && draw_text(c, r->font, line, L.note_px, W / 2, y, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            goto oom;
        y += (int)draw_line_height(L.note_px);
    }

    /* The heads: query labels on the first column, key labels under the
     * bottom map of each column. */
    for (int p = 0; p < n_grid; p++) {
        const int row = p / cols, col = p % cols;
        if (overview_panel(c, r, &L, labels, maps[p], T, causal, &s, panel_titles ? panel_titles[p] : NULL,
                       L.pub.map_x + col * L.pub.dx, L.pub.map_y + row * L.pub.dy, col == 0,
                       p + cols >= n_grid) != MHAVIZ_OK)
            goto oom;
    }
    /* The wide head, apart: a rule, then its panel with labels of its own. */
    if (L.pub.apart) {
        draw_fill_rect(c, L.rule_x - 1, L.rule_y0, 2, L.rule_y1 - L.rule_y0, DRAW_FRAME);
        if (overview_panel(c, r, &L, labels, maps[n_maps - 1], T, causal, &s,
                       panel_titles ? panel_titles[n_maps - 1] : NULL, L.pub.wide_x, L.pub.wide_y, 1, 1) != MHAVIZ_OK)
            goto oom;
    }

    if (colour_bar(c, r, &s, L.bar_x, L.bar_y, L.bar_w, L.bar_h, L.pt_px, causal) != MHAVIZ_OK)
        goto oom;
    rc = draw_write_png(c, png_path, err, errlen);
    goto cleanup;

oom:
    snprintf(err, errlen, "%s: out of memory drawing the picture", png_path);
    rc = MHAVIZ_ENOMEM;
cleanup:
    free(labels);
    return rc;
}

/* ------------------------------------------- for the other pictures of a run */


int render_paint_map(const Renderer *r, DrawCanvas *c, const float *att, int T, int causal, int x, int y, int side)
{
    const Scale s = weights_scale(r);
    const Grid g = grid_for_panel(T, side > 1 ? side : 1);
    const int drawn = g.B * g.cell;
    paint_cells(c, att, T, causal, &g, x, y, &s);
    draw_frame(c, x, y, drawn, drawn, frame_px(drawn), DRAW_FRAME);
    return drawn;
}

int render_weights_bar(const Renderer *r, DrawCanvas *c, int x, int y, int w, int h, float tick_px, int causal)
{
    const Scale s = weights_scale(r);
    return colour_bar(c, r, &s, x, y, w, h, tick_px, causal);
}

/* --------------------------------------------------------------- the jobs */

static int render_job(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                      char *err, size_t errlen)
{
    Scale s;
    switch (j->kind) {
    case RENDER_WEIGHTS:
        s = weights_scale(r);
        return render_map(r, c, j->path, j->values, T, tokens, causal, j->title, j->subtitle, &s, err, errlen);
    case RENDER_SCORES: {
        float *shifted = malloc((size_t)T * T * sizeof *shifted); /* (T, T) scores less their row's maximum */
        if (!shifted) {
            snprintf(err, errlen, "%s: out of memory drawing the picture", j->path);
            return MHAVIZ_ENOMEM;
        }
        render_scores_less_row_max(shifted, j->values, T, causal);
        s = scores_scale(shifted, T, causal);
        const int rc = render_map(r, c, j->path, shifted, T, tokens, causal, j->title, j->subtitle, &s, err, errlen);
        free(shifted);
        return rc;
    }
    case RENDER_OVERVIEW:
        return overview_picture(r, c, j->path, j->maps, j->n_maps, T, tokens, causal, j->title, j->subtitle,
                                j->panel_titles, err, errlen);
    case RENDER_SHARPNESS:
        return render_sharpness_draw(c, r->font, r->opt.overview_w, r->opt.overview_h, j->path, j->maps, j->n_maps,
                                     T, tokens, causal, j->title, j->subtitle, j->panel_titles, err, errlen);
    case RENDER_OWN:
        return j->draw(j->arg, c, j->path, err, errlen);
    }
    return MHAVIZ_OK;
}

int render_sharpness_layout(Renderer *r, int n_maps, int T, char *const *tokens, char *const *legend,
                            const char *subtitle, RenderSharpnessLayout *out)
{
    return render_sharpness_layout_at(r->font, r->opt.overview_w, r->opt.overview_h, n_maps, T, tokens, legend,
                                      subtitle, out);
}

int render_jobs(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens, int causal,
                char *err, size_t errlen)
{
    return render_jobs_progress(r, jobs, n_jobs, T, tokens, causal, NULL, NULL, err, errlen);
}

int render_jobs_progress(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens,
                         int causal, RenderProgress progress, void *ctx, char *err, size_t errlen)
{
    int *rcs = calloc((size_t)n_jobs + 1, sizeof *rcs);
    char *errs = calloc((size_t)n_jobs + 1, MHAVIZ_ERRLEN);
    if (!rcs || !errs) {
        free(rcs);
        free(errs);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    /* Each picture is independent work writing its own file; each thread
     * draws its pictures one after the other on a canvas of its own. */
    int done = 0, reported = 0; /* pictures finished; the most the caller has reported */
#pragma omp parallel if (n_jobs > 1)
    {
        DrawCanvas *c = draw_canvas_new(1, 1);
        int is_caller = 1;
#ifdef _OPENMP
        is_caller = omp_get_thread_num() == 0;
#endif
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < n_jobs; k++) {
            char *err_k = errs + (size_t)k * MHAVIZ_ERRLEN;
            if (c) {
                rcs[k] = render_job(r, c, &jobs[k], T, tokens, causal, err_k, MHAVIZ_ERRLEN);
            } else {
                snprintf(err_k, MHAVIZ_ERRLEN, "%s: out of memory drawing the picture", jobs[k].path);
                rcs[k] = MHAVIZ_ENOMEM;
            }
            int now_done;
#pragma omp atomic capture
            now_done = ++done;
            if (progress && is_caller) {
                progress(ctx, (double)now_done / n_jobs);
                reported = now_done;
            }
        }
        draw_canvas_free(c);
    }
    if (progress && reported < n_jobs) /* another thread finished the last picture */
        progress(ctx, 1.0);
    int rc = MHAVIZ_OK;
    for (int k = 0; k < n_jobs && rc == MHAVIZ_OK; k++) {
        if (rcs[k] != MHAVIZ_OK) {
            rc = rcs[k];
            snprintf(err, errlen, "%s", errs + (size_t)k * MHAVIZ_ERRLEN);
        }
    }
    free(rcs);
    free(errs);
    return rc;
}
