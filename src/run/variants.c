/* variants.c — several K/V layouts of one input: a sub-folder each, the
 * comparison at the top. */
#include "run/variants.h"
#include "core/variants_summary.h"
#include "core/status.h"
#include "pictures/kv_cache_chart.h"
#include "pictures/variants_slide.h"
#include "report/lesson_page.h"
#include "report/report.h"

#include <stdio.h>
#include <stdlib.h>

/* kv_cache.png at path: one line per variant at this input's shapes. */
static int kv_cache_picture(const Variant *v, int n, const DrawFont *f, const char *path, int layers, char *err,
                            size_t errlen)
{
    KvCacheLine lines[VARIANTS_MAX];
    char names[VARIANTS_MAX][16];
    for (int i = 0; i < n; i++) {
        const MhaConfig *c = &v[i].in.cfg;
        variant_name(names[i], sizeof names[i], c->n_heads, c->n_kv_heads);
        lines[i] = (KvCacheLine){names[i], c->n_kv_heads, v[i].summary.cost.input.kv_cache_bytes};
    }
    const MhaConfig *c = &v[0].in.cfg;
    return kv_cache_chart_draw(f, path, lines, n, c->n_heads, c->head_dim, c->T, layers, err, errlen);
}

/* lesson.html in folder sub of out ("" = the top): one page for all n
 * variants, with the teacher's questions (NULL: none). */
static int lesson_page(const Variant *v, int n, const Renderer *r, const OutDir *out, const char *sub,
                       const QuizFile *quiz, char *err, size_t errlen)
{
    char name[64];
    snprintf(name, sizeof name, "%s%s%s", sub, sub[0] ? "/" : "", OUTDIR_LESSON_PAGE);
    char *path = outdir_path(out, name);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    const RenderColours colours = render_colours(r);
    const int rc = lesson_page_write(path, v, n, &colours, quiz, err, errlen);
    free(path);
    return rc;
}

/* One variant as a run of it alone writes it (its pictures, report and,
 * unless o->html is 0, lesson.html), into the folder sub of out ("" = out
 * itself; a sub-folder such as "layer_05" is made here). Returns as
 * variants_write does. */
static int variants_write_one(const Variant *v, Renderer *r, const OutDir *out, const char *sub,
                              const VariantOptions *o, Timing *tm, char *err, size_t errlen)
{
    const int rc = variant_write(v, r, out, sub, o, tm, err, errlen);
    return rc != MHAVIZ_OK || !o->html ? rc : lesson_page(v, 1, r, out, sub, o->quiz, err, errlen);
}

int variants_write(const Variant *v, int n, Renderer *r, const OutDir *out, const VariantOptions *o, Timing *tm,
                   char *err, size_t errlen)
{
    if (n == 1)
        return variants_write_one(&v[0], r, out, "", o, tm, err, errlen);
    /* The variants compared before anything is written: the writers only format it. */
    VariantsSummary vs;
    int rc = variants_summary_build(&vs, v, n);
    if (rc != MHAVIZ_OK)
        snprintf(err, errlen, "out of memory");
    for (int i = 0; i < n && rc == MHAVIZ_OK; i++) {
        char sub[16];
        outdir_variant_folder(sub, sizeof sub, v[i].in.cfg.n_kv_heads);
        rc = variant_write(&v[i], r, out, sub, o, tm, err, errlen);
    }

    /* The comparison at the top: the two pictures, then the report. */
    char *slide = NULL, *chart = NULL;
    if (rc != MHAVIZ_OK)
        goto cleanup;
    timing_phase(tm, TIMING_RENDER);
    slide = outdir_path(out, OUTDIR_VARIANTS), chart = outdir_path(out, OUTDIR_KV_CACHE);
    if (!slide || !chart) {
        snprintf(err, errlen, "out of memory");
        rc = MHAVIZ_ENOMEM;
    } else if ((rc = variants_slide_draw(r, slide, v, n, err, errlen)) == MHAVIZ_OK &&
               (rc = kv_cache_picture(v, n, render_font(r), chart, o->layers, err, errlen)) == MHAVIZ_OK) {
        timing_phase(tm, TIMING_WRITE);
        rc = report_write_variants(out->tmp, v, n, &vs, err, errlen);
    }
    if (rc == MHAVIZ_OK && o->html)
        rc = lesson_page(v, n, r, out, "", o->quiz, err, errlen);
cleanup:
    variants_summary_free(&vs);
    free(slide);
    free(chart);
    return rc;
}
