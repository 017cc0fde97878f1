/* head_list.c — --ablate's value: heads as LAYER.HEAD, in a list. */
#include "head_list.h"
#include "args.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* item ("5.1", n bytes) as *layer and *head; -1 when it is not LAYER.HEAD. */
static int parse_item(const char *item, size_t n, long *layer, long *head)
{
    char buf[24], *end;
    if (args_list_item(item, n, '.', buf, sizeof buf) != 0)
        return -1;
    *layer = strtol(buf, &end, 10);
    if (end[0] != '.' || end[1] < '0' || end[1] > '9')
        return -1;
    *head = strtol(end + 1, &end, 10);
    return *end == '\0' ? 0 : -1;
}

int head_list_parse(const char *spec, int n_layers, int n_heads, const char *model, unsigned char *off, char *err,
                    size_t errlen)
{
    memset(off, 0, (size_t)n_layers * n_heads);
    for (const char *p = spec;; p++) {
        const size_t len = strcspn(p, ",");
        const int shown = (int)(len < 32 ? len : 32);
        long l, h;
        if (parse_item(p, len, &l, &h) != 0) {
            snprintf(err, errlen, "--ablate %s: '%.*s' is not a head (LAYER.HEAD counted from 0, such as 5.1; "
                     "several: 0.3,5.1)", spec, shown, p);
            return -1;
        }
        if (l >= n_layers) {
            snprintf(err, errlen, "--ablate %s: '%.*s': layer %ld is not in the model (%s has %d layers, 0 to %d)",
                     spec, shown, p, l, model, n_layers, n_layers - 1);
            return -1;
        }
        if (h >= n_heads) {
            snprintf(err, errlen, "--ablate %s: '%.*s': head %ld is not in the model (%s has %d heads in each "
                     "layer, 0 to %d)", spec, shown, p, h, model, n_heads, n_heads - 1);
            return -1;
        }
        if (off[l * n_heads + h]) {
            snprintf(err, errlen, "--ablate %s lists head %ld.%ld twice", spec, l, h);
            return -1;
        }
        off[l * n_heads + h] = 1;
        p += len;
        if (!*p)
            return 0;
    }
}
