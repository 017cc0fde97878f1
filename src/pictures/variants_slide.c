/* variants_slide.c — variants.png (see variants_slide.h). */
#include "pictures/variants_slide.h"
#include "core/measures.h"
#include "core/status.h"
#include "draw/draw.h"
#include "draw/figure.h"
#include "pictures/head_columns.h"
#include "text/format.h"

#include <stdio.h>

#define TITLE_PX 44.0f
#define NAME_PX 40.0f  /* the variant's name */
#define TEXT_PX 28.0f  /* everything else */
#define GROUP_PX 24.0f /* the K/V marks */

#define TOP 150        /* below the title and the column names */
#define BOTTOM 70      /* the caption */
#define NAMES_W 290    /* the variants' names */
#define BAR_W 190      /* the colour bar, its ticks and "masked" */
#define MARK_H 34      /* the K/V mark above each row of maps */
#define GAP 18         /* between maps */
#define WIDE_GAP 50    /* before the wide head's column */

/* Two shades for the K/V marks, alternating from group to group. */
static const DrawRgb MARK_A = {70, 110, 160}, MARK_B = {150, 175, 205};
static const DrawRgb GREY_TEXT = {90, 90, 90};

/* Long on purpose: the slide drawn in one pass, top to bottom: title, one
 * row per variant, colour bar, note. */
