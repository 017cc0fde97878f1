/* format.c — numbers as the report and the pictures print them. */
#include "text/format.h"

#include <inttypes.h>
#include <stdio.h>

const char *format_grouped(char *buf, int64_t v)
{
    char digits[32];
    int n = snprintf(digits, sizeof digits, "%" PRId64, v < 0 ? -v : v), k = 0;
    if (v < 0)
        buf[k++] = '-';
    for (int i = 0; i < n; i++) {
        if (i > 0 && (n - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
    return buf;
}
