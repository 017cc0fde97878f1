/* tokenizer_parts.h — what tokenizer_load.c (reading tokenizer.json) and
 * tokenizer.c (running it) share: the Tokenizer's insides. Private to
 * src/checkpoint/. */
#ifndef MHAVIZ_TOKENIZER_PARTS_H
#define MHAVIZ_TOKENIZER_PARTS_H

#define PCRE2_CODE_UNIT_WIDTH 8
#include <pcre2.h>
#include <stddef.h>
#include <stdint.h>

/* One step of the normalizer (a "Sequence" is flattened into its steps). */
typedef enum { NORM_PREPEND, NORM_REPLACE, NORM_UNICODE } NormKind;
typedef struct {
    NormKind kind;
    char *text;        /* Prepend: what goes in front; Replace: the replacement */
    pcre2_code *match; /* Replace: the pattern (a "String" compiled literally) */
    int form;          /* Unicode: utf8proc's options for NFC, NFD, NFKC or NFKD */
} NormStep;

/* How a Split keeps the pieces its pattern matches (tokenizers'
 * SplitDelimiterBehavior). */
typedef enum { SPLIT_REMOVED, SPLIT_ISOLATED, SPLIT_MERGED_PREVIOUS, SPLIT_MERGED_NEXT, SPLIT_CONTIGUOUS } SplitBehavior;

/* One step of the pre-tokenizer (a "Sequence" flattened). */
typedef enum { PRE_SPLIT, PRE_BYTE_LEVEL, PRE_METASPACE } PreKind;
typedef enum { PREPEND_ALWAYS, PREPEND_FIRST, PREPEND_NEVER } PrependScheme;
typedef struct {
    PreKind kind;
    pcre2_code *match;      /* Split: the pattern; ByteLevel: GPT-2's regex when use_regex;
                               Metaspace: the replacement, when it splits */
    SplitBehavior behavior; /* Split */
    int invert;             /* Split: keep what the pattern does not match */
    int add_prefix_space;   /* ByteLevel: a space in front of a part not starting with one */
    char *replacement;      /* Metaspace: what a space becomes ("▁") */
    PrependScheme prepend;  /* Metaspace */
} PreStep;

/* An added token (tokenizer.json's added_tokens[i]): cut out of the text
 * before the model sees it. */
typedef struct {
    char *content;
    size_t len;
    int id;
    int lstrip, rstrip; /* the white space on its left / right goes with it */
    int normalized;     /* matched in the normalized text, not the raw one */
} AddedToken;

/* Open addressing, linear probing. A slot holds an id (-1: empty) and the
 * high bits of its piece's hash, side by side: most probes that miss read
 * neither another cache line nor the piece. */
typedef struct {
    int id;
    uint32_t tag;
} PieceSlot;

typedef struct {
    PieceSlot *slot; /* (mask + 1) */
    size_t mask;     /* table size - 1, a power of two minus one */
} PieceMap;

typedef struct {
    uint64_t *key; /* (mask + 1) (left id << 32 | right id), UINT64_MAX = empty */
    int *rank;     /* (mask + 1) the merge's line in merges: lower merges first */
    int *merged;   /* (mask + 1) the id of the joined piece */
    size_t mask;
} MergeMap;

struct Tokenizer {
    char **pieces;       /* (n_ids) each id's piece as stored (NULL for an unused id),
                            in piece_bytes or an added token's content */
    char *piece_bytes;   /* the vocabulary's pieces, each NUL-terminated */
    int n_ids;           /* largest id + 1 */
    PieceMap vocab;      /* piece -> id, for the model's vocabulary */
    MergeMap merges;     /* pair of ids -> rank and merged id */
    int ignore_merges;   /* a word found whole in the vocabulary is one piece */
    int byte_fallback;   /* an unknown character becomes its bytes' <0xNN> pieces */
    int unk_id;          /* -1 when the model has no unk_token */
    int fuse_unk;        /* consecutive unknown characters give one unk */
    int byte_level;      /* pieces are in GPT-2's byte alphabet (a ByteLevel step) */
    AddedToken *added;   /* (n_added) */
    int n_added;
    char added_starts[256]; /* 1 for a byte that begins an added token */
    NormStep *norm;      /* (n_norm) */
    int n_norm;
    PreStep *pre;        /* (n_pre) */
    int n_pre;
    int *prefix;         /* (n_prefix) ids the post-processor puts before the text */
    int n_prefix;
    int *suffix;         /* (n_suffix) ... and after it */
    int n_suffix;
};

/* The id of piece s[0..len) in the model's vocabulary, -1 when absent. */
int tokenizer_vocab_find(const Tokenizer *tok, const char *s, size_t len);

#endif
