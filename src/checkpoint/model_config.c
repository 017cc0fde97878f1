/* model_config.c — config.json of a GPT-2, Llama, Mistral or Qwen2 checkpoint. */
#include "checkpoint/model_config.h"
#include "core/status.h"
#include "io/input.h"

#include <cjson/cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The file being read, for messages. */
typedef struct {
    const cJSON *root;
    const char *path;
    char *err;
    size_t errlen;
} Fields;

/* Field key as a whole number in [lo, hi] into *out; when absent, def (or
 * an error when def < 0 stands for "required"). */
static int int_field(Fields *f, const char *key, int lo, int hi, int def, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->root, key);
    if (!v || cJSON_IsNull(v)) {
        if (def >= 0) {
            *out = def;
            return 1;
        }
        snprintf(f->err, f->errlen, "%s: \"%s\" is missing", f->path, key);
        return 0;
    }
    if (!cJSON_IsNumber(v) || v->valuedouble < lo || v->valuedouble > hi ||
        floor(v->valuedouble) != v->valuedouble) {
        snprintf(f->err, f->errlen, "%s: \"%s\" must be a whole number from %d to %d", f->path, key, lo, hi);
        return 0;
    }
    *out = (int)v->valuedouble;
    return 1;
}

/* A positive number field into *out, def when absent (def <= 0: required). */
static int num_field(Fields *f, const cJSON *obj, const char *key, double def, double *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(obj, key);
    if (!v || cJSON_IsNull(v)) {
        if (def > 0) {
            *out = def;
            return 1;
        }
        snprintf(f->err, f->errlen, "%s: \"%s\" is missing", f->path, key);
        return 0;
    }
    if (!cJSON_IsNumber(v) || !(v->valuedouble > 0) || !isfinite(v->valuedouble)) {
        snprintf(f->err, f->errlen, "%s: \"%s\" must be a positive number", f->path, key);
        return 0;
    }
    *out = v->valuedouble;
    return 1;
}

/* A true/false field, def when absent. */
static int bool_field(Fields *f, const char *key, int def, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->root, key);
    if (!v || cJSON_IsNull(v)) {
        *out = def;
        return 1;
    }
    if (!cJSON_IsBool(v)) {
        snprintf(f->err, f->errlen, "%s: \"%s\" must be true or false", f->path, key);
        return 0;
    }
    *out = cJSON_IsTrue(v);
    return 1;
}

/* A string field equal to one of the allowed (NULL-terminated list) or
 * absent (then def); its index into *out. */
static int choice_field(Fields *f, const char *key, const char *const *allowed, const char *def, int *out)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(f->root, key);
    const char *s = v && !cJSON_IsNull(v) ? cJSON_GetStringValue(v) : def;
    for (int i = 0; s && allowed[i]; i++)
        if (strcmp(s, allowed[i]) == 0) {
            *out = i;
            return 1;
        }
    char list[128] = "";
    for (int i = 0; allowed[i]; i++)
        snprintf(list + strlen(list), sizeof list - strlen(list), "%s\"%s\"", i ? " or " : "", allowed[i]);
    snprintf(f->err, f->errlen, "%s: \"%s\" is %s%s%s; mhaviz runs %s", f->path, key, s ? "\"" : "not a string",
             s ? s : "", s ? "\"" : "", list);
    return 0;
}

static int gpt2_fields(Fields *f, ModelConfig *c)
{
    static const char *const acts[] = {"gelu_new", "gelu", NULL};
    int act, by_layer;
    if (!int_field(f, "n_layer", 1, 100000, -1, &c->n_layers) ||
        !int_field(f, "n_embd", 1, INPUT_MAX_D_MODEL, -1, &c->d_model) ||
        !int_field(f, "n_head", 1, INPUT_MAX_HEADS, -1, &c->n_heads) ||
        !int_field(f, "vocab_size", 1, 1 << 30, -1, &c->vocab_size) ||
        !int_field(f, "n_positions", 1, 1 << 30, -1, &c->max_positions) ||
        !int_field(f, "n_inner", 1, 1 << 24, 4 * c->d_model, &c->d_ff) ||
        !num_field(f, f->root, "layer_norm_epsilon", 1e-5, &c->norm_eps) ||
        !choice_field(f, "activation_function", acts, "gelu_new", &act) ||
        !bool_field(f, "scale_attn_by_inverse_layer_idx", 0, &by_layer))
        return 0;
    if (by_layer) {
        snprintf(f->err, f->errlen, "%s: \"scale_attn_by_inverse_layer_idx\" is true; mhaviz's heads divide their "
                 "scores by sqrt(head_dim) only", f->path);
        return 0;
    }
    if (c->d_model % c->n_heads != 0) {
        snprintf(f->err, f->errlen, "%s: \"n_embd\" %d is not a multiple of \"n_head\" %d", f->path, c->d_model,
                 c->n_heads);
        return 0;
    }
    c->family = MODEL_GPT2;
    c->n_kv_heads = c->n_heads;
    c->head_dim = c->d_model / c->n_heads;
    c->gelu_exact = act == 1;
    c->qkv_bias = c->o_bias = 1;
    c->tied = 1;
    return 1;
}

