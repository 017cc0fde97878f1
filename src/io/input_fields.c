/* input_fields.c — the input's fields, each checked against the shapes
 * it claims: the small fields (numbers, tokens, title), the matrices and
 * vectors (inline or .npy), the layers' weights, the embeddings. */
#include "io/input_parts.h"
#include "core/status.h"
#include "io/npy.h"
#include "text/utf8.h"

#include <cjson/cJSON.h>

#include <errno.h>
#include <fcntl.h>
#include <float.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

/* ------------------------------------------------------------------------ */
/* Small fields                                                             */

int input_read_int(Loader *L, const cJSON *root, const char *key, int lo, int hi,
                   const char *hi_why, int dflt, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(root, key);
    if (!v) {
        if (dflt < 0)
            return input_fail(L, "missing \"%s\" (a whole number >= %d)", key, lo);
        *out = dflt;
        return MHAVIZ_OK;
    }
    if (!cJSON_IsNumber(v))
        return input_fail(L, "%s: expected a whole number, got %s", key, input_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d) || d != floor(d))
        return input_fail(L, "%s: expected a whole number, got %g", key, d);
    if (d < lo)
        return input_fail(L, "%s: must be at least %d, got %.15g", key, lo, d);
    if (d > hi)
        return input_fail(L, "%s: %.15g is over the limit of %d%s", key, d, hi, hi_why);
    *out = (int)d;
    return MHAVIZ_OK;
}

int input_read_tokens(Loader *L, const cJSON *root, MhaInput *in, const cJSON **tokens_json)
{
    const cJSON *tok = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    if (!tok)
        return input_fail(L, "missing \"tokens\" (an array of strings, one per token)");
    if (!cJSON_IsArray(tok))
        return input_fail(L, "tokens: expected an array of strings, got %s", input_type_name(tok));
    size_t T = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, tok) {
        if (!cJSON_IsString(e))
            return input_fail(L, "tokens[%zu]: expected a string, got %s", T, input_type_name(e));
        T++;
    }
    if (T == 0)
        return input_fail(L, "tokens: the array is empty; give at least one token");
    if (T > (size_t)L->lim->max_T)
        return input_fail(L, "tokens: %zu tokens is over the limit of %d", T, L->lim->max_T);
    in->cfg.T = (int)T;
    *tokens_json = tok;
    return MHAVIZ_OK;
}

int input_copy_tokens(Loader *L, const cJSON *tok, MhaInput *in)
{
    in->tokens = calloc((size_t)in->cfg.T, sizeof *in->tokens);
    if (!in->tokens)
        return input_fail_nomem(L);
    int t = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, tok) {
        int bad;
        in->tokens[t] = input_utf8_clean(e->valuestring, &bad);
        if (!in->tokens[t])
            return input_fail_nomem(L);
        if (bad)
            input_warn(L, "tokens[%d]: %d byte%s of invalid UTF-8 shown as U+FFFD", t, bad, bad == 1 ? "" : "s");
        t++;
    }
    return MHAVIZ_OK;
}

int input_read_title(Loader *L, const cJSON *root, MhaInput *in)
{
    const cJSON *title = cJSON_GetObjectItemCaseSensitive(root, "title");
    if (!title)
        return MHAVIZ_OK;
    if (!cJSON_IsString(title))
        return input_fail(L, "title: expected a string, got %s", input_type_name(title));
    const size_t n = strlen(title->valuestring);
    if (n > INPUT_MAX_TITLE_BYTES)
        return input_fail(L, "title: %zu bytes is over the limit of %d", n, INPUT_MAX_TITLE_BYTES);
    int bad;
    if (!(in->title = input_utf8_clean(title->valuestring, &bad)))
        return input_fail_nomem(L);
    if (bad)
        input_warn(L, "title: %d byte%s of invalid UTF-8 shown as U+FFFD", bad, bad == 1 ? "" : "s");
    return MHAVIZ_OK;
}

static const char *const training_keys[] = {"seeds", "seed", "steps", "held_out_loss", "by_readout", NULL};
static const char *const loss_keys[] = {"heads", "single_head", "by_kv_heads", NULL};

