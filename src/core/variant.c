/* variant.c — pool, run and measure one K/V layout of the layer.
 *
 *   pool K/V heads -> forward pass (heads) -> forward pass (single wide head)
 *   -> measures (run/variant_write.c writes the pictures and the report). */
#include "core/variant.h"
#include "core/finite.h"
#include "core/status.h"

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
        snprintf(buf, len, LAYOUT_GQA "-%d", n_kv);
}

int variant_run(Variant *v, const MhaInput *in, int n_kv, const Grouping *groups, PoolMethod pool, int query,
                const char *name, Timing *tm, char *err, size_t errlen)
{
    memset(v, 0, sizeof *v);
    timing_phase(tm, TIMING_FORWARD); /* pooling the K/V heads included */
    const int H = in->cfg.n_heads;
    /* Neighbours sharing is GQA's own layout (mha.c: head h reads K/V head h / (n_heads / n_kv)); any
     * other grouping gives each head its own copy of its group's K/V head. */
    const int scattered = groups && !grouping_is_contiguous(groups);
    int rc = scattered ? pool_layer_grouped(&v->layer, &in->cfg, &in->w, groups->of, n_kv, pool, err, errlen)
                       : pool_layer(&v->layer, &in->cfg, &in->w, n_kv, pool, err, errlen);
    v->pool = pool;
    if (rc != MHAVIZ_OK)
        return rc;
    if (!(v->kv_of = malloc((size_t)H * sizeof *v->kv_of)))
        goto oom;
    for (int h = 0; h < H; h++)
        v->kv_of[h] = groups ? groups->of[h] : h / (H / n_kv);
    if (groups)
        grouping_format(v->grouping, sizeof v->grouping, groups);
    v->in = *in; /* the input as this variant sees it: its own shape and K/V weights */
    v->in.cfg = v->layer.cfg;
    v->in.w = v->layer.w;
    if (n_kv != in->cfg.n_kv_heads) {
        pool_note(v->note, sizeof v->note, H, in->cfg.n_kv_heads, n_kv, v->grouping, pool, &v->layer.alignment);
        v->pooled_from = in->cfg.n_kv_heads;
    }
    const MhaConfig *c = &v->in.cfg;

    /* The forward passes: h heads, then one wide head of the same width. */
    /* Both passes keep their scores: the heads' pulls (pull.h) are made of them. */
    if ((rc = mha_state_build(&v->multi, c, 1)) != MHAVIZ_OK)
        goto oom;
    mha_forward(c, &v->in.w, in->x, &v->multi);
    char pass[MHAVIZ_ERRLEN / 2]; /* names a pass in overflow messages */
    snprintf(pass, sizeof pass, "%s: the heads", name);
    if ((rc = finite_check_pass(c, &v->multi, pass, err, errlen)) != MHAVIZ_OK)
        return rc;
    timing_progress(tm, 0.5);

    v->wide_cfg = mha_single_head_config(c);
    if (in->has_single) { /* the input gave the wide head's own weights */
        if ((rc = mha_state_build(&v->single, &v->wide_cfg, 1)) != MHAVIZ_OK)
            goto oom;
        mha_forward(&v->wide_cfg, &in->single, in->x, &v->single);
    } else { /* built from the heads' weights: their q, k, v serve it too */
        if ((rc = mha_state_build_wide(&v->single, &v->wide_cfg, 1)) != MHAVIZ_OK)
            goto oom;
        mha_forward_wide(c, &v->in.w, &v->multi, &v->single);
    }
    snprintf(pass, sizeof pass, "%s: the single wide head", name);
    if ((rc = finite_check_pass(&v->wide_cfg, &v->single, pass, err, errlen)) != MHAVIZ_OK)
        return rc;

    /* What each map does, for the picture titles and the reports alike. */
    if (!(v->measures = malloc(((size_t)c->n_heads + 1) * sizeof *v->measures)) ||
        measures_layer(v->multi.att, c->n_heads, v->single.att, c->T, c->causal, in->tokens, v->measures) !=
            MHAVIZ_OK)
        goto oom;
    /* How the wide head combines the heads' scores, row by row. */
    if (pull_layer_build(&v->pulls, c, v->multi.scores, v->multi.att, v->single.scores, v->single.att,
                         !in->has_single) != MHAVIZ_OK)
        goto oom;
    v->query = query < 0 ? v->pulls.default_query : query;
    v->in.cfg.n_kv_heads = n_kv; /* the layer's shape from here on (a scattered grouping ran with n_heads blocks) */
    /* All the reports say about it, before any of them is written. */
    if (layer_summary_build(&v->summary, &v->in, &v->multi, &v->single, in->has_single, v->measures, v->kv_of) !=
        MHAVIZ_OK)
        goto oom;
    return MHAVIZ_OK;
oom:
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

void variant_free(Variant *v)
{
    layer_summary_free(&v->summary);
    free(v->measures);
    free(v->kv_of);
    pull_layer_free(&v->pulls);
    mha_state_free(&v->single);
    mha_state_free(&v->multi);
    pool_layer_free(&v->layer);
    memset(v, 0, sizeof *v);
}
