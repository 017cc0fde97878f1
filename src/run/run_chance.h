/* run_chance.h — what random layers give, measured for a variant before
 * anything is written (models/chance_draw.h draws them). */
#ifndef MHAVIZ_RUN_CHANCE_H
#define MHAVIZ_RUN_CHANCE_H

#include "core/layer.h"
#include "core/pool.h"
#include "core/variant.h"

/* Fill v->chance for variant v of input in: the random layers of its shape
 * and sentence (drawn here, or a copy of drawn when it is not NULL: a
 * model's layers share one draw), random layers as sharp as its heads, and
 * for a layout pooled from a multi-head input how far pooling (pool, the
 * heads' groups group_of, NULL: neighbours) moves their heads: the same
 * numbers whether the variant runs alone or among others. Returns
 * MHAVIZ_OK or MHAVIZ_ENOMEM. */
int run_chance(Variant *v, const MhaInput *in, const Chance *drawn, const int *group_of, PoolMethod pool);

#endif
