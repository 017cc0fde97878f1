/* layer.c — freeing a layer's weights and where it came from. */
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

void mha_model_source_free(ModelSource *m)
{
    if (!m)
        return;
    free(m->name), free(m->type), free(m->dtype), free(m->token_ids);
    free(m);
}
