/* chance_words.h — where a number falls against chance's range, in the
 * report's words (core/chance.h has the numbers). */
#ifndef MHAVIZ_CHANCE_WORDS_H
#define MHAVIZ_CHANCE_WORDS_H

#include "core/chance.h"

/* The words of a side: "fewer than chance gives", "within what chance
 * gives", "more than chance gives". */
const char *chance_words(int side);

/* What range r spans, in words: "95%" (from CHANCE_TAIL values on) or
 * "smallest to largest". */
const char *chance_span(const ChanceRange *r);

#endif
