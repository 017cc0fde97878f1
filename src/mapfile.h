/* mapfile.h — a whole file to read, mapped instead of copied.
 *
 * Reading a file of several hundred KB into fresh memory costs a page fault
 * for each 4 KiB the copy touches (12-28 us each on a virtual machine: about
 * 3 ms for the 740 KB DejaVu Sans font), although a font reader looks at a
 * small part of it. A read-only mapping of the file shares the pages the
 * system already caches, and only the pages actually read are mapped. Where
 * mapping fails (a pipe, a system without mmap), the file is read into
 * memory as before. */
#ifndef MHAVIZ_MAPFILE_H
#define MHAVIZ_MAPFILE_H

#include <stddef.h>

typedef struct {
    const unsigned char *data; /* (size) the file's bytes, read-only */
    size_t size;               /* bytes */
    int mapped;                /* 1: data is a mapping; 0: a malloc'ed copy */
} MappedFile;

/* Map (or read) the whole of the regular file at path into *m. Returns 0,
 * or an errno value: the one open/fstat/read gave, EISDIR or EINVAL (not a
 * regular file), EFBIG (more than max_bytes), ENODATA (empty), ENOMEM.
 * On failure *m holds nothing. Free with mapfile_close. */
int mapfile_open(MappedFile *m, const char *path, size_t max_bytes);

/* Release what mapfile_open gave and zero *m. Safe on a zeroed *m. */
void mapfile_close(MappedFile *m);

#endif
