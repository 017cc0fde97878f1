/* check_model_cli.c — `mhaviz --text TEXT --layer N MODEL_DIR` as a user
 * meets it: a model folder run to a layer, and bad checkpoints refused with
 * the exit code, a message naming the file and the field, nothing written.
 *
 * The model folders are made in a scratch folder from the tiny checkpoints
 * of tests/models/make_checkpoints.py (MHAVIZ_MODELS) and the real
 * tokenizer files tests/tokenizers/reference.mjs writes (MHAVIZ_TOKENIZERS),
 * then spoiled one way each. Runs the built binary (MHAVIZ_BIN) with fork +
 * exec in the scratch folder. */
#include "support.h"
#include "core/status.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <dirent.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define SENTENCE "When Mary and John went to the store, John gave a drink to"

typedef struct {
    char *dir;           /* the scratch folder: the model folder "model/" and the run's outputs */
    int status;          /* exit code, or -1 */
    char err[1 << 14];   /* captured stderr */
} Run;

static void write_file(const char *path, const void *bytes, size_t n)
{
    FILE *f = fopen(path, "wb");
    ck_assert_msg(f != NULL, "%s: cannot write", path);
    ck_assert_msg(fwrite(bytes, 1, n, f) == n && fclose(f) == 0, "%s: cannot write", path);
}

static void copy_file(const char *from, const char *to)
{
    size_t n;
    char *bytes = slurp(from, &n);
    write_file(to, bytes, n);
    free(bytes);
}

/* r->dir/model/: case's checkpoint files (every file but case.json and
 * ref/) and tokenizer tok's files. */
static void make_model(Run *r, const char *model_case, const char *tok)
{
    char from[PATH_MAX], to[PATH_MAX];
    r->dir = scratch("model");
    snprintf(to, sizeof to, "%s/model", r->dir);
    ck_assert_int_eq(mkdir(to, 0755), 0);
    snprintf(from, sizeof from, "%s/%s", need_env("MHAVIZ_MODELS"), model_case);
    DIR *d = opendir(from);
    ck_assert_msg(d != NULL, "%s: no such folder", from);
    struct dirent *e;
    while ((e = readdir(d)))
        if (strstr(e->d_name, ".safetensors") || strcmp(e->d_name, "config.json") == 0) {
            snprintf(from, sizeof from, "%s/%s/%s", need_env("MHAVIZ_MODELS"), model_case, e->d_name);
            snprintf(to, sizeof to, "%s/model/%s", r->dir, e->d_name);
            copy_file(from, to);
        }
    closedir(d);
    const char *const files[] = {"tokenizer.json", "tokenizer_config.json"};
    for (int i = 0; i < 2; i++) {
        snprintf(from, sizeof from, "%s/%s/%s", need_env("MHAVIZ_TOKENIZERS"), tok, files[i]);
        snprintf(to, sizeof to, "%s/model/%s", r->dir, files[i]);
        copy_file(from, to);
    }
}

/* Set (value non-NULL, as JSON text) or remove key of r->dir/model/config.json. */
static void edit_config(Run *r, const char *key, const char *value)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model/config.json", r->dir);
    char *text = slurp(path, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(root);
    cJSON_DeleteItemFromObjectCaseSensitive(root, key);
    if (value)
        cJSON_AddItemToObject(root, key, cJSON_Parse(value));
    char *out = cJSON_Print(root);
    write_file(path, out, strlen(out));
    free(out);
    cJSON_Delete(root);
}

/* r->dir/model/NAME: a safetensors file of header (JSON text) and n_data
 * zero bytes of data; the header length as given (len < 0: its true one). */
static void write_safetensors(Run *r, const char *name, const char *header, long long len, size_t n_data)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model/%s", r->dir, name);
    const size_t h = strlen(header);
    const unsigned long long n = len < 0 ? h : (unsigned long long)len;
    unsigned char *bytes = calloc(8 + h + n_data, 1);
    for (int i = 0; i < 8; i++)
        bytes[i] = (unsigned char)(n >> (8 * i));
    memcpy(bytes + 8, header, h);
    write_file(path, bytes, 8 + h + n_data);
    free(bytes);
}

/* Run mhaviz with args (NULL-terminated; "MODEL" stands for the model folder) in r->dir. */
static void run(Run *r, const char *const *args)
{
    char model[PATH_MAX];
    snprintf(model, sizeof model, "%s/model", r->dir);
    const char *argv[32] = {binary_path()};
    int n = 1;
    for (; args[n - 1]; n++)
        argv[n] = strcmp(args[n - 1], "MODEL") == 0 ? model : args[n - 1];
    argv[n] = NULL;
    r->status = run_program(r->dir, argv, NULL, r->err, sizeof r->err);
}

/* Entries of r->dir beside the model folder: what the run wrote. */
static int written(const Run *r) { return count_entries(r->dir, "model"); }

static void done(Run *r)
{
    remove_tree(r->dir);
    free(r->dir);
    free(r);
}

/* GPT-2's tokenizer on the sentence, layer 1 of the tiny gpt2_vocab
 * checkpoint: the folder gets the default name, report.json names the
 * model. parameters: vocab 50257 x 16 + positions 1024 x 16 + ln_f 32 =
 * 820,528, and per layer 2x16 + (16x48 + 48) + (16x16 + 16) + 2x16 +
 * (16x64 + 64) + (64x16 + 16) = 3,280, two layers: 827,088 (GPT2Model's
 * num_parameters for this config). */
