/* kv_cache_chart.h — kv_cache.png: how the K/V cache grows with the context.
 *
 * A decoder keeps every earlier token's keys and values: 2 (K and V) x
 * n_kv_heads x head_dim numbers per token per layer, 2 bytes each at fp16,
 * the figure the cost table counts. The chart draws that against context
 * length on log-scaled axes, one line per variant, from 1 token to
 * KV_CACHE_CHART_MAX_T, and marks the input's own T. */
#ifndef MHAVIZ_KV_CACHE_CHART_H
#define MHAVIZ_KV_CACHE_CHART_H

#include "draw/draw.h"

#include <stddef.h>
#include <stdint.h>

#define KV_CACHE_CHART_MAX_T 131072 /* the x axis ends at 128k tokens */

/* One line of the chart. */
typedef struct {
    const char *name;        /* "MHA", "GQA-2", "MQA" */
    int64_t bytes_per_token; /* one layer's K/V cache per token, bytes at fp16 */
} KvCacheLine;

/* Draw the n lines (n >= 1, most bytes first) for a model of `layers`
 * layers into the 1920 x 1080 PNG at path; T is the input's length.
 * Returns MHAVIZ_OK, MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int kv_cache_chart_draw(const DrawFont *f, const char *path, const KvCacheLine *lines, int n, int T, int layers,
                        char *err, size_t errlen);

#endif
