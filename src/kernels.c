/* kernels.c — the fast loops behind the forward pass (see kernels.h).
 *
 * Everything here is one idea: C += A B, computed a small tile at a time.
 * A tile is up to 4 rows x 64 columns of C held in registers; for each term
 * p it adds A[r][p] * B[p][j..j+15] to 16 elements of C at once (with
 * AVX-512; 8 with AVX2, 4 otherwise). Every element still receives its terms
 * one by one in increasing p, so the result is bit for bit the plain loop.
 * (The build turns off fused multiply-add contraction, -ffp-contract=off:
 * a fused a*b+c rounds once instead of twice and would give other bits.)
 *
 * Speed comes from: registers (a tile's accumulators stay in registers for
 * its whole run over p), vectors (GCC vector extensions, several floats per
 * operation), caches (matmul_xw walks W in blocks that fit the level-1
 * cache), threads (OpenMP over blocks of C, never splitting one element's
 * sum). On x86-64 the core exists once per instruction set (AVX-512, AVX2,
 * the SSE2 baseline; kernels_gemm.h) and the processor's best is picked as it
 * runs: one portable binary, fast where the hardware allows, same bits. */
#include "kernels.h"

#include <stddef.h>
#include <string.h>

#define VW 16        /* the widest vector: causal score blocks round up to it */
#define TILE_ROWS 4  /* rows of C per tile */

/* The core, C (M, N) += A (M, K) B (K, N), once per instruction set. */
#define GEMM_NAME gemm_acc_base
#define GEMM_TARGET
#define GEMM_VW 4
#define GEMM_NV 2
#include "kernels_gemm.h"
#undef GEMM_NAME
#undef GEMM_TARGET
#undef GEMM_VW
#undef GEMM_NV

#if defined(__x86_64__) && defined(__GNUC__) && !defined(MHAVIZ_BASELINE_ONLY)
#define HAVE_X86_COPIES 1
#define GEMM_NAME gemm_acc_avx2
#define GEMM_TARGET __attribute__((target("avx2")))
#define GEMM_VW 8
#define GEMM_NV 2
#include "kernels_gemm.h"
#undef GEMM_NAME
#undef GEMM_TARGET
#undef GEMM_VW
#undef GEMM_NV

#define GEMM_NAME gemm_acc_avx512
#define GEMM_TARGET __attribute__((target("avx512f")))
#define GEMM_VW 16
#define GEMM_NV 4
#include "kernels_gemm.h"
#undef GEMM_NAME
#undef GEMM_TARGET
#undef GEMM_VW
#undef GEMM_NV
#endif

/* C (M, N) += A (M, K) B (K, N) with the widest vectors this processor has.
 * Element (i, j) gets A[i][p] * B[p][j] for p = 0..K-1, in order. */
static void gemm_acc(float *restrict C, int ldc, const float *restrict A, int lda,
                     const float *restrict B, int ldb, int M, int N, int K)
{
#ifdef HAVE_X86_COPIES
    if (__builtin_cpu_supports("avx512f")) {
        gemm_acc_avx512(C, ldc, A, lda, B, ldb, M, N, K);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        gemm_acc_avx2(C, ldc, A, lda, B, ldb, M, N, K);
        return;
    }
#endif
    gemm_acc_base(C, ldc, A, lda, B, ldb, M, N, K);
}

/* Blocks of matmul_xw: 64 rows x 64 columns of out per task, and terms p
 * in slices of 128 so that the slice of W a task reads (128 x 64 floats,
 * 32 KiB) stays in the level-1 cache while it serves all 64 rows. */
#define XW_ROWS 64
#define XW_COLS 64
#define XW_TERMS 128

void matmul_xw(float *out, const float *x, const float *W, const float *b, int M, int K, int N)
{
    const int row_blocks = (M + XW_ROWS - 1) / XW_ROWS;
    const int col_blocks = (N + XW_COLS - 1) / XW_COLS;
#pragma omp parallel for collapse(2) schedule(dynamic)
    for (int rb = 0; rb < row_blocks; rb++) {
        for (int cb = 0; cb < col_blocks; cb++) {
            const int i0 = rb * XW_ROWS, j0 = cb * XW_COLS;
            const int m = M - i0 < XW_ROWS ? M - i0 : XW_ROWS;
            const int n = N - j0 < XW_COLS ? N - j0 : XW_COLS;
            float *out_b = out + (size_t)i0 * N + j0;
            for (int i = 0; i < m; i++)
                memcpy(out_b + (size_t)i * N, b + j0, (size_t)n * sizeof *out);
            for (int p0 = 0; p0 < K; p0 += XW_TERMS) {
                const int kp = K - p0 < XW_TERMS ? K - p0 : XW_TERMS;
                gemm_acc(out_b, N, x + (size_t)i0 * K + p0, K, W + (size_t)p0 * N + j0, N, m, n, kp);
            }
        }
    }
}

void transpose(float *dst, const float *src, int rows, int cols, int ld_src)
{
    for (int r = 0; r < rows; r++)
        for (int c = 0; c < cols; c++)
            dst[(size_t)c * rows + r] = src[(size_t)r * ld_src + c];
}

void attention_scores(float *s, int lds, const float *q, int ldq, const float *kt,
                      int T, int hd, int i0, int i1, int causal, float scale)
{
    for (int ib = i0; ib < i1; ib += TILE_ROWS) {
        const int m = i1 - ib < TILE_ROWS ? i1 - ib : TILE_ROWS;
        /* Keys this block needs: all, or (causal) up to its last row, rounded
         * up to whole vectors; the extra cells lie in the masked future. */
        int n = T;
        if (causal) {
            n = (ib + m + VW - 1) / VW * VW;
            if (n > T)
                n = T;
        }
        float *s_b = s + (size_t)ib * lds;
        for (int i = 0; i < m; i++)
            memset(s_b + (size_t)i * lds, 0, (size_t)n * sizeof *s);
        gemm_acc(s_b, lds, q + (size_t)ib * ldq, ldq, kt, T, m, n, hd);
        for (int i = 0; i < m; i++)
            for (int j = 0; j < n; j++)
                s_b[(size_t)i * lds + j] *= scale;
    }
}

void attention_mix(float *o, int ldo, const float *att, int lda, const float *v, int ldv,
                   int T, int hd, int i0, int i1, int causal)
{
    for (int ib = i0; ib < i1; ib += TILE_ROWS) {
        const int m = i1 - ib < TILE_ROWS ? i1 - ib : TILE_ROWS;
        float *o_b = o + (size_t)ib * ldo;
        const float *att_b = att + (size_t)ib * lda;
        for (int i = 0; i < m; i++)
            memset(o_b + (size_t)i * ldo, 0, (size_t)hd * sizeof *o);
        /* Keys every row of the block sees: 0..ib (causal) or all. */
        const int shared = causal ? ib + 1 : T;
        gemm_acc(o_b, ldo, att_b, lda, v, ldv, m, hd, shared);
        /* Causal: row ib+i also sees keys ib+1 .. ib+i, still in order. */
        for (int i = 1; causal && i < m; i++)
            gemm_acc(o_b + (size_t)i * ldo, ldo, att_b + (size_t)i * lda + shared, lda,
                     v + (size_t)shared * ldv, ldv, 1, hd, i);
    }
}