/* "<where>.<key>" of object o: n finite numbers >= 0, into out. */
static int read_losses(Loader *L, const cJSON *o, const char *where, const char *key, int n, double *out)
{
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!a)
        return input_fail(L, "%s: missing \"%s\" (one loss per seed)", where, key);
    if (!cJSON_IsArray(a))
        return input_fail(L, "%s.%s: expected an array of %d numbers, got %s", where, key, n, input_type_name(a));
    if (input_count_items(a) != (size_t)n)
        return input_fail(L, "%s.%s: %zu numbers for %d seeds (one loss per seed)", where, key, input_count_items(a),
                          n);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, a) {
        if (!cJSON_IsNumber(e))
            return input_fail(L, "%s.%s[%d]: expected a loss in nats (a number >= 0), got %s", where, key, i,
                              input_type_name(e));
        if (!isfinite(e->valuedouble) || e->valuedouble < 0)
            return input_fail(L, "%s.%s[%d]: expected a loss in nats (a number >= 0), got %g", where, key, i,
                              e->valuedouble);
        out[i++] = e->valuedouble;
    }
    return MHAVIZ_OK;
}

/* "training.held_out_loss.by_kv_heads", when given: an object whose keys
 * are K/V head counts dividing n_heads, most first, each the losses of the
 * same model trained with that many K/V heads; this layer's own count, when
 * listed, holds its "heads" losses. */
static int read_kv_losses(Loader *L, const cJSON *losses, const MhaConfig *c, Training *t)
{
    static const char where[] = "training.held_out_loss.by_kv_heads";
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(losses, "by_kv_heads");
    if (!by)
        return MHAVIZ_OK;
    if (!cJSON_IsObject(by))
        return input_fail(L, "%s: expected an object of K/V head counts (such as \"2\"), each with one loss per "
                          "seed, got %s", where, input_type_name(by));
    const cJSON *e;
    cJSON_ArrayForEach(e, by) {
        const int i = t->n_kv_losses;
        char *end;
        errno = 0;
        const long n = strtol(e->string, &end, 10);
        if (end == e->string || *end || errno || n < 1 || n > c->n_heads || c->n_heads % n != 0)
            return input_fail(L, "%s.%s: expected a count of K/V heads that divides n_heads = %d", where, e->string,
                              c->n_heads);
        if (i > 0 && n >= t->kv_heads[i - 1])
            return input_fail(L, "%s.%s: K/V head counts are listed most first, without repeats", where, e->string);
        if (i == TRAINING_MAX_KV)
            return input_fail(L, "%s: more than %d counts", where, TRAINING_MAX_KV);
        t->kv_heads[i] = (int)n;
        int rc = read_losses(L, by, where, e->string, t->n_seeds, t->loss_kv[i]);
        if (rc != MHAVIZ_OK)
            return rc;
        if (n == c->n_kv_heads && memcmp(t->loss_kv[i], t->loss_heads, (size_t)t->n_seeds * sizeof(double)) != 0)
            return input_fail(L, "%s.%s: differs from training.held_out_loss.heads, this layer's own losses", where,
                              e->string);
        t->n_kv_losses++;
    }
    return MHAVIZ_OK;
}

/* "training.by_readout.<name>" (where), one readout's losses: "heads" and
 * "single_head", and "by_kv_heads" exactly when held_out_loss has it, with
 * the same counts in the same order (this layer's own equal to "heads"). */
static int read_readout(Loader *L, const cJSON *o, const char *where, const MhaConfig *c, Training *t,
                        TrainingReadout *out)
{
    if (!cJSON_IsObject(o))
        return input_fail(L, "%s: expected an object with heads and single_head, got %s", where, input_type_name(o));
    int rc;
    char prefix[112];
    snprintf(prefix, sizeof prefix, "%s.", where);
    if ((rc = input_check_keys(L, o, loss_keys, prefix)) != MHAVIZ_OK ||
        (rc = read_losses(L, o, where, "heads", t->n_seeds, out->heads)) != MHAVIZ_OK ||
        (rc = read_losses(L, o, where, "single_head", t->n_seeds, out->single)) != MHAVIZ_OK)
        return rc;
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(o, "by_kv_heads");
    if (!by && t->n_kv_losses)
        return input_fail(L, "%s: missing \"by_kv_heads\" (training.held_out_loss has it)", where);
    if (by && (!cJSON_IsObject(by) || (int)input_count_items(by) != t->n_kv_losses))
        return input_fail(L, "%s.by_kv_heads: expected the K/V head counts of training.held_out_loss.by_kv_heads "
                          "(%d), each with one loss per seed", where, t->n_kv_losses);
    char kv_where[160];
    snprintf(kv_where, sizeof kv_where, "%s.by_kv_heads", where);
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, by) {
        char want[16];
        snprintf(want, sizeof want, "%d", t->kv_heads[i]);
        if (strcmp(e->string, want) != 0)
            return input_fail(L, "%s.%s: expected \"%s\" here, as in training.held_out_loss.by_kv_heads", kv_where,
                              e->string, want);
        if ((rc = read_losses(L, by, kv_where, e->string, t->n_seeds, out->kv[i])) != MHAVIZ_OK)
            return rc;
        if (t->kv_heads[i] == c->n_kv_heads &&
            memcmp(out->kv[i], out->heads, (size_t)t->n_seeds * sizeof(double)) != 0)
            return input_fail(L, "%s.%s: differs from %s.heads, this layer's own losses", kv_where, e->string, where);
        i++;
    }
    return MHAVIZ_OK;
}

