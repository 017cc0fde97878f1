/* variant.c — pool, run, measure and write one K/V layout of the layer.
 *
 *   pool K/V heads -> forward pass (heads) -> forward pass (single wide head)
 *   -> measures -> pictures + report into the variant's folder. */
#include "variant.h"
#include "architecture.h"
#include "render_pull.h"
#include "report.h"
#include "status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

void variant_name(char *buf, size_t len, int n_heads, int n_kv)
{
    if (n_kv == n_heads || n_kv == 1)
        snprintf(buf, len, "%s", measures_layout_name(n_heads, n_kv));
    else
        snprintf(buf, len, "GQA-%d", n_kv);
}

int variant_run(Variant *v, const MhaInput *in, int n_kv, int query, const char *name, Timing *tm,
                char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    int rc = pool_layer(&v->layer, &in->cfg, &in->w, n_kv, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    v->in = *in; /* the input as this variant sees it: its own shape and K/V weights */
    v->in.cfg = v->layer.cfg;
    v->in.w = v->layer.w;
    if (n_kv != in->cfg.n_kv_heads)
        pool_note(v->note, sizeof v->note, in->cfg.n_heads, in->cfg.n_kv_heads, n_kv);
    const MhaConfig *c = &v->in.cfg;

    /* The forward passes: h heads, then one wide head of the same width. */
    timing_phase(tm, TIMING_FORWARD);
    /* Both passes keep their scores: the heads' pulls (pull.h) are made of them. */
    if ((rc = mha_state_build(&v->multi, c, 1)) != MHAVIZ_OK)
        goto oom;
    mha_forward(c, &v->in.w, in->x, &v->multi);
    char pass[MHAVIZ_ERRLEN / 2]; /* names a pass in overflow messages */
    snprintf(pass, sizeof pass, "%s: the heads", name);
    if ((rc = mha_check_finite(c, &v->multi, pass, err, errlen)) != MHAVIZ_OK)
        return rc;
    timing_progress(tm, 0.5);

    const MhaWeights *wide_w = &in->single; /* the wide head's weights: the input's, or built */
    if (in->has_single)
        v->wide_cfg = mha_single_head_config(c);
    else if ((rc = mha_single_head_layer(c, &v->in.w, &v->wide_cfg, &v->wide_own, &wide_w)) != MHAVIZ_OK)
        goto oom;
    if ((rc = mha_state_build(&v->single, &v->wide_cfg, 1)) != MHAVIZ_OK)
        goto oom;
    if (wide_w == &v->in.w) /* the heads' own weights: their q, k, v serve the wide head too */
        mha_forward_same_projections(&v->wide_cfg, wide_w, &v->multi, &v->single);
    else
        mha_forward(&v->wide_cfg, wide_w, in->x, &v->single);
    snprintf(pass, sizeof pass, "%s: the single wide head", name);
    if ((rc = mha_check_finite(&v->wide_cfg, &v->single, pass, err, errlen)) != MHAVIZ_OK)
        return rc;

    /* What each map does, for the picture titles and the reports alike. */
    if (!(v->measures = malloc(((size_t)c->n_heads + 1) * sizeof *v->measures)) ||
        measures_layer(v->multi.att, c->n_heads, v->single.att, c->T, c->causal, in->tokens, v->measures) !=
            MHAVIZ_OK)
        goto oom;
    /* How the wide head combines the heads' scores, row by row. */
    if (pull_layer_build(&v->pulls, c, v->multi.scores, v->single.scores, v->single.att, !in->has_single) !=
        MHAVIZ_OK)
        goto oom;
    v->query = query < 0 ? v->pulls.default_query : query;
    return MHAVIZ_OK;
oom:
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

void variant_free(Variant *v)
{
    free(v->measures);
    pull_layer_free(&v->pulls);
    input_weights_free(&v->wide_own);
    mha_state_free(&v->single);
    mha_state_free(&v->multi);
    pool_layer_free(&v->layer);
    memset(v, 0, sizeof *v);
}

/* The progress line during the render phase. */
static void render_progress(void *tm, double fraction) { timing_progress(tm, fraction); }

/* The path of file in folder sub of out ("" = out itself, or "kv2"); the caller frees it. */
static char *sub_path(const OutDir *out, const char *sub, const char *file)
{
    char name[256];
    snprintf(name, sizeof name, "%s%s%s", sub, sub[0] ? "/" : "", file);
    return outdir_path(out, name);
}

/* Render every picture of v into folder sub of out: overview.png, one
 * heatmap per head, single_head.png, difference.png and, with steps, each
 * head's pre-softmax scores. The pictures are drawn in parallel by
 * render_jobs_progress. */
static int render_maps(Renderer *r, const Variant *v, const OutDir *out, const char *sub, int steps, Timing *tm,
                       char *err, size_t errlen)
{
    const MhaConfig *c = &v->in.cfg;
    const MhaState *multi = &v->multi, *single = &v->single;
    const MapMeasures *m = v->measures;
    const int H = c->n_heads, T = c->T;
    const size_t map = (size_t)T * T;
    const int kv_mul = H / c->n_kv_heads;
    const int n_jobs = 3 + H * (steps ? 2 : 1);
    RenderJob *jobs = calloc((size_t)n_jobs, sizeof *jobs);
    char **names = calloc((size_t)n_jobs, sizeof *names);    /* (n_jobs) PNG paths */
    char **titles = calloc((size_t)n_jobs, sizeof *titles);  /* (n_jobs) picture titles */
    char **panels = calloc((size_t)H + 1, sizeof *panels);   /* (H + 1) overview panel titles */
    const float **maps = calloc((size_t)H + 1, sizeof *maps); /* (H + 1) the softmax maps */
    float *diff = malloc(map * sizeof *diff);                 /* (T, T) single - mean of heads */
    int rc = MHAVIZ_ENOMEM;
    if (!jobs || !names || !titles || !panels || !maps || !diff)
        goto cleanup;

    /* One line per picture: kind, file, title. The titles carry each map's
     * role and entropy (issue 4) from m (H + 1). */
    int n = 0;
    const char *pad = H >= 100 ? "%03d" : "%02d"; /* head_00 .. head_99, head_000 from 100 heads */
    char fmt[64], name[64], title[192];
    for (int p = 0; p <= H; p++) {
        maps[p] = p < H ? multi->att + (size_t)p * map : single->att;
        if (p < H && c->n_kv_heads < H)
            snprintf(title, sizeof title, "head %d \xc2\xb7 K/V %d \xc2\xb7 %s", p, p / kv_mul,
                     measures_role_name(m[p].role));
        else if (p < H)
            snprintf(title, sizeof title, "head %d \xc2\xb7 %s", p, measures_role_name(m[p].role));
        else
            snprintf(title, sizeof title, "single wide head \xc2\xb7 %s", measures_role_name(m[p].role));
        if (!(panels[p] = strdup(title)))
            goto cleanup;
    }
    snprintf(title, sizeof title, "%d heads of width %d, and one wide head of width %d", H, c->head_dim,
             c->d_model);
    jobs[n] = (RenderJob){RENDER_OVERVIEW, NULL, NULL, NULL, maps, H + 1, panels};
    names[n] = sub_path(out, sub, "overview.png"), titles[n++] = strdup(title);
    for (int h = 0; h < H; h++) {
        snprintf(fmt, sizeof fmt, "head_%s.png", pad);
        snprintf(name, sizeof name, fmt, h);
        snprintf(title, sizeof title, "head %d of %d \xc2\xb7 K/V group %d \xc2\xb7 %s \xc2\xb7 %.2f bits", h, H,
                 h / kv_mul, measures_role_name(m[h].role), m[h].entropy_bits);
        jobs[n] = (RenderJob){RENDER_WEIGHTS, NULL, NULL, maps[h], NULL, 0, NULL};
        names[n] = sub_path(out, sub, name), titles[n++] = strdup(title);
    }
    snprintf(title, sizeof title, "single wide head (1 head of width %d) \xc2\xb7 %s \xc2\xb7 %.2f bits", c->d_model,
             measures_role_name(m[H].role), m[H].entropy_bits);
    jobs[n] = (RenderJob){RENDER_WEIGHTS, NULL, NULL, single->att, NULL, 0, NULL};
    names[n] = sub_path(out, sub, "single_head.png"), titles[n++] = strdup(title);
    render_difference(diff, multi->att, H, single->att, T);
    snprintf(title, sizeof title, "single wide head \xe2\x88\x92 mean of the %d heads", H);
    jobs[n] = (RenderJob){RENDER_DIVERGING, NULL, NULL, diff, NULL, 0, NULL};
    names[n] = sub_path(out, sub, "difference.png"), titles[n++] = strdup(title);
    for (int h = 0; steps && h < H; h++) {
        snprintf(fmt, sizeof fmt, "head_%s_scores.png", pad);
        snprintf(name, sizeof name, fmt, h);
        snprintf(title, sizeof title, "head %d of %d \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d before the softmax",
                 h, H, c->head_dim);
        jobs[n] = (RenderJob){RENDER_DIVERGING, NULL, NULL, multi->scores + (size_t)h * map, NULL, 0, NULL};
        names[n] = sub_path(out, sub, name), titles[n++] = strdup(title);
    }
    for (int k = 0; k < n; k++) {
        if (!names[k] || !titles[k])
            goto cleanup;
        jobs[k].path = names[k];
        jobs[k].title = titles[k];
    }

    rc = render_jobs_progress(r, jobs, n, T, v->in.tokens, c->causal, render_progress, tm, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (int k = 0; names && titles && k < n_jobs; k++)
        free(names[k]), free(titles[k]);
    for (int p = 0; panels && p <= H; p++)
        free(panels[p]);
    free(jobs), free(names), free(titles), free(panels), free(maps), free(diff);
    return rc;
}

/* query_NN.png in folder sub: the heads' pulls on v's query token
 * (render_pull.h), NN its index zero-padded to the digits of the last
 * token's (at least two). */
static int render_query(const Renderer *r, const Variant *v, const OutDir *out, const char *sub, char *err,
                        size_t errlen)
{
    char name[32];
    int digits = 2;
    for (int t = v->in.cfg.T - 1; t >= 100; t /= 10)
        digits++;
    snprintf(name, sizeof name, "query_%0*d.png", digits, v->query);
    char *path = sub_path(out, sub, name);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    int rc = render_pull(render_font(r), path, &v->in.cfg, v->in.tokens, &v->multi, &v->single, &v->pulls, v->query,
                         err, errlen);
    free(path);
    return rc;
}

int variant_write(const Variant *v, Renderer *r, const OutDir *out, const char *sub, const VariantOptions *o,
                  Timing *tm, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
    char *dir = sub[0] ? outdir_path(out, sub) : strdup(out->tmp);
    char *diagram = sub_path(out, sub, "architecture.png");
    if (!dir || !diagram) {
        snprintf(err, errlen, "out of memory");
        rc = MHAVIZ_ENOMEM;
        goto cleanup;
    }
    if (sub[0] && mkdir(dir, 0777) != 0) {
        snprintf(err, errlen, "%s: cannot create: %s", dir, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    timing_phase(tm, TIMING_RENDER);
    if ((rc = render_maps(r, v, out, sub, o->steps, tm, err, errlen)) != MHAVIZ_OK ||
        (rc = render_query(r, v, out, sub, err, errlen)) != MHAVIZ_OK)
        goto cleanup;
    CostTable cost; /* the parameter count, as the report's cost table has it */
    measures_cost(&v->in.cfg, v->in.w.has_bias, v->in.w.has_bias, &cost);
    if ((rc = architecture_draw(render_font(r), diagram, &v->in.cfg, cost.input.params, v->in.w.has_bias, err,
                                errlen)) != MHAVIZ_OK)
        goto cleanup;
    timing_phase(tm, TIMING_WRITE);
    ReportData d = {&v->in,   &v->multi,   &v->single, v->in.has_single, v->note[0] ? v->note : NULL,
                    v->measures, o->npy, &v->pulls, o->steps};
    rc = report_write(dir, &d, err, errlen);
cleanup:
    free(dir);
    free(diagram);
    return rc;
}
