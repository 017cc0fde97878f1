/* layers_chart.c — layers.png (see layers_chart.h). */
#include "pictures/layers_chart.h"
#include "core/status.h"
#include "draw/draw.h"
#include "draw/figure.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TITLE_PX 44.0f
#define TEXT_PX 28.0f
#define TOP 170      /* the title, the note, the panels' names */
#define BOTTOM 120   /* the axes' numbers and the caption */
#define LABELS_W 150 /* "layer 11" */
#define PANEL_GAP 40
#define NUMBER_W 170 /* room for "12 of 28 above" */

static const DrawRgb GREY_TEXT = {90, 90, 90};
static const DrawRgb BAND = {215, 215, 215};    /* chance's 95% */
static const DrawRgb KEPT = {44, 120, 180};
static const DrawRgb LOST = {214, 39, 40};
static const DrawRgb BLUR = {110, 80, 160};

enum { PANEL_KEPT, PANEL_LOST, PANEL_BLUR, N_PANELS };

/* Panel p's number of layer row l, and chance's range of it. */
static double value(const LayerRow *l, int p)
{
    return p == PANEL_KEPT ? l->kept : p == PANEL_LOST ? l->lost : l->blur;
}

static const ChanceRange *range(const LayerRow *l, int p)
{
    return p == PANEL_KEPT ? &l->kept_r : p == PANEL_LOST ? &l->lost_r : &l->blur_r;
}

