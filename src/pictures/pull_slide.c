/* pull_slide.c — query_NN.png, the heads' pulls on one query (see pull_slide.h).
 *
 * Layout, top to bottom: title, caption (up to two lines), column headers,
 * one row per head, a gap, the wide head's row (three rows tall), the key
 * labels. Left to right: the row labels, the score charts, the softmax
 * charts. All in pixels of the 1920 x 1080 slide. */
#include "pictures/pull_slide.h"
#include "core/status.h"
#include "pictures/render.h"
#include "pictures/render_parts.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 36
#define TITLE_PX 38.0f
#define CAPTION_PX 26.0f
#define HEADER_PX 22.0f /* column headers and row labels */
#define SMALL_PX 18.0f  /* second lines of row labels, axis numbers, weights on the bars */
#define KEY_LABEL_PX 22.0f /* key labels, at most */
#define KEY_LABEL_MIN_PX 12.0f
#define LABEL_MAX_LENGTH 200.0f /* pixels a turned key label may take; longer ones are shortened */

#define LABEL_X MARGIN /* the row labels' column */
#define SCORES_X 300   /* the score charts */
#define SCORES_W 760
#define WEIGHTS_X 1120 /* the softmax charts */
#define WEIGHTS_W (SLIDE_W - MARGIN - WEIGHTS_X)
#define BODY_Y 200     /* the first row's top */
#define WIDE_ROWS 3    /* the wide head's row is this many head rows tall */
#define WIDE_GAP 44    /* between the heads' rows and the wide head's: a rule and the legend */

static const DrawRgb WIDE_COLOUR = {40, 40, 40};
static const DrawRgb RULE = {200, 200, 200}; /* zero lines, baselines */
static const DrawRgb MUTED = {90, 90, 90};   /* axis numbers */

/* Where the key labels go, shared by both charts. */
typedef struct {
    int n;          /* keys */
    float slot_s;   /* pixels per key in a score chart */
    float slot_w;   /* pixels per key in a softmax chart */
    float px;       /* label text size */
    int rotated;    /* labels read bottom to top */
    int step;       /* every step-th key labelled (and the last) */
    int height;     /* pixels the labels take below the charts */
} Labels;

static void plan_labels(const DrawFont *f, char *const *shown, int n, Labels *L)
{
    L->n = n;
    L->slot_s = (float)SCORES_W / n;
    L->slot_w = (float)WEIGHTS_W / n;
    const float slot = fminf(L->slot_s, L->slot_w);
    float widest = 0;
    for (int j = 0; j < n; j++)
        widest = fmaxf(widest, draw_text_width(f, shown[j], 1.0f));
    /* Across, on two lines (the token, its index), at the largest size that fits. */
    L->px = fminf(KEY_LABEL_PX, (slot - 6) / fmaxf(widest, 1e-3f));
    L->step = 1;
    if (L->px >= 16.0f) {
        L->rotated = 0;
        L->height = (int)(2 * draw_line_height(L->px)) + 8;
        return;
    }
    /* Else turned, "token index" reading upwards, thinned when the keys are
     * narrower than a line of text. */
    L->rotated = 1;
    L->px = fmaxf(KEY_LABEL_MIN_PX, fminf(KEY_LABEL_PX, slot * 0.85f));
    L->step = key_label_step(draw_line_height(L->px), slot);
    float longest = 0;
    for (int j = 0; j < n; j++) {
        char text[160];
        snprintf(text, sizeof text, "%s %d", shown[j], j);
        longest = fmaxf(longest, draw_text_width(f, text, L->px));
    }
    L->height = (int)fminf(longest, LABEL_MAX_LENGTH) + 10;
}