/* "training.by_readout", when given: an object whose keys name the model's
 * readouts (such as "previous token"), each with its own losses. */
static int read_readouts(Loader *L, const cJSON *tr, const MhaConfig *c, Training *t)
{
    const cJSON *by = cJSON_GetObjectItemCaseSensitive(tr, "by_readout");
    if (!by)
        return MHAVIZ_OK;
    if (!cJSON_IsObject(by) || input_count_items(by) == 0)
        return input_fail(L, "training.by_readout: expected an object of 1 to %d readouts (such as \"previous "
                          "token\"), each with heads and single_head, got %s", TRAINING_MAX_READOUTS,
                          cJSON_IsObject(by) ? "an empty object" : input_type_name(by));
    if (input_count_items(by) > TRAINING_MAX_READOUTS)
        return input_fail(L, "training.by_readout: %zu readouts is over the limit of %d", input_count_items(by),
                          TRAINING_MAX_READOUTS);
    const cJSON *e;
    cJSON_ArrayForEach(e, by) {
        const int r = t->n_readouts;
        const size_t n = strlen(e->string);
        int plain = n > 0 && n < TRAINING_MAX_READOUT_NAME;
        for (size_t i = 0; plain && i < n; i++)
            plain = e->string[i] >= ' ' && e->string[i] <= '~' && e->string[i] != '"' && e->string[i] != '\\';
        if (!plain)
            return input_fail(L, "training.by_readout: readout %d: expected a name of 1 to %d printable ASCII "
                              "characters without quotes or backslashes", r, TRAINING_MAX_READOUT_NAME - 1);
        for (int k = 0; k < r; k++)
            if (strcmp(t->readout_name[k], e->string) == 0)
                return input_fail(L, "training.by_readout.%s: given twice; keep one", e->string);
        char where[96];
        snprintf(where, sizeof where, "training.by_readout.%s", e->string);
        int rc = read_readout(L, e, where, c, t, &t->readout[r]);
        if (rc != MHAVIZ_OK)
            return rc;
        memcpy(t->readout_name[r], e->string, n + 1);
        t->n_readouts++;
    }
    return MHAVIZ_OK;
}

/* "training.<key>": a whole number in [lo, INT_MAX], required. */
static int training_int(Loader *L, const cJSON *tr, const char *key, int lo, const char *what, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(tr, key);
    if (!v)
        return input_fail(L, "training: missing \"%s\" (%s)", key, what);
    if (!cJSON_IsNumber(v))
        return input_fail(L, "training.%s: expected a whole number >= %d (%s), got %s", key, lo, what,
                          input_type_name(v));
    if (v->valuedouble != floor(v->valuedouble) || v->valuedouble < lo || v->valuedouble > INT_MAX)
        return input_fail(L, "training.%s: expected a whole number >= %d (%s), got %.15g", key, lo, what,
                          v->valuedouble);
    *out = (int)v->valuedouble;
    return MHAVIZ_OK;
}

