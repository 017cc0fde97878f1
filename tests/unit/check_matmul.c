/* check_matmul.c — the one matrix product (core/matmul.h): both weight
 * layouts and the block-by-block product against a float64 sum of the same
 * products, and the same bits with 1 and 2 threads.
 *
 * Expected values: out[i][j] = b[j] + sum_k x[i][k] W[k][j], computed here
 * in double by the definition (a plain triple loop, no BLAS). The inputs are
 * multiples of 1/8 in [-1, 1]: every product is a multiple of 1/64 and every
 * partial sum of at most 301 terms a multiple of 1/64 below 301 in size,
 * which a float holds exactly (301 * 64 < 2^24), in any order of summing.
 * So the float results are exact (TOL only guards the comparison), and a wrong
 * index or a transposed read moves values by 1/64 or more. */
#include "core/matmul.h"
#include "core/blas_setup.h"
#include "core/status.h"
#include "support.h"

#include <check.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define TOL 1e-9
/* Large enough to be cut into blocks and threaded: 40 x 300 x 520 multiply-adds
 * is 6.2M, over PARALLEL_MIN_WORK; 520 rows are 5 blocks of MATMUL_ROW_BLOCK. */
enum { N = 40, N_IN = 300, N_OUT = 520 };

typedef struct {
    float x[N * N_IN];       /* (N, N_IN) */
    float w[N_IN * N_OUT];   /* (N_IN, N_OUT) */
    float wt[N_OUT * N_IN];  /* (N_OUT, N_IN): w transposed, as a torch Linear stores it */
    float b[N_OUT];          /* (N_OUT) */
    double want[N * N_OUT];  /* (N, N_OUT) */
} Product;

/* A multiple of 1/8 in [-1, 1], from the test's own PRNG. */
static float eighth(uint32_t *s)
{
    return (float)((int)(xorshift(s) % 17) - 8) / 8.0f;
}

static Product *product_make(void)
{
    Product *p = malloc(sizeof *p);
    ck_assert_ptr_nonnull(p);
    uint32_t s = 29;
    for (int i = 0; i < N * N_IN; i++)
        p->x[i] = eighth(&s);
    for (int k = 0; k < N_IN; k++)
        for (int j = 0; j < N_OUT; j++)
            p->w[k * N_OUT + j] = p->wt[j * N_IN + k] = eighth(&s);
    for (int j = 0; j < N_OUT; j++)
        p->b[j] = eighth(&s);
    for (int i = 0; i < N; i++)
        for (int j = 0; j < N_OUT; j++) {
            double sum = p->b[j];
            for (int k = 0; k < N_IN; k++)
                sum += (double)p->x[i * N_IN + k] * p->w[k * N_OUT + j];
            p->want[i * N_OUT + j] = sum;
        }
    return p;
}

static void assert_product(const Product *p, const float *out, const char *what)
{
    for (int i = 0; i < N * N_OUT; i++)
        ck_assert_msg(fabs(out[i] - p->want[i]) <= TOL, "%s: element (%d, %d) is %g, want %g", what, i / N_OUT,
                      i % N_OUT, out[i], p->want[i]);
}

/* rows() for matmul_rows: rows of p->wt, as a checkpoint's rows would be converted. */
static int rows_of_wt(void *ctx, int first, int count, float *dst)
{
    const Product *p = ctx;
    memcpy(dst, p->wt + (size_t)first * N_IN, (size_t)count * N_IN * sizeof *dst);
    return MHAVIZ_OK;
}

/* rows() that fails from row 256 on: matmul_rows passes its status on. */
static int rows_failing(void *ctx, int first, int count, float *dst)
{
    return first >= 256 ? MHAVIZ_EIO : rows_of_wt(ctx, first, count, dst);
}

START_TEST(both_layouts_give_the_product)
{
    blas_setup();
    Product *p = product_make();
    float *out = malloc(sizeof(float) * N * N_OUT);
    matmul_xw(out, p->x, p->w, MATMUL_IN_OUT, p->b, N, N_IN, N_OUT);
    assert_product(p, out, "W (n_in, n_out)");
    matmul_xw(out, p->x, p->wt, MATMUL_OUT_IN, p->b, N, N_IN, N_OUT);
    assert_product(p, out, "W (n_out, n_in) read transposed");
    MatmulScratch s;
    ck_assert_int_eq(matmul_scratch_alloc(&s, N_IN), MHAVIZ_OK);
    ck_assert_int_eq(matmul_rows(out, p->x, rows_of_wt, p, &s, p->b, N, N_IN, N_OUT), MHAVIZ_OK);
    assert_product(p, out, "W given block by block");
    ck_assert_int_eq(matmul_rows(out, p->x, rows_failing, p, &s, p->b, N, N_IN, N_OUT), MHAVIZ_EIO);
    matmul_scratch_free(&s);
    free(out);
    free(p);
}
END_TEST

/* The same bits with 1 and 2 threads, for each way of giving W. */
START_TEST(same_bits_with_one_and_two_threads)
{
#ifndef _OPENMP
    cannot_run("same_bits_with_one_and_two_threads", "built without OpenMP: one thread only");
#else
    blas_setup();
    Product *p = product_make();
    float *got[2][3]; /* [threads - 1][way] (N, N_OUT) */
    for (int threads = 1; threads <= 2; threads++) {
        omp_set_num_threads(threads);
        MatmulScratch s;
        ck_assert_int_eq(matmul_scratch_alloc(&s, N_IN), MHAVIZ_OK);
        for (int way = 0; way < 3; way++)
            got[threads - 1][way] = malloc(sizeof(float) * N * N_OUT);
        matmul_xw(got[threads - 1][0], p->x, p->w, MATMUL_IN_OUT, p->b, N, N_IN, N_OUT);
        matmul_xw(got[threads - 1][1], p->x, p->wt, MATMUL_OUT_IN, p->b, N, N_IN, N_OUT);
        ck_assert_int_eq(matmul_rows(got[threads - 1][2], p->x, rows_of_wt, p, &s, p->b, N, N_IN, N_OUT), MHAVIZ_OK);
        matmul_scratch_free(&s);
    }
    for (int way = 0; way < 3; way++) {
        ck_assert_msg(memcmp(got[0][way], got[1][way], sizeof(float) * N * N_OUT) == 0,
                      "way %d: 1 and 2 threads give different bits", way);
        free(got[0][way]), free(got[1][way]);
    }
    free(p);
#endif
}
END_TEST

Suite *matmul_suite(void)
{
    Suite *s = suite_create("matmul");
    TCase *tc = tcase_create("products");
    tcase_add_test(tc, both_layouts_give_the_product);
    tcase_add_test(tc, same_bits_with_one_and_two_threads);
    suite_add_tcase(s, tc);
    return s;
}
