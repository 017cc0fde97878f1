/* safetensors.c — the tensors of a checkpoint, mapped read-only and checked. */
#include "checkpoint/safetensors.h"
#include "core/finite.h"
#include "core/status.h"
#include "io/path.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

/* The dtypes of the format and the bytes of one element; a dtype not listed
 * (a newer or quantized one) is accepted in the header unchecked, and
 * refused if its tensor is read. */
static const struct {
    const char *name;
    int size;
} DTYPES[] = {
    {"BOOL", 1}, {"U8", 1}, {"I8", 1}, {"F8_E5M2", 1}, {"F8_E4M3", 1}, {"I16", 2}, {"U16", 2},
    {"F16", 2}, {"BF16", 2}, {"I32", 4}, {"U32", 4}, {"F32", 4}, {"F64", 8}, {"I64", 8}, {"U64", 8},
};

static int dtype_size(const char *dtype)
{
    for (size_t i = 0; i < sizeof DTYPES / sizeof DTYPES[0]; i++)
        if (strcmp(DTYPES[i].name, dtype) == 0)
            return DTYPES[i].size;
    return 0;
}

/* Map the regular file at path read-only: *addr, *len; with fd_out, the
 * file stays open there (for safetensors_floats' reads). */
static int map_file(const char *path, void **addr, size_t *len, int *fd_out, char *err, size_t errlen)
{
    int fd;
    off_t size;
    const int rc = path_open_regular(path, &fd, &size, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    if (size < 8) {
        snprintf(err, errlen, "%s: shorter than the 8 bytes of a safetensors header length", path);
        close(fd);
        return MHAVIZ_EINPUT;
    }
    *len = (size_t)size;
    *addr = mmap(NULL, *len, PROT_READ, MAP_PRIVATE, fd, 0);
    if (fd_out)
        *fd_out = fd;
    else
        close(fd);
    if (*addr == MAP_FAILED) {
        *addr = NULL;
        snprintf(err, errlen, "%s: cannot map: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

/* A whole number in [0, max] from JSON item v, into *out. */
static int whole(const cJSON *v, double max, long long *out)
{
    if (!cJSON_IsNumber(v) || v->valuedouble < 0 || v->valuedouble > max || floor(v->valuedouble) != v->valuedouble)
        return 0;
    *out = (long long)v->valuedouble;
    return 1;
}

/* One tensor's entry of the header: dtype, shape, data_offsets into *t. */
static int read_entry(const cJSON *e, const char *path, const unsigned char *data, size_t data_len, StTensor *t,
                      char *err, size_t errlen)
{
    const cJSON *dtype = cJSON_GetObjectItemCaseSensitive(e, "dtype");
    const cJSON *shape = cJSON_GetObjectItemCaseSensitive(e, "shape");
    const cJSON *offs = cJSON_GetObjectItemCaseSensitive(e, "data_offsets");
    const char *what = NULL;
    if (!cJSON_IsObject(e))
        what = "is not an object";
    else if (!cJSON_IsString(dtype) || strlen(dtype->valuestring) >= sizeof t->dtype)
        what = "has no \"dtype\" string";
    else if (!cJSON_IsArray(shape) || cJSON_GetArraySize(shape) > SAFETENSORS_MAX_DIMS)
        what = "has no \"shape\" array (of at most 8 sizes)";
    else if (!cJSON_IsArray(offs) || cJSON_GetArraySize(offs) != 2)
        what = "has no \"data_offsets\" [begin, end]";
    if (what) {
        snprintf(err, errlen, "%s: tensor '%s' %s", path, e->string, what);
        return MHAVIZ_EINPUT;
    }
    snprintf(t->dtype, sizeof t->dtype, "%s", dtype->valuestring);
    t->count = 1;
    const cJSON *v;
    cJSON_ArrayForEach(v, shape) {
        long long n;
        if (!whole(v, 1e15, &n)) {
            snprintf(err, errlen, "%s: tensor '%s': \"shape\"[%d] is not a size", path, e->string, t->n_dims);
            return MHAVIZ_EINPUT;
        }
        t->shape[t->n_dims++] = n;
        t->count = n == 0 || t->count <= (long long)1e15 / n ? t->count * n : (long long)1e15 + 1;
    }
    long long begin, end;
    if (!whole(cJSON_GetArrayItem(offs, 0), 1e18, &begin) || !whole(cJSON_GetArrayItem(offs, 1), 1e18, &end) ||
        begin > end || (unsigned long long)end > data_len) {
        snprintf(err, errlen, "%s: tensor '%s': \"data_offsets\" do not lie within the file's %zu bytes of data "
                 "(want 0 <= begin <= end <= %zu)", path, e->string, data_len, data_len);
        return MHAVIZ_EINPUT;
    }
    const int size = dtype_size(t->dtype);
    if (size > 0 && (t->count > (long long)1e15 || t->count * size != end - begin)) {
        snprintf(err, errlen, "%s: tensor '%s': its shape and dtype %s need %lld bytes, its \"data_offsets\" "
                 "[%lld, %lld] hold %lld", path, e->string, t->dtype, t->count * size, begin, end, end - begin);
        return MHAVIZ_EINPUT;
    }
    t->nbytes = (size_t)(end - begin);
    t->data = data + begin;
    return MHAVIZ_OK;
}

static int by_offset(const void *a, const void *b)
{
    const StTensor *x = *(const StTensor *const *)a, *y = *(const StTensor *const *)b;
    return x->data < y->data ? -1 : x->data > y->data;
}

/* No two tensors of one file (first .. first+n-1 of st) share a byte. */
static int check_overlaps(Safetensors *st, int first, int n, const char *path, char *err, size_t errlen)
{
    StTensor **order = malloc((size_t)(n > 0 ? n : 1) * sizeof *order);
    if (!order)
        return MHAVIZ_ENOMEM;
    for (int i = 0; i < n; i++)
        order[i] = &st->tensors[first + i];
    qsort(order, (size_t)n, sizeof *order, by_offset);
    int rc = MHAVIZ_OK;
    const StTensor *last = n > 0 ? order[0] : NULL; /* of those before i, the one that ends last */
    for (int i = 1; i < n && rc == MHAVIZ_OK; i++) {
        if (order[i]->nbytes > 0 && last->data + last->nbytes > order[i]->data) {
            snprintf(err, errlen, "%s: tensors '%s' and '%s' overlap in the file (their \"data_offsets\")", path,
                     last->name, order[i]->name);
            rc = MHAVIZ_EINPUT;
        }
        if (order[i]->data + order[i]->nbytes > last->data + last->nbytes)
            last = order[i];
    }
    free(order);
    return rc;
}

/* Map the file at path (taking it: freed with st) and add its tensors to st. */
static int add_file(Safetensors *st, char *path, char *err, size_t errlen)
{
    void **maps = realloc(st->maps, (size_t)(st->n_files + 1) * sizeof *maps);
    if (maps)
        st->maps = maps;
    size_t *lens = maps ? realloc(st->map_lens, (size_t)(st->n_files + 1) * sizeof *lens) : NULL;
    if (lens)
        st->map_lens = lens;
    int *fds = lens ? realloc(st->fds, (size_t)(st->n_files + 1) * sizeof *fds) : NULL;
    if (fds)
        st->fds = fds;
    char **files = fds ? realloc(st->files, (size_t)(st->n_files + 1) * sizeof *files) : NULL;
    if (!files) {
        free(path);
        return MHAVIZ_ENOMEM;
    }
    st->files = files;
    const int f = st->n_files++;
    st->files[f] = path, st->maps[f] = NULL, st->map_lens[f] = 0, st->fds[f] = -1;
    int rc = map_file(path, &st->maps[f], &st->map_lens[f], &st->fds[f], err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;

    /* The header: its length, little-endian, in the first 8 bytes. */
    const unsigned char *p = st->maps[f];
    const size_t len = st->map_lens[f];
    unsigned long long n = 0;
    for (int i = 7; i >= 0; i--)
        n = n << 8 | p[i];
    if (n > SAFETENSORS_MAX_HEADER || n > len - 8) {
        snprintf(err, errlen, "%s: the header length in its first 8 bytes, %llu, %s", path, n,
                 n > len - 8 ? "runs past the end of the file" : "is over the format's bound of 100000000 bytes");
        return MHAVIZ_EINPUT;
    }
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts((const char *)p + 8, (size_t)n, &end, 0);
    if (!root || !cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: the header is not a JSON object (%s at byte %ld of it)", path,
                 root ? "another value" : "a syntax error", root ? 0L : (long)(end ? end - ((const char *)p + 8) : 0));
        cJSON_Delete(root);
        return MHAVIZ_EINPUT;
    }
    for (const char *q = end; q < (const char *)p + 8 + n; q++)
        if (*q != ' ') { /* the format pads the header with spaces only */
            snprintf(err, errlen, "%s: the header has bytes after its JSON object (at byte %ld of it)", path,
                     (long)(q - ((const char *)p + 8)));
            cJSON_Delete(root);
            return MHAVIZ_EINPUT;
        }
    const unsigned char *data = p + 8 + n; /* the tensors' bytes */
    const size_t data_len = len - 8 - (size_t)n;
    const int first = st->n_tensors;
    const cJSON *e;
    cJSON_ArrayForEach(e, root) {
        if (strcmp(e->string, "__metadata__") == 0)
            continue;
        StTensor *t = realloc(st->tensors, (size_t)(st->n_tensors + 1) * sizeof *t);
        if (!t) {
            rc = MHAVIZ_ENOMEM;
            break;
        }
        st->tensors = t;
        t = &st->tensors[st->n_tensors];
        memset(t, 0, sizeof *t);
        if (!(t->name = strdup(e->string))) {
            rc = MHAVIZ_ENOMEM;
            break;
        }
        st->n_tensors++;
        t->file = path;
        if ((rc = read_entry(e, path, data, data_len, t, err, errlen)) != MHAVIZ_OK)
            break;
        t->fd = st->fds[f], t->offset = (size_t)(t->data - p);
    }
    cJSON_Delete(root);
    if (rc == MHAVIZ_OK)
        rc = check_overlaps(st, first, st->n_tensors - first, path, err, errlen);
    return rc;
}

/* The whole text of the file at path (NUL-terminated) into *text. */
static int slurp(const char *path, char **text, size_t *len, char *err, size_t errlen)
{
    void *addr;
    int rc = map_file(path, &addr, len, NULL, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    if (!(*text = malloc(*len + 1))) {
        munmap(addr, *len);
        return MHAVIZ_ENOMEM;
    }
    memcpy(*text, addr, *len);
    (*text)[*len] = '\0';
    munmap(addr, *len);
    return MHAVIZ_OK;
}

/* The shards model.safetensors.index.json names, each mapped once, and
 * every tensor of its weight_map found in its shard. */
static int open_shards(const char *dir, const char *index, Safetensors *st, char *err, size_t errlen)
{
    char *text = NULL;
    size_t len;
    int rc = slurp(index, &text, &len, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const char *end = NULL;
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1); /* len + 1: its NUL too */
    const cJSON *map = cJSON_GetObjectItemCaseSensitive(root, "weight_map");
    const cJSON *e;
    if (!root) {
        snprintf(err, errlen, "%s: not JSON (at byte %ld)", index, (long)(end ? end - text : 0));
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    if (!cJSON_IsObject(map) || !map->child) {
        snprintf(err, errlen, "%s: no \"weight_map\" object of tensor names and their files", index);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    cJSON_ArrayForEach(e, map) {
        if (!cJSON_IsString(e) || !e->valuestring[0] || strchr(e->valuestring, '/') || e->valuestring[0] == '.') {
            snprintf(err, errlen, "%s: \"weight_map\".\"%s\" is not a file name in the folder", index, e->string);
            rc = MHAVIZ_EINPUT;
            goto cleanup;
        }
        char *path = path_join(dir, e->valuestring);
        if (!path) {
            rc = MHAVIZ_ENOMEM;
            goto cleanup;
        }
        int seen = 0;
        for (int f = 0; f < st->n_files && !seen; f++)
            seen = strcmp(st->files[f], path) == 0;
        if (!seen && access(path, F_OK) != 0) {
            snprintf(err, errlen, "%s: \"weight_map\".\"%s\" names the shard %s, which is not in the folder", index,
                     e->string, e->valuestring);
            free(path);
            rc = MHAVIZ_EINPUT;
            goto cleanup;
        }
        if (seen)
            free(path);
        else if ((rc = add_file(st, path, err, errlen)) != MHAVIZ_OK)
            goto cleanup;
    }
    cJSON_ArrayForEach(e, map) {
        const StTensor *t = safetensors_find(st, e->string);
        if (!t || strcmp(strrchr(t->file, '/') + 1, e->valuestring) != 0) {
            snprintf(err, errlen, "%s: \"weight_map\" puts tensor '%s' in %s, whose header does not list it", index,
                     e->string, e->valuestring);
            rc = MHAVIZ_EINPUT;
            goto cleanup;
        }
    }
cleanup:
    cJSON_Delete(root);
    free(text);
    return rc;
}

int safetensors_open(const char *dir, Safetensors *st, char *err, size_t errlen)
{
    memset(st, 0, sizeof *st);
    char *index = path_join(dir, "model.safetensors.index.json");
    if (!index)
        return MHAVIZ_ENOMEM;
    struct stat sb;
    int rc;
    if (stat(index, &sb) == 0) {
        rc = open_shards(dir, index, st, err, errlen);
    } else {
        char *path = path_join(dir, "model.safetensors");
        if (path && access(path, F_OK) != 0) {
            snprintf(err, errlen, "%s: no model.safetensors, nor model.safetensors.index.json naming its shards "
                     "(mhaviz reads safetensors checkpoints, not pytorch_model.bin)", dir);
            free(path);
            free(index);
            return MHAVIZ_EINPUT;
        }
        rc = path ? add_file(st, path, err, errlen) : MHAVIZ_ENOMEM;
    }
    free(index);
    return rc;
}

const StTensor *safetensors_find(const Safetensors *st, const char *name)
{
    for (int i = 0; i < st->n_tensors; i++)
        if (strcmp(st->tensors[i].name, name) == 0)
            return &st->tensors[i];
    return NULL;
}

/* One element: F32 as it is, F16 and BF16 widened (every value exactly). */
static float f16_to_float(uint16_t h)
{
    const int sign = h >> 15, exp = (h >> 10) & 31, man = h & 1023;
    float v;
    if (exp == 0)
        v = ldexpf((float)man, -24); /* subnormal */
    else if (exp == 31)
        v = man ? NAN : INFINITY;
    else
        v = ldexpf((float)(man | 1024), exp - 25);
    return sign ? -v : v;
}

/* bytes [offset, offset + n) of t's file into buf, read (pread) rather
 * than through the mapping: the kernel copies from the page cache without
 * a page fault per 4 KB page, and the run's memory holds none of the file
 * (1.2 GB of BF16 converted here: 0.82 s of CPU through the mapping, with
 * 13.8k faults, 0.23-0.29 s read into a buffer; bench/README.md). */
static int read_bytes(const StTensor *t, size_t offset, size_t n, unsigned char *buf, char *err, size_t errlen)
{
    while (n > 0) {
        const ssize_t got = pread(t->fd, buf, n, (off_t)offset);
        if (got <= 0) {
            snprintf(err, errlen, "%s: tensor '%s': cannot read: %s", t->file, t->name,
                     got < 0 ? strerror(errno) : "the file is shorter than when it was opened");
            return MHAVIZ_EIO;
        }
        buf += got, offset += (size_t)got, n -= (size_t)got;
    }
    return MHAVIZ_OK;
}

int safetensors_floats(const StTensor *t, size_t first, size_t n, float *dst, char *err, size_t errlen)
{
    const int size = dtype_size(t->dtype);
    if (strcmp(t->dtype, "F32") != 0 && strcmp(t->dtype, "BF16") != 0 && strcmp(t->dtype, "F16") != 0) {
        snprintf(err, errlen, "%s: tensor '%s' has dtype %s; mhaviz reads F32, F16 and BF16 checkpoints "
                 "(not quantized ones)", t->file, t->name, t->dtype);
        return MHAVIZ_EINPUT;
    }
    /* The file's bytes (little-endian, as the machine) into the last n * size
     * bytes of dst; a 2-byte dtype is then widened in place, front to back:
     * element i's float overwrites only bytes of elements before i, already read. */
    unsigned char *bytes = (unsigned char *)dst + n * (sizeof *dst - (size_t)size); /* (n * size) */
    const int rc = read_bytes(t, t->offset + first * (size_t)size, n * (size_t)size, bytes, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    if (strcmp(t->dtype, "BF16") == 0) {
        /* BF16: the top 16 bits of a float32. One plain loop, vectorised (omp
         * simd: gcc's -O2 left it scalar; the memcpy calls are unaligned loads
         * and stores, and keep each element's read before its write). */
#pragma omp simd
        for (size_t i = 0; i < n; i++) {
            uint16_t h;
            memcpy(&h, bytes + 2 * i, sizeof h);
            const uint32_t bits = (uint32_t)h << 16;
            memcpy(&dst[i], &bits, sizeof bits);
        }
    } else if (strcmp(t->dtype, "F16") == 0) {
        for (size_t i = 0; i < n; i++)
            dst[i] = f16_to_float((uint16_t)(bytes[2 * i] | bytes[2 * i + 1] << 8));
    }
    const size_t bad = finite_first_bad(dst, n);
    if (bad < n) {
        snprintf(err, errlen, "%s: tensor '%s': element %zu is not a finite number", t->file, t->name, first + bad);
        return MHAVIZ_EINPUT;
    }
    return MHAVIZ_OK;
}

void safetensors_close(Safetensors *st)
{
    for (int f = 0; f < st->n_files; f++) {
        if (st->maps[f])
            munmap(st->maps[f], st->map_lens[f]);
        if (st->fds[f] >= 0)
            close(st->fds[f]);
        free(st->files[f]);
    }
    for (int i = 0; i < st->n_tensors; i++)
        free(st->tensors[i].name);
    free(st->maps), free(st->map_lens), free(st->fds), free(st->files), free(st->tensors);
    memset(st, 0, sizeof *st);
}
