/* head_list.h — which heads of a model --ablate switches off. */
#ifndef MHAVIZ_HEAD_LIST_H
#define MHAVIZ_HEAD_LIST_H

#include <stddef.h>

/* --ablate spec ("5.1" or a list "0.3,5.1": LAYER.HEAD, both counted from
 * 0) for a model of n_layers layers of n_heads heads each into off
 * (n_layers, n_heads; the caller's, zeroed here): 1 for each head listed.
 * Returns 0, or -1 with err naming the item that is not LAYER.HEAD, a layer
 * or head the model lacks (model names the folder), or a head listed twice. */
int head_list_parse(const char *spec, int n_layers, int n_heads, const char *model, unsigned char *off, char *err,
                    size_t errlen);

#endif
