/* architecture.c — architecture.png (see architecture.h).
 *
 * Each row of the stack is a band of the picture, named at the left with
 * its shapes; the heads' columns share the width right of the names. In a
 * head's column the query box sits left and its K/V box, when the column
 * holds one, right; a K/V box is joined by a line to every head of its
 * group, so sharing shows as lines fanning out from one box. */
#include "pictures/architecture.h"
#include "core/status.h"
#include "core/variant.h"
#include "draw/figure.h"
#include "pictures/head_columns.h"
#include "text/format.h"

#include <math.h>
#include <stdio.h>

#define TITLE_PX 42.0f
#define SUBTITLE_PX 32.0f
#define NAME_PX 30.0f  /* the names in boxes and of the rows */
#define SHAPE_PX 26.0f /* shapes, the smallest text */
#define MIN_PX 22.0f   /* a shape is never set smaller: it is left to the row's name */

/* The bands, top to bottom: y and height. */
#define WO_Y 140
#define WO_H 70
#define CAT_Y 255
#define CAT_H 70
#define HEADS_Y 370
#define HEADS_H 290
#define PROJ_Y 720
#define PROJ_H 110
#define X_Y 880
#define X_H 76
#define CAPTION_Y 990

/* The columns: right of the row names. */
#define NAMES_X 30
#define COLS_X 380
#define COLS_W (SLIDE_W - COLS_X - 30)
#define COL_MAX_W 330

static const DrawRgb HEAD_FILL = {255, 228, 181}, HEAD_EDGE = {200, 120, 20};
static const DrawRgb Q_FILL = {214, 232, 248}, KV_FILL = {214, 240, 214}, WIDE_FILL = {236, 236, 236};
static const DrawRgb LINK = {90, 90, 90}, GREY_TEXT = {90, 90, 90};

/* The size text s is set at to fit w pixels: px, or smaller down to MIN_PX;
 * 0 when even that is too wide. */
static float fit_px(const Figure *p, const char *s, float px, int w)
{
    const float tw = draw_text_width(p->f, s, px);
    const float fit = tw > w ? px * w / tw : px;
    return fit < MIN_PX ? 0.0f : fit;
}

/* A shape with its axes named, as text: shape[SIZED] "T×d_k = 11×64",
 * shape[NAMED] "T×d_k" (where the sizes do not fit: the title and the
 * row names give them). A bare "16 × 16" cannot say which axis is which
 * when T equals d_model or d_k. */
enum { SIZED, NAMED };
typedef char Shape[2][48];
static void shape_text(Shape shape, const char *rows, const char *cols, int n_rows, int n_cols)
{
    snprintf(shape[NAMED], sizeof shape[NAMED], "%s\xc3\x97%s", rows, cols);
    snprintf(shape[SIZED], sizeof shape[SIZED], "%s\xc3\x97%s = %d\xc3\x97%d", rows, cols, n_rows, n_cols);
}

/* 1 when each of the n texts fits w pixels at MIN_PX or more. */
static int all_fit(const Figure *p, char (*texts)[128], int n, int w)
{
    int fit = 1;
    for (int k = 0; k < n; k++)
        fit &= fit_px(p, texts[k], SHAPE_PX, w) > 0.0f;
    return fit;
}

/* A box with a frame and a name, with the shape below it when both fit
 * (set smaller when needed, never below MIN_PX: else the shape is left to
 * the row's name at the left). */
static void box(Figure *p, int x, int y, int w, int h, DrawRgb fill, DrawRgb edge, int edge_px, const char *name,
                const char *shape)
{
    draw_fill_rect(p->c, x, y, w, h, fill);
    draw_frame(p->c, x + edge_px, y + edge_px, w - 2 * edge_px, h - 2 * edge_px, edge_px, edge);
    const float name_px = fit_px(p, name, NAME_PX, w - 10);
    const float shape_px = shape ? fit_px(p, shape, SHAPE_PX, w - 10) : 0.0f;
    if (shape_px == 0.0f) {
        figure_text(p, name, name_px ? name_px : MIN_PX, x + w / 2, y + h / 2, DRAW_MID, DRAW_MID, DRAW_INK);
        return;
    }
    figure_text(p, name, name_px ? name_px : MIN_PX, x + w / 2, y + h / 2 - (int)(NAME_PX * 0.55f), DRAW_MID, DRAW_MID,
         DRAW_INK);
    figure_text(p, shape, shape_px, x + w / 2, y + h / 2 + (int)(NAME_PX * 0.6f), DRAW_MID, DRAW_MID, DRAW_INK);
}

