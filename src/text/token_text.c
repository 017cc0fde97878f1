/* token_text.c — the one way a token is shown (token_text.h). */
#include "text/token_text.h"
#include "text/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <string.h>

char *token_text(char *buf, size_t n, const char *tok)
{
    if (!*tok) {
        snprintf(buf, n, "\"\"");
        return buf;
    }
    const int only_space = strspn(tok, " \t\n\r\v\f") == strlen(tok); /* white space only: show its spaces */
    size_t k = 0;
    const unsigned char *p = (const unsigned char *)tok;
    while (*p) {
        char piece[8];
        int len = utf8_decode(p, SIZE_MAX, NULL), step = len;
        const char *esc = *p == '\n' ? "\\n" : *p == '\t' ? "\\t" : *p == '\r' ? "\\r" : *p == '\v' ? "\\v"
                        : *p == '\f' ? "\\f" : NULL;
        if (esc)
            snprintf(piece, sizeof piece, "%s", esc);
        else if (len == 0) /* not UTF-8: the replacement character */
            snprintf(piece, sizeof piece, "\xef\xbf\xbd"), step = 1;
        else if (*p < 0x20 || *p == 0x7F)
            snprintf(piece, sizeof piece, "\\x%02X", *p);
        else if (*p == ' ' && only_space)
            snprintf(piece, sizeof piece, "\xe2\x90\xa3");
        else
            snprintf(piece, sizeof piece, "%.*s", len, (const char *)p);
        const size_t m = strlen(piece);
        if (k + m + 4 > n) { /* room for "…" and the NUL */
            memcpy(buf + k, "\xe2\x80\xa6", 4);
            return buf;
        }
        memcpy(buf + k, piece, m);
        k += m;
        p += step;
    }
    buf[k] = '\0';
    return buf;
}
