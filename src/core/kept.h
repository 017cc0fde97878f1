/* kept.h — what one softmax keeps of the heads' relations, what it halves,
 * and what it loses.
 *
 * Each head's relation is the pattern its role names (measures.h), or, for
 * a head without a role, its strongest pattern, unless another pattern's
 * share ties it (measures_tied_with): then none. The head holds its relation
 * in row i when that pattern's cells hold at least half of its row there
 * (the row "shows" it) and the row is sharp enough to pull (normalised
 * entropy below MEASURES_SHARP_BELOW). In such a row the wide head's own
 * cells of the same pattern (for fixed-token: the head's fixed key) hold a
 * share of its row, and kept_verdict names it:
 *
 *   kept    share >= MEASURES_SHOWN_SHARE (a half): it still shows the relation;
 *   halved  KEPT_HALVED_AT_LEAST (a quarter) <= share < a half: it gives the
 *           relation's key a good part of its row, but not the row;
 *   lost    share < KEPT_HALVED_AT_LEAST.
 *
 * A relation is counted, not a head: heads holding the same pattern (for
 * fixed-token: on the same key) are one relation, and a row where two of
 * them hold it counts once (the wide head's share of those cells is one
 * number). A student checks any verdict in the maps: the cells of the
 * pattern, in the head's map and in the wide head's, added up. */
#ifndef MHAVIZ_KEPT_H
#define MHAVIZ_KEPT_H

#include "core/layer.h"
#include "core/measures.h"
#include "core/thresholds.h"

typedef enum {
    KEPT_KEPT,   /* share >= MEASURES_SHOWN_SHARE */
    KEPT_HALVED, /* KEPT_HALVED_AT_LEAST <= share < MEASURES_SHOWN_SHARE */
    KEPT_LOST,   /* share < KEPT_HALVED_AT_LEAST */
} KeptVerdict;

/* The verdict on the wide head's share of a relation's cells in a row. */
KeptVerdict kept_verdict(double share);

/* "kept", "halved", "lost": the names report.json and the page use. */
const char *kept_verdict_name(KeptVerdict v);

/* One relation the heads hold, and what the wide head did with it. */
typedef struct {
    int relation;      /* the MeasuresRole pattern */
    int fixed_key;     /* for fixed-token: the key; else -1 */
    int is_role;       /* 1: it is the role of some head that holds it; 0: only a strongest pattern */
    int rows;          /* rows where at least one of its heads holds it (each row once) */
    int verdict[3];    /* of them, rows per KeptVerdict */
    double share_sum;  /* the wide head's share of its cells, added over those rows */
} KeptRelation;

/* One head's relation and the rows it holds it in. */
typedef struct {
    int relation; /* the MeasuresRole pattern, or -1: the head has none (no strongest pattern, or its
                   * strongest ties another: measures_tied_with) */
    int is_role;  /* 1: the head's role; 0: only its strongest pattern */
    int rows;     /* rows where the head shows its relation (and the row is sharp) */
    int kept;     /* of them, rows where the wide head keeps it */
    int of;       /* its index in KeptLayer.relations, -1 when it holds none */
} KeptHead;

/* The whole layer's. Build with kept_layer_build, free with kept_layer_free. */
typedef struct {
    int n_heads;
    KeptHead *heads;          /* (n_heads) */
    int n_relations;
    KeptRelation *relations;  /* (n_relations) in the order of their first head */
    int rows;                 /* relation-rows: sums over the relations */
    int verdict[3];           /* of them, per KeptVerdict */
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
