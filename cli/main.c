/* main.c — the mhaviz command: parse argv, run, exit with a status.
 *
 *   load input -> forward pass (heads) -> forward pass (single wide head)
 *   -> heatmaps + reports into a temporary folder -> move it into place. */
#include "init_cmd.h"
#include "input.h"
#include "mha.h"
#include "outdir.h"
#include "pool.h"
#include "render.h"
#include "report.h"
#include "status.h"

#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MHAVIZ_VERSION "0.1.0"

typedef struct {
    const char *input;   /* INPUT.json */
    const char *out_dir; /* -o; NULL = input's stem + "_mhaviz" */
    int threads;         /* -t; 0 = all cores */
    int max_memory_mb;   /* --max-memory; 0 = the default limit */
    int quiet;           /* -q */
    int kv_heads;        /* --kv-heads; 0 = as the input says */
    RenderOptions render;
} Options;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mhaviz [options] INPUT.json\n"
        "\n"
        "Runs multi-head attention on INPUT.json and writes each head's attention\n"
        "map as a PNG heatmap, the single wide head's map, and a report comparing them.\n"
        "\n"
        "  -o, --out DIR      output folder (default: INPUT's file stem + \"_mhaviz\")\n"
        "  -t, --threads N    threads (default: all cores)\n"
        "      --max-memory MB  refuse inputs whose run needs more (default: %d)\n"
        "  -q, --quiet        do not print the report to stdout\n"
        "      --kv-heads N   share keys and values: mean-pool the input's K/V heads into N\n"
        "                     groups (N divides the input's n_kv_heads; 1 = multi-query)\n"
        "  -h, --help         this help\n"
        "      --version      print the version\n"
        "\n"
        "Exit codes: 0 success, 1 invalid input, 2 usage error, 3 file-system error,\n"
        "4 out of memory. The input format is described in README.md.\n"
        "\n"
        "       mhaviz init --tokens \"SENTENCE\" [options] > my.json\n"
        "writes a starter input for your own sentence ('mhaviz init --help').\n",
        INPUT_MAX_MEMORY_MB);
}

/* Exit with a usage error: the message, then a hint. */
static void usage_error(const char *fmt, const char *arg)
{
    fprintf(stderr, "mhaviz: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\nTry 'mhaviz --help'.\n");
    exit(MHAVIZ_EUSAGE);
}

/* Parse a whole number in [lo, hi] or exit with a usage error naming the option. */
static int parse_int(const char *s, int lo, int hi, const char *option)
{
    char *end;
    long v = strtol(s, &end, 10);
    if (end == s || *end != '\0' || v < lo || v > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "%s wants a whole number from %d to %d, not '%%s'", option, lo, hi);
        usage_error(msg, s);
    }
    return (int)v;
}

static void parse_args(int argc, char **argv, Options *o)
{
    enum { OPT_VERSION = 256, OPT_KV_HEADS, OPT_MAX_MEMORY };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    render_default_options(&o->render);
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":o:t:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': o->out_dir = optarg; break;
        case 't': o->threads = parse_int(optarg, 1, 1024, "--threads"); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(MHAVIZ_OK);
        case OPT_KV_HEADS: o->kv_heads = parse_int(optarg, 1, INPUT_MAX_HEADS, "--kv-heads"); break;
        case OPT_MAX_MEMORY: o->max_memory_mb = parse_int(optarg, 1, 1 << 30, "--max-memory"); break;
        case OPT_VERSION: printf("mhaviz %s\n", MHAVIZ_VERSION); exit(MHAVIZ_OK);
        case ':': usage_error("option '%s' needs an argument", argv[optind - 1]); break;
        default: usage_error("unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (optind == argc)
        usage_error("no input file given%s", "");
    if (optind + 1 < argc)
        usage_error("one input file at a time; extra argument '%s'", argv[optind + 1]);
    o->input = argv[optind];
}

/* Default output folder: the input's file stem + "_mhaviz", in the current folder. */
static char *default_out_dir(const char *input)
{
    const char *base = strrchr(input, '/');
    base = base ? base + 1 : input;
    const char *dot = strrchr(base, '.');
    int stem = dot && dot != base ? (int)(dot - base) : (int)strlen(base);
    size_t n = (size_t)stem + sizeof "_mhaviz";
    char *s = malloc(n);
    if (s)
        snprintf(s, n, "%.*s_mhaviz", stem, base);
    return s;
}

/* 1 when file path lies inside folder dir (so replacing dir would lose it). */
static int inside(const char *path, const char *dir)
{
    char rp[PATH_MAX], rd[PATH_MAX];
    if (!realpath(path, rp) || !realpath(dir, rd))
        return 0;
    size_t n = strlen(rd);
    return strncmp(rp, rd, n) == 0 && rp[n] == '/';
}

/* Render every head's map and the single wide head's map into the output folder. */
static int render_maps(const Options *o, const MhaInput *in, const MhaState *multi,
                       const MhaState *single, const OutDir *out, char *err, size_t errlen)
{
    const MhaConfig *c = &in->cfg;
    const size_t map = (size_t)c->T * c->T;
    const int kv_mul = c->n_heads / c->n_kv_heads;
    Renderer *r = NULL;
    int rc = render_open(&r, &o->render, err, errlen);
    for (int h = 0; rc == MHAVIZ_OK && h <= c->n_heads; h++) {
        const int is_single = h == c->n_heads;
        char name[32], title[128];
        if (is_single) {
            snprintf(name, sizeof name, "single_head.png");
            snprintf(title, sizeof title, "single wide head (1 head of %d)", c->d_model);
        } else {
            snprintf(name, sizeof name, c->n_heads > 100 ? "head_%03d.png" : "head_%02d.png", h);
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 K/V group %d", h, c->n_heads, h / kv_mul);
        }
        char *path = outdir_path(out, name);
        if (!path) {
            snprintf(err, errlen, "out of memory");
            rc = MHAVIZ_ENOMEM;
            break;
        }
        const float *att = is_single ? single->att : multi->att + (size_t)h * map;
        rc = render_heatmap(r, path, att, c->T, in->tokens, c->causal, title, err, errlen);
        free(path);
    }
    render_close(r);
    return rc;
}

/* Copy the text file at path to f. */
static void print_file(const char *path, FILE *f)
{
    FILE *in = fopen(path, "r");
    if (!in)
        return;
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0)
        fwrite(buf, 1, n, f);
    fclose(in);
}

