/* kv_cache_chart.c — kv_cache.png, a line chart on log-log axes.
 *
 * The cache is bytes_per_token x layers x context length, so on log axes
 * every line is straight with slope 1 and the lines lie apart by the ratio
 * of their K/V heads. */
#include "pictures/kv_cache_chart.h"
#include "core/status.h"
#include "draw/figure.h"

#include <math.h>
#include <stdio.h>

#define TITLE_PX 44.0f
#define LABEL_PX 30.0f /* tick labels, line names */
#define AXIS_PX 32.0f  /* axis titles */
#define VALUE_PX 28.0f /* each line's bytes at the input's T */

/* Plot area, pixels. */
#define PLOT_X0 250
#define PLOT_X1 1460
#define PLOT_Y0 150
#define PLOT_Y1 880

static const DrawRgb GRID = {222, 222, 222};
static const DrawRgb MARK = {120, 120, 120};
/* Line colours, most K/V heads first (Okabe-Ito: told apart also by colour-blind eyes). */
static const DrawRgb LINE_COLOURS[] = {
    {0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {204, 121, 167}, {213, 94, 0}, {86, 180, 233}, {0, 0, 0},
};
enum { N_COLOURS = sizeof LINE_COLOURS / sizeof LINE_COLOURS[0] };

/* "16 B", "4 KiB", "1 MiB", "2 GiB": bytes, a power of two, in the largest unit it fills. */
static void bytes_label(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5)
        bytes /= 1024.0, u++;
    snprintf(buf, len, "%.0f %s", bytes, units[u]);
}

