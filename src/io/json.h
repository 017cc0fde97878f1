/* json.h — the one way mhaviz writes JSON's strings and numbers (report.json,
 * the inputs `mhaviz init` writes); cJSON reads them. */
#ifndef MHAVIZ_JSON_H
#define MHAVIZ_JSON_H

#include <stdio.h>

/* s as a JSON string: quotes, backslashes and control characters escaped
 * (\n, \t, \r, else \u00XX), bytes that are not UTF-8 replaced by U+FFFD;
 * the rest, UTF-8, as it is. */
void json_string(FILE *f, const char *s);

/* x with "%.9g" (a float32 reads back to the same bits), or null for NAN
 * and the infinities JSON cannot hold. */
void json_number(FILE *f, double x);

#endif
