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

/* The keys an input may have (docs/input.md): at the top of a file of one
 * layer and in each layer of a file of "layers" (there without "tokens"),
 * beside "layers", and in "single_head". */
static const char *const top_keys[] = {
    "tokens", "d_model", "n_heads", "n_kv_heads", "causal", "x", "embeddings",
    "positional", "W_q", "W_k", "W_v", "W_o", "weight_layout", "b_q", "b_k",
    "b_v", "b_o", "single_head", "training", "comment", "title", NULL,
};
static const char *const layers_keys[] = {"tokens", "layers", "title", "comment", NULL};
static const char *const single_keys[] = {
    "W_q", "W_k", "W_v", "W_o", "b_q", "b_k", "b_v", "b_o", "comment", NULL,
};

/* The most layers a file of "layers" may hold. */
#define MAX_LAYERS 1024

/* ------------------------------------------------------------------------ */
/* One layer                                                                */

/* The layer's shapes and flags: d_model, n_heads (and head_dim),
 * n_kv_heads, causal. */
static int read_sizes(Loader *L, const cJSON *obj, MhaConfig *c)
{
    int rc;
    if ((rc = input_read_int(L, obj, "d_model", 1, L->lim->max_d_model, "", -1, &c->d_model)) != MHAVIZ_OK)
        return rc;
    if ((rc = input_read_int(L, obj, "n_heads", 1, L->lim->max_heads, "", -1, &c->n_heads)) != MHAVIZ_OK)
        return rc;
    if (c->d_model % c->n_heads != 0)
        return input_fail(L, "n_heads: %d does not divide d_model = %d (head_dim = d_model / n_heads "
                             "must be a whole number)", c->n_heads, c->d_model);
    c->head_dim = c->d_model / c->n_heads;
    if ((rc = input_read_int(L, obj, "n_kv_heads", 1, c->n_heads, " (n_heads)", c->n_heads,
                             &c->n_kv_heads)) != MHAVIZ_OK)
        return rc;
    if (c->n_heads % c->n_kv_heads != 0)
        return input_fail(L, "n_kv_heads: %d does not divide n_heads = %d (each K/V head serves "
                             "n_heads / n_kv_heads query heads)", c->n_kv_heads, c->n_heads);
    const cJSON *causal = cJSON_GetObjectItemCaseSensitive(obj, "causal");
    c->causal = 1;
    if (causal) {
        if (!cJSON_IsBool(causal))
            return input_fail(L, "causal: expected true or false, got %s", input_type_name(causal));
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
    return input_fail(L, "weight_layout: expected \"x@W\" or \"W@x\", got %s%s%s",
                      cJSON_IsString(layout) ? "\"" : input_type_name(layout),
                      cJSON_IsString(layout) ? layout->valuestring : "", cJSON_IsString(layout) ? "\"" : "");
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
        return input_fail(L, "both \"x\" and \"embeddings\" given; give exactly one");
    if (!*x && !*emb)
        return input_fail(L, "missing the hidden states: give \"x\" (T rows of d_model numbers) "
                             "or \"embeddings\" (token -> d_model numbers)");
    if (*x && *pos)
        return input_fail(L, "positional: only applies to \"embeddings\"; this input gives \"x\"");
    if (*emb && !cJSON_IsObject(*emb))
        return input_fail(L, "embeddings: expected an object mapping each token to %d numbers, got %s",
                          c->d_model, input_type_name(*emb));
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
        return input_fail(L, "positional: expected \"sinusoidal\" or \"none\", got %s%s%s",
                          cJSON_IsString(*pos) ? "\"" : input_type_name(*pos),
                          cJSON_IsString(*pos) ? (*pos)->valuestring : "", cJSON_IsString(*pos) ? "\"" : "");
    return MHAVIZ_OK;
}

/* Where one layer's arrays sit in the JSON, each shape checked, nothing
 * allocated yet. */
typedef struct {
    const cJSON *x, *emb, *pos; /* the hidden states: x, or the embeddings and "positional" */
    const cJSON *sh;            /* "single_head", or NULL */
    int w_at_x, sinusoidal;
    LayerJson layer, single;
} LayerPlan;

/* Steps 3 and 4 of the safety argument (top of this file) for the layer in
 * obj, whose tokens (T in in->cfg) are tokens_json: its shapes, every
 * array's shape, its "training". */
static int plan_layer(Loader *L, const cJSON *obj, const cJSON *tokens_json, MhaInput *in, LayerPlan *p)
{
    int rc;
    MhaConfig *c = &in->cfg;
    if ((rc = read_sizes(L, obj, c)) != MHAVIZ_OK || (rc = read_weight_layout(L, obj, &p->w_at_x)) != MHAVIZ_OK ||
        (rc = find_hidden_states(L, obj, c, &p->x, &p->emb, &p->pos, &p->sinusoidal)) != MHAVIZ_OK)
        return rc;

    const Dim T = {c->T, "T, the number of tokens"};
    const Dim D = {c->d_model, "d_model"};
    const Dim KV = {mha_kv_dim(c), c->n_kv_heads == c->n_heads ? "d_model" : "n_kv_heads x head_dim"};

    p->sh = cJSON_GetObjectItemCaseSensitive(obj, "single_head");
    if (p->x && (rc = input_read_matrix(L, p->x, "x", T, D, 0, NULL)) != MHAVIZ_OK)
        return rc;
    if ((rc = input_find_layer(L, obj, "", D, KV, &p->layer)) != MHAVIZ_OK ||
        (rc = input_read_layer(L, &p->layer, p->w_at_x, NULL)) != MHAVIZ_OK)
        return rc;
    if (p->sh) {
        if (!cJSON_IsObject(p->sh))
            return input_fail(L, "single_head: expected an object with W_q, W_k, W_v, W_o, got %s",
                              input_type_name(p->sh));
        if ((rc = input_check_keys(L, p->sh, single_keys, "single_head.")) != MHAVIZ_OK ||
            (rc = input_find_layer(L, p->sh, "single_head.", D, D, &p->single)) != MHAVIZ_OK ||
            (rc = input_read_layer(L, &p->single, p->w_at_x, NULL)) != MHAVIZ_OK)
            return rc;
    }
    if (p->emb && (rc = input_find_embeddings(L, p->emb, p->pos, tokens_json, D)) != MHAVIZ_OK)
        return rc;
    return input_read_training(L, obj, p->sh != NULL, c, &in->training);
}

/* Step 6 for a planned layer: x (given, or the embeddings and positions)
 * and the weights. */
static int copy_layer(Loader *L, const LayerPlan *p, const cJSON *tokens_json, MhaInput *in)
{
    int rc;
    const MhaConfig *c = &in->cfg;
    if (p->x) {
        if ((rc = input_load_array(L, p->x, "x", (Dim){c->T, "T, the number of tokens"}, (Dim){c->d_model, "d_model"},
                                   0, &in->x)) != MHAVIZ_OK)
            return rc;
    } else {
        /* the entries were found for another layer's table when there are several */
        if (L->emb_table != p->emb &&
            (rc = input_find_embeddings(L, p->emb, p->pos, tokens_json, (Dim){c->d_model, "d_model"})) != MHAVIZ_OK)
            return rc;
        if (!(in->x = malloc((size_t)c->T * c->d_model * sizeof(float)))) // (T, d_model)
            return input_fail_nomem(L);
        if ((rc = input_embed_tokens(L, p->sinusoidal, in)) != MHAVIZ_OK)
            return rc;
    }
    if ((rc = input_read_layer(L, &p->layer, p->w_at_x, &in->w)) != MHAVIZ_OK)
        return rc;
    if (p->sh) {
        in->has_single = 1;
        if ((rc = input_read_layer(L, &p->single, p->w_at_x, &in->single)) != MHAVIZ_OK)
            return rc;
    }
    return MHAVIZ_OK;
}

/* Step 5: the memory the run will need (each of n_layers layers of config
 * c loaded, one run at a time), before any allocation sized by the shapes. */
static int check_memory(Loader *L, const MhaConfig *c, int n_layers, size_t parse_bytes)
{
    size_t need = memory_estimate_parsed(c, parse_bytes);
    for (int i = 1; i < n_layers; i++)
        need = need + memory_input(c) < need ? SIZE_MAX : need + memory_input(c);
    if (need <= L->lim->max_memory_bytes)
        return MHAVIZ_OK;
    return input_fail(L, "this run would need about %zu MB of memory (T = %d, d_model = %d, n_heads = %d%s), over the "
                         "limit of %zu MB; raise it with --max-memory MB",
                      (need >> 20) + 1, c->T, c->d_model, c->n_heads, n_layers > 1 ? ", every layer" : "",
                      L->lim->max_memory_bytes >> 20);
}

/* ------------------------------------------------------------------------ */
/* The whole input                                                          */

/* A file of one layer, in root, into *in. */
static int load_one(Loader *L, const cJSON *root, size_t parse_bytes, MhaInput *in)
{
    int rc;
    const cJSON *tokens_json = NULL;
    LayerPlan p;
    if ((rc = input_check_keys(L, root, top_keys, "")) != MHAVIZ_OK ||
        (rc = input_read_tokens(L, root, in, &tokens_json)) != MHAVIZ_OK ||
        (rc = input_read_title(L, root, in)) != MHAVIZ_OK ||
        (rc = plan_layer(L, root, tokens_json, in, &p)) != MHAVIZ_OK ||
        (rc = check_memory(L, &in->cfg, 1, parse_bytes)) != MHAVIZ_OK)
        return rc;
    if ((rc = input_copy_tokens(L, tokens_json, in)) != MHAVIZ_OK)
        return rc;
    return copy_layer(L, &p, tokens_json, in);
}

/* to's own copy of from's tokens (to->cfg.T = from->cfg.T of them). */
static int same_tokens(Loader *L, const MhaInput *from, MhaInput *to)
{
    if (!(to->tokens = calloc((size_t)from->cfg.T, sizeof *to->tokens)))
        return input_fail_nomem(L);
    for (int t = 0; t < from->cfg.T; t++)
        if (!(to->tokens[t] = strdup(from->tokens[t])))
            return input_fail_nomem(L);
    return MHAVIZ_OK;
}

/* 1 when key is one of keys (NULL-terminated). */
static int listed(const char *const *keys, const char *key)
{
    for (int k = 0; keys[k]; k++)
        if (strcmp(keys[k], key) == 0)
            return 1;
    return 0;
}

/* Layer i's shapes beside layer 0's: the run's chance and its grid hold
 * for one shape, one mask and one kind of wide head. */
static int same_as_first(Loader *L, const MhaInput *in, const cJSON *sh, const MhaInput *first, int first_single)
{
    const MhaConfig *c = &in->cfg, *c0 = &first->cfg;
    const char *what = c->d_model != c0->d_model       ? "d_model"
                     : c->n_heads != c0->n_heads       ? "n_heads"
                     : c->n_kv_heads != c0->n_kv_heads ? "n_kv_heads"
                                                       : NULL;
    if (what) {
        const int v = c->d_model != c0->d_model ? c->d_model : c->n_heads != c0->n_heads ? c->n_heads : c->n_kv_heads;
        const int v0 = c->d_model != c0->d_model ? c0->d_model : c->n_heads != c0->n_heads ? c0->n_heads : c0->n_kv_heads;
        return input_fail(L, "%s: %d, but layers[0] has %d; every layer of a file has the same shape", what, v, v0);
    }
    if (c->causal != c0->causal)
        return input_fail(L, "causal: %s, but layers[0] has %s; every layer of a file has the same mask",
                          c->causal ? "true" : "false", c0->causal ? "true" : "false");
    if ((sh != NULL) != first_single)
        return input_fail(L, "single_head: %s, but %s in layers[0]; give one to every layer or to none",
                          sh ? "given here" : "missing here", first_single ? "given" : "missing");
    return MHAVIZ_OK;
}

/* A file of "layers" in root into *ins (*n of them, malloc'd): the
 * tokens, title and comment beside "layers", each layer an object as a
 * file of one layer is, but for "tokens" (shared). */
static int load_layers(Loader *L, const cJSON *root, size_t parse_bytes, MhaInput **ins, int *n)
{
    int rc;
    const cJSON *tokens_json = NULL, *layers = cJSON_GetObjectItemCaseSensitive(root, "layers"), *e;
    for (const cJSON *k = root->child; k; k = k->next)
        if (listed(top_keys, k->string) && !listed(layers_keys, k->string))
            return input_fail(L, "%s: a layer's key beside \"layers\"; give it inside each layer (layers[0].%s, ...)",
                              k->string, k->string);
    if ((rc = input_check_keys(L, root, layers_keys, "")) != MHAVIZ_OK)
        return rc;
    if (!cJSON_IsArray(layers))
        return input_fail(L, "layers: expected an array of layer objects, got %s", input_type_name(layers));
    const size_t count = input_count_items(layers);
    if (count == 0)
        return input_fail(L, "layers: the array is empty; give at least one layer object");
    if (count > MAX_LAYERS)
        return input_fail(L, "layers: %zu layers is over the limit of %d", count, MAX_LAYERS);
    MhaInput *first = *ins;
    if ((rc = input_read_tokens(L, root, first, &tokens_json)) != MHAVIZ_OK ||
        (rc = input_read_title(L, root, first)) != MHAVIZ_OK)
        return rc;
    const int T = first->cfg.T;
    char *title = first->title;
    first->title = NULL;
    MhaInput *all = realloc(*ins, count * sizeof *all); // (count) the layers
    LayerPlan *plans = calloc(count, sizeof *plans);     // (count) where each one's arrays are
    if (all)
        *ins = L->in = all;
    if (!all || !plans) {
        free(plans);
        free(title);
        return input_fail_nomem(L);
    }
    memset(all + 1, 0, (count - 1) * sizeof *all);
    *n = (int)count;
    char where[32];
    L->where = where;
    int i = 0;
    cJSON_ArrayForEach(e, layers) {
        snprintf(where, sizeof where, "layers[%d]", i);
        MhaInput *in = &all[i];
        in->cfg.T = T;
        in->layer = i;
        in->n_layers = (int)count;
        if (!cJSON_IsObject(e))
            rc = input_fail(L, "expected a layer object { \"d_model\": ..., \"x\": ..., \"W_q\": ... }, got %s", input_type_name(e));
        else if (cJSON_GetObjectItemCaseSensitive(e, "tokens"))
            rc = input_fail(L, "tokens: every layer reads the same tokens; give them once, beside \"layers\"");
        else if ((rc = input_check_keys(L, e, top_keys, "")) == MHAVIZ_OK &&
                 (rc = input_read_title(L, e, in)) == MHAVIZ_OK &&
                 (rc = plan_layer(L, e, tokens_json, in, &plans[i])) == MHAVIZ_OK && i > 0)
            rc = same_as_first(L, in, plans[i].sh, &all[0], plans[0].sh != NULL);
        if (rc != MHAVIZ_OK)
            break;
        i++;
    }
    L->where = NULL;
    if (rc == MHAVIZ_OK)
        rc = check_memory(L, &all[0].cfg, (int)count, parse_bytes);

    /* Copy everything out: the tokens (their warnings once), then each
     * layer's own copy of them, the file's title when it has none of its
     * own, its arrays. */
    if (rc == MHAVIZ_OK)
        rc = input_copy_tokens(L, tokens_json, &all[0]);
    for (i = 0; rc == MHAVIZ_OK && i < (int)count; i++) {
        MhaInput *in = &all[i];
        if (i > 0 && (rc = same_tokens(L, &all[0], in)) != MHAVIZ_OK)
            break;
        if (!in->title && title && !(in->title = strdup(title))) {
            rc = input_fail_nomem(L);
            break;
        }
        snprintf(where, sizeof where, "layers[%d]", i);
        L->where = where;
        L->in = in; /* the .npy files this layer maps */
        rc = copy_layer(L, &plans[i], tokens_json, in);
        L->where = NULL;
    }
    L->in = &all[0];
    free(plans);
    free(title);
    return rc;
}

/* The text into *ins (one zeroed input, the caller's; grown to *n for a
 * file of "layers"). nul_after: text[len] is a readable NUL (input_load's
 * own buffer), so the text need not be copied. On failure *ins holds one
 * input with only the warnings. */
static int parse_text(const char *text, size_t len, int nul_after, const char *name, const char *base_dir,
                      const InputLimits *lim, MhaInput **ins, int *n, char *err, size_t errlen)
{
    InputLimits dflt;
    if (!lim) {
        input_default_limits(&dflt);
        lim = &dflt;
    }
    Loader L = {name ? name : "input", base_dir ? base_dir : ".", lim, err, errlen, NULL, 0, 0, 0, NULL, NULL, *ins, NULL};
    cJSON *root = NULL;
    int rc;
    *n = 1;
    if (errlen)
        err[0] = '\0';

    /* cJSON wants the text NUL-terminated; a UTF-8 byte order mark is skipped. */
    char *buf = NULL;
    if (len >= 3 && memcmp(text, "\xEF\xBB\xBF", 3) == 0) {
        text += 3;
        len -= 3;
    }
    if (len == 0) {
        rc = input_fail(&L, "the file is empty");
        goto cleanup;
    }
    size_t parse_bytes = 0;
    if ((rc = input_scan_text(&L, text, len, &parse_bytes)) != MHAVIZ_OK)
        goto cleanup;
    if (parse_bytes > lim->max_memory_bytes) {
        rc = input_fail(&L, "parsing this JSON (%zu MB of text) would need about %zu MB of memory, over "
                            "the limit of %zu MB; raise it with --max-memory MB, or give the matrices as "
                            ".npy files", len >> 20, (parse_bytes >> 20) + 1, lim->max_memory_bytes >> 20);
        goto cleanup;
    }
    if (!nul_after) { /* text[len] is not ours to read: copy (the caller gave len bytes) */
        buf = malloc(len + 1); // (len + 1) the text and a NUL
        if (!buf) {
            rc = input_fail_nomem(&L);
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
        rc = input_fail_syntax(&L, text, len, end ? (size_t)(end - text) : 0);
        goto cleanup;
    }
    if (!cJSON_IsObject(root))
        rc = input_fail(&L, "expected a JSON object { ... } at the top, got %s", input_type_name(root));
    else if (cJSON_GetObjectItemCaseSensitive(root, "layers"))
        rc = load_layers(&L, root, parse_bytes, ins, n);
    else
        rc = load_one(&L, root, parse_bytes, *ins);
    for (int i = 0; i < *n; i++)
        (*ins)[i].parse_bytes = parse_bytes;

cleanup:
    cJSON_Delete(root);
    free(buf);
    free(L.emb_of);
    if (rc == MHAVIZ_OK && L.nomem)
        rc = input_fail_nomem(&L);
    if (rc != MHAVIZ_OK) {
        for (int i = 0; i < *n; i++)
            input_free(&(*ins)[i]);
        *n = 1;
    }
    /* Warnings are kept on failure too: they often explain the error
     * (an unknown "W_Q" beside a missing "W_q"). */
    (*ins)[0].warnings = L.warn;
    return rc;
}

/* One zeroed input into *ins (*n = 1), for parse_text to fill. */
static int one_input(MhaInput **ins, int *n, char *err, size_t errlen)
{
    *n = 1;
    if ((*ins = calloc(1, sizeof **ins)))
        return MHAVIZ_OK;
    snprintf(err, errlen, "out of memory");
    return MHAVIZ_ENOMEM;
}

/* The input of the one-layer calls out of what parse_text read into all
 * (n of them): a file of "layers" is refused. */
static int only_one(int rc, MhaInput *all, int n, const char *name, MhaInput *in, char *err, size_t errlen)
{
    memset(in, 0, sizeof *in);
    if (!all)
        return rc;
    if (rc == MHAVIZ_OK && all[0].n_layers > 0) {
        snprintf(err, errlen, "%s: layers: a file of %d layers, where one layer was expected (mhaviz itself runs "
                 "every layer of it)", name ? name : "input", n);
        char *warnings = all[0].warnings;
        all[0].warnings = NULL;
        for (int i = 0; i < n; i++)
            input_free(&all[i]);
        all[0].warnings = warnings;
        n = 1;
        rc = MHAVIZ_EINPUT;
    }
    *in = all[0];
    for (int i = 1; i < n; i++)
        input_free(&all[i]);
    free(all);
    return rc;
}

int input_parse_layers(const char *text, size_t len, const char *name, const char *base_dir,
                       const InputLimits *lim, MhaInput **in, int *n, char *err, size_t errlen)
{
    int rc = one_input(in, n, err, errlen);
    return rc == MHAVIZ_OK ? parse_text(text, len, 0, name, base_dir, lim, in, n, err, errlen) : rc;
}

int input_parse_limits(const char *text, size_t len, const char *name, const char *base_dir,
                       const InputLimits *lim, MhaInput *in, char *err, size_t errlen)
{
    MhaInput *all = NULL;
    int n;
    int rc = input_parse_layers(text, len, name, base_dir, lim, &all, &n, err, errlen);
    return only_one(rc, all, n, name, in, err, errlen);
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
int input_load_layers(const char *path, const InputLimits *lim, MhaInput **in, int *n, char *err, size_t errlen)
{
    InputLimits dflt;
    if (!lim) {
        input_default_limits(&dflt);
        lim = &dflt;
    }
    char *text = NULL, *dir = NULL;
    size_t len = 0;
    int rc = one_input(in, n, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;

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
    rc = parse_text(text, len, 1, path, dir, lim, in, n, err, errlen);
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

int input_load_limits(const char *path, const InputLimits *lim, MhaInput *in, char *err, size_t errlen)
{
    MhaInput *all = NULL;
    int n;
    int rc = input_load_layers(path, lim, &all, &n, err, errlen);
    return only_one(rc, all, n, path, in, err, errlen);
}

int input_load(const char *path, MhaInput *in, char *err, size_t errlen)
{
    return input_load_limits(path, NULL, in, err, errlen);
}
