/* input.c — load and validate an mhaviz input file (format in docs/input.md).
 *
 * The order of work is the safety argument:
 *   1. read the file (size checked first), refuse NUL bytes and absurd nesting;
 *   2. parse it once with cJSON (syntax errors become file:line:col);
 *   3. read the small fields (tokens, shapes, flags) and check each limit;
 *   4. walk every matrix and vector and check its shape against the claimed
 *      dimensions, allocating nothing;
 *   5. estimate the memory the whole run needs from those shapes and refuse
 *      it when over the limit;
 *   6. only then allocate, copy every number out as a float (refusing
 *      non-finite ones and ones too big for a float, with their place), and
 *      free the JSON tree once.
 * Every message names the place: the key, the row and column (counted from
 * 0), or file:line:col for syntax errors. */
#include "io/input.h"
#include "core/status.h"
#include "io/npy.h"
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

/* Deepest nesting the format needs is 4 (object, single_head, matrix, row);
 * anything much deeper is not an mhaviz input. */
#define MAX_NESTING 32

void input_default_limits(InputLimits *lim)
{
    lim->max_T = INPUT_MAX_T;
    lim->max_d_model = INPUT_MAX_D_MODEL;
    lim->max_heads = INPUT_MAX_HEADS;
    lim->max_file_bytes = INPUT_MAX_FILE_BYTES;
    lim->max_memory_bytes = (size_t)INPUT_MAX_MEMORY_MB << 20;
}

/* ------------------------------------------------------------------------ */
/* Loader state and messages                                                */

typedef struct {
    const char *name;     /* file name used in messages */
    const char *base_dir; /* folder that relative .npy names are resolved in */
    const InputLimits *lim;
    char *err;
    size_t errlen;
    char *warn;           /* growing warning text, owned */
    size_t warn_len, warn_cap;
    int nomem;            /* a warning could not be stored */
    const cJSON **emb_of; /* (T) each token's entry in "embeddings", or NULL */
} Loader;

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

/* Write "name: <message>" into the error buffer; returns MHAVIZ_EINPUT. */
static int fail(Loader *L, const char *fmt, ...)
{
    va_list ap;
    int n = snprintf(L->err, L->errlen, "%s%s: ", name_cut(L->name), name_tail(L->name));
    if (n < 0 || (size_t)n >= L->errlen)
        return MHAVIZ_EINPUT;
    va_start(ap, fmt);
    vsnprintf(L->err + n, L->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    return MHAVIZ_EINPUT;
}

static int fail_nomem(Loader *L)
{
    snprintf(L->err, L->errlen, "%s%s: out of memory while loading", name_cut(L->name), name_tail(L->name));
    return MHAVIZ_ENOMEM;
}

/* Append one warning line "warning: name: <message>\n". */
static void warn(Loader *L, const char *fmt, ...)
{
    char line[512];
    va_list ap;
    int n = snprintf(line, sizeof line, "warning: %s%s: ", name_cut(L->name), name_tail(L->name));
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

/* A short name for a JSON value's type, for "expected X, got Y" messages. */
static const char *type_name(const cJSON *v)
{
    if (cJSON_IsNumber(v)) return "a number";
    if (cJSON_IsString(v)) return "a string";
    if (cJSON_IsArray(v)) return "an array";
    if (cJSON_IsObject(v)) return "an object";
    if (cJSON_IsBool(v)) return "a boolean";
    if (cJSON_IsNull(v)) return "null";
    return "an invalid value";
}

/* Number of elements of a JSON array or object, in one walk. */
static size_t count_items(const cJSON *a)
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

/* One pass over the raw text: no NUL bytes (raw or \u0000), nesting at most MAX_NESTING.
 * (cJSON would stop at a NUL inside a string and silently cut it; its own
 * nesting limit is 1000 and its error gives no reason.)
 * Also counts what parsing will allocate: one cJSON node per value, plus a
 * copy of every string (keys included), so *parse_bytes bounds the memory
 * the parse needs, text included, before it starts. */
static int scan_text(Loader *L, const char *text, size_t len, size_t *parse_bytes)
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

/* Explain a cJSON syntax error at byte offset off: syntax_explain names
 * the mistake (trailing comma, missing comma, single quotes, ...) and the
 * offset it is at. */
static int fail_syntax(Loader *L, const char *text, size_t len, size_t off)
{
    char msg[320];
    size_t at = syntax_explain(text, len, off, msg, sizeof msg);
    return fail_at(L, text, len, at, "%s", msg);
}

/* Copy s, replacing every byte that is not part of valid UTF-8 with U+FFFD.
 * Sets *bad to the number of replacements. NULL when out of memory. */
static char *utf8_clean(const char *s, int *bad)
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

static const char *const top_keys[] = {
    "tokens", "d_model", "n_heads", "n_kv_heads", "causal", "x", "embeddings",
    "positional", "W_q", "W_k", "W_v", "W_o", "weight_layout", "b_q", "b_k",
    "b_v", "b_o", "single_head", "comment", "title", NULL,
};
static const char *const single_keys[] = {
    "W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "comment", NULL,
};

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

static int check_keys(Loader *L, const cJSON *obj, const char *const *known, const char *where)
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
                    return fail(L, "%s%s: given twice; keep one", where, k);
            continue;
        }
        if (++unknown > MAX_KEY_WARNINGS)
            continue;
        int bad;
        char *shown = utf8_clean(k, &bad);
        if (!shown)
            return fail_nomem(L);
        size_t n = strlen(shown);
        if (n > 60) { /* a long key: cut at a character boundary */
            n = 57;
            while (n > 0 && ((unsigned char)shown[n] & 0xC0) == 0x80)
                n--;
            memcpy(shown + n, "...", 4);
        }
        const char *m = did_you_mean(k, known);
        if (m)
            warn(L, "unknown key \"%s%s\" ignored (did you mean \"%s%s\"?)", where, shown, where, m);
        else
            warn(L, "unknown key \"%s%s\" ignored", where, shown);
        free(shown);
    }
    if (unknown > MAX_KEY_WARNINGS)
        warn(L, "%d more unknown keys%s ignored", unknown - MAX_KEY_WARNINGS,
             where[0] ? " in single_head" : "");
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* Small fields                                                             */

