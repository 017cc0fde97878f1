/* variants_summary.h — several K/V layouts of one layer compared (--kv-heads
 * 4,2,1), measured once before any writer runs: each variant's heads against
 * their selves in the reference (the first variant), and each GQA variant's
 * groupings ranked. What a variant says about itself is its own LayerSummary
 * (variant.h); report/ and the page format both, and measure nothing. */
#ifndef MHAVIZ_VARIANTS_SUMMARY_H
#define MHAVIZ_VARIANTS_SUMMARY_H

#include "core/grouping.h"
#include "core/measures.h"
#include "core/variant.h"

typedef struct {
    int n;                  /* variants */
    int n_heads;            /* query heads, the same in every variant */
    MapComparison *cmp;     /* (n, n_heads) head h of variant i against head h of the reference v[0]
                             * (row 0: the reference against itself) */
    GroupingRanking *ranks; /* (n) each variant's groupings ranked (grouping.h); n = 0 where none is */
} VariantsSummary;

/* Compare the n variants v (most K/V heads first; v[0] the reference) into
 * *s. A GQA variant's groupings are ranked when v[0] is multi-head with at
 * most GROUPING_MAX_HEADS heads, pooled as the variant was; the ranking is
 * withheld when it would depend on coordinates inside the heads (--pool
 * mean, or an alignment that is not unique under some grouping): a rotation
 * could reorder it. Free *s with variants_summary_free (also after a
 * failure). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int variants_summary_build(VariantsSummary *s, const Variant *v, int n);

/* Free what variants_summary_build made and zero *s. Safe on a zeroed summary. */
void variants_summary_free(VariantsSummary *s);

/* Variant i's heads against the reference: (n_heads), a view into s. */
const MapComparison *variants_summary_cmp(const VariantsSummary *s, int i);

#endif
