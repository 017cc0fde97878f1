/* tokenizer_load.c — read a model folder's tokenizer.json (and
 * tokenizer_config.json) into a Tokenizer.
 *
 * Every part tokenizer.json may hold is read here or refused by name: the
 * added tokens, the normalizer, the pre-tokenizer, the model (BPE only) and
 * the post-processor. Patterns are compiled with PCRE2 once, here. The
 * vocabulary and the merges go into hash maps (piece -> id, pair of ids ->
 * rank), so that a 128k vocabulary with 280k merges loads in one pass. */
#include "checkpoint/tokenizer.h"
#include "checkpoint/tokenizer_parts.h"
#include "core/status.h"
#include "io/syntax.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <utf8proc.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define TOKENIZER_MAX_BYTES ((long)1 << 30) /* a tokenizer.json larger than 1 GB is refused */
#define TOKENIZER_MAX_ID (1 << 24)          /* ids run 0 .. 16M - 1 */
#define WHERE_LEN 160                       /* a JSON path, e.g. pre_tokenizer.pretokenizers[1] */

/* GPT-2's pre-tokenizer regex, which a ByteLevel step with use_regex runs. */
static const char GPT2_PATTERN[] =
    "'s|'t|'re|'ve|'m|'ll|'d| ?\\p{L}+| ?\\p{N}+| ?[^\\s\\p{L}\\p{N}]+|\\s+(?!\\S)|\\s+";

/* What reading one file needs: its path for messages and the error buffer. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
    int status; /* the first failure's status */
} Ctx;

/* "path: message"; returns MHAVIZ_EINPUT (or the status set before). */
static int fail(Ctx *c, const char *fmt, ...)
{
    int n = snprintf(c->err, c->errlen, "%s: ", c->path);
    va_list ap;
    va_start(ap, fmt);
    if (n >= 0 && (size_t)n < c->errlen)
        vsnprintf(c->err + n, c->errlen - (size_t)n, fmt, ap);
    va_end(ap);
    if (c->status == MHAVIZ_OK)
        c->status = MHAVIZ_EINPUT;
    return c->status;
}

static int out_of_memory(Ctx *c)
{
    c->status = MHAVIZ_ENOMEM;
    snprintf(c->err, c->errlen, "%s: out of memory", c->path);
    return c->status;
}

/* ------------------------------------------------------------------------ */
/* The file                                                                  */

/* Parse the JSON file at c->path into *out (caller deletes). A missing file
 * is *out = NULL and MHAVIZ_OK when optional. */
static int read_json(Ctx *c, int optional, cJSON **out)
{
    *out = NULL;
    char *text = NULL;
    FILE *f = fopen(c->path, "rb");
    if (!f) {
        if (optional && errno == ENOENT)
            return MHAVIZ_OK;
        c->status = MHAVIZ_EIO;
        snprintf(c->err, c->errlen, "%s: cannot read: %s", c->path, strerror(errno));
        return c->status;
    }
    long size = -1;
    if (fseek(f, 0, SEEK_END) == 0)
        size = ftell(f);
    if (size < 0 || fseek(f, 0, SEEK_SET) != 0) {
        fclose(f);
        c->status = MHAVIZ_EIO;
        snprintf(c->err, c->errlen, "%s: cannot read: %s", c->path, strerror(errno));
        return c->status;
    }
    if (size > TOKENIZER_MAX_BYTES) {
        fclose(f);
        return fail(c, "%ld bytes, more than a tokenizer.json may have (%ld)", size, TOKENIZER_MAX_BYTES);
    }
    text = malloc((size_t)size + 1);
    if (!text) {
        fclose(f);
        return out_of_memory(c);
    }
    size_t len = fread(text, 1, (size_t)size, f);
    int read_error = ferror(f);
    fclose(f);
    if (read_error) {
        free(text);
        c->status = MHAVIZ_EIO;
        snprintf(c->err, c->errlen, "%s: cannot read", c->path);
        return c->status;
    }
    text[len] = '\0';
    const char *end = NULL;
    *out = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1);
    if (!*out) {
        char msg[256];
        size_t off = end ? (size_t)(end - text) : len;
        size_t at = syntax_explain(text, len, off, msg, sizeof msg);
        int line, col;
        syntax_line_col(text, len, at, &line, &col);
        free(text);
        c->status = MHAVIZ_EINPUT;
        snprintf(c->err, c->errlen, "%s:%d:%d: not JSON: %s", c->path, line, col, msg);
        return c->status;
    }
    free(text);
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* Small readers of JSON fields                                              */