/* The key labels under a chart whose first key's slot starts at x. */
static int draw_labels(DrawCanvas *cv, const DrawFont *f, char *const *shown, const Labels *L, int x, float slot,
                       int y)
{
    char text[160];
    for (int j = 0; j < L->n; j++) {
        if (!is_labelled_key(j, L->n, L->step))
            continue;
        const int cx = x + (int)((j + 0.5f) * slot);
        if (L->rotated) {
            snprintf(text, sizeof text, "%s %d", shown[j], j);
            draw_ellipsize(f, text, sizeof text, L->px, LABEL_MAX_LENGTH);
            if (draw_text(cv, f, text, L->px, cx, y + 6, DRAW_END, DRAW_MID, DRAW_INK, 1) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        } else {
            snprintf(text, sizeof text, "%s", shown[j]);
            snprintf(text + strlen(text) + 1, sizeof text - strlen(text) - 1, "%d", j);
            if (draw_text(cv, f, text, L->px, cx, y + 4, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
                draw_text(cv, f, text + strlen(text) + 1, L->px, cx, y + 4 + (int)draw_line_height(L->px),
                          DRAW_MID, DRAW_TOP, MUTED, 0) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* A dot of colour col centred on (x, y): marks a top key, whose bar in the
 * score chart has no length. */
static void dot(DrawCanvas *cv, int x, int y, DrawRgb col)
{
    draw_line(cv, (float)x + 0.5f, (float)y + 0.5f, (float)x + 0.5f, (float)y + 0.5f, 11.0f, col);
}

/* The score axis of one row: 0 at y0, -depth at y1, just left of the
 * chart, each number inside the row. */
static int draw_score_axis(DrawCanvas *cv, const DrawFont *f, int y0, int y1, double depth)
{
    char num[32];
    snprintf(num, sizeof num, "\xe2\x88\x92%.3g", depth); /* U+2212 minus */
    if (draw_text(cv, f, "0", SMALL_PX, SCORES_X - 10, y0, DRAW_END, DRAW_TOP, MUTED, 0) != MHAVIZ_OK ||
        draw_text(cv, f, num, SMALL_PX, SCORES_X - 10, y1, DRAW_END, DRAW_BOTTOM, MUTED, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    draw_fill_rect(cv, SCORES_X - 4, y0, 1, y1 - y0 + 1, RULE);
    return MHAVIZ_OK;
}

/* One row's softmax chart: weights w (n) as bars up from the row's
 * baseline y1 (1 reaches y0), each weight of at least 0.005 printed above
 * its bar when the bars are wide enough to hold it. */
static int draw_weights(DrawCanvas *cv, const DrawFont *f, const float *w, int n, float slot, int y0, int y1,
                        DrawRgb col)
{
    const int room = (int)draw_line_height(SMALL_PX);
    const int top = y0 + room, bar_w = (int)fmaxf(1.0f, slot * 0.7f);
    const int numbers = slot >= draw_text_width(f, "0.00", SMALL_PX) + 4 && y1 - top >= 2 * room;
    draw_fill_rect(cv, WEIGHTS_X, y1, WEIGHTS_W, 1, RULE);
    for (int j = 0; j < n; j++) {
        const int x = WEIGHTS_X + (int)(j * slot + (slot - bar_w) / 2);
        const int len = (int)lroundf(w[j] * (float)(y1 - top));
        draw_fill_rect(cv, x, y1 - len, bar_w, len, col);
        if (numbers && w[j] >= 0.005f) {
            char num[16];
            snprintf(num, sizeof num, "%.2f", w[j]);
            if (draw_text(cv, f, num, SMALL_PX, x + bar_w / 2, y1 - len - 2, DRAW_MID, DRAW_BOTTOM, DRAW_INK, 0) !=
                MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* A row label: a colour swatch (none when swatch is NULL), a name, and
 * under it the lines of more (separated by '\n') in smaller type, as many
 * as the row's height h holds. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int draw_row_label(DrawCanvas *cv, const DrawFont *f, int y, int h, const DrawRgb *swatch,
                          const char *name, const char *more)
{
    const int x = LABEL_X + (swatch ? 28 : 0);
    if (swatch)
        draw_fill_rect(cv, LABEL_X, y + 4, 20, 20, *swatch);
    if (draw_text(cv, f, name, HEADER_PX, x, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    int line_y = y + (int)draw_line_height(HEADER_PX);
    const int step = (int)draw_line_height(SMALL_PX);
    for (const char *p = more; *p && line_y + step <= y + h;) {
        char line[160];
        const size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        draw_ellipsize(f, line, sizeof line, SMALL_PX, (float)(SCORES_X - 70 - x));
        if (draw_text(cv, f, line, SMALL_PX, x, line_y, DRAW_START, DRAW_TOP, MUTED, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
        line_y += step;
        p += n + (p[n] == '\n');
    }
    return MHAVIZ_OK;
}

/* The colours of the stacked contributions, "head 0" to "head H-1", on
 * one line over the score chart from (SCORES_X, y); left out when they do
 * not fit (each head's row shows its colour too). */
static int draw_legend(DrawCanvas *cv, const DrawFont *f, int H, int y)
{
    char name[32];
    snprintf(name, sizeof name, "head %d", H - 1);
    const int entry_w = 24 + (int)draw_text_width(f, name, SMALL_PX) + 18;
    if (H * entry_w > SCORES_W)
        return MHAVIZ_OK;
    for (int h = 0; h < H; h++) {
        const int x = SCORES_X + h * entry_w;
        draw_fill_rect(cv, x, y + 2, 16, 16, draw_colour(h));
        snprintf(name, sizeof name, "head %d", h);
        if (draw_text(cv, f, name, SMALL_PX, x + 22, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* The caption on at most two lines (fit_two_lines: from CAPTION_PX down to 18). */
static int draw_caption(DrawCanvas *cv, const DrawFont *f, const char *caption, int y)
{
    char first[512], rest[512];
    const float px = fit_two_lines(f, caption, CAPTION_PX, 18.0f, (float)(SLIDE_W - 2 * MARGIN), first, rest,
                                   sizeof first);
    if (draw_text(cv, f, first, px, MARGIN, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, rest, px, MARGIN, y + (int)draw_line_height(px), DRAW_START, DRAW_TOP, DRAW_INK, 0) !=
            MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* Long on purpose: the slide drawn in one pass, top to bottom: title, one
 * row of charts per head, the wide head, caption. */
int render_pull(DrawCanvas *cv, const DrawFont *font, const char *png_path, const MhaConfig *c, char *const *tokens,
                const MhaState *multi, const MhaState *single, const PullLayer *p, int query, char *err,
                size_t errlen)
{
    const int T = c->T, H = c->n_heads, i = query;
    const PullRow *row = &p->rows[i];
    const int n = row->n_keys;
    const int *top = p->top + (size_t)i * H;
    float *contrib = malloc((size_t)(H + 1) * n * sizeof *contrib); /* (H + 1, n): the heads', then the wide head's own */
    char *caption = malloc(2048);
    char *labels = malloc((size_t)n * RENDER_LABEL_BYTES); /* (n, RENDER_LABEL_BYTES) the keys as shown */
    char **shown = malloc((size_t)n * sizeof *shown);       /* (n) key j's label, as every picture shows it */
    int rc = MHAVIZ_ENOMEM;
    if (!contrib || !caption || !labels || !shown || draw_canvas_reset(cv, SLIDE_W, SLIDE_H) != MHAVIZ_OK)
        goto cleanup;
    for (int j = 0; j < n; j++) { /* whitespace made visible, "" for the empty token (render.h) */
        shown[j] = labels + (size_t)j * RENDER_LABEL_BYTES;
        render_token_label(font, tokens[j], KEY_LABEL_PX, LABEL_MAX_LENGTH, shown[j]);
    }
    char text[512];

    /* Title and caption. */
    snprintf(text, sizeof text, "The pulls on '%s' (token %d): each head's, and the %s", shown[i], i,
             p->identity ? "wide head's, which adds them up" : "separately trained wide head's");
    draw_ellipsize(font, text, sizeof text, TITLE_PX, (float)(SLIDE_W - 2 * MARGIN));
    if (draw_text(cv, font, text, TITLE_PX, MARGIN, MARGIN - 12, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto cleanup;
    pull_caption(caption, 2048, p, i, shown, single->att);
    if (draw_caption(cv, font, caption, 86) != MHAVIZ_OK)
        goto cleanup;

    /* Column headers. */
    const int header_y = BODY_Y - (int)draw_line_height(HEADER_PX) - 8;
    if (draw_text(cv, font, "score \xe2\x88\x92 the head's top score (0: its favourite key)", HEADER_PX, SCORES_X,
                  header_y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, font, "softmax: its share of attention", HEADER_PX, WEIGHTS_X, header_y, DRAW_START,
                  DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto cleanup;

    /* Rows: H of height unit, then the wide head's. */
    Labels L;
    plan_labels(font, shown, n, &L);
    const int body_end = SLIDE_H - 12 - L.height;
    const int unit = (body_end - BODY_Y - WIDE_GAP) / (H + WIDE_ROWS);
    const int pad = unit >= 40 ? 8 : 2;

    /* The heads' scores less their top score, on one scale for all heads. */
    double depth = 0;
    for (int h = 0; h < H; h++) {
        const float *s_hi = multi->scores + ((size_t)h * T + i) * T;
        for (int j = 0; j < n; j++)
            depth = fmax(depth, s_hi[top[h]] - s_hi[j]);
    }
    if (depth == 0)
        depth = 1;

    for (int h = 0; h < H; h++) {
        const int y = BODY_Y + h * unit, y0 = y + pad, y1 = y + unit - pad;
        const float *s_hi = multi->scores + ((size_t)h * T + i) * T;
        const DrawRgb col = draw_colour(h);
        char name[32], second[160];
        snprintf(name, sizeof name, "head %d", h);
        snprintf(second, sizeof second, "favourite: %s %d", shown[top[h]], top[h]);
        if (draw_row_label(cv, font, y + pad, unit - pad, &col, name, second) != MHAVIZ_OK ||
            draw_score_axis(cv, font, y0, y1, depth) != MHAVIZ_OK)
            goto cleanup;
        const int bar_w = (int)fmaxf(1.0f, L.slot_s * 0.7f);
        for (int j = 0; j < n; j++) {
            const int x = SCORES_X + (int)(j * L.slot_s + (L.slot_s - bar_w) / 2);
            const int len = (int)lround((s_hi[top[h]] - s_hi[j]) / depth * (y1 - y0));
            draw_fill_rect(cv, x, y0, bar_w, len, col);
        }
        draw_fill_rect(cv, SCORES_X, y0, SCORES_W, 1, RULE);
        dot(cv, SCORES_X + (int)((top[h] + 0.5f) * L.slot_s), y0, col);
        if (draw_weights(cv, font, multi->att + ((size_t)h * T + i) * T, n, L.slot_w, y0, y1, col) != MHAVIZ_OK)
            goto cleanup;
        if (h + 1 < H)
            draw_fill_rect(cv, LABEL_X, y + unit - 1, SLIDE_W - 2 * MARGIN, 1, (DrawRgb){235, 235, 235});
    }

    /* The wide head: the heads' contributions stacked downwards (one colour
     * per head), or its own scores when it has weights of its own. */
    const int y = BODY_Y + H * unit + WIDE_GAP, y0 = y + pad, y1 = y + WIDE_ROWS * unit - pad;
    draw_fill_rect(cv, LABEL_X, y - WIDE_GAP + 4, SLIDE_W - 2 * MARGIN, 2, DRAW_FRAME);
    const float *w_i = single->scores + (size_t)i * T;
    float *own = contrib + (size_t)H * n; /* (n) the wide head's scores less its top score */
    for (int j = 0; j < n; j++)
        own[j] = w_i[j] - w_i[row->wide_top];
    if (p->identity)
        pull_contributions(c, multi->scores, i, contrib);
    double wide_depth = 0;
    for (int j = 0; j < n; j++) {
        double total = 0;
        for (int h = 0; p->identity && h < H; h++)
            total -= contrib[(size_t)h * n + j];
        wide_depth = fmax(wide_depth, p->identity ? total : -own[j]);
    }
    if (wide_depth == 0)
        wide_depth = 1;
    char more[256];
    if (p->identity)
        snprintf(more, sizeof more, "the heads' bars \xc3\xb7 \xe2\x88\x9a%d,\nstacked: its own score\n"
                 "(less a constant);\ndot: its top key, the\nshortest stack", H);
    else
        snprintf(more, sizeof more, "trained separately:\nits own scores, not\nthe heads' sum;\ndot: its top key");
    if (draw_row_label(cv, font, y0, y1 - y0, NULL, "wide head", more) != MHAVIZ_OK ||
        draw_score_axis(cv, font, y0, y1, wide_depth) != MHAVIZ_OK ||
        (p->identity && draw_legend(cv, font, H, y - WIDE_GAP + 14) != MHAVIZ_OK))
        goto cleanup;
    const int bar_w = (int)fmaxf(1.0f, L.slot_s * 0.7f);
    for (int j = 0; j < n; j++) {
        const int x = SCORES_X + (int)(j * L.slot_s + (L.slot_s - bar_w) / 2);
        if (!p->identity) {
            draw_fill_rect(cv, x, y0, bar_w, (int)lround(-own[j] / wide_depth * (y1 - y0)), WIDE_COLOUR);
            continue;
        }
        double below = 0; /* how far the stack reaches so far */
        for (int h = 0; h < H; h++) {
            const int from = (int)lround(below / wide_depth * (y1 - y0));
            below -= contrib[(size_t)h * n + j];
            const int to = (int)lround(below / wide_depth * (y1 - y0));
            draw_fill_rect(cv, x, y0 + from, bar_w, to - from, draw_colour(h));
        }
    }
    draw_fill_rect(cv, SCORES_X, y0, SCORES_W, 1, RULE);
    /* The key with the shortest stack is the wide head's top key. */
    dot(cv, SCORES_X + (int)((row->wide_top + 0.5f) * L.slot_s), y0, WIDE_COLOUR);
    if (draw_weights(cv, font, single->att + (size_t)i * T, n, L.slot_w, y0, y1, WIDE_COLOUR) != MHAVIZ_OK)
        goto cleanup;

    /* The keys, under both columns. */
    if (draw_labels(cv, font, shown, &L, SCORES_X, L.slot_s, body_end) != MHAVIZ_OK ||
        draw_labels(cv, font, shown, &L, WEIGHTS_X, L.slot_w, body_end) != MHAVIZ_OK)
        goto cleanup;

    rc = draw_write_png(cv, png_path, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "%s: out of memory", png_path);
    free(contrib);
    free(caption);
    free(labels);
    free(shown);
    return rc;
}
