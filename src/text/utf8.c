/* utf8.c — one UTF-8 decoder for the loader, the renderer and the report. */
#include "text/utf8.h"

int utf8_decode(const unsigned char *s, size_t n, unsigned *cp)
{
    unsigned c = s[0], code;
    int len;
    if (c < 0x80) {
        if (cp)
            *cp = c;
        return 1;
    }
    if (c >= 0xC2 && c <= 0xDF) { len = 2; code = c & 0x1F; }
    else if (c >= 0xE0 && c <= 0xEF) { len = 3; code = c & 0x0F; }
    else if (c >= 0xF0 && c <= 0xF4) { len = 4; code = c & 0x07; }
    else return 0;
    if ((size_t)len > n)
        return 0;
    for (int i = 1; i < len; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0; /* also stops at a NUL before reading further */
        code = (code << 6) | (s[i] & 0x3F);
    }
    if ((len == 3 && code < 0x800) || (len == 4 && (code < 0x10000 || code > 0x10FFFF)))
        return 0; /* overlong or beyond Unicode */
    if (code >= 0xD800 && code <= 0xDFFF)
        return 0; /* UTF-16 surrogate */
    if (cp)
        *cp = code;
    return len;
}
