/* run_chance.c — chance's yardsticks for one variant. */
#include "run/run_chance.h"
#include "core/status.h"
#include "models/chance_draw.h"

int run_chance(Variant *v, const MhaInput *in, const Chance *drawn, const int *group_of, PoolMethod pool)
{
    const MhaConfig *c = &v->in.cfg;
    if (drawn)
        v->chance = *drawn;
    else if (chance_draw(&v->chance, c, in->tokens, in->has_single, CHANCE_DRAWS) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    /* for what one softmax keeps, random layers as sharp as these heads */
    if (chance_sharp(&v->chance, c, in->tokens, in->has_single, v->summary.heads_norm_mean,
                     v->summary.wide.entropy_norm, CHANCE_DRAWS) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    if (c->n_kv_heads < in->cfg.n_kv_heads && in->cfg.n_kv_heads == in->cfg.n_heads &&
        chance_pooling(&v->chance, &in->cfg, in->tokens, c->n_kv_heads, group_of, pool, CHANCE_DRAWS) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}
