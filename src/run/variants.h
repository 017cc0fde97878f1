/* variants.h — several K/V layouts of one input, written side by side.
 *
 * With one variant the output folder holds its pictures and report, as a
 * run has always written them. With several (--kv-heads 4,2,1), each goes
 * into a sub-folder named for its K/V heads (kv4/, kv2/, kv1/), and the
 * top of the folder compares them: variants.png (every head's map, one row
 * per variant), kv_cache.png (K/V cache bytes against context length) and
 * report.txt / report.json (report_write_variants). Either way, unless
 * o->html is 0, lesson.html at the top shows them all (report/lesson_page.h). */
#ifndef MHAVIZ_VARIANTS_H
#define MHAVIZ_VARIANTS_H

#include "core/timing.h"
#include "io/outdir.h"
#include "pictures/render.h"
#include "run/variant_write.h"

#include <stddef.h>

/* At most this many variants in one run (more than any n_heads <= 512 has divisors). */
#define VARIANTS_MAX 32

/* Write the n variants v (most K/V heads first) into out as described
 * above, as o asks (variant.h). Returns MHAVIZ_OK, MHAVIZ_EIO (err names
 * the file) or MHAVIZ_ENOMEM. */
int variants_write(const Variant *v, int n, Renderer *r, const OutDir *out, const VariantOptions *o, Timing *tm,
                   char *err, size_t errlen);

#endif
