/* kernels_gemm.h — one instruction set's copy of C += A B (see kernels.c).
 *
 * kernels.c includes this file once per instruction set, after defining:
 *   GEMM_NAME    name of the function to define
 *   GEMM_TARGET  function attributes (e.g. __attribute__((target("avx2")))) or nothing
 *   GEMM_VW      floats per vector register (4 SSE/NEON, 8 AVX2, 16 AVX-512)
 *   GEMM_NV      vectors per tile row (a tile is 4 rows x GEMM_NV*GEMM_VW columns)
 * The copies differ only in how many elements they update per instruction;
 * each element gets the same operations in the same order, so the same bits. */
#define GEMM_CAT2(a, b) a##b
#define GEMM_CAT(a, b) GEMM_CAT2(a, b)
#define GEMM_VEC GEMM_CAT(GEMM_NAME, _vec)
#define GEMM_TILE GEMM_CAT(GEMM_NAME, _tile)

typedef float GEMM_VEC __attribute__((vector_size(GEMM_VW * sizeof(float))));

/* C (R, NV*VW) = C0 + A (R, K) B (K, NV*VW), where C0 is 0 (from_zero) or
 * C itself, for the constant R <= 4 and NV <= GEMM_NV the callers pass
 * (always inlined, so the accumulators are registers). Element (r, j) gets
 * A[r][p] * B[p][j] for p = 0..K-1, in order. */
static inline __attribute__((always_inline)) GEMM_TARGET void
GEMM_TILE(float *restrict C, int ldc, const float *restrict A, int lda,
          const float *restrict B, int ldb, int K, int from_zero, const int R, const int NV)
{
    GEMM_VEC acc[4][GEMM_NV];
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            if (from_zero)
                acc[r][v] = (GEMM_VEC){0};
            else
                memcpy(&acc[r][v], C + (size_t)r * ldc + v * GEMM_VW, sizeof(GEMM_VEC));
    for (int p = 0; p < K; p++) {
        GEMM_VEC b[GEMM_NV];
        const float *B_p = B + (size_t)p * ldb;
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            memcpy(&b[v], B_p + v * GEMM_VW, sizeof(GEMM_VEC));
#pragma GCC unroll 4
        for (int r = 0; r < R; r++) {
            const float a_rp = A[(size_t)r * lda + p];
#pragma GCC unroll 4
            for (int v = 0; v < NV; v++)
                acc[r][v] += a_rp * b[v];
        }
    }
#pragma GCC unroll 4
    for (int r = 0; r < R; r++)
#pragma GCC unroll 4
        for (int v = 0; v < NV; v++)
            memcpy(C + (size_t)r * ldc + v * GEMM_VW, &acc[r][v], sizeof(GEMM_VEC));
}

/* C (M, N) = C0 + A (M, K) B (K, N), C0 = 0 (from_zero) or C: tiles of
 * 4 rows x GEMM_NV vectors, then 4 rows x 1 vector, then single columns. */
GEMM_TARGET static void GEMM_NAME(float *restrict C, int ldc, const float *restrict A, int lda,
                                  const float *restrict B, int ldb, int M, int N, int K, int from_zero)
{
    int j = 0;
    for (; j + GEMM_NV * GEMM_VW <= N; j += GEMM_NV * GEMM_VW) {
        int i = 0;
        for (; i + 4 <= M; i += 4)
            GEMM_TILE(C + (size_t)i * ldc + j, ldc, A + (size_t)i * lda, lda, B + j, ldb, K, from_zero, 4, GEMM_NV);
        for (; i < M; i++)
            GEMM_TILE(C + (size_t)i * ldc + j, ldc, A + (size_t)i * lda, lda, B + j, ldb, K, from_zero, 1, GEMM_NV);
    }
    for (; j + GEMM_VW <= N; j += GEMM_VW) {
        int i = 0;
        for (; i + 4 <= M; i += 4)
            GEMM_TILE(C + (size_t)i * ldc + j, ldc, A + (size_t)i * lda, lda, B + j, ldb, K, from_zero, 4, 1);
        for (; i < M; i++)
            GEMM_TILE(C + (size_t)i * ldc + j, ldc, A + (size_t)i * lda, lda, B + j, ldb, K, from_zero, 1, 1);
    }
    for (; j < N; j++)
        for (int i = 0; i < M; i++) {
            float c = from_zero ? 0.0f : C[(size_t)i * ldc + j];
            for (int p = 0; p < K; p++)
                c += A[(size_t)i * lda + p] * B[(size_t)p * ldb + j];
            C[(size_t)i * ldc + j] = c;
        }
}

#undef GEMM_TILE
#undef GEMM_VEC
#undef GEMM_CAT
#undef GEMM_CAT2
