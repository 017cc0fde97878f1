/* kv_cache_chart.h — kv_cache.png: what sharing keys and values saves.
 *
 * A decoder keeps every earlier token's keys and values: 2 (K and V) x
 * n_kv_heads x head_dim numbers per token per layer, 2 bytes each at fp16,
 * the figure the cost table counts. The chart draws, at a context of
 * KV_CACHE_CHART_CONTEXT tokens, one bar per K/V layout on linear axes:
 * this input's variants (times --layers), then real models' shapes
 * (KV_CACHE_CHART_MODELS) as MHA, as they were built, and as MQA, totalled
 * over their layers; each group on its own scale, so the 2x, 4x, 8x
 * savings show as bar lengths, each bar with its size written. A line
 * says why it matters: at decode every generated token reads the whole
 * cache. */
#ifndef MHAVIZ_KV_CACHE_CHART_H
#define MHAVIZ_KV_CACHE_CHART_H

#include "draw/draw.h"

#include <stddef.h>
#include <stdint.h>

#define KV_CACHE_CHART_CONTEXT 8192 /* tokens of context the bars are drawn at */

/* One bar of the input's group. */
typedef struct {
    const char *name;        /* "MHA", "GQA-2", "MQA" */
    int n_kv_heads;
    int64_t bytes_per_token; /* one layer's K/V cache per token, bytes at fp16 */
} KvCacheLine;

/* A real model's shape (the bars it gets: MHA, its own, MQA). */
typedef struct {
    const char *name;
    int layers, n_heads, n_kv_heads, head_dim;
    int context; /* its context window, tokens */
} KvCacheModel;

#define KV_CACHE_CHART_N_MODELS 3

/* Draw the n lines (n >= 1, most bytes first) of an input of shape
 * d_model, n_heads, head_dim and T tokens, counted over `layers` layers,
 * into the 1920 x 1080 PNG at path. Returns MHAVIZ_OK, MHAVIZ_EIO (err
 * names the file) or MHAVIZ_ENOMEM. */
int kv_cache_chart_draw(const DrawFont *f, const char *path, const KvCacheLine *lines, int n, int n_heads,
                        int head_dim, int T, int layers, char *err, size_t errlen);

#endif
