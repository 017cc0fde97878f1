/* report_txt.h — report.txt's sentences about one map, which the page
 * says too. */
#ifndef MHAVIZ_REPORT_TXT_H
#define MHAVIZ_REPORT_TXT_H

#include "core/measures.h"

#include <stddef.h>

/* The report's sentence about map m into line (len bytes): what it does,
 * true for the numbers behind it ("head 0 looks at the previous token: 100%
 * of its attention on average ..."). who is "head 2" or "the wide head";
 * tokens (T) name the keys. */
void report_sentence(char *line, size_t len, const char *who, const MapMeasures *m, char *const *tokens, int T);

/* Role r in words, for any map ("looks at the previous token", "has no
 * clear role (mixed)"), into buf (n bytes; 96 hold any). Returns buf. */
const char *report_role_words(char *buf, size_t n, MeasuresRole r);

#endif
