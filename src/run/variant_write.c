/* variant_write.c — one variant's pictures and report, into its folder. */
#include "run/variant_write.h"
#include "core/rival.h"
#include "core/status.h"
#include "pictures/architecture.h"
#include "pictures/pull_slide.h"
#include "report/report.h"

#include <assert.h>
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

int variant_write_pictures(int n_heads, int steps) { return n_heads + 5 + (steps ? n_heads + 1 : 0); }

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
    return architecture_draw(canvas, render_font(r), j->path, &in->cfg, v->kv_of, v->summary.cost.input.params, in->w.has_bias,
                             err, errlen);
}

/* The pictures of one variant being listed as render jobs; each job's
 * path, title and subtitle are owned here. */
typedef struct {
    RenderJob *jobs;    /* (cap) */
    char **owned;       /* (3 cap) each job's path, title and subtitle */
    int n, cap;
    int failed;         /* a string could not be made: out of memory */
    const OutDir *out;
    const char *folder; /* the variant's folder in out ("" = out itself) */
} JobList;

/* Append job j, written to file in the list's folder, with its title and
 * subtitle. variant_write_pictures counts every picture render_maps lists. */
static void add_job(JobList *l, RenderJob j, const char *file, const char *title, const char *subtitle)
{
    assert(l->n < l->cap);
    char **own = l->owned + 3 * (size_t)l->n;
    own[0] = sub_path(l->out, l->folder, file), own[1] = strdup(title), own[2] = strdup(subtitle);
    l->failed |= !own[0] || !own[1] || !own[2];
    j.path = own[0], j.title = own[1], j.subtitle = own[2];
    l->jobs[l->n++] = j;
}

/* What the titles and subtitles say of the whole variant. */
typedef struct {
    char variant[64];    /* the layout: "MHA", "GQA (2 K/V heads)" */
    char pooled[160];    /* "K/V mean-pooled from 4 heads, not retrained", or "" */
    char sharing[128];   /* how the heads share keys and values */
    char wide_from[160]; /* what the wide head is made of */
    const char *title;   /* the input's own title, or "" */
} Words;

static void words_of(const Variant *v, Words *w)
{
    const MhaConfig *c = &v->in.cfg;
    const int H = c->n_heads, G = c->n_kv_heads;
    const char *layout = measures_layout_name(H, G);
    if (G == H)
        snprintf(w->variant, sizeof w->variant, "%s", layout);
    else
        snprintf(w->variant, sizeof w->variant, "%s (%d K/V head%s)", layout, G, G == 1 ? "" : "s");
    w->pooled[0] = '\0';
    if (v->pooled_from && v->grouping[0]) /* --kv-groups chose who shares */
        snprintf(w->pooled, sizeof w->pooled, "K/V mean-pooled in groups %s, not retrained", v->grouping);
    else if (v->pooled_from)
        snprintf(w->pooled, sizeof w->pooled, "K/V mean-pooled from %d heads, not retrained", v->pooled_from);
    if (G == H)
        snprintf(w->sharing, sizeof w->sharing, "%s: each head has its own keys and values", layout);
    else if (G == 1)
        snprintf(w->sharing, sizeof w->sharing, "%s: all %d heads share one K/V head", layout, H);
    else
        snprintf(w->sharing, sizeof w->sharing, "%s: each K/V head serves %d query heads", layout, H / G);
    if (v->in.has_single)
        snprintf(w->wide_from, sizeof w->wide_from, "its weights: the input's single_head, not built from the heads' projections");
    else
        snprintf(w->wide_from, sizeof w->wide_from,
                 "the heads' projections as one head: its score = (sum of the %d heads' scores) / \xe2\x88\x9a%d",
                 H, H);
    w->title = v->in.title ? v->in.title : "";
}

/* a · b · c into buf, each part left out when NULL or empty. */
static const char *parts(char *buf, size_t len, const char *a, const char *b, const char *c)
{
    snprintf(buf, len, "%s", a);
    join(buf, len, b);
    join(buf, len, c);
    return buf;
}

/* Map p's title on the overview, and its line in sharpness.png's legend:
 * the head (with its K/V head under GQA) and its role. The caller frees it. */