/* A whole number in [lo, hi] under key; absent -> *out = dflt (required: dflt < 0). */
static int read_int(Loader *L, const cJSON *root, const char *key, int lo, int hi,
                    const char *hi_why, int dflt, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        if (dflt < 0)
            return fail(L, "missing \"%s\" (a whole number >= %d)", key, lo);
        *out = dflt;
        return MHAVIZ_OK;
    }
    if (!cJSON_IsNumber(v))
        return fail(L, "%s: expected a whole number, got %s", key, type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d))
        return fail(L, "%s: expected a whole number, got %g", key, d);
    if (d < lo)
        return fail(L, "%s: must be at least %d, got %.15g", key, lo, d);
    if (d > hi)
        return fail(L, "%s: %.15g is over the limit of %d%s", key, d, hi, hi_why);
    *out = (int)d;
    return MHAVIZ_OK;
}

static int read_tokens(Loader *L, const cJSON *root, MhaInput *in, const cJSON **tokens_json)
{
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    if (!tok)
        return fail(L, "missing \"tokens\" (an array of strings, one per token)");
    if (!cJSON_IsArray(tok))
        return fail(L, "tokens: expected an array of strings, got %s", type_name(tok));
    size_t T = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, tok) {
        if (!cJSON_IsString(e))
            return fail(L, "tokens[%zu]: expected a string, got %s", T, type_name(e));
        T++;
    }
    if (T == 0)
        return fail(L, "tokens: the array is empty; give at least one token");
    if (T > (size_t)L->lim->max_T)
        return fail(L, "tokens: %zu tokens is over the limit of %d", T, L->lim->max_T);
    in->cfg.T = (int)T;
    *tokens_json = tok;
    return MHAVIZ_OK;
}

/* Copy the token strings, replacing invalid UTF-8 (with a warning). */
static int copy_tokens(Loader *L, const cJSON *tok, MhaInput *in)
{
    in->tokens = calloc((size_t)in->cfg.T, sizeof *in->tokens);
    if (!in->tokens)
        return fail_nomem(L);
    int t = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, tok) {
        int bad;
        in->tokens[t] = utf8_clean(e->valuestring, &bad);
        if (!in->tokens[t])
            return fail_nomem(L);
        if (bad)
            warn(L, "tokens[%d]: %d byte%s of invalid UTF-8 shown as U+FFFD", t, bad, bad == 1 ? "" : "s");
        t++;
    }
    return MHAVIZ_OK;
}

/* The optional "title": a string of at most INPUT_MAX_TITLE_BYTES bytes,
 * invalid UTF-8 replaced (with a warning) as in the tokens. */
static int read_title(Loader *L, const cJSON *root, MhaInput *in)
{
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
    if (!title)
        return MHAVIZ_OK;
    if (!cJSON_IsString(title))
        return fail(L, "title: expected a string, got %s", type_name(title));
    const size_t n = strlen(title->valuestring);
    if (n > INPUT_MAX_TITLE_BYTES)
        return fail(L, "title: %zu bytes is over the limit of %d", n, INPUT_MAX_TITLE_BYTES);
    int bad;
    if (!(in->title = utf8_clean(title->valuestring, &bad)))
        return fail_nomem(L);
    if (bad)
        warn(L, "title: %d byte%s of invalid UTF-8 shown as U+FFFD", bad, bad == 1 ? "" : "s");
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* Numbers, vectors and matrices                                            */

/* One JSON number as a float, or an error naming its place (prefix, already
 * formatted: e.g. "W_k: row 3, column 5"). */
static int to_float(Loader *L, const cJSON *v, const char *place, float *out)
{
    if (!cJSON_IsNumber(v))
        return fail(L, "%s: expected a number, got %s", place, type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d))
        return fail(L, "%s: not a finite number", place);
    if (fabs(d) > FLT_MAX)
        return fail(L, "%s: %g is too large for a float (largest is about 3.4e38)", place, d);
    *out = (float)d;
    return MHAVIZ_OK;
}

