/* threads.h — how many threads a run uses when -t does not say.
 *
 * As many as OpenMP would use (OMP_NUM_THREADS, else every core this
 * process may run on), less the cores other programs keep busy: when every
 * core is taken, OpenMP threads that spin while they wait for each other
 * make a run slower than one thread would. OpenMP's own omp_set_dynamic
 * goes by the 15-minute load average instead, and a busy quarter of an
 * hour ago gave an idle machine one thread. The others are counted twice,
 * before and after the load, and the smaller count is taken: a program
 * that only starts or ends is not one that takes a core. The count covers
 * the whole machine, so it is used only when this process may run on every
 * core (not under taskset, cpusets or batch schedulers). Results are the
 * same bits with any thread count. */
#ifndef MHAVIZ_THREADS_H
#define MHAVIZ_THREADS_H

/* Programs running besides this one, from the text of /proc/loadavg
 * ("0.52 0.58 0.59 3/345 6789": 3 of 345 tasks running, this one among
 * them); 0 when text is NULL or not in that form. */
int threads_others_running(const char *loadavg);

/* threads_others_running of the machine's /proc/loadavg now (0 where
 * there is none). */
int threads_others_now(void);

/* The default thread count, at least 1: max_threads (what OpenMP would
 * use), less the busy cores (the smaller of the two counts of others),
 * when the process may use all of the machine's online cores (procs, the
 * cores it may use, equals online); else max_threads, at most procs. */
int threads_default(int max_threads, int procs, long online, int others_before, int others_now);

/* Thread k of a team of n keeps to one core for a while: the k-th core
 * this process may run on, when there are at least n of them (on Linux;
 * elsewhere nothing changes). Left to itself the scheduler often starts a
 * freshly woken thread on the core of the thread that woke it, and the
 * two share that core until it moves one (class size, 11 pictures on 2
 * threads, medians of 30 and 40 interleaved runs: render 22.9 and 25.4 ms
 * unpinned, 20.3 and 21.6 ms pinned). threads_unpin
 * gives the thread back the cores it had. Returns 1 when pinned. */
typedef struct {
    int pinned;
    unsigned char mask[128]; /* the thread's cores before (a cpu_set_t) */
} ThreadPin;
int threads_pin(int k, int n, ThreadPin *pin);
void threads_unpin(ThreadPin *pin);

#endif
