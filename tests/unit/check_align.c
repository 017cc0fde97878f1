/* check_align.c — orthogonal Procrustes (align.h). */
#include "core/align.h"
#include "support.h"

#include <check.h>
#include <math.h>

/* A standard normal number from the xorshift sequence s (Box-Muller). */
static double normal(uint32_t *s)
{
    const double u = (xorshift(s) + 1.0) / 4294967297.0, v = (xorshift(s) + 1.0) / 4294967297.0;
    return sqrt(-2.0 * log(u)) * cos(6.283185307179586 * v);
}

/* M (n, n) = A^T B for A (rows, n) and B = A Q. */
static void cross_AQ(const double *A, const double *Q, int rows, int n, double *M)
{
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0;
            for (int p = 0; p < rows; p++) {
                double b = 0; /* B[p][j] = sum over k of A[p][k] Q[k][j] */
                for (int k = 0; k < n; k++)
                    b += A[p * n + k] * Q[k * n + j];
                sum += A[p * n + i] * b;
            }
            M[i * n + j] = sum;
        }
}

/* Q: a known orthogonal matrix, a reflection (I - 2 u u^T, |u| = 1) times
 * a turn by 0.7 radians in the plane of coordinates 0 and 1. */
static void known_orthogonal(double *Q, int n)
{
    double u[8], H[64], G[64], norm = 0;
    for (int i = 0; i < n; i++)
        u[i] = i + 1.0, norm += u[i] * u[i];
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            H[i * n + j] = (i == j) - 2.0 * u[i] * u[j] / norm;
            G[i * n + j] = i == j;
        }
    G[0] = G[n + 1] = cos(0.7), G[1] = -sin(0.7), G[n] = sin(0.7);
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0;
            for (int k = 0; k < n; k++)
                sum += H[i * n + k] * G[k * n + j];
            Q[i * n + j] = sum;
        }
}

/* B = A Q with A of full column rank: |A R - B| is 0 at R = Q and above 0
 * at every other orthogonal R (A R = A Q forces R = Q when A has full
 * column rank), so align_procrustes must give Q back; the alignment is
 * unique. With A's last column zero, A uses 3 of 4 directions: M = A^T A Q
 * has a zero singular value, ratio 0 (within rounding), not unique. */
START_TEST(recovers_a_known_turn)
{
    enum { ROWS = 12, N = 4 };
    double A[ROWS * N], Q[N * N], M[N * N], R[N * N], ratio;
    uint32_t s = 99;
    for (int i = 0; i < ROWS * N; i++)
        A[i] = normal(&s);
    known_orthogonal(Q, N);
    cross_AQ(A, Q, ROWS, N, M);
    ck_assert_int_eq(align_procrustes(M, N, R, &ratio), 0);
    for (int i = 0; i < N * N; i++)
        ck_assert_double_eq_tol(R[i], Q[i], 1e-10);
    ck_assert(ratio >= ALIGN_UNIQUE_RATIO && ratio <= 1.0);
    for (int p = 0; p < ROWS; p++)
        A[p * N + N - 1] = 0;
    cross_AQ(A, Q, ROWS, N, M);
    ck_assert_int_eq(align_procrustes(M, N, R, &ratio), 0);
    ck_assert_double_eq_tol(ratio, 0.0, 1e-12);
    ck_assert(ratio < ALIGN_UNIQUE_RATIO);
}
END_TEST

Suite *align_suite(void)
{
    Suite *s = suite_create("align");
    TCase *tc = tcase_create("align");
    tcase_add_test(tc, recovers_a_known_turn);
    suite_add_tcase(s, tc);
    return s;
}