/* What a dimension is, for messages: "8 (d_model)". */
typedef struct {
    int n;
    const char *why;
} Dim;

/* Copy out a .npy file's numbers (shape checked). rows < 0: a vector. */
static int read_npy(Loader *L, const char *key, const char *file, Dim rows, Dim cols,
                    int transpose, float *dst)
{
    char msg[384];
    int rc = npy_read_floats(L->base_dir, file, rows.n, cols.n, transpose, dst, msg, sizeof msg);
    if (rc == MHAVIZ_ENOMEM)
        return fail_nomem(L);
    if (rc != MHAVIZ_OK) {
        if (rows.n < 0)
            fail(L, "%s: %s (expected shape (%d,), %s)", key, msg, cols.n, cols.why);
        else
            fail(L, "%s: %s (expected shape (%d, %d): %s by %s)", key, msg, rows.n, cols.n,
                 rows.why, cols.why);
        return rc == MHAVIZ_EIO ? MHAVIZ_EINPUT : rc;
    }
    return MHAVIZ_OK;
}

/* A vector of cols.n numbers under key (e.g. "b_k" or "embeddings[\"cat\"]").
 * dst NULL: check the shape only. */
static int read_vector(Loader *L, const cJSON *v, const char *key, Dim cols, float *dst)
{
    if (cJSON_IsString(v)) {
        if (!dst)
            return MHAVIZ_OK;
        return read_npy(L, key, v->valuestring, (Dim){-1, ""}, cols, 0, dst);
    }
    if (!cJSON_IsArray(v))
        return fail(L, "%s: expected an array of %d numbers (%s), got %s", key, cols.n, cols.why,
                    type_name(v));
    size_t n = count_items(v);
    if (n != (size_t)cols.n)
        return fail(L, "%s: has %zu numbers, expected %d (%s)", key, n, cols.n, cols.why);
    if (!dst)
        return MHAVIZ_OK;
    int j = 0, rc;
    const cJSON *e;
    cJSON_ArrayForEach(e, v) {
        char place[160];
        if (!cJSON_IsNumber(e) || !isfinite(e->valuedouble) || fabs(e->valuedouble) > FLT_MAX) {
            snprintf(place, sizeof place, "%s[%d]", key, j);
            if ((rc = to_float(L, e, place, &dst[j])) != MHAVIZ_OK)
                return rc;
        }
        dst[j] = (float)e->valuedouble;
        j++;
    }
    return MHAVIZ_OK;
}

/* A matrix stored as rows.n rows of cols.n numbers (or a .npy file name)
 * under key. dst NULL: check the shape only, allocating nothing. Otherwise
 * copy into dst, transposed when transpose (dst is then (cols.n, rows.n)). */