static const cJSON *field(const cJSON *obj, const char *key)
{
    return cJSON_GetObjectItemCaseSensitive(obj, key);
}

/* obj.key as 0/1; absent or null gives dflt. */
static int read_bool(Ctx *c, const cJSON *obj, const char *key, const char *where, int dflt, int *out)
{
    const cJSON *v = field(obj, key);
    if (!v || cJSON_IsNull(v)) {
        *out = dflt;
        return MHAVIZ_OK;
    }
    if (!cJSON_IsBool(v))
        return fail(c, "%s.%s must be true or false", where, key);
    *out = cJSON_IsTrue(v);
    return MHAVIZ_OK;
}

/* obj.key as a string (cJSON owns it); absent gives NULL when optional. */
static int read_string(Ctx *c, const cJSON *obj, const char *key, const char *where, int optional,
                       const char **out)
{
    const cJSON *v = field(obj, key);
    *out = NULL;
    if ((!v || cJSON_IsNull(v)) && optional)
        return MHAVIZ_OK;
    if (!cJSON_IsString(v))
        return fail(c, "%s.%s must be a string", where, key);
    *out = v->valuestring;
    return MHAVIZ_OK;
}

/* v as a token id 0 .. TOKENIZER_MAX_ID - 1. */
static int read_id(Ctx *c, const cJSON *v, const char *where, int *out)
{
    if (!cJSON_IsNumber(v) || !(v->valuedouble >= 0) || v->valuedouble >= TOKENIZER_MAX_ID ||
        v->valuedouble != (double)(int)v->valuedouble)
        return fail(c, "%s must be a token id (a whole number 0 .. %d)", where, TOKENIZER_MAX_ID - 1);
    *out = (int)v->valuedouble;
    return MHAVIZ_OK;
}

/* obj.type, which every normalizer, pre-tokenizer, model and post-processor has. */
static int read_type(Ctx *c, const cJSON *obj, const char *where, const char **type)
{
    if (!cJSON_IsObject(obj))
        return fail(c, "%s must be an object or null", where);
    return read_string(c, obj, "type", where, 0, type);
}

/* Compile a pattern: {"String": s} literally, {"Regex": r} as a regex
 * (PCRE2, Unicode properties: \s, \w and \p{L} as tokenizers' Oniguruma reads them). */
static int read_pattern(Ctx *c, const cJSON *obj, const char *where, pcre2_code **out)
{
    const cJSON *p = field(obj, "pattern");
    const cJSON *s = field(p, "String"), *r = field(p, "Regex");
    if (!cJSON_IsObject(p) || (!cJSON_IsString(s) && !cJSON_IsString(r)))
        return fail(c, "%s.pattern must be {\"String\": ...} or {\"Regex\": ...}", where);
    const char *text = cJSON_IsString(s) ? s->valuestring : r->valuestring;
    uint32_t options = PCRE2_UTF | (cJSON_IsString(s) ? PCRE2_LITERAL : PCRE2_UCP); /* (LITERAL takes no UCP) */
    int code;
    PCRE2_SIZE off;
    *out = pcre2_compile((PCRE2_SPTR)text, PCRE2_ZERO_TERMINATED, options, &code, &off, NULL);
    if (!*out) {
        PCRE2_UCHAR msg[128];
        pcre2_get_error_message(code, msg, sizeof msg);
        return fail(c, "%s.pattern: the regex does not compile at character %zu: %s", where, (size_t)off,
                    (const char *)msg);
    }
    return MHAVIZ_OK;
}

static char *dup_string(const char *s)
{
    size_t n = strlen(s) + 1;
    char *d = malloc(n);
    if (d)
        memcpy(d, s, n);
    return d;
}

/* ------------------------------------------------------------------------ */
/* Vocabulary and merges                                                     */

static uint64_t hash_bytes(const char *s, size_t len)
{
    uint64_t h = 14695981039346656037u; /* FNV-1a */
    for (size_t i = 0; i < len; i++) {
        h ^= (unsigned char)s[i];
        h *= 1099511628211u;
    }
    return h;
}

static size_t table_size(size_t n)
{
    size_t size = 16;
    while (size < 2 * n)
        size *= 2;
    return size;
}

/* The slot of piece s[0..len) in the vocabulary's table: its id's, or the
 * empty one where it would go. */
