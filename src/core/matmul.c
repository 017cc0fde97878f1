/* matmul.c — the one matrix product (see matmul.h).
 *
 * Determinism: how a product is cut into blocks depends on its size only,
 * never on the thread count, and each block is one call to BLIS's sgemm on
 * one thread, so every element of out is computed by the same call in the
 * same way with any number of threads (tests/unit/check_mha.c compares the
 * bits for 1 and 2 threads). */
#include "core/matmul.h"
#include "core/big_alloc.h"
#include "core/parallel.h"
#include "core/status.h"

#include <blis.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* Column blocks of a product: the work matmul_xw shares out among threads. */
#define MATMUL_BLOCKS 8

/* Columns [j0, j0 + cols) of out (n, n_out) = b's, or zeros without b. */
static void start_with_bias(float *out, const float *b, int n, int n_out, int j0, int cols)
{
    for (int i = 0; i < n; i++) {
        float *out_ij = out + (size_t)i * n_out + j0; /* (cols) */
        if (b)
            memcpy(out_ij, b + j0, (size_t)cols * sizeof *out_ij);
        else
            memset(out_ij, 0, (size_t)cols * sizeof *out_ij);
    }
}

/* A product worth threads has the columns of out cut into MATMUL_BLOCKS
 * blocks (widths a multiple of 16), each block one call to sgemm; a smaller
 * one is a single call (a call costs BLIS about 3 us of set-up whatever its
 * size: a fifth of the chance calibration's time at class size, 200 layers
 * of 5 products). (BLIS's own threads wait for each other by spinning: with
 * more threads than free cores, a 7 x 16 x 16 product took 0.8 s instead of
 * 12 us; OpenMP's loop does not suffer so. bench/README.md.) */
void matmul_xw(float *out, const float *x, const float *W, MatmulLayout layout, const float *b, int n, int n_in,
               int n_out)
{
    const int threaded = (double)n * n_in * n_out >= PARALLEL_MIN_WORK;
    const int width = threaded ? ((n_out + MATMUL_BLOCKS - 1) / MATMUL_BLOCKS + 15) / 16 * 16 : n_out;
    const int out_in = layout == MATMUL_OUT_IN;
    bli_thread_set_num_threads(1); /* threads come from the loop below, not from BLIS */
#pragma omp parallel for schedule(static) if (threaded)
    for (int j0 = 0; j0 < n_out; j0 += width) {
        const int cols = n_out - j0 < width ? n_out - j0 : width;
        /* W's columns j0.. of (n_in, n_out), or its rows j0.. of (n_out, n_in) read transposed */
        const float *W_j = out_in ? W + (size_t)j0 * n_in : W + j0;
        start_with_bias(out, b, n, n_out, j0, cols);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, out_in ? CblasTrans : CblasNoTrans, n, cols, n_in, 1.0f, x, n_in,
                    W_j, out_in ? n_in : n_out, 1.0f, out + j0, n_out);
    }
}

/* The threads that may use a scratch allocated now. */
static int scratch_slots(void)
{
#ifdef _OPENMP
    return omp_get_max_threads();
#else
    return 1;
#endif
}

size_t matmul_scratch_bytes(int n_in)
{
    return (size_t)scratch_slots() * MATMUL_ROW_BLOCK * n_in * sizeof(float);
}

int matmul_scratch_alloc(MatmulScratch *s, int n_in)
{
    s->slots = scratch_slots();
    s->slot_floats = (size_t)MATMUL_ROW_BLOCK * n_in;
    s->buf = big_alloc((size_t)s->slots * s->slot_floats * sizeof *s->buf);
    return s->buf ? MHAVIZ_OK : MHAVIZ_ENOMEM;
}

void matmul_scratch_free(MatmulScratch *s)
{
    free(s->buf);
    memset(s, 0, sizeof *s);
}

float *matmul_scratch_slot(const MatmulScratch *s)
{
#ifdef _OPENMP
    return s->buf + (size_t)omp_get_thread_num() * s->slot_floats;
#else
    return s->buf;
#endif
}

/* Blocks of MATMUL_ROW_BLOCK rows of W, each converted by rows() into the
 * thread's slot of s and multiplied at once, while it is still in the
 * cache. Rather than the whole weight converted first (on both cores) and
 * then multiplied: at Llama-3.2-1B's shape a gate_proj is 64 MB of floats,
 * written to memory and read back by sgemm, and a layer's MLP 200 MB more
 * memory; block by block, 2 MB in all. (The two were not timed head to
 * head; with this and the reading of the checkpoint by pread, a run at that
 * shape went from 6.3 to 4.3 s of CPU: bench/README.md.) */
int matmul_rows(float *out, const float *x, MatmulRowsFn rows, void *ctx, MatmulScratch *s, const float *b, int n,
                int n_in, int n_out)
{
    const int threaded = (double)n * n_in * n_out >= PARALLEL_MIN_WORK && s->slots > 1;
    const int n_blocks = (n_out + MATMUL_ROW_BLOCK - 1) / MATMUL_ROW_BLOCK;
    int first_bad = n_blocks, bad_rc = MHAVIZ_OK; /* the first block (in W's order) that failed */
    bli_thread_set_num_threads(1);
#pragma omp parallel for schedule(dynamic) if (threaded) num_threads(s->slots)
    for (int blk = 0; blk < n_blocks; blk++) {
        float *W_blk = matmul_scratch_slot(s); /* (cols, n_in): rows j0.. of W */
        const int j0 = blk * MATMUL_ROW_BLOCK, cols = n_out - j0 < MATMUL_ROW_BLOCK ? n_out - j0 : MATMUL_ROW_BLOCK;
        const int rc = rows(ctx, j0, cols, W_blk);
        if (rc != MHAVIZ_OK) {
#pragma omp critical(matmul_rows_failed)
            if (blk < first_bad)
                first_bad = blk, bad_rc = rc;
            continue;
        }
        start_with_bias(out, b, n, n_out, j0, cols);
        cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasTrans, n, cols, n_in, 1.0f, x, n_in, W_blk, n_in, 1.0f,
                    out + j0, n_out);
    }
    return bad_rc;
}
