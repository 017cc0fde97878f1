/* layer_list.c — --layer's value: layers, ranges and lists of them. */
#include "layer_list.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* item ("7" or "3-6", n bytes) as the range lo..hi; -1 when it is neither. */
static int parse_item(const char *item, size_t n, long *lo, long *hi)
{
    char buf[24], *end;
    if (args_list_item(item, n, '-', buf, sizeof buf) != 0)
        return -1;
    *lo = strtol(buf, &end, 10);
    *hi = *lo;
    if (*end == '-' && end[1] >= '0' && end[1] <= '9')
        *hi = strtol(end + 1, &end, 10);
    return *end == '\0' ? 0 : -1;
}

int layer_list_parse(const char *spec, int n_model, const char *model, const char *field, int *layers, int *n,
                     char *err, size_t errlen)
{
    *n = 0;
    if (!spec) {
        for (int l = 0; l < n_model; l++)
            layers[(*n)++] = l;
        return 0;
    }
    char *seen = calloc((size_t)n_model, 1); /* (n_model) 1: listed */
    if (!seen) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int rc = 0;
    for (const char *p = spec; rc == 0; p++) {
        const size_t len = strcspn(p, ",");
        long lo, hi;
        if (parse_item(p, len, &lo, &hi) != 0) {
            snprintf(err, errlen, "--layer %s: '%.*s' is not a layer (from 0), a range such as 3-6 or a list "
                     "such as 0,5,11", spec, (int)(len < 32 ? len : 32), p);
            rc = -1;
        } else if (lo > hi) {
            snprintf(err, errlen, "--layer %s: the range %ld-%ld is reversed (the lower layer first: %ld-%ld)",
                     spec, lo, hi, hi, lo);
            rc = -1;
        } else if (hi >= n_model) {
            snprintf(err, errlen, "--layer %s: %s has %d layers (%s); give --layer 0 to %d",
                     spec, model, n_model, field, n_model - 1);
            rc = -1;
        }
        for (long l = lo; rc == 0 && l <= hi; l++) {
            if (seen[l]) {
                snprintf(err, errlen, "--layer %s lists layer %ld twice", spec, l);
                rc = -1;
            }
            seen[l] = 1;
        }
        p += len;
        if (!*p)
            break;
    }
    for (int l = 0; rc == 0 && l < n_model; l++)
        if (seen[l])
            layers[(*n)++] = l;
    free(seen);
    return rc;
}