static size_t vocab_slot(const Tokenizer *tok, const char *s, size_t len)
{
    uint64_t h = hash_bytes(s, len);
    uint32_t tag = (uint32_t)(h >> 32);
    size_t i = h & tok->vocab.mask;
    for (;; i = (i + 1) & tok->vocab.mask) {
        int id = tok->vocab.slot[i].id;
        if (id < 0)
            return i;
        const char *p = tok->pieces[id];
        if (tok->vocab.slot[i].tag == tag && strncmp(p, s, len) == 0 && p[len] == '\0')
            return i;
    }
}

int tokenizer_vocab_find(const Tokenizer *tok, const char *s, size_t len)
{
    return tok->vocab.slot[vocab_slot(tok, s, len)].id;
}

/* model.vocab: {"piece": id, ...} into tok->pieces and tok->vocab. */
static int read_vocab(Ctx *c, Tokenizer *tok, const cJSON *vocab, const cJSON *added)
{
    if (!cJSON_IsObject(vocab))
        return fail(c, "model.vocab must be an object {\"piece\": id, ...}");
    int n = 0, max_id = -1;
    size_t bytes = 0;
    const cJSON *v;
    cJSON_ArrayForEach(v, vocab) {
        char where[WHERE_LEN];
        snprintf(where, sizeof where, "model.vocab[\"%.60s\"]", v->string);
        int id = 0;
        if (read_id(c, v, where, &id))
            return c->status;
        if (id > max_id)
            max_id = id;
        bytes += strlen(v->string) + 1;
        n++;
    }
    cJSON_ArrayForEach(v, added) { /* (read_added names a bad id) */
        const cJSON *id = field(v, "id");
        if (cJSON_IsNumber(id) && id->valuedouble > max_id && id->valuedouble < TOKENIZER_MAX_ID)
            max_id = (int)id->valuedouble;
    }
    tok->n_ids = max_id + 1;
    tok->pieces = calloc((size_t)tok->n_ids + 1, sizeof *tok->pieces);
    tok->piece_bytes = malloc(bytes + 1);
    tok->vocab.mask = table_size((size_t)n) - 1;
    tok->vocab.slot = malloc((tok->vocab.mask + 1) * sizeof *tok->vocab.slot);
    if (!tok->pieces || !tok->piece_bytes || !tok->vocab.slot)
        return out_of_memory(c);
    for (size_t i = 0; i <= tok->vocab.mask; i++)
        tok->vocab.slot[i].id = -1;
    char *at = tok->piece_bytes;
    cJSON_ArrayForEach(v, vocab) {
        int id = (int)v->valuedouble;
        if (tok->pieces[id])
            return fail(c, "model.vocab: id %d is given to \"%.60s\" and to \"%.60s\"", id, tok->pieces[id],
                        v->string);
        size_t len = strlen(v->string);
        size_t i = vocab_slot(tok, v->string, len);
        if (tok->vocab.slot[i].id >= 0)
            return fail(c, "model.vocab: \"%.60s\" is given twice", v->string);
        memcpy(at, v->string, len + 1);
        tok->pieces[id] = at;
        at += len + 1;
        tok->vocab.slot[i] = (PieceSlot){id, (uint32_t)(hash_bytes(v->string, len) >> 32)};
    }
    return MHAVIZ_OK;
}

/* Record merge (a, b) -> merged at rank; a later line for the same pair
 * replaces an earlier one, as tokenizers' map of merges does. */
static void merge_put(MergeMap *m, int a, int b, int rank, int merged)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t i = (size_t)(key * 11400714819323198485u >> 20) & m->mask;
    while (m->key[i] != UINT64_MAX && m->key[i] != key)
        i = (i + 1) & m->mask;
    m->key[i] = key;
    m->rank[i] = rank;
    m->merged[i] = merged;
}

/* One merge's two pieces: "a b" (one space) or ["a", "b"]. */
static int merge_parts(Ctx *c, const cJSON *m, int i, char *buf, size_t buflen, const char **a, const char **b)
{
    if (cJSON_IsString(m)) {
        const char *s = m->valuestring, *space = strchr(s, ' ');
        if (!space || strchr(space + 1, ' ') || (size_t)(space - s) >= buflen)
            return fail(c, "model.merges[%d] \"%.60s\" must be two pieces with one space between", i, s);
        memcpy(buf, s, (size_t)(space - s));
        buf[space - s] = '\0';
        *a = buf;
        *b = space + 1;
        return MHAVIZ_OK;
    }
    if (cJSON_GetArraySize(m) != 2 || !cJSON_IsString(m->child) || !cJSON_IsString(m->child->next))
        return fail(c, "model.merges[%d] must be \"a b\" or [\"a\", \"b\"]", i);
    *a = m->child->valuestring;
    *b = m->child->next->valuestring;
    return MHAVIZ_OK;
}

