/* jsonfast.c — plain JSON into cJSON's own tree, numbers the quick exact
 * way (see jsonfast.h). Each function below builds what the cJSON function
 * of the same role builds (parse_value, parse_array, parse_object,
 * parse_string, parse_number in cJSON.c), for the inputs it accepts. */
#include "jsonfast.h"

#include <float.h>
#include <limits.h>
#include <locale.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *p, *end;   /* the next character; the end of the text */
    int depth;             /* arrays and objects open around p */
    JsonFastStatus status; /* DECLINED or NOMEM once something failed */
} Reader;

/* Give up on this text; returns NULL for the caller to pass on. */
static void *decline(Reader *r)
{
    if (r->status == JSONFAST_OK)
        r->status = JSONFAST_DECLINED;
    return NULL;
}

static void skip_space(Reader *r)
{
    while (r->p < r->end && (*r->p == ' ' || *r->p == '\n' || *r->p == '\r' || *r->p == '\t'))
        r->p++;
}

static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

/* A zeroed node of the given type, as cJSON_New_Item makes it. */
static cJSON *new_node(Reader *r, int type)
{
    cJSON *n = cJSON_malloc(sizeof *n);
    if (!n) {
        r->status = JSONFAST_NOMEM;
        return NULL;
    }
    memset(n, 0, sizeof *n);
    n->type = type;
    return n;
}

/* The string whose opening quote is at r->p, copied as it stands (without
 * escapes, cJSON's copy is the bytes between the quotes). */
static char *read_string(Reader *r)
{
    const char *s = r->p + 1, *q = s;
    while (q < r->end && *q != '"') {
        if (*q == '\\')
            return decline(r);
        q++;
    }
    if (q == r->end)
        return decline(r); /* no closing quote */
    const size_t n = (size_t)(q - s);
    char *copy = cJSON_malloc(n + 1);
    if (!copy) {
        r->status = JSONFAST_NOMEM;
        return NULL;
    }
    memcpy(copy, s, n);
    copy[n] = '\0';
    r->p = q + 1;
    return copy;
}

/* 10^0 .. 10^22: the powers of ten a double holds exactly. */
static const double POW10[] = {1e0,  1e1,  1e2,  1e3,  1e4,  1e5,  1e6,  1e7,  1e8,  1e9,  1e10, 1e11,
                               1e12, 1e13, 1e14, 1e15, 1e16, 1e17, 1e18, 1e19, 1e20, 1e21, 1e22};
#define EXACT_INT_MAX ((uint64_t)1 << 53) /* every integer up to here is a double exactly */

/* A number in RFC 8259's form at r->p, which must be followed by a
 * delimiter inside the text. Its value is w 10^e10 (w: the digits without
 * the point). When w and 10^|e10| are both doubles exactly, one IEEE
 * multiplication or division gives the correctly rounded value, as strtod
 * does; otherwise strtod reads it (it stops at the delimiter). The doubles
 * must be evaluated in double precision for that (FLT_EVAL_METHOD 0, as on
 * x86-64 and arm64); elsewhere every number goes to strtod. */
static int read_number(Reader *r, double *out)
{
    const char *q = r->p;
    const int neg = *q == '-';
    uint64_t w = 0;
    int all_digits = 1; /* w holds every digit (none dropped as too many) */
    long e10 = 0;
    q += neg;
    if (q == r->end || !is_digit(*q))
        return 0;
    if (*q == '0') { /* a leading zero stands alone */
        q++;
    } else {
        for (; q < r->end && is_digit(*q); q++) {
            if (w < EXACT_INT_MAX)
                w = w * 10 + (uint64_t)(*q - '0');
            else
                all_digits = 0;
        }
    }
    if (q < r->end && *q == '.') {
        q++;
        if (q == r->end || !is_digit(*q))
            return 0;
        for (; q < r->end && is_digit(*q); q++) {
            if (w < EXACT_INT_MAX)
                w = w * 10 + (uint64_t)(*q - '0'), e10--;
            else
                all_digits = 0;
        }
    }
    if (q < r->end && (*q == 'e' || *q == 'E')) {
        q++;
        const int minus = q < r->end && *q == '-';
        if (q < r->end && (*q == '-' || *q == '+'))
            q++;
        if (q == r->end || !is_digit(*q))
            return 0;
        long x = 0;
        for (; q < r->end && is_digit(*q); q++) {
            if (x < 100000) /* far beyond any double */
                x = x * 10 + (*q - '0');
            else
                all_digits = 0; /* not kept whole: strtod decides (a long fraction could cancel it) */
        }
        e10 += minus ? -x : x;
    }
    if (q == r->end || !(*q == ',' || *q == ']' || *q == '}' || *q == ' ' || *q == '\n' ||
                         *q == '\r' || *q == '\t'))
        return 0;
    if (FLT_EVAL_METHOD == 0 && all_digits && w <= EXACT_INT_MAX && e10 >= -22 && e10 <= 22) {
        const double v = e10 < 0 ? (double)w / POW10[-e10] : (double)w * POW10[e10];
        *out = neg ? -v : v;
    } else {
        *out = strtod(r->p, NULL);
    }
    r->p = q;
    return 1;
}

