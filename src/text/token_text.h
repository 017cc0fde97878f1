/* token_text.h — a token as the pictures and report.txt show it: one rule.
 *
 * A token may hold anything a JSON string holds. Shown as is, except:
 * the empty token is "" (two quotes); a newline, tab, carriage return,
 * vertical tab and form feed are \n, \t, \r, \v, \f; any other control
 * byte is \xHH; a byte that is not UTF-8 is U+FFFD; a token of white space
 * only shows each space as U+2423 (a visible space). So no token breaks a line
 * or hides: report.txt holds no control byte, whatever the tokens. */
#ifndef MHAVIZ_TOKEN_TEXT_H
#define MHAVIZ_TOKEN_TEXT_H

#include <stddef.h>

/* tok as shown, into buf (n bytes, at least 8), cut at a code point with
 * "…" when it does not fit. Returns buf. */
char *token_text(char *buf, size_t n, const char *tok);

#endif
