/* bench_forward.c — time mha_forward on inputs bench.py wrote.
 *
 *   bench_forward DIR T D_MODEL N_HEADS N_KV_HEADS CAUSAL THREADS RUNS [PASSES]
 *
 * Reads DIR/{x,W_q,W_k,W_v,W_o,b_q,b_k,b_v,b_o}.f32 (raw little-endian
 * float32, row-major, "x@W" layout), runs the forward pass once to warm up
 * and RUNS times timed (PASSES 1, the default: the heads, mha_forward;
 * PASSES 2: the heads and then the single wide head, mha_forward_wide, as
 * the CLI runs them), prints the median in milliseconds on stdout, then
 * the warm-up run's time (the first run of a process, as the CLI's: fresh
 * buffers, each page touched for the first time, BLIS and the threads
 * starting), and
 * writes the last run's attention weights and output to DIR/mhaviz_att.f32
 * and DIR/mhaviz_out.f32 so that bench.py can check them against float64.
 *
 *   bench_forward --clock
 *
 * prints the processor's clock in GHz as it runs now, measured with a chain
 * of dependent integer additions (one per cycle on any x86-64), or 0 where
 * that cannot be done (then bench.py uses /proc/cpuinfo). */
#include "core/blas_setup.h"
#include "io/input.h"
#include "core/mha.h"
#include "core/status.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#ifdef _OPENMP
#include <omp.h>
#endif

static float *read_f32(const char *dir, const char *name, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    FILE *f = fopen(path, "rb");
    float *a = malloc(n * sizeof *a);
    if (!f || !a || fread(a, sizeof *a, n, f) != n) {
        fprintf(stderr, "bench_forward: cannot read %zu floats from %s\n", n, path);
        exit(1);
    }
    fclose(f);
    return a;
}

static void write_f32(const char *dir, const char *name, const float *a, size_t n)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/%s.f32", dir, name);
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(a, sizeof *a, n, f) != n || fclose(f) != 0) {
        fprintf(stderr, "bench_forward: cannot write %s\n", path);
        exit(1);
    }
}

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

/* Clock rate in GHz from the CPU time of 8e8 dependent additions. */
static double measure_clock_ghz(void)
{
#if defined(__x86_64__) && defined(__GNUC__)
    const unsigned long n = 100000000UL;
    unsigned long x = 0;
    struct timespec a, b;
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &a);
    for (unsigned long i = 0; i < n; i++)
        __asm__ volatile("add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\t"
                         "add $1, %0\n\tadd $1, %0\n\tadd $1, %0\n\tadd $1, %0" : "+r"(x));
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &b);
    const double s = (double)(b.tv_sec - a.tv_sec) + (double)(b.tv_nsec - a.tv_nsec) / 1e9;
    return (double)x / s / 1e9;
#else
    return 0.0;
#endif
}

int main(int argc, char **argv)
{
    blas_setup(); /* the kernels mhaviz itself uses */
    if (argc == 2 && strcmp(argv[1], "--clock") == 0) {
        double best = 0.0;
        for (int r = 0; r < 5; r++) {
            const double ghz = measure_clock_ghz();
            best = ghz > best ? ghz : best;
        }
        printf("%.3f\n", best);
        return 0;
    }
    if (argc != 9 && argc != 10) {
        fprintf(stderr, "usage: bench_forward DIR T D_MODEL N_HEADS N_KV_HEADS CAUSAL THREADS RUNS [PASSES]\n");
        return 2;
    }
    const int passes = argc == 10 ? atoi(argv[9]) : 1;
    const char *dir = argv[1];
    MhaConfig c = {0};
    c.T = atoi(argv[2]);
    c.d_model = atoi(argv[3]);
    c.n_heads = atoi(argv[4]);
    c.n_kv_heads = atoi(argv[5]);
    c.causal = atoi(argv[6]);
    c.head_dim = c.d_model / c.n_heads;
    const int threads = atoi(argv[7]), runs = atoi(argv[8]);
#ifdef _OPENMP
    omp_set_num_threads(threads);
#else
    (void)threads;
#endif
    const size_t T = (size_t)c.T, d = (size_t)c.d_model, kv = (size_t)mha_kv_dim(&c);
    float *x = read_f32(dir, "x", T * d);
    MhaWeights w = {0};
    w.W_q = read_f32(dir, "W_q", d * d);
    w.W_k = read_f32(dir, "W_k", d * kv);
    w.W_v = read_f32(dir, "W_v", d * kv);
    w.W_o = read_f32(dir, "W_o", d * d);
    w.b_q = read_f32(dir, "b_q", d);
    w.b_k = read_f32(dir, "b_k", kv);
    w.b_v = read_f32(dir, "b_v", kv);
    w.b_o = read_f32(dir, "b_o", d);

    MhaState s, wide;
    const MhaConfig wide_cfg = mha_single_head_config(&c);
    /* the wide head is built from the heads' scores: the heads keep them, as in the CLI */
    if (mha_state_build(&s, &c, passes == 2) != MHAVIZ_OK || mha_state_build_wide(&wide, &wide_cfg, 0) != MHAVIZ_OK) {
        fprintf(stderr, "bench_forward: out of memory\n");
        return 4;
    }
    double *ms = malloc((size_t)runs * sizeof *ms), first = 0;
    for (int r = -1; r < runs; r++) { /* run -1 warms up: pages in buffers, starts the threads */
        double t0 = now_ms();
        mha_forward(&c, &w, x, &s);
        if (passes == 2)
            mha_forward_wide(&c, &w, &s, &wide);
        if (r >= 0)
            ms[r] = now_ms() - t0;
        else
            first = now_ms() - t0;
    }
    qsort(ms, (size_t)runs, sizeof *ms, cmp_double);
    printf("%.3f %.3f\n", runs % 2 ? ms[runs / 2] : (ms[runs / 2 - 1] + ms[runs / 2]) / 2, first);
    write_f32(dir, "mhaviz_att", s.att, (size_t)c.n_heads * T * T);
    write_f32(dir, "mhaviz_out", s.out, T * d);

    free(ms);
    mha_state_free(&wide);
    mha_state_free(&s);
    free(w.W_q); free(w.W_k); free(w.W_v); free(w.W_o);
    free(w.b_q); free(w.b_k); free(w.b_v); free(w.b_o);
    free(x);
    return 0;
}
