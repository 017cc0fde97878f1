/* pull_caption.h — the pulls of one query in words. */
#ifndef MHAVIZ_PULL_CAPTION_H
#define MHAVIZ_PULL_CAPTION_H

#include "core/pull.h"

#include <stddef.h>

/* A one-line caption for query i: what the wide head did, holding for the
 * numbers, e.g. "the wide head's top key 'John' (0.99) is the top key of head 0 too; it gives
 * 0.01 to 'Mary' (head 1), 0.00 to 'because' (heads 2, 3)" or "the pulls
 * split and the row blurs: the wide head gives 0.50 to 'the' (head 0),
 * 0.50 to 'book' (heads 2, 3), ...". Weights are the wide head's, from
 * wide_att (T, T). */
void pull_caption(char *buf, size_t n, const PullLayer *p, int i, char *const *tokens,
                  const float *wide_att);

#endif
