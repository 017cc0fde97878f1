/* chance.c — chance's numbers and ranges (chance.h): the statistics' names,
 * a draw's cost and budget, a range and the side of it a number falls on.
 * models/chance_draw.c draws the layers; text/chance_words.c says the
 * ranges in words. */
#include "core/chance.h"

#include <math.h>
#include <stdlib.h>

const char *chance_stat_name(ChanceStat s)
{
    static const char *const names[CHANCE_N] = {"blur", "kept", "lost", "agreed", "split", "followed",
                                                "own_choice", "no_pull", "kept_share", "lost_share", "head_js", "head_top1", "pool_js",
                                                "pool_top1"};
    return names[s];
}

size_t chance_draw_cost(const MhaConfig *c, int rival)
{
    const size_t d = (size_t)c->d_model, kv = (size_t)mha_kv_dim(c), T = (size_t)c->T;
    const size_t pairs = (size_t)mha_visible_pairs(c->causal, c->T); /* visible cells of a map */
    const size_t numbers = d * (d + kv) + T * d + (rival ? 2 * d * d : 0);
    return numbers + CHANCE_CELL_COST * ((size_t)c->n_heads + 1) * pairs;
}

int chance_has_choice(const MhaConfig *c) { return mha_visible_keys(c->causal, c->T - 1, c->T) >= 2; }

int chance_budget(const MhaConfig *c, int rival)
{
    if (!chance_has_choice(c))
        return 0;
    const size_t n = CHANCE_BUDGET / chance_draw_cost(c, rival);
    return n > CHANCE_DRAWS ? CHANCE_DRAWS : (int)n;
}

static int by_value(const void *a, const void *b)
{
    const double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

ChanceRange chance_range(const double *v, size_t n, size_t stride, double *buf)
{
    ChanceRange r = {0, NAN, NAN};
    size_t m = 0;
    for (size_t k = 0; k < n; k++)
        if (!isnan(v[k * stride]))
            buf[m++] = v[k * stride];
    if (m == 0)
        return r;
    qsort(buf, m, sizeof *buf, by_value);
    const size_t k = m / CHANCE_TAIL; /* 2.5% at each end */
    r.n = (int)m;
    r.lo = buf[k];
    r.hi = buf[m - 1 - k];
    return r;
}

int chance_side(const ChanceRange *r, double x)
{
    if (r->n == 0 || isnan(x))
        return 0;
    return x < r->lo ? -1 : x > r->hi ? 1 : 0;
}

