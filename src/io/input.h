/* input.h — load and validate an mhaviz input file.
 *
 * The input is a JSON object (format in docs/input.md): tokens, shapes, the
 * input hidden states (x, or an embedding table plus positions) and the
 * projection weights. After loading, every matrix is in the "x@W" layout
 * (rows are input features) whatever layout the file used. */
#ifndef MHAVIZ_INPUT_H
#define MHAVIZ_INPUT_H

#include <stddef.h>

/* Hyper-parameters of one attention layer. */
typedef struct {
    int T;           /* tokens in the sequence */
    int d_model;     /* width of each hidden state */
    int n_heads;     /* query heads */
    int n_kv_heads;  /* key/value heads: n_heads = MHA, 1 = MQA, between = GQA */
    int head_dim;    /* d_model / n_heads */
    int causal;      /* 1: query i sees keys 0..i only */
} MhaConfig;

/* kv_dim = n_kv_heads * head_dim: width of k and v. */
static inline int mha_kv_dim(const MhaConfig *c) { return c->n_kv_heads * c->head_dim; }

/* Projection weights of one attention layer, "x@W" layout. */
typedef struct {
    float *W_q;   /* (d_model, d_model)  q = x W_q + b_q */
    float *W_k;   /* (d_model, kv_dim)   k = x W_k + b_k */
    float *W_v;   /* (d_model, kv_dim)   v = x W_v + b_v */
    float *W_o;   /* (d_model, d_model)  out = concat W_o + b_o */
    float *b_q;   /* (d_model) zeros when the input gave none */
    float *b_k;   /* (kv_dim) */
    float *b_v;   /* (kv_dim) */
    float *b_o;   /* (d_model) */
    int has_bias; /* 1 when the input gave any bias (the cost table counts them) */
} MhaWeights;

/* A loaded input. Build with input_load / input_parse, free with input_free. */
typedef struct {
    MhaConfig cfg;
    char **tokens;     /* (T) NUL-terminated UTF-8 strings */
    char *title;       /* the optional "title" (UTF-8, at most INPUT_MAX_TITLE_BYTES), or NULL */
    float *x;          /* (T, d_model) input hidden states */
    MhaWeights w;      /* the multi-head layer */
    int has_single;    /* 1 when "single_head" gave its own weights */
    MhaWeights single; /* (d_model, d_model) each; valid when has_single */
    char *warnings;    /* newline-separated warnings (e.g. unknown keys), or NULL */
    size_t parse_bytes; /* memory the JSON text and cJSON's tree took while parsed (counted
                         * before parsing: one 80-byte node per value, each string's copy) */
} MhaInput;

/* Stated limits, checked before any allocation sized by the input. */
#define INPUT_MAX_T 4096                   /* tokens */
#define INPUT_MAX_D_MODEL 16384            /* hidden width */
#define INPUT_MAX_HEADS 512                /* query heads */
#define INPUT_MAX_TITLE_BYTES 200          /* the optional "title", shown under the overview's title */
#define INPUT_MAX_FILE_BYTES ((size_t)1 << 30) /* 1 GiB of JSON */
#define INPUT_MAX_MEMORY_MB 2048           /* default bound on the run's estimated memory */
/* Bytes of memory per byte of JSON text while it is parsed, for numbers
 * printed with about 6 significant digits (the text plus cJSON's tree: one
 * 64-byte node, 80 bytes from malloc, per number of about 11 characters with
 * its ", ": 1 + 80 / 11 = 8.3). The loader itself counts the exact figure in
 * the text before parsing. */
#define INPUT_JSON_MEMORY_FACTOR 9

typedef struct {
    int max_T, max_d_model, max_heads;
    size_t max_file_bytes;   /* size of the JSON file */
    size_t max_memory_bytes; /* input_memory_estimate must stay under this */
} InputLimits;

/* Fill *lim with the defaults above. */
void input_default_limits(InputLimits *lim);

/* Estimated bytes of the arrays of a whole run for config c (the input, the
 * weights, both forward passes, the maps' copies for the pictures and the
 * reports), plus parsing json_bytes of typical JSON. The pictures' canvases
 * and the program itself are the caller's to add (cli/main.c). */
size_t input_memory_estimate(const MhaConfig *c, size_t json_bytes);

/* Read and validate the JSON file at path into *in.
 * Returns MHAVIZ_OK, MHAVIZ_EINPUT (bad content; err names the place, e.g.
 * "input.json:12:5: ..." or "W_k: row 3 has 7 numbers, expected 8 (d_model)"),
 * MHAVIZ_EIO (cannot read the file) or MHAVIZ_ENOMEM.
 * On success the caller owns *in and frees it with input_free. On failure
 * *in holds only in->warnings (they often explain the error, e.g. an
 * unknown "W_Q" beside a missing "W_q"): free it with input_free too.
 * Uses the default limits. */
int input_load(const char *path, MhaInput *in, char *err, size_t errlen);

/* input_load with explicit limits (NULL: the defaults). */
int input_load_limits(const char *path, const InputLimits *lim, MhaInput *in, char *err,
                      size_t errlen);

/* Same as input_load, for JSON text already in memory. name is used in
 * messages (e.g. the file name); base_dir resolves relative file references
 * (NULL: the current folder). */
int input_parse(const char *text, size_t len, const char *name, const char *base_dir,
                MhaInput *in, char *err, size_t errlen);

/* input_parse with explicit limits (NULL: the defaults). */
int input_parse_limits(const char *text, size_t len, const char *name, const char *base_dir,
                       const InputLimits *lim, MhaInput *in, char *err, size_t errlen);

/* Add the sinusoidal positions to x (T, d_model) in place:
 * x[t][2i] += sin(t / 10000^(2i/d_model)), x[t][2i+1] += cos(the same angle). */
void input_add_positions(float *x, int T, int d_model);

/* Free everything *in owns and zero it. Safe on a zeroed or failed input. */
void input_free(MhaInput *in);

/* Free the arrays of a weights struct and zero it. */
void input_weights_free(MhaWeights *w);

#endif
