/* blas_setup.c — have BLIS use its AVX-512 kernels on the AMD processors
 * it does not know.
 *
 * BLIS picks its kernels once, at its first call. It picks Intel kernels
 * by the instructions the processor has, but AMD kernels by the
 * processor's family and model, and the BLIS in Debian 12 (0.9) knows no
 * AMD processor newer than Zen 3: on this project's machine, a Zen 5, it
 * ran its generic C kernels, a 1024 x 4096 x 4096 product at 33 GFLOP/s on
 * one core, against 161 GFLOP/s with its AVX-512 ("skx") kernels, which
 * need only the instructions. The AMD processors with AVX-512 are Zen 4
 * and Zen 5 (measured here: Zen 5 only). BLIS reads the choice from the
 * environment variable BLIS_ARCH_TYPE (its number for a kernel set) at
 * that first call; so this sets it before, unless the user has set it.
 * The kernels change the bits of a product, never their sameness for any
 * thread count (tests/unit/check_mha.c). */
#include "core/blas_setup.h"

#include <blis.h>
#include <stdio.h>
#include <stdlib.h>

int blas_wants_avx512_kernels(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    return __builtin_cpu_is("amd") && __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
           __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl");
#else
    return 0;
#endif
}

void blas_setup(void)
{
    if (blas_wants_avx512_kernels()) {
        char id[16];
        snprintf(id, sizeof id, "%d", (int)BLIS_ARCH_SKX);
        setenv("BLIS_ARCH_TYPE", id, 0);
    }
}
