/* format.c — numbers as the report and the pictures print them. */
#include "text/format.h"

#include <inttypes.h>
#include <math.h>
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

const char *format_significant(char *buf, double v, int digits)
{
    if (v == 0 || !isfinite(v)) {
        snprintf(buf, FORMAT_SIGNIFICANT_BYTES, "%g", v == 0 ? 0.0 : v);
        return buf;
    }
    /* v = m x 10^e with 1 <= |m| < 10: digits - 1 - e decimals */
    int decimals = digits - 1 - (int)floor(log10(fabs(v)));
    if (decimals > FORMAT_SIGNIFICANT_BYTES - 8)
        decimals = FORMAT_SIGNIFICANT_BYTES - 8; /* what fits: smaller values read as 0 */
    if (decimals <= 0) {
        const double unit = pow(10.0, -decimals), r = round(v / unit) * unit;
        if (fabs(r) < 9e18)
            return format_grouped(buf, (int64_t)r);
        snprintf(buf, FORMAT_SIGNIFICANT_BYTES, "%.0f", r);
        return buf;
    }
    int n = snprintf(buf, FORMAT_SIGNIFICANT_BYTES, "%.*f", decimals, v);
    while (n > 1 && buf[n - 1] == '0') /* 0.50 -> 0.5 */
        buf[--n] = '\0';
    if (buf[n - 1] == '.')
        buf[n - 1] = '\0';
    return buf;
}
