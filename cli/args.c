/* args.c — usage errors and number options, shared by mhaviz and mhaviz init. */
#include "args.h"
#include "core/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void args_usage_error(const char *command, const char *fmt, const char *arg)
{
    fprintf(stderr, "%s: ", command);
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry '%s --help'.\n", command);
    exit(MHAVIZ_EUSAGE);
}

int args_parse_int(const char *command, const char *s, int lo, int hi, const char *option)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || errno || v < lo || v > hi) {
        char msg[160];
        snprintf(msg, sizeof msg, "%s wants a whole number from %d to %d, not '%%s'", option, lo, hi);
        args_usage_error(command, msg, s);
    }
    return (int)v;
}

int args_list_item(const char *item, size_t n, char sep, char *buf, size_t buflen)
{
    if (n == 0 || n >= buflen || item[0] == sep)
        return -1;
    for (size_t i = 0; i < n; i++)
        if ((item[i] < '0' || item[i] > '9') && item[i] != sep)
            return -1;
    memcpy(buf, item, n);
    buf[n] = '\0';
    return 0;
}
