/* jsonfast.h — a quick reader for plain JSON that builds cJSON's own tree.
 *
 * cJSON reads a number by copying its text and calling strtod, and glibc's
 * strtod works through multi-precision arithmetic for every number with a
 * fraction: in a class-size input that is 15 of the load's 29 million
 * instructions, and a GPT-2 layer in JSON spends most of its load there.
 * cJSON offers no way to convert numbers differently, so this reader parses
 * the plain JSON that exporters write (json.dumps, mhaviz's own samples)
 * and builds exactly the tree cJSON_ParseWithLengthOpts would build for
 * it: the same nodes, links, strings and number values, to the bit.
 * Anything else it declines, and cJSON reads the text as before: every
 * error message and every unusual input stays cJSON's.
 *
 * It declines texts with
 *   - a backslash in a string (escapes: cJSON decodes them),
 *   - whitespace other than space, tab, newline and carriage return,
 *   - anything outside RFC 8259's grammar (cJSON also takes "01", "1.",
 *     "-.5", and reports the errors).
 * Numbers are exact: one whose digits, point removed, make an integer up
 * to 2^53 (any 15 digits) and whose power of ten is within 10^+-22 is one
 * multiplication or division of two doubles held exactly, which IEEE
 * arithmetic rounds correctly (Clinger's fast path), so the result is the
 * double strtod gives; any other number goes to strtod itself. Numbers
 * printed with the 9 digits a float32 needs ("%.9g") take the fast path
 * from about 1e-14 to 1e30. */
#ifndef MHAVIZ_JSONFAST_H
#define MHAVIZ_JSONFAST_H

#include <cjson/cJSON.h>
#include <stddef.h>

typedef enum {
    JSONFAST_OK,       /* *root is the tree */
    JSONFAST_DECLINED, /* not plain JSON as above: let cJSON parse it */
    JSONFAST_NOMEM,    /* an allocation failed */
} JsonFastStatus;

/* Parse text (len bytes; text[len] need not be readable) into *root. The
 * nodes and strings come from cJSON_malloc, so they follow the hooks set
 * with cJSON_InitHooks; free the tree with cJSON_Delete. On DECLINED and
 * NOMEM, *root is NULL and what was built is freed already. */
JsonFastStatus jsonfast_parse(const char *text, size_t len, cJSON **root);

#endif
