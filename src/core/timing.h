/* timing.h — where a run's time goes, and a progress line for long runs.
 *
 * The run marks the start of each phase (load, forward, chance, render,
 * write: cli/main.c, core/variant.c and run/); timing_print writes one
 * line per phase, "forward: 41.2 ms", and the peak memory. "forward" is
 * the forward passes and their measures; "chance" the random layers drawn
 * to compare them with (core/chance.h), which cost far more than the passes at class size. When stderr is a
 * terminal and the run has taken more than about a second,
 * timing_progress shows "mhaviz: render  54%" on one line that timing_end
 * clears again; in pipes and logs it never prints anything. */
#ifndef MHAVIZ_TIMING_H
#define MHAVIZ_TIMING_H

#include <stdio.h>

typedef enum { TIMING_LOAD, TIMING_FORWARD, TIMING_CHANCE, TIMING_RENDER, TIMING_WRITE, TIMING_N_PHASES } TimingPhase;

typedef struct {
    double start_ms;              /* when the run began (monotonic clock) */
    double phase_start_ms;        /* when the current phase began */
    int phase;                    /* current phase, or -1 before the first / after timing_end */
    double ms[TIMING_N_PHASES];   /* time spent in each phase so far */
    int progress;                 /* 1: progress lines allowed (stderr is a terminal) */
    int progress_shown;           /* 1: a progress line is on the screen */
    size_t estimate_bytes;        /* the run's memory as estimated beforehand (0: none) */
} Timing;

/* Start the clock; progress = 1 allows the progress line (pass 1 only when
 * stderr is a terminal). Nothing to free. */
void timing_begin(Timing *t, int progress);

/* End the current phase (if any) and start phase p. */
void timing_phase(Timing *t, TimingPhase p);

/* Report that the current phase is `fraction` (0..1) done: updates the
 * progress line when allowed and the run is past about a second. */
void timing_progress(Timing *t, double fraction);

/* End the current phase and clear the progress line. */
void timing_end(Timing *t);

/* Write "load: 12.3 ms" ... one line per phase (0.0 for a phase the run did
 * not reach), then the estimate of the run's memory when there is one
 * ("estimated memory: 50.1 MB", --max-memory's figure) and the peak memory
 * of the process ("peak memory: 45.6 MB"). */
void timing_print(const Timing *t, FILE *f);

#endif
