/* big_alloc.h — memory for large blocks: a layer's converted weights, the
 * buffers of a run through a model's layers.
 *
 * Memory a run touches for the first time costs a page fault per page: in
 * 4 KB pages, 256 MB is 65536 faults (about 10 us each on some machines).
 * A block of BIG_ALLOC_HUGE bytes or more is aligned to 2 MB and marked
 * madvise(MADV_HUGEPAGE), as numpy does with its large arrays, so that the
 * kernel may back it with 2 MB pages (512 times fewer faults) when
 * transparent huge pages are set to "madvise" or "always"; smaller blocks
 * are plain malloc. The environment variable MHAVIZ_HUGE_PAGES=0 turns the
 * advice off (to compare both page sizes: bench/README.md). Blocks are
 * allocated once and reused across layers, not freed and faulted again. */
#ifndef MHAVIZ_BIG_ALLOC_H
#define MHAVIZ_BIG_ALLOC_H

#include <stddef.h>

#define BIG_ALLOC_HUGE ((size_t)2 << 20) /* 2 MB: one huge page of x86-64 */

/* bytes of memory, uninitialised, or NULL. Owned by the caller, who frees
 * it with free (a block from posix_memalign is freed so). */
void *big_alloc(size_t bytes);

#endif
