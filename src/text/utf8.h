/* utf8.h — reading UTF-8 text one character at a time. */
#ifndef MHAVIZ_UTF8_H
#define MHAVIZ_UTF8_H

#include <stddef.h>

/* Length (1..4) of the valid UTF-8 sequence at s, reading at most n bytes,
 * with its code point in *cp (when cp is not NULL); 0 when the bytes there
 * are not valid UTF-8 (a stray or missing continuation byte, an overlong
 * form, a UTF-16 surrogate, beyond U+10FFFF). On NUL-terminated text n may
 * be SIZE_MAX: the NUL ends any sequence before it is read past. */
int utf8_decode(const unsigned char *s, size_t n, unsigned *cp);

#endif
