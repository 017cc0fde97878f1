/* chance_words.c — chance's ranges in words. */
#include "text/chance_words.h"

const char *chance_span(const ChanceRange *r)
{
    return r->n >= CHANCE_TAIL ? "95%" : "smallest to largest";
}

const char *chance_words(int side)
{
    return side < 0 ? "fewer than chance gives" : side > 0 ? "more than chance gives" : "within what chance gives";
}
