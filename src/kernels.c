/* kernels.c — the fast loops behind the forward pass (see kernels.h).
 *
 * Nearly everything here is one idea: C += A B, computed a small tile at a
 * time (the softmax, at the end, is the exception).
 * A tile is up to 4 rows x 64 columns of C held in registers; for each term
 * p it adds A[r][p] * B[p][j..j+15] to 16 elements of C at once (with
 * AVX-512; 8 with AVX2, 4 otherwise). Every element still receives its terms
 * one by one in increasing p, so the result is bit for bit the plain loop.
 * (Fused multiply-add contraction is off, here and in the Makefile's
 * -ffp-contract=off: a fused a*b+c rounds once instead of twice and would
 * give other bits.)
 *
 * Speed comes from: registers (a tile's accumulators stay in registers for
 * its whole run over p), vectors (GCC vector extensions, several floats per
 * operation), caches (matmul_xw walks W in blocks that fit the level-1
 * cache), threads (OpenMP over blocks of C, never splitting one element's
 * sum). On x86-64 the core exists once per instruction set (AVX-512, AVX2,
 * the SSE2 baseline; kernels_gemm.h) and the processor's best is picked as it
 * runs: one portable binary, fast where the hardware allows, same bits. */
#include "kernels.h"

/* No fused multiply-add, whatever the build flags say (see above). */
#if defined(__clang__)
#pragma STDC FP_CONTRACT OFF
#elif defined(__GNUC__)
#pragma GCC optimize("fp-contract=off")
#endif

#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#define VW 16        /* the widest vector: causal score blocks round up to it */
#define TILE_ROWS 4  /* rows of C per tile */

/* The core, C (M, N) = C0 + A (M, K) B (K, N), once per instruction set. */
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

/* C (M, N) = C0 + A (M, K) B (K, N) with the widest vectors this processor
 * has, where C0 is 0 (from_zero) or what C holds. Element (i, j) starts from
 * C0 and gets A[i][p] * B[p][j] added for p = 0..K-1, in order. */
static void gemm_acc(float *restrict C, int ldc, const float *restrict A, int lda,
                     const float *restrict B, int ldb, int M, int N, int K, int from_zero)
{
#ifdef HAVE_X86_COPIES
    if (__builtin_cpu_supports("avx512f")) {
        gemm_acc_avx512(C, ldc, A, lda, B, ldb, M, N, K, from_zero);
        return;
    }
    if (__builtin_cpu_supports("avx2")) {
        gemm_acc_avx2(C, ldc, A, lda, B, ldb, M, N, K, from_zero);
        return;
    }
#endif
    gemm_acc_base(C, ldc, A, lda, B, ldb, M, N, K, from_zero);
}

/* Blocks of matmul_xw: 256 rows x 64 columns of out per task, and terms p
 * in slices of 128. A task copies its slice of W (128 x 64 floats, 32 KiB)
 * into one contiguous block first: read in place, rows of W lie a
 * power-of-two-ish stride apart and compete for the same few cache sets;
 * packed, the slice stays in the level-1 cache while it serves all 256 rows. */
#define XW_ROWS 256
#define XW_COLS 64
#define XW_TERMS 128

