/* grouping.c — parse, list and rank the groupings of query heads into K/V heads (grouping.h). */
#include "core/grouping.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void grouping_contiguous(Grouping *g, int n_heads, int n_groups)
{
    memset(g, 0, sizeof *g);
    g->n_heads = n_heads, g->n_groups = n_groups;
    for (int h = 0; h < n_heads && h < GROUPING_MAX_HEADS; h++)
        g->of[h] = h / (n_heads / n_groups);
}

int grouping_is_contiguous(const Grouping *g)
{
    for (int h = 0; h < g->n_heads; h++)
        if (g->of[h] != h / (g->n_heads / g->n_groups))
            return 0;
    return 1;
}

void grouping_format(char *buf, size_t n, const Grouping *g)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int k = 0; k < g->n_groups; k++) {
        int first = 1;
        for (int h = 0; h < g->n_heads && used < n; h++)
            if (g->of[h] == k) {
                used += (size_t)snprintf(buf + used, n - used, "%s%d", first ? (k ? "/" : "") : ",", h);
                first = 0;
            }
    }
}

int grouping_parse(const char *arg, int n_heads, Grouping *g, char *err, size_t errlen)
{
    memset(g, 0, sizeof *g);
    if (n_heads > GROUPING_MAX_HEADS) {
        snprintf(err, errlen, "--kv-groups %s: groupings are for layers of at most %d heads; this one has %d",
                 arg, GROUPING_MAX_HEADS, n_heads);
        return MHAVIZ_EINPUT;
    }
    int group_of[GROUPING_MAX_HEADS], size[GROUPING_MAX_HEADS] = {0}, n_groups = 0;
    for (int h = 0; h < n_heads; h++)
        group_of[h] = -1;
    const char *p = arg;
    for (;;) { /* one group: heads separated by ',' up to '/' or the end */
        if (n_groups == n_heads) {
            snprintf(err, errlen, "--kv-groups %s: more groups than the layer's %d heads", arg, n_heads);
            return MHAVIZ_EINPUT;
        }
        for (;;) {
            const size_t len = strcspn(p, ",/");
            char item[16];
            snprintf(item, sizeof item, "%.*s", (int)(len < sizeof item ? len : sizeof item - 1), p);
            if (len == 0 || len >= sizeof item || strspn(item, "0123456789") != len) {
                snprintf(err, errlen, "--kv-groups %s: '%s' is not a head (wanted: heads such as 0,2/1,3, "
                         "groups separated by '/')", arg, item);
                return MHAVIZ_EINPUT;
            }
            const long h = strtol(item, NULL, 10);
            if (h >= n_heads) {
                snprintf(err, errlen, "--kv-groups %s: head %ld: the layer has %d heads (0 to %d)", arg, h,
                         n_heads, n_heads - 1);
                return MHAVIZ_EINPUT;
            }
            if (group_of[h] >= 0) {
                snprintf(err, errlen, "--kv-groups %s: head %ld is in %s", arg, h,
                         group_of[h] == n_groups ? "its group twice" : "two groups");
                return MHAVIZ_EINPUT;
            }
            group_of[h] = n_groups;
            size[n_groups]++;
            p += len;
            if (*p != ',')
                break;
            p++;
        }
        n_groups++;
        if (*p != '/')
            break;
        p++;
    }
    for (int h = 0; h < n_heads; h++)
        if (group_of[h] < 0) {
            snprintf(err, errlen, "--kv-groups %s: head %d is in no group (each of the %d heads must be in one)",
                     arg, h, n_heads);
            return MHAVIZ_EINPUT;
        }
    for (int k = 1; k < n_groups; k++)
        if (size[k] != size[0]) {
            snprintf(err, errlen, "--kv-groups %s: the groups differ in size (%d and %d heads); each K/V head "
                     "serves the same number of query heads", arg, size[0], size[k]);
            return MHAVIZ_EINPUT;
        }
    /* groups numbered in order of their first head, so that one grouping has one text */
    int renumber[GROUPING_MAX_HEADS], next = 0;
    for (int k = 0; k < n_groups; k++)
        renumber[k] = -1;
    g->n_heads = n_heads, g->n_groups = n_groups;
    for (int h = 0; h < n_heads; h++) {
        if (renumber[group_of[h]] < 0)
            renumber[group_of[h]] = next++;
        g->of[h] = renumber[group_of[h]];
    }
    return MHAVIZ_OK;
}

