/* path.c — file paths: put together, and opened only when they name a
 * regular file. */
#include "io/path.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

char *path_join(const char *dir, const char *name)
{
    size_t n = strlen(dir) + strlen(name) + 2;
    char *p = malloc(n);
    if (p)
        snprintf(p, n, "%s/%s", dir, name);
    return p;
}

int path_open_regular(const char *path, int *fd, off_t *size, char *err, size_t errlen)
{
    struct stat st;
    *fd = open(path, O_RDONLY | O_NONBLOCK);
    if (*fd < 0 || fstat(*fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        if (*fd >= 0)
            close(*fd);
        *fd = -1;
        return MHAVIZ_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        snprintf(err, errlen, "%s: not a regular file", path);
        close(*fd);
        *fd = -1;
        return MHAVIZ_EINPUT;
    }
    *size = st.st_size;
    return MHAVIZ_OK;
}
