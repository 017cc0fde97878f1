/* syntax.h — explain a JSON syntax error in words a student can act on.
 *
 * cJSON stays the authority on what is valid JSON: these functions run only
 * after cJSON_ParseWithLengthOpts has refused a text, and look around the
 * offset where it stopped to name the usual hand-written mistakes (a trailing
 * comma, a missing comma, single quotes, Python's True/False/None, comments,
 * NaN/Infinity, unquoted keys, a truncated file). */
#ifndef MHAVIZ_SYNTAX_H
#define MHAVIZ_SYNTAX_H

#include <stddef.h>

/* 1-based line and column of byte offset off in text[0..len).
 * Columns count characters (UTF-8 sequences), not bytes; a tab is one. */
void syntax_line_col(const char *text, size_t len, size_t off, int *line, int *col);

/* text[0..len): the text cJSON refused; off: the byte offset cJSON's end
 * pointer gave (cJSON_ParseWithLengthOpts(text, len + 1, &end, 1), off =
 * end - text). Writes a one-line message without file name or position into
 * msg (msglen bytes, NUL-terminated; caller owns it) and returns the byte
 * offset of the mistake the message is about (len when the file ends early). */
size_t syntax_explain(const char *text, size_t len, size_t off, char *msg, size_t msglen);

#endif