static int read_merges(Ctx *c, Tokenizer *tok, const cJSON *merges)
{
    if (!cJSON_IsArray(merges))
        return fail(c, "model.merges must be an array");
    MergeMap *m = &tok->merges;
    size_t n = (size_t)cJSON_GetArraySize(merges);
    m->mask = table_size(n) - 1;
    m->key = malloc((m->mask + 1) * sizeof *m->key);
    m->rank = malloc((m->mask + 1) * sizeof *m->rank);
    m->merged = malloc((m->mask + 1) * sizeof *m->merged);
    char *buf = NULL, *joined = NULL;
    size_t cap = 0;
    if (!m->key || !m->rank || !m->merged)
        return out_of_memory(c);
    memset(m->key, 0xff, (m->mask + 1) * sizeof *m->key); /* all UINT64_MAX */
    int rank = 0;
    const cJSON *item;
    cJSON_ArrayForEach(item, merges) {
        size_t need = cJSON_IsString(item) ? strlen(item->valuestring) + 2 : 2;
        for (const cJSON *p = item->child; p; p = p->next)
            need += cJSON_IsString(p) ? strlen(p->valuestring) : 0;
        if (need > cap) {
            cap = 2 * need;
            free(buf);
            free(joined);
            buf = malloc(cap);
            joined = malloc(cap);
            if (!buf || !joined) {
                free(buf);
                free(joined);
                return out_of_memory(c);
            }
        }
        const char *a = NULL, *b = NULL;
        if (merge_parts(c, item, rank, buf, cap, &a, &b))
            break;
        size_t la = strlen(a), lb = strlen(b);
        memcpy(joined, a, la);
        memcpy(joined + la, b, lb + 1);
        int ia = tokenizer_vocab_find(tok, a, la), ib = tokenizer_vocab_find(tok, b, lb);
        int im = tokenizer_vocab_find(tok, joined, la + lb);
        const char *missing = ia < 0 ? a : ib < 0 ? b : im < 0 ? joined : NULL;
        if (missing) {
            fail(c, "model.merges[%d]: \"%.60s\" is not in model.vocab", rank, missing);
            break;
        }
        merge_put(m, ia, ib, rank, im);
        rank++;
    }
    free(buf);
    free(joined);
    return c->status;
}

/* ------------------------------------------------------------------------ */
/* The parts of the pipeline                                                 */

static int read_model(Ctx *c, Tokenizer *tok, const cJSON *model, const cJSON *added)
{
    const char *type, *s;
    if (read_type(c, model, "model", &type))
        return c->status;
    if (strcmp(type, "BPE") != 0)
        return fail(c, "model.type \"%.60s\" is not supported (supported: BPE)", type);
    const cJSON *dropout = field(model, "dropout");
    if (dropout && !cJSON_IsNull(dropout) && !(cJSON_IsNumber(dropout) && dropout->valuedouble == 0))
        return fail(c, "model.dropout: random dropout is not supported (null or 0)");
    const char *affixes[] = {"continuing_subword_prefix", "end_of_word_suffix"};
    for (int i = 0; i < 2; i++) {
        if (read_string(c, model, affixes[i], "model", 1, &s))
            return c->status;
        if (s && s[0])
            return fail(c, "model.%s \"%.60s\" is not supported (null or \"\")", affixes[i], s);
    }
    if (read_bool(c, model, "fuse_unk", "model", 0, &tok->fuse_unk) ||
        read_bool(c, model, "byte_fallback", "model", 0, &tok->byte_fallback) ||
        read_bool(c, model, "ignore_merges", "model", 0, &tok->ignore_merges) ||
        read_vocab(c, tok, field(model, "vocab"), added) || read_merges(c, tok, field(model, "merges")) ||
        read_string(c, model, "unk_token", "model", 1, &s))
        return c->status;
    tok->unk_id = -1;
    if (s && (tok->unk_id = tokenizer_vocab_find(tok, s, strlen(s))) < 0)
        return fail(c, "model.unk_token \"%.60s\" is not in model.vocab", s);
    return MHAVIZ_OK;
}

