/* blas_setup.h — which of BLIS's kernels do the matrix products. */
#ifndef MHAVIZ_BLAS_SETUP_H
#define MHAVIZ_BLAS_SETUP_H

/* Call once at the start of a program, before any thread and before the
 * first forward pass: on a processor with AVX-512 it has BLIS use its
 * AVX-512 kernels, which the BLIS in Debian 12 chooses only for the Intel
 * processors it knows (see blas_setup.c). A BLIS_ARCH_TYPE already set in
 * the environment is left as it is. */
void blas_setup(void);

#endif
