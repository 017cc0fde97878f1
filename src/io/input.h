/* input.h — load and validate an mhaviz input file.
 *
 * The input is a JSON object (format in docs/input.md): tokens, shapes, the
 * input hidden states (x, or an embedding table plus positions) and the
 * projection weights. After loading, every matrix is in the "x@W" layout
 * (rows are input features) whatever layout the file used. */
#ifndef MHAVIZ_INPUT_H
#define MHAVIZ_INPUT_H

#include "core/layer.h"

#include <stddef.h>

/* Stated limits, checked before any allocation sized by the input. */
#define INPUT_MAX_T 4096                   /* tokens */
#define INPUT_MAX_D_MODEL 16384            /* hidden width */
#define INPUT_MAX_HEADS 512                /* query heads */
#define INPUT_MAX_TITLE_BYTES 200          /* the optional "title", shown under the overview's title */
#define INPUT_MAX_FILE_BYTES ((size_t)1 << 30) /* 1 GiB of JSON */
#define INPUT_MAX_MEMORY_MB 2048           /* default bound on the run's estimated memory */
typedef struct {
    int max_T, max_d_model, max_heads;
    size_t max_file_bytes;   /* size of the JSON file */
    size_t max_memory_bytes; /* memory_estimate (core/memory.h) must stay under this */
} InputLimits;

/* Fill *lim with the defaults above. */
void input_default_limits(InputLimits *lim);

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

/* input_load_limits for a file of one layer or of several ("layers",
 * docs/input.md): *in (malloc'd) gets *n layers, each with its own copy of
 * the tokens; in a file of "layers", in[i].layer = i and in[i].n_layers =
 * *n (0 in a file of one layer). Messages name the layer: "layers[1]: x:
 * has 9 rows, expected 11 (T, the number of tokens)". Every layer is
 * input_free'd, then *in freed, on failure too (*n is then 1 and in[0]
 * holds only the warnings; *in is NULL when out of memory).
 * input_load and input_parse refuse a file of "layers". */
int input_load_layers(const char *path, const InputLimits *lim, MhaInput **in, int *n, char *err, size_t errlen);

/* input_load_layers for JSON text in memory (as input_parse_limits). */
int input_parse_layers(const char *text, size_t len, const char *name, const char *base_dir,
                       const InputLimits *lim, MhaInput **in, int *n, char *err, size_t errlen);

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

#endif
