/* variants_slide.c — variants.png (see variants_slide.h). */
#include "pictures/variants_slide.h"
#include "core/measures.h"
#include "core/rival.h"
#include "core/status.h"
#include "draw/draw.h"
#include "draw/figure.h"
#include "pictures/head_columns.h"
#include "pictures/labels.h"
#include "text/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TITLE_PX 44.0f
#define NAME_PX 40.0f  /* the variant's name */
#define TEXT_PX 28.0f  /* everything else */
#define GROUP_PX 24.0f /* the K/V marks */
#define ROLE_PX 22.0f  /* each map's role, under it */
#define LABEL_PX 22.0f /* the query tokens left of the first column, at most */
#define LEVEL_GAP 6    /* between staggered levels of labels */

#define TOP 150        /* below the title and the column names */
#define BOTTOM 70      /* the caption */
#define NAMES_W 240    /* the variants' names */
#define BAR_W 190      /* the colour bar, its ticks and "masked" */
#define MARK_H 34      /* the K/V mark above each row of maps */
#define ROLE_H 28      /* each map's role under it */
#define GAP 18         /* between maps */
#define WIDE_GAP 50    /* before the wide head's column */

/* Two shades for the K/V marks, alternating from group to group. */
static const DrawRgb MARK_A = {70, 110, 160}, MARK_B = {150, 175, 205};
static const DrawRgb GREY_TEXT = {90, 90, 90};

/* Long on purpose: the slide drawn in one pass, top to bottom: title, one
 * row per variant, colour bar, note. */
