/* variants_slide.h — variants.png: every head's map under each K/V layout.
 *
 * A 16:9 slide, one row per variant (MHA, GQA-2, MQA; named at the left with
 * its K/V heads and its K/V cache per token), one column per query head and
 * the single wide head's map last, all on the same 0..1 colour scale. Above
 * each row a bar spans the heads that share one K/V head. With many heads
 * the middle ones are left out ("...", head_columns.h). */
#ifndef MHAVIZ_VARIANTS_SLIDE_H
#define MHAVIZ_VARIANTS_SLIDE_H

#include "core/variant.h"
#include "pictures/render.h"

#include <stddef.h>

#define VARIANTS_SLIDE_MAX_COLUMNS 8 /* head columns at most, besides the wide head */

/* Draw the n variants v (most K/V heads first) into the 1920 x 1080 PNG at
 * path with r's font and colour map. Returns MHAVIZ_OK, MHAVIZ_EIO (err
 * names the file) or MHAVIZ_ENOMEM. */
int variants_slide_draw(const Renderer *r, const char *path, const Variant *v, int n, char *err, size_t errlen);

#endif
