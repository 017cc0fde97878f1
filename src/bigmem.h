/* bigmem.h — memory for big arrays (weights, attention maps).
 *
 * A fresh page of memory costs a page fault the first time it is touched;
 * for arrays of many MB those faults can take longer than the arithmetic
 * (tens of ms for a GPT-2-sized layer on a virtual machine). bigmem_alloc
 * asks Linux for 2 MiB pages for such arrays (madvise MADV_HUGEPAGE, used
 * when transparent huge pages are set to "madvise" or "always"): one fault
 * per 2 MiB instead of per 4 KiB. Elsewhere it is plain malloc. */
#ifndef MHAVIZ_BIGMEM_H
#define MHAVIZ_BIGMEM_H

#include <stddef.h>

/* n bytes, or NULL when out of memory. The caller frees them with free(). */
void *bigmem_alloc(size_t n);

#endif
