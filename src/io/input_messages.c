/* input_messages.c — the loader's messages, each naming its place: the
 * key and index, or file:line:column; the text-level checks (NUL bytes,
 * nesting, UTF-8) and the keys (unknown ones, with a did-you-mean). */
#include "io/input_parts.h"
#include "core/status.h"
#include "io/syntax.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Loader state and messages                                                */

/* The longest file name a message prints: a longer one keeps its end (the
 * file's own name), so the message itself always fits. */
#define NAME_SHOWN 160

/* "..." when name is cut, and the part of name to print (at a UTF-8
 * character boundary). */
static const char *name_cut(const char *name)
{
    return strlen(name) > NAME_SHOWN ? "..." : "";
}
static const char *name_tail(const char *name)
{
    size_t n = strlen(name);
    if (n <= NAME_SHOWN)
        return name;
    const char *p = name + n - NAME_SHOWN;
    while ((*p & 0xC0) == 0x80) /* not in the middle of a character */
        p++;
    return p;
}

int input_fail(Loader *L, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(L->err, L->errlen, "%s%s: %s%s", name_cut(L->name), name_tail(L->name),
                     L->where ? L->where : "", L->where ? ": " : "");
    if (n < 0 || (size_t)n >= L->errlen)
        return MHAVIZ_EINPUT;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return MHAVIZ_EINPUT;
}

int input_fail_nomem(Loader *L)
{
    snprintf(L->err, L->errlen, "%s%s: out of memory while loading", name_cut(L->name), name_tail(L->name));
    return MHAVIZ_ENOMEM;
}

void input_warn(Loader *L, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n = snprintf(line, sizeof line, "warning: %s%s: %s%s", name_cut(L->name), name_tail(L->name),
                     L->where ? L->where : "", L->where ? ": " : "");
    va_start(ap, fmt);
    vsnprintf(line + n, sizeof line - (size_t)n - 1, fmt, ap);
    va_end(ap);
    size_t len = strlen(line);
    line[len++] = '\n';
    if (L->warn_len + len + 1 > L->warn_cap) {
        size_t cap = (L->warn_cap ? L->warn_cap * 2 : 1024) + len;
        char *p = realloc(L->warn, cap);
        if (!p) {
            L->nomem = 1;
            return;
        }
        L->warn = p;
        L->warn_cap = cap;
    }
    memcpy(L->warn + L->warn_len, line, len);
    L->warn_len += len;
    L->warn[L->warn_len] = '\0';
}

const char *input_type_name(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

size_t input_count_items(const cJSON *a)
{
    size_t n = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a)
        n++;
    return n;
}

/* ------------------------------------------------------------------------ */
/* Text-level checks: line:column, NUL bytes, nesting, UTF-8                 */

static int fail_at(Loader *L, const char *text, size_t len, size_t off, const char *fmt, ...)
{
    int line, col;
    char msg[384];
    va_list ap;
    syntax_line_col(text, len, off, &line, &col);
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(L->err, L->errlen, "%s%s:%d:%d: %s", name_cut(L->name), name_tail(L->name), line, col, msg);
    return MHAVIZ_EINPUT;
}

/* Characters of numbers and literals ("-1.5e+3", "true"): a value starts at
 * the first of a run of them. */
static const unsigned char WORD_CHAR[256] = {
    ['+'] = 1, ['-'] = 1, ['.'] = 1,
    ['0'] = 1, ['1'] = 1, ['2'] = 1, ['3'] = 1, ['4'] = 1,
    ['5'] = 1, ['6'] = 1, ['7'] = 1, ['8'] = 1, ['9'] = 1,
    ['A'] = 1, ['B'] = 1, ['C'] = 1, ['D'] = 1, ['E'] = 1, ['F'] = 1, ['G'] = 1, ['H'] = 1, ['I'] = 1,
    ['J'] = 1, ['K'] = 1, ['L'] = 1, ['M'] = 1, ['N'] = 1, ['O'] = 1, ['P'] = 1, ['Q'] = 1, ['R'] = 1,
    ['S'] = 1, ['T'] = 1, ['U'] = 1, ['V'] = 1, ['W'] = 1, ['X'] = 1, ['Y'] = 1, ['Z'] = 1,
    ['a'] = 1, ['b'] = 1, ['c'] = 1, ['d'] = 1, ['e'] = 1, ['f'] = 1, ['g'] = 1, ['h'] = 1, ['i'] = 1,
    ['j'] = 1, ['k'] = 1, ['l'] = 1, ['m'] = 1, ['n'] = 1, ['o'] = 1, ['p'] = 1, ['q'] = 1, ['r'] = 1,
    ['s'] = 1, ['t'] = 1, ['u'] = 1, ['v'] = 1, ['w'] = 1, ['x'] = 1, ['y'] = 1, ['z'] = 1,
};

/* What malloc(n) takes from memory: glibc adds an 8-byte header and rounds
 * to 16 bytes, 32 at the least. */
#define MALLOC_BYTES(n) ((n) + 8 <= 32 ? (size_t)32 : ((size_t)(n) + 8 + 15) / 16 * 16)