START_TEST(gpt2_layer_runs_and_names_the_model)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    run(r, (const char *[]){"-q", "--text", SENTENCE, "--layer", "1", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "wrote model_layer1_mhaviz/"), "%s", r->err);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model_layer1_mhaviz/report.json", r->dir);
    char *text = slurp(path, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(root);
    const cJSON *ids = cJSON_GetObjectItemCaseSensitive(root, "token_ids");
    const cJSON *tokens = cJSON_GetObjectItemCaseSensitive(root, "tokens");
    /* GPT-2's ids of "When Mary and", as its tokenizer gives them (tests/tokenizers' reference) */
    const int want[] = {2215, 5335, 290};
    ck_assert_int_eq(cJSON_GetArraySize(ids), 14);
    ck_assert_int_eq(cJSON_GetArraySize(tokens), 14);
    for (int i = 0; i < 3; i++)
        ck_assert_int_eq((int)cJSON_GetArrayItem(ids, i)->valuedouble, want[i]);
    ck_assert_str_eq(cJSON_GetArrayItem(tokens, 1)->valuestring, " Mary");
    const cJSON *m = cJSON_GetObjectItemCaseSensitive(root, "model");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(m, "name")->valuestring, "model");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(m, "type")->valuestring, "gpt2");
    ck_assert_str_eq(cJSON_GetObjectItemCaseSensitive(m, "dtype")->valuestring, "F32");
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(m, "layer")->valuedouble, 1);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(m, "n_layers")->valuedouble, 2);
    ck_assert_int_eq((long long)cJSON_GetObjectItemCaseSensitive(m, "parameters")->valuedouble, 827088);
    cJSON_Delete(root);
    done(r);
}
END_TEST

/* A Llama-2 layer (F16, its tokenizer, BOS first) with the options of a
 * JSON run: pooled into one K/V head, the scores, -o. */