static char *panel_title(const Variant *v, int p)
{
    const int H = v->in.cfg.n_heads, G = v->in.cfg.n_kv_heads;
    const char *role = measures_role_name(v->measures[p].role);
    char title[192];
    if (p < H && G < H && G > 1) /* GQA: which K/V head (with MQA there is one) */
        snprintf(title, sizeof title, "head %d \xc2\xb7 K/V %d \xc2\xb7 %s", p, v->kv_of[p], role);
    else if (p < H)
        snprintf(title, sizeof title, "head %d \xc2\xb7 %s", p, role);
    else
        snprintf(title, sizeof title, "%s \xc2\xb7 %s", rival_name(v->in.has_single)->panel, role);
    return strdup(title);
}

/* overview.png: every map, panels[p] naming map p. */
static void list_overview(JobList *l, const Variant *v, const Words *w, const float *const *maps, char *const *panels)
{
    const MhaConfig *c = &v->in.cfg;
    char title[192], sub[512];
    snprintf(title, sizeof title, v->in.has_single ? "%s: %d heads of width %d, and one head of width %d trained on its own"
                                                   : "%s: %d heads of width %d, and one wide head of width %d", w->variant,
             c->n_heads, c->head_dim, c->d_model);
    add_job(l, (RenderJob){.draw = render_draw_overview, .maps = maps, .n_maps = c->n_heads + 1, .panel_titles = panels},
            OUTDIR_OVERVIEW, title, parts(sub, sizeof sub, w->title, w->pooled, NULL));
}

/* sharpness.png: every map's rows' entropy, panels[p] naming map p. */
static void list_sharpness(JobList *l, const Variant *v, const Words *w, char *const *panels)
{
    const int H = v->in.cfg.n_heads;
    char title[192], sub[512];
    snprintf(title, sizeof title, "How sharp is each query's attention? %s: %d heads, and %s (bold)",
             w->variant, H, rival_name(v->in.has_single)->the);
    add_job(l, (RenderJob){.draw = render_draw_sharpness, .rows = v->summary.rows_entropy_norm, .n_maps = H + 1,
                           .panel_titles = panels},
            OUTDIR_SHARPNESS, title, parts(sub, sizeof sub, w->title, w->pooled, NULL));
}

/* head_NN.png for each head heads marks (NULL: every head) and
 * single_head.png; the titles carry each map's role and entropy (issue 4). */
static void list_heads(JobList *l, const Variant *v, const Words *w, const float *const *maps,
                       const unsigned char *heads)
{
    const MhaConfig *c = &v->in.cfg;
    const MapMeasures *m = v->measures; /* (H + 1) */
    const int H = c->n_heads, G = c->n_kv_heads;
    char head[32], name[64], title[192], sub[512];
    for (int h = 0; h < H; h++) {
        if (heads && !heads[h])
            continue;
        outdir_head_name(head, sizeof head, h, H);
        snprintf(name, sizeof name, "%s" OUTDIR_PNG, head);
        if (G == 1 && H > 1)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 the shared K/V head \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, measures_role_name(m[h].role), m[h].entropy_bits);
        else if (G < H)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 K/V head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, v->kv_of[h], G, measures_role_name(m[h].role), m[h].entropy_bits);
        else
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits", h, H,
                     measures_role_name(m[h].role), m[h].entropy_bits);
        add_job(l, (RenderJob){.draw = render_draw_weights, .values = maps[h]}, name, title,
                parts(sub, sizeof sub, w->title, w->sharing, w->pooled));
    }
    snprintf(title, sizeof title, v->in.has_single ? "one head of width %d, trained on its own \xc2\xb7 %s \xc2\xb7 %.2f bits"
                                                   : "single wide head (1 head of width %d) \xc2\xb7 %s \xc2\xb7 %.2f bits",
             c->d_model, measures_role_name(m[H].role), m[H].entropy_bits);
    add_job(l, (RenderJob){.draw = render_draw_weights, .values = maps[H]}, OUTDIR_SINGLE_HEAD OUTDIR_PNG, title,
            parts(sub, sizeof sub, w->title, w->wide_from, v->in.has_single ? NULL : w->pooled));
}

/* With --steps: the scores before the softmax of each head heads marks
 * (NULL: every head) and of the wide head. */