/* rope_theta and rope_scaling: none, "default", or llama3's. */
static int rope_fields(Fields *f, ModelConfig *c)
{
    c->rope.dim = c->head_dim;
    if (!num_field(f, f->root, "rope_theta", 10000.0, &c->rope.theta))
        return 0;
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(f->root, "rope_scaling");
    if (!s || cJSON_IsNull(s))
        return 1;
    const char *type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "rope_type"));
    if (!type)
        type = cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(s, "type"));
    if (type && strcmp(type, "default") == 0)
        return 1;
    if (!type || strcmp(type, "llama3") != 0) {
        snprintf(f->err, f->errlen, "%s: \"rope_scaling\" is of type %s%s%s; mhaviz runs none, \"default\" or "
                 "\"llama3\"", f->path, type ? "\"" : "(no \"rope_type\")", type ? type : "", type ? "\"" : "");
        return 0;
    }
    double orig;
    if (!num_field(f, s, "factor", 0, &c->rope.factor) ||
        !num_field(f, s, "low_freq_factor", 0, &c->rope.low_freq_factor) ||
        !num_field(f, s, "high_freq_factor", 0, &c->rope.high_freq_factor) ||
        !num_field(f, s, "original_max_position_embeddings", 0, &orig)) {
        snprintf(f->err + strlen(f->err), f->errlen - strlen(f->err), " (in \"rope_scaling\")");
        return 0;
    }
    if (!(c->rope.high_freq_factor > c->rope.low_freq_factor) || orig > 1 << 30) {
        snprintf(f->err, f->errlen, "%s: \"rope_scaling\": \"high_freq_factor\" must be above \"low_freq_factor\", "
                 "\"original_max_position_embeddings\" at most 2^30", f->path);
        return 0;
    }
    c->rope.original_max_position = (int)orig;
    return 1;
}