static cJSON *read_value(Reader *r);

/* An array or object whose bracket is at r->p: children linked by next and
 * prev, the first child's prev pointing at the last (cJSON's way of
 * appending quickly), each object member's key in its string field. */
static cJSON *read_container(Reader *r, int type)
{
    if (r->depth >= CJSON_NESTING_LIMIT)
        return decline(r);
    cJSON *node = new_node(r, type), *last = NULL;
    if (!node)
        return NULL;
    const char close = type == cJSON_Array ? ']' : '}';
    r->depth++;
    r->p++;
    skip_space(r);
    if (r->p < r->end && *r->p == close) { /* empty */
        r->p++;
        r->depth--;
        return node;
    }
    for (;;) {
        char *key = NULL;
        if (type == cJSON_Object) {
            if (r->p == r->end || *r->p != '"') {
                decline(r);
                goto fail;
            }
            if (!(key = read_string(r)))
                goto fail;
            skip_space(r);
            if (r->p == r->end || *r->p != ':') {
                cJSON_free(key);
                decline(r);
                goto fail;
            }
            r->p++;
            skip_space(r);
        }
        cJSON *item = read_value(r);
        if (!item) {
            cJSON_free(key);
            goto fail;
        }
        item->string = key;
        if (last) {
            last->next = item;
            item->prev = last;
        } else {
            node->child = item;
        }
        last = item;
        skip_space(r);
        if (r->p < r->end && *r->p == ',') {
            r->p++;
            skip_space(r);
        } else if (r->p < r->end && *r->p == close) {
            r->p++;
            break;
        } else {
            decline(r);
            goto fail;
        }
    }
    node->child->prev = last;
    r->depth--;
    return node;
fail:
    cJSON_Delete(node); /* with the children linked so far */
    return NULL;
}

/* Whether the text at r->p starts with word; if so, step over it. */
static int skip_word(Reader *r, const char *word)
{
    const size_t n = strlen(word);
    if ((size_t)(r->end - r->p) < n || memcmp(r->p, word, n) != 0)
        return 0;
    r->p += n;
    return 1;
}

static cJSON *read_value(Reader *r)
{
    if (r->p == r->end)
        return decline(r);
    cJSON *n;
    switch (*r->p) {
    case '[':
        return read_container(r, cJSON_Array);
    case '{':
        return read_container(r, cJSON_Object);
    case '"':
        if ((n = new_node(r, cJSON_String)) && !(n->valuestring = read_string(r))) {
            cJSON_Delete(n);
            n = NULL;
        }
        return n;
    case 't':
        if (!skip_word(r, "true"))
            return decline(r);
        if ((n = new_node(r, cJSON_True)))
            n->valueint = 1;
        return n;
    case 'f':
        return skip_word(r, "false") ? new_node(r, cJSON_False) : decline(r);
    case 'n':
        return skip_word(r, "null") ? new_node(r, cJSON_NULL) : decline(r);
    default: {
        double v;
        if (!read_number(r, &v))
            return decline(r);
        if (!(n = new_node(r, cJSON_Number)))
            return NULL;
        n->valuedouble = v;
        /* valueint as cJSON sets it (mhaviz never reads it) */
        n->valueint = v >= INT_MAX ? INT_MAX : v <= (double)INT_MIN ? INT_MIN : (int)v;
        return n;
    }
    }
}

JsonFastStatus jsonfast_parse(const char *text, size_t len, cJSON **root)
{
    Reader r = {text, text + len, 0, JSONFAST_OK};
    *root = NULL;
    /* strtod reads the text in place: it must take '.' as the decimal
     * point (cJSON swaps in the locale's; mhaviz never sets a locale). */
    const char *point = localeconv()->decimal_point;
    if (point[0] != '.' || point[1] != '\0')
        return JSONFAST_DECLINED;
    skip_space(&r);
    cJSON *tree = read_value(&r);
    if (!tree)
        return r.status;
    skip_space(&r);
    if (r.p != r.end) { /* more after the value: cJSON's error to report */
        cJSON_Delete(tree);
        return JSONFAST_DECLINED;
    }
    *root = tree;
    return JSONFAST_OK;
}
