/* safetensors.h — the tensors of a Hugging Face checkpoint, read in place.
 *
 * A .safetensors file is an 8-byte little-endian header length N, N bytes
 * of JSON ({"name": {"dtype": "F32", "shape": [..], "data_offsets":
 * [begin, end]}, ..., "__metadata__": {..}}), then the tensors' bytes
 * (offsets count from the end of the header). The files are mapped
 * read-only, as io/npy.c maps .npy files, for their headers; a tensor's
 * bytes are read from the file (pread) only when it is asked for as floats
 * (safetensors_floats), one layer or one block of rows at a time.
 * A checkpoint in shards lists them in model.safetensors.index.json
 * ({"weight_map": {"tensor name": "model-00001-of-00002.safetensors"}}). */
#ifndef MHAVIZ_SAFETENSORS_H
#define MHAVIZ_SAFETENSORS_H

#include <stddef.h>

#define SAFETENSORS_MAX_DIMS 8
/* The safetensors format's own bound on the header (its Rust crate refuses larger). */
#define SAFETENSORS_MAX_HEADER ((unsigned long long)100000000)

typedef struct {
    char *name;        /* the tensor's name in the header */
    char dtype[16];    /* as the header spells it: "F32", "F16", "BF16", "I8", ... */
    int n_dims;
    long long shape[SAFETENSORS_MAX_DIMS]; /* (n_dims) */
    long long count;   /* elements: the product of shape */
    const unsigned char *data; /* its bytes in the mapped file (never freed) */
    size_t nbytes;
    const char *file;  /* the path of the file that holds it (for messages) */
    int fd;            /* that file, open for reading */
    size_t offset;     /* where its bytes begin in the file */
} StTensor;

typedef struct {
    void **maps;       /* (n_files) the files mapped */
    size_t *map_lens;  /* (n_files) */
    int *fds;          /* (n_files) the files open (-1: not opened) */
    char **files;      /* (n_files) their paths */
    int n_files;
    StTensor *tensors; /* (n_tensors) every tensor of every file, in the files' order */
    int n_tensors;
} Safetensors;

/* Open the checkpoint in folder dir: dir/model.safetensors.index.json and
 * the shards it names when it exists, else dir/model.safetensors. Every
 * header is checked whole: its length within the file and the format's
 * bound, JSON, each tensor's dtype, shape and data_offsets, the bytes its
 * shape and dtype need (for the dtypes whose size is known), every tensor
 * inside the data and no two overlapping. Returns MHAVIZ_OK, or
 * MHAVIZ_EINPUT / MHAVIZ_EIO / MHAVIZ_ENOMEM with err naming the file and
 * the tensor or field. Free with safetensors_close (also after a failure). */
int safetensors_open(const char *dir, Safetensors *st, char *err, size_t errlen);

/* The tensor called name, or NULL. */
const StTensor *safetensors_find(const Safetensors *st, const char *name);

/* Elements first .. first+n-1 of tensor t (in its row-major order; first +
 * n <= t->count) as floats into dst: F32 copied, F16 and BF16 converted
 * exactly. Any other dtype: MHAVIZ_EINPUT, err naming it and the tensor; a
 * number that is not finite also (naming the tensor and the element); a
 * file that cannot be read: MHAVIZ_EIO. The bytes are read from the file
 * into dst itself, never through the mapping, so a run's memory holds none
 * of the checkpoint. Safe to call from several threads at once. */
int safetensors_floats(const StTensor *t, size_t first, size_t n, float *dst, char *err, size_t errlen);

/* Unmap every file and free what safetensors_open made; zeroes *st. */
void safetensors_close(Safetensors *st);

#endif