int input_read_training(Loader *L, const cJSON *root, int has_single, const MhaConfig *c, Training *t)
{
    int rc;
    const cJSON *tr = cJSON_GetObjectItemCaseSensitive(root, "training");
    if (!tr)
        return MHAVIZ_OK;
    if (!cJSON_IsObject(tr))
        return input_fail(L, "training: expected an object with seeds, seed, steps and held_out_loss, got %s",
                          input_type_name(tr));
    if (!has_single)
        return input_fail(L, "training: describes a \"single_head\" trained on its own, and this input has none");
    if ((rc = input_check_keys(L, tr, training_keys, "training.")) != MHAVIZ_OK)
        return rc;
    const cJSON *seeds = cJSON_GetObjectItemCaseSensitive(tr, "seeds");
    if (!seeds)
        return input_fail(L, "training: missing \"seeds\" (the seeds both models were trained at)");
    if (!cJSON_IsArray(seeds) || input_count_items(seeds) == 0)
        return input_fail(L, "training.seeds: expected an array of 1 to %d whole numbers, got %s",
                          TRAINING_MAX_SEEDS, cJSON_IsArray(seeds) ? "an empty array" : input_type_name(seeds));
    if (input_count_items(seeds) > TRAINING_MAX_SEEDS)
        return input_fail(L, "training.seeds: %zu seeds is over the limit of %d", input_count_items(seeds),
                          TRAINING_MAX_SEEDS);
    const cJSON *e;
    cJSON_ArrayForEach(e, seeds) {
        const int i = t->n_seeds;
        if (!cJSON_IsNumber(e))
            return input_fail(L, "training.seeds[%d]: expected a whole number >= 0, got %s", i, input_type_name(e));
        if (e->valuedouble != floor(e->valuedouble) || e->valuedouble < 0 || e->valuedouble > INT_MAX)
            return input_fail(L, "training.seeds[%d]: expected a whole number >= 0, got %.15g", i, e->valuedouble);
        t->seeds[i] = (int)e->valuedouble;
        for (int k = 0; k < i; k++)
            if (t->seeds[k] == t->seeds[i])
                return input_fail(L, "training.seeds[%d]: seed %d is already seeds[%d]", i, t->seeds[i], k);
        t->n_seeds++;
    }
    if ((rc = training_int(L, tr, "seed", 0, "the seed whose weights these are", &t->seed)) != MHAVIZ_OK ||
        (rc = training_int(L, tr, "steps", 1, "training steps, the same for both models", &t->steps)) != MHAVIZ_OK)
        return rc;
    int found = 0;
    for (int k = 0; k < t->n_seeds; k++)
        found |= t->seeds[k] == t->seed;
    if (!found)
        return input_fail(L, "training.seed: %d is not one of training.seeds (the seed whose weights these are)",
                          t->seed);
    const cJSON *losses = cJSON_GetObjectItemCaseSensitive(tr, "held_out_loss");
    if (!losses)
        return input_fail(L, "training: missing \"held_out_loss\" (an object with heads and single_head)");
    if (!cJSON_IsObject(losses))
        return input_fail(L, "training.held_out_loss: expected an object with heads and single_head, got %s",
                          input_type_name(losses));
    if ((rc = input_check_keys(L, losses, loss_keys, "training.held_out_loss.")) != MHAVIZ_OK ||
        (rc = read_losses(L, losses, "training.held_out_loss", "heads", t->n_seeds, t->loss_heads)) != MHAVIZ_OK ||
        (rc = read_losses(L, losses, "training.held_out_loss", "single_head", t->n_seeds, t->loss_single)) !=
            MHAVIZ_OK ||
        (rc = read_kv_losses(L, losses, c, t)) != MHAVIZ_OK ||
        (rc = read_readouts(L, tr, c, t)) != MHAVIZ_OK)
        return rc;
    return MHAVIZ_OK;
}

/* ------------------------------------------------------------------------ */
/* Numbers, vectors and matrices                                            */

/* One JSON number as a float, or an error naming its place (prefix, already
 * formatted: e.g. "W_k: row 3, column 5"). */
static int to_float(Loader *L, const cJSON *v, const char *place, float *out)
{
    if (!cJSON_IsNumber(v))
        return input_fail(L, "%s: expected a number, got %s", place, input_type_name(v));
    double d = v->valuedouble;
    if (!isfinite(d))
        return input_fail(L, "%s: not a finite number", place);
    if (fabs(d) > FLT_MAX)
        return input_fail(L, "%s: %g is too large for a float (largest is about 3.4e38)", place, d);
    *out = (float)d;
    return MHAVIZ_OK;
}

