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
 *   6. only then allocate, copy every number out as a float (a float32
 *      .npy file is read in place instead: io/npy.c maps it), refusing
 *      non-finite ones and ones too big for a float, with their place, and
 *      free the JSON tree once.
 * Every message names the place: the key, the row and column (counted from
 * 0), or file:line:col for syntax errors. */
#include "io/input.h"
#include "io/input_parts.h"
#include "core/memory.h"
#include "core/status.h"
#include "io/npy.h"
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

void input_default_limits(InputLimits *lim)
{
    lim->max_T = INPUT_MAX_T;
    lim->max_d_model = INPUT_MAX_D_MODEL;
    lim->max_heads = INPUT_MAX_HEADS;
    lim->max_file_bytes = INPUT_MAX_FILE_BYTES;
    lim->max_memory_bytes = (size_t)INPUT_MAX_MEMORY_MB << 20;
}

/* 1 when a points into one of in's mapped .npy files: the file's pages,
 * unmapped by input_free, never given to free(). */
static int mapped(const MhaInput *in, const float *a)
{
    for (int i = 0; i < in->n_maps; i++)
        if (in->maps[i].data == a)
            return 1;
    return 0;
}

/* mha_weights_free(w), the arrays that are mapped files left out. */
static void free_weights(const MhaInput *in, MhaWeights *w)
{
    float **arrays[8] = {&w->W_q, &w->W_k, &w->W_v, &w->W_o, &w->b_q, &w->b_k, &w->b_v, &w->b_o};
    for (int i = 0; i < 8; i++)
        if (mapped(in, *arrays[i]))
            *arrays[i] = NULL;
    mha_weights_free(w);
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
    if (!mapped(in, in->x))
        free(in->x);
    free_weights(in, &in->w);
    free_weights(in, &in->single);
    for (int i = 0; i < in->n_maps; i++)
        npy_unmap(&in->maps[i]);
    free(in->warnings);
    mha_model_source_free(in->model);
    memset(in, 0, sizeof *in);
}

/* The keys an input may have (docs/input.md), at the top and in "single_head". */
static const char *const top_keys[] = {
    "tokens", "d_model", "n_heads", "n_kv_heads", "causal", "x", "embeddings",
    "positional", "W_q", "W_k", "W_v", "W_o", "weight_layout", "b_q", "b_k",
    "b_v", "b_o", "single_head", "training", "comment", "title", NULL,
};
static const char *const single_keys[] = {
    "W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "comment", NULL,
};

/* ------------------------------------------------------------------------ */
/* The whole input                                                          */

/* The shapes and flags: the tokens, the title, d_model, n_heads (and
 * head_dim), n_kv_heads, causal. */
static int read_shapes(Loader *L, const cJSON *root, MhaInput *in, const cJSON **tokens_json)
{
    int rc;
    MhaConfig *c = &in->cfg;
    if ((rc = read_tokens(L, root, in, tokens_json)) != MHAVIZ_OK || (rc = read_title(L, root, in)) != MHAVIZ_OK)
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
    return MHAVIZ_OK;
}

/* "weight_layout": *w_at_x 1 for "W@x", 0 for "x@W" (also when absent). */
static int read_weight_layout(Loader *L, const cJSON *root, int *w_at_x)
{
    *w_at_x = 0;
    const cJSON *layout = cJSON_GetObjectItemCaseSensitive(root, "weight_layout");
    if (!layout || (cJSON_IsString(layout) && strcmp(layout->valuestring, "x@W") == 0))
        return MHAVIZ_OK;
    if (cJSON_IsString(layout) && strcmp(layout->valuestring, "W@x") == 0) {
        *w_at_x = 1;
        return MHAVIZ_OK;
    }
    return fail(L, "weight_layout: expected \"x@W\" or \"W@x\", got %s%s%s",
                cJSON_IsString(layout) ? "\"" : type_name(layout), cJSON_IsString(layout) ? layout->valuestring : "",
                cJSON_IsString(layout) ? "\"" : "");
}

/* The hidden states: *x, or *emb (token -> d_model numbers) with its
 * positions *pos ("positional", at the top or inside the embeddings), and
 * whether sinusoidal positions are added. */
