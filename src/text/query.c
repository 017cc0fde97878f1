/* query.c — which token a --query argument names (see query.h). */
#include "text/query.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int query_find(const char *arg, char *const *tokens, int T, char *err, size_t errlen)
{
    char *end;
    errno = 0;
    long v = strtol(arg, &end, 10);
    if (end != arg && *end == '\0') { /* a whole number: an index */
        if (!errno && v >= 0 && v < T)
            return (int)v;
        snprintf(err, errlen, "--query %s: out of range, the sentence has %d tokens (0 to %d)", arg, T,
                 T - 1);
        return -1;
    }
    for (int i = T - 1; i >= 0; i--)
        if (strcmp(tokens[i], arg) == 0)
            return i;
    snprintf(err, errlen, "--query '%s': no token '%s' in the sentence (give its text exactly, or its "
             "index from 0 to %d)", arg, arg, T - 1);
    return -1;
}
