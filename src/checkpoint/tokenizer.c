/* tokenizer.c — text to token ids, in the order Hugging Face's tokenizers
 * runs its pipeline (llama2.c's encode is the same idea, smaller):
 *
 *   1. added tokens   cut "<|endoftext|>", "<s>", ... out of the raw text
 *   2. normalizer     rewrite each remaining part ("▁" for spaces, NFC, ...),
 *                     then cut out the added tokens matched after normalizing
 *   3. pre-tokenizer  split the parts into words (a regex), map bytes to
 *                     GPT-2's byte alphabet
 *   4. model (BPE)    each word: one piece per character, then merge the
 *                     adjacent pair of lowest rank until no pair merges
 *   5. post-processor the special tokens around the whole (a BOS)
 *
 * A Part is a piece of text on its way through steps 1-3; a part that is an
 * added token carries its id and is left alone by the later steps. */
#include "checkpoint/tokenizer.h"
#include "checkpoint/tokenizer_parts.h"
#include "core/status.h"
#include "text/utf8.h"

#include <limits.h>
#include <utf8proc.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    char *s;      /* (len) the part's bytes, owned */
    size_t len;
    int at_start; /* begins the text (Metaspace's prepend_scheme "first") */
    int id;       /* an added token's id, or -1: text still to tokenize */
} Part;

typedef struct {
    Part *p; /* (n) */
    int n, cap;
} Parts;

typedef struct {
    int *v; /* (n) */
    int n, cap;
} Ids;

/* The failure of a step: its status and message (the caller's buffer). */
typedef struct {
    char *err;
    size_t errlen;
} Err;

static int no_memory(Err *e)
{
    snprintf(e->err, e->errlen, "out of memory while tokenizing");
    return MHAVIZ_ENOMEM;
}

static int ids_push(Ids *ids, int id)
{
    if (ids->n == ids->cap) {
        int cap = ids->cap ? 2 * ids->cap : 64;
        int *v = realloc(ids->v, (size_t)cap * sizeof *v);
        if (!v)
            return -1;
        ids->v = v;
        ids->cap = cap;
    }
    ids->v[ids->n++] = id;
    return 0;
}

/* Append a part holding a copy of s[0..len) (skipped when empty and not a token). */
static int parts_push(Parts *parts, const char *s, size_t len, int at_start, int id)
{
    if (len == 0 && id < 0)
        return 0;
    if (parts->n == parts->cap) {
        int cap = parts->cap ? 2 * parts->cap : 16;
        Part *p = realloc(parts->p, (size_t)cap * sizeof *p);
        if (!p)
            return -1;
        parts->p = p;
        parts->cap = cap;
    }
    char *copy = malloc(len + 1);
    if (!copy)
        return -1;
    memcpy(copy, s, len);
    copy[len] = '\0';
    parts->p[parts->n++] = (Part){copy, len, at_start, id};
    return 0;
}

static void parts_free(Parts *parts)
{
    for (int i = 0; i < parts->n; i++)
        free(parts->p[i].s);
    free(parts->p);
    *parts = (Parts){0};
}

/* ------------------------------------------------------------------------ */
/* Regex matches (PCRE2)                                                     */

typedef struct {
    size_t start, end; /* the bytes [start, end) of a part */
    int is_match;      /* matched by the pattern (after invert) */
} Segment;

/* s[0..len) cut into segments: the pattern's matches and the gaps between
 * them, in order, covering it all. *segs is malloc'd (caller frees). Empty
 * matches are skipped (they would give empty parts, which are dropped). */