static int llama_fields(Fields *f, ModelConfig *c)
{
    static const char *const acts[] = {"silu", NULL};
    int act, attention_bias, mlp_bias, use_window = 1;
    if (!int_field(f, "num_hidden_layers", 1, 100000, -1, &c->n_layers) ||
        !int_field(f, "hidden_size", 1, INPUT_MAX_D_MODEL, -1, &c->d_model) ||
        !int_field(f, "num_attention_heads", 1, INPUT_MAX_HEADS, -1, &c->n_heads) ||
        !int_field(f, "num_key_value_heads", 1, c->n_heads, c->n_heads, &c->n_kv_heads) ||
        !int_field(f, "head_dim", 1, INPUT_MAX_D_MODEL, c->d_model / c->n_heads, &c->head_dim) ||
        !int_field(f, "intermediate_size", 1, 1 << 24, -1, &c->d_ff) ||
        !int_field(f, "vocab_size", 1, 1 << 30, -1, &c->vocab_size) ||
        !int_field(f, "max_position_embeddings", 1, 1 << 30, -1, &c->max_positions) ||
        !num_field(f, f->root, "rms_norm_eps", 1e-6, &c->norm_eps) ||
        !choice_field(f, "hidden_act", acts, "silu", &act) ||
        !bool_field(f, "attention_bias", 0, &attention_bias) || !bool_field(f, "mlp_bias", 0, &mlp_bias) ||
        !bool_field(f, "tie_word_embeddings", 0, &c->tied) ||
        (strcmp(c->type, "qwen2") == 0 && !bool_field(f, "use_sliding_window", 0, &use_window)) ||
        !int_field(f, "sliding_window", 1, 1 << 30, 0, &c->sliding_window))
        return 0;
    if (!use_window)
        c->sliding_window = 0;
    if (c->n_heads % c->n_kv_heads != 0) {
        snprintf(f->err, f->errlen, "%s: \"num_attention_heads\" %d is not a multiple of \"num_key_value_heads\" %d",
                 f->path, c->n_heads, c->n_kv_heads);
        return 0;
    }
    if (c->n_heads * c->head_dim != c->d_model) {
        snprintf(f->err, f->errlen, "%s: \"head_dim\" %d times \"num_attention_heads\" %d is %d, not \"hidden_size\" "
                 "%d; mhaviz shows layers whose heads side by side are as wide as the hidden state", f->path,
                 c->head_dim, c->n_heads, c->head_dim * c->n_heads, c->d_model);
        return 0;
    }
    if (c->head_dim % 2 != 0) {
        snprintf(f->err, f->errlen, "%s: \"head_dim\" %d is odd; rotary positions turn pairs of columns", f->path,
                 c->head_dim);
        return 0;
    }
    if (mlp_bias) {
        snprintf(f->err, f->errlen, "%s: \"mlp_bias\" is true; mhaviz runs MLPs without biases", f->path);
        return 0;
    }
    c->family = MODEL_LLAMA;
    c->qkv_bias = attention_bias || strcmp(c->type, "qwen2") == 0;
    c->o_bias = attention_bias;
    return rope_fields(f, c);
}

int model_config_load(const char *dir, ModelConfig *c, char *err, size_t errlen)
{
    static const char *const types[] = {"gpt2", "llama", "mistral", "qwen2", NULL};
    memset(c, 0, sizeof *c);
    char path[4096];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *fp = fopen(path, "rb");
    if (!fp) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    /* A config.json is a few kilobytes: 16 MB is far past any. */
    enum { MAX_BYTES = 16 << 20 };
    char *text = malloc(MAX_BYTES + 1);
    const size_t len = text ? fread(text, 1, MAX_BYTES + 1, fp) : 0;
    const int failed = ferror(fp);
    fclose(fp);
    if (!text)
        return MHAVIZ_ENOMEM;
    if (failed || len > MAX_BYTES) {
        snprintf(err, errlen, "%s: %s", path, failed ? "cannot read" : "over 16 MB: not a config.json");
        free(text);
        return failed ? MHAVIZ_EIO : MHAVIZ_EINPUT;
    }
    const char *end = NULL;
    text[len] = '\0';
    cJSON *root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1); /* len + 1: its NUL too */
    int rc = MHAVIZ_EINPUT;
    Fields f = {root, path, err, errlen};
    int type;
    if (!cJSON_IsObject(root)) {
        snprintf(err, errlen, "%s: not a JSON object (at byte %ld)", path, root ? 0L : (long)(end - text));
    } else if (choice_field(&f, "model_type", types, NULL, &type)) {
        snprintf(c->type, sizeof c->type, "%s", types[type]);
        if (type == 0 ? gpt2_fields(&f, c) : llama_fields(&f, c))
            rc = MHAVIZ_OK;
    }
    cJSON_Delete(root);
    free(text);
    return rc;
}

long long model_config_parameters(const ModelConfig *c)
{
    const long long d = c->d_model, ff = c->d_ff, V = c->vocab_size, kv = (long long)c->n_kv_heads * c->head_dim;
    long long layer, rest;
    if (c->family == MODEL_GPT2) {
        layer = 2 * d + (d * 3 * d + 3 * d) + (d * d + d) + 2 * d + (d * ff + ff) + (ff * d + d);
        rest = V * d + (long long)c->max_positions * d + 2 * d; /* wte, wpe, ln_f; lm_head is wte */
    } else {
        layer = d + d * d + 2 * d * kv + d * d + d + 3 * d * ff;
        layer += c->qkv_bias ? d + 2 * kv : 0;
        layer += c->o_bias ? d : 0;
        rest = V * d + d + (c->tied ? 0 : V * d); /* embed_tokens, norm, lm_head */
    }
    return c->n_layers * layer + rest;
}
