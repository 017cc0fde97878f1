/* input_parts.h — what the loader's files share (input.c, input_messages.c,
 * input_fields.c); not for use outside io/. */
#ifndef MHAVIZ_INPUT_PARTS_H
#define MHAVIZ_INPUT_PARTS_H

#include "io/input.h"

#include <cjson/cJSON.h>

#include <stddef.h>

/* Deepest nesting the format needs is 4 (object, single_head, matrix, row);
 * anything much deeper is not an mhaviz input. */
#define MAX_NESTING 32

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
    const cJSON *emb_table; /* the "embeddings" emb_of was found in */
    MhaInput *in;         /* the input being read: the .npy files it maps go into in->maps */
    const char *where;    /* the layer being read in a file of "layers" ("layers[1]"), or NULL:
                           * every message and warning names it after the file */
} Loader;

/* What a dimension is, for messages: "8 (d_model)". */
typedef struct {
    int n;
    const char *why;
} Dim;

/* Where each weight lives in the JSON, and its shape in the x@W layout. */
typedef struct {
    const cJSON *W[4]; /* W_q, W_k, W_v, W_o (required) */
    const cJSON *b[4]; /* b_q, b_k, b_v, b_o (optional) */
    Dim in[4], out[4]; /* x@W shape of W[i]: (in, out); b[i] has out[i] numbers */
    const char *prefix; /* "" or "single_head." */
} LayerJson;

/* ---- input_messages.c: the loader's state and its messages; text-level checks; keys */

/* Write "name: <message>" into the error buffer; returns MHAVIZ_EINPUT. */
int input_fail(Loader *L, const char *fmt, ...);

int input_fail_nomem(Loader *L);

/* Append one warning line "warning: name: <message>\n". */
void input_warn(Loader *L, const char *fmt, ...);

/* A short name for a JSON value's type, for "expected X, got Y" messages. */
const char *input_type_name(const cJSON *v);

/* Number of elements of a JSON array or object, in one walk. */
size_t input_count_items(const cJSON *a);

/* One pass over the raw text: no NUL bytes (raw or \u0000), nesting at most MAX_NESTING.
 * (cJSON would stop at a NUL inside a string and silently cut it; its own
 * nesting limit is 1000 and its error gives no reason.)
 * Also counts what parsing will allocate: one cJSON node per value, plus a
 * copy of every string (keys included), so *parse_bytes bounds the memory
 * the parse needs, text included, before it starts. */
int input_scan_text(Loader *L, const char *text, size_t len, size_t *parse_bytes);

/* Explain a cJSON syntax error at byte offset off: syntax_explain names
 * the mistake (trailing comma, missing comma, single quotes, ...) and the
 * offset it is at. */
int input_fail_syntax(Loader *L, const char *text, size_t len, size_t off);

/* Copy s, replacing every byte that is not part of valid UTF-8 with U+FFFD.
 * Sets *bad to the number of replacements. NULL when out of memory. */
char *input_utf8_clean(const char *s, int *bad);

int input_check_keys(Loader *L, const cJSON *obj, const char *const *known, const char *where);

/* ---- input_fields.c: the small fields, the arrays, the layers, the embeddings */

/* A whole number in [lo, hi] under key; absent -> *out = dflt (required: dflt < 0). */
int input_read_int(Loader *L, const cJSON *root, const char *key, int lo, int hi,
                   const char *hi_why, int dflt, int *out);

int input_read_tokens(Loader *L, const cJSON *root, MhaInput *in, const cJSON **tokens_json);

/* Copy the token strings, replacing invalid UTF-8 (with a warning). */
int input_copy_tokens(Loader *L, const cJSON *tok, MhaInput *in);

/* The optional "title": a string of at most INPUT_MAX_TITLE_BYTES bytes,
 * invalid UTF-8 replaced (with a warning) as in the tokens. */
int input_read_title(Loader *L, const cJSON *root, MhaInput *in);

/* The optional "training" into *t (docs/input.md); has_single: the input
 * gave "single_head", which "training" describes. */
int input_read_training(Loader *L, const cJSON *root, int has_single, const MhaConfig *c, Training *t);

/* A matrix stored as rows.n rows of cols.n numbers under key. dst NULL:
 * check the shape only, allocating nothing. Otherwise copy into dst,
 * transposed when transpose (dst is then (cols.n, rows.n)). A .npy file
 * name is accepted and left alone (dst untouched): input_load_array reads it. */
int input_read_matrix(Loader *L, const cJSON *m, const char *key, Dim rows, Dim cols,
                      int transpose, float *dst);

/* The matrix (or, rows.n < 0, the vector) under key into *dst, transposed
 * when transpose: a .npy file's numbers in place when the file holds them
 * as they are (npy_load_floats maps it; the mapping goes into L->in->maps),
 * else a new array of the input's own. */
int input_load_array(Loader *L, const cJSON *a, const char *key, Dim rows, Dim cols, int transpose, float **dst);

int input_find_layer(Loader *L, const cJSON *obj, const char *prefix, Dim d_model, Dim kv,
                     LayerJson *lj);

/* Check (w NULL) or load the layer into *w (input_load_array; the biases not
 * given are zeros). W@x files hold each W transposed. */
int input_read_layer(Loader *L, const LayerJson *lj, int w_at_x, MhaWeights *w);

/* Check the table (every entry d_model numbers, none given twice) and find
 * each token's entry, into L->emb_of (T). Allocates only what the data's
 * own size bounds. pos: the "positional" string when it sits in the table. */
int input_find_embeddings(Loader *L, const cJSON *emb, const cJSON *pos, const cJSON *tokens,
                          Dim D);

/* x_t = embeddings[tokens[t]] + PE(t), into in->x (T, d_model). */
int input_embed_tokens(Loader *L, int sinusoidal, MhaInput *in);

#endif
