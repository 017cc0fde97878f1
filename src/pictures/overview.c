/* overview.c — overview.png: every head's map and the wide head's on one
 * slide, one shared colour bar. */
#include "pictures/render_parts.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* --------------------------------------------------------------- overview */

/* Where everything of the overview goes. */
typedef struct {
    RenderOverviewLayout pub; /* size, grid, first map, panel steps, cell, labels, the wide panel */
    Grid g;
    LabelSet *ls;   /* the token labels (the caller's) */
    float title_px, note_px, pt_px, cap_px, lp_px; /* lp_px = 0: no token labels */
    int m, gap, sep, pth, cap_h, lm_left, lm_bottom, title_h;
    int bar_x, bar_y, bar_w, bar_h;
    int rule_x, rule_y0, rule_y1; /* the line between the heads and the wide head (apart only) */
    TextLines sub;  /* the subtitle as drawn, wrapped to the figure's width */
    char note[256]; /* last title line: blocks averaged, labels thinned */
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

/* The note under the overview into L->note: the blocks averaged (when the grid L->g averages k x k
 * tokens) and, when labels are planned in ls (labelled_any), how they were thinned. */
static void ov_note(OvLayout *L, int T, int labelled_any, const LabelSet *ls)
{
    L->note[0] = '\0';
    char blocks[64] = "";
    if (L->g.k > 1) {
        const int kmin = T / L->g.B; /* even blocks hold kmin or kmin + 1 tokens a side */
        if (kmin == L->g.k || T % L->g.B == 0)
            snprintf(blocks, sizeof blocks, "blocks of %d\xc3\x97%d tokens averaged", L->g.k, L->g.k);
        else
            snprintf(blocks, sizeof blocks, "blocks of %d to %d tokens a side averaged", kmin, L->g.k);
    }
    char labelled[160] = "";
    if (labelled_any)
        labels_note(&ls->plan, labelled, sizeof labelled);
    snprintf(L->note, sizeof L->note, "%s%s%s", blocks, blocks[0] && labelled[0] ? " \xc2\xb7 " : "", labelled);
}

/* Place the grid (n_grid maps in best_cols columns), the wide head's panel (apart) and the bar,
 * centred in the area (ay, aw x ah) below the title; lw the token labels' width, bar_block the bar's
 * width with its ticks, the masked swatch under the bar when masked (render_masks_some). */
static void ov_place(const Renderer *r, OvLayout *L, int n_grid, int apart, int best_cols, float lw, int ay, int aw,
                     int ah, int bar_block, int masked)
{
    ov_margins(r, L, lw, &L->lm_left, &L->lm_bottom);
    const int mp = L->g.B * L->g.cell;
    const int cols = best_cols, rows = (n_grid + cols - 1) / cols;
    const int grid_w = L->lm_left + cols * mp + (cols - 1) * L->gap;
    const int gw = grid_w + (apart ? L->sep + L->lm_left + mp : 0) + bar_block;
    const int gh = rows * (L->pth + mp) + (rows - 1) * L->gap + L->lm_bottom;
    L->pub.cols = cols;
    L->pub.rows = rows;
    L->pub.side = mp;
    L->pub.cell = L->g.cell;
    L->pub.block = L->g.k;
    L->pub.label_px = L->lp_px;
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
    const int sw = masked ? L->bar_w + (int)(1.5f * L->pt_px) : 0; /* the "masked" swatch under the bar */
    L->bar_x = right + L->pub.frame + L->gap;
    L->bar_y = L->pub.map_y;
    L->bar_h = (rows - 1) * L->pub.dy + mp - sw;
    if (L->bar_h < mp / 2)
        L->bar_h = mp / 2;
}

/* Lay out the overview of n_maps maps of T tokens; plans the token labels
 * into ls. With two maps or more the last (the wide head's) stands apart:
 * the others in a grid, then a rule, then its panel with labels of its
 * own. The grid is the one giving the biggest square maps; token labels
 * (labels.h) get the largest size from H/32 down to LABELS_MIN_PX at which
 * every token has a line of its own, else the largest at which every token
 * has a label on two staggered levels, else LABELS_MIN_PX thinned, else
 * none (maps too small to carry any). One layout decided in order
 * (margins, grid, label size, note, placing), each step using the last. */
static void overview_layout(const Renderer *r, int n_maps, int T, char *const *tokens, int causal,
                            const char *subtitle, OvLayout *L, LabelSet *ls)
{
    memset(L, 0, sizeof *L);
    L->ls = ls;
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
    render_wrap_parts(r->font, subtitle, L->note_px, (float)(W - 2 * L->m), &L->sub);
    const float lp_max = clampf((float)H / 32.0f, LABELS_MIN_PX, 40.0f);
    const int tick_w = (int)ceilf(fmaxf(draw_text_width(r->font, "masked", L->pt_px), draw_text_width(r->font, "0.75", L->pt_px)));
    const int bar_block = L->gap + L->bar_w + 11 + tick_w;

    /* Labels are measured once at 100 px (cut at 6 lines); widths scale with the size. */
    const float w100 = render_widest_label(r, tokens, T, 100.0f, 600.0f);

    /* The note line (blocks averaged, labels thinned) is known only at the
     * end; its room is kept whenever T is large enough to need it. */
    for (int pass = 0; pass < 2; pass++) {
        L->title_h = (int)draw_line_height(L->title_px) + (L->sub.n + pass) * (int)draw_line_height(L->note_px);
        const int ay = L->m + L->title_h + L->m / 2, aw = W - 2 * L->m, ah = H - L->m - ay;
        int best = 0, best_cols = 1, best_levels = 1;
        float best_lp = 0.0f;
        /* Descend from the largest label size, on one level, then on two;
         * stop at the first at which every token has a label. */
        for (int levels = 1; levels <= 2 && best_lp == 0.0f && T <= LABELS_ALL_UP_TO; levels++) {
            for (float lp = floorf(lp_max); lp >= LABELS_MIN_PX; lp -= 1.0f) {
                int lml, lmb, cols;
                ov_margins(r, L, (float)levels * w100 * lp / 100.0f + (float)(levels - 1) * LEVEL_GAP, &lml, &lmb);
                const int side = ov_best(L, n_grid, apart, aw, ah, lml, lmb, bar_block, &cols);
                const Grid g = render_grid_for_panel(T, side > 1 ? side : 1);
                const float pitch = (float)(g.B * g.cell) / (float)T;
                if ((float)levels * pitch >= LABELS_SPACING * lp) {
                    best = side, best_cols = cols, best_lp = lp, best_levels = levels;
                    break;
                }
            }
        }
        if (best_lp == 0.0f) {
            /* thinned labels at the smallest size, when the maps are big enough to carry some */
            int lml, lmb;
            ov_margins(r, L, w100 * LABELS_MIN_PX / 100.0f, &lml, &lmb);
            best = ov_best(L, n_grid, apart, aw, ah, lml, lmb, bar_block, &best_cols);
            const Grid g = render_grid_for_panel(T, best > 1 ? best : 1);
            best_lp = (float)(g.B * g.cell) >= 4.0f * LABELS_MIN_PX ? LABELS_MIN_PX : 0.0f;
        }
        if (best_lp == 0.0f) {
            /* no labels: captions only */
            int lml, lmb;
            ov_margins(r, L, 0.0f, &lml, &lmb);
            best = ov_best(L, n_grid, apart, aw, ah, lml, lmb, bar_block, &best_cols);
        }
        if (best < 1)
            best = 1; /* more panels than the figure holds: tiny maps, clipped at the edges */
        L->g = render_grid_for_panel(T, best);
        const int mp = L->g.B * L->g.cell;
        const float pitch = (float)mp / (float)T;
        /* the labels as planned for the maps' pitch (labels.h), cut at 6 lines each */
        const float lw = best_lp > 0.0f ? render_plan_labels(r, tokens, T, pitch, best_lp, best_levels, 6.0f * best_lp, ls) : 0.0f;
        L->lp_px = best_lp > 0.0f ? ls->plan.px : 0.0f;
        L->pub.label_step = best_lp > 0.0f ? ls->plan.step : 0;
        L->pub.label_levels = best_lp > 0.0f ? ls->plan.levels : 0;
        L->pub.labelled = best_lp > 0.0f ? ls->plan.n : 0;
        ov_note(L, T, best_lp > 0.0f, ls);
        if (L->note[0] && pass == 0)
            continue; /* lay out again with room for the note */

        ov_place(r, L, n_grid, apart, best_cols, lw, ay, aw, ah, bar_block, render_masks_some(causal, T));
        break;
    }
}

int render_overview_layout(Renderer *r, int n_maps, int T, char *const *tokens, int causal, const char *subtitle,
                           RenderOverviewLayout *out)
{
    LabelSet ls;
    int rc = MHAVIZ_ENOMEM;
    if (render_labelset_alloc(&ls, T)) {
        OvLayout L;
        overview_layout(r, n_maps, T, tokens, causal, subtitle, &L, &ls);
        *out = L.pub;
        rc = MHAVIZ_OK;
    }
    render_labelset_free(&ls);
    return rc;
}

int render_overview(Renderer *r, const char *png_path, const float *const *maps, int n_maps,
                    int T, char *const *tokens, int causal, const char *title,
                    char *const *panel_titles, char *err, size_t errlen)
{
    const RenderJob j = {.draw = render_draw_overview, .path = png_path, .title = title, .maps = maps,
                         .n_maps = n_maps, .panel_titles = panel_titles};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

/* One panel of the overview at map origin (x, y): its title, cells, frame,
 * query labels (when `query`), key labels (when `key`), and the "query ↓" /
 * "key →" captions beside them. */
static int overview_panel(DrawCanvas *c, const Renderer *r, const OvLayout *L, const float *map, int T,
                      int causal, const Scale *s, const char *panel_title, int x, int y, int query, int key)
{
    const int mp = L->pub.side, frame = L->pub.frame;
    char pt[LABEL_BYTES * 2];
    snprintf(pt, sizeof pt, "%s", panel_title ? panel_title : "");
    /* A long title first gets a smaller font (down to 80 %), then an ellipsis;
     * wider would reach the "query" caption or the next title. */
    const float tpx = render_fit_shrink(r->font, pt, sizeof pt, L->pt_px, 0.8f * L->pt_px, (float)mp);
    if (draw_text(c, r->font, pt, tpx, x + mp / 2, y - 4 - frame, DRAW_MID, DRAW_BOTTOM, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    render_paint_cells(c, map, T, causal, &L->g, x, y, s);
    draw_frame(c, x, y, mp, mp, frame, DRAW_FRAME);
    if (L->lp_px > 0.0f &&
        render_paint_labels(c, r, L->ls, T, x, y, x - 6 - frame, y + mp + 6 + frame, query, key) != MHAVIZ_OK)
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
    const Scale s = render_weights_scale(r);
    OvLayout L;
    LabelSet ls;
    if (!render_labelset_alloc(&ls, T))
        goto oom;
    overview_layout(r, n_maps, T, tokens, causal, subtitle, &L, &ls);
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
        if (overview_panel(c, r, &L, maps[p], T, causal, &s, panel_titles ? panel_titles[p] : NULL,
                       L.pub.map_x + col * L.pub.dx, L.pub.map_y + row * L.pub.dy, col == 0,
                       p + cols >= n_grid) != MHAVIZ_OK)
            goto oom;
    }
    /* The wide head, apart: a rule, then its panel with labels of its own. */
    if (L.pub.apart) {
        draw_fill_rect(c, L.rule_x - 1, L.rule_y0, 2, L.rule_y1 - L.rule_y0, DRAW_FRAME);
        if (overview_panel(c, r, &L, maps[n_maps - 1], T, causal, &s,
                       panel_titles ? panel_titles[n_maps - 1] : NULL, L.pub.wide_x, L.pub.wide_y, 1, 1) != MHAVIZ_OK)
            goto oom;
    }

    if (render_colour_bar(c, r, &s, L.bar_x, L.bar_y, L.bar_w, L.bar_h, L.pt_px, causal, T) != MHAVIZ_OK)
        goto oom;
    rc = draw_write_png(c, png_path, err, errlen);
    goto cleanup;

oom:
    rc = draw_nomem(err, errlen, png_path);
cleanup:
    render_labelset_free(&ls);
    return rc;
}

int render_draw_overview(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                         char *err, size_t errlen)
{
    return overview_picture(r, c, j->path, j->maps, j->n_maps, T, tokens, causal, j->title, j->subtitle,
                            j->panel_titles, err, errlen);
}