int input_scan_text(Loader *L, const char *text, size_t len, size_t *parse_bytes)
{
    const unsigned char *t = (const unsigned char *)text;
    int depth = 0;
    size_t values = 0, string_bytes = 0;
    for (size_t i = 0; i < len; i++) {
        if (WORD_CHAR[t[i]]) { /* a number or literal: one value, its characters at once */
            values++;
            while (i + 1 < len && WORD_CHAR[t[i + 1]])
                i++;
            continue;
        }
        switch (t[i]) {
        case '\0':
            return fail_at(L, text, len, i, "a NUL byte: this is not a JSON text file");
        case '"': { /* a string, to its closing quote */
            const size_t string_start = i;
            values++;
            for (i++; i < len; i++) {
                if (t[i] == '\0')
                    return fail_at(L, text, len, i, "a NUL byte: this is not a JSON text file");
                /* cJSON would decode \u0000 into a NUL and cut the string there. */
                if (t[i] == '\\' && len - i >= 6 && memcmp(text + i + 1, "u0000", 5) == 0)
                    return fail_at(L, text, len, i, "\\u0000 (a NUL character) in a string");
                if (t[i] == '\\' && i + 1 < len) {
                    i++; /* the escaped character */
                } else if (t[i] == '"') {
                    string_bytes += MALLOC_BYTES(i - string_start); /* its copy and a NUL */
                    break;
                }
            }
            break;
        }
        case '[':
        case '{':
            values++;
            if (++depth > MAX_NESTING)
                return fail_at(L, text, len, i,
                               "arrays and objects nested more than %d deep; an mhaviz input needs 4",
                               MAX_NESTING);
            break;
        case ']':
        case '}':
            depth--;
            break;
        default:
            break;
        }
    }
    *parse_bytes = len + values * MALLOC_BYTES(sizeof(cJSON)) + string_bytes;
    return MHAVIZ_OK;
}

int input_fail_syntax(Loader *L, const char *text, size_t len, size_t off)
{
    char msg[320];
    size_t at = syntax_explain(text, len, off, msg, sizeof msg);
    return fail_at(L, text, len, at, "%s", msg);
}

char *input_utf8_clean(const char *s, int *bad)
{
    size_t n = strlen(s);
    char *out = malloc(3 * n + 1), *o = out;
    *bad = 0;
    if (!out)
        return NULL;
    for (size_t i = 0; i < n;) {
        int k = utf8_decode((const unsigned char *)s + i, n - i, NULL);
        if (k > 0) {
            memcpy(o, s + i, (size_t)k);
            o += k;
            i += (size_t)k;
        } else {
            memcpy(o, "\xEF\xBF\xBD", 3);
            o += 3;
            i++;
            (*bad)++;
        }
    }
    *o = '\0';
    return out;
}

/* ------------------------------------------------------------------------ */
/* Keys: the known ones, duplicates, did-you-mean                           */

/* Edit distance, case differences costing nothing extra beyond 1. Short keys only. */
static int edit_distance(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    if (la > 31 || lb > 31)
        return 99;
    int d[32][32];
    for (size_t i = 0; i <= la; i++) d[i][0] = (int)i;
    for (size_t j = 0; j <= lb; j++) d[0][j] = (int)j;
    for (size_t i = 1; i <= la; i++)
        for (size_t j = 1; j <= lb; j++) {
            int sub = d[i - 1][j - 1] + (a[i - 1] != b[j - 1]);
            int del = d[i - 1][j] + 1, ins = d[i][j - 1] + 1;
            d[i][j] = sub < del ? (sub < ins ? sub : ins) : (del < ins ? del : ins);
        }
    return d[la][lb];
}

static int same_ignoring_case(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        char x = *a, y = *b;
        if (x >= 'A' && x <= 'Z') x = (char)(x - 'A' + 'a');
        if (y >= 'A' && y <= 'Z') y = (char)(y - 'A' + 'a');
        if (x != y)
            return 0;
    }
    return *a == *b;
}

/* The known key closest to s, or NULL when none is close. */
static const char *did_you_mean(const char *s, const char *const *known)
{
    const char *best = NULL;
    int best_d = 3;
    for (int i = 0; known[i]; i++) {
        if (same_ignoring_case(s, known[i]))
            return known[i];
        int d = edit_distance(s, known[i]);
        if (d < best_d && d < (int)strlen(known[i])) {
            best_d = d;
            best = known[i];
        }
    }
    return best;
}

/* Warn about unknown keys in obj; refuse keys given twice.
 * where: "" at the top level, "single_head." inside it. */
#define MAX_KEY_WARNINGS 10

int input_check_keys(Loader *L, const cJSON *obj, const char *const *known, const char *where)
{
    const cJSON *e;
    int unknown = 0;
    cJSON_ArrayForEach(e, obj) {
        const char *k = e->string;
        int is_known = 0;
        for (int i = 0; known[i]; i++)
            if (strcmp(k, known[i]) == 0)
                is_known = 1;
        if (is_known) {
            for (const cJSON *f = e->next; f; f = f->next)
                if (strcmp(f->string, k) == 0)
                    return input_fail(L, "%s%s: given twice; keep one", where, k);
            continue;
        }
        if (++unknown > MAX_KEY_WARNINGS)
            continue;
        int bad;
        char *shown = input_utf8_clean(k, &bad);
        if (!shown)
            return input_fail_nomem(L);
        size_t n = strlen(shown);
        if (n > 60) { /* a long key: cut at a character boundary */
            n = 57;
            while (n > 0 && ((unsigned char)shown[n] & 0xC0) == 0x80)
                n--;
            memcpy(shown + n, "...", 4);
        }
        const char *m = did_you_mean(k, known);
        if (m)
            input_warn(L, "unknown key \"%s%s\" ignored (did you mean \"%s%s\"?)", where, shown, where, m);
        else
            input_warn(L, "unknown key \"%s%s\" ignored", where, shown);
        free(shown);
    }
    if (unknown > MAX_KEY_WARNINGS)
        input_warn(L, "%d more unknown keys%s ignored", unknown - MAX_KEY_WARNINGS,
                   where[0] ? " in single_head" : "");
    return MHAVIZ_OK;
}