int variants_slide_draw(const Renderer *r, const char *path, const Variant *v, int n, char *err, size_t errlen)
{
    const MhaConfig *c0 = &v[0].in.cfg;
    const int nh = c0->n_heads, T = c0->T;
    unsigned char *shown = malloc((size_t)T); /* (T) 0: no label, else 1 + its level (labels.h) */
    float *centre = malloc((size_t)T * sizeof *centre); /* (T) each label's centre, pixels down from a map's top */
    Figure s;
    int rc = shown && centre ? figure_begin(&s, NULL, render_font(r), SLIDE_W, SLIDE_H, err, errlen) : MHAVIZ_ENOMEM;
    if (rc != MHAVIZ_OK) {
        free(shown), free(centre);
        return rc == MHAVIZ_ENOMEM ? draw_nomem(err, errlen, path) : rc;
    }
    const size_t map = (size_t)T * T;
    int col_head[VARIANTS_SLIDE_MAX_COLUMNS];
    const int n_cols = head_columns(nh, VARIANTS_SLIDE_MAX_COLUMNS, col_head);

    /* The query tokens label the first column's rows (labels.h): the map
     * side is as large as both the rows and the columns allow with the
     * labels' levels beside it, on as few levels as give every token a
     * label (at most LABELS_MAX_LEVELS, else thinned). */
    char label[RENDER_LABEL_BYTES];
    float widest = 0.0f; /* at LABEL_PX, cut at 5 lines */
    for (int t = 0; t < T; t++) {
        render_token_label(s.f, v[0].in.tokens[t], LABEL_PX, 5.0f * LABEL_PX, label);
        widest = fmaxf(widest, draw_text_width(s.f, label, LABEL_PX));
    }
    const int row_room = (SLIDE_H - TOP - BOTTOM) / n - MARK_H - ROLE_H - GAP;
    int side = 0, levels = 1;
    for (levels = 1; levels <= LABELS_MAX_LEVELS; levels++) {
        const int labels_w = (int)ceilf((float)levels * (widest + LEVEL_GAP)) + 10;
        const int col_room = (SLIDE_W - NAMES_W - labels_w - BAR_W - WIDE_GAP) / (n_cols + 1) - GAP;
        side = row_room < col_room ? row_room : col_room;
        if (side >= T)
            side -= side % T; /* whole pixels per token, as render_paint_map draws them */
        if (T > LABELS_ALL_UP_TO || (float)levels * (float)side / (float)T >= LABELS_SPACING * LABELS_MIN_PX)
            break;
    }
    if (levels > LABELS_MAX_LEVELS)
        levels = LABELS_MAX_LEVELS;
    const LabelsPlan plan = labels_plan(T, v[0].in.tokens, -1, (float)side / (float)T, LABEL_PX, levels, shown, centre);
    float from[LABELS_MAX_LEVELS]; /* each level's start, pixels left of the map */
    float level_w[LABELS_MAX_LEVELS] = {0};
    for (int t = 0; t < T; t++) {
        if (!shown[t])
            continue;
        render_token_label(s.f, v[0].in.tokens[t], plan.px, 5.0f * LABEL_PX, label);
        level_w[shown[t] - 1] = fmaxf(level_w[shown[t] - 1], draw_text_width(s.f, label, plan.px));
    }
    float labels_w = 10.0f;
    for (int l = 0; l < plan.levels; l++) {
        from[l] = labels_w;
        labels_w += level_w[l] + LEVEL_GAP;
    }
    const int pitch = side + GAP, row_pitch = MARK_H + side + ROLE_H + GAP;
    const int x0 = NAMES_W + (int)ceilf(labels_w) +
                   (SLIDE_W - NAMES_W - (int)ceilf(labels_w) - BAR_W - WIDE_GAP - (n_cols + 1) * pitch) / 2;
    const int wide_x = x0 + n_cols * pitch + WIDE_GAP;
    const int y0 = TOP + (SLIDE_H - TOP - BOTTOM - n * row_pitch) / 2;
    char a[256], b[64];

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
    const int trained = v[0].in.has_single; /* the one head trained on its own, not a wide head */
    figure_text(&s, rival_name(trained)->panel, TEXT_PX, wide_x + side / 2, y0 - 12, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
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
        int line_y = my + side / 2 + 50;
        if (v[k].grouping[0]) { /* --kv-groups chose who shares */
            snprintf(a, sizeof a, "groups %s", v[k].grouping);
            figure_text(&s, a, TEXT_PX, 30, line_y, DRAW_START, DRAW_TOP, GREY_TEXT);
            line_y += 36;
        }
        if (v[k].pooled_from) { /* made from the input's K/V heads, never trained so (pool.h) */
            const PoolAlignment *al = &v[k].layer.alignment;
            figure_text(&s, "pooled, untrained", TEXT_PX, 30, line_y, DRAW_START, DRAW_TOP, GREY_TEXT);
            if (v[k].pool == POOL_MEAN || (al->aligned && !al->unique))
                figure_text(&s, v[k].pool == POOL_MEAN ? "plain mean" : "one of many", TEXT_PX, 30, line_y + 36,
                            DRAW_START, DRAW_TOP, GREY_TEXT);
        }

        /* The K/V mark: one bar over the maps of each group's shown heads. */
        for (int i = 0; i < n_cols;) {
            if (col_head[i] == HEAD_COLUMNS_ELIDED) {
                i++;
                continue;
            }
            const int g = v[k].kv_of[col_head[i]];
            int j = i; /* the group's run of columns i .. j (across a "..." when the group spans it) */
            for (int q = i + 1; q < n_cols; q++) {
                if (col_head[q] == HEAD_COLUMNS_ELIDED)
                    continue;
                if (v[k].kv_of[col_head[q]] != g)
                    break;
                j = q;
            }
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

        /* The maps: each shown head, then the wide head, each with the
         * role the measures give it under this variant. */
        for (int i = 0; i <= n_cols; i++) {
            const int wide = i == n_cols, x = wide ? wide_x : x0 + i * pitch;
            if (!wide && col_head[i] == HEAD_COLUMNS_ELIDED) {
                figure_text(&s, "\xe2\x80\xa6", NAME_PX, x + side / 2, my + side / 2, DRAW_MID, DRAW_MID, DRAW_INK);
                continue;
            }
            const int h = wide ? nh : col_head[i];
            render_paint_map(r, s.c, wide ? v[k].single.att : v[k].multi.att + (size_t)h * map, T, c->causal, x, my,
                             side);
            snprintf(a, sizeof a, "%s", measures_role_name(v[k].measures[h].role));
            draw_ellipsize(s.f, a, sizeof a, ROLE_PX, (float)side + GAP);
            figure_text(&s, a, ROLE_PX, x + side / 2, my + side + 4, DRAW_MID, DRAW_TOP, DRAW_INK);
        }

        /* The query tokens left of the first column, on their levels. */
        for (int t = 0; t < T; t++) {
            if (!shown[t])
                continue;
            const int l = shown[t] - 1, y = my + (int)centre[t];
            render_token_label(s.f, v[0].in.tokens[t], plan.px, 5.0f * LABEL_PX, label);
            if (l > 0)
                draw_fill_rect(s.c, x0 - (int)from[l] + 3, y, (int)from[l] - 6, 1, (DrawRgb){175, 175, 175});
            s.failed |= labels_draw(s.c, s.f, label, plan.px, x0 - (int)from[l], y, DRAW_END, 0) != MHAVIZ_OK;
        }
    }
    free(shown), free(centre);

    /* The one colour scale, and how to read the maps. */
    const int bar_h = n * row_pitch / 2 < 400 ? n * row_pitch / 2 : 400;
    s.failed |= render_weights_bar(r, s.c, SLIDE_W - BAR_W + 10, y0 + MARK_H, 36, bar_h, TEXT_PX, c0->causal) != MHAVIZ_OK;
    snprintf(a, sizeof a,
             "each map: rows = queries (tokens at the left), columns = keys, T = %d, one colour scale; under it "
             "its role; %s: width %d%s; B/token: K/V cache per token per layer, fp16", T,
             rival_name(trained)->panel, c0->d_model, trained ? ", trained on its own" : "");
    if (draw_text_width(s.f, a, TEXT_PX * 0.9f) > SLIDE_W - 40) /* the one head's longer words: fewer of ours */
        snprintf(a, sizeof a, "rows = queries, columns = keys, T = %d, one colour scale; under each map its role; %s: "
                 "width %d%s; B/token: K/V cache per token per layer, fp16", T, rival_name(trained)->panel,
                 c0->d_model, trained ? ", trained on its own" : "");
    figure_text(&s, a, TEXT_PX * 0.9f, SLIDE_W / 2, SLIDE_H - 24, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    /* Under the title: blocks averaged (render_paint_map shares the tokens
     * out over the pixels), labels thinned. */
    char note[200] = "", labelled[160];
    if (side < T) {
        const int k = (T + side - 1) / side;
        snprintf(note, sizeof note, "each pixel of a map is the mean of a block of up to %d \xc3\x97 %d tokens", k, k);
    }
    labels_note(&plan, labelled, sizeof labelled);
    snprintf(a, sizeof a, "%s%s%s", note, note[0] && labelled[0] ? " \xc2\xb7 " : "", labelled);
    figure_text(&s, a, TEXT_PX * 0.9f, SLIDE_W / 2, 76, DRAW_MID, DRAW_TOP, GREY_TEXT);

    return figure_write(&s, path, err, errlen);
}
