/* npy.c — read a matrix or vector from a NumPy .npy file, and write one.
 *
 * File layout (numpy.lib.format):
 *   "\x93NUMPY" major minor            8 bytes
 *   header_len                         2 bytes LE (v1.0) or 4 bytes LE (v2.0, v3.0)
 *   header                             a Python dict literal, e.g.
 *       {'descr': '<f4', 'fortran_order': False, 'shape': (8, 16), }
 *   data                               prod(shape) items, C order
 * The data size must match the shape exactly: shorter is a truncated file. */
#include "io/npy.h"
#include "core/finite.h"
#include "core/status.h"
#include "io/path.h"

#include <errno.h>
#include <float.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#define NPY_MAX_HEADER (1 << 20)
#define NPY_CHUNK_BYTES ((size_t)1 << 18) /* bytes of whole rows read at a time when converting */

/* The value of 'key' in the header dict: pointer just after "'key':" and spaces. */
static const char *header_value(const char *h, const char *key)
{
    char pat[32];
    for (int q = 0; q < 2; q++) {
        const char quote = q ? '"' : '\'';
        snprintf(pat, sizeof pat, "%c%s%c", quote, key, quote);
        const char *p = strstr(h, pat);
        if (!p)
            continue;
        p += strlen(pat);
        while (*p == ' ')
            p++;
        if (*p != ':')
            return NULL;
        p++;
        while (*p == ' ')
            p++;
        return p;
    }
    return NULL;
}

/* Parse "(a, b, ...)" into dims; returns the number of dims or -1. */
static int parse_shape(const char *p, long long *dims, int max)
{
    int n = 0;
    if (!p || *p != '(')
        return -1;
    p++;
    for (;;) {
        while (*p == ' ')
            p++;
        if (*p == ')')
            return n;
        char *end;
        errno = 0;
        long long v = strtoll(p, &end, 10);
        if (end == p || errno || v < 0 || n == max)
            return -1;
        dims[n++] = v;
        p = end;
        while (*p == ' ')
            p++;
        if (*p == ',')
            p++;
        else if (*p != ')')
            return -1;
    }
}

static void shape_text(const long long *dims, int nd, char *out, size_t n)
{
    size_t k = (size_t)snprintf(out, n, "(");
    for (int i = 0; i < nd && k < n; i++)
        k += (size_t)snprintf(out + k, n - k, i ? ", %lld" : "%lld", dims[i]);
    if (k < n)
        snprintf(out + k, n - k, nd == 1 ? ",)" : ")");
}

/* Read exactly n bytes of f into dst (large reads go straight to the file). */
static int read_all(FILE *f, void *dst, size_t n, const char *path, char *msg, size_t msglen)
{
    if (fread(dst, 1, n, f) == n)
        return MHAVIZ_OK;
    snprintf(msg, msglen, "%s: read error: %s", path, ferror(f) ? strerror(errno) : "short file");
    return MHAVIZ_EIO;
}

/* "element [i, j] is not a finite number" for item k (in file order) of a
 * file with ncols columns; finite: the value is finite but too large. */
static void element_error(size_t k, size_t ncols, int vector, int finite, const char *path, char *msg,
                          size_t msglen)
{
    const char *what = finite ? "too large for a float" : "not a finite number";
    if (vector)
        snprintf(msg, msglen, "%s: element [%zu] is %s", path, k % ncols, what);
    else
        snprintf(msg, msglen, "%s: element [%zu, %zu] is %s", path, k / ncols, k % ncols, what);
}

/* MHAVIZ_OK when the n floats v (items first .. first+n-1 of the file) are
 * all finite; else MHAVIZ_EINPUT with msg naming the first that is not.
 * (A finite float32 always fits a float.) */