static int read_added(Ctx *c, Tokenizer *tok, const cJSON *added)
{
    if (!added || cJSON_IsNull(added))
        return MHAVIZ_OK;
    if (!cJSON_IsArray(added))
        return fail(c, "added_tokens must be an array");
    tok->added = calloc((size_t)cJSON_GetArraySize(added) + 1, sizeof *tok->added);
    if (!tok->added)
        return out_of_memory(c);
    const cJSON *a;
    cJSON_ArrayForEach(a, added) {
        char where[WHERE_LEN];
        snprintf(where, sizeof where, "added_tokens[%d]", tok->n_added);
        AddedToken *t = &tok->added[tok->n_added];
        const char *content;
        int special, single_word;
        if (!cJSON_IsObject(a))
            return fail(c, "%s must be an object", where);
        if (read_string(c, a, "content", where, 0, &content) || read_id(c, field(a, "id"), where, &t->id) ||
            read_bool(c, a, "special", where, 0, &special) || read_bool(c, a, "lstrip", where, 0, &t->lstrip) ||
            read_bool(c, a, "rstrip", where, 0, &t->rstrip) ||
            read_bool(c, a, "normalized", where, !special, &t->normalized) ||
            read_bool(c, a, "single_word", where, 0, &single_word))
            return c->status;
        if (!content[0])
            return fail(c, "%s.content is empty", where);
        if (single_word)
            return fail(c, "%s.single_word true is not supported", where);
        if (!(t->content = dup_string(content)))
            return out_of_memory(c);
        t->len = strlen(content);
        tok->added_starts[(unsigned char)content[0]] = 1;
        tok->n_added++;
        if (!tok->pieces[t->id])
            tok->pieces[t->id] = t->content;
    }
    return MHAVIZ_OK;
}

/* Append a zeroed step to an array of n; NULL when out of memory. */
static void *grow(void **array, int *n, size_t size)
{
    char *bigger = realloc(*array, (size_t)(*n + 1) * size);
    if (!bigger)
        return NULL;
    *array = bigger;
    memset(bigger + (size_t)*n * size, 0, size);
    return bigger + (size_t)(*n)++ * size;
}

/* A reader of one normalizer, pre-tokenizer or post-processor at where,
 * of the given type (not "Sequence"). */
typedef int (*StepReader)(Ctx *c, Tokenizer *tok, const cJSON *obj, const char *where, const char *type);

/* The normalizer, pre-tokenizer or post-processor obj at where (absent or
 * null: none): a "Sequence", each object of obj.key read in order as obj
 * is, or else one step, read by read. */
static int read_steps(Ctx *c, Tokenizer *tok, const cJSON *obj, const char *key, const char *where, StepReader read)
{
    const char *type;
    if (!obj || cJSON_IsNull(obj))
        return MHAVIZ_OK;
    if (read_type(c, obj, where, &type))
        return c->status;
    if (strcmp(type, "Sequence") != 0)
        return read(c, tok, obj, where, type);
    const cJSON *list = field(obj, key), *item;
    if (!cJSON_IsArray(list))
        return fail(c, "%s.%s must be an array", where, key);
    int i = 0;
    cJSON_ArrayForEach(item, list) {
        char sub[WHERE_LEN];
        snprintf(sub, sizeof sub, "%s.%s[%d]", where, key, i++);
        if (cJSON_IsNull(item))
            return fail(c, "%s must be an object", sub);
        if (read_steps(c, tok, item, key, sub, read))
            return c->status;
    }
    return MHAVIZ_OK;
}

static int read_normalizer(Ctx *c, Tokenizer *tok, const cJSON *n, const char *where, const char *type)
{
    /* The Unicode normal forms (Qwen2's files begin with NFC), as utf8proc's options. */
    static const char *const forms[] = {"NFC", "NFD", "NFKC", "NFKD"};
    static const int form_options[] = {UTF8PROC_COMPOSE, UTF8PROC_DECOMPOSE, UTF8PROC_COMPOSE | UTF8PROC_COMPAT,
                                       UTF8PROC_DECOMPOSE | UTF8PROC_COMPAT};
    for (int i = 0; i < 4; i++)
        if (strcmp(type, forms[i]) == 0) {
            NormStep *step = grow((void **)&tok->norm, &tok->n_norm, sizeof *step);
            if (!step)
                return out_of_memory(c);
            step->kind = NORM_UNICODE;
            step->form = UTF8PROC_STABLE | form_options[i];
            return MHAVIZ_OK;
        }
    const char *text;
    int prepend = strcmp(type, "Prepend") == 0, replace = strcmp(type, "Replace") == 0;
    if (!prepend && !replace)
        return fail(c, "%s.type \"%.60s\" is not supported (supported normalizers: Sequence, Prepend, Replace, NFC, "
                    "NFD, NFKC, NFKD)", where, type);
    if (read_string(c, n, prepend ? "prepend" : "content", where, 0, &text))
        return c->status;
    NormStep *step = grow((void **)&tok->norm, &tok->n_norm, sizeof *step);
    if (!step || !(step->text = dup_string(text)))
        return out_of_memory(c);
    step->kind = prepend ? NORM_PREPEND : NORM_REPLACE;
    return replace ? read_pattern(c, n, where, &step->match) : MHAVIZ_OK;
}