static int find_segments(const pcre2_code *re, const char *s, size_t len, int invert, Segment **segs, int *n_segs,
                         Err *e)
{
    pcre2_match_data *md = pcre2_match_data_create_from_pattern(re, NULL);
    int n = 0, cap = 16, status = MHAVIZ_OK;
    Segment *out = malloc((size_t)cap * sizeof *out);
    if (!md || !out) {
        status = no_memory(e);
        goto cleanup;
    }
    size_t at = 0, gap = 0; /* where the next search starts; where the current gap starts */
    while (at <= len) {
        int rc = pcre2_match(re, (PCRE2_SPTR)s, len, at, 0, md, NULL);
        if (rc == PCRE2_ERROR_NOMATCH)
            break;
        if (rc < 0) {
            PCRE2_UCHAR msg[128];
            pcre2_get_error_message(rc, msg, sizeof msg);
            snprintf(e->err, e->errlen, "the tokenizer's pattern failed on this text: %s", (const char *)msg);
            status = MHAVIZ_EINPUT;
            goto cleanup;
        }
        PCRE2_SIZE *ov = pcre2_get_ovector_pointer(md);
        size_t start = ov[0], end = ov[1];
        if (end == start) { /* step over one character */
            at = end + 1;
            while (at < len && ((unsigned char)s[at] & 0xC0) == 0x80)
                at++;
            continue;
        }
        if (n + 2 > cap) {
            cap *= 2;
            Segment *bigger = realloc(out, (size_t)cap * sizeof *out);
            if (!bigger) {
                status = no_memory(e);
                goto cleanup;
            }
            out = bigger;
        }
        if (start > gap)
            out[n++] = (Segment){gap, start, invert};
        out[n++] = (Segment){start, end, !invert};
        gap = at = end;
    }
    if (gap < len) {
        if (n + 1 > cap) {
            Segment *bigger = realloc(out, (size_t)(cap + 1) * sizeof *out);
            if (!bigger) {
                status = no_memory(e);
                goto cleanup;
            }
            out = bigger;
        }
        out[n++] = (Segment){gap, len, invert};
    }
cleanup:
    pcre2_match_data_free(md);
    if (status != MHAVIZ_OK) {
        free(out);
        out = NULL;
        n = 0;
    }
    *segs = out;
    *n_segs = n;
    return status;
}

/* Split part by the pattern, keeping its matches as behavior says
 * (tokenizers' SplitDelimiterBehavior), into out. */
static int split_part(const pcre2_code *re, SplitBehavior behavior, int invert, const Part *part, Parts *out, Err *e)
{
    Segment *seg;
    int n;
    int status = find_segments(re, part->s, part->len, invert, &seg, &n, e);
    if (status)
        return status;
    /* The pieces to keep, joined from the segments in place: seg[0..k). */
    int k = 0, previous_match = 0;
    for (int i = 0; i < n; i++) {
        Segment s = seg[i];
        if (behavior == SPLIT_REMOVED && s.is_match)
            continue;
        int join = 0; /* extend the piece before instead of starting one */
        if (behavior == SPLIT_MERGED_PREVIOUS)
            join = s.is_match && !previous_match && k > 0;
        else if (behavior == SPLIT_CONTIGUOUS)
            join = s.is_match == previous_match && k > 0;
        else if (behavior == SPLIT_MERGED_NEXT)
            join = !s.is_match && previous_match && k > 0;
        if (join)
            seg[k - 1].end = s.end;
        else
            seg[k++] = (Segment){s.start, s.end, s.is_match};
        previous_match = s.is_match;
    }
    for (int i = 0; i < k && status == MHAVIZ_OK; i++)
        if (parts_push(out, part->s + seg[i].start, seg[i].end - seg[i].start, part->at_start && seg[i].start == 0,
                       -1))
            status = no_memory(e);
    free(seg);
    return status;
}

/* ------------------------------------------------------------------------ */
/* 1. Added tokens                                                           */

static int is_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\v' || c == '\f';
}

/* The longest added token (of those matched in normalized text or not, as
 * normalized says) at s[at..len), or NULL. */
static const AddedToken *added_at(const Tokenizer *tok, const char *s, size_t len, size_t at, int normalized)
{
    const AddedToken *best = NULL;
    for (int i = 0; i < tok->n_added; i++) {
        const AddedToken *t = &tok->added[i];
        if (t->normalized == normalized && t->len <= len - at && (!best || t->len > best->len) &&
            memcmp(s + at, t->content, t->len) == 0)
            best = t;
    }
    return best;
}

/* Cut the added tokens out of every text part of *parts: leftmost first,
 * the longest at a place; lstrip/rstrip take the white space beside them. */
