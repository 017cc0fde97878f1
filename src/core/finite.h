/* finite.h — finding the first number of an array that is not finite. */
#ifndef MHAVIZ_FINITE_H
#define MHAVIZ_FINITE_H

#include <stddef.h>

/* The index of the first of the n floats of m that is infinite or not a
 * number, or n when all are finite. */
size_t finite_first_bad(const float *m, size_t n);

#endif