static int check_finite(const float *v, size_t first, size_t n, size_t ncols, int vector,
                        const char *path, char *msg, size_t msglen)
{
    const size_t k = finite_first_bad(v, n);
    if (k == n)
        return MHAVIZ_OK;
    element_error(first + k, ncols, vector, 0, path, msg, msglen);
    return MHAVIZ_EINPUT;
}

/* Open the regular file at path for reading into *f (path_open_regular:
 * a name in the JSON may point at a FIFO), its size in *size. Returns
 * MHAVIZ_OK, MHAVIZ_EIO or MHAVIZ_EINPUT (msg says why), or MHAVIZ_ENOMEM. */
static int open_regular(const char *path, FILE **f, off_t *size, char *msg, size_t msglen)
{
    int fd, rc = path_open_regular(path, &fd, size, msg, msglen);
    if (rc != MHAVIZ_OK)
        return rc;
    if (!(*f = fdopen(fd, "rb"))) {
        close(fd);
        return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* The magic, the version and the header dict (into *header, NUL-terminated;
 * the caller frees it); *data_start: where the data begins. Returns
 * MHAVIZ_OK, MHAVIZ_EINPUT (msg says why) or MHAVIZ_ENOMEM. */
static int read_header(FILE *f, const char *path, char **header, size_t *data_start, char *msg, size_t msglen)
{
    unsigned char pre[12];
    if (fread(pre, 1, 10, f) != 10 || memcmp(pre, "\x93NUMPY", 6) != 0) {
        snprintf(msg, msglen, "%s: not a .npy file (no \\x93NUMPY magic at the start)", path);
        return MHAVIZ_EINPUT;
    }
    const int major = pre[6], minor = pre[7];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = pre[8] | (size_t)pre[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (fread(pre + 10, 1, 2, f) != 2) {
            snprintf(msg, msglen, "%s: truncated .npy header", path);
            return MHAVIZ_EINPUT;
        }
        hlen = pre[8] | (size_t)pre[9] << 8 | (size_t)pre[10] << 16 | (size_t)pre[11] << 24;
        hstart = 12;
    } else {
        snprintf(msg, msglen, "%s: .npy format version %d.%d is not supported (1.0 to 3.0 are)",
                 path, major, minor);
        return MHAVIZ_EINPUT;
    }
    if (hlen > NPY_MAX_HEADER) {
        snprintf(msg, msglen, "%s: .npy header of %zu bytes is implausibly long", path, hlen);
        return MHAVIZ_EINPUT;
    }
    if (!(*header = malloc(hlen + 1)))
        return MHAVIZ_ENOMEM;
    if (fread(*header, 1, hlen, f) != hlen) {
        snprintf(msg, msglen, "%s: truncated .npy header", path);
        return MHAVIZ_EINPUT;
    }
    (*header)[hlen] = '\0';
    *data_start = hstart + hlen;
    return MHAVIZ_OK;
}

/* The header dict's dtype (*item: 4 for float32, 8 for float64), order
 * and shape, against rows x cols (rows < 0: a vector of cols); *got the
 * shape as text (96 bytes). Returns MHAVIZ_OK or MHAVIZ_EINPUT. */
static int check_header(const char *header, const char *path, int rows, int cols, size_t *item, char *got,
                        char *msg, size_t msglen)
{
    const char *descr = header_value(header, "descr");
    if (descr && (strncmp(descr, "'<f4'", 5) == 0 || strncmp(descr, "\"<f4\"", 5) == 0)) {
        *item = 4;
    } else if (descr && (strncmp(descr, "'<f8'", 5) == 0 || strncmp(descr, "\"<f8\"", 5) == 0)) {
        *item = 8;
    } else {
        char d[16] = "?";
        if (descr)
            sscanf(descr, "%15[^,}]", d);
        snprintf(msg, msglen, "%s: dtype %s is not supported; save float32 or float64 "
                 "little-endian, e.g. np.save(name, a.astype('<f4'))", path, d);
        return MHAVIZ_EINPUT;
    }
    const char *order = header_value(header, "fortran_order");
    if (!order || strncmp(order, "False", 5) != 0) {
        snprintf(msg, msglen, "%s: Fortran order is not supported; save "
                 "np.ascontiguousarray(a) instead", path);
        return MHAVIZ_EINPUT;
    }
    long long dims[8];
    int nd = parse_shape(header_value(header, "shape"), dims, 8);
    if (nd < 0) {
        snprintf(msg, msglen, "%s: cannot read the shape in the .npy header", path);
        return MHAVIZ_EINPUT;
    }
    shape_text(dims, nd, got, 96);
    const int want_nd = rows < 0 ? 1 : 2;
    if (nd != want_nd || (want_nd == 2 && dims[0] != rows) || dims[nd - 1] != cols) {
        snprintf(msg, msglen, "%s: shape %s", path, got);
        return MHAVIZ_EINPUT;
    }
    return MHAVIZ_OK;
}

/* An open .npy file whose header and size match the shape asked for. */
typedef struct {
    char *path;          /* base_dir/file, as messages name it */
    FILE *f;             /* at the first byte of the data */
    size_t size;         /* of the whole file, in bytes */
    size_t data_start;   /* where the data begins */
    size_t item;         /* bytes an item: 4 (float32) or 8 (float64) */
    size_t nrows, ncols; /* the items, as rows; nrows 1 for a vector */
    int vector;          /* the caller asked for a vector (for the messages) */
} NpyFile;

/* Open the .npy file named file (relative to base_dir) into *nf and check
 * its header and its size against (rows, cols) (rows < 0: a vector of
 * cols). Returns MHAVIZ_OK, MHAVIZ_EIO or MHAVIZ_EINPUT (msg says why), or
 * MHAVIZ_ENOMEM; close *nf with npy_close in every case. */
static int npy_open(const char *base_dir, const char *file, int rows, int cols, NpyFile *nf, char *msg,
                    size_t msglen)
{
    char *header = NULL;
    int rc = MHAVIZ_EINPUT;
    const unsigned one = 1;
    memset(nf, 0, sizeof *nf);

    if (*(const unsigned char *)&one != 1) {
        snprintf(msg, msglen, "%s: .npy files are only read on little-endian machines", file);
        goto cleanup;
    }
    if (file[0] == '\0') {
        snprintf(msg, msglen, "an empty string is not a .npy file name");
        goto cleanup;
    }
    size_t n = strlen(base_dir) + strlen(file) + 2;
    if (!(nf->path = malloc(n))) {
        rc = MHAVIZ_ENOMEM;
        goto cleanup;
    }
    if (file[0] == '/' || !base_dir[0] || strcmp(base_dir, ".") == 0)
        snprintf(nf->path, n, "%s", file);
    else
        snprintf(nf->path, n, "%s/%s", base_dir, file);

    off_t size;
    char got[96];
    if ((rc = open_regular(nf->path, &nf->f, &size, msg, msglen)) != MHAVIZ_OK ||
        (rc = read_header(nf->f, nf->path, &header, &nf->data_start, msg, msglen)) != MHAVIZ_OK ||
        (rc = check_header(header, nf->path, rows, cols, &nf->item, got, msg, msglen)) != MHAVIZ_OK)
        goto cleanup;

    /* The data must be exactly rows*cols items: no more, no less. */
    nf->nrows = rows < 0 ? 1 : (size_t)rows;
    nf->ncols = (size_t)cols;
    nf->vector = rows < 0;
    nf->size = (size_t)size;
    const size_t count = nf->nrows * nf->ncols;
    const uintmax_t have = (uintmax_t)size > nf->data_start ? (uintmax_t)size - nf->data_start : 0;
    if (have != (uintmax_t)count * nf->item) {
        snprintf(msg, msglen, "%s: %ju bytes of data, but shape %s of %s needs %ju%s", nf->path, have,
                 got, nf->item == 4 ? "float32" : "float64", (uintmax_t)count * nf->item,
                 have < (uintmax_t)count * nf->item ? " (truncated file?)" : "");
        rc = MHAVIZ_EINPUT;
    }
cleanup:
    free(header);
    return rc;
}

/* Close nf; rc is the status of the work on it, returned (an out-of-memory
 * one gets its message here). */
static int npy_close(NpyFile *nf, const char *file, int rc, char *msg, size_t msglen)
{
    if (rc == MHAVIZ_ENOMEM)
        snprintf(msg, msglen, "%s: out of memory", file);
    if (nf->f)
        fclose(nf->f);
    free(nf->path);
    return rc;
}

/* Copy nf's items out as floats into dst, transposed when asked. float32
 * in the file's order is read straight into dst; anything else goes
 * through a buffer of whole rows. Returns MHAVIZ_OK, MHAVIZ_EIO or
 * MHAVIZ_EINPUT (msg says why), or MHAVIZ_ENOMEM. */
static int copy_items(NpyFile *nf, int transpose, float *dst, char *msg, size_t msglen)
{
    const size_t item = nf->item, nrows = nf->nrows, ncols = nf->ncols, count = nrows * ncols;
    const char *path = nf->path;
    const int vector = nf->vector;
    int rc;
    if (item == 4 && !transpose) {
        if ((rc = read_all(nf->f, dst, count * item, path, msg, msglen)) != MHAVIZ_OK)
            return rc;
        return check_finite(dst, 0, count, ncols, vector, path, msg, msglen);
    }
    const size_t chunk_rows = NPY_CHUNK_BYTES / (ncols * item) ? NPY_CHUNK_BYTES / (ncols * item) : 1;
    unsigned char *chunk = malloc(chunk_rows * ncols * item); // (chunk_rows, ncols, item) raw rows read at a time
    if (!chunk)
        return MHAVIZ_ENOMEM;
    float *as_float = (float *)chunk; /* float64 rows narrowed in place, before the first unread byte */
    rc = MHAVIZ_OK;
    for (size_t i0 = 0; i0 < nrows && rc == MHAVIZ_OK; i0 += chunk_rows) {
        const size_t m = nrows - i0 < chunk_rows ? nrows - i0 : chunk_rows; /* rows in this chunk */
        if ((rc = read_all(nf->f, chunk, m * ncols * item, path, msg, msglen)) != MHAVIZ_OK)
            break;
        if (item == 8) {
            for (size_t k = 0; k < m * ncols && rc == MHAVIZ_OK; k++) {
                double v;
                memcpy(&v, chunk + 8 * k, 8);
                if (!isfinite(v) || fabs(v) > FLT_MAX) {
                    element_error(i0 * ncols + k, ncols, vector, isfinite(v), path, msg, msglen);
                    rc = MHAVIZ_EINPUT;
                } else {
                    as_float[k] = (float)v;
                }
            }
        } else {
            rc = check_finite(as_float, i0 * ncols, m * ncols, ncols, vector, path, msg, msglen);
        }
        for (size_t i = 0; i < m && rc == MHAVIZ_OK; i++) {
            const float *row = as_float + i * ncols; // (ncols) row i0 + i of the file
            if (transpose)
                for (size_t j = 0; j < ncols; j++)
                    dst[j * nrows + i0 + i] = row[j];
            else
                memcpy(dst + (i0 + i) * ncols, row, ncols * sizeof *dst);
        }
    }
    free(chunk);
    return rc;
}

int npy_read_floats(const char *base_dir, const char *file, int rows, int cols, int transpose,
                    float *dst, char *msg, size_t msglen)
{
    NpyFile nf;
    int rc = npy_open(base_dir, file, rows, cols, &nf, msg, msglen);
    if (rc == MHAVIZ_OK)
        rc = copy_items(&nf, transpose, dst, msg, msglen);
    return npy_close(&nf, file, rc, msg, msglen);
}

/* Why map: a float32 file in C order already holds the array as the
 * program wants it, so the page cache's own pages can serve as the array.
 * Copying the Llama-shaped layer of bench/ (185 MB) into memory of the
 * program's own took 105-130 ms of CPU, 60 % of it page faults of the
 * fresh arrays, where cat reads the files in 8; mapped, the load (the
 * finiteness check, reading every number once) takes 9 ms of CPU
 * (MAP_POPULATE: no faster). The file must then not shrink while the run
 * lasts: reading a mapped page past its end is a SIGBUS (docs/limits.md). */
int npy_load_floats(const char *base_dir, const char *file, int rows, int cols, int transpose,
                    float **data, MappedFile *map, char *msg, size_t msglen)
{
    NpyFile nf;
    *data = NULL;
    memset(map, 0, sizeof *map);
    int rc = npy_open(base_dir, file, rows, cols, &nf, msg, msglen);
    if (rc != MHAVIZ_OK)
        return npy_close(&nf, file, rc, msg, msglen);
    const size_t count = nf.nrows * nf.ncols;
    if (nf.item == 4 && !transpose && nf.data_start % sizeof(float) == 0) {
        void *addr = mmap(NULL, nf.size, PROT_READ, MAP_PRIVATE, fileno(nf.f), 0);
        if (addr != MAP_FAILED) /* else (a file system that cannot map): copied below */
            *map = (MappedFile){addr, nf.size, (const float *)((const char *)addr + nf.data_start)};
    }
    if (map->addr) {
        rc = check_finite(map->data, 0, count, nf.ncols, nf.vector, nf.path, msg, msglen);
        *data = (float *)map->data;
    } else if (!(*data = malloc(count * sizeof **data))) { // (rows, cols), or (cols, rows) transposed
        rc = MHAVIZ_ENOMEM;
    } else {
        rc = copy_items(&nf, transpose, *data, msg, msglen);
    }
    if (rc != MHAVIZ_OK) {
        if (map->addr)
            npy_unmap(map);
        else
            free(*data);
        *data = NULL;
    }
    return npy_close(&nf, file, rc, msg, msglen);
}

void npy_unmap(MappedFile *map)
{
    if (map->addr)
        munmap(map->addr, map->len);
    memset(map, 0, sizeof *map);
}

int npy_write_floats(const char *path, int rows, int cols, const float *data, char *msg, size_t msglen)
{
    const unsigned one = 1;
    const char *descr = *(const unsigned char *)&one == 1 ? "<f4" : ">f4";
    char shape[64];
    if (rows < 0)
        snprintf(shape, sizeof shape, "(%d,)", cols);
    else
        snprintf(shape, sizeof shape, "(%d, %d)", rows, cols);
    /* The magic, the version, the header's length, then the header padded
     * with spaces and ended by a newline so that the data starts at a
     * multiple of 64 bytes, as numpy writes it. */
    char header[128];
    int n = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': %s, }", descr, shape);
    const int total = (10 + n + 1 + 63) / 64 * 64;
    memset(header + n, ' ', (size_t)(total - 10 - n - 1));
    header[total - 10 - 1] = '\n';
    const unsigned header_len = (unsigned)(total - 10);
    const unsigned char preamble[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(header_len & 0xff),
                                        (unsigned char)(header_len >> 8)};
    const size_t count = (size_t)(rows < 0 ? 1 : rows) * (size_t)cols;

    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(msg, msglen, "%s: cannot create: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    int ok = fwrite(preamble, 1, sizeof preamble, f) == sizeof preamble &&
             fwrite(header, 1, header_len, f) == header_len && fwrite(data, sizeof *data, count, f) == count;
    int e = errno;
    if (fclose(f) != 0 && ok) {
        ok = 0;
        e = errno;
    }
    if (!ok) {
        snprintf(msg, msglen, "%s: cannot write: %s", path, strerror(e ? e : EIO));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}
