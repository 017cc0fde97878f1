/* bigmem.c — big arrays on huge pages where Linux offers them (see bigmem.h). */
#include "bigmem.h"

#include <stdlib.h>
#ifdef __linux__
#include <sys/mman.h>
#endif

void *bigmem_alloc(size_t n)
{
#if defined(__linux__) && defined(MADV_HUGEPAGE)
    if (n >= BIGMEM_HUGE_MIN) {
        /* aligned_alloc wants a multiple of the alignment */
        const size_t rounded = (n + BIGMEM_HUGE_PAGE - 1) / BIGMEM_HUGE_PAGE * BIGMEM_HUGE_PAGE;
        if (rounded < n)
            return NULL;
        void *p = aligned_alloc(BIGMEM_HUGE_PAGE, rounded);
        if (p)
            madvise(p, rounded, MADV_HUGEPAGE); /* a hint: no huge pages is fine too */
        return p;
    }
#endif
    return malloc(n ? n : 1);
}