/* The loader's message for a .npy file that failed (rc and msg from
 * io/npy.h) under key; rows.n < 0: a vector. Returns the loader's status. */
static int npy_failed(Loader *L, const char *key, Dim rows, Dim cols, int rc, const char *msg)
{
    if (rc == MHAVIZ_ENOMEM)
        return input_fail_nomem(L);
    if (rows.n < 0)
        input_fail(L, "%s: %s (expected shape (%d,), %s)", key, msg, cols.n, cols.why);
    else
        input_fail(L, "%s: %s (expected shape (%d, %d): %s by %s)", key, msg, rows.n, cols.n, rows.why, cols.why);
    return rc == MHAVIZ_EIO ? MHAVIZ_EINPUT : rc;
}

/* A vector of cols.n numbers under key (e.g. "b_k" or "embeddings[\"cat\"]").
 * dst NULL: check the shape only. */
static int read_vector(Loader *L, const cJSON *v, const char *key, Dim cols, float *dst)
{
    if (cJSON_IsString(v)) { /* a .npy file, copied (an embedding: a row of x) */
        if (!dst)
            return MHAVIZ_OK;
        char msg[384];
        int rc = npy_read_floats(L->base_dir, v->valuestring, -1, cols.n, 0, dst, msg, sizeof msg);
        return rc == MHAVIZ_OK ? rc : npy_failed(L, key, (Dim){-1, ""}, cols, rc, msg);
    }
    if (!cJSON_IsArray(v))
        return input_fail(L, "%s: expected an array of %d numbers (%s), got %s", key, cols.n, cols.why,
                          input_type_name(v));
    size_t n = input_count_items(v);
    if (n != (size_t)cols.n)
        return input_fail(L, "%s: has %zu numbers, expected %d (%s)", key, n, cols.n, cols.why);
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

int input_read_matrix(Loader *L, const cJSON *m, const char *key, Dim rows, Dim cols,
                      int transpose, float *dst)
{
    if (cJSON_IsString(m)) /* a .npy file: its shape is checked when input_load_array reads it */
        return MHAVIZ_OK;
    if (!cJSON_IsArray(m))
        return input_fail(L, "%s: expected %d rows (%s) of %d numbers (%s), or a .npy file name; got %s",
                          key, rows.n, rows.why, cols.n, cols.why, input_type_name(m));
    size_t n_rows = input_count_items(m);
    if (n_rows != (size_t)rows.n)
        return input_fail(L, "%s: has %zu rows, expected %d (%s)", key, n_rows, rows.n, rows.why);
    int i = 0, rc;
    const cJSON *row;
    cJSON_ArrayForEach(row, m) {
        if (!cJSON_IsArray(row))
            return input_fail(L, "%s: row %d is %s, expected an array of %d numbers (%s)", key, i,
                              input_type_name(row), cols.n, cols.why);
        if (!dst) {
            size_t n = input_count_items(row);
            if (n != (size_t)cols.n)
                return input_fail(L, "%s: row %d has %zu numbers, expected %d (%s)", key, i, n, cols.n,
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
                return input_fail(L, "%s: row %d has the wrong length, expected %d (%s)", key, i, cols.n,
                                  cols.why);
        }
        i++;
    }
    return MHAVIZ_OK;
}

int input_load_array(Loader *L, const cJSON *a, const char *key, Dim rows, Dim cols, int transpose, float **dst)
{
    if (cJSON_IsString(a)) {
        MhaInput *in = L->in;
        if (in->n_maps == MHA_INPUT_MAX_MAPS) /* x and two layers' arrays fit: each is loaded once */
            return input_fail(L, "%s: more .npy files than an input may read in place (%d)", key, MHA_INPUT_MAX_MAPS);
        char msg[384];
        int rc = npy_load_floats(L->base_dir, a->valuestring, rows.n, cols.n, transpose, dst,
                                 &in->maps[in->n_maps], msg, sizeof msg);
        if (rc != MHAVIZ_OK)
            return npy_failed(L, key, rows, cols, rc, msg);
        if (in->maps[in->n_maps].addr)
            in->n_maps++;
        return MHAVIZ_OK;
    }
    const size_t n = (size_t)(rows.n < 0 ? 1 : rows.n) * (size_t)cols.n;
    if (!(*dst = malloc(n * sizeof **dst))) // (rows.n, cols.n), or (cols.n, rows.n) transposed
        return input_fail_nomem(L);
    return rows.n < 0 ? read_vector(L, a, key, cols, *dst) : input_read_matrix(L, a, key, rows, cols, transpose, *dst);
}

/* ------------------------------------------------------------------------ */
/* One layer's weights                                                      */

static const char *const W_names[4] = {"W_q", "W_k", "W_v", "W_o"};
static const char *const b_names[4] = {"b_q", "b_k", "b_v", "b_o"};

int input_find_layer(Loader *L, const cJSON *obj, const char *prefix, Dim d_model, Dim kv,
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
            return input_fail(L, "missing \"%s%s\" (%d x %d: %s by %s)", prefix, W_names[i], d_model.n,
                              lj->out[i].n, d_model.why, lj->out[i].why);
    }
    return MHAVIZ_OK;
}

int input_read_layer(Loader *L, const LayerJson *lj, int w_at_x, MhaWeights *w)
{
    float **Wd[4] = {NULL, NULL, NULL, NULL}, **bd[4] = {NULL, NULL, NULL, NULL};
    if (w) {
        Wd[0] = &w->W_q, Wd[1] = &w->W_k, Wd[2] = &w->W_v, Wd[3] = &w->W_o;
        bd[0] = &w->b_q, bd[1] = &w->b_k, bd[2] = &w->b_v, bd[3] = &w->b_o;
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
        rc = w ? input_load_array(L, lj->W[i], key, r, c, w_at_x, Wd[i])
               : input_read_matrix(L, lj->W[i], key, r, c, w_at_x, NULL);
        if (rc != MHAVIZ_OK)
            return rc;
    }
    for (int i = 0; i < 4; i++) {
        const Dim none = {-1, ""}; /* a vector */
        snprintf(key, sizeof key, "%s%s", lj->prefix, b_names[i]);
        if (!lj->b[i]) { /* zeros */
            rc = MHAVIZ_OK;
            if (w && !(*bd[i] = calloc((size_t)lj->out[i].n, sizeof(float))))
                rc = input_fail_nomem(L);
        } else {
            rc = w ? input_load_array(L, lj->b[i], key, none, lj->out[i], 0, bd[i])
                   : read_vector(L, lj->b[i], key, lj->out[i], NULL);
        }
        if (rc != MHAVIZ_OK)
            return rc;
    }
    if (w)
        w->has_bias = lj->b[0] || lj->b[1] || lj->b[2] || lj->b[3];
    return MHAVIZ_OK;
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

int input_find_embeddings(Loader *L, const cJSON *emb, const cJSON *pos, const cJSON *tokens,
                          Dim D)
{
    int rc = MHAVIZ_OK;
    /* Sort the table once so each token is a binary search, and a token
     * given twice shows up as two neighbours. */
    size_t n = input_count_items(emb), i = 0;
    EmbEntry *entries = malloc((n ? n : 1) * sizeof *entries); // (n) the table, sorted by token
    size_t T = input_count_items(tokens);
    free(L->emb_of); /* another layer's, in a file of "layers" */
    L->emb_of = calloc(T, sizeof *L->emb_of);
    L->emb_table = emb;
    if (!entries || !L->emb_of) {
        free(entries);
        return input_fail_nomem(L);
    }
    const cJSON *e;
    cJSON_ArrayForEach(e, emb)
        entries[i++] = (EmbEntry){e->string, e};
    qsort(entries, n, sizeof *entries, emb_cmp);
    for (i = 0; i < n && rc == MHAVIZ_OK; i++) {
        char key[160];
        int bad;
        char *shown = input_utf8_clean(entries[i].key, &bad);
        if (!shown) {
            rc = input_fail_nomem(L);
            break;
        }
        snprintf(key, sizeof key, "embeddings[\"%.100s\"]", shown);
        free(shown);
        if (i + 1 < n && strcmp(entries[i].key, entries[i + 1].key) == 0)
            rc = input_fail(L, "%s: given twice; keep one", key);
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
            char *shown = input_utf8_clean(tok->valuestring, &bad);
            if (!shown)
                rc = input_fail_nomem(L);
            else
                rc = input_fail(L, "embeddings: no entry for token %zu \"%.100s\"", t, shown);
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

int input_embed_tokens(Loader *L, int sinusoidal, MhaInput *in)
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