/* Every grouping of g->n_heads heads into groups of size `size`, by
 * recursion: head h joins an open group (one with room whose members so far
 * came first) or opens the next one. Appends to out[*n]. */
static void enumerate(Grouping *g, int h, int size, int *count, Grouping *out, int *n)
{
    if (h == g->n_heads) {
        out[(*n)++] = *g;
        return;
    }
    int open = 0; /* groups opened so far */
    for (int k = 0; k < h; k++)
        open = g->of[k] + 1 > open ? g->of[k] + 1 : open;
    for (int k = 0; k <= open && k < g->n_groups; k++) {
        if (count[k] == size)
            continue;
        g->of[h] = k;
        count[k]++;
        enumerate(g, h + 1, size, count, out, n);
        count[k]--;
    }
}

/* The number of groupings of n heads into groups of size `size`:
 * n! / (size!^(n/size) (n/size)!). */
static int groupings_count(int n, int size)
{
    double c = 1;
    for (int k = 2; k <= n; k++)
        c *= k;
    for (int g = 0; g < n / size; g++)
        for (int k = 2; k <= size; k++)
            c /= k;
    for (int k = 2; k <= n / size; k++)
        c /= k;
    return (int)(c + 0.5);
}

static int by_js(const void *a, const void *b)
{
    const GroupingScore *x = a, *y = b;
    if (x->js_mean != y->js_mean)
        return (x->js_mean > y->js_mean) - (x->js_mean < y->js_mean);
    return memcmp(x->g.of, y->g.of, sizeof x->g.of); /* ties: one order, whatever qsort does */
}

int grouping_rank(const MhaInput *in, const float *mha_att, int n_groups, PoolMethod method, GroupingScore **out,
                  int *n)
{
    const MhaConfig *c = &in->cfg;
    const int H = c->n_heads, T = c->T;
    const size_t map = (size_t)T * T;
    *out = NULL, *n = 0;
    if (H > GROUPING_MAX_HEADS || c->n_kv_heads != H || n_groups < 1 || H % n_groups != 0)
        return MHAVIZ_EINPUT;
    const int total = groupings_count(H, H / n_groups);
    GroupingScore *s = calloc((size_t)total, sizeof *s);
    Grouping *all = calloc((size_t)total, sizeof *all);
    if (!s || !all) {
        free(s), free(all);
        return MHAVIZ_ENOMEM;
    }
    Grouping g = {H, n_groups, {0}};
    int count[GROUPING_MAX_HEADS] = {0}, m = 0;
    enumerate(&g, 0, H / n_groups, count, all, &m);
    int failed = 0;
#pragma omp parallel for schedule(dynamic) if (m > 1)
    for (int k = 0; k < m; k++) { /* each grouping its own slot: any thread count */
        PooledLayer layer;
        MhaState st = {0};
        char err[64];
        if (pool_layer_grouped(&layer, c, &in->w, all[k].of, n_groups, method, err, sizeof err) != MHAVIZ_OK ||
            mha_state_build(&st, &layer.cfg, 0) != MHAVIZ_OK) {
#pragma omp atomic write
            failed = 1;
        } else {
            mha_forward(&layer.cfg, &layer.w, in->x, &st);
            GroupingScore *r = &s[k];
            r->g = all[k];
            r->unique = layer.alignment.unique;
            double js = 0, top1 = 0;
            for (int h = 0; h < H; h++) { /* in head order: the same sums on any thread count */
                MapComparison cmp;
                measures_compare(st.att + (size_t)h * map, mha_att + (size_t)h * map, T, c->causal, &cmp);
                js += cmp.js_to_single;
                top1 += cmp.top1_agreement;
                if (h == 0 || cmp.js_to_single > r->js_max)
                    r->js_max = cmp.js_to_single, r->js_max_head = h;
            }
            r->js_mean = js / H;
            r->top1_mean = top1 / H;
        }
        mha_state_free(&st);
        pool_layer_free(&layer);
    }
    free(all);
    if (failed) {
        free(s);
        return MHAVIZ_ENOMEM;
    }
    qsort(s, (size_t)m, sizeof *s, by_js);
    *out = s, *n = m;
    return MHAVIZ_OK;
}
