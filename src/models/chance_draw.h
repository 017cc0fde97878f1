/* chance_draw.h — draw the random layers core/chance.h compares with. */
#ifndef MHAVIZ_CHANCE_DRAW_H
#define MHAVIZ_CHANCE_DRAW_H

#include "core/chance.h"
#include "core/layer.h"
#include "core/pool.h"

/* Draw the random layers of shape c on tokens (T) into *ch, as
 * core/chance.h says (seeds 1, 2, ...: `mhaviz init --embeddings`'s W_q,
 * W_k and x; W_v, W_o and the biases 0); rival: the input brings its own
 * single head. max_draws caps the draws (CHANCE_DRAWS; 0 draws none).
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int chance_draw(Chance *ch, const MhaConfig *c, char *const *tokens, int rival, int max_draws);

/* How far the heads of random layers of multi-head shape c (n_kv_heads =
 * n_heads) move when their K/V heads are pooled into n_kv by method, as a
 * variant pools the input's (pool.h; group_of (n_heads): which heads share,
 * NULL for neighbours): each head's JS from its multi-head self and its
 * top-1 agreement, over the rows with a choice, every head of every draw,
 * into ch->r[CHANCE_POOL_JS] and [CHANCE_POOL_TOP1], the draws into
 * ch->pool_draws (0: the budget allows too few). The layers are chance_draw's
 * (the same seeds and budget). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int chance_pooling(Chance *ch, const MhaConfig *c, char *const *tokens, int n_kv, const int *group_of,
                   PoolMethod method, int max_draws);

/* The shares of kept.h's relation-rows that random layers of shape c on
 * tokens, each scaled to the input's sharpness (chance.h: heads_norm the
 * heads' mean normalised entropy; rival_norm, with rival, that of the head
 * trained on its own), keep and lose: into ch->r[CHANCE_KEPT_SHARE] and
 * [CHANCE_LOST_SHARE], the draws into ch->sharp_draws (0: the budget allows
 * too few, or a target is null). The layers are chance_draw's (the same
 * seeds and budget). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int chance_sharp(Chance *ch, const MhaConfig *c, char *const *tokens, int rival, double heads_norm, double rival_norm,
                 int max_draws);

#endif
