/* blas_setup.c — have BLIS use its AVX-512 kernels wherever the processor
 * has AVX-512.
 *
 * BLIS picks its kernels once, at its first call, from the processor's
 * model, and takes a processor it does not know for a plain x86-64: Debian
 * 12's BLIS 0.9 knows none newer than Zen 3 and Ice Lake. On this project's
 * machine, an AMD Zen 5, it ran its generic C kernels: a 1024 x 4096 x 4096
 * product at 33 GFLOP/s on one core, against 161 GFLOP/s with its AVX-512
 * ("skx") kernels, which need only the instructions, not an Intel
 * processor. BLIS reads the choice from the environment variable
 * BLIS_ARCH_TYPE (its number for a kernel set) at that first call; so this
 * sets it before, unless the user has set it. The kernels change the bits
 * of a product, never their sameness for any thread count (tests/check_mha.c). */
#include "blas_setup.h"

#include <blis.h>
#include <stdio.h>
#include <stdlib.h>

void blas_setup(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512dq") &&
        __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512vl")) {
        char id[16];
        snprintf(id, sizeof id, "%d", (int)BLIS_ARCH_SKX);
        setenv("BLIS_ARCH_TYPE", id, 0);
    }
#endif
}
