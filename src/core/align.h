/* align.h — the orthogonal matrix that best turns one head's coordinates
 * into another's (orthogonal Procrustes).
 *
 * Coordinates inside a head are arbitrary: turning head h's queries and keys
 * by one orthogonal matrix R (q R, k R) leaves every score q·k, and so its
 * map, as it was; turning its values by another, U, and W_O's rows of head h
 * by U's transpose leaves the layer's output as it was. Averaging two heads'
 * keys coordinate by coordinate therefore depends on coordinates that mean
 * nothing. Aligning first removes that: turn head m so that its keys come as
 * close as they can to the target head's, then average (Jin et al. 2025,
 * "Align attention heads before merging them", before converting MHA to GQA).
 *
 * The best R, which minimises |A R - B| (Frobenius) over orthogonal R for
 * A, B (rows, n), is R = U V^T where U S V^T is the SVD of M = A^T B
 * (Schönemann 1966). It is unique when M has no zero singular value: when
 * A (or B) uses fewer than n directions, the directions it leaves out can be
 * turned any way, and the pooled result is one of many. */
#ifndef MHAVIZ_ALIGN_H
#define MHAVIZ_ALIGN_H

#include <float.h>

/* Below this share of the largest singular value of M, a singular value
 * counts as zero: that direction's turn is decided by rounding, not by the
 * weights. Float weights carry about 7 digits, so a turn's rounding is about
 * 1e-7 / ratio: at 1e-4, a thousandth of a radian, below what a map shows;
 * the designed samples' unused directions give exact zeros. */
#define ALIGN_UNIQUE_RATIO 1e-4

/* Float weights hold about FLT_EPSILON of relative precision: a ratio below
 * it is 0 within float error (an unused direction gives an exact 0, or the
 * rounding of the turned weights once a head is turned: 3e-34 on lesson 1),
 * and two such ratios are not told apart. */
#define ALIGN_ZERO_RATIO FLT_EPSILON

/* R (n, n), row-major, the orthogonal matrix minimising |A R - B| for
 * M = A^T B given (n, n), row-major. *ratio: M's smallest singular value
 * over its largest (0 when M is all zeros); the alignment is unique when
 * *ratio >= ALIGN_UNIQUE_RATIO. The SVD is LAPACK's dgesvd (through
 * LAPACKE). Returns 0, or -1 when LAPACK fails (no memory, or the SVD did
 * not converge); then R is not set. */
int align_procrustes(const double *M, int n, double *R, double *ratio);

#endif
