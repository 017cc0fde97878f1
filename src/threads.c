/* threads.c — how many threads a run uses when -t does not say (see threads.h). */
#include "threads.h"

#include <stdio.h>

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