static pcre2_code *compile(const char *pattern, uint32_t options)
{
    int code;
    PCRE2_SIZE off;
    return pcre2_compile((PCRE2_SPTR)pattern, PCRE2_ZERO_TERMINATED, PCRE2_UTF | options, &code, &off, NULL);
}

static int read_split(Ctx *c, const cJSON *p, const char *where, PreStep *step)
{
    static const char *const names[] = {"Removed", "Isolated", "MergedWithPrevious", "MergedWithNext", "Contiguous"};
    const char *behavior;
    if (read_pattern(c, p, where, &step->match) || read_bool(c, p, "invert", where, 0, &step->invert) ||
        read_string(c, p, "behavior", where, 0, &behavior))
        return c->status;
    for (int i = 0; i < 5; i++)
        if (strcmp(behavior, names[i]) == 0) {
            step->behavior = (SplitBehavior)i;
            return MHAVIZ_OK;
        }
    return fail(c, "%s.behavior \"%.60s\" is not one of Removed, Isolated, MergedWithPrevious, MergedWithNext, "
                "Contiguous", where, behavior);
}

static int read_metaspace(Ctx *c, const cJSON *p, const char *where, PreStep *step)
{
    const char *replacement, *scheme;
    int split, add_prefix_space;
    if (read_string(c, p, "replacement", where, 1, &replacement) ||
        read_string(c, p, "prepend_scheme", where, 1, &scheme) || read_bool(c, p, "split", where, 1, &split) ||
        read_bool(c, p, "add_prefix_space", where, 1, &add_prefix_space))
        return c->status;
    if (!(step->replacement = dup_string(replacement ? replacement : "\xe2\x96\x81"))) /* "▁" */
        return out_of_memory(c);
    if (!step->replacement[0])
        return fail(c, "%s.replacement is empty", where);
    /* Older files say add_prefix_space instead of prepend_scheme. */
    step->prepend = add_prefix_space ? PREPEND_ALWAYS : PREPEND_NEVER;
    if (scheme && strcmp(scheme, "always") == 0)
        step->prepend = PREPEND_ALWAYS;
    else if (scheme && strcmp(scheme, "first") == 0)
        step->prepend = PREPEND_FIRST;
    else if (scheme && strcmp(scheme, "never") == 0)
        step->prepend = PREPEND_NEVER;
    else if (scheme)
        return fail(c, "%s.prepend_scheme \"%.60s\" is not one of always, first, never", where, scheme);
    if (split && !(step->match = compile(step->replacement, PCRE2_LITERAL)))
        return out_of_memory(c);
    step->behavior = SPLIT_MERGED_NEXT;
    return MHAVIZ_OK;
}

static int read_pre(Ctx *c, Tokenizer *tok, const cJSON *p, const char *where, const char *type)
{
    static const char *const known[] = {"Split", "ByteLevel", "Metaspace", "Digits"};
    int kind = -1;
    for (int i = 0; i < 4; i++)
        if (strcmp(type, known[i]) == 0)
            kind = i;
    if (kind < 0)
        return fail(c, "%s.type \"%.60s\" is not supported (supported pre-tokenizers: Sequence, Split, ByteLevel, "
                    "Metaspace, Digits)", where, type);
    PreStep *step = grow((void **)&tok->pre, &tok->n_pre, sizeof *step);
    if (!step)
        return out_of_memory(c);
    if (kind == 0) {
        step->kind = PRE_SPLIT;
        return read_split(c, p, where, step);
    }
    if (kind == 2) {
        step->kind = PRE_METASPACE;
        return read_metaspace(c, p, where, step);
    }
    if (kind == 3) { /* Digits: a Split on numeric characters, each alone or in runs */
        int each;
        if (read_bool(c, p, "individual_digits", where, 0, &each))
            return c->status;
        step->kind = PRE_SPLIT;
        step->behavior = each ? SPLIT_ISOLATED : SPLIT_CONTIGUOUS;
        return (step->match = compile("\\p{N}", PCRE2_UCP)) ? MHAVIZ_OK : out_of_memory(c);
    }
    int use_regex;
    step->kind = PRE_BYTE_LEVEL;
    step->behavior = SPLIT_ISOLATED;
    tok->byte_level = 1;
    if (read_bool(c, p, "add_prefix_space", where, 1, &step->add_prefix_space) ||
        read_bool(c, p, "use_regex", where, 1, &use_regex))
        return c->status;
    if (use_regex && !(step->match = compile(GPT2_PATTERN, PCRE2_UCP)))
        return out_of_memory(c);
    return MHAVIZ_OK;
}

