/* align.c — orthogonal Procrustes: R = U V^T from the SVD of M = A^T B. */
#include "core/align.h"

#include <lapacke.h>
#include <stdlib.h>
#include <string.h>

int align_procrustes(const double *M, int n, double *R, double *ratio)
{
    const size_t nn = (size_t)n * n;
    double *a = malloc(nn * sizeof *a);         /* (n, n) M, which dgesvd overwrites */
    double *u = malloc(nn * sizeof *u);         /* (n, n) left singular vectors, columns */
    double *vt = malloc(nn * sizeof *vt);       /* (n, n) right singular vectors, rows */
    double *s = malloc((size_t)n * sizeof *s);  /* (n) singular values, largest first */
    double *superb = malloc((size_t)n * sizeof *superb);
    int rc = -1;
    if (!a || !u || !vt || !s || !superb)
        goto cleanup;
    memcpy(a, M, nn * sizeof *a);
    if (LAPACKE_dgesvd(LAPACK_ROW_MAJOR, 'A', 'A', n, n, a, n, s, u, n, vt, n, superb) != 0)
        goto cleanup;
    /* R = U V^T: R[i][j] = sum over k of U[i][k] V^T[k][j], in order of k. */
    for (int i = 0; i < n; i++)
        for (int j = 0; j < n; j++) {
            double sum = 0.0;
            for (int k = 0; k < n; k++)
                sum += u[(size_t)i * n + k] * vt[(size_t)k * n + j];
            R[(size_t)i * n + j] = sum;
        }
    *ratio = s[0] > 0.0 ? s[n - 1] / s[0] : 0.0;
    rc = 0;
cleanup:
    free(a), free(u), free(vt), free(s), free(superb);
    return rc;
}
