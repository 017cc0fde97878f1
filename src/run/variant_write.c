/* variant_write.c — one variant's pictures and report, into its folder. */
#include "run/variant_write.h"
#include "core/status.h"
#include "pictures/architecture.h"
#include "pictures/pull_slide.h"
#include "report/report.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The progress line during the render phase. */
static void render_progress(void *tm, double fraction) { timing_progress(tm, fraction); }

/* The path of file in folder sub of out ("" = out itself, or "kv2"); the caller frees it. */
static char *sub_path(const OutDir *out, const char *sub, const char *file)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s%s", sub, sub[0] ? "/" : "", file);
    return outdir_path(out, name);
}

/* s + " · " + part when both are non-empty, into s (len bytes). */
static void join(char *s, size_t len, const char *part)
{
    if (!part || !part[0])
        return;
    const size_t n = strlen(s);
    snprintf(s + n, len - n, "%s%s", n ? " \xc2\xb7 " : "", part);
}

int variant_pictures(int n_heads, int steps) { return n_heads + 5 + (steps ? n_heads + 1 : 0); }

/* The two slides drawn by functions of their own, as render jobs: j->arg
 * is the variant (the slides need no more of the job). */

/* The heads' pulls on the variant's query token (pull_slide.h). */
static int draw_pull_slide(Renderer *r, DrawCanvas *canvas, const RenderJob *j, int T, char *const *tokens,
                           int causal, char *err, size_t errlen)
{
    (void)T, (void)tokens, (void)causal;
    const Variant *v = j->arg;
    return render_pull(canvas, render_font(r), j->path, &v->in.cfg, v->in.tokens, &v->multi, &v->single, &v->pulls,
                       v->query, err, errlen);
}

/* The layer's architecture, with its parameter count as the report's cost table has it. */
static int draw_architecture(Renderer *r, DrawCanvas *canvas, const RenderJob *j, int T, char *const *tokens,
                             int causal, char *err, size_t errlen)
{
    (void)T, (void)tokens, (void)causal;
    const Variant *v = j->arg;
    const MhaInput *in = &v->in;
    CostTable cost;
    measures_cost(&in->cfg, in->w.has_bias, in->w.has_bias, &cost);
    return architecture_draw(canvas, render_font(r), j->path, &in->cfg, v->kv_of, cost.input.params, in->w.has_bias,
                             err, errlen);
}

/* Render every picture into the folder folder of out: architecture.png,
 * query_NN.png (NN the query's index zero-padded to the digits of the last
 * token's, at least two), overview.png, one heatmap per head,
 * single_head.png, sharpness.png and, with --steps, each map's pre-softmax
 * scores (head_NN_scores.png, single_head_scores.png). The pictures are
 * drawn in parallel by render_jobs_progress. */
