/* variant.h — one K/V layout of the input's layer (MHA, GQA-n or MQA), run
 * and measured (run/variant_write.h writes it into an output folder).
 *
 * A run of mhaviz is one variant or several (--kv-heads 4,2,1); each is
 * made from the input's K/V heads by mean-pooling (pool.h), then runs the
 * heads and the single wide head and measures every map; it writes
 * nothing (run/variant_write.c writes its pictures and report). A variant
 * of a run of several gives the same bits as a run of that variant alone. */
#ifndef MHAVIZ_VARIANT_H
#define MHAVIZ_VARIANT_H

#include "core/chance.h"
#include "core/grouping.h"
#include "core/layer.h"
#include "core/layer_summary.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/pull.h"
#include "core/timing.h"

#include <stddef.h>

typedef struct {
    MhaInput in;           /* a view of the input with this variant's cfg and weights (owns nothing) */
    PooledLayer layer;     /* the pooled K/V arrays (pool.h) */
    MhaState multi;        /* the heads' forward pass (in.cfg) */
    MhaConfig wide_cfg;    /* one head of width d_model */
    MhaState single;       /* the single wide head's forward pass */
    MapMeasures *measures; /* (n_heads + 1) each head's map, then the wide head's */
    LayerSummary summary;  /* everything the report says about the layer, measured once (layer_summary.h) */
    PullLayer pulls;       /* how the wide head combines the heads' scores (pull.h) */
    int query;             /* the token of query_NN.png */
    Chance chance;         /* what random layers of this shape and sentence give (chance.h); drawn
                            * by the caller (models/chance_draw.h), zero until then */
    int *kv_of;            /* (n_heads) each query head's K/V head: h / (n_heads / n_kv_heads), or
                            * its group under --kv-groups */
    char grouping[96];     /* the groups as --kv-groups writes them ("0,2/1,3") when it chose them, else "" */
    char note[1024];       /* what the pooling did, for the report; "" when nothing was pooled */
    int pooled_from;       /* the input's K/V heads when this variant pooled them, else 0 */
    PoolMethod pool;       /* how they were pooled (pool.h) */
} Variant;

/* Pool the input into n_kv K/V heads (pool_check must have accepted n_kv),
 * run the heads and the single wide head (both keep their scores, of which
 * the pulls are made), measure every map and build the pulls. groups (NULL:
 * neighbours share, head h with K/V head h / (n_heads / n_kv)) chooses the
 * heads that share a K/V head (n_kv groups of a multi-head input; then
 * in.w's K/V hold one block per query head, its group's mean:
 * pool_layer_grouped); pool: how a group's heads become one (pool.h). query is the token of query_NN.png, -1 for pull.h's
 * default; name names the input in messages. All of it is tm's forward
 * phase, the pooling included.
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT (the numbers overflow; err says where)
 * or MHAVIZ_ENOMEM. *v borrows in's arrays: free *v (with variant_free,
 * also after a failure) before in. */
int variant_run(Variant *v, const MhaInput *in, int n_kv, const Grouping *groups, PoolMethod pool, int query,
                const char *name, Timing *tm, char *err, size_t errlen);

/* Free what variant_run made and zero *v. Safe on a zeroed variant. */
void variant_free(Variant *v);

/* "MHA", "GQA-2", "MQA": the name of n_kv K/V heads for n_heads query heads. */
void variant_name(char *buf, size_t len, int n_heads, int n_kv);

#endif
