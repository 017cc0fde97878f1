/* format.h — numbers as the report and the pictures print them. */
#ifndef MHAVIZ_FORMAT_H
#define MHAVIZ_FORMAT_H

#include <stdint.h>

/* v with thousands separators into buf (at least 32 bytes): 16384 -> "16,384".
 * Returns buf. */
const char *format_grouped(char *buf, int64_t v);

#endif
