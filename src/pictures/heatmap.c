/* heatmap.c — one map (softmax weights or scores) on a figure of its own:
 * head_NN.png, single_head.png, head_NN_scores.png. */
#include "pictures/render_parts.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------ one map, one figure */

/* Where everything of a single-map figure goes. */
typedef struct {
    RenderLayout pub;       /* size, map origin, cell, block, label step */
    Grid g;
    int map;                /* map side in pixels */
    float pitch;            /* pixels per token */
    LabelSet *ls;           /* the token labels (the caller's) */
    float label_px, title_px, cap_px, lw;   /* lw: pixels the labels take across their axis */
    int m, frame, cap_h, bar_x, bar_w, key_top;
    char title[LABEL_BYTES * 2]; /* as drawn: cut to the slide's width */
    TextLines sub;          /* the subtitle as drawn: wrapped to the figure's width */
    char note[256];         /* under the subtitle when not one labelled cell per token */
} Layout;

/* A single map's figure fits a slide (SLIDE_W x SLIDE_H) at the default
 * cell size: the map is made smaller when the labels need the room. */

/* Lay out the figure for T tokens with a map of at most target pixels;
 * fills labels (T, LABEL_BYTES) for the labelled tokens, cut to label_w
 * pixels (0: as wide as 8 lines of them, 110 to 260 px). Left to right:
 * caption, labels, map, colour bar, ticks; top to bottom: title,
 * subtitle, note, map, key labels, caption. */
static void map_layout_at(const Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                          int target, float label_w, Layout *L, LabelSet *ls)
{
    memset(L, 0, sizeof *L);
    L->ls = ls;
    L->g = render_grid_for_slide(T, r->opt.cell_px, target);
    L->map = L->g.B * L->g.cell;
    L->pitch = (float)L->map / (float)T;
    const float max_px = fmaxf(28.0f, (float)L->map / 30.0f);
    L->title_px = clampf((float)L->map / 24.0f, 30.0f, 50.0f);
    L->m = 24;
    L->frame = frame_px(L->map);
    if (!(label_w > 0.0f))
        label_w = clampf(8.0f * fminf(max_px, L->pitch), 110.0f, 260.0f);
    L->lw = render_plan_labels(r, tokens, T, L->pitch, max_px, 2, label_w, ls);
    L->label_px = ls->plan.px;
    L->cap_px = clampf(fmaxf(L->label_px * 1.05f, (float)L->map / 40.0f), 22.0f, 36.0f);

    const Grid *g = &L->g;
    char labelled[160];
    labels_note(&ls->plan, labelled, sizeof labelled);
    if (g->k > 1)
        snprintf(L->note, sizeof L->note, "blocks of %d\xc3\x97%d tokens averaged%s%s", g->k, g->k,
                 labelled[0] ? " \xc2\xb7 " : "", labelled);
    else
        snprintf(L->note, sizeof L->note, "%s", labelled);

    const int m = L->m, map = L->map;
    L->cap_h = (int)draw_line_height(L->cap_px);
    L->pub.map_x = m + L->cap_h + 10 + (int)ceilf(L->lw) + 10 + L->frame;
    L->bar_w = (int)clampf((float)map / 24.0f, 24.0f, 40.0f);
    L->bar_x = L->pub.map_x + map + 36;
    /* the widest tick or swatch label: a score map's "< −10: clipped" */
    const float tick_w = fmaxf(draw_text_width(r->font, "\xe2\x88\x92" "0.888", L->cap_px),
                               draw_text_width(r->font, "< \xe2\x88\x92" "10: clipped", L->cap_px));
    int W = L->bar_x + L->bar_w + 11 + (int)ceilf(tick_w) + m;
    /* The title may widen the figure up to the slide; the subtitle wraps. */
    snprintf(L->title, sizeof L->title, "%s", title ? title : "");
    draw_ellipsize(r->font, L->title, sizeof L->title, L->title_px, (float)(SLIDE_W - 2 * m));
    const int title_w = (int)ceilf(draw_text_width(r->font, L->title, L->title_px));
    if (W < title_w + 2 * m)
        W = title_w + 2 * m;
    render_wrap_parts(r->font, subtitle, L->cap_px, (float)(W - 2 * m), &L->sub);
    L->pub.map_y = m + (int)draw_line_height(L->title_px) + (L->sub.n + (L->note[0] ? 1 : 0)) * L->cap_h + 18;
    L->key_top = L->pub.map_y + map + 8 + L->frame;
    int H = L->key_top + (int)ceilf(L->lw) + 10 + L->cap_h + m;
    if (H < L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m)
        H = L->pub.map_y + map + L->bar_w + (int)(2.0f * L->cap_px) + m;
    L->pub.width = W;
    L->pub.height = H;
    L->pub.cell = g->cell;
    L->pub.block = g->k;
    L->pub.label_step = ls->plan.step;
    L->pub.label_levels = ls->plan.levels;
    L->pub.label_px = ls->plan.px;
    L->pub.labelled = ls->plan.n;
    L->pub.frame = L->frame;
}

/* map_layout_at with the largest map (up to MAP_TARGET_PX) that keeps the
 * figure within SLIDE_W x SLIDE_H: the key labels are first cut shorter
 * (down to 4 lines' width), then the map made smaller. A forced cell size
 * (--cell) is laid out as it is. */
