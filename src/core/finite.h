/* finite.h — finding the first number of an array that is not finite, and
 * the first of a forward pass. */
#ifndef MHAVIZ_FINITE_H
#define MHAVIZ_FINITE_H

#include "core/mha.h"

#include <stddef.h>

/* The index of the first of the n floats of m that is infinite or not a
 * number, or n when all are finite. */
size_t finite_first_bad(const float *m, size_t n);

/* MHAVIZ_OK when every number the forward pass left in s is finite. Else
 * MHAVIZ_EINPUT and err names the first overflow in the order the steps run,
 * e.g. "the heads: the numbers overflow float32: the attention of head 0,
 * query 2, key 0 (its scores q.k overflowed) is not a number; scale the
 * weights or the inputs down". what names the pass in the message. Finite
 * inputs can still overflow: a float holds at most about 3.4e38. */
int finite_check_pass(const MhaConfig *c, const MhaState *s, const char *what, char *err,
                      size_t errlen);

#endif
