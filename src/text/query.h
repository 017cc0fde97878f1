/* query.h — which token a --query argument names. */
#ifndef MHAVIZ_QUERY_H
#define MHAVIZ_QUERY_H

#include <stddef.h>

/* The query a --query argument names among tokens (T): a whole number is
 * an index, anything else the last token with exactly that text. Returns
 * the index, or -1 with err naming the value ("--query 12: out of range,
 * the sentence has 11 tokens (0 to 10)"; "--query 'cat': no token 'cat'
 * in the sentence"). */
int query_find(const char *arg, char *const *tokens, int T, char *err, size_t errlen);

#endif
