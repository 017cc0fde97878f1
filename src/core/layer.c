/* layer.c — freeing a layer's weights. */
#include "core/layer.h"

#include <stdlib.h>
#include <string.h>

void mha_weights_free(MhaWeights *w)
{
    if (!w)
        return;
    free(w->W_q);
    free(w->W_k);
    free(w->W_v);
    free(w->W_o);
    free(w->b_q);
    free(w->b_k);
    free(w->b_v);
    free(w->b_o);
    memset(w, 0, sizeof *w);
}
