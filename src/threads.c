/* threads.c — how many threads a run uses when -t does not say, and
 * keeping a team's threads on cores of their own (see threads.h). */
#define _GNU_SOURCE /* sched_setaffinity and cpu_set_t (Linux) */
#include "threads.h"

#include <stdio.h>
#include <string.h>
#ifdef __linux__
#include <sched.h>
#endif

int threads_others_running(const char *loadavg)
{
    int running = 0;
    if (!loadavg || sscanf(loadavg, "%*f %*f %*f %d/", &running) != 1)
        return 0;
    return running > 1 ? running - 1 : 0;
}

int threads_others_now(void)
{
    char text[128] = "";
    FILE *f = fopen("/proc/loadavg", "r");
    if (!f)
        return 0;
    const int ok = fgets(text, sizeof text, f) != NULL;
    fclose(f);
    return ok ? threads_others_running(text) : 0;
}

int threads_default(int max_threads, int procs, long online, int others_before, int others_now)
{
    int busy = others_before < others_now ? others_before : others_now;
    if (procs < online)
        busy = 0; /* some cores are not ours: whose are busy is unknown */
    const int idle = procs - busy;
    const int n = idle < max_threads ? idle : max_threads;
    return n < 1 ? 1 : n;
}

int threads_pin(int k, int n, ThreadPin *pin)
{
    pin->pinned = 0;
#ifdef __linux__
    _Static_assert(sizeof(cpu_set_t) <= sizeof pin->mask, "ThreadPin holds a cpu_set_t");
    cpu_set_t had, one;
    if (sched_getaffinity(0, sizeof had, &had) != 0 || n < 2 || k < 0 || k >= n || CPU_COUNT(&had) < n)
        return 0;
    int cpu = -1;
    for (int seen = -1; seen < k;) /* the k-th core of the set */
        seen += CPU_ISSET(++cpu, &had) != 0;
    CPU_ZERO(&one);
    CPU_SET(cpu, &one);
    if (sched_setaffinity(0, sizeof one, &one) != 0) /* 0: the calling thread */
        return 0;
    memcpy(pin->mask, &had, sizeof had);
    pin->pinned = 1;
#else
    (void)k, (void)n;
#endif
    return pin->pinned;
}

void threads_unpin(ThreadPin *pin)
{
#ifdef __linux__
    if (pin->pinned) {
        cpu_set_t had;
        memcpy(&had, pin->mask, sizeof had);
        sched_setaffinity(0, sizeof had, &had);
    }
#endif
    pin->pinned = 0;
}
