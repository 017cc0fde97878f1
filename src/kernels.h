/* kernels.h — the fast loops behind the forward pass.
 *
 * Each function computes exactly what its plain loop in the comment says,
 * bit for bit: every output element is built by the same float operations
 * in the same order as the plain loop (a start value, then one multiply and
 * one add per term, terms in increasing index). Only the order in which
 * DIFFERENT elements are computed changes: blocks that stay in cache,
 * several elements per vector instruction, several threads. So the results
 * do not depend on the thread count, the vector width or the machine.
 * tests/check_kernels.c compares each one with its plain loop. (softmax_row
 * sums in 16 interleaved lanes: its plain loop says so.)
 *
 * Matrices are row-major; ld* is the distance between rows, in floats. */
#ifndef MHAVIZ_KERNELS_H
#define MHAVIZ_KERNELS_H

#include <stddef.h>

/* Work (multiply-adds) below which a loop runs on one thread: waking
 * threads costs more than it saves, a lot more on a busy machine. */
#define KERNELS_PARALLEL_MIN_WORK 4194304.0 /* 2^22 */

/* Projection: out (M, N) = x (M, K) W (K, N) + b (N).
 *   for i, j:  out[i][j] = b[j];  for p = 0..K-1:  out[i][j] += x[i][p] * W[p][j]
 * Runs its own OpenMP loop over blocks of out; call it outside parallel regions. */
void matmul_xw(float *out, const float *x, const float *W, const float *b, int M, int K, int N);

/* Transpose: dst (cols, rows) with row stride ld_dst = src (rows, cols)
 * with row stride ld_src:  dst[c][r] = src[r][c]. */
void transpose(float *dst, int ld_dst, const float *src, int ld_src, int rows, int cols);

/* A row stride for a (rows, n) scratch matrix that the kernels read down
 * its columns: n rounded up to whole vectors, plus one vector, so that
 * successive rows do not fall into the same cache sets. */
int kernels_padded_stride(int n);

/* Attention scores of query rows i0..i1-1 of one head:
 *   for i, j < n_keys(i):  dot = 0;  for e = 0..hd-1:  dot += q[i][e] * kt[e][j];
 *                          s[i][j] = dot * scale
 * q (T, hd) with row stride ldq, kt (hd, T) the head's keys transposed
 * with row stride ldkt,
 * s (T, T) with row stride lds. n_keys(i) = i + 1 when causal, else T.
 * When causal it may also write cells j in (i, i1) of row i, which the
 * caller masks. Called from inside a parallel loop (no threads of its own). */
void attention_scores(float *s, int lds, const float *q, int ldq, const float *kt, int ldkt,
                      int T, int hd, int i0, int i1, int causal, float scale);

/* Mix values for query rows i0..i1-1 of one head:
 *   for i, e:  o[i][e] = 0;  for j = 0..n_keys(i)-1:  o[i][e] += att[i][j] * v[j][e]
 * att (T, T) with row stride lda, v (T, hd) with row stride ldv, o with row
 * stride ldo. Called from inside a parallel loop (no threads of its own). */
void attention_mix(float *o, int ldo, const float *att, int lda, const float *v, int ldv,
                   int T, int hd, int i0, int i1, int causal);

/* Softmax of one row of scores over its first n_visible cells; the masked
 * cells n_visible..T-1 become exact zeros:
 *   max = the largest of row[0..n_visible)   (so every exponent is <= 0)
 *   e_j = kernels_expf(row[j] - max)
 *   sum = lane[0] + lane[1] + ... + lane[15], where lane[l] = the sum of the
 *         e_j with j = l (mod 16), in increasing j, from 0
 *   row[j] = e_j * (1 / sum)
 * (The 16 lanes let 16 exponentials be summed at once; the order is still
 * fixed, so the bits are.) Called from inside a parallel loop. */
void softmax_row(float *row, int n_visible, int T);

/* exp(x) for x <= 0, relative error about 1e-7 (Cephes' expf polynomial);
 * returns exp(-87) for x < -87. The scalar form of what softmax_row uses. */
float kernels_expf(float x);

/* The first non-finite value (infinity or NaN) among v[0..n):
 *   for i = 0..n-1:  if (!isfinite(v[i])) return i;   return -1
 * Whole blocks are first tested at once by their exponent bits (all ones
 * only for an infinity or a NaN), which vectorises; a block that has one is
 * searched in order. */
long kernels_first_nonfinite(const float *v, size_t n);

#endif
