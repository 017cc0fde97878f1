/* blas_setup.h — which of BLIS's kernels do the matrix products. */
#ifndef MHAVIZ_BLAS_SETUP_H
#define MHAVIZ_BLAS_SETUP_H

/* 1 when this processor is one the BLIS in Debian 12 does not know and
 * that has AVX-512: an AMD processor with AVX-512 (see blas_setup.c). */
int blas_wants_avx512_kernels(void);

/* Call once at the start of a program, before any thread and before the
 * first forward pass: on such a processor it has BLIS use its AVX-512
 * kernels instead of its generic ones. A BLIS_ARCH_TYPE already set in the
 * environment is left as it is. */
void blas_setup(void);

#endif
