/* kv_cache_chart.c — kv_cache.png, bars on linear axes (see kv_cache_chart.h).
 *
 * Top to bottom: the title, one group per model (its name and shape, then
 * a bar per K/V layout), the line on why it matters, the formula. In a
 * group the largest bar spans the plot's width: the bars' lengths are in
 * proportion within a group, and each says its size. The groups are not
 * to scale with each other (1 MiB and 20 GiB bars of one length): each
 * group's axis is drawn apart, broken between groups (a double slash
 * across it), and its header says what the full width stands for. */
#include "pictures/kv_cache_chart.h"
#include "core/status.h"
#include "draw/figure.h"

#include <stdio.h>
#include <string.h>

#define TITLE_PX 40.0f
#define GROUP_PX 30.0f /* a group's name */
#define TEXT_PX 26.0f  /* the bars' names, sizes, the notes */

#define NAMES_X 40    /* the bars' names */
#define BARS_X 420    /* the bars start here */
#define BARS_W 900    /* the largest bar of a group */
#define TOP 150       /* the first group */
#define BOTTOM 150    /* the notes */
#define BAR_H 30
#define BAR_GAP 12

/* Shapes from the models' published configurations: GPT-2 small (Radford
 * et al. 2019), Llama 3 8B and 70B (Meta, 2024: grouped-query attention
 * with 8 K/V heads). */
static const KvCacheModel KV_CACHE_CHART_MODELS[KV_CACHE_CHART_N_MODELS] = {
    {"GPT-2 small", 12, 12, 12, 64, 1024},
    {"Llama-3-8B", 32, 32, 8, 128, 8192},
    {"Llama-3-70B", 80, 64, 8, 128, 8192},
};

