/* fuzz_render.c — libFuzzer harness for the renderer's text and layout code.
 *
 * Token labels and titles are what a user controls in a picture: any string,
 * any length. The bytes after the first two are split at '\n' into up to T
 * tokens (missing ones are empty) and the title; the maps are deterministic
 * values from the bytes. The first two bytes choose T (1..24), the mask and
 * the picture kind (heatmap, score map, overview of two maps, sharpness of
 * the two). Pictures
 * go to /dev/null: the harness checks that drawing works and stays within
 * its memory, not the pixels (tests/unit/check_render.c does that).
 * Built by `make fuzz FUZZ_TARGET=render`. */
#include "pictures/render.h"
#include "core/measures.h"
#include "core/status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define MAX_T 24

static Renderer *renderer;

static void close_renderer(void)
{
    render_close(renderer);
}

/* xorshift32: a map's values from the input bytes. */
static uint32_t next(uint32_t *s)
{
    *s ^= *s << 13;
    *s ^= *s >> 17;
    *s ^= *s << 5;
    return *s;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[512];
    if (size < 2)
        return 0;
    if (!renderer) {
        RenderOptions o;
        render_default_options(&o);
        o.overview_w = 640; /* small figures: more runs a second */
        o.overview_h = 360;
        if (render_open(&renderer, &o, err, sizeof err) != MHAVIZ_OK) {
            fprintf(stderr, "fuzz_render: %s\n", err);
            abort();
        }
        atexit(close_renderer);
    }
    const int T = data[0] % MAX_T + 1, causal = data[1] & 1, kind = (data[1] >> 1) % 4;

    /* Tokens and the title: NUL-terminated copies of the '\n'-separated pieces. */
    char *text = malloc(size - 2 + 1);
    memcpy(text, data + 2, size - 2);
    text[size - 2] = '\0';
    char *tokens[MAX_T], *title = "";
    char *p = text;
    for (int t = 0; t < T; t++) {
        tokens[t] = p;
        char *nl = strchr(p, '\n');
        if (nl) {
            *nl = '\0';
            p = nl + 1;
        } else {
            p += strlen(p); /* the rest are empty */
        }
    }
    if (*p)
        title = p;

    /* Two maps: rows that sum to 1 over the visible cells (softmax-like),
     * and the uniform map; a's logarithms serve as scores. */
    float a[MAX_T * MAX_T], b[MAX_T * MAX_T], d[MAX_T * MAX_T];
    uint32_t s = 2463534242u ^ (uint32_t)size ^ ((uint32_t)data[0] << 8);
    for (int i = 0; i < T; i++) {
        const int vis = causal ? i + 1 : T;
        float sum = 0.0f;
        for (int j = 0; j < T; j++) {
            a[i * T + j] = j < vis ? (float)(next(&s) % 1000 + 1) : 0.0f;
            sum += a[i * T + j];
        }
        for (int j = 0; j < T; j++) {
            a[i * T + j] /= sum;
            b[i * T + j] = j < vis ? 1.0f / (float)vis : 0.0f;
        }
    }
    for (int ij = 0; ij < T * T; ij++)
        d[ij] = a[ij] > 0.0f ? logf(a[ij]) : 0.0f;

    int rc;
    if (kind == 0) {
        rc = render_heatmap(renderer, "/dev/null", a, T, tokens, causal, title, err, sizeof err);
    } else if (kind == 1) {
        rc = render_scores(renderer, "/dev/null", d, T, tokens, causal, title, err, sizeof err);
    } else {
        const float *maps[2] = {a, b};
        char *panels[2] = {title, tokens[0]};
        double rows[2 * MAX_T]; /* (2, T) the rows' sharpness, as the layer's summary gives it */
        measures_row_entropy_norm(a, T, causal, rows);
        measures_row_entropy_norm(b, T, causal, rows + T);
        const RenderJob job = {.draw = kind == 2 ? render_draw_overview : render_draw_sharpness, .path = "/dev/null",
                               .title = title, .maps = maps, .rows = rows, .n_maps = 2, .panel_titles = panels,
                               .subtitle = tokens[0]};
        rc = render_jobs(renderer, &job, 1, T, tokens, causal, err, sizeof err);
    }
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "fuzz_render: %s\n", err);
        abort();
    }
    free(text);
    return 0;
}
