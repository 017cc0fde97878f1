/* bigmem.h — memory for big arrays (weights, attention maps).
 *
 * A fresh page of memory costs a page fault the first time it is touched;
 * for arrays of many MB those faults can take longer than the arithmetic
 * (tens of ms for a GPT-2-sized layer on a virtual machine, about 12-20 us
 * per 4 KiB page). bigmem_alloc asks Linux for 2 MiB pages for such arrays
 * (madvise MADV_HUGEPAGE, used when transparent huge pages are set to
 * "madvise" or "always"): one fault per 2 MiB instead of 512. From
 * BIGMEM_HUGE_MIN bytes on, the request is rounded up to whole 2 MiB pages:
 * one huge-page fault (about 0.25 ms here) costs less than the 64 or more
 * small ones it replaces (12-28 us each), even when most of the page stays
 * unused. Below it, and elsewhere, it is plain malloc. */
#ifndef MHAVIZ_BIGMEM_H
#define MHAVIZ_BIGMEM_H

#include <stddef.h>

#define BIGMEM_HUGE_PAGE ((size_t)2 << 20) /* 2 MiB, the x86-64 and arm64 huge page */
#define BIGMEM_HUGE_MIN ((size_t)256 << 10) /* requests from 256 KiB on get huge pages */

/* n bytes, or NULL when out of memory. The caller frees them with free().
 * From BIGMEM_HUGE_MIN bytes on (on Linux) the block starts on a
 * BIGMEM_HUGE_PAGE boundary. */
void *bigmem_alloc(size_t n);

#endif