/* A line from (x0, y0) up to (x1, y1) with an arrowhead at the top end. */
static void arrow(Figure *p, float x0, float y0, float x1, float y1)
{
    draw_line(p->c, x0, y0, x1, y1 + 4, 3.0f, LINK);
    const float dx = x1 - x0, dy = y1 - y0, len = sqrtf(dx * dx + dy * dy);
    const float ux = dx / len, uy = dy / len, s = 14.0f;
    draw_line(p->c, x1, y1, x1 - s * ux - 0.5f * s * uy, y1 - s * uy + 0.5f * s * ux, 3.0f, LINK);
    draw_line(p->c, x1, y1, x1 - s * ux + 0.5f * s * uy, y1 - s * uy - 0.5f * s * ux, 3.0f, LINK);
}

/* The name of a row at the left, and one or two details below it in grey. */
static void row_name(Figure *p, int y, int h, const char *name, const char *detail, const char *detail2)
{
    const int lines_h = (int)(NAME_PX * 1.2f) + (int)(SHAPE_PX * 1.2f) * (detail2 ? 2 : 1);
    int top = y + (h - lines_h) / 2;
    figure_text(p, name, NAME_PX, NAMES_X, top, DRAW_START, DRAW_TOP, DRAW_INK);
    top += (int)(NAME_PX * 1.2f);
    figure_text(p, detail, SHAPE_PX, NAMES_X, top, DRAW_START, DRAW_TOP, GREY_TEXT);
    if (detail2)
        figure_text(p, detail2, SHAPE_PX, NAMES_X, top + (int)(SHAPE_PX * 1.2f), DRAW_START, DRAW_TOP, GREY_TEXT);
}

/* Query head h's K/V head: kv_of[h], or (NULL) h / kv_mul, neighbours sharing. */
static int kv_group(const int *kv_of, int h, int kv_mul) { return kv_of ? kv_of[h] : h / kv_mul; }

/* The title and subtitle: the layer's heads and how they get their keys and values. */
static void arch_titles(Figure *p, const MhaConfig *c)
{
    const int hd = c->head_dim, nh = c->n_heads, nkv = c->n_kv_heads;
    const int kv_mul = nh / nkv;
    char a[256];
    /* Title: the layer and how its heads get their keys and values. */
    char name[16];
    variant_name(name, sizeof name, nh, nkv);
    const char *heads = nh == 1 ? "head" : "heads";
    snprintf(a, sizeof a, "Multi-head attention, read bottom to top: %d %s of width d_k = %d", nh, heads, hd);
    figure_text(p, a, TITLE_PX, SLIDE_W / 2, 20, DRAW_MID, DRAW_TOP, DRAW_INK);
    if (nkv == nh)
        snprintf(a, sizeof a, "%s: every query head has its own keys and values", name);
    else if (nkv == 1)
        snprintf(a, sizeof a, "%s: one key/value head shared by all %d query heads", name, nh);
    else
        snprintf(a, sizeof a, "%s: %d key/value heads, each shared by %d query heads", name, nkv, kv_mul);
    figure_text(p, a, SUBTITLE_PX, SLIDE_W / 2, 78, DRAW_MID, DRAW_TOP, GREY_TEXT);
}

/* The rows' names at the left, with their shapes: the axes by name (T tokens, d_model, d_k =
 * head_dim), their sizes in the boxes and at the bottom. */
