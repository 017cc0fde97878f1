/* path.h — file paths: put together, and opened only when they name a
 * regular file. */
#ifndef MHAVIZ_PATH_H
#define MHAVIZ_PATH_H

#include <stddef.h>
#include <sys/types.h>

/* dir + "/" + name, newly allocated (the caller frees it); NULL when out
 * of memory. */
char *path_join(const char *dir, const char *name);

/* Open the file at path read-only into *fd (the caller closes it), its
 * size in *size. Only a regular file is opened: a path may name a FIFO,
 * whose open would wait for a writer forever (it is opened O_NONBLOCK,
 * then refused). Returns MHAVIZ_OK, MHAVIZ_EIO ("path: cannot open: why")
 * or MHAVIZ_EINPUT ("path: not a regular file"), the message in err. */
int path_open_regular(const char *path, int *fd, off_t *size, char *err, size_t errlen);

#endif
