/* render.c — the renderer (font, colour map, options) and its jobs: the
 * pictures of a run drawn in parallel.
 *
 * Each picture is laid out and drawn with draw.h's primitives into a canvas
 * in memory, then written as a PNG: one map (heatmap.c), the overview
 * (overview.c), sharpness (sharpness.c), or a slide drawn by a function of
 * its own; they share the cells, the colour bar and the labels (cells.c,
 * labels.c, map_labels.c, fit_text.c, render_parts.h).
 *
 * Shapes: a map is (T, T), row i = query i, column j = key j. Everything
 * here is single-threaded per picture; render_jobs draws several pictures
 * at once, each thread on a canvas of its own kept from picture to picture
 * (with the glyphs its text used), so the bytes of each PNG never depend
 * on the thread count. */
#include "pictures/render.h"
#include "pictures/render_parts.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* ------------------------------------------------------------------ options */

void render_default_options(RenderOptions *o)
{
    o->font_path = NULL;
    o->cmap = DRAW_CMAP_DEFAULT;
    o->cell_px = 0;
    o->annotate = -1;
    o->overview_w = SLIDE_W;
    o->overview_h = SLIDE_H;
}

int render_cmap_known(const char *name)
{
    return draw_cmap_choosable(name) != NULL;
}

/* --------------------------------------------------------- open and close */

int render_open(Renderer **out, const RenderOptions *o, char *err, size_t errlen)
{
    *out = NULL;
    int rc = MHAVIZ_OK;
    Renderer *r = calloc(1, sizeof *r);
    if (!r) {
        snprintf(err, errlen, "out of memory loading the renderer");
        return MHAVIZ_ENOMEM;
    }
    r->opt = *o;

    const char *cmap = o->cmap ? o->cmap : DRAW_CMAP_DEFAULT;
    const DrawCmapEntry *map = draw_cmap_choosable(cmap);
    if (!map) {
        char known[128];
        draw_cmap_names(known, sizeof known, 0);
        snprintf(err, errlen, "unknown colormap '%s' (known: %s)", cmap, known);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    r->cmap = map->table;
    r->mask_bg = map->mask_bg;
    r->mask_hatch = map->mask_hatch;
    rc = draw_font_open(&r->font, o->font_path, err, errlen);

cleanup:
    if (rc == MHAVIZ_OK)
        *out = r;
    else
        render_close(r);
    return rc;
}

void render_close(Renderer *r)
{
    if (!r)
        return;
    draw_font_close(r->font);
    free(r);
}

const DrawFont *render_font(const Renderer *r)
{
    return r->font;
}

/* ------------------------------------------- for the other pictures of a run */

int render_paint_map(const Renderer *r, DrawCanvas *c, const float *att, int T, int causal, int x, int y, int side)
{
    const Scale s = render_weights_scale(r);
    const Grid g = render_grid_for_panel(T, side > 1 ? side : 1);
    const int drawn = g.B * g.cell;
    render_paint_cells(c, att, T, causal, &g, x, y, &s);
    draw_frame(c, x, y, drawn, drawn, frame_px(drawn), DRAW_FRAME);
    return drawn;
}

int render_weights_bar(const Renderer *r, DrawCanvas *c, int x, int y, int w, int h, float tick_px, int causal,
                       int T)
{
    const Scale s = render_weights_scale(r);
    return render_colour_bar(c, r, &s, x, y, w, h, tick_px, causal, T);
}

/* --------------------------------------------------------------- the jobs */

int render_jobs(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens, int causal,
                char *err, size_t errlen)
{
    return render_jobs_progress(r, jobs, n_jobs, T, tokens, causal, NULL, NULL, err, errlen);
}

int render_jobs_progress(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens,
                         int causal, RenderProgress progress, void *ctx, char *err, size_t errlen)
{
    int *rcs = calloc((size_t)n_jobs + 1, sizeof *rcs);
    char *errs = calloc((size_t)n_jobs + 1, MHAVIZ_ERRLEN);
    if (!rcs || !errs) {
        free(rcs);
        free(errs);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    /* Each picture is independent work writing its own file; each thread
     * draws its pictures one after the other on a canvas of its own. */
    int done = 0, reported = 0; /* pictures finished; the most the caller has reported */
#pragma omp parallel if (n_jobs > 1)
    {
        DrawCanvas *c = draw_canvas_new(1, 1);
        int is_caller = 1;
#ifdef _OPENMP
        is_caller = omp_get_thread_num() == 0;
#endif
#pragma omp for schedule(dynamic, 1)
        for (int k = 0; k < n_jobs; k++) {
            char *err_k = errs + (size_t)k * MHAVIZ_ERRLEN;
            if (c) {
                rcs[k] = jobs[k].draw(r, c, &jobs[k], T, tokens, causal, err_k, MHAVIZ_ERRLEN);
            } else {
                rcs[k] = draw_nomem(err_k, MHAVIZ_ERRLEN, jobs[k].path);
            }
            int now_done;
#pragma omp atomic capture
            now_done = ++done;
            if (progress && is_caller) {
                progress(ctx, (double)now_done / n_jobs);
                reported = now_done;
            }
        }
        draw_canvas_free(c);
    }
    if (progress && reported < n_jobs) /* another thread finished the last picture */
        progress(ctx, 1.0);
    int rc = MHAVIZ_OK;
    for (int k = 0; k < n_jobs && rc == MHAVIZ_OK; k++) {
        if (rcs[k] != MHAVIZ_OK) {
            rc = rcs[k];
            snprintf(err, errlen, "%s", errs + (size_t)k * MHAVIZ_ERRLEN);
        }
    }
    free(rcs);
    free(errs);
    return rc;
}