/* Append id to the post-processor's prefix or suffix. */
static int add_special(Ctx *c, Tokenizer *tok, int after, int id)
{
    if (id >= tok->n_ids || !tok->pieces[id])
        return fail(c, "post_processor: special token id %d is not in the vocabulary or added_tokens", id);
    int **list = after ? &tok->suffix : &tok->prefix, *n = after ? &tok->n_suffix : &tok->n_prefix;
    int *slot = grow((void **)list, n, sizeof *slot);
    if (!slot)
        return out_of_memory(c);
    *slot = id;
    return MHAVIZ_OK;
}

/* TemplateProcessing's "single": [{"SpecialToken": {"id": name}}, {"Sequence": {"id": "A"}}, ...]. */
static int read_template(Ctx *c, Tokenizer *tok, const cJSON *p, const char *where)
{
    const cJSON *single = field(p, "single"), *specials = field(p, "special_tokens"), *item;
    if (!cJSON_IsArray(single))
        return fail(c, "%s.single must be an array", where);
    int i = 0, after = 0;
    cJSON_ArrayForEach(item, single) {
        const cJSON *sp = field(item, "SpecialToken"), *name = field(sp, "id");
        if (cJSON_IsObject(field(item, "Sequence")) && !after) {
            after = 1;
        } else if (cJSON_IsString(name)) {
            const cJSON *ids = field(field(specials, name->valuestring), "ids"), *id;
            if (!cJSON_IsArray(ids))
                return fail(c, "%s.special_tokens[\"%.60s\"].ids must be an array", where, name->valuestring);
            cJSON_ArrayForEach(id, ids) {
                int v = 0;
                if (read_id(c, id, "post_processor.special_tokens[].ids[]", &v) || add_special(c, tok, after, v))
                    return c->status;
            }
        } else {
            return fail(c, "%s.single[%d] must be {\"SpecialToken\": {\"id\": ...}} or the one "
                        "{\"Sequence\": {\"id\": \"A\"}}", where, i);
        }
        i++;
    }
    return after ? MHAVIZ_OK : fail(c, "%s.single has no {\"Sequence\": {\"id\": \"A\"}}", where);
}

static int read_post(Ctx *c, Tokenizer *tok, const cJSON *p, const char *where, const char *type)
{
    if (strcmp(type, "ByteLevel") == 0) /* changes offsets only, never ids */
        return MHAVIZ_OK;
    if (strcmp(type, "TemplateProcessing") == 0)
        return read_template(c, tok, p, where);
    if (strcmp(type, "RobertaProcessing") == 0 || strcmp(type, "BertProcessing") == 0) {
        const cJSON *cls = field(p, "cls"), *sep = field(p, "sep");
        int cls_id = 0, sep_id = 0;
        if (cJSON_GetArraySize(cls) != 2 || cJSON_GetArraySize(sep) != 2)
            return fail(c, "%s.cls and .sep must be [\"token\", id]", where);
        if (read_id(c, cls->child->next, "post_processor.cls[1]", &cls_id) ||
            read_id(c, sep->child->next, "post_processor.sep[1]", &sep_id) || add_special(c, tok, 0, cls_id) ||
            add_special(c, tok, 1, sep_id))
            return c->status;
        return MHAVIZ_OK;
    }
    return fail(c, "%s.type \"%.60s\" is not supported (supported post-processors: Sequence, TemplateProcessing, "
                "ByteLevel, RobertaProcessing, BertProcessing)", where, type);
}

/* The id of a special token named in tokenizer_config.json: a string or
 * {"content": ...}; -1 when absent. */
static int config_token(Ctx *c, const Tokenizer *tok, const cJSON *config, const char *key, int *id)
{
    const cJSON *v = field(config, key);
    *id = -1;
    if (cJSON_IsObject(v))
        v = field(v, "content");
    if (!v || cJSON_IsNull(v))
        return MHAVIZ_OK;
    if (!cJSON_IsString(v))
        return fail(c, "%s must be a string or {\"content\": ...}", key);
    for (int i = 0; i < tok->n_added; i++)
        if (strcmp(tok->added[i].content, v->valuestring) == 0)
            *id = tok->added[i].id;
    if (*id < 0)
        *id = tokenizer_vocab_find(tok, v->valuestring, strlen(v->valuestring));
    return *id >= 0 ? MHAVIZ_OK : fail(c, "%s \"%.60s\" is not a token of tokenizer.json", key, v->valuestring);
}