static int read_matrix(Loader *L, const cJSON *m, const char *key, Dim rows, Dim cols,
                       int transpose, float *dst)
{
    if (cJSON_IsString(m)) {
        if (!dst)
            return MHAVIZ_OK;
        return read_npy(L, key, m->valuestring, rows, cols, transpose, dst);
    }
    if (!cJSON_IsArray(m))
        return fail(L, "%s: expected %d rows (%s) of %d numbers (%s), or a .npy file name; got %s",
                    key, rows.n, rows.why, cols.n, cols.why, type_name(m));
    size_t n_rows = count_items(m);
    if (n_rows != (size_t)rows.n)
        return fail(L, "%s: has %zu rows, expected %d (%s)", key, n_rows, rows.n, rows.why);
    int i = 0, rc;
    const cJSON *row;
    cJSON_ArrayForEach(row, m) {
        if (!cJSON_IsArray(row))
            return fail(L, "%s: row %d is %s, expected an array of %d numbers (%s)", key, i,
                        type_name(row), cols.n, cols.why);
        if (!dst) {
            size_t n = count_items(row);
            if (n != (size_t)cols.n)
                return fail(L, "%s: row %d has %zu numbers, expected %d (%s)", key, i, n, cols.n,
                            cols.why);
        } else {
            int j = 0;
            const cJSON *e;
            cJSON_ArrayForEach(e, row) {
                if (j == cols.n)
                    break;
                float f;
                if (cJSON_IsNumber(e) && isfinite(e->valuedouble) && fabs(e->valuedouble) <= FLT_MAX) {
                    f = (float)e->valuedouble;
                } else {
                    char place[160];
                    snprintf(place, sizeof place, "%s: row %d, column %d", key, i, j);
                    if ((rc = to_float(L, e, place, &f)) != MHAVIZ_OK)
                        return rc;
                }
                if (transpose)
                    dst[(size_t)j * rows.n + i] = f;
                else
                    dst[(size_t)i * cols.n + j] = f;
                j++;
            }
            if (j != cols.n || e != NULL)
                return fail(L, "%s: row %d has the wrong length, expected %d (%s)", key, i, cols.n,
                            cols.why);
        }
        i++;
    }
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* One layer's weights                                                      */

/* Where each weight lives in the JSON, and its shape in the x@W layout. */
typedef struct {
    const cJSON *W[4]; /* W_q, W_k, W_v, W_o (required) */
    const cJSON *b[4]; /* b_q, b_k, b_v, b_o (optional) */
    Dim in[4], out[4]; /* x@W shape of W[i]: (in, out); b[i] has out[i] numbers */
    const char *prefix; /* "" or "single_head." */
} LayerJson;

static const char *const W_names[4] = {"W_q", "W_k", "W_v", "W_o"};
static const char *const b_names[4] = {"b_q", "b_k", "b_v", "b_o"};

static int find_layer(Loader *L, const cJSON *obj, const char *prefix, Dim d_model, Dim kv,
                      LayerJson *lj)
{
    memset(lj, 0, sizeof *lj);
    lj->prefix = prefix;
    for (int i = 0; i < 4; i++) {
        lj->W[i] = cJSON_GetObjectItemCaseSensitive(obj, W_names[i]);
        lj->b[i] = cJSON_GetObjectItemCaseSensitive(obj, b_names[i]);
        lj->in[i] = d_model;
        lj->out[i] = (i == 1 || i == 2) ? kv : d_model;
        if (!lj->W[i])
            return fail(L, "missing \"%s%s\" (%d x %d: %s by %s)", prefix, W_names[i], d_model.n,
                        lj->out[i].n, d_model.why, lj->out[i].why);
    }
    return MHAVIZ_OK;
}

/* Check (w NULL) or copy the layer. W@x files hold each W transposed. */
static int read_layer(Loader *L, const LayerJson *lj, int w_at_x, MhaWeights *w)
{
    float *Wd[4] = {NULL, NULL, NULL, NULL}, *bd[4] = {NULL, NULL, NULL, NULL};
    if (w) {
        Wd[0] = w->W_q, Wd[1] = w->W_k, Wd[2] = w->W_v, Wd[3] = w->W_o;
        bd[0] = w->b_q, bd[1] = w->b_k, bd[2] = w->b_v, bd[3] = w->b_o;
    }
    char key[64];
    int rc;
    for (int i = 0; i < 4; i++) {
        snprintf(key, sizeof key, "%s%s", lj->prefix, W_names[i]);
        Dim r = w_at_x ? lj->out[i] : lj->in[i], c = w_at_x ? lj->in[i] : lj->out[i];
        char why_r[96], why_c[96];
        if (w_at_x) { /* say why the rows are the output features */
            snprintf(why_r, sizeof why_r, "%s, as weight_layout is \"W@x\"", r.why);
            snprintf(why_c, sizeof why_c, "%s, as weight_layout is \"W@x\"", c.why);
            r.why = why_r;
            c.why = why_c;
        }
        if ((rc = read_matrix(L, lj->W[i], key, r, c, w_at_x, Wd[i])) != MHAVIZ_OK)
            return rc;
    }
    for (int i = 0; i < 4; i++) {
        if (!lj->b[i])
            continue;
        snprintf(key, sizeof key, "%s%s", lj->prefix, b_names[i]);
        if ((rc = read_vector(L, lj->b[i], key, lj->out[i], bd[i])) != MHAVIZ_OK)
            return rc;
    }
    if (w)
        w->has_bias = lj->b[0] || lj->b[1] || lj->b[2] || lj->b[3];
    return MHAVIZ_OK;
}

/* Allocate a layer's arrays (biases zeroed). */
static int alloc_layer(Loader *L, const LayerJson *lj, MhaWeights *w)
{
    float **Wd[4] = {&w->W_q, &w->W_k, &w->W_v, &w->W_o};
    float **bd[4] = {&w->b_q, &w->b_k, &w->b_v, &w->b_o};
    for (int i = 0; i < 4; i++) {
        *Wd[i] = malloc((size_t)lj->in[i].n * (size_t)lj->out[i].n * sizeof(float));
        *bd[i] = calloc((size_t)lj->out[i].n, sizeof(float));
        if (!*Wd[i] || !*bd[i])
            return fail_nomem(L);
    }
    return MHAVIZ_OK;
}

void input_free(MhaInput *in)
{
    if (!in)
        return;
    if (in->tokens)
        for (int t = 0; t < in->cfg.T; t++)
            free(in->tokens[t]);
    free(in->tokens);
    free(in->title);
    free(in->x);
    mha_weights_free(&in->w);
    mha_weights_free(&in->single);
    free(in->warnings);
    memset(in, 0, sizeof *in);
}

/* ------------------------------------------------------------------------ */
/* Embeddings                                                               */

typedef struct {
    const char *key;
    const cJSON *item;
} EmbEntry;

static int emb_cmp(const void *a, const void *b)
{
    return strcmp(((const EmbEntry *)a)->key, ((const EmbEntry *)b)->key);
}

/* Check the table (every entry d_model numbers, none given twice) and find
 * each token's entry, into L->emb_of (T). Allocates only what the data's
 * own size bounds. pos: the "positional" string when it sits in the table. */
static int find_embeddings(Loader *L, const cJSON *emb, const cJSON *pos, const cJSON *tokens,
                           Dim D)
{
    int rc = MHAVIZ_OK;
    /* Sort the table once so each token is a binary search, and a token
     * given twice shows up as two neighbours. */
    size_t n = count_items(emb), i = 0;
    EmbEntry *entries = malloc((n ? n : 1) * sizeof *entries); // (n) the table, sorted by token
    size_t T = count_items(tokens);
    L->emb_of = calloc(T, sizeof *L->emb_of);
    if (!entries || !L->emb_of) {
        free(entries);
        return fail_nomem(L);
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, emb)
        entries[i++] = (EmbEntry){e->string, e};
    qsort(entries, n, sizeof *entries, emb_cmp);
    for (i = 0; i < n && rc == MHAVIZ_OK; i++) {
        char key[160];
        int bad;
        char *shown = utf8_clean(entries[i].key, &bad);
        if (!shown) {
            rc = fail_nomem(L);
            break;
        }
        snprintf(key, sizeof key, "embeddings[\"%.100s\"]", shown);
        free(shown);
        if (i + 1 < n && strcmp(entries[i].key, entries[i + 1].key) == 0)
            rc = fail(L, "%s: given twice; keep one", key);
        else if (entries[i].item != pos)
            rc = read_vector(L, entries[i].item, key, D, NULL);
    }
    size_t t = 0;
    const cJSON *tok;
    cJSON_ArrayForEach(tok, tokens) {
        if (rc != MHAVIZ_OK)
            break;
        EmbEntry probe = {tok->valuestring, NULL};
        EmbEntry *hit = bsearch(&probe, entries, n, sizeof *entries, emb_cmp);
        if (!hit || hit->item == pos) {
            int bad;
            char *shown = utf8_clean(tok->valuestring, &bad);
            if (!shown)
                rc = fail_nomem(L);
            else
                rc = fail(L, "embeddings: no entry for token %zu \"%.100s\"", t, shown);
            free(shown);
            break;
        }
        L->emb_of[t++] = hit->item;
    }
    free(entries);
    return rc;
}

void input_add_positions(float *x, int T, int d_model)
{
    /* PE(t, 2i) = sin(t / 10000^(2i/d_model)), PE(t, 2i+1) = cos(the same angle):
     * the angle is t * inv_freq[j], with inv_freq computed once per column.
     * The sum is taken in double and rounded once to float. */
    for (int j = 0; j < d_model; j++) {
        const int two_i = j - j % 2;
        const double inv_freq = 1.0 / pow(10000.0, (double)two_i / d_model);
        for (int t = 0; t < T; t++) {
            float *x_tj = x + (size_t)t * d_model + j;
            const double angle = t * inv_freq;
            *x_tj = (float)((double)*x_tj + (j % 2 == 0 ? sin(angle) : cos(angle)));
        }
    }
}

/* x_t = embeddings[tokens[t]] + PE(t), into in->x (T, d_model). */
static int embed_tokens(Loader *L, int sinusoidal, MhaInput *in)
{
    const int T = in->cfg.T, d_model = in->cfg.d_model;
    for (int t = 0; t < T; t++) {
        char key[160];
        snprintf(key, sizeof key, "embeddings[\"%.100s\"]", in->tokens[t]);
        float *x_t = in->x + (size_t)t * d_model; // (d_model)
        int rc = read_vector(L, L->emb_of[t], key, (Dim){d_model, "d_model"}, x_t);
        if (rc != MHAVIZ_OK)
            return rc;
    }
    if (sinusoidal)
        input_add_positions(in->x, T, d_model);
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* Memory estimate                                                          */

/* Bytes of the arrays a run allocates for config c (input, weights, both
 * forward passes, the maps' copies for rendering and the reports). */
static double run_bytes(const MhaConfig *c)
{
    const double T = c->T, d = c->d_model, H = c->n_heads;
    const double kv = (double)c->n_kv_heads * c->head_dim;
    double floats = 0;
    floats += T * d;                                 /* x */
    floats += 2 * d * d + 2 * d * kv + 2 * d + 2 * kv; /* the layer's weights and biases */
    floats += 4 * d * d + 4 * d;                      /* the single head's (given or built) */
    floats += 3 * T * d + 2 * T * kv + 2 * H * T * T; /* multi-head state: q k v concat out, att + scores */
    floats += 5 * T * d + 2 * T * T;                  /* single-head state */
    floats += 2 * H * T * T;                          /* rendering and report copies of the maps */
    return floats * sizeof(float);
}

static size_t to_size(double bytes)
{
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

size_t input_memory_estimate(const MhaConfig *c, size_t json_bytes)
{
    return to_size(run_bytes(c) + (double)json_bytes * INPUT_JSON_MEMORY_FACTOR);
}

/* ------------------------------------------------------------------------ */
/* The whole input                                                          */

static int load_tree(Loader *L, const cJSON *root, size_t parse_bytes, MhaInput *in)
{
    int rc;
    MhaConfig *c = &in->cfg;
    const cJSON *tokens_json = NULL;

    if (!cJSON_IsObject(root))
        return fail(L, "expected a JSON object { ... } at the top, got %s", type_name(root));
    if ((rc = check_keys(L, root, top_keys, "")) != MHAVIZ_OK)
        return rc;

    /* Shapes and flags. */
    if ((rc = read_tokens(L, root, in, &tokens_json)) != MHAVIZ_OK || (rc = read_title(L, root, in)) != MHAVIZ_OK)
        return rc;
    if ((rc = read_int(L, root, "d_model", 1, L->lim->max_d_model, "", -1, &c->d_model)) != MHAVIZ_OK)
        return rc;
    if ((rc = read_int(L, root, "n_heads", 1, L->lim->max_heads, "", -1, &c->n_heads)) != MHAVIZ_OK)
        return rc;
    if (c->d_model % c->n_heads != 0)
        return fail(L, "n_heads: %d does not divide d_model = %d (head_dim = d_model / n_heads "
                       "must be a whole number)", c->n_heads, c->d_model);
    c->head_dim = c->d_model / c->n_heads;
    if ((rc = read_int(L, root, "n_kv_heads", 1, c->n_heads, " (n_heads)", c->n_heads,
                       &c->n_kv_heads)) != MHAVIZ_OK)
        return rc;
    if (c->n_heads % c->n_kv_heads != 0)
        return fail(L, "n_kv_heads: %d does not divide n_heads = %d (each K/V head serves "
                       "n_heads / n_kv_heads query heads)", c->n_kv_heads, c->n_heads);
    const cJSON *causal = cJSON_GetObjectItemCaseSensitive(root, "causal");
    c->causal = 1;
    if (causal) {
        if (!cJSON_IsBool(causal))
            return fail(L, "causal: expected true or false, got %s", type_name(causal));
        c->causal = cJSON_IsTrue(causal);
    }
    int w_at_x = 0;
    const cJSON *layout = cJSON_GetObjectItemCaseSensitive(root, "weight_layout");
    if (layout) {
        if (cJSON_IsString(layout) && strcmp(layout->valuestring, "x@W") == 0)
            w_at_x = 0;
        else if (cJSON_IsString(layout) && strcmp(layout->valuestring, "W@x") == 0)
            w_at_x = 1;
        else
            return fail(L, "weight_layout: expected \"x@W\" or \"W@x\", got %s%s%s",
                        cJSON_IsString(layout) ? "\"" : type_name(layout),
                        cJSON_IsString(layout) ? layout->valuestring : "",
                        cJSON_IsString(layout) ? "\"" : "");
    }

    /* The hidden states: x, or embeddings (+ positions). */
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(root, "x");
    const cJSON *emb = cJSON_GetObjectItemCaseSensitive(root, "embeddings");
    const cJSON *pos = cJSON_GetObjectItemCaseSensitive(root, "positional");
    if (x && emb)
        return fail(L, "both \"x\" and \"embeddings\" given; give exactly one");
    if (!x && !emb)
        return fail(L, "missing the hidden states: give \"x\" (T rows of d_model numbers) "
                       "or \"embeddings\" (token -> d_model numbers)");
    if (x && pos)
        return fail(L, "positional: only applies to \"embeddings\"; this input gives \"x\"");
    if (emb && !cJSON_IsObject(emb))
        return fail(L, "embeddings: expected an object mapping each token to %d numbers, got %s",
                    c->d_model, type_name(emb));
    if (emb && !pos) { /* "positional" may also sit inside the embeddings object */
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(emb, "positional");
        if (p && cJSON_IsString(p))
            pos = p;
    }
    int sinusoidal = emb != NULL;
    if (pos) {
        if (cJSON_IsString(pos) && strcmp(pos->valuestring, "sinusoidal") == 0)
            sinusoidal = 1;
        else if (cJSON_IsString(pos) && strcmp(pos->valuestring, "none") == 0)
            sinusoidal = 0;
        else
            return fail(L, "positional: expected \"sinusoidal\" or \"none\", got %s%s%s",
                        cJSON_IsString(pos) ? "\"" : type_name(pos),
                        cJSON_IsString(pos) ? pos->valuestring : "",
                        cJSON_IsString(pos) ? "\"" : "");
    }

    const Dim T = {c->T, "T, the number of tokens"};
    const Dim D = {c->d_model, "d_model"};
    const Dim KV = {mha_kv_dim(c), c->n_kv_heads == c->n_heads ? "d_model" : "n_kv_heads x head_dim"};

    /* Shape checks, allocating nothing. */
    LayerJson layer, single;
    const cJSON *sh = cJSON_GetObjectItemCaseSensitive(root, "single_head");
    if (x && (rc = read_matrix(L, x, "x", T, D, 0, NULL)) != MHAVIZ_OK)
        return rc;
    if ((rc = find_layer(L, root, "", D, KV, &layer)) != MHAVIZ_OK ||
        (rc = read_layer(L, &layer, w_at_x, NULL)) != MHAVIZ_OK)
        return rc;
    if (sh) {
        if (!cJSON_IsObject(sh))
            return fail(L, "single_head: expected an object with W_q, W_k, W_v, W_o, got %s",
                        type_name(sh));
        if ((rc = check_keys(L, sh, single_keys, "single_head.")) != MHAVIZ_OK ||
            (rc = find_layer(L, sh, "single_head.", D, D, &single)) != MHAVIZ_OK ||
            (rc = read_layer(L, &single, w_at_x, NULL)) != MHAVIZ_OK)
            return rc;
    }

    if (emb && (rc = find_embeddings(L, emb, pos, tokens_json, D)) != MHAVIZ_OK)
        return rc;

    /* The memory the run will need, before any allocation sized by the shapes. */
    size_t need = to_size(run_bytes(c) + (double)parse_bytes);
    if (need > L->lim->max_memory_bytes)
        return fail(L, "this run would need about %zu MB of memory (T = %d, d_model = %d, "
                       "n_heads = %d), over the limit of %zu MB; raise it with --max-memory MB",
                    (need >> 20) + 1, c->T, c->d_model, c->n_heads, L->lim->max_memory_bytes >> 20);

    /* Copy everything out. */
    if ((rc = copy_tokens(L, tokens_json, in)) != MHAVIZ_OK)
        return rc;
    in->x = malloc((size_t)c->T * c->d_model * sizeof(float));
    if (!in->x)
        return fail_nomem(L);
    if (x) {
        if ((rc = read_matrix(L, x, "x", T, D, 0, in->x)) != MHAVIZ_OK)
            return rc;
    } else {
        if ((rc = embed_tokens(L, sinusoidal, in)) != MHAVIZ_OK)
            return rc;
    }
    if ((rc = alloc_layer(L, &layer, &in->w)) != MHAVIZ_OK ||
        (rc = read_layer(L, &layer, w_at_x, &in->w)) != MHAVIZ_OK)
        return rc;
    if (sh) {
        in->has_single = 1;
        if ((rc = alloc_layer(L, &single, &in->single)) != MHAVIZ_OK ||
            (rc = read_layer(L, &single, w_at_x, &in->single)) != MHAVIZ_OK)
            return rc;
    }
    return MHAVIZ_OK;
}

/* input_parse_limits; nul_after: text[len] is a readable NUL (input_load's
 * own buffer), so the text need not be copied. */
static int parse_text(const char *text, size_t len, int nul_after, const char *name,
                      const char *base_dir, const InputLimits *lim, MhaInput *in, char *err,
                      size_t errlen)
{
    InputLimits dflt;
    if (!lim) {
        input_default_limits(&dflt);
        lim = &dflt;
    }
    Loader L = {name ? name : "input", base_dir ? base_dir : ".", lim, err, errlen, NULL, 0, 0, 0, NULL};
    cJSON *root = NULL;
    int rc;
    memset(in, 0, sizeof *in);
    if (errlen)
        err[0] = '\0';

    /* cJSON wants the text NUL-terminated; a UTF-8 byte order mark is skipped. */
    char *buf = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (len == 0) {
        rc = fail(&L, "the file is empty");
        goto cleanup;
    }
    size_t parse_bytes = 0;
    if ((rc = scan_text(&L, text, len, &parse_bytes)) != MHAVIZ_OK)
        goto cleanup;
    if (parse_bytes > lim->max_memory_bytes) {
        rc = fail(&L, "parsing this JSON (%zu MB of text) would need about %zu MB of memory, over "
                      "the limit of %zu MB; raise it with --max-memory MB, or give the matrices as "
                      ".npy files", len >> 20, (parse_bytes >> 20) + 1, lim->max_memory_bytes >> 20);
        goto cleanup;
    }
    if (!nul_after) { /* text[len] is not ours to read: copy (the caller gave len bytes) */
        buf = malloc(len + 1); // (len + 1) the text and a NUL
        if (!buf) {
            rc = fail_nomem(&L);
            goto cleanup;
        }
        memcpy(buf, text, len);
        buf[len] = '\0';
        text = buf;
    }
    /* The length includes the terminating NUL: cJSON checks that the value is
     * followed by nothing but whitespace up to it (no trailing junk), and end
     * says where it stopped when it refuses the text. */
    const char *end = NULL;
    root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!root) {
        rc = fail_syntax(&L, text, len, end ? (size_t)(end - text) : 0);
        goto cleanup;
    }
    rc = load_tree(&L, root, parse_bytes, in);
    in->parse_bytes = parse_bytes;

cleanup:
    cJSON_Delete(root);
    free(buf);
    free(L.emb_of);
    if (rc == MHAVIZ_OK && L.nomem)
        rc = fail_nomem(&L);
    if (rc != MHAVIZ_OK)
        input_free(in);
    /* Warnings are kept on failure too: they often explain the error
     * (an unknown "W_Q" beside a missing "W_q"). */
    in->warnings = L.warn;
    return rc;
}

int input_parse_limits(const char *text, size_t len, const char *name, const char *base_dir,
                       const InputLimits *lim, MhaInput *in, char *err, size_t errlen)
{
    return parse_text(text, len, 0, name, base_dir, lim, in, err, errlen);
}

int input_parse(const char *text, size_t len, const char *name, const char *base_dir,
                MhaInput *in, char *err, size_t errlen)
{
    return input_parse_limits(text, len, name, base_dir, NULL, in, err, errlen);
}

/* The folder part of path ("." when none), newly allocated. */
static char *dir_of(const char *path)
{
    const char *slash = strrchr(path, '/');
    if (!slash)
        return strdup(".");
    size_t n = slash == path ? 1 : (size_t)(slash - path);
    char *d = malloc(n + 1);
    if (d) {
        memcpy(d, path, n);
        d[n] = '\0';
    }
    return d;
}

int input_load_limits(const char *path, const InputLimits *lim, MhaInput *in, char *err,
                      size_t errlen)
{
    InputLimits dflt;
    if (!lim) {
        input_default_limits(&dflt);
        lim = &dflt;
    }
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    int rc = MHAVIZ_OK;
    memset(in, 0, sizeof *in);

    int fd = open(path, O_RDONLY);
    struct stat st;
    if (fd < 0) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    if (S_ISDIR(st.st_mode)) {
        snprintf(err, errlen, "%s: is a folder; give the input JSON file", path);
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    if (!S_ISREG(st.st_mode) && !S_ISFIFO(st.st_mode)) { /* e.g. /dev/zero: never ends */
        snprintf(err, errlen, "%s: not a regular file; give the input JSON file", path);
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    if (S_ISREG(st.st_mode) && (uintmax_t)st.st_size > (uintmax_t)lim->max_file_bytes) {
        snprintf(err, errlen, "%s: the file is %ju MB, over the input limit of %zu MB "
                 "(give large matrices as .npy files)", path, (uintmax_t)st.st_size >> 20,
                 lim->max_file_bytes >> 20);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    /* Read to the end (the size is a hint: pipes have none), never past the limit. */
    size_t cap = S_ISREG(st.st_mode) ? (size_t)st.st_size + 1 : 65536;
    text = malloc(cap);
    if (!text)
        goto nomem;
    for (;;) {
        if (len + 1 == cap) { /* full: grow only if there is more to read */
            char probe;
            ssize_t n = read(fd, &probe, 1);
            if (n == 0)
                break;
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                goto read_error;
            if (cap > lim->max_file_bytes) {
                snprintf(err, errlen, "%s: the input is over the limit of %zu MB", path,
                         lim->max_file_bytes >> 20);
                rc = MHAVIZ_EINPUT;
                goto cleanup;
            }
            char *p = realloc(text, cap * 2);
            if (!p)
                goto nomem;
            text = p;
            cap *= 2;
            text[len++] = probe;
        }
        ssize_t n = read(fd, text + len, cap - 1 - len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            goto read_error;
        if (n == 0)
            break;
        len += (size_t)n;
    }
    text[len] = '\0';
    if (!(dir = dir_of(path)))
        goto nomem;
    rc = parse_text(text, len, 1, path, dir, lim, in, err, errlen);
    goto cleanup;

read_error:
    snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
    rc = MHAVIZ_EIO;
    goto cleanup;
nomem:
    snprintf(err, errlen, "%s: out of memory while reading", path);
    rc = MHAVIZ_ENOMEM;
cleanup:
    if (fd >= 0)
        close(fd);
    free(text);
    free(dir);
    return rc;
}

int input_load(const char *path, MhaInput *in, char *err, size_t errlen)
{
    return input_load_limits(path, NULL, in, err, errlen);
}
