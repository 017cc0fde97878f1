/* timing.c — phase times, peak memory, a self-clearing progress line. */
#include "core/timing.h"

#include <string.h>
#include <sys/resource.h>
#include <time.h>

/* Names as printed: "forward: 41.2 ms". */
static const char *const PHASE_NAMES[TIMING_N_PHASES] = {"load", "forward", "chance", "render", "write"};

/* A run that has not finished after this long shows progress. */
#define PROGRESS_AFTER_MS 1000.0

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

void timing_begin(Timing *t, int progress)
{
    memset(t, 0, sizeof *t);
    t->start_ms = t->phase_start_ms = now_ms();
    t->phase = -1;
    t->progress = progress;
}

void timing_phase(Timing *t, TimingPhase p)
{
    const double now = now_ms();
    if (t->phase >= 0)
        t->ms[t->phase] += now - t->phase_start_ms;
    t->phase = (int)p;
    t->phase_start_ms = now;
    timing_progress(t, 0.0);
}

void timing_progress(Timing *t, double fraction)
{
    if (!t->progress || t->phase < 0 || now_ms() - t->start_ms < PROGRESS_AFTER_MS)
        return;
    if (fraction < 0.0)
        fraction = 0.0;
    if (fraction > 1.0)
        fraction = 1.0;
    /* \r: back to the start of the line; \033[K: erase the rest of it. */
    fprintf(stderr, "\rmhaviz: %-7s %3d%%\033[K", PHASE_NAMES[t->phase], (int)(fraction * 100.0 + 0.5));
    fflush(stderr);
    t->progress_shown = 1;
}

void timing_end(Timing *t)
{
    if (t->phase >= 0)
        t->ms[t->phase] += now_ms() - t->phase_start_ms;
    t->phase = -1;
    if (t->progress_shown) {
        fputs("\r\033[K", stderr);
        fflush(stderr);
        t->progress_shown = 0;
    }
}

/* The most memory this program has held (resident), in KiB; 0 when unknown.
 * Linux's VmHWM counts this program only; getrusage's ru_maxrss also counts
 * what the process held before it started mhaviz: a child made by fork or
 * vfork of a big program (a Python script running mhaviz) reports that
 * program's size. ru_maxrss is the fallback elsewhere. */
static double peak_kib(void)
{
    FILE *st = fopen("/proc/self/status", "r");
    if (st) {
        char line[256];
        double kib = 0;
        while (fgets(line, sizeof line, st))
            if (sscanf(line, "VmHWM: %lf kB", &kib) == 1)
                break;
        fclose(st);
        if (kib > 0)
            return kib;
    }
    struct rusage ru;
    return getrusage(RUSAGE_SELF, &ru) == 0 ? (double)ru.ru_maxrss : 0; /* KiB on Linux */
}

void timing_print(const Timing *t, FILE *f)
{
    for (int p = 0; p < TIMING_N_PHASES; p++)
        fprintf(f, "%s: %.1f ms\n", PHASE_NAMES[p], t->ms[p]);
    if (t->estimate_bytes > 0)
        fprintf(f, "estimated memory: %.1f MB\n", (double)t->estimate_bytes / 1e6);
    const double kib = peak_kib();
    if (kib > 0)
        fprintf(f, "peak memory: %.1f MB\n", kib * 1024.0 / 1e6);
}