static void list_scores(JobList *l, const Variant *v, const Words *w, const unsigned char *heads)
{
    const MhaConfig *c = &v->in.cfg;
    const int H = c->n_heads;
    const size_t map = (size_t)c->T * c->T;
    char head[32], name[64], title[192], sub[512];
    snprintf(sub, sizeof sub, "the softmax ignores a constant added to a row \xc2\xb7 "
                              "each row's winner is 0, its lightest cell");
    join(sub, sizeof sub, w->pooled);
    for (int p = 0; p <= H; p++) {
        if (p < H && heads && !heads[p])
            continue;
        outdir_head_name(head, sizeof head, p, H);
        if (p < H) {
            snprintf(name, sizeof name, "%s" OUTDIR_SCORES_PNG, head);
            snprintf(title, sizeof title,
                     "head %d of %d \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum", p, H,
                     c->head_dim);
        } else {
            snprintf(name, sizeof name, OUTDIR_SINGLE_HEAD OUTDIR_SCORES_PNG);
            snprintf(title, sizeof title, "%s \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum",
                     v->in.has_single ? rival_name(1)->title : "single wide head", c->d_model);
        }
        const float *scores = p < H ? v->multi.scores + (size_t)p * map : v->single.scores; /* (T, T) */
        add_job(l, (RenderJob){.draw = render_draw_scores, .values = scores}, name, title, sub);
    }
}

/* The two slides drawn by functions of their own: query_NN.png (NN the
 * query's index zero-padded to the digits of the last token's, at least
 * two) and architecture.png. */
static void list_slides(JobList *l, const Variant *v)
{
    char query_png[32];
    outdir_query_name(query_png, sizeof query_png, v->query, v->in.cfg.T);
    add_job(l, (RenderJob){.draw = draw_pull_slide, .arg = v}, query_png, "", "");
    add_job(l, (RenderJob){.draw = draw_architecture, .arg = v}, OUTDIR_ARCHITECTURE, "", "");
}

/* Render every picture into the folder folder of out: overview.png, a
 * heatmap for each head heads marks (NULL: every head), single_head.png,
 * sharpness.png, with --steps those maps' pre-softmax scores
 * (head_NN_scores.png, single_head_scores.png), query_NN.png and
 * architecture.png. The pictures are drawn in parallel by
 * render_jobs_progress, in the order listed (an error names the first). */
static int render_maps(Renderer *r, const Variant *v, const OutDir *out, const char *folder, int steps,
                       const unsigned char *heads, Timing *tm, char *err, size_t errlen)
{
    const MhaConfig *c = &v->in.cfg;
    const int H = c->n_heads;
    int drawn = 0; /* heads with a heatmap of their own */
    for (int h = 0; h < H; h++)
        drawn += !heads || heads[h];
    const int n_jobs = variant_write_pictures(drawn, steps);
    JobList l = {calloc((size_t)n_jobs, sizeof *l.jobs), calloc(3 * (size_t)n_jobs, sizeof *l.owned), 0, n_jobs,
                 0, out, folder};
    char **panels = calloc((size_t)H + 1, sizeof *panels);    /* (H + 1) overview panel titles */
    const float **maps = calloc((size_t)H + 1, sizeof *maps); /* (H + 1) the softmax maps, the wide head's last */
    int rc = MHAVIZ_ENOMEM;
    if (!l.jobs || !l.owned || !panels || !maps)
        goto cleanup;
    for (int p = 0; p <= H; p++) {
        maps[p] = p < H ? v->multi.att + (size_t)p * c->T * c->T : v->single.att;
        if (!(panels[p] = panel_title(v, p)))
            goto cleanup;
    }
    Words w;
    words_of(v, &w);
    list_overview(&l, v, &w, maps, panels);
    list_heads(&l, v, &w, maps, heads);
    list_sharpness(&l, v, &w, panels);
    if (steps)
        list_scores(&l, v, &w, heads);
    list_slides(&l, v);
    assert(l.n == n_jobs); /* variant_write_pictures counts what is listed */
    if (!l.failed)
        rc = render_jobs_progress(r, l.jobs, l.n, c->T, v->in.tokens, c->causal, render_progress, tm, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (int k = 0; l.owned && k < 3 * n_jobs; k++)
        free(l.owned[k]);
    for (int p = 0; panels && p <= H; p++)
        free(panels[p]);
    free(l.jobs), free(l.owned), free(panels), free(maps);
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
    if ((rc = render_maps(r, v, out, sub, o->steps, o->heads, tm, err, errlen)) != MHAVIZ_OK)
        goto cleanup;
    timing_phase(tm, TIMING_WRITE);
    ReportData d = {.in = &v->in, .multi = &v->multi, .single = &v->single, .single_given = v->in.has_single,
                    .notes = v->note[0] ? v->note : NULL, .npy = o->npy, .pulls = &v->pulls, .scores = o->steps,
                    .chance = &v->chance, .pooled_from = v->pooled_from, .summary = &v->summary};
    rc = report_write(dir, &d, err, errlen);
cleanup:
    free(dir);
    return rc;
}
