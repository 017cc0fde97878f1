/* format.h — numbers as the report and the pictures print them. */
#ifndef MHAVIZ_FORMAT_H
#define MHAVIZ_FORMAT_H

#include <stdint.h>

/* v with thousands separators into buf (at least 32 bytes): 16384 -> "16,384".
 * Returns buf. */
const char *format_grouped(char *buf, int64_t v);

/* v rounded to digits significant digits (1 to 15), written out in plain
 * decimals as a reader says it, never in exponent form: 5678.2 -> "5,680",
 * 0.00028113 -> "0.00028", 0.5 -> "0.5" (no trailing zeros); 0, infinities
 * and NaN as "0", "inf", "nan". buf: at least FORMAT_SIGNIFICANT_BYTES.
 * Returns buf. */
#define FORMAT_SIGNIFICANT_BYTES 64
const char *format_significant(char *buf, double v, int digits);

#endif
