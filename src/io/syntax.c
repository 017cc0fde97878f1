/* syntax.c — name the mistake behind a JSON syntax error.
 *
 * cJSON has already refused the text; it tells us only the byte offset where
 * it stopped. That offset is at the offending character, after white space,
 * with two exceptions that come from how cJSON reads a string: when a string
 * (or an object key) fails, the offset is one past the character where the
 * string began. So syntax_explain does three things in order:
 *   1. stopped inside a string?  -> the string's own trouble (never closed,
 *      a bad escape);
 *   2. stopped one past the place of an object key?  -> what stands there
 *      instead of a key in double quotes;
 *   3. otherwise the character where cJSON stopped, read in its context:
 *      a value was expected (after '[', ':' or an array's ','), or a ','
 *      or a closing bracket was (after a value), or nothing (after the
 *      top-level value), or the file simply ended.
 * The context comes from scan_to, which walks the text up to a given offset
 * keeping the open brackets and the last character outside strings. That
 * text is the part cJSON accepted, so the walk can be this simple. */
#include "io/syntax.h"

#include <stdarg.h>
#include <stdio.h>
#include <string.h>

void syntax_line_col(const char *text, size_t len, size_t off, int *line, int *col)
{
    int l = 1, c = 1;
    if (off > len)
        off = len;
    for (size_t i = 0; i < off; i++) {
        unsigned char ch = (unsigned char)text[i];
        if (ch == '\n') {
            l++;
            c = 1;
        } else if ((ch & 0xC0) != 0x80) { /* count characters, not UTF-8 continuation bytes */
            c++;
        }
    }
    *line = l;
    *col = c;
}

/* ------------------------------------------------------------------------ */
/* The context of an offset                                                 */

#define SCAN_DEPTH 64 /* brackets remembered; the loader refuses nesting over 32 anyway */

typedef struct {
    int depth;                  /* open arrays and objects */
    char open[SCAN_DEPTH];      /* (depth) '[' or '{', outermost first */
    size_t open_at[SCAN_DEPTH]; /* (depth) offset of each open bracket */
    int in_string;              /* the offset is inside a string ... */
    size_t string_at;           /* ... that starts at this '"' */
    int has_last;               /* something outside strings came before: */
    size_t last;                /* the offset of its last character */
    int last_is_key;            /* that was the closing '"' of an object key */
    size_t key_at;              /* where that key starts */
} Scan;

static int is_ws(char ch)
{
    return ch == ' ' || ch == '\t' || ch == '\n' || ch == '\r';
}

/* The innermost open bracket, or 0 at the top level. */
static char innermost(const Scan *s)
{
    return s->depth > 0 && s->depth <= SCAN_DEPTH ? s->open[s->depth - 1] : 0;
}

/* The context just before offset stop (text[stop] itself is not read). */
static void scan_to(const char *text, size_t stop, Scan *s)
{
    int key = 0; /* the string being read is an object key */
    memset(s, 0, sizeof *s);
    for (size_t i = 0; i < stop; i++) {
        char ch = text[i];
        if (s->in_string) {
            if (ch == '\\') {
                i++; /* the escaped character cannot end the string */
            } else if (ch == '"') {
                s->in_string = 0;
                s->has_last = 1;
                s->last = i;
                s->last_is_key = key;
                s->key_at = s->string_at;
            }
            continue;
        }
        if (is_ws(ch))
            continue;
        if (ch == '"') {
            /* a string right after '{' or an object's ',' is a key */
            key = innermost(s) == '{' && s->has_last && (text[s->last] == '{' || text[s->last] == ',');
            s->in_string = 1;
            s->string_at = i;
            continue;
        }
        if (ch == '{' || ch == '[') {
            if (s->depth < SCAN_DEPTH) {
                s->open[s->depth] = ch;
                s->open_at[s->depth] = i;
            }
            s->depth++;
        } else if ((ch == '}' || ch == ']') && s->depth > 0) {
            s->depth--;
        }
        s->has_last = 1;
        s->last = i;
        s->last_is_key = 0;
    }
}

/* ------------------------------------------------------------------------ */
/* Small readers                                                            */

typedef struct {
    const char *text;
    size_t len;
    char *msg;
    size_t msglen;
} Out;

/* Write the message; returns off, the place it is about. */
static size_t say(const Out *o, size_t off, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(o->msg, o->msglen, fmt, ap);
    va_end(ap);
    return off;
}

static size_t skip_ws(const char *text, size_t len, size_t i)
{
    while (i < len && is_ws(text[i]))
        i++;
    return i;
}