static int render_maps(Renderer *r, const Variant *v, const OutDir *out, const char *folder, int steps, Timing *tm,
                       char *err, size_t errlen)
{
    const MhaInput *in = &v->in;
    const MhaState *multi = &v->multi, *single = &v->single;
    const MapMeasures *m = v->measures;
    const int pooled_from = v->pooled_from;
    const MhaConfig *c = &in->cfg;
    const int H = c->n_heads, T = c->T, G = c->n_kv_heads;
    const size_t map = (size_t)T * T;
    const int kv_mul = H / G;
    const int n_jobs = variant_pictures(H, steps);
    RenderJob *jobs = calloc((size_t)n_jobs, sizeof *jobs);
    char **names = calloc((size_t)n_jobs, sizeof *names);    /* (n_jobs) PNG paths */
    char **titles = calloc((size_t)n_jobs, sizeof *titles);  /* (n_jobs) picture titles */
    char **subs = calloc((size_t)n_jobs, sizeof *subs);      /* (n_jobs) the lines under them */
    char **panels = calloc((size_t)H + 1, sizeof *panels);   /* (H + 1) overview panel titles */
    const float **maps = calloc((size_t)H + 1, sizeof *maps); /* (H + 1) the softmax maps */
    int rc = MHAVIZ_ENOMEM;
    if (!jobs || !names || !titles || !subs || !panels || !maps)
        goto cleanup;

    /* What the titles say: the layout (MHA, GQA or MQA), whether the K/V
     * heads were pooled here, and the input's own title. */
    const char *layout = measures_layout_name(H, G);
    char variant[64], pooled[160] = "", sharing[128], wide_from[160], sub[512];
    if (G == H)
        snprintf(variant, sizeof variant, "MHA");
    else
        snprintf(variant, sizeof variant, "%s (%d K/V head%s)", layout, G, G == 1 ? "" : "s");
    if (pooled_from && v->grouping[0])
        snprintf(pooled, sizeof pooled, "K/V mean-pooled in groups %s, not retrained", v->grouping);
    else if (pooled_from)
        snprintf(pooled, sizeof pooled, "K/V mean-pooled from %d heads, not retrained", pooled_from);
    if (G == H)
        snprintf(sharing, sizeof sharing, "MHA: each head has its own keys and values");
    else if (G == 1)
        snprintf(sharing, sizeof sharing, "MQA: all %d heads share one K/V head", H);
    else
        snprintf(sharing, sizeof sharing, "GQA: each K/V head serves %d query heads", kv_mul);
    if (in->has_single)
        snprintf(wide_from, sizeof wide_from, "its own weights (the input's single_head), not the heads'");
    else
        snprintf(wide_from, sizeof wide_from,
                 "the heads' projections as one head: its score = (sum of the %d heads' scores) / \xe2\x88\x9a%d",
                 H, H);

    /* One line per picture: kind, file, title, subtitle. The titles carry
     * each map's role and entropy (issue 4) from m (H + 1). */
    int n = 0;
    const char *pad = H >= 100 ? "%03d" : "%02d"; /* head_00 .. head_99, head_000 from 100 heads */
    char fmt[64], name[64], title[192];
    for (int p = 0; p <= H; p++) {
        maps[p] = p < H ? multi->att + (size_t)p * map : single->att;
        if (p < H && G < H && G > 1) /* GQA: which K/V head (with MQA there is one) */
            snprintf(title, sizeof title, "head %d \xc2\xb7 K/V %d \xc2\xb7 %s", p, v->kv_of[p],
                     measures_role_name(m[p].role));
        else if (p < H)
            snprintf(title, sizeof title, "head %d \xc2\xb7 %s", p, measures_role_name(m[p].role));
        else
            snprintf(title, sizeof title, "wide head \xc2\xb7 %s", measures_role_name(m[p].role));
        if (!(panels[p] = strdup(title)))
            goto cleanup;
    }
    snprintf(title, sizeof title, "%s: %d heads of width %d, and one wide head of width %d", variant, H,
             c->head_dim, c->d_model);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, pooled);
    jobs[n] = (RenderJob){.draw = render_draw_overview, .maps = maps, .n_maps = H + 1, .panel_titles = panels};
    names[n] = sub_path(out, folder, "overview.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    for (int h = 0; h < H; h++) {
        snprintf(fmt, sizeof fmt, "head_%s.png", pad);
        snprintf(name, sizeof name, fmt, h);
        if (G == 1 && H > 1)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 the shared K/V head \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, measures_role_name(m[h].role), m[h].entropy_bits);
        else if (G < H)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 K/V head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, v->kv_of[h], G, measures_role_name(m[h].role), m[h].entropy_bits);
        else
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits", h, H,
                     measures_role_name(m[h].role), m[h].entropy_bits);
        snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
        join(sub, sizeof sub, sharing);
        join(sub, sizeof sub, pooled);
        jobs[n] = (RenderJob){.draw = render_draw_weights, .values = maps[h]};
        names[n] = sub_path(out, folder, name), titles[n] = strdup(title), subs[n++] = strdup(sub);
    }
    snprintf(title, sizeof title, "single wide head (1 head of width %d) \xc2\xb7 %s \xc2\xb7 %.2f bits", c->d_model,
             measures_role_name(m[H].role), m[H].entropy_bits);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, wide_from);
    join(sub, sizeof sub, in->has_single ? NULL : pooled);
    jobs[n] = (RenderJob){.draw = render_draw_weights, .values = single->att};
    names[n] = sub_path(out, folder, "single_head.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    snprintf(title, sizeof title, "How sharp is each query's attention? %s: %d heads, and the wide head (bold)",
             variant, H);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, pooled);
    jobs[n] = (RenderJob){.draw = render_draw_sharpness, .maps = maps, .n_maps = H + 1, .panel_titles = panels};
    names[n] = sub_path(out, folder, "sharpness.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    for (int p = 0; steps && p <= H; p++) {
        snprintf(fmt, sizeof fmt, "head_%s_scores.png", pad);
        if (p < H)
            snprintf(name, sizeof name, fmt, p);
        else
            snprintf(name, sizeof name, "single_head_scores.png");
        if (p < H)
            snprintf(title, sizeof title,
                     "head %d of %d \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum", p, H,
                     c->head_dim);
        else
            snprintf(title, sizeof title,
                     "single wide head \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum", c->d_model);
        snprintf(sub, sizeof sub, "the softmax ignores a constant added to a row \xc2\xb7 "
                                  "each row's winner is 0, its lightest cell");
        join(sub, sizeof sub, pooled);
        jobs[n] = (RenderJob){.draw = render_draw_scores, .values = p < H ? multi->scores + (size_t)p * map : single->scores};
        names[n] = sub_path(out, folder, name), titles[n] = strdup(title), subs[n++] = strdup(sub);
    }
    /* The two 1920 x 1080 slides, drawn by functions of their own. */
    int digits = 2;
    for (int t = T - 1; t >= 100; t /= 10)
        digits++;
    char query_png[32];
    snprintf(query_png, sizeof query_png, "query_%0*d.png", digits, v->query);
    jobs[n] = (RenderJob){.draw = draw_pull_slide, .arg = v};
    names[n] = sub_path(out, folder, query_png), titles[n] = strdup(""), subs[n++] = strdup("");
    jobs[n] = (RenderJob){.draw = draw_architecture, .arg = v};
    names[n] = sub_path(out, folder, "architecture.png"), titles[n] = strdup(""), subs[n++] = strdup("");

    for (int k = 0; k < n; k++) {
        if (!names[k] || !titles[k] || !subs[k])
            goto cleanup;
        jobs[k].path = names[k];
        jobs[k].title = titles[k];
        jobs[k].subtitle = subs[k];
    }

    rc = render_jobs_progress(r, jobs, n, T, in->tokens, c->causal, render_progress, tm, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (int k = 0; names && titles && subs && k < n_jobs; k++)
        free(names[k]), free(titles[k]), free(subs[k]);
    for (int p = 0; panels && p <= H; p++)
        free(panels[p]);
    free(jobs), free(names), free(titles), free(subs), free(panels), free(maps);
    return rc;
}

int variant_write(const Variant *v, Renderer *r, const OutDir *out, const char *sub, const VariantOptions *o,
                  Timing *tm, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
    char *dir = sub[0] ? outdir_path(out, sub) : strdup(out->tmp);
    if (!dir) {
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    if (sub[0] && mkdir(dir, 0777) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    timing_phase(tm, TIMING_RENDER);
    if ((rc = render_maps(r, v, out, sub, o->steps, tm, err, errlen)) != MHAVIZ_OK)
        goto cleanup;
    timing_phase(tm, TIMING_WRITE);
    ReportData d = {&v->in,   &v->multi,   &v->single, v->in.has_single, v->note[0] ? v->note : NULL,
                    v->measures, o->npy, &v->pulls, o->steps, &v->chance, v->kv_of};
    rc = report_write(dir, &d, err, errlen);
cleanup:
    free(dir);
    return rc;
}