/* Long on purpose: the slide in one pass: title, the three panels, caption. */
int layers_chart_draw(const Renderer *r, const char *path, const ModelSummary *s, const char *name, char *err,
                      size_t errlen)
{
    Figure f;
    int rc = figure_begin(&f, NULL, render_font(r), SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const int L = s->n, room = (SLIDE_H - TOP - BOTTOM) / L, pitch = room < 80 ? room : 80;
    const int bar_h = pitch - (pitch > 6 ? pitch / 4 : 1);
    const int panel_w = (SLIDE_W - LABELS_W - 40 - (N_PANELS - 1) * PANEL_GAP) / N_PANELS;
    const float num_px = pitch >= 30 ? 22.0f : pitch >= 16 ? 14.0f : 0.0f; /* 0: no numbers on the bars */
    const char *const titles[N_PANELS] = {"rows the heads hold: kept", "lost", "blur"};
    const DrawRgb cols[N_PANELS] = {KEPT, LOST, BLUR};
    char a[256];

    snprintf(a, sizeof a, "%s: what one wide head keeps of the heads, layer by layer", name);
    figure_text(&f, a, TITLE_PX, SLIDE_W / 2, 20, DRAW_MID, DRAW_TOP, DRAW_INK);
    figure_text(&f, "grey: the middle 95% of random layers of the same shape and sentence", TEXT_PX * 0.9f,
                SLIDE_W / 2, 74, DRAW_MID, DRAW_TOP, GREY_TEXT);
    for (int l = 0; l < L; l++) {
        const float px = pitch >= 40 ? 28.0f : pitch >= 20 ? 20.0f : 14.0f;
        if (pitch >= 14 || l % ((int)ceilf(14.0f / (float)pitch)) == 0) {
            snprintf(a, sizeof a, "layer %d", s->layers[l].layer);
            figure_text(&f, a, px, LABELS_W + 10, TOP + l * pitch + bar_h / 2, DRAW_END, DRAW_MID, DRAW_INK);
        }
    }
    for (int p = 0; p < N_PANELS; p++) {
        /* The scale: 0 (the blur: its smallest, if below 0) to the largest of the numbers and the ranges. */
        double lo = 0.0, hi = p == PANEL_BLUR ? 0.01 : 1.0;
        for (int l = 0; l < L; l++) {
            const LayerRow *row = &s->layers[l];
            const ChanceRange *cr = range(row, p);
            const double v = p == PANEL_KEPT ? row->rows : value(row, p);
            if (!isnan(v))
                lo = fmin(lo, v), hi = fmax(hi, v);
            if (cr->n > 0)
                lo = fmin(lo, cr->lo), hi = fmax(hi, cr->hi);
        }
        const int x0 = LABELS_W + 30 + p * (panel_w + PANEL_GAP);
        const int data_w = panel_w - NUMBER_W; /* the numbers at the bars' ends to the right of it */
        const double scale = data_w / (hi - lo);
        const int zero = x0 + (int)lround(-lo * scale);
        figure_text(&f, titles[p], TEXT_PX, x0 + data_w / 2, TOP - 16, DRAW_MID, DRAW_BOTTOM, cols[p]);
        for (int l = 0; l < L; l++) {
            const LayerRow *row = &s->layers[l];
            const ChanceRange *cr = range(row, p);
            const int y = TOP + l * pitch;
            const double v = value(row, p);
            if (cr->n > 0) {
                const int bx = x0 + (int)lround((cr->lo - lo) * scale), bx1 = x0 + (int)lround((cr->hi - lo) * scale);
                draw_fill_rect(f.c, bx, y - 1, bx1 - bx > 2 ? bx1 - bx : 2, bar_h + 2, BAND);
            }
            if (p == PANEL_KEPT) /* all the rows the heads hold, outlined */
                draw_stroke_rect(f.c, zero, y + bar_h / 4, (int)lround(row->rows * scale), bar_h / 2, KEPT);
            if (isnan(v)) {
                figure_text(&f, "null", num_px > 0 ? num_px : 14.0f, zero + 4, y + bar_h / 2, DRAW_START, DRAW_MID,
                            GREY_TEXT);
                continue;
            }
            const int end = x0 + (int)lround((v - lo) * scale);
            const int bx = end < zero ? end : zero, bw = abs(end - zero);
            draw_fill_rect(f.c, bx, y + bar_h / 4, bw > 1 ? bw : 1, bar_h / 2, cols[p]);
            if (num_px > 0) {
                if (p == PANEL_BLUR)
                    snprintf(a, sizeof a, "%.3f", v);
                else if (p == PANEL_KEPT)
                    snprintf(a, sizeof a, "%d of %d", row->kept, row->rows);
                else
                    snprintf(a, sizeof a, "%d", row->lost);
                const int side = chance_side(cr, v);
                if (side)
                    snprintf(a + strlen(a), sizeof a - strlen(a), side > 0 ? " above" : " below");
                const int tx = (p == PANEL_KEPT ? zero + (int)lround(row->rows * scale) : end > zero ? end : zero) + 6;
                figure_text(&f, a, num_px, tx, y + bar_h / 2, DRAW_START, DRAW_MID, DRAW_INK);
            }
        }
        /* The axis: its ends and 0. */
        const int ay = TOP + L * pitch + 6;
        draw_fill_rect(f.c, x0, ay, data_w, 2, DRAW_INK);
        const double ticks[3] = {lo, 0.0, hi};
        for (int t = 0; t < 3; t++) {
            if (t == 1 && (lo == 0.0 || hi == 0.0))
                continue;
            const int tx = x0 + (int)lround((ticks[t] - lo) * scale);
            draw_fill_rect(f.c, tx, ay, 2, 10, DRAW_INK);
            snprintf(a, sizeof a, p == PANEL_BLUR ? "%.2f" : "%.0f", ticks[t]);
            figure_text(&f, a, 22.0f, tx, ay + 14, DRAW_MID, DRAW_TOP, DRAW_INK);
        }
    }
    figure_text(&f, "kept: rows where a head holds its relation and the wide head holds it too; lost: under a quarter; "
                "blur: the wide head's normalised entropy less the heads' mean (report.txt)",
                TEXT_PX * 0.75f, SLIDE_W / 2, SLIDE_H - 16, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    return figure_write(&f, path, err, errlen);
}
