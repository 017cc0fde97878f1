/* matmul.h — the one matrix product: out = x W + b, threaded, the same bits
 * with any number of threads.
 *
 * W is stored either (n_in, n_out), the "x@W" layout of core/layer.h and
 * GPT-2's Conv1D, or (n_out, n_in), as a torch Linear stores its weight,
 * which is read transposed in place (no copy). A weight that is not in
 * memory as floats (a BF16 or F16 checkpoint) can be given row by row
 * instead: matmul_rows converts it block by block into a small buffer that
 * feeds the product, so the layer is never converted whole. */
#ifndef MHAVIZ_MATMUL_H
#define MHAVIZ_MATMUL_H

#include <stddef.h>

typedef enum {
    MATMUL_IN_OUT, /* W (n_in, n_out) */
    MATMUL_OUT_IN  /* W (n_out, n_in): a torch Linear's weight */
} MatmulLayout;

/* out (n, n_out) = x (n, n_in) W + b (n_out; NULL: no bias). */
void matmul_xw(float *out, const float *x, const float *W, MatmulLayout layout, const float *b, int n, int n_in,
               int n_out);

/* Rows [first, first + count) of a weight stored (n_out, n_in), as floats
 * into dst (count, n_in). Returns 0, or a status (core/status.h) that
 * matmul_rows passes on. Called from several threads at once, each with
 * rows of its own. */
typedef int (*MatmulRowsFn)(void *ctx, int first, int count, float *dst);

/* A buffer for matmul_rows: one block of rows for each thread. */
typedef struct {
    float *buf;         /* (slots, MATMUL_ROW_BLOCK, n_in) */
    int slots;          /* threads that may use it at once */
    size_t slot_floats; /* MATMUL_ROW_BLOCK * n_in */
} MatmulScratch;

/* Rows of W converted at once by one thread: 128 rows of 2048 floats
 * (1 MB) stay in the cache between their conversion and the product. */
#define MATMUL_ROW_BLOCK 128

/* A scratch for weights of up to n_in columns, for as many threads as
 * OpenMP may use now; the memory comes from core/big_alloc.h. MHAVIZ_OK
 * or MHAVIZ_ENOMEM. Free with matmul_scratch_free. */
int matmul_scratch_alloc(MatmulScratch *s, int n_in);

/* The bytes matmul_scratch_alloc(s, n_in) would take now. */
size_t matmul_scratch_bytes(int n_in);
void matmul_scratch_free(MatmulScratch *s);

/* The calling thread's slot of s (MATMUL_ROW_BLOCK * n_in floats), for a
 * loop with num_threads(s->slots) that fills blocks of rows as matmul_rows
 * does. */
float *matmul_scratch_slot(const MatmulScratch *s);

/* out (n, n_out) = x (n, n_in) W^T + b (n_out; NULL: none), W (n_out, n_in)
 * given by rows(), MATMUL_ROW_BLOCK rows at a time into s. Returns MHAVIZ_OK
 * or the status of the first block (in W's order) whose rows() failed;
 * out is then undefined. */
int matmul_rows(float *out, const float *x, MatmulRowsFn rows, void *ctx, MatmulScratch *s, const float *b, int n,
                int n_in, int n_out);

#endif