static const DrawRgb GREY_TEXT = {90, 90, 90};
static const DrawRgb AXIS = {120, 120, 120};
/* Bars, most K/V heads first (Okabe-Ito: told apart also by colour-blind eyes). */
static const DrawRgb BAR_COLOURS[] = {{0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {204, 121, 167}, {213, 94, 0}};
enum { N_COLOURS = sizeof BAR_COLOURS / sizeof BAR_COLOURS[0] };

/* Bytes as a reader says them: "704 B", "1.4 KiB", "352 MiB", "20 GiB". */
static void bytes_value(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    int u = 0;
    while (bytes >= 1024.0 && u < 5)
        bytes /= 1024.0, u++;
    snprintf(buf, len, bytes < 10.0 && u > 0 && bytes != (int)bytes ? "%.1f %s" : "%.0f %s", bytes, units[u]);
}

/* One bar: its name at the left, its length in proportion to most, its
 * size (and how many times less than the first bar) after it. */
static void bar(Figure *fig, int y, const char *name, double bytes, double most, double first, DrawRgb col,
                const char *note)
{
    char text[160], size[32];
    figure_text(fig, name, TEXT_PX, NAMES_X + 30, y + BAR_H / 2, DRAW_START, DRAW_MID, DRAW_INK);
    const int len = most > 0 ? (int)(bytes / most * BARS_W + 0.5) : 0;
    draw_fill_rect(fig->c, BARS_X, y, len > 2 ? len : 2, BAR_H, col);
    bytes_value(size, sizeof size, bytes);
    if (bytes < first)
        snprintf(text, sizeof text, "%s  (%.0f\xc3\x97 less)%s", size, first / bytes, note);
    else
        snprintf(text, sizeof text, "%s%s", size, note);
    figure_text(fig, text, TEXT_PX, BARS_X + (len > 2 ? len : 2) + 12, y + BAR_H / 2, DRAW_START, DRAW_MID, DRAW_INK);
}

/* A group's own scale: its axis, a line down the bars' start from y to
 * y_end (the group's bars), the size the full width stands for (most
 * bytes) at the right of the group's header at y_head, and, unless it is
 * the first group, the break above it: a double slash across the axis in
 * the gap from the group before. */
static void group_scale(Figure *fig, int y_head, int y, int y_end, double most, int first)
{
    char text[64], size[32];
    draw_line(fig->c, BARS_X - 1.5f, (float)y - 4, BARS_X - 1.5f, (float)y_end + 4, 2.0f, AXIS);
    bytes_value(size, sizeof size, most);
    snprintf(text, sizeof text, "its own scale: full width = %s", size);
    figure_text(fig, text, TEXT_PX, BARS_X + BARS_W, y_head + (int)(GROUP_PX * 0.65f), DRAW_END, DRAW_MID,
                GREY_TEXT);
    if (first)
        return;
    for (int k = 0; k < 2; k++) { /* the break: two slanted strokes across the axis, just above the header */
        const float by = (float)y_head - 10.0f + 8.0f * (float)k;
        draw_line(fig->c, BARS_X - 14.0f, by + 5.0f, BARS_X + 11.0f, by - 5.0f, 2.5f, AXIS);
    }
}

/* Long on purpose: the chart drawn in one pass, top to bottom: title, one
 * group of bars per model, the closing lines. */
int kv_cache_chart_draw(const DrawFont *f, const char *path, const KvCacheLine *lines, int n, int n_heads,
                        int head_dim, int T, int layers, char *err, size_t errlen)
{
    Figure fig;
    int rc = figure_begin(&fig, NULL, f, SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const double ctx = KV_CACHE_CHART_CONTEXT;
    char text[256], name[64];

    snprintf(text, sizeof text, "The K/V cache at %d tokens of context (fp16), over all of a model's layers",
             KV_CACHE_CHART_CONTEXT);
    figure_text(&fig, text, TITLE_PX, SLIDE_W / 2, 30, DRAW_MID, DRAW_TOP, DRAW_INK);
    figure_text(&fig, "not to scale from group to group (the axis breaks between them): in each group its largest "
                      "bar spans the width, and the bars' lengths compare", TEXT_PX, SLIDE_W / 2, 86, DRAW_MID,
                DRAW_TOP, GREY_TEXT);

    /* Groups: this input, then each model with three bars (MHA, its own, MQA; two when its own is MHA). */
    const int groups = 1 + KV_CACHE_CHART_N_MODELS;
    int bars = n;
    for (int m = 0; m < KV_CACHE_CHART_N_MODELS; m++)
        bars += 2 + (KV_CACHE_CHART_MODELS[m].n_kv_heads != KV_CACHE_CHART_MODELS[m].n_heads);
    const int group_h = (int)(GROUP_PX * 1.3f) + 6;
    const int used = groups * group_h + bars * (BAR_H + BAR_GAP);
    const int spare = (SLIDE_H - TOP - BOTTOM - used) / groups; /* between groups */
    int y = TOP + spare / 2;

    /* This input's layer(s). */
    if (layers == 1)
        snprintf(text, sizeof text, "this input: 1 layer, %d heads of %d (T = %d)", n_heads, head_dim, T);
    else
        snprintf(text, sizeof text, "this input: %d layers of %d heads of %d (--layers; T = %d)", layers, n_heads,
                 head_dim, T);
    figure_text(&fig, text, GROUP_PX, NAMES_X, y, DRAW_START, DRAW_TOP, DRAW_INK);
    double most = 0;
    for (int i = 0; i < n; i++)
        most = (double)lines[i].bytes_per_token > most ? (double)lines[i].bytes_per_token : most;
    group_scale(&fig, y, y + group_h, y + group_h + n * (BAR_H + BAR_GAP) - BAR_GAP, most * layers * ctx, 1);
    y += group_h;
    for (int i = 0; i < n; i++) {
        snprintf(name, sizeof name, "%s: %d K/V head%s", lines[i].name, lines[i].n_kv_heads,
                 lines[i].n_kv_heads == 1 ? "" : "s");
        bar(&fig, y, name, (double)lines[i].bytes_per_token * layers * ctx, most * layers * ctx,
            (double)lines[0].bytes_per_token * layers * ctx, BAR_COLOURS[i % N_COLOURS], "");
        y += BAR_H + BAR_GAP;
    }
    y += spare;

    /* The real models. */
    for (int m = 0; m < KV_CACHE_CHART_N_MODELS; m++) {
        const KvCacheModel *md = &KV_CACHE_CHART_MODELS[m];
        snprintf(text, sizeof text, "%s: %d layers, %d heads of %d, %d K/V heads", md->name, md->layers, md->n_heads,
                 md->head_dim, md->n_kv_heads);
        figure_text(&fig, text, GROUP_PX, NAMES_X, y, DRAW_START, DRAW_TOP, DRAW_INK);
        const double per_kv = 2.0 * md->head_dim * 2.0 * md->layers * ctx; /* bytes per K/V head */
        const int n_bars = 2 + (md->n_kv_heads != md->n_heads);
        group_scale(&fig, y, y + group_h, y + group_h + n_bars * (BAR_H + BAR_GAP) - BAR_GAP, per_kv * md->n_heads, 0);
        y += group_h;
        const int kv[3] = {md->n_heads, md->n_kv_heads, 1};
        for (int k = 0, drawn = 0; k < 3; k++) {
            if (k == 1 && md->n_kv_heads == md->n_heads)
                continue;
            const int own = kv[k] == md->n_kv_heads;
            snprintf(name, sizeof name, "%s: %d K/V head%s", kv[k] == md->n_heads ? "MHA" : kv[k] == 1 ? "MQA" : "GQA",
                     kv[k], kv[k] == 1 ? "" : "s");
            char note[96] = "";
            if (own && md->context < KV_CACHE_CHART_CONTEXT)
                snprintf(note, sizeof note, "  \xe2\x86\x90 as built (window: %d tokens)", md->context);
            else if (own)
                snprintf(note, sizeof note, "  \xe2\x86\x90 as built");
            bar(&fig, y, name, per_kv * kv[k], per_kv * md->n_heads, per_kv * md->n_heads,
                BAR_COLOURS[drawn++ % N_COLOURS], note);
            y += BAR_H + BAR_GAP;
        }
        y += spare;
    }

    /* Why it matters, and the formula. */
    const KvCacheModel *eight = &KV_CACHE_CHART_MODELS[1];
    char size[32];
    bytes_value(size, sizeof size, 2.0 * eight->n_kv_heads * eight->head_dim * 2.0 * eight->layers * ctx);
    snprintf(text, sizeof text,
             "Why it matters: at decode every generated token reads the whole cache, %s for %s at %d tokens",
             size, eight->name, KV_CACHE_CHART_CONTEXT);
    figure_text(&fig, text, TEXT_PX, SLIDE_W / 2, SLIDE_H - 100, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    figure_text(&fig, "(per sequence): fewer K/V heads, less memory to read for every token", TEXT_PX, SLIDE_W / 2,
                SLIDE_H - 100 + (int)draw_line_height(TEXT_PX), DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    figure_text(&fig, "bytes = 2 (K and V) \xc3\x97 K/V heads \xc3\x97 head_dim \xc3\x97 2 bytes (fp16) \xc3\x97 "
                      "tokens \xc3\x97 layers", TEXT_PX, SLIDE_W / 2, SLIDE_H - 24, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    return figure_write(&fig, path, err, errlen);
}