static void map_layout(const Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                       Layout *L, LabelSet *ls)
{
    int target = MAP_TARGET_PX;
    map_layout_at(r, T, tokens, title, subtitle, target, 0.0f, L, ls);
    for (int tries = 0; tries < 8 && r->opt.cell_px == 0 && L->pub.height > SLIDE_H; tries++) {
        const float over = (float)(L->pub.height - SLIDE_H);
        const int levels = ls->plan.levels;
        /* each level's labels cut shorter, down to 4 lines' width */
        const float cut = fmaxf((L->lw - over - (float)(levels - 1) * LEVEL_GAP) / (float)levels, 4.0f * L->label_px);
        const float lw = (float)levels * cut + (float)(levels - 1) * LEVEL_GAP;
        const int shrink = (int)ceilf(over - (L->lw - lw)); /* what shorter labels do not win */
        if (shrink > 0)
            target = L->map - shrink > 64 ? L->map - shrink : 64;
        map_layout_at(r, T, tokens, title, subtitle, target, cut, L, ls);
    }
}

int render_heatmap_layout(Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                          RenderLayout *out)
{
    LabelSet ls;
    int rc = MHAVIZ_ENOMEM;
    if (render_labelset_alloc(&ls, T)) {
        Layout L;
        map_layout(r, T, tokens, title, subtitle, &L, &ls);
        *out = L.pub;
        rc = MHAVIZ_OK;
    }
    render_labelset_free(&ls);
    return rc;
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
    LabelSet ls;
    if (!render_labelset_alloc(&ls, T))
        goto oom;
    map_layout(r, T, tokens, title, subtitle, &L, &ls);
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

    render_paint_cells(c, v, T, causal, &L.g, map_x, map_y, s);
    draw_frame(c, map_x, map_y, map, map, L.frame, DRAW_FRAME);
    const int annotate = r->opt.annotate == 1 || (r->opt.annotate == -1 && T <= 16);
    if (annotate && L.g.k == 1 && L.g.cell >= 18 &&
        render_annotate_cells(c, r, v, T, causal, &L.g, map_x, map_y, s) != MHAVIZ_OK)
        goto oom;

    /* Labels and the axis captions. */
    if (render_paint_labels(c, r, &ls, T, map_x, map_y, map_x - 10 - L.frame, L.key_top, 1, 1) != MHAVIZ_OK ||
        draw_text(c, r->font, "query", L.cap_px, m, map_y + map / 2, DRAW_MID, DRAW_TOP, DRAW_INK, 1) != MHAVIZ_OK ||
        draw_text(c, r->font, "key", L.cap_px, map_x + map / 2, L.key_top + (int)ceilf(L.lw) + 10, DRAW_MID, DRAW_TOP, DRAW_INK, 0) !=
            MHAVIZ_OK)
        goto oom;

    if (render_colour_bar(c, r, s, L.bar_x, map_y, L.bar_w, map, L.cap_px, causal, T) != MHAVIZ_OK)
        goto oom;

    rc = draw_write_png(c, png_path, err, errlen);
    goto cleanup;

oom:
    rc = draw_nomem(err, errlen, png_path);
cleanup:
    render_labelset_free(&ls);
    return rc;
}

int render_draw_weights(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                        char *err, size_t errlen)
{
    const Scale s = render_weights_scale(r);
    return render_map(r, c, j->path, j->values, T, tokens, causal, j->title, j->subtitle, &s, err, errlen);
}

int render_draw_scores(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                       char *err, size_t errlen)
{
    float *shifted = malloc((size_t)T * T * sizeof *shifted); /* (T, T) scores less their row's maximum */
    if (!shifted)
        return draw_nomem(err, errlen, j->path);
    render_scores_less_row_max(shifted, j->values, T, causal);
    const Scale s = render_scores_scale(shifted, T, causal);
    const int rc = render_map(r, c, j->path, shifted, T, tokens, causal, j->title, j->subtitle, &s, err, errlen);
    free(shifted);
    return rc;
}

int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen)
{
    const RenderJob j = {.draw = render_draw_weights, .path = png_path, .title = title, .values = att};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

int render_scores(Renderer *r, const char *png_path, const float *scores, int T,
                  char *const *tokens, int causal, const char *title,
                  char *err, size_t errlen)
{
    const RenderJob j = {.draw = render_draw_scores, .path = png_path, .title = title, .values = scores};
    return render_jobs(r, &j, 1, T, tokens, causal, err, errlen);
}

void render_scores_less_row_max(float *out, const float *scores, int T, int causal)
{
    for (int i = 0; i < T; i++) {
        const float *s_i = scores + (size_t)i * T; /* (T) row i */
        float *o_i = out + (size_t)i * T;
        const int n_i = mha_visible_keys(causal, i, T);       /* keys query i may see */
        float max = s_i[0];
        for (int j = 1; j < n_i; j++)
            if (s_i[j] > max)
                max = s_i[j];
        for (int j = 0; j < T; j++)
            o_i[j] = j < n_i ? s_i[j] - max : 0.0f;
    }
}
