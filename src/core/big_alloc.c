/* big_alloc.c — large blocks aligned to huge pages (see big_alloc.h). */
#include "core/big_alloc.h"

#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* 0 when the environment says MHAVIZ_HUGE_PAGES=0. */
static int huge_pages_wanted(void)
{
    const char *v = getenv("MHAVIZ_HUGE_PAGES");
    return !(v && strcmp(v, "0") == 0);
}

void *big_alloc(size_t bytes)
{
    if (bytes < BIG_ALLOC_HUGE || !huge_pages_wanted())
        return malloc(bytes ? bytes : 1);
    void *p = NULL;
    if (posix_memalign(&p, BIG_ALLOC_HUGE, bytes) != 0)
        return NULL;
#ifdef MADV_HUGEPAGE
    madvise(p, bytes / BIG_ALLOC_HUGE * BIG_ALLOC_HUGE, MADV_HUGEPAGE); /* advice: a failure keeps 4 KB pages */
#endif
    return p;
}
