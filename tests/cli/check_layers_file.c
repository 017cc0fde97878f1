/* check_layers_file.c — an input file of several layers ("layers",
 * docs/input.md) as a user runs it: every layer by default, as a model's
 * layers run (layer_NN/, model_overview.png, layers.png, the table of
 * layers); --layer picks among them; each layer's folder is what a file of
 * that layer alone gives, byte for byte; a --layer the file lacks: exit 2,
 * nothing written. (Bad files of layers, exit 1: check_cli.c's BAD.)
 *
 * tests/data/good/layers_small_1.json is layers[1] of layers_small.json
 * with the tokens, as a file of one layer. */
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

typedef struct {
    char *dir;         /* the scratch folder the run writes in */
    int status;        /* exit code, or -1 */
    char err[1 << 14]; /* captured stderr */
} Run;

/* Run mhaviz with args (NULL-terminated; "DATA/x" stands for tests/data/good/x) in r->dir. */
static void run(Run *r, const char *const *args)
{
    char data[PATH_MAX], paths[8][PATH_MAX + 32];
    ck_assert_ptr_nonnull(realpath("tests/data/good", data));
    const char *argv[16] = {binary_path()};
    int n = 1;
    for (; args[n - 1]; n++) {
        ck_assert_int_lt(n, 8);
        if (strncmp(args[n - 1], "DATA/", 5) == 0) {
            snprintf(paths[n], sizeof paths[n], "%s/%s", data, args[n - 1] + 5);
            argv[n] = paths[n];
        } else {
            argv[n] = args[n - 1];
        }
    }
    argv[n] = NULL;
    r->status = run_program(r->dir, argv, NULL, r->err, sizeof r->err);
}

static Run *start(void)
{
    Run *r = calloc(1, sizeof *r);
    ck_assert_ptr_nonnull(r);
    r->dir = scratch("layers");
    return r;
}

static void done(Run *r)
{
    remove_tree(r->dir);
    free(r->dir);
    free(r);
}

/* 1 when r->dir/rel exists. */
static int exists(const Run *r, const char *rel)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", r->dir, rel);
    struct stat st;
    return stat(path, &st) == 0;
}

/* Every file of folder a (r->dir/a) is in folder b with the same bytes,
 * and b has no other; returns how many. */
static int folders_same(const Run *r, const char *a, const char *b)
{
    char pa[PATH_MAX], pb[PATH_MAX];
    snprintf(pa, sizeof pa, "%s/%s", r->dir, a);
    DIR *d = opendir(pa);
    ck_assert_msg(d != NULL, "%s: no such folder", pa);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (e->d_name[0] == '.')
            continue;
        snprintf(pa, sizeof pa, "%s/%s/%s", r->dir, a, e->d_name);
        snprintf(pb, sizeof pb, "%s/%s/%s", r->dir, b, e->d_name);
        ck_assert_msg(files_same(pa, pb), "%s and %s differ", pa, pb);
        n++;
    }
    closedir(d);
    snprintf(pb, sizeof pb, "%s/%s", r->dir, b);
    ck_assert_ptr_nonnull(d = opendir(pb));
    int m = 0;
    while ((e = readdir(d)))
        m += e->d_name[0] != '.';
    closedir(d);
    ck_assert_int_eq(m, n);
    return n;
}

/* No --layer: every layer, as a model's run writes them; report.json names
 * the file (no model, no prediction) and its layers. */
START_TEST(every_layer_by_default)
{
    Run *r = start();
    run(r, (const char *[]){"-q", "DATA/layers_small.json", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "wrote layers_small_mhaviz/"), "%s", r->err);
    const char *const files[] = {"layer_00/overview.png", "layer_01/report.json", "model_overview.png", "layers.png",
                                 "report.txt"};
    for (int i = 0; i < 5; i++) {
        char rel[128];
        snprintf(rel, sizeof rel, "layers_small_mhaviz/%s", files[i]);
        ck_assert_msg(exists(r, rel), "%s not written", rel);
    }
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/layers_small_mhaviz/report.json", r->dir);
    char *text = slurp(path, NULL);
    cJSON *root = cJSON_Parse(text);
    free(text);
    ck_assert_ptr_nonnull(root);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "model")));
    ck_assert(cJSON_IsNull(cJSON_GetObjectItem(root, "prediction")));
    const cJSON *input = cJSON_GetObjectItem(root, "input");
    ck_assert_str_eq(cJSON_GetObjectItem(input, "name")->valuestring, "layers_small.json");
    ck_assert_int_eq(cJSON_GetObjectItem(input, "n_layers")->valueint, 2);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItem(root, "layers")), 2);
    cJSON_Delete(root);
    done(r);
}
END_TEST

/* Layer 1 of the file, run alone (--layer 1) or among every layer with
 * every head's map (--head-maps; lesson.html is then the run's, at the
 * top), writes what the same layer in a file of its own writes, byte for
 * byte. */
START_TEST(a_layer_is_the_layer_alone)
{
    Run *r = start();
    run(r, (const char *[]){"-q", "DATA/layers_small_1.json", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    run(r, (const char *[]){"-q", "--layer", "1", "DATA/layers_small.json", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, "wrote layers_small_layer1_mhaviz/"), "%s", r->err);
    run(r, (const char *[]){"-q", "--head-maps", "DATA/layers_small.json", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_int_ge(folders_same(r, "layers_small_1_mhaviz", "layers_small_layer1_mhaviz"), 8);
    /* a run over several layers writes one lesson.html, at the top */
    run(r, (const char *[]){"-q", "--no-html", "-o", "alone", "DATA/layers_small_1.json", NULL});
    ck_assert_msg(r->status == MHAVIZ_OK, "exit %d: %s", r->status, r->err);
    ck_assert_int_ge(folders_same(r, "alone", "layers_small_mhaviz/layer_01"), 8);
    done(r);
}
END_TEST

/* What --layer cannot ask of a file: exit 2, the message, nothing written. */
static const struct {
    const char *args[5], *says;
} REFUSED[] = {
    {{"--layer", "2", "DATA/layers_small.json"}, "layers_small.json has 2 layers (its \"layers\" array); give --layer 0 to 1"},
    {{"--layer", "1-0", "DATA/layers_small.json"}, "--layer 1-0: the range 1-0 is reversed"},
    {{"--layer", "0", "DATA/small_x.json"}, "small_x.json holds one layer (it has no \"layers\" array)"},
    {{"--kv-heads", "1", "DATA/layers_small.json"}, "--kv-heads and --kv-groups are for one layer at a time"},
};

START_TEST(layer_refused)
{
    Run *r = start();
    const char *args[6] = {"-q"};
    for (int i = 0; REFUSED[_i].args[i]; i++)
        args[i + 1] = REFUSED[_i].args[i];
    run(r, args);
    ck_assert_msg(r->status == MHAVIZ_EUSAGE, "exit %d: %s", r->status, r->err);
    ck_assert_msg(strstr(r->err, REFUSED[_i].says), "%s", r->err);
    ck_assert_int_eq(count_entries(r->dir, NULL), 0);
    done(r);
}
END_TEST

Suite *layers_file_suite(void)
{
    Suite *s = suite_create("layers_file");
    TCase *tc = tcase_create("layers_file");
    tcase_set_timeout(tc, 120);
    tcase_add_test(tc, every_layer_by_default);
    tcase_add_test(tc, a_layer_is_the_layer_alone);
    tcase_add_loop_test(tc, layer_refused, 0, (int)(sizeof REFUSED / sizeof REFUSED[0]));
    suite_add_tcase(s, tc);
    return s;
}
