/* kept.h — what one softmax keeps of the heads' relations, and what it loses.
 *
 * Each head's relation is the pattern its role names (measures.h), or, for
 * a head without a role, its strongest pattern. The head holds its relation
 * in row i when that pattern's cells hold at least half of its row there
 * (the row "shows" it) and the row is sharp enough to pull (normalised
 * entropy below MEASURES_SHARP_BELOW). The wide head keeps the relation in that row when
 * its own cells of the same pattern (for fixed-token: the head's fixed key)
 * hold at least half of its row too; otherwise it lost it there. A student
 * checks either in the maps: the cells of the pattern, in the head's map and
 * in the wide head's, each adding up to at least one half. */
#ifndef MHAVIZ_KEPT_H
#define MHAVIZ_KEPT_H

#include "core/layer.h"
#include "core/measures.h"

/* One head's relation and the rows the wide head kept it in. */
typedef struct {
    int relation; /* the MeasuresRole pattern, or -1: the head has none (no strongest pattern) */
    int is_role;  /* 1: the head's role; 0: only its strongest pattern */
    int rows;     /* rows where the head shows its relation */
    int kept;     /* of them, rows where the wide head shows it too */
} KeptHead;

/* The whole layer's. Build with kept_layer_build, free with kept_layer_free. */
typedef struct {
    int n_heads;
    KeptHead *heads; /* (n_heads) */
    int rows, kept;  /* sums over the heads */
} KeptLayer;

/* The relations of the n_heads maps att (n_heads, T, T) against the wide
 * head's map wide (T, T); m (n_heads) the heads' measures (measures_layer),
 * tokens (T) name the tokens. Returns MHAVIZ_OK or MHAVIZ_ENOMEM (then *k
 * holds nothing). The caller frees *k with kept_layer_free. */
int kept_layer_build(KeptLayer *k, const MhaConfig *c, const float *att, const float *wide,
                     char *const *tokens, const MapMeasures *m);

/* Free what kept_layer_build allocated and zero *k. Safe on a zeroed layer. */
void kept_layer_free(KeptLayer *k);

#endif
