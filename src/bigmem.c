/* bigmem.c — big arrays on huge pages where Linux offers them (see bigmem.h). */
#include "bigmem.h"

#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

#define HUGE_PAGE ((size_t)2 << 20) /* 2 MiB, the x86-64 and arm64 huge page */

void *bigmem_alloc(size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n >= HUGE_PAGE) {
        /* aligned_alloc wants a multiple of the alignment */
        const size_t rounded = (n + HUGE_PAGE - 1) / HUGE_PAGE * HUGE_PAGE;
        if (rounded < n)
            return NULL;
        void *p = aligned_alloc(HUGE_PAGE, rounded);
        if (p)
            madvise(p, rounded, MADV_HUGEPAGE); /* a hint: no huge pages is fine too */
        return p;
    }
#endif
    return malloc(n ? n : 1);
}