static void arch_row_names(Figure *p, const MhaConfig *c)
{
    const int T = c->T, d = c->d_model, nh = c->n_heads, nkv = c->n_kv_heads;
    char a[256], b[256];
    /* The rows' names, with their shapes: the axes by name (T tokens,
     * d_model, d_k = head_dim), their sizes in the boxes and at the bottom. */
    row_name(p, WO_Y, WO_H, "output projection", "W_O: d_model\xc3\x97" "d_model", NULL);
    row_name(p, CAT_Y, CAT_H, "concatenate", "back to T\xc3\x97" "d_model", NULL);
    snprintf(a, sizeof a, nh == 1 ? "1 head" : "%d heads in parallel", nh);
    snprintf(b, sizeof b, "scores,%s softmax, \xc3\x97 V", c->causal ? " mask," : "");
    row_name(p, HEADS_Y, HEADS_H, a, nh == 1 ? "its steps:" : "each its own steps:", b);
    snprintf(a, sizeof a, "W_q: %d of d_model\xc3\x97" "d_k", nh);
    snprintf(b, sizeof b, "W_k, W_v: %d of d_model\xc3\x97" "d_k", nkv);
    row_name(p, PROJ_Y, PROJ_H, c->rope.dim > 0 ? "projections, q k rotated by position" : "projections", a, b);
    snprintf(a, sizeof a, "T = %d token%s", T, T == 1 ? "" : "s");
    snprintf(b, sizeof b, "d_model = %d", d);
    row_name(p, X_Y, X_H, "input x", a, b);
}

/* Where a column's K/V box sits inside it: from KV_LEFT to KV_RIGHT of the column's width. */
#define KV_LEFT 0.54f
#define KV_RIGHT 0.94f

/* Column i's K/V box for group g, when i is the middle one of the group's shown columns (col_head
 * (n_cols): each column's head, or HEAD_COLUMNS_ELIDED), with a line to each query head of the
 * group and to the "..." when some of them are left out; columns cw wide from x0. */
static void arch_kv_box(Figure *p, const int *col_head, int n_cols, int i, int g, const int *kv_of, int kv_mul, int x0,
                        int cw, const char *box_shape)
{
    char a[256];
    /* the K/V box of head h's group, in the middle one of the group's shown columns */
    int first = -1, last = -1, shown = 0;
    for (int k = 0; k < n_cols; k++)
        if (col_head[k] != HEAD_COLUMNS_ELIDED && kv_group(kv_of, col_head[k], kv_mul) == g)
            last = k, first = first < 0 ? k : first, shown++;
    int mid = first; /* the middle of the group's shown columns */
    for (int k = first, seen = 0; k <= last; k++)
        if (col_head[k] != HEAD_COLUMNS_ELIDED && kv_group(kv_of, col_head[k], kv_mul) == g && seen++ == (shown - 1) / 2)
            mid = k;
    if (mid != i)
        return;
    const int kx = x0 + i * cw + (int)(KV_LEFT * cw), kw = (int)((KV_RIGHT - KV_LEFT) * cw);
    snprintf(a, sizeof a, "k, v %d", g);
    box(p, kx, PROJ_Y, kw, PROJ_H, KV_FILL, DRAW_FRAME, 2, a, box_shape);
    arrow(p, kx + kw / 2.0f, X_Y, kx + kw / 2.0f, PROJ_Y + PROJ_H);
    for (int k = first; k <= last; k++) /* one line to each query head of the group */
        if (col_head[k] != HEAD_COLUMNS_ELIDED && kv_group(kv_of, col_head[k], kv_mul) == g)
            arrow(p, kx + kw / 2.0f, PROJ_Y, x0 + k * cw + (KV_LEFT + KV_RIGHT) / 2 * cw, HEADS_Y + HEADS_H);
    int hidden = 0; /* heads of the group among the left-out ones: a line to the "..." */
    for (int k = 0, e = -1; k < n_cols && !hidden; k++)
        if (col_head[k] == HEAD_COLUMNS_ELIDED) {
            e = k;
            hidden = g * kv_mul + kv_mul - 1 > col_head[e - 1] && g * kv_mul < col_head[e + 1];
            if (hidden)
                arrow(p, kx + kw / 2.0f, PROJ_Y, x0 + e * cw + cw / 2.0f, HEADS_Y + HEADS_H - 30);
        }
}

/* Top and bottom: x, the concatenation, W_O, as wide as the heads (columns from x0 to x1, pad
 * inside), or as their texts when fewer heads leave them narrower (centred); the arrow from the
 * concatenation up to W_O. */