void matmul_xw(float *out, const float *x, const float *W, const float *b, int M, int K, int N)
{
    const int row_blocks = (M + XW_ROWS - 1) / XW_ROWS;
    const int col_blocks = (N + XW_COLS - 1) / XW_COLS;
    const double work = (double)M * K * N;
    (void)work; /* read only by the OpenMP pragma */
#pragma omp parallel for collapse(2) schedule(dynamic) if (work >= KERNELS_PARALLEL_MIN_WORK)
    for (int rb = 0; rb < row_blocks; rb++) {
        for (int cb = 0; cb < col_blocks; cb++) {
            float W_slice[XW_TERMS * XW_COLS]; /* (kp, n) packed slice of W, row stride XW_COLS */
            const int i0 = rb * XW_ROWS, j0 = cb * XW_COLS;
            const int m = M - i0 < XW_ROWS ? M - i0 : XW_ROWS;
            const int n = N - j0 < XW_COLS ? N - j0 : XW_COLS;
            float *out_b = out + (size_t)i0 * N + j0;
            for (int i = 0; i < m; i++)
                memcpy(out_b + (size_t)i * N, b + j0, (size_t)n * sizeof *out);
            for (int p0 = 0; p0 < K; p0 += XW_TERMS) {
                const int kp = K - p0 < XW_TERMS ? K - p0 : XW_TERMS;
                for (int p = 0; p < kp; p++)
                    memcpy(W_slice + p * XW_COLS, W + (size_t)(p0 + p) * N + j0, (size_t)n * sizeof *W);
                gemm_acc(out_b, N, x + (size_t)i0 * K + p0, K, W_slice, XW_COLS, m, n, kp, 0);
            }
        }
    }
}

void transpose(float *dst, int ld_dst, const float *src, int ld_src, int rows, int cols)
{
    /* 8 columns of src at a time: the 8 rows of dst being written stay in
     * the cache while every row of src passes by. */
    for (int c0 = 0; c0 < cols; c0 += 8) {
        const int c1 = c0 + 8 < cols ? c0 + 8 : cols;
        for (int r = 0; r < rows; r++)
            for (int c = c0; c < c1; c++)
                dst[(size_t)c * ld_dst + r] = src[(size_t)r * ld_src + c];
    }
}

void attention_scores(float *s, int lds, const float *q, int ldq, const float *kt, int ldkt,
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
        gemm_acc(s_b, lds, q + (size_t)ib * ldq, ldq, kt, ldkt, m, n, hd, 1);
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
        /* Keys every row of the block sees: 0..ib (causal) or all. */
        const int shared = causal ? ib + 1 : T;
        gemm_acc(o_b, ldo, att_b, lda, v, ldv, m, hd, shared, 1);
        /* Causal: row ib+i also sees keys ib+1 .. ib+i, still in order. */
        for (int i = 1; causal && i < m; i++)
            gemm_acc(o_b + (size_t)i * ldo, ldo, att_b + (size_t)i * lda + shared, lda,
                     v + (size_t)shared * ldv, ldv, 1, hd, i, 0);
    }
}

int kernels_padded_stride(int n)
{
    return (n + VW - 1) / VW * VW + VW;
}

/* ---- Softmax ---------------------------------------------------------- */

/* Sixteen floats (or ints) as one value; GCC lowers it to the registers the
 * processor has (one AVX-512 register, two AVX2 ones, four SSE ones). */
typedef float vf16 __attribute__((vector_size(16 * sizeof(float))));
typedef int vi16 __attribute__((vector_size(16 * sizeof(int))));

/* exp(x) for 16 numbers x <= 0 at once (Cephes expf, S. Moshier): split
 * x = n ln2 + r with whole n and |r| <= ln2/2, exp(r) by a degree-7
 * polynomial, then multiply by 2^n built directly in the exponent bits.
 * Relative error about 1e-7 (tests/check_kernels.c measures it). Below -87
 * (where exp(x) < 1.7e-38) it returns exp(-87). */
static inline __attribute__((always_inline)) void exp16_nonpositive(vf16 *v)
{
    const float magic = 12582912.0f; /* 1.5 * 2^23: x + magic - magic rounds x to a whole number */
    vf16 x = *v;
    const vf16 lowest = (vf16){0} - 87.0f;
    const vi16 below = x < lowest;
    x = (vf16)(((vi16)x & ~below) | ((vi16)lowest & below));
    const vf16 t = x * 1.44269504088896341f + magic; /* n = round(x / ln 2), as magic + n */
    const vf16 n = t - magic;
    vf16 r = x - n * 0.693359375f; /* ln 2 in two parts, so that n * part1 is exact */
    r = r - n * -2.12194440e-4f;
    vf16 p = r * 1.9875691500e-4f + 1.3981999507e-3f;
    p = p * r + 8.3334519073e-3f;
    p = p * r + 4.1665795894e-2f;
    p = p * r + 1.6666665459e-1f;
    p = p * r + 5.0000001201e-1f;
    const vf16 e_r = p * (r * r) + r + 1.0f;
    /* 2^n: n + 127 in the exponent field; t's low bits hold magic + n */
    const vi16 n_int = (vi16)t - (vi16)((vf16){0} + magic);
    const vf16 two_n = (vf16)((n_int + 127) << 23);
    *v = e_r * two_n;
}