static int split_added(const Tokenizer *tok, Parts *parts, int normalized, Err *e)
{
    Parts out = {0};
    for (int i = 0; i < parts->n; i++) {
        const Part *p = &parts->p[i];
        size_t text_start = 0; /* the text not yet given to out starts here */
        int fails = 0;
        for (size_t at = 0; p->id < 0 && at < p->len && !fails;) {
            const AddedToken *t =
                tok->added_starts[(unsigned char)p->s[at]] ? added_at(tok, p->s, p->len, at, normalized) : NULL;
            if (!t) {
                at++;
                continue;
            }
            size_t start = at, end = at + t->len;
            while (t->lstrip && start > text_start && is_space(p->s[start - 1]))
                start--;
            while (t->rstrip && end < p->len && is_space(p->s[end]))
                end++;
            fails = parts_push(&out, p->s + text_start, start - text_start, p->at_start && text_start == 0, -1) ||
                    parts_push(&out, t->content, t->len, 0, t->id);
            text_start = at = end;
        }
        if (fails || (p->id >= 0 ? parts_push(&out, p->s, p->len, 0, p->id)
                                 : parts_push(&out, p->s + text_start, p->len - text_start,
                                              p->at_start && text_start == 0, -1))) {
            parts_free(&out);
            return no_memory(e);
        }
    }
    parts_free(parts);
    *parts = out;
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* 2. Normalizer                                                             */

/* part's text replaced by s[0..len) (taken over). */
static void part_set(Part *part, char *s, size_t len)
{
    free(part->s);
    part->s = s;
    part->len = len;
}

/* Every match of re in part replaced by with. */
static int replace_all(const pcre2_code *re, const char *with, Part *part, Err *e)
{
    Segment *seg;
    int n;
    int status = find_segments(re, part->s, part->len, 0, &seg, &n, e);
    if (status)
        return status;
    size_t wlen = strlen(with), len = 0;
    for (int i = 0; i < n; i++)
        len += seg[i].is_match ? wlen : seg[i].end - seg[i].start;
    char *s = malloc(len + 1);
    if (!s) {
        free(seg);
        return no_memory(e);
    }
    size_t at = 0;
    for (int i = 0; i < n; i++) {
        const char *src = seg[i].is_match ? with : part->s + seg[i].start;
        size_t k = seg[i].is_match ? wlen : seg[i].end - seg[i].start;
        memcpy(s + at, src, k);
        at += k;
    }
    s[len] = '\0';
    free(seg);
    part_set(part, s, len);
    return MHAVIZ_OK;
}

/* front + part's text. */
static int prepend(const char *front, Part *part, Err *e)
{
    size_t flen = strlen(front);
    char *s = malloc(flen + part->len + 1);
    if (!s)
        return no_memory(e);
    memcpy(s, front, flen);
    memcpy(s + flen, part->s, part->len + 1);
    part_set(part, s, flen + part->len);
    return MHAVIZ_OK;
}

/* part in a Unicode normal form (utf8proc: form is its options). */
static int unicode_form(int form, Part *part, Err *e)
{
    utf8proc_uint8_t *s = NULL;
    utf8proc_ssize_t len = utf8proc_map((const utf8proc_uint8_t *)part->s, (utf8proc_ssize_t)part->len, &s,
                                        (utf8proc_option_t)form);
    if (len < 0) {
        snprintf(e->err, e->errlen, "the text cannot be normalized: %s", utf8proc_errmsg(len));
        return len == UTF8PROC_ERROR_NOMEM ? MHAVIZ_ENOMEM : MHAVIZ_EINPUT;
    }
    part_set(part, (char *)s, (size_t)len);
    return MHAVIZ_OK;
}

static int normalize(const Tokenizer *tok, Part *part, Err *e)
{
    for (int i = 0; i < tok->n_norm; i++) {
        const NormStep *n = &tok->norm[i];
        int status = n->kind == NORM_UNICODE ? unicode_form(n->form, part, e)
                     : n->kind == NORM_PREPEND ? (part->len > 0 ? prepend(n->text, part, e) : MHAVIZ_OK)
                                               : replace_all(n->match, n->text, part, e);
        if (status)
            return status;
    }
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* 3. Pre-tokenizer                                                          */

/* GPT-2's byte alphabet: bytes that print stand for themselves, the others
 * (controls, space, 127-160, 173) are U+0100 onwards in byte order. */
static int byte_prints(unsigned b)
{
    return (b >= 33 && b <= 126) || (b >= 161 && b <= 172) || b >= 174;
}

static unsigned byte_char(unsigned char b)
{
    if (byte_prints(b))
        return b;
    unsigned n = 0;
    for (unsigned x = 0; x < b; x++)
        n += !byte_prints(x);
    return 256 + n;
}

/* The byte code point cp stands for, or -1 when it is not in the alphabet. */
static int char_byte(unsigned cp)
{
    if (cp < 256)
        return byte_prints(cp) ? (int)cp : -1;
    unsigned n = 256;
    for (unsigned x = 0; x < 256; x++)
        if (!byte_prints(x) && n++ == cp)
            return (int)x;
    return -1;
}

/* Each byte of part as its character of the byte alphabet (UTF-8). */
static int map_bytes(Part *part, Err *e)
{
    char *s = malloc(2 * part->len + 1);
    if (!s)
        return no_memory(e);
    size_t at = 0;
    for (size_t i = 0; i < part->len; i++) {
        unsigned cp = byte_char((unsigned char)part->s[i]);
        if (cp < 0x80) {
            s[at++] = (char)cp;
        } else {
            s[at++] = (char)(0xC0 | cp >> 6);
            s[at++] = (char)(0x80 | (cp & 0x3F));
        }
    }
    s[at] = '\0';
    part_set(part, s, at);
    return MHAVIZ_OK;
}

/* Metaspace's rewrite before it splits: spaces become the replacement, which
 * goes in front as the prepend scheme says. */
static int metaspace(const PreStep *step, Part *part, Err *e)
{
    size_t rlen = strlen(step->replacement), n_spaces = 0;
    for (size_t i = 0; i < part->len; i++)
        n_spaces += part->s[i] == ' ';
    char *s = malloc(part->len + n_spaces * rlen + rlen + 1);
    if (!s)
        return no_memory(e);
    size_t at = 0;
    for (size_t i = 0; i < part->len; i++) {
        if (part->s[i] == ' ') {
            memcpy(s + at, step->replacement, rlen);
            at += rlen;
        } else {
            s[at++] = part->s[i];
        }
    }
    s[at] = '\0';
    int front = step->prepend == PREPEND_ALWAYS || (step->prepend == PREPEND_FIRST && part->at_start);
    if (front && !(at >= rlen && memcmp(s, step->replacement, rlen) == 0)) {
        memmove(s + rlen, s, at + 1);
        memcpy(s, step->replacement, rlen);
        at += rlen;
    }
    part_set(part, s, at);
    return MHAVIZ_OK;
}

/* One pre-tokenizer step over every text part of *parts. */
static int pre_step(const PreStep *step, Parts *parts, Err *e)
{
    Parts out = {0};
    int status = MHAVIZ_OK;
    for (int i = 0; i < parts->n && status == MHAVIZ_OK; i++) {
        Part *p = &parts->p[i];
        int first = out.n;
        if (p->id >= 0) {
            status = parts_push(&out, p->s, p->len, 0, p->id) ? no_memory(e) : MHAVIZ_OK;
            continue;
        }
        if (step->kind == PRE_BYTE_LEVEL && step->add_prefix_space && p->s[0] != ' ')
            status = prepend(" ", p, e);
        else if (step->kind == PRE_METASPACE)
            status = metaspace(step, p, e);
        if (status)
            break;
        if (step->match)
            status = split_part(step->match, step->behavior, step->invert, p, &out, e);
        else
            status = parts_push(&out, p->s, p->len, p->at_start, -1) ? no_memory(e) : MHAVIZ_OK;
        for (int k = first; k < out.n && status == MHAVIZ_OK && step->kind == PRE_BYTE_LEVEL; k++)
            status = map_bytes(&out.p[k], e);
    }
    parts_free(parts);
    *parts = out;
    return status;
}

/* ------------------------------------------------------------------------ */
/* 4. The model: BPE                                                         */

/* The merge of pair (a, b): its rank (INT_MAX when the pair never merges)
 * and the merged piece's id. */
static int merge_rank(const MergeMap *m, int a, int b, int *merged)
{
    uint64_t key = (uint64_t)(uint32_t)a << 32 | (uint32_t)b;
    size_t i = (size_t)(key * 11400714819323198485u >> 20) & m->mask;
    for (; m->key[i] != UINT64_MAX; i = (i + 1) & m->mask)
        if (m->key[i] == key) {
            *merged = m->merged[i];
            return m->rank[i];
        }
    return INT_MAX;
}

/* word's pieces appended to ids. */
static int bpe_word(const Tokenizer *tok, const char *word, size_t len, Ids *ids, Err *e)
{
    int whole = tok->ignore_merges ? tokenizer_vocab_find(tok, word, len) : -1;
    if (whole >= 0)
        return ids_push(ids, whole) ? no_memory(e) : MHAVIZ_OK;

    /* One symbol per character (or per byte with byte_fallback). */
    int *sym = malloc(3 * (len + 1) * sizeof *sym); /* (len) ids, then (len) ranks, (len) merged ids */
    if (!sym)
        return no_memory(e);
    int *rank = sym + len + 1, *merged = rank + len + 1;
    int n = 0, last_unk = 0;
    for (size_t i = 0; i < len;) {
        int k = utf8_decode((const unsigned char *)word + i, len - i, NULL);
        if (k == 0)
            k = 1; /* (never: the text was checked, and every step keeps it UTF-8) */
        int id = tokenizer_vocab_find(tok, word + i, (size_t)k), found = id >= 0;
        if (found) {
            sym[n++] = id;
        } else if (tok->byte_fallback) {
            int b_ids[4];
            found = 1;
            for (int b = 0; b < k && found; b++) {
                char name[8];
                snprintf(name, sizeof name, "<0x%02X>", (unsigned char)word[i + b]);
                found = (b_ids[b] = tokenizer_vocab_find(tok, name, 6)) >= 0;
            }
            for (int b = 0; found && b < k; b++)
                sym[n++] = b_ids[b];
        }
        if (!found && tok->unk_id >= 0 && !(tok->fuse_unk && last_unk))
            sym[n++] = tok->unk_id;
        last_unk = !found && tok->unk_id >= 0;
        i += (size_t)k;
    }

    /* Merge the pair of lowest rank (the leftmost of equals) until none merges. */
    for (int i = 0; i + 1 < n; i++)
        rank[i] = merge_rank(&tok->merges, sym[i], sym[i + 1], &merged[i]);
    while (n > 1) {
        int best = 0;
        for (int i = 1; i + 1 < n; i++)
            if (rank[i] < rank[best])
                best = i;
        if (rank[best] == INT_MAX)
            break;
        sym[best] = merged[best];
        memmove(sym + best + 1, sym + best + 2, (size_t)(n - best - 2) * sizeof *sym);
        memmove(rank + best + 1, rank + best + 2, (size_t)(n - best - 2) * sizeof *rank);
        memmove(merged + best + 1, merged + best + 2, (size_t)(n - best - 2) * sizeof *merged);
        n--;
        if (best > 0)
            rank[best - 1] = merge_rank(&tok->merges, sym[best - 1], sym[best], &merged[best - 1]);
        if (best + 1 < n)
            rank[best] = merge_rank(&tok->merges, sym[best], sym[best + 1], &merged[best]);
    }
    int status = MHAVIZ_OK;
    for (int i = 0; i < n && status == MHAVIZ_OK; i++)
        if (ids_push(ids, sym[i]))
            status = no_memory(e);
    free(sym);
    return status;
}

/* ------------------------------------------------------------------------ */

int tokenizer_encode(const Tokenizer *tok, const char *text, int **ids_out, int *n_ids, char *err, size_t errlen)
{
    Err e = {err, errlen};
    Parts parts = {0};
    Ids ids = {0};
    int status = MHAVIZ_OK;
    *ids_out = NULL;
    *n_ids = 0;
    if (!text || !text[0]) {
        snprintf(err, errlen, "the text is empty: a model needs at least one token");
        return MHAVIZ_EINPUT;
    }
    size_t len = strlen(text);
    for (size_t i = 0; i < len;) {
        int k = utf8_decode((const unsigned char *)text + i, len - i, NULL);
        if (k == 0) {
            snprintf(err, errlen, "the text is not UTF-8 at byte %zu", i);
            return MHAVIZ_EINPUT;
        }
        i += (size_t)k;
    }

    /* 1. added tokens, 2. normalizer (and the added tokens it reveals) */
    if (parts_push(&parts, text, len, 1, -1)) {
        status = no_memory(&e);
        goto cleanup;
    }
    if ((status = split_added(tok, &parts, 0, &e)))
        goto cleanup;
    for (int i = 0; i < parts.n; i++)
        if (parts.p[i].id < 0 && (status = normalize(tok, &parts.p[i], &e)))
            goto cleanup;
    if ((status = split_added(tok, &parts, 1, &e)))
        goto cleanup;

    /* 3. pre-tokenizer */
    for (int i = 0; i < tok->n_pre; i++)
        if ((status = pre_step(&tok->pre[i], &parts, &e)))
            goto cleanup;

    /* 4. model, 5. post-processor */
    for (int i = 0; i < tok->n_prefix && status == MHAVIZ_OK; i++)
        status = ids_push(&ids, tok->prefix[i]) ? no_memory(&e) : MHAVIZ_OK;
    for (int i = 0; i < parts.n && status == MHAVIZ_OK; i++) {
        const Part *p = &parts.p[i];
        if (p->id >= 0)
            status = ids_push(&ids, p->id) ? no_memory(&e) : MHAVIZ_OK;
        else
            status = bpe_word(tok, p->s, p->len, &ids, &e);
    }
    for (int i = 0; i < tok->n_suffix && status == MHAVIZ_OK; i++)
        status = ids_push(&ids, tok->suffix[i]) ? no_memory(&e) : MHAVIZ_OK;
    if (status == MHAVIZ_OK && ids.n == 0) {
        snprintf(err, errlen, "the text gives no token (none of its characters is in the vocabulary)");
        status = MHAVIZ_EINPUT;
    }

cleanup:
    parts_free(&parts);
    if (status != MHAVIZ_OK) {
        free(ids.v);
        return status;
    }
    *ids_out = ids.v;
    *n_ids = ids.n;
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */

/* "<0xNN>": the byte NN, else -1. */
static int fallback_byte(const char *piece)
{
    unsigned b;
    char end;
    if (strlen(piece) != 6 || sscanf(piece, "<0x%2X%c", &b, &end) != 2 || end != '>')
        return -1;
    return (int)b;
}

char *tokenizer_piece_text(const Tokenizer *tok, int id)
{
    if (id < 0 || id >= tok->n_ids)
        return NULL;
    const char *piece = tok->pieces[id] ? tok->pieces[id] : "";
    int added = 0;
    for (int i = 0; i < tok->n_added; i++)
        added |= tok->added[i].id == id;
    size_t len = strlen(piece);
    /* The piece's bytes: at most len (a character of the byte alphabet is
     * one byte or more; "▁" three bytes for one space). */
    unsigned char *bytes = malloc(len + 1);
    if (!bytes)
        return NULL;
    size_t n = 0;
    int b = tok->byte_fallback && !added ? fallback_byte(piece) : -1;
    if (b >= 0) {
        bytes[n++] = (unsigned char)b;
    } else {
        for (size_t i = 0; i < len;) {
            unsigned cp;
            int k = utf8_decode((const unsigned char *)piece + i, len - i, &cp);
            int byte = k > 0 && tok->byte_level && !added ? char_byte(cp) : -1;
            if (byte >= 0) {
                bytes[n++] = (unsigned char)byte;
            } else if (k == 3 && !tok->byte_level && !added && cp == 0x2581) { /* "▁" */
                bytes[n++] = ' ';
            } else {
                k = k > 0 ? k : 1;
                memcpy(bytes + n, piece + i, (size_t)k);
                n += (size_t)k;
            }
            i += (size_t)(k > 0 ? k : 1);
        }
    }
    /* Bytes that are not UTF-8 on their own as U+FFFD (text/token_text.h). */
    char *text = malloc(3 * n + 1);
    if (!text) {
        free(bytes);
        return NULL;
    }
    size_t at = 0;
    for (size_t i = 0; i < n;) {
        int k = utf8_decode(bytes + i, n - i, NULL);
        if (k == 0) {
            memcpy(text + at, "\xef\xbf\xbd", 3);
            at += 3;
            k = 1;
        } else {
            memcpy(text + at, bytes + i, (size_t)k);
            at += (size_t)k;
        }
        i += (size_t)k;
    }
    text[at] = '\0';
    free(bytes);
    return text;
}

int tokenizer_vocab_size(const Tokenizer *tok)
{
    return tok->n_ids;
}

void tokenizer_specials(const Tokenizer *tok, int *n_prefix, int *n_suffix)
{
    *n_prefix = tok->n_prefix;
    *n_suffix = tok->n_suffix;
}