/* transformers' Llama tokenizers (LlamaTokenizerFast, which loads every
 * "LlamaTokenizer" folder) replace tokenizer.json's post-processor by BOS
 * when add_bos_token (default true) and EOS when add_eos_token (default false). */
static int read_config(Ctx *c, Tokenizer *tok, const cJSON *config)
{
    const cJSON *cls = field(config, "tokenizer_class");
    if (!cJSON_IsString(cls) ||
        (strcmp(cls->valuestring, "LlamaTokenizer") != 0 && strcmp(cls->valuestring, "LlamaTokenizerFast") != 0))
        return MHAVIZ_OK;
    int add_bos, add_eos, bos, eos;
    if (read_bool(c, config, "add_bos_token", "tokenizer_config", 1, &add_bos) ||
        read_bool(c, config, "add_eos_token", "tokenizer_config", 0, &add_eos) ||
        config_token(c, tok, config, "bos_token", &bos) || config_token(c, tok, config, "eos_token", &eos))
        return c->status;
    if ((add_bos && bos < 0) || (add_eos && eos < 0))
        return fail(c, "add_%s_token is true but %s_token is not given", add_bos && bos < 0 ? "bos" : "eos",
                    add_bos && bos < 0 ? "bos" : "eos");
    tok->n_prefix = tok->n_suffix = 0;
    if ((add_bos && add_special(c, tok, 0, bos)) || (add_eos && add_special(c, tok, 1, eos)))
        return c->status;
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */

Tokenizer *tokenizer_load(const char *dir, char *err, size_t errlen)
{
    size_t n = strlen(dir) + sizeof "/tokenizer_config.json";
    char *path = malloc(n);
    Tokenizer *tok = calloc(1, sizeof *tok);
    cJSON *json = NULL, *config = NULL;
    Ctx c = {path, err, errlen, MHAVIZ_OK};
    if (!path || !tok) {
        snprintf(err, errlen, "%s: out of memory", dir);
        c.status = MHAVIZ_ENOMEM;
        goto cleanup;
    }
    snprintf(path, n, "%s/tokenizer.json", dir);
    if (read_json(&c, 0, &json))
        goto cleanup;
    if (!cJSON_IsObject(json)) {
        fail(&c, "must be a JSON object");
        goto cleanup;
    }
    const cJSON *added = field(json, "added_tokens");
    if (read_model(&c, tok, field(json, "model"), cJSON_IsArray(added) ? added : NULL) ||
        read_added(&c, tok, added) ||
        read_steps(&c, tok, field(json, "normalizer"), "normalizers", "normalizer", read_normalizer) ||
        read_steps(&c, tok, field(json, "pre_tokenizer"), "pretokenizers", "pre_tokenizer", read_pre) ||
        read_steps(&c, tok, field(json, "post_processor"), "processors", "post_processor", read_post))
        goto cleanup;
    snprintf(path, n, "%s/tokenizer_config.json", dir);
    if (read_json(&c, 1, &config) || (config && !cJSON_IsObject(config) && fail(&c, "must be a JSON object")) ||
        read_config(&c, tok, config))
        goto cleanup;

cleanup:
    cJSON_Delete(json);
    cJSON_Delete(config);
    free(path);
    if (c.status != MHAVIZ_OK) {
        tokenizer_free(tok);
        return NULL;
    }
    return tok;
}

void tokenizer_free(Tokenizer *tok)
{
    if (!tok)
        return;
    free(tok->pieces);
    free(tok->piece_bytes);
    free(tok->vocab.slot);
    free(tok->merges.key);
    free(tok->merges.rank);
    free(tok->merges.merged);
    for (int i = 0; i < tok->n_added; i++)
        free(tok->added[i].content);
    free(tok->added);
    for (int i = 0; i < tok->n_norm; i++) {
        free(tok->norm[i].text);
        pcre2_code_free(tok->norm[i].match);
    }
    free(tok->norm);
    for (int i = 0; i < tok->n_pre; i++) {
        free(tok->pre[i].replacement);
        pcre2_code_free(tok->pre[i].match);
    }
    free(tok->pre);
    free(tok->prefix);
    free(tok->suffix);
    free(tok);
}