static void arch_wide_boxes(Figure *p, const MhaConfig *c, int x0, int x1, int pad)
{
    const int T = c->T, d = c->d_model, hd = c->head_dim, nh = c->n_heads;
    Shape td, dd; /* T x d_model, d_model x d_model */
    shape_text(td, "T", "d_model", T, d);
    shape_text(dd, "d_model", "d_model", d, d);
    char wide[3][256];
    snprintf(wide[0], sizeof wide[0], "x  \xc2\xb7  %s", td[SIZED]);
    if (nh == 1) /* nothing to put side by side */
        snprintf(wide[1], sizeof wide[1], "one head: its output is already %s", td[SIZED]);
    else
        snprintf(wide[1], sizeof wide[1], "concatenate the %d heads  \xc2\xb7  %s (%d\xc3\x97" "d_k = %d\xc3\x97%d = %d)",
                 nh, td[SIZED], nh, nh, hd, d);
    snprintf(wide[2], sizeof wide[2], "W_O (%s) mixes %s  \xc2\xb7  output %s", dd[SIZED],
             nh == 1 ? "its output" : "the heads", td[SIZED]);
    int wide_w = x1 - x0 - 2 * pad;
    for (int k = 0; k < 3; k++) {
        const int need = (int)ceilf(draw_text_width(p->f, wide[k], NAME_PX)) + 40;
        if (need > wide_w)
            wide_w = need < COLS_W ? need : COLS_W;
    }
    const int wide_x = (x0 + x1 - wide_w) / 2;
    box(p, wide_x, X_Y, wide_w, X_H, WIDE_FILL, DRAW_FRAME, 2, wide[0], NULL);
    box(p, wide_x, CAT_Y, wide_w, CAT_H, WIDE_FILL, DRAW_FRAME, 2, wide[1], NULL);
    box(p, wide_x, WO_Y, wide_w, WO_H, WIDE_FILL, DRAW_FRAME, 2, wide[2], NULL);
    arrow(p, (x0 + x1) / 2.0f, CAT_Y, (x0 + x1) / 2.0f, WO_Y + WO_H);
}