int main(int argc, char **argv)
{
    if (argc > 1 && strcmp(argv[1], "init") == 0)
        return init_command(argc - 1, argv + 1);
    Options o;
    parse_args(argc, argv, &o);
#ifdef _OPENMP
    if (o.threads > 0)
        omp_set_num_threads(o.threads);
#endif

    char err[MHAVIZ_ERRLEN] = "";
    MhaInput in = {0};
    MhaState multi = {0}, single = {0};
    MhaConfig wide_cfg;
    MhaWeights wide = {0};
    OutDir out = {0};
    char *out_dir = NULL;
    int committed = 0;
    char note[512] = "";

    InputLimits lim;
    input_default_limits(&lim);
    if (o.max_memory_mb > 0)
        lim.max_memory_bytes = (size_t)o.max_memory_mb << 20;
    int rc = input_load_limits(o.input, &lim, &in, err, sizeof err);
    if (in.warnings)
        fprintf(stderr, "%s", in.warnings);
    if (rc != MHAVIZ_OK)
        goto cleanup;

    /* --kv-heads: share keys and values by mean-pooling K/V heads (GQA, MQA). */
    if (o.kv_heads && o.kv_heads != in.cfg.n_kv_heads) {
        const int n_from = in.cfg.n_kv_heads;
        char why[MHAVIZ_ERRLEN / 2];
        if ((rc = pool_kv_heads(&in.cfg, &in.w, o.kv_heads, why, sizeof why)) != MHAVIZ_OK) {
            snprintf(err, sizeof err, "--kv-heads %d: %s", o.kv_heads, why);
            goto cleanup;
        }
        pool_note(note, sizeof note, in.cfg.n_heads, n_from, o.kv_heads);
    }

    /* The forward passes: h heads, then one wide head of the same width. */
    rc = mha_state_build(&multi, &in.cfg, 0);
    if (rc != MHAVIZ_OK)
        goto oom;
    mha_forward(&in.cfg, &in.w, in.x, &multi);

    if (in.has_single) {
        wide_cfg = in.cfg;
        wide_cfg.n_heads = wide_cfg.n_kv_heads = 1;
        wide_cfg.head_dim = in.cfg.d_model;
    } else if ((rc = mha_single_head_weights(&in.cfg, &in.w, &wide_cfg, &wide)) != MHAVIZ_OK) {
        goto oom;
    }
    if ((rc = mha_state_build(&single, &wide_cfg, 0)) != MHAVIZ_OK)
        goto oom;
    mha_forward(&wide_cfg, in.has_single ? &in.single : &wide, in.x, &single);

    /* The outputs: written aside, then moved into place whole. */
    out_dir = o.out_dir ? strdup(o.out_dir) : default_out_dir(o.input);
    if (!out_dir)
        goto oom;
    if (inside(o.input, out_dir)) {
        snprintf(err, sizeof err, "%s: the input lies inside the output folder %s; choose another with -o",
                 o.input, out_dir);
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    if ((rc = outdir_begin(&out, out_dir, err, sizeof err)) != MHAVIZ_OK)
        goto cleanup;
    rc = render_maps(&o, &in, &multi, &single, &out, err, sizeof err);
    if (rc == MHAVIZ_OK) {
        ReportData d = {&in, &multi, &single, in.has_single, note[0] ? note : NULL};
        rc = report_write(out.tmp, &d, err, sizeof err);
    }
    if (rc != MHAVIZ_OK) {
        outdir_abort(&out);
        goto cleanup;
    }
    if ((rc = outdir_commit(&out, err, sizeof err)) != MHAVIZ_OK)
        goto cleanup;
    committed = 1;
    goto cleanup;

oom:
    snprintf(err, sizeof err, "out of memory");
    rc = MHAVIZ_ENOMEM;
cleanup:
    if (committed) {
        if (!o.quiet) {
            size_t n = strlen(out_dir) + sizeof "/report.txt";
            char *report = malloc(n);
            if (report) {
                snprintf(report, n, "%s/report.txt", out_dir);
                print_file(report, stdout);
                free(report);
            }
        }
        fprintf(stderr, "mhaviz: wrote %s/\n", out_dir);
    } else if (rc != MHAVIZ_OK) {
        fprintf(stderr, "mhaviz: %s\n", err);
    }
    free(out_dir);
    input_weights_free(&wide);
    mha_state_free(&single);
    mha_state_free(&multi);
    input_free(&in);
    return rc;
}
