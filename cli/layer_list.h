/* layer_list.h — which layers of a model a run shows: --layer's value. */
#ifndef MHAVIZ_LAYER_LIST_H
#define MHAVIZ_LAYER_LIST_H

#include <stddef.h>

/* --layer spec for a model of n_model layers into layers (room for
 * n_model), ascending, and *n: a layer ("5"), a range ("3-6", both ends
 * included, the lower first) or a list of them ("0,5,11", "0-2,7"); NULL:
 * every layer. Returns 0, or -1 with err naming the item that is not a
 * layer, a reversed range, a layer the model lacks or one listed twice
 * (model names the folder or file, field where its layers are counted:
 * "config.json's \"n_layer\""). */
int layer_list_parse(const char *spec, int n_model, const char *model, const char *field, int *layers, int *n,
                     char *err, size_t errlen);

#endif
