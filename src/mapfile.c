/* mapfile.c — a whole file, mapped read-only (see mapfile.h). */
#include "mapfile.h"

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

int mapfile_open(MappedFile *m, const char *path, size_t max_bytes)
{
    memset(m, 0, sizeof *m);
    /* O_NONBLOCK: a FIFO would otherwise wait for a writer; it is refused below. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if ((unsigned long long)st.st_size > max_bytes)
        e = EFBIG;
    else if (st.st_size == 0)
        e = ENODATA;
    if (e) {
        close(fd);
        return e;
    }
    const size_t size = (size_t)st.st_size;
    void *p = mmap(NULL, size, PROT_READ, MAP_PRIVATE, fd, 0);
    if (p != MAP_FAILED) {
        m->data = p;
        m->size = size;
        m->mapped = 1;
        close(fd);
        return 0;
    }
    /* No mapping: read it. */
    unsigned char *copy = malloc(size);
    size_t got = 0;
    while (copy && got < size) {
        const ssize_t n = read(fd, copy + got, size - got);
        if (n < 0 && errno == EINTR)
            continue;
        if (n <= 0) {
            e = n < 0 ? errno : EIO; /* shorter than fstat said */
            break;
        }
        got += (size_t)n;
    }
    if (!copy)
        e = ENOMEM;
    close(fd);
    if (e) {
        free(copy);
        return e;
    }
    m->data = copy;
    m->size = size;
    return 0;
}

void mapfile_close(MappedFile *m)
{
    if (m->data && m->mapped)
        munmap((void *)m->data, m->size);
    else
        free((void *)m->data);
    memset(m, 0, sizeof *m);
}