static int find_hidden_states(Loader *L, const cJSON *root, const MhaConfig *c, const cJSON **x, const cJSON **emb,
                              const cJSON **pos, int *sinusoidal)
{
    *x = cJSON_GetObjectItemCaseSensitive(root, "x");
    *emb = cJSON_GetObjectItemCaseSensitive(root, "embeddings");
    *pos = cJSON_GetObjectItemCaseSensitive(root, "positional");
    if (*x && *emb)
        return fail(L, "both \"x\" and \"embeddings\" given; give exactly one");
    if (!*x && !*emb)
        return fail(L, "missing the hidden states: give \"x\" (T rows of d_model numbers) "
                       "or \"embeddings\" (token -> d_model numbers)");
    if (*x && *pos)
        return fail(L, "positional: only applies to \"embeddings\"; this input gives \"x\"");
    if (*emb && !cJSON_IsObject(*emb))
        return fail(L, "embeddings: expected an object mapping each token to %d numbers, got %s",
                    c->d_model, type_name(*emb));
    if (*emb && !*pos) { /* "positional" may also sit inside the embeddings object */
        const cJSON *p = cJSON_GetObjectItemCaseSensitive(*emb, "positional");
        if (p && cJSON_IsString(p))
            *pos = p;
    }
    *sinusoidal = *emb != NULL;
    if (!*pos)
        return MHAVIZ_OK;
    if (cJSON_IsString(*pos) && strcmp((*pos)->valuestring, "sinusoidal") == 0)
        *sinusoidal = 1;
    else if (cJSON_IsString(*pos) && strcmp((*pos)->valuestring, "none") == 0)
        *sinusoidal = 0;
    else
        return fail(L, "positional: expected \"sinusoidal\" or \"none\", got %s%s%s",
                    cJSON_IsString(*pos) ? "\"" : type_name(*pos), cJSON_IsString(*pos) ? (*pos)->valuestring : "",
                    cJSON_IsString(*pos) ? "\"" : "");
    return MHAVIZ_OK;
}

/* The input in root, checked in the order of the safety argument (top of
 * this file): the shapes, every array's shape, the memory, then the copies. */
static int load_tree(Loader *L, const cJSON *root, size_t parse_bytes, MhaInput *in)
{
    int rc, w_at_x, sinusoidal;
    MhaConfig *c = &in->cfg;
    const cJSON *tokens_json = NULL, *x, *emb, *pos;

    if (!cJSON_IsObject(root))
        return fail(L, "expected a JSON object { ... } at the top, got %s", type_name(root));
    if ((rc = check_keys(L, root, top_keys, "")) != MHAVIZ_OK ||
        (rc = read_shapes(L, root, in, &tokens_json)) != MHAVIZ_OK ||
        (rc = read_weight_layout(L, root, &w_at_x)) != MHAVIZ_OK ||
        (rc = find_hidden_states(L, root, c, &x, &emb, &pos, &sinusoidal)) != MHAVIZ_OK)
        return rc;

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
    if ((rc = read_training(L, root, sh != NULL, c, &in->training)) != MHAVIZ_OK)
        return rc;

    /* The memory the run will need, before any allocation sized by the shapes. */
    size_t need = memory_estimate_parsed(c, parse_bytes);
    if (need > L->lim->max_memory_bytes)
        return fail(L, "this run would need about %zu MB of memory (T = %d, d_model = %d, "
                       "n_heads = %d), over the limit of %zu MB; raise it with --max-memory MB",
                    (need >> 20) + 1, c->T, c->d_model, c->n_heads, L->lim->max_memory_bytes >> 20);

    /* Copy everything out. */
    if ((rc = copy_tokens(L, tokens_json, in)) != MHAVIZ_OK)
        return rc;
    if (x) {
        if ((rc = load_array(L, x, "x", T, D, 0, &in->x)) != MHAVIZ_OK)
            return rc;
    } else {
        if (!(in->x = malloc((size_t)c->T * c->d_model * sizeof(float))))
            return fail_nomem(L);
        if ((rc = embed_tokens(L, sinusoidal, in)) != MHAVIZ_OK)
            return rc;
    }
    if ((rc = read_layer(L, &layer, w_at_x, &in->w)) != MHAVIZ_OK)
        return rc;
    if (sh) {
        in->has_single = 1;
        if ((rc = read_layer(L, &single, w_at_x, &in->single)) != MHAVIZ_OK)
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
    Loader L = {name ? name : "input", base_dir ? base_dir : ".", lim, err, errlen, NULL, 0, 0, 0, NULL, in};
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

/* Long on purpose: the file read in the order of the safety argument at the top of this file. */
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