float kernels_expf(float x)
{
    vf16 v = {x};
    exp16_nonpositive(&v);
    return v[0];
}

static inline __attribute__((always_inline)) void softmax_body(float *row, int n_visible, int T)
{
    /* The maximum: 16 running maxima, then the largest of them. */
    float max = row[0];
    int j = 0;
    if (n_visible >= 16) {
        vf16 m;
        memcpy(&m, row, sizeof m);
        for (j = 16; j + 16 <= n_visible; j += 16) {
            vf16 v;
            memcpy(&v, row + j, sizeof v);
            const vi16 bigger = v > m;
            m = (vf16)(((vi16)v & bigger) | ((vi16)m & ~bigger));
        }
        for (int l = 0; l < 16; l++)
            if (m[l] > max)
                max = m[l];
    }
    for (; j < n_visible; j++)
        if (row[j] > max)
            max = row[j];

    /* e_j = exp(row_j - max), summed in 16 lanes: lane l adds the j = l (mod 16). */
    vf16 acc = {0};
    for (j = 0; j + 16 <= n_visible; j += 16) {
        vf16 v;
        memcpy(&v, row + j, sizeof v);
        v = v - max;
        exp16_nonpositive(&v);
        memcpy(row + j, &v, sizeof v);
        acc += v;
    }
    float lane[16];
    memcpy(lane, &acc, sizeof lane);
    for (; j < n_visible; j++) {
        vf16 v = {row[j] - max};
        exp16_nonpositive(&v);
        row[j] = v[0];
        lane[j % 16] += v[0];
    }
    float sum = lane[0];
    for (int l = 1; l < 16; l++)
        sum += lane[l];

    /* sum >= 1 (the maximum's own term is exp(0) = 1), unless the scores held a NaN */
    const float inv = sum > 0.0f ? 1.0f / sum : 0.0f;
    for (j = 0; j < n_visible; j++)
        row[j] *= inv;
    for (j = n_visible; j < T; j++)
        row[j] = 0.0f;
}

#ifdef HAVE_X86_COPIES
__attribute__((target("avx512f"))) static void softmax_avx512(float *row, int n_visible, int T)
{
    softmax_body(row, n_visible, T);
}
#endif

static void softmax_base(float *row, int n_visible, int T)
{
    softmax_body(row, n_visible, T);
}

void softmax_row(float *row, int n_visible, int T)
{
#ifdef HAVE_X86_COPIES
    if (__builtin_cpu_supports("avx512f")) {
        softmax_avx512(row, n_visible, T);
        return;
    }
#endif
    softmax_base(row, n_visible, T);
}

long kernels_first_nonfinite(const float *v, size_t n)
{
    enum { BLOCK = 1024 };
    const uint32_t exp_mask = 0x7f800000u; /* an infinity or a NaN: all exponent bits set */
    for (size_t k0 = 0; k0 < n; k0 += BLOCK) {
        const size_t m = n - k0 < BLOCK ? n - k0 : BLOCK;
        uint32_t top = 0; /* the largest exponent field in the block */
        for (size_t k = 0; k < m; k++) {
            uint32_t u;
            memcpy(&u, v + k0 + k, sizeof u);
            u &= exp_mask;
            top = u > top ? u : top;
        }
        if (top != exp_mask)
            continue;
        for (size_t k = k0; k < k0 + m; k++)
            if (!isfinite(v[k]))
                return (long)k;
    }
    return -1;
}