/* "L:C" of an offset, for messages that point at a second place. */
static const char *place(const Out *o, size_t off, char buf[32])
{
    int line, col;
    syntax_line_col(o->text, o->len, off, &line, &col);
    snprintf(buf, 32, "%d:%d", line, col);
    return buf;
}

/* A "//" or "/ *" comment starts at i. */
static int is_comment(const Out *o, size_t i)
{
    return i + 1 < o->len && o->text[i] == '/' && (o->text[i + 1] == '/' || o->text[i + 1] == '*');
}

static int is_word_char(char ch)
{
    return (ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
           ch == '_' || (unsigned char)ch >= 0x80;
}

/* n, less the bytes of a UTF-8 character cut short at the end of buf[0..n). */
static size_t whole_chars(const char *buf, size_t n)
{
    size_t start = n;
    while (start > 0 && ((unsigned char)buf[start - 1] & 0xC0) == 0x80) /* back over continuation bytes */
        start--;
    if (start == 0)
        return n;
    unsigned char lead = (unsigned char)buf[start - 1];
    size_t need = lead >= 0xF0 ? 4 : lead >= 0xE0 ? 3 : lead >= 0xC0 ? 2 : 1;
    return n - (start - 1) < need ? start - 1 : n;
}

/* Copy the bare word at i (letters, digits, '_', non-ASCII characters; a
 * leading '-' or '+' kept) into w, at most wlen - 1 bytes, never cutting a
 * UTF-8 character. Returns its length (0: no word at i). */
static size_t word_at(const Out *o, size_t i, char *w, size_t wlen)
{
    size_t n = 0, j = i;
    if (j < o->len && (o->text[j] == '-' || o->text[j] == '+'))
        w[n++] = o->text[j++];
    if (j >= o->len || !is_word_char(o->text[j]))
        n = 0;
    else
        while (j < o->len && is_word_char(o->text[j]) && n < wlen - 1)
            w[n++] = o->text[j++];
    n = whole_chars(w, n);
    w[n] = '\0';
    return n;
}

static int same_word(const char *a, const char *b)
{
    for (; *a && *b; a++, b++)
        if ((*a | 0x20) != (*b | 0x20)) /* ASCII letters, any case */
            return 0;
    return *a == *b;
}

/* The fallback: a short excerpt of the text from i, on one line. */
static size_t near(const Out *o, size_t i)
{
    char ex[24];
    size_t n = 0;
    for (size_t j = i; j < o->len && n < sizeof ex - 1 && o->text[j] != '\n' && o->text[j] != '\r'; j++)
        ex[n++] = o->text[j];
    n = whole_chars(ex, n);
    ex[n] = '\0';
    return say(o, i, "JSON syntax error near '%s'", ex);
}

/* ------------------------------------------------------------------------ */
/* The mistakes                                                             */

static size_t comment(const Out *o, size_t i)
{
    return say(o, i, "comments are not allowed in JSON: remove it (a note can go in a top-level \"comment\" key)");
}

static size_t trailing_comma(const Out *o, size_t comma)
{
    return say(o, comma, "trailing comma after the last item (JSON allows none): remove it");
}

static size_t single_quotes(const Out *o, size_t i)
{
    return say(o, i, "strings and keys need double quotes, not single");
}

/* '}' where ']' belongs, or the other way round. */
static size_t wrong_bracket(const Out *o, const Scan *s, size_t i)
{
    char at[32];
    char opened = innermost(s);
    if (!opened)
        return near(o, i);
    return say(o, i, "'%c' does not close the '%c' opened at %s: expected '%c'", o->text[i], opened,
               place(o, s->open_at[s->depth - 1], at), opened == '[' ? ']' : '}');
}

/* What a missing value and a missing key have in common: where what
 * ("value" or "key") was due at i, a comment, a ',' right before the
 * bracket close that ends the list, a second ',', or single quotes.
 * Returns 1 with the message written and *at the place it is about when
 * one of them stands at i, else 0. */
static int item_mistake(const Out *o, const Scan *s, size_t i, const char *what, char close, size_t *at)
{
    const char c = o->text[i];
    const char before = s->has_last ? o->text[s->last] : 0;
    if (is_comment(o, i))
        *at = comment(o, i);
    else if (c == close && before == ',')
        *at = trailing_comma(o, s->last);
    else if (c == ',')
        *at = before == ',' ? say(o, i, "two commas in a row: remove one")
                            : say(o, i, "a %s is missing before this ','", what);
    else if (c == '\'')
        *at = single_quotes(o, i);
    else
        return 0;
    return 1;
}

/* A value was expected at i (after '[', ':', or a ',' in an array). */
static size_t bad_value(const Out *o, const Scan *s, size_t i)
{
    const char c = o->text[i];
    const char before = s->has_last ? o->text[s->last] : 0;
    char w[32];
    size_t at;
    if (item_mistake(o, s, i, "value", ']', &at))
        return at;
    if ((c == '}' || c == ']') && before == ':')
        return say(o, i, "missing value after ':'");
    if ((c == '}' && innermost(s) == '[') || (c == ']' && innermost(s) == '{'))
        return wrong_bracket(o, s, i);
    if (c == '+' && i + 1 < o->len && o->text[i + 1] >= '0' && o->text[i + 1] <= '9')
        return say(o, i, "a JSON number cannot start with '+': remove it");
    if (c == '.' && i + 1 < o->len && o->text[i + 1] >= '0' && o->text[i + 1] <= '9')
        return say(o, i, "a JSON number cannot start with '.': put a 0 before it");
    if (word_at(o, i, w, sizeof w)) {
        const char *bare = w + (w[0] == '-' || w[0] == '+');
        if (strcmp(w, "True") == 0 || strcmp(w, "False") == 0 || strcmp(w, "None") == 0)
            return say(o, i, "'%s' is Python; JSON writes %s", w,
                       w[0] == 'T' ? "true" : w[0] == 'F' ? "false" : "null");
        if (same_word(bare, "nan") || same_word(bare, "inf") || same_word(bare, "infinity"))
            return say(o, i, "%s is not a JSON number (JSON has no NaN or Infinity; mhaviz needs finite numbers)", w);
        if (w[0] != '-' && w[0] != '+' && !(w[0] >= '0' && w[0] <= '9'))
            return say(o, i, "'%s' is not a JSON value: text needs double quotes (\"%s\"); "
                             "JSON's only bare words are true, false and null", w, w);
    }
    return near(o, i);
}

/* An object key was expected at i (after '{' or an object's ','). */
static size_t bad_key(const Out *o, const Scan *s, size_t i)
{
    char w[32];
    size_t at;
    if (item_mistake(o, s, i, "key", '}', &at))
        return at;
    if (o->text[i] == ']')
        return wrong_bracket(o, s, i);
    if (word_at(o, i, w, sizeof w) && w[0] != '-' && w[0] != '+')
        return say(o, i, "keys must be strings in double quotes: write \"%s\"", w);
    return near(o, i);
}

/* A value has just ended at s->last; at i there is neither ',' nor the
 * closing bracket (nor, for a key, the ':'). */
static size_t after_value(const Out *o, const Scan *s, size_t i)
{
    const char c = o->text[i];
    char at[32];
    if (is_comment(o, i))
        return comment(o, i);
    if (s->depth == 0) /* the top-level value is complete */
        return say(o, i, "more text after the end of the JSON (its last '%c' is at %s): remove it",
                   o->text[s->last], place(o, s->last, at));
    if (s->last_is_key) {
        int klen = (int)(s->last - s->key_at - 1);
        return say(o, s->last + 1, "missing ':' after the key \"%.*s\"", klen > 40 ? 40 : klen,
                   o->text + s->key_at + 1);
    }
    if (c == '}' || c == ']')
        return wrong_bracket(o, s, i);
    if (s->last + 1 == i && is_word_char(o->text[s->last]) && (is_word_char(c) || c == '.')) {
        /* no space between: one malformed word such as 0x1F, 1.2.3 or truex */
        size_t start = s->last, n = 0;
        char w[32];
        while (start > 0 && (is_word_char(o->text[start - 1]) || strchr("+-.", o->text[start - 1])))
            start--;
        for (size_t j = start; j < o->len && n < sizeof w - 1 &&
                               (is_word_char(o->text[j]) || strchr("+-.", o->text[j])); j++)
            w[n++] = o->text[j];
        w[whole_chars(w, n)] = '\0';
        if ((w[0] >= '0' && w[0] <= '9') || w[0] == '-')
            return say(o, start, "'%s' is not a JSON number (JSON numbers are decimal, like -1.5e-3)", w);
        return say(o, start, "'%s' is not a JSON value (JSON's only bare words are true, false and null)", w);
    }
    if (c == '"' || c == '\'' || c == '{' || c == '[' || c == '-' || is_word_char(c)) {
        int line_prev, line_next, col;
        syntax_line_col(o->text, o->len, s->last, &line_prev, &col);
        syntax_line_col(o->text, o->len, i, &line_next, &col);
        if (line_next != line_prev)
            return say(o, s->last + 1, "missing ',' between items (after line %d, before line %d)", line_prev,
                       line_next);
        return say(o, s->last + 1, "missing ',' between items");
    }
    return near(o, i);
}

/* cJSON stopped inside the string that starts at q: find what is wrong in it. */
static size_t bad_string(const Out *o, size_t q, size_t off)
{
    const char *t = o->text;
    for (size_t i = q + 1; i < o->len; i++) {
        if (t[i] == '"')
            return near(o, off); /* it closes: not a trouble this reader knows */
        if (t[i] != '\\')
            continue;
        if (i + 1 < o->len && strchr("\"\\/bfnrt", t[i + 1]) && t[i + 1] != '\0') {
            i++;
            continue;
        }
        if (i + 1 < o->len && t[i + 1] == 'u') {
            unsigned v = 0;
            int k = 0;
            for (; k < 4 && i + 2 + k < o->len; k++) {
                char h = t[i + 2 + k];
                int d = h >= '0' && h <= '9' ? h - '0' : h >= 'a' && h <= 'f' ? h - 'a' + 10
                      : h >= 'A' && h <= 'F' ? h - 'A' + 10 : -1;
                if (d < 0)
                    break;
                v = v * 16 + (unsigned)d;
            }
            if (k < 4)
                return say(o, i, "'\\u' in a string needs 4 hex digits after it");
            /* U+D800..U+DFFF come in pairs (high, low) in JSON's \u escapes */
            int low_follows = i + 11 < o->len && t[i + 6] == '\\' && t[i + 7] == 'u' &&
                              (t[i + 8] == 'd' || t[i + 8] == 'D') && strchr("cdefCDEF", t[i + 9]);
            if ((v >= 0xDC00 && v <= 0xDFFF) || (v >= 0xD800 && v <= 0xDBFF && !low_follows))
                return say(o, i, "'\\u%.4s' is half of a UTF-16 surrogate pair: write the character "
                                 "itself (the file is UTF-8)", t + i + 2);
            i += 5;
            continue;
        }
        if (i + 1 >= o->len)
            break;
        return say(o, i, "'\\%c' is not a JSON escape (JSON has \\\" \\\\ \\/ \\b \\f \\n \\r \\t \\uXXXX; "
                         "a backslash itself is \\\\)", t[i + 1]);
    }
    return say(o, q, "this string never ends: the file ends inside it (truncated file, or a missing "
                     "closing '\"')");
}

/* The file ended where more JSON was needed. */
static size_t ends_early(const Out *o, const Scan *s)
{
    char at[32];
    if (!s->has_last)
        return say(o, o->len, "the file holds no JSON value, only white space");
    if (s->depth > 0 && s->depth <= SCAN_DEPTH)
        return say(o, o->len, "the file ends in the middle of the JSON (truncated file?): "
                              "the '%c' opened at %s is not closed", innermost(s),
                   place(o, s->open_at[s->depth - 1], at));
    return say(o, o->len, "the file ends in the middle of the JSON (truncated file?)");
}

size_t syntax_explain(const char *text, size_t len, size_t off, char *msg, size_t msglen)
{
    Out o = {text, len, msg, msglen};
    Scan s;
    if (off > len)
        off = len;

    /* 1. Inside a string: cJSON's offset is one past its opening '"'. */
    scan_to(text, off, &s);
    if (s.in_string)
        return bad_string(&o, s.string_at, off);

    /* 2. A key was due at off - 1 (right after '{' or an object's ','),
     *    but no '"' stands there: cJSON's offset is one past it. */
    if (off > 0 && !is_ws(text[off - 1])) {
        scan_to(text, off - 1, &s);
        if (!s.in_string && innermost(&s) == '{' && s.has_last &&
            (text[s.last] == '{' || text[s.last] == ','))
            return bad_key(&o, &s, off - 1);
    }

    /* 3. Elsewhere cJSON stops at the offending character, after white space. */
    size_t i = skip_ws(text, len, off);
    scan_to(text, i, &s);
    if (i >= len)
        return ends_early(&o, &s);
    const char before = s.has_last ? text[s.last] : 0;
    if (!s.has_last || before == '[' || before == ':' || (before == ',' && innermost(&s) == '['))
        return bad_value(&o, &s, i);
    if (before == '{' || before == ',')
        return bad_key(&o, &s, i);
    return after_value(&o, &s, i);
}