/* Bytes as a reader says them: "704 B", "1.4 KiB", "352 MiB". */
static void bytes_value(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5)
        bytes /= 1024.0, u++;
    snprintf(buf, len, bytes < 10.0 && u > 0 ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* "1", "64", "1k", "128k": tokens, a power of two. */
static void tokens_label(char *buf, size_t len, double t)
{
    if (t >= 1024.0)
        snprintf(buf, len, "%.0fk", t / 1024.0);
    else
        snprintf(buf, len, "%.0f", t);
}

/* Long on purpose: the chart drawn in one pass: title, axes and ticks, one
 * line per variant, labels. */
int kv_cache_chart_draw(const DrawFont *f, const char *path, const KvCacheLine *lines, int n, int T, int layers,
                        char *err, size_t errlen)
{
    Figure fig;
    int rc = figure_begin(&fig, NULL, f, SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    DrawCanvas *c = fig.c;
    char text[160];

    /* Axes: log2 of tokens (0 .. 17) and of bytes (whole powers of two around the lines). */
    const double lx1 = log2((double)KV_CACHE_CHART_MAX_T);
    double lo = (double)lines[n - 1].bytes_per_token * layers, hi = (double)lines[0].bytes_per_token * layers;
    for (int i = 0; i < n; i++) {
        const double b = (double)lines[i].bytes_per_token * layers;
        lo = b < lo ? b : lo;
        hi = b > hi ? b : hi;
    }
    const double ly0 = floor(log2(lo)), top = ceil(log2(hi * KV_CACHE_CHART_MAX_T));
    /* y tick step: a power of 2 that gives at most 11 labelled lines; the axis ends on a tick */
    int ystep = 1;
    while ((top - ly0) / ystep > 10)
        ystep *= 2;
    const double ly1 = ly0 + ystep * ceil((top - ly0) / ystep);
#define PX_X(lt) (PLOT_X0 + (float)((lt) / lx1) * (PLOT_X1 - PLOT_X0))
#define PX_Y(lb) (PLOT_Y1 - (float)(((lb) - ly0) / (ly1 - ly0)) * (PLOT_Y1 - PLOT_Y0))

    /* Grid and tick labels: x at 1, 4, 16, ... 64k and the end; y every ystep doublings. */
    for (int k = 0; k <= (int)lx1; k++) {
        const float x = PX_X(k);
        const int labelled = k % 2 == 0 || k == (int)lx1;
        draw_line(c, x, PLOT_Y0, x, PLOT_Y1, labelled ? 2.0f : 1.0f, GRID);
        if (labelled) {
            tokens_label(text, sizeof text, pow(2.0, k));
            figure_text(&fig, text, LABEL_PX, (int)x, PLOT_Y1 + 14, DRAW_MID, DRAW_TOP, DRAW_INK);
        }
    }
    for (int k = (int)ly0; k <= (int)ly1; k++) {
        if ((k - (int)ly0) % ystep != 0)
            continue;
        const float y = PX_Y(k);
        draw_line(c, PLOT_X0, y, PLOT_X1, y, 2.0f, GRID);
        bytes_label(text, sizeof text, pow(2.0, k));
        figure_text(&fig, text, LABEL_PX, PLOT_X0 - 14, (int)y, DRAW_END, DRAW_MID, DRAW_INK);
    }
    draw_line(c, PLOT_X0, PLOT_Y1, PLOT_X1, PLOT_Y1, 3.0f, DRAW_FRAME);
    draw_line(c, PLOT_X0, PLOT_Y0, PLOT_X0, PLOT_Y1, 3.0f, DRAW_FRAME);

    /* The input's T: a vertical mark, named at the top. */
    const float xt = PX_X(log2((double)T));
    for (float y = PLOT_Y0; y < PLOT_Y1; y += 24.0f) /* dashed */
        draw_line(c, xt, y, xt, y + 12.0f, 3.0f, MARK);
    snprintf(text, sizeof text, "this input: T = %d", T);
    figure_text(&fig, text, LABEL_PX, (int)xt + (T > 4096 ? -10 : 10), PLOT_Y0 + 8, T > 4096 ? DRAW_END : DRAW_START,
                    DRAW_TOP, DRAW_INK);

    /* One line per variant, named at its right end with its bytes per token. */
    for (int i = 0; i < n; i++) {
        const DrawRgb col = LINE_COLOURS[i % N_COLOURS];
        const double lb = log2((double)lines[i].bytes_per_token * layers);
        draw_line(c, PX_X(0), PX_Y(lb), PX_X(lx1), PX_Y(lb + lx1), 6.0f, col);
        const float yt = PX_Y(lb + log2((double)T));
        draw_fill_rect(c, (int)xt - 8, (int)yt - 8, 17, 17, col);
        char per[32], at_t[32];
        bytes_value(per, sizeof per, (double)lines[i].bytes_per_token * layers);
        bytes_value(at_t, sizeof at_t, (double)lines[i].bytes_per_token * layers * T);
        snprintf(text, sizeof text, "%s: %s per token", lines[i].name, per);
        figure_text(&fig, text, LABEL_PX, PLOT_X1 + 16, (int)PX_Y(lb + lx1), DRAW_START, DRAW_MID, col);
        /* its bytes at T, on white so that the lines do not run through the digits */
        const float vw = draw_text_width(f, at_t, VALUE_PX);
        draw_fill_rect(c, (int)xt + 12, (int)yt - (int)(VALUE_PX * 0.6f), (int)vw + 8, (int)(VALUE_PX * 1.2f),
                       DRAW_WHITE);
        figure_text(&fig, at_t, VALUE_PX, (int)xt + 16, (int)yt, DRAW_START, DRAW_MID, col);
    }

    /* Titles. */
    if (layers == 1)
        snprintf(text, sizeof text, "K/V cache against context length, one layer (fp16: 2 bytes a number)");
    else
        snprintf(text, sizeof text, "K/V cache against context length, %d layers (fp16: 2 bytes a number)", layers);
    figure_text(&fig, text, TITLE_PX, SLIDE_W / 2, 40, DRAW_MID, DRAW_TOP, DRAW_INK);
    figure_text(&fig, "context length (tokens, log scale)", AXIS_PX, (PLOT_X0 + PLOT_X1) / 2, PLOT_Y1 + 70,
                    DRAW_MID, DRAW_TOP, DRAW_INK);
    if (layers == 1)
        snprintf(text, sizeof text, "K/V cache per layer (bytes, log scale)");
    else
        snprintf(text, sizeof text, "K/V cache for %d layers (bytes, log scale)", layers);
    fig.failed |= draw_text(c, f, text, AXIS_PX, 40, (PLOT_Y0 + PLOT_Y1) / 2, DRAW_MID, DRAW_TOP, DRAW_INK, 1) !=
                  MHAVIZ_OK; /* turned, read bottom to top */
    figure_text(&fig, "bytes = 2 (K and V) \xc3\x97 K/V heads \xc3\x97 head_dim \xc3\x97 2 bytes \xc3\x97 tokens \xc3\x97 layers",
                LABEL_PX, SLIDE_W / 2, SLIDE_H - 40, DRAW_MID, DRAW_BOTTOM, MARK);
#undef PX_X
#undef PX_Y
    return figure_write(&fig, path, err, errlen);
}
