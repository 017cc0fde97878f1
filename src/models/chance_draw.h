/* chance_draw.h — draw the random layers core/chance.h compares with. */
#ifndef MHAVIZ_CHANCE_DRAW_H
#define MHAVIZ_CHANCE_DRAW_H

#include "core/chance.h"
#include "core/layer.h"

/* Draw the random layers of shape c on tokens (T) into *ch, as
 * core/chance.h says (seeds 1, 2, ...: `mhaviz init --embeddings`'s W_q,
 * W_k and x; W_v, W_o and the biases 0); rival: the input brings its own
 * single head. max_draws caps the draws (CHANCE_DRAWS; 0 draws none).
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int chance_draw(Chance *ch, const MhaConfig *c, char *const *tokens, int rival, int max_draws);

#endif