int variants_slide_draw(const Renderer *r, const char *path, const Variant *v, int n, char *err, size_t errlen)
{
    Figure s;
    int rc = figure_begin(&s, NULL, render_font(r), SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const MhaConfig *c0 = &v[0].in.cfg;
    const int nh = c0->n_heads, T = c0->T;
    const size_t map = (size_t)T * T;
    int col_head[VARIANTS_SLIDE_MAX_COLUMNS];
    const int n_cols = head_columns(nh, VARIANTS_SLIDE_MAX_COLUMNS, col_head);

    /* The map side: as large as both the rows and the columns allow. */
    const int row_room = (SLIDE_H - TOP - BOTTOM) / n - MARK_H - GAP;
    const int col_room = (SLIDE_W - NAMES_W - BAR_W - WIDE_GAP) / (n_cols + 1) - GAP;
    int side = row_room < col_room ? row_room : col_room;
    if (side >= T)
        side -= side % T; /* whole pixels per token, as render_paint_map draws them */
    const int pitch = side + GAP, row_pitch = MARK_H + side + GAP;
    const int x0 = NAMES_W + (SLIDE_W - NAMES_W - BAR_W - WIDE_GAP - (n_cols + 1) * pitch) / 2;
    const int wide_x = x0 + n_cols * pitch + WIDE_GAP;
    const int y0 = TOP + (SLIDE_H - TOP - BOTTOM - n * row_pitch) / 2;
    char a[192], b[64];

    /* Title and the column names. */
    /* Title: "Each head's map under MHA, GQA-2 and MQA", or without the names when too long. */
    int used = snprintf(a, sizeof a, "Each of the %d heads' maps under ", nh);
    for (int k = 0; k < n && used < (int)sizeof a; k++) {
        variant_name(b, sizeof b, nh, v[k].in.cfg.n_kv_heads);
        used += snprintf(a + used, sizeof a - (size_t)used, "%s%s", k == 0 ? "" : k + 1 < n ? ", " : " and ", b);
    }
    if (used >= (int)sizeof a || draw_text_width(s.f, a, TITLE_PX) > SLIDE_W - 80)
        snprintf(a, sizeof a, "Each of the %d heads' maps as their keys and values are shared", nh);
    figure_text(&s, a, TITLE_PX, SLIDE_W / 2, 24, DRAW_MID, DRAW_TOP, DRAW_INK);
    for (int i = 0; i < n_cols; i++) {
        if (col_head[i] == HEAD_COLUMNS_ELIDED)
            snprintf(a, sizeof a, "\xe2\x80\xa6");
        else
            snprintf(a, sizeof a, "head %d", col_head[i]);
        figure_text(&s, a, TEXT_PX, x0 + i * pitch + side / 2, y0 - 12, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    }
    figure_text(&s, "wide head", TEXT_PX, wide_x + side / 2, y0 - 12, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    draw_line(s.c, wide_x - WIDE_GAP / 2.0f, y0 - 40, wide_x - WIDE_GAP / 2.0f, y0 + n * row_pitch, 2.0f, GREY_TEXT);

    for (int k = 0; k < n; k++) {
        const MhaConfig *c = &v[k].in.cfg;
        const int kv_mul = nh / c->n_kv_heads, y = y0 + k * row_pitch, my = y + MARK_H;

        /* The variant's name, K/V heads and K/V cache per token. */
        CostTable cost;
        measures_cost(c, v[k].in.w.has_bias, v[k].in.w.has_bias, &cost);
        variant_name(a, sizeof a, nh, c->n_kv_heads);
        figure_text(&s, a, NAME_PX, 30, my + side / 2 - 30, DRAW_START, DRAW_BOTTOM, DRAW_INK);
        snprintf(a, sizeof a, "%d K/V head%s", c->n_kv_heads, c->n_kv_heads == 1 ? "" : "s");
        figure_text(&s, a, TEXT_PX, 30, my + side / 2 - 22, DRAW_START, DRAW_TOP, GREY_TEXT);
        snprintf(a, sizeof a, "%s B/token", format_grouped(b, cost.input.kv_cache_bytes));
        figure_text(&s, a, TEXT_PX, 30, my + side / 2 + 14, DRAW_START, DRAW_TOP, GREY_TEXT);

        /* The K/V mark: one bar over the maps of each group's shown heads. */
        for (int i = 0; i < n_cols;) {
            if (col_head[i] == HEAD_COLUMNS_ELIDED) {
                i++;
                continue;
            }
            const int g = col_head[i] / kv_mul;
            int j = i; /* the group's columns i .. j (across a "..." when the group spans it) */
            for (int q = i + 1; q < n_cols; q++)
                if (col_head[q] != HEAD_COLUMNS_ELIDED && col_head[q] / kv_mul == g)
                    j = q;
            int bx = x0 + i * pitch, bw = (j - i) * pitch + side;
            /* heads of the group among the left-out ones: the bar reaches halfway into the "..." */
            if (j + 1 < n_cols && col_head[j + 1] == HEAD_COLUMNS_ELIDED && (g + 1) * kv_mul - 1 > col_head[j])
                bw += pitch / 2;
            if (i > 0 && col_head[i - 1] == HEAD_COLUMNS_ELIDED && g * kv_mul < col_head[i])
                bx -= pitch / 2, bw += pitch / 2;
            draw_fill_rect(s.c, bx, y + 4, bw, MARK_H - 10, g % 2 ? MARK_B : MARK_A);
            snprintf(a, sizeof a, "K/V %d", g);
            figure_text(&s, a, GROUP_PX, bx + bw / 2, y + MARK_H / 2 - 1, DRAW_MID, DRAW_MID, g % 2 ? DRAW_INK : DRAW_WHITE);
            i = j + 1;
        }

        /* The maps: each shown head, then the wide head. */
        for (int i = 0; i < n_cols; i++) {
            if (col_head[i] == HEAD_COLUMNS_ELIDED) {
                figure_text(&s, "\xe2\x80\xa6", NAME_PX, x0 + i * pitch + side / 2, my + side / 2, DRAW_MID, DRAW_MID, DRAW_INK);
                continue;
            }
            render_paint_map(r, s.c, v[k].multi.att + (size_t)col_head[i] * map, T, c->causal, x0 + i * pitch, my, side);
        }
        render_paint_map(r, s.c, v[k].single.att, T, c->causal, wide_x, my, side);
    }

    /* The one colour scale, and how to read the maps. */
    const int bar_h = n * row_pitch / 2 < 400 ? n * row_pitch / 2 : 400;
    s.failed |= render_weights_bar(r, s.c, SLIDE_W - BAR_W + 10, y0 + MARK_H, 36, bar_h, TEXT_PX, c0->causal) != MHAVIZ_OK;
    snprintf(a, sizeof a,
             "each map: rows = queries, columns = keys, T = %d, one colour scale for all; wide head: one head of "
             "width %d; B/token: K/V cache per token per layer at fp16", T, c0->d_model);
    figure_text(&s, a, TEXT_PX * 0.9f, SLIDE_W / 2, SLIDE_H - 24, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    if (side < T) { /* render_paint_map shares the tokens out over the pixels */
        const int k = (T + side - 1) / side;
        snprintf(a, sizeof a, "each pixel of a map is the mean of a block of up to %d \xc3\x97 %d tokens", k, k);
        figure_text(&s, a, TEXT_PX * 0.9f, SLIDE_W / 2, 76, DRAW_MID, DRAW_TOP, GREY_TEXT);
    }

    return figure_write(&s, path, err, errlen);
}