/* The diagram drawn in one pass, bottom to top, box by box, as the lesson's figure reads. */
int architecture_draw(DrawCanvas *canvas, const DrawFont *f, const char *path, const MhaConfig *c, const int *kv_of,
                      int64_t params, int has_bias, char *err, size_t errlen)
{
    Figure p;
    int rc = figure_begin(&p, canvas, f, SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const int T = c->T, d = c->d_model, hd = c->head_dim, nh = c->n_heads, nkv = c->n_kv_heads;
    const int kv_mul = nh / nkv;
    int col_head[ARCHITECTURE_MAX_COLUMNS];
    const int n_cols = head_columns(nh, ARCHITECTURE_MAX_COLUMNS, col_head);
    const int cw = COLS_W / n_cols < COL_MAX_W ? COLS_W / n_cols : COL_MAX_W;
    const int x0 = COLS_X + (COLS_W - n_cols * cw) / 2, x1 = x0 + n_cols * cw;
    const int pad = cw / 16 > 4 ? cw / 16 : 4;
    char a[256], b[256];
    Shape tt, tk; /* T x T, T x d_k */
    shape_text(tt, "T", "T", T, T);
    shape_text(tk, "T", "d_k", T, hd);

    arch_titles(&p, c);
    arch_row_names(&p, c);
    arch_wide_boxes(&p, c, x0, x1, pad);

    /* Each column: its head, its query box, and the K/V box of its group
     * when the group's box stands in this column (the middle column of the
     * group's shown heads). */
    const float q_l = 0.06f, q_r = 0.50f; /* the query box's part of a column */
    const int kv_w = (int)((KV_RIGHT - KV_LEFT) * cw);
    /* every q and K/V box shows T x d_k the same way, with its sizes when the narrower box holds them */
    const char *box_shape = tk[fit_px(&p, tk[SIZED], SHAPE_PX, kv_w - 10) > 0.0f ? SIZED : NAMED];
    /* each head's steps: scores Q Kᵀ / √d_k (T × T), the causal mask, the
     * softmax (T × T), times V (T × d_k); the shapes with their sizes in
     * every step, or in none */
    char step[2][4][128];
    for (int v = SIZED; v <= NAMED; v++) {
        snprintf(step[v][0], sizeof step[v][0], "Q K\xe1\xb5\x80/\xe2\x88\x9a" "d_k: %s", tt[v]);
        snprintf(step[v][1], sizeof step[v][1], "%s", c->causal ? "causal mask" : "no mask");
        snprintf(step[v][2], sizeof step[v][2], "softmax: %s", tt[v]);
        snprintf(step[v][3], sizeof step[v][3], "\xc3\x97 V: %s", tk[v]);
    }
    const int step_w = cw - 2 * pad - 28; /* inside the frame, with a margin */
    char(*steps)[128] = step[all_fit(&p, step[SIZED], 4, step_w) ? SIZED : NAMED];
    for (int i = 0; i < n_cols; i++) {
        const int cx = x0 + i * cw, h = col_head[i];
        if (h == HEAD_COLUMNS_ELIDED) {
            const int mx = cx + cw / 2;
            figure_text(&p, "\xe2\x80\xa6", NAME_PX * 1.5f, mx, HEADS_Y + HEADS_H / 2, DRAW_MID, DRAW_MID, DRAW_INK);
            figure_text(&p, "\xe2\x80\xa6", NAME_PX * 1.5f, mx, PROJ_Y + PROJ_H / 2, DRAW_MID, DRAW_MID, DRAW_INK);
            snprintf(a, sizeof a, "heads %d\xe2\x80\x93%d", col_head[i - 1] + 1, col_head[i + 1] - 1);
            figure_text(&p, a, SHAPE_PX, mx, HEADS_Y + 20, DRAW_MID, DRAW_TOP, GREY_TEXT);
            continue;
        }
        /* the head, emphasised, with its steps and their shapes */
        snprintf(a, sizeof a, "head %d", h);
        draw_fill_rect(p.c, cx + pad, HEADS_Y, cw - 2 * pad, HEADS_H, HEAD_FILL);
        draw_frame(p.c, cx + pad + 4, HEADS_Y + 4, cw - 2 * pad - 8, HEADS_H - 8, 4, HEAD_EDGE);
        figure_text(&p, a, NAME_PX, cx + cw / 2, HEADS_Y + 34, DRAW_MID, DRAW_MID, DRAW_INK);
        for (int k = 0; k < 4; k++) {
            const float px = fit_px(&p, steps[k], SHAPE_PX, step_w);
            figure_text(&p, steps[k], px ? px : MIN_PX, cx + cw / 2, HEADS_Y + 86 + k * 50, DRAW_MID, DRAW_MID, DRAW_INK);
            if (k < 3) /* each step feeds the next */
                draw_line(p.c, cx + cw / 2.0f, HEADS_Y + 86 + k * 50 + 15, cx + cw / 2.0f, HEADS_Y + 86 + k * 50 + 33,
                          2.0f, LINK);
        }
        arrow(&p, cx + cw / 2.0f, HEADS_Y, cx + cw / 2.0f, CAT_Y + CAT_H);

        /* its query projection */
        const int qx = cx + (int)(q_l * cw), qw = (int)((q_r - q_l) * cw);
        snprintf(a, sizeof a, "q %d", h);
        box(&p, qx, PROJ_Y, qw, PROJ_H, Q_FILL, DRAW_FRAME, 2, a, box_shape);
        arrow(&p, qx + qw / 2.0f, X_Y, qx + qw / 2.0f, PROJ_Y + PROJ_H);
        arrow(&p, qx + qw / 2.0f, PROJ_Y, qx + qw / 2.0f, HEADS_Y + HEADS_H);

        arch_kv_box(&p, col_head, n_cols, i, kv_group(kv_of, h, kv_mul), kv_of, kv_mul, x0, cw, box_shape);
    }

    /* The caption: the parameters, counted as the cost table counts them. */
    const int kv_dim = nkv * hd;
    char count[32];
    format_grouped(count, params);
    snprintf(b, sizeof b,
             "parameters: W_q %d\xc3\x97%d + W_k %d\xc3\x97%d + W_v %d\xc3\x97%d + W_O %d\xc3\x97%d%s = %s",
             d, d, d, kv_dim, d, kv_dim, d, d, has_bias ? " + biases" : "", count);
    figure_text(&p, b, SUBTITLE_PX, SLIDE_W / 2, CAPTION_Y, DRAW_MID, DRAW_TOP, DRAW_INK);

    return figure_write(&p, path, err, errlen);
}