START_TEST(llama_layer_takes_every_option)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "llama2_vocab", "llama2");
    run(r, (const char *[]){"-q", "--text", SENTENCE, "--layer", "0", "--kv-heads", "2,1", "--steps", "--no-html",
                            "-o", "out", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    char path[PATH_MAX];
    struct stat st;
    snprintf(path, sizeof path, "%s/out/kv1/head_00_scores.png", r->dir);
    ck_assert_msg(stat(path, &st) == 0, "no %s", path);
    snprintf(path, sizeof path, "%s/out/kv2/report.json", r->dir);
    char *text = slurp(path, NULL);
    ck_assert_msg(strstr(text, "\"token_ids\": [1, "), "Llama 2's BOS (1) first: %.200s", text);
    free(text);
    done(r);
}
END_TEST

/* r->dir/path as cJSON, asserted to parse. */
static cJSON *read_json(const Run *r, const char *path)
{
    char full[PATH_MAX];
    snprintf(full, sizeof full, "%s/%s", r->dir, path);
    char *text = slurp(full, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_msg(root != NULL, "%s: not JSON", path);
    return root;
}

/* 1 when files a and b of r->dir hold the same bytes. */
static int same_file(const Run *r, const char *a, const char *b)
{
    char pa[PATH_MAX], pb[PATH_MAX];
    size_t na, nb;
    snprintf(pa, sizeof pa, "%s/%s", r->dir, a);
    snprintf(pb, sizeof pb, "%s/%s", r->dir, b);
    char *x = slurp(pa, &na), *y = slurp(pb, &nb);
    const int same = na == nb && memcmp(x, y, na) == 0;
    free(x), free(y);
    return same;
}

/* r->dir/path is a 1920 x 1080 PNG (its IHDR's width and height, big-endian). */
static void assert_slide(const Run *r, const char *path)
{
    char png[PATH_MAX];
    size_t n;
    snprintf(png, sizeof png, "%s/%s", r->dir, path);
    unsigned char *b = (unsigned char *)slurp(png, &n);
    ck_assert_msg(n > 24 && memcmp(b + 1, "PNG", 3) == 0, "%s: not a PNG", path);
    ck_assert_int_eq((b[16] << 24) | (b[17] << 16) | (b[18] << 8) | b[19], 1920);
    ck_assert_int_eq((b[20] << 24) | (b[21] << 16) | (b[22] << 8) | b[23], 1080);
    free(b);
}

/* Whether file a exists under r->dir. */
static int exists_in(const Run *r, const char *a)
{
    char pa[PATH_MAX];
    snprintf(pa, sizeof pa, "%s/%s", r->dir, a);
    return access(pa, F_OK) == 0;
}

static const cJSON *item(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    ck_assert_msg(v != NULL, "no \"%s\"", key);
    return v;
}

/* No --layer: every layer, one folder each, as a run of that layer alone
 * writes it (byte for byte: the one forward keeps each layer's input as
 * the run up to it computes it) but for lesson.html, one for the run at
 * the top, and the table at the top agrees with the
 * layers' own reports: roles counted, kept and lost, blur, and the heads
 * worth a slide found again here from each head's pattern_rows (the most
 * rows showing the pattern, at least 2; then the larger share; then the
 * first). --layer 0,1 and 0-1 give the same top report. */
START_TEST(every_layer_by_default)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    run(r, (const char *[]){"-q", "--text", SENTENCE " Mary and John", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "wrote model_mhaviz/"), "%s", r->err);
    run(r, (const char *[]){"-q", "--text", SENTENCE " Mary and John", "--layer", "1", "-o", "one", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert(same_file(r, "one/report.json", "model_mhaviz/layer_01/report.json"));
    ck_assert(same_file(r, "one/report.txt", "model_mhaviz/layer_01/report.txt"));
    ck_assert(same_file(r, "one/overview.png", "model_mhaviz/layer_01/overview.png"));
    ck_assert(same_file(r, "one/single_head.png", "model_mhaviz/layer_01/single_head.png"));
    /* one lesson.html for the run, at the top, none in the layers' folders */
    ck_assert(exists_in(r, "model_mhaviz/lesson.html") && !exists_in(r, "model_mhaviz/layer_01/lesson.html"));
    /* --head-maps: every head's map too, each as the run of its layer alone draws it */
    run(r, (const char *[]){"-q", "--head-maps", "--text", SENTENCE " Mary and John", "-o", "maps", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert(same_file(r, "one/head_00.png", "maps/layer_01/head_00.png"));
    ck_assert(same_file(r, "one/head_01.png", "maps/layer_01/head_01.png"));
    ck_assert(same_file(r, "maps/report.json", "model_mhaviz/report.json"));
    run(r, (const char *[]){"-q", "--text", SENTENCE " Mary and John", "--layer", "0,1", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK && strstr(r->err, "wrote model_layers0,1_mhaviz/"), "%s", r->err);
    ck_assert(same_file(r, "model_layers0,1_mhaviz/report.json", "model_mhaviz/report.json"));

    assert_slide(r, "model_mhaviz/model_overview.png");
    assert_slide(r, "model_mhaviz/layers.png");
    cJSON *top = read_json(r, "model_mhaviz/report.json");
    const cJSON *layers = item(top, "layers");
    ck_assert_int_eq(cJSON_GetArraySize(layers), 2);
    const char *const patterns[4] = {"previous_token", "first_token", "duplicate_token", "induction"};
    int best_layer[4] = {-1, -1, -1, -1}, best_head[4] = {-1, -1, -1, -1}, best_shown[4] = {0};
    double best_share[4] = {0};
    for (int l = 0; l < 2; l++) {
        const cJSON *row = cJSON_GetArrayItem(layers, l);
        char path[64];
        ck_assert_int_eq((int)item(row, "layer")->valuedouble, l);
        snprintf(path, sizeof path, "model_mhaviz/%s/report.json", item(row, "folder")->valuestring);
        cJSON *own = read_json(r, path);
        const cJSON *kept = item(own, "kept");
        ck_assert_int_eq((int)item(row, "rows")->valuedouble, (int)item(kept, "rows")->valuedouble);
        ck_assert_int_eq((int)item(row, "kept")->valuedouble, (int)item(kept, "kept")->valuedouble);
        ck_assert_int_eq((int)item(row, "lost")->valuedouble, (int)item(kept, "lost")->valuedouble);
        ck_assert(item(row, "blur")->valuedouble == item(item(own, "comparison"), "blur")->valuedouble);
        int counted = 0;
        const cJSON *h, *role;
        cJSON_ArrayForEach(role, item(row, "roles")) counted += (int)role->valuedouble;
        ck_assert_int_eq(counted, cJSON_GetArraySize(item(own, "heads")));
        cJSON_ArrayForEach(h, item(own, "heads")) {
            const cJSON *n = cJSON_GetObjectItemCaseSensitive(item(row, "roles"), item(h, "role")->valuestring);
            ck_assert_msg(n && n->valuedouble >= 1, "layer %d: role %s not counted", l, item(h, "role")->valuestring);
            for (int k = 0; k < 4; k++) {
                const int shown = (int)cJSON_GetArrayItem(item(item(h, "pattern_rows"), patterns[k]), 0)->valuedouble;
                const double share = item(h, patterns[k])->valuedouble;
                if (shown >= 2 && (best_layer[k] < 0 || shown > best_shown[k] ||
                                   (shown == best_shown[k] && share > best_share[k]))) {
                    best_layer[k] = l, best_head[k] = (int)item(h, "index")->valuedouble;
                    best_shown[k] = shown, best_share[k] = share;
                }
            }
        }
        cJSON_Delete(own);
    }
    /* The prediction: 5 tokens, the most likely first (its numbers: check_model_ref.c against torch) */
    const cJSON *pred = item(top, "prediction");
    ck_assert_int_eq(cJSON_GetArraySize(pred), 5);
    for (int k = 1; k < 5; k++)
        ck_assert(item(cJSON_GetArrayItem(pred, k), "logprob")->valuedouble <=
                  item(cJSON_GetArrayItem(pred, k - 1), "logprob")->valuedouble);
    ck_assert(cJSON_IsString(item(cJSON_GetArrayItem(pred, 0), "token")));
    ck_assert(cJSON_IsNull(item(top, "head_effects"))); /* asked for with --head-effects only */
    run(r, (const char *[]){"-q", "--head-effects", "--text", SENTENCE " Mary and John", "-o", "eff", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    cJSON *eff = read_json(r, "eff/report.json");
    const cJSON *effects = item(eff, "head_effects"); /* their values: check_model_ref.c against torch */
    ck_assert_int_eq(cJSON_GetArraySize(effects), 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetArrayItem(effects, 1)), 2);
    cJSON_Delete(eff);
    const cJSON *slides = item(top, "heads_worth_a_slide");
    ck_assert_int_eq(cJSON_GetArraySize(slides), 4);
    for (int k = 0; k < 4; k++) {
        const cJSON *b = cJSON_GetArrayItem(slides, k);
        if (best_layer[k] < 0) {
            ck_assert(cJSON_IsNull(item(b, "layer")));
            continue;
        }
        ck_assert_int_eq((int)item(b, "layer")->valuedouble, best_layer[k]);
        ck_assert_int_eq((int)item(b, "head")->valuedouble, best_head[k]);
        ck_assert_int_eq((int)item(b, "shown")->valuedouble, best_shown[k]);
    }
    /* Without --head-maps a head's own map is drawn only when it is worth a
     * slide (a head an earlier layer's held the place of until a later one
     * took it is removed again), the same bytes as --head-maps draws. */
    for (int l = 0; l < 2; l++)
        for (int h = 0; h < 2; h++) {
            int slide = 0;
            for (int k = 0; k < 4; k++)
                slide |= best_layer[k] == l && best_head[k] == h;
            char path[PATH_MAX], mine[64], all[64];
            snprintf(mine, sizeof mine, "model_mhaviz/layer_%02d/head_%02d.png", l, h);
            snprintf(all, sizeof all, "maps/layer_%02d/head_%02d.png", l, h);
            snprintf(path, sizeof path, "%s/%s", r->dir, mine);
            ck_assert_msg((access(path, F_OK) == 0) == slide, "%s: %s", mine, slide ? "missing" : "drawn");
            ck_assert(!slide || same_file(r, mine, all));
        }
    cJSON_Delete(top);
    done(r);
}
END_TEST

/* The memory --max-memory is checked against, for a run over several
 * layers: everything the model's load holds (a layer's weights converted,
 * the run state, the tensor being converted, every layer kept until it is
 * written, the tokenizer), the summary and one layer's run; measured
 * (Linux's VmHWM, --timing) never above it, on both tiny families' every
 * layer. Under it: exit 1, the message names the layers, nothing written. */
START_TEST(memory_estimate_covers_every_layer)
{
    const char *const models[2][2] = {{"gpt2_vocab", "gpt2"}, {"llama3_vocab", "llama3"}};
    for (int m = 0; m < 2; m++) {
        Run *r = calloc(1, sizeof *r);
        make_model(r, models[m][0], models[m][1]);
        run(r, (const char *[]){"-t", "2", "-q", "--timing", "--text", SENTENCE, "-o", "out", "MODEL", NULL});
        ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
        double estimate, peak;
        timing_memory(r->err, &estimate, &peak);
#ifndef SANITIZED /* AddressSanitizer's shadow memory and redzones are no part of the estimate */
        ck_assert_msg(peak <= estimate, "%s: estimated %.1f MB, peak %.1f MB", models[m][0], estimate, peak);
#endif
        remove_tree(r->dir);
        free(r->dir);
        make_model(r, models[m][0], models[m][1]);
        run(r, (const char *[]){"-q", "--max-memory", "1", "--text", SENTENCE, "MODEL", NULL});
        ck_assert_msg(r->status == MHAVIZ_EINPUT, "exit %d: %s", r->status, r->err);
        ck_assert_msg(strstr(r->err, "layers would need about") && strstr(r->err, "over the limit of 1 MB"), "%s",
                      r->err);
        ck_assert_int_eq(written(r), 0);
        done(r);
    }
}
END_TEST

/* The command line a model needs: exit 2, the message, nothing written. */
static const struct {
    const char *layer; /* --layer's value, or NULL for none */
    const char *text;  /* --text's value, or NULL for none */
    const char *msg;
} USAGE[] = {
    {"2", SENTENCE, "--layer 2: "},
    {"0-2", SENTENCE, "--layer 0-2: "},
    {"0-2", SENTENCE, "has 2 layers (config.json's \"n_layer\"); give --layer 0 to 1"},
    {"1-0", SENTENCE, "--layer 1-0: the range 1-0 is reversed"},
    {"0,1,0", SENTENCE, "--layer 0,1,0 lists layer 0 twice"},
    {"0,", SENTENCE, "--layer 0,: '' is not a layer"},
    {"x", SENTENCE, "--layer x: 'x' is not a layer"},
    {"-1", SENTENCE, "--layer -1: '-1' is not a layer"},
    {"0", NULL, "is a model folder: give the sentence it reads with --text TEXT"},
};

START_TEST(model_usage_refused)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    const char *args[8] = {"-q"};
    int n = 1;
    if (USAGE[_i].layer) {
        args[n++] = "--layer";
        args[n++] = USAGE[_i].layer;
    }
    if (USAGE[_i].text) {
        args[n++] = "--text";
        args[n++] = USAGE[_i].text;
    }
    args[n++] = "MODEL";
    args[n] = NULL;
    run(r, args);
    ck_assert_msg(r->status == MHAVIZ_EUSAGE, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, USAGE[_i].msg), "'%s' lacks '%s'", r->err, USAGE[_i].msg);
    ck_assert_int_eq(written(r), 0);
    done(r);
}
END_TEST

/* A head whose role is "split" has its colour and letter in the grid: on
 * SENTENCE, gpt2_vocab's L0H0 and L1H1 are split (the grid once had no
 * entry for the role and the run crashed drawing it). */
START_TEST(split_head_in_the_grid)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    run(r, (const char *[]){"-q", "--text", SENTENCE, "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    assert_slide(r, "model_mhaviz/model_overview.png");
    cJSON *top = read_json(r, "model_mhaviz/report.json");
    int split = 0;
    const cJSON *l;
    cJSON_ArrayForEach(l, item(top, "layers")) {
        const cJSON *n = cJSON_GetObjectItem(item(l, "roles"), "split");
        split += n ? n->valueint : 0;
    }
    ck_assert_int_ge(split, 1);
    cJSON_Delete(top);
    done(r);
}
END_TEST

/* --text with a JSON input: exit 2. */
START_TEST(text_needs_a_model_folder)
{
    Run *r = calloc(1, sizeof *r);
    r->dir = scratch("model");
    char in[PATH_MAX];
    ck_assert_ptr_nonnull(realpath("tests/data/good/small_x.json", in));
    run(r, (const char *[]){"-q", "--text", "a b", in, NULL});
    ck_assert_msg(r->status == MHAVIZ_EUSAGE, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "--text, --text-file, --ablate and --repeat are for a model folder (one holding "
                             "config.json); '") && strstr(r->err, "small_x.json' is a file"), "%s", r->err);
    ck_assert_int_eq(written(r), 0);
    run(r, (const char *[]){"-q", "--repeat", in, NULL});
    ck_assert_msg(r->status == MHAVIZ_EUSAGE && strstr(r->err, "are for a model folder"), "exit %d: %s", r->status,
                  r->err);
    ck_assert_int_eq(written(r), 0);
    /* a folder without config.json, and no folder at all: each says which */
    char folder[PATH_MAX + 16];
    snprintf(folder, sizeof folder, "%s/empty", r->dir);
    ck_assert_int_eq(mkdir(folder, 0755), 0);
    run(r, (const char *[]){"-q", "--text", "a b", folder, NULL});
    ck_assert_msg(r->status == MHAVIZ_EUSAGE && strstr(r->err, "/empty' has no config.json"), "exit %d: %s", r->status,
                  r->err);
    run(r, (const char *[]){"-q", "--text", "a b", "no_such_model", NULL});
    ck_assert_msg(r->status == MHAVIZ_EUSAGE && strstr(r->err, "'no_such_model' does not exist"), "exit %d: %s",
                  r->status, r->err);
    ck_assert_int_eq(written(r), 1); /* the folder "empty", nothing else */
    done(r);
}
END_TEST

/* --ablate: one head off gives the change --head-effects gives it (the same
 * forward; their values against torch: check_model_ref.c, several heads at
 * once included), two heads off their own top 5, listed in report.json's
 * "ablated" and report.txt. */
START_TEST(ablate_writes_the_prediction_with_heads_off)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    run(r, (const char *[]){"-q", "--head-effects", "--ablate", "0.1", "--text", SENTENCE, "-o", "one", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    cJSON *one = read_json(r, "one/report.json");
    const cJSON *ab = item(one, "ablated");
    const double l0h1 = cJSON_GetArrayItem(cJSON_GetArrayItem(item(one, "head_effects"), 0), 1)->valuedouble;
    ck_assert_double_eq_tol(item(ab, "top_change")->valuedouble, l0h1, 1e-9);
    ck_assert_double_eq_tol(item(ab, "top_logprob")->valuedouble,
                            item(cJSON_GetArrayItem(item(one, "prediction"), 0), "logprob")->valuedouble + l0h1, 1e-8);
    /* leans_on: the heads below -effect_matters, the most first */
    const double matters = item(one, "effect_matters")->valuedouble;
    double prev = -1e300;
    int n_matter = 0;
    const cJSON *row, *e;
    cJSON_ArrayForEach(row, item(one, "head_effects")) cJSON_ArrayForEach(e, row) n_matter += e->valuedouble < -matters;
    ck_assert_int_eq(cJSON_GetArraySize(item(one, "leans_on")), n_matter < 5 ? n_matter : 5);
    cJSON_ArrayForEach(e, item(one, "leans_on")) {
        ck_assert(item(e, "effect")->valuedouble < -matters && item(e, "effect")->valuedouble >= prev);
        prev = item(e, "effect")->valuedouble;
    }
    cJSON_Delete(one);

    run(r, (const char *[]){"-q", "--ablate", "1.0,0.1", "--text", SENTENCE, "-o", "two", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    cJSON *two = read_json(r, "two/report.json");
    ab = item(two, "ablated");
    ck_assert_int_eq(cJSON_GetArraySize(item(ab, "heads")), 2);
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetArrayItem(item(ab, "heads"), 0), 0)->valuedouble, 0);
    ck_assert_int_eq((int)cJSON_GetArrayItem(cJSON_GetArrayItem(item(ab, "heads"), 1), 0)->valuedouble, 1);
    const cJSON *pred = item(ab, "prediction");
    ck_assert_int_eq(cJSON_GetArraySize(pred), 5);
    for (int k = 1; k < 5; k++)
        ck_assert(item(cJSON_GetArrayItem(pred, k), "logprob")->valuedouble <=
                  item(cJSON_GetArrayItem(pred, k - 1), "logprob")->valuedouble);
    ck_assert(cJSON_IsNull(item(two, "head_effects")));
    ck_assert_int_eq(cJSON_GetArraySize(item(two, "leans_on")), 0);
    cJSON_Delete(two);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/two/report.txt", r->dir);
    char *txt = slurp(path, NULL);
    ck_assert_msg(strstr(txt, "With heads L0H1, L1H0 switched off together"), "%s", txt);
    free(txt);
    done(r);
}
END_TEST

/* Bad --ablate values (gpt2_vocab: 2 layers of 2 heads): exit 2 naming the item, nothing written. */
static const struct {
    const char *spec;
    const char *layer; /* --layer, or NULL */
    const char *msg;
} ABLATE[] = {
    {"2.0", NULL, "--ablate 2.0: '2.0': layer 2 is not in the model"},
    {"0.1,1.2", NULL, "--ablate 0.1,1.2: '1.2': head 2 is not in the model"},
    {"0.1,0.1", NULL, "--ablate 0.1,0.1 lists head 0.1 twice"},
    {"x", NULL, "--ablate x: 'x' is not a head (LAYER.HEAD"},
    {"0", NULL, "--ablate 0: '0' is not a head"},
    {"0.1,", NULL, "--ablate 0.1,: '' is not a head"},
    {".1", NULL, "--ablate .1: '.1' is not a head"},
    {"0.1.1", NULL, "--ablate 0.1.1: '0.1.1' is not a head"},
    {"-1.0", NULL, "--ablate -1.0: '-1.0' is not a head"},
    {"0.1", "1", "--ablate changes the model's prediction, which a run over several layers reports"},
};

START_TEST(ablate_refused)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    const char *args[10] = {"-q", "--text", SENTENCE, "--ablate", ABLATE[_i].spec};
    int n = 5;
    if (ABLATE[_i].layer) {
        args[n++] = "--layer";
        args[n++] = ABLATE[_i].layer;
    }
    args[n++] = "MODEL";
    args[n] = NULL;
    run(r, args);
    ck_assert_msg(r->status == MHAVIZ_EUSAGE, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, ABLATE[_i].msg), "'%s' lacks '%s'", r->err, ABLATE[_i].msg);
    ck_assert_int_eq(written(r), 0);
    done(r);
}
END_TEST

/* --repeat: the sentence's tokens twice, Llama 2's BOS (1) once; over the
 * model's positions (n_positions 20 for GPT-2's 14 tokens: 28) exit 1
 * naming config.json's field and --repeat, nothing written. */
START_TEST(repeat_doubles_the_tokens)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "llama2_vocab", "llama2");
    run(r, (const char *[]){"-q", "--text", SENTENCE, "--layer", "1", "-o", "once", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    run(r, (const char *[]){"-q", "--repeat", "--text", SENTENCE, "--layer", "1", "-o", "twice", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    cJSON *once = read_json(r, "once/report.json"), *twice = read_json(r, "twice/report.json");
    const cJSON *a = item(once, "token_ids"), *b = item(twice, "token_ids");
    const int n = cJSON_GetArraySize(a);
    ck_assert_int_eq((int)cJSON_GetArrayItem(a, 0)->valuedouble, 1);
    ck_assert_int_eq(cJSON_GetArraySize(b), 2 * n - 1);
    for (int t = 0; t < 2 * n - 1; t++) {
        const int want = t < n ? (int)cJSON_GetArrayItem(a, t)->valuedouble
                               : (int)cJSON_GetArrayItem(a, t - n + 1)->valuedouble;
        ck_assert_int_eq((int)cJSON_GetArrayItem(b, t)->valuedouble, want);
    }
    cJSON_Delete(once), cJSON_Delete(twice);
    done(r);

    r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    edit_config(r, "n_positions", "20");
    run(r, (const char *[]){"-q", "--repeat", "--text", SENTENCE, "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_EINPUT, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "config.json: the text has 28 tokens (--repeat: its 14 own tokens twice); the model "
                                 "takes 1 to 20 (\"n_positions\")"), "%s", r->err);
    ck_assert_int_eq(written(r), 0);
    done(r);
}
END_TEST

/* One way to spoil the gpt2_vocab model folder, and what the message must say. */
typedef struct {
    void (*spoil)(Run *r);
    const char *file; /* the file the message names */
    const char *msg;  /* and the field */
} Bad;

/* Tensor headers of GPT-2's two embeddings at gpt2_vocab's shapes: what a
 * checkpoint needs before its first layer. */
#define WTE "\"wte.weight\": {\"dtype\": \"F32\", \"shape\": [50257, 16], \"data_offsets\": [0, 3216448]}"
#define WPE "\"wpe.weight\": {\"dtype\": \"F32\", \"shape\": [1024, 16], \"data_offsets\": [3216448, 3281984]}"

static void header_past_the_end(Run *r) { write_safetensors(r, "model.safetensors", "{}", 1000, 0); }
static void header_huge(Run *r) { write_safetensors(r, "model.safetensors", "{}", 1LL << 40, 0); }
static void header_not_json(Run *r) { write_safetensors(r, "model.safetensors", "{\"a\": ", -1, 0); }
static void offsets_outside(Run *r)
{
    write_safetensors(r, "model.safetensors", "{\"x\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}}",
                      -1, 8);
}
static void offsets_overlap(Run *r)
{
    write_safetensors(r, "model.safetensors", "{\"a\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [0, 16]}, "
                      "\"b\": {\"dtype\": \"F32\", \"shape\": [4], \"data_offsets\": [8, 24]}}", -1, 24);
}
static void shape_not_bytes(Run *r)
{
    write_safetensors(r, "model.safetensors", "{\"x\": {\"dtype\": \"F16\", \"shape\": [2, 3], \"data_offsets\": [0, 8]}}",
                      -1, 8);
}
static void tensor_missing(Run *r) { write_safetensors(r, "model.safetensors", "{" WTE ", " WPE "}", -1, 3281984); }
static void dtype_int8(Run *r)
{
    write_safetensors(r, "model.safetensors", "{\"wte.weight\": {\"dtype\": \"I8\", \"shape\": [50257, 16], "
                      "\"data_offsets\": [0, 804112]}, \"wpe.weight\": {\"dtype\": \"F32\", \"shape\": [1024, 16], "
                      "\"data_offsets\": [804112, 869648]}}", -1, 869648);
}
static void shards_missing(Run *r)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model/model.safetensors.index.json", r->dir);
    const char *index = "{\"weight_map\": {\"wte.weight\": \"model.safetensors\", "
                        "\"h.0.ln_1.weight\": \"model-00002-of-00002.safetensors\"}}";
    write_file(path, index, strlen(index));
}
static void no_checkpoint(Run *r)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model/model.safetensors", r->dir);
    ck_assert_int_eq(unlink(path), 0);
}
static void field_missing(Run *r) { edit_config(r, "n_layer", NULL); }
static void field_contradicts(Run *r) { edit_config(r, "n_embd", "32"); }
static void type_unknown(Run *r) { edit_config(r, "model_type", "\"bert\""); }
static void text_too_long(Run *r) { edit_config(r, "n_positions", "8"); }
static void family_fields_missing(Run *r) { edit_config(r, "model_type", "\"llama\""); }
static void tokenizer_of_another_model(Run *r) { edit_config(r, "vocab_size", "300"); } /* GPT-2's ids, 300 rows */
static void tokenizer_missing(Run *r)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/model/tokenizer.json", r->dir);
    ck_assert_int_eq(unlink(path), 0);
}

static const Bad BAD[] = {
    {header_past_the_end, "model.safetensors", "the header length in its first 8 bytes, 1000, runs past the end"},
    {header_huge, "model.safetensors", "1099511627776, runs past the end of the file"},
    {header_not_json, "model.safetensors", "the header is not a JSON object"},
    {offsets_outside, "model.safetensors", "tensor 'x': \"data_offsets\" do not lie within the file's 8 bytes"},
    {offsets_overlap, "model.safetensors", "tensors 'a' and 'b' overlap"},
    {shape_not_bytes, "model.safetensors", "tensor 'x': its shape and dtype F16 need 12 bytes, its \"data_offsets\" "
                                           "[0, 8] hold 8"},
    {tensor_missing, "model", "the checkpoint has no tensor 'h.0.attn.c_attn.weight'"},
    {dtype_int8, "model.safetensors", "tensor 'wte.weight' has dtype I8"},
    {shards_missing, "model.safetensors.index.json", "names the shard model-00002-of-00002.safetensors, which is not"},
    {no_checkpoint, "model", "no model.safetensors, nor model.safetensors.index.json"},
    {field_missing, "config.json", "\"n_layer\" is missing"},
    {field_contradicts, "model.safetensors", "tensor 'wte.weight' has shape (50257, 16); config.json's vocab_size and "
                                             "n_embd give (50257, 32)"},
    {type_unknown, "config.json", "\"model_type\" is \"bert\"; mhaviz runs \"gpt2\" or \"llama\" or \"mistral\" or "
                                  "\"qwen2\""},
    {text_too_long, "config.json", "the text has 14 tokens; the model takes 1 to 8 (\"n_positions\")"},
    {family_fields_missing, "config.json", "\"num_hidden_layers\" is missing"},
    {tokenizer_missing, "tokenizer.json", ""},
    /* "When" is GPT-2's id 2215 (build/tokenizers/gpt2/ids.json's reference) */
    {tokenizer_of_another_model, "tokenizer.json", "does not match the model's checkpoint: it gives token 0 ('When') "
                                                   "the id 2215, and config.json's \"vocab_size\" is 300"},
};

START_TEST(bad_checkpoint_exits_1)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    BAD[_i].spoil(r);
    run(r, (const char *[]){"-q", "--text", SENTENCE, "--layer", "0", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_EINPUT, "case %d: exit %d: %s", _i, r->status, r->err);
    ck_assert_msg(strstr(r->err, BAD[_i].file) && strstr(r->err, BAD[_i].msg), "case %d: '%s' lacks '%s' or '%s'", _i,
                  r->err, BAD[_i].file, BAD[_i].msg);
    ck_assert_int_eq(written(r), 0);
    done(r);
}
END_TEST

/* r->dir/name holding text. */
static void put_file(const Run *r, const char *name, const char *text)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", r->dir, name);
    write_file(path, text, strlen(text));
}

#define OTHER "The cat sat on the mat and the cat slept"

/* --text-file: one sentence gives what --text gives, byte for byte; two
 * sentences pool each head's rows: the heads worth a slide are found again
 * here from the two single-sentence runs' layer reports (rows showing each
 * pattern and rows that could, summed; the share their mean weighted by
 * the rows: the most rows showing it, then the larger share, then the
 * first), report.json says over how many sentences, and the pictures and
 * layer_NN/ stay the first sentence's. */
START_TEST(text_file_pools_the_sentences)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "gpt2_vocab", "gpt2");
    put_file(r, "one.txt", SENTENCE "\n");
    put_file(r, "two.txt", SENTENCE "\r\n" OTHER);
    run(r, (const char *[]){"-q", "--text", SENTENCE, "-o", "a", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    run(r, (const char *[]){"-q", "--text", OTHER, "-o", "b", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    run(r, (const char *[]){"-q", "--text-file", "one.txt", "-o", "one", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert(same_file(r, "one/report.json", "a/report.json"));
    ck_assert(same_file(r, "one/model_overview.png", "a/model_overview.png"));
    run(r, (const char *[]){"-q", "--text-file", "two.txt", "-o", "ab", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert(same_file(r, "ab/layer_01/report.json", "a/layer_01/report.json"));
    cJSON *ab = read_json(r, "ab/report.json");
    ck_assert_int_eq((int)item(ab, "sentences")->valuedouble, 2);
    cJSON *a = read_json(r, "a/report.json");
    ck_assert_int_eq((int)item(a, "sentences")->valuedouble, 1);
    cJSON_Delete(a);

    const char *const patterns[4] = {"previous_token", "first_token", "duplicate_token", "induction"};
    int best_layer[4] = {-1, -1, -1, -1}, best_head[4] = {-1, -1, -1, -1}, best_shown[4] = {0}, best_rows[4] = {0};
    double best_share[4] = {0};
    for (int l = 0; l < 2; l++) {
        char pa[64], pb[64];
        snprintf(pa, sizeof pa, "a/layer_%02d/report.json", l);
        snprintf(pb, sizeof pb, "b/layer_%02d/report.json", l);
        cJSON *ja = read_json(r, pa), *jb = read_json(r, pb);
        for (int h = 0; h < 2; h++) {
            const cJSON *ha = cJSON_GetArrayItem(item(ja, "heads"), h), *hb = cJSON_GetArrayItem(item(jb, "heads"), h);
            for (int k = 0; k < 4; k++) {
                const cJSON *ra = item(item(ha, "pattern_rows"), patterns[k]);
                const cJSON *rb = item(item(hb, "pattern_rows"), patterns[k]);
                const int shown = (int)(cJSON_GetArrayItem(ra, 0)->valuedouble + cJSON_GetArrayItem(rb, 0)->valuedouble);
                const int na = (int)cJSON_GetArrayItem(ra, 1)->valuedouble, nb = (int)cJSON_GetArrayItem(rb, 1)->valuedouble;
                const double share = ((na ? item(ha, patterns[k])->valuedouble * na : 0.0) +
                                      (nb ? item(hb, patterns[k])->valuedouble * nb : 0.0)) / (na + nb > 0 ? na + nb : 1);
                if (shown >= 2 && (best_layer[k] < 0 || shown > best_shown[k] ||
                                   (shown == best_shown[k] && share > best_share[k]))) {
                    best_layer[k] = l, best_head[k] = h;
                    best_shown[k] = shown, best_rows[k] = na + nb, best_share[k] = share;
                }
            }
        }
        cJSON_Delete(ja), cJSON_Delete(jb);
    }
    const cJSON *slides = item(ab, "heads_worth_a_slide");
    for (int k = 0; k < 4; k++) {
        const cJSON *b = cJSON_GetArrayItem(slides, k);
        if (best_layer[k] < 0) {
            ck_assert_msg(cJSON_IsNull(item(b, "layer")), "%s", patterns[k]);
            continue;
        }
        ck_assert_int_eq((int)item(b, "layer")->valuedouble, best_layer[k]);
        ck_assert_int_eq((int)item(b, "head")->valuedouble, best_head[k]);
        ck_assert_int_eq((int)item(b, "shown")->valuedouble, best_shown[k]);
        ck_assert_int_eq((int)item(b, "rows")->valuedouble, best_rows[k]);
        ck_assert_double_eq_tol(item(b, "share")->valuedouble, best_share[k], 1e-8);
    }
    cJSON_Delete(ab);
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/ab/report.txt", r->dir);
    char *txt = slurp(path, NULL);
    ck_assert_msg(strstr(txt, "Over 2 sentences (--text-file)") && strstr(txt, "rows over 2 sentences"), "%s", txt);
    free(txt);
    done(r);
}
END_TEST

/* Bad --text-file: exit code, the message naming the file (and line), nothing written
 * (Llama 2's tokenizer and checkpoint, its positions cut to 20: the first two
 * sentences fit, the third, twice the sentence, does not). */
static const struct {
    const char *content; /* NULL: no file */
    const char *layer;   /* --layer, or NULL */
    int status;
    const char *msg, *msg2; /* msg2: also, or NULL */
} TEXT_FILE[] = {
    {NULL, NULL, MHAVIZ_EIO, "s.txt: cannot open: No such file or directory", NULL},
    {"", NULL, MHAVIZ_EINPUT, "s.txt: no sentence (the file is empty", NULL},
    {SENTENCE "\n\n" OTHER "\n", NULL, MHAVIZ_EINPUT, "s.txt:2: an empty line", NULL},
    {SENTENCE "\n \t\r\n", NULL, MHAVIZ_EINPUT, "s.txt:2: an empty line", NULL},
    {"\xff\xfe\n", NULL, MHAVIZ_EINPUT, "s.txt:1: the text is not UTF-8 at byte 0", NULL},
    {SENTENCE "\nok\n" SENTENCE " " SENTENCE "\n", NULL, MHAVIZ_EINPUT, "s.txt:3: ",
     "model/config.json: the text has 29 tokens; the model takes 1 to 20 (\"max_position_embeddings\")"},
    {SENTENCE "\n", "1", MHAVIZ_EUSAGE, "--text-file scores the heads' roles over its sentences in a run over several",
     NULL},
};

START_TEST(text_file_refused)
{
    Run *r = calloc(1, sizeof *r);
    make_model(r, "llama2_vocab", "llama2");
    edit_config(r, "max_position_embeddings", "20");
    if (TEXT_FILE[_i].content)
        put_file(r, "s.txt", TEXT_FILE[_i].content);
    const char *args[10] = {"-q", "--text-file", "s.txt"};
    int n = 3;
    if (TEXT_FILE[_i].layer) {
        args[n++] = "--layer";
        args[n++] = TEXT_FILE[_i].layer;
    }
    args[n++] = "MODEL";
    args[n] = NULL;
    run(r, args);
    ck_assert_msg(r->status == TEXT_FILE[_i].status, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, TEXT_FILE[_i].msg), "'%s' lacks '%s'", r->err, TEXT_FILE[_i].msg);
    ck_assert_msg(!TEXT_FILE[_i].msg2 || strstr(r->err, TEXT_FILE[_i].msg2), "'%s' lacks '%s'", r->err,
                  TEXT_FILE[_i].msg2);
    ck_assert_int_eq(written(r), TEXT_FILE[_i].content ? 1 : 0); /* s.txt alone */
    run(r, (const char *[]){"-q", "--text-file", "s.txt", "--text", "a", "MODEL", NULL});
    ck_assert_msg(r->status == MHAVIZ_EUSAGE && strstr(r->err, "with --text or with --text-file, not both"), "%s",
                  r->err);
    done(r);
}
END_TEST

Suite *model_cli_suite(void)
{
    Suite *s = suite_create("model_cli");
    TCase *tc = tcase_create("model folders");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gpt2_layer_runs_and_names_the_model);
    tcase_add_test(tc, llama_layer_takes_every_option);
    tcase_add_test(tc, every_layer_by_default);
    tcase_add_test(tc, split_head_in_the_grid);
    tcase_add_test(tc, memory_estimate_covers_every_layer);
    tcase_add_loop_test(tc, model_usage_refused, 0, (int)(sizeof USAGE / sizeof USAGE[0]));
    tcase_add_test(tc, text_needs_a_model_folder);
    tcase_add_test(tc, ablate_writes_the_prediction_with_heads_off);
    tcase_add_loop_test(tc, ablate_refused, 0, (int)(sizeof ABLATE / sizeof ABLATE[0]));
    tcase_add_test(tc, repeat_doubles_the_tokens);
    tcase_add_test(tc, text_file_pools_the_sentences);
    tcase_add_loop_test(tc, text_file_refused, 0, (int)(sizeof TEXT_FILE / sizeof TEXT_FILE[0]));
    tcase_add_loop_test(tc, bad_checkpoint_exits_1, 0, (int)(sizeof BAD / sizeof BAD[0]));
    suite_add_tcase(s, tc);
    return s;
}
