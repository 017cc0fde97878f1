/* main.c — the mhaviz command: parse argv, run, exit with a status.
 *
 *   load input (a file's layers, or a model's on the sentence) -> for each
 *   K/V layout asked for (--kv-heads): pool, forward passes, measures
 *   (core/variant.c), chance (run/run_chance.c) -> its pictures + report
 *   (run/variants.c, run/variant_write.c; several layers: run/model_run.c)
 *   into a temporary folder (a sub-folder kvN/ each when there are
 *   several, with the comparison at the top) -> move the folder into
 *   place. The steps are listed in order above main. */
#include "args.h"
#include "core/blas_setup.h"
#include "core/pool.h"
#include "core/pull.h"
#include "core/status.h"
#include "core/timing.h"
#include "core/variant.h"
#include "checkpoint/model.h"
#include "checkpoint/model_config.h"
#include "draw/draw.h"
#include "init_cmd.h"
#include "head_list.h"
#include "layer_list.h"
#include "io/input.h"
#include "io/outdir.h"
#include "io/quiz_file.h"
#include "io/sentences.h"
#include "run/run_chance.h"
#include "pictures/pull_slide.h"
#include "pictures/render.h"
#include "report/report.h"
#include "run/run_memory.h"
#include "text/query.h"
#include "run/model_run.h"
#include "run/variants.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MHAVIZ_VERSION "0.1.0"

typedef struct {
    const char *input;   /* INPUT.json, or MODEL_DIR (a folder holding config.json) */
    int model;           /* 1: input is a model's folder (one holding config.json) */
    const char *text;    /* --text: the sentence a model runs on; NULL = none given */
    const char *layer;   /* --layer: the model's layers shown ("5", "3-6", "0,5,11"); NULL = every layer */
    const char *out_dir; /* -o; NULL = input's stem + "_mhaviz" */
    int threads;         /* -t; 0 = OpenMP's default (OMP_NUM_THREADS, else one per core) */
    int max_memory_mb;   /* --max-memory; 0 = the default limit */
    int quiet;           /* -q */
    int kv[VARIANTS_MAX]; /* --kv-heads: the K/V head counts listed */
    int n_kv;            /* how many; 0 = as the input says */
    int kv_all;          /* --kv-heads all */
    const char *kv_groups; /* --kv-groups: which query heads share a K/V head ("0,2/1,3"); NULL = neighbours */
    PoolMethod pool;     /* --pool: POOL_ALIGNED (the default) or POOL_MEAN */
    int layers;          /* --layers: kv_cache.png counts this many layers */
    int steps;           /* --steps: also the pre-softmax scores of each head */
    int npy;             /* --npy: report.json's matrices as .npy files, whatever their size */
    int no_html;         /* --no-html: no lesson.html */
    int svg;             /* --svg: every picture also as SVG */
    const char *quiz;    /* --quiz: the teacher's questions for lesson.html; NULL = none */
    int head_effects;    /* --head-effects: each head of the model switched off in turn (several layers) */
    const char *ablate;  /* --ablate: heads switched off for a second prediction ("0.3,5.1"); NULL = none */
    int repeat;          /* --repeat: the sentence's tokens twice (the induction demo) */
    const char *text_file; /* --text-file: sentences, one a line, whose rows the roles rest on; NULL = none */
    int head_maps;       /* --head-maps: with several layers, every head's head_NN.png */
    int timing;          /* --timing */
    const char *query;   /* --query: the query token of query_NN.png, index or text; NULL = pull.h's default */
    RenderOptions render;
} Options;

static void usage(FILE *f)
{
    fprintf(f,
        "usage: mhaviz [options] INPUT.json\n"
        "       mhaviz [options] --text TEXT [--layer LAYERS] MODEL_DIR\n"
        "\n"
        "Runs multi-head attention on INPUT.json, or on layers of a real model's\n"
        "checkpoint (a Hugging Face folder: config.json, model.safetensors or its\n"
        "shards, tokenizer.json; GPT-2, Llama, Mistral, Qwen2) reading TEXT, and writes\n"
        "each head's attention map as a PNG heatmap, the single wide head's map, and a\n"
        "report comparing them.\n"
        "\n"
        "      --text TEXT    the sentence the model reads (a model run only)\n"
        "      --text-file FILE  sentences, one a line, instead: each head's role over\n"
        "                     all of them; the pictures show the first sentence's maps\n"
        "      --layer LAYERS the model's layers to show, counted from 0: one (5), a range\n"
        "                     (3-6) or a list (0,5,11); default: every layer. Several: each\n"
        "                     in a sub-folder layer_NN/, the table of layers at the top.\n"
        "                     Also for an INPUT.json of \"layers\" (its index in them)\n"
        "  -o, --out DIR      output folder (default: INPUT's file stem + \"_mhaviz\", or\n"
        "                     MODEL_DIR's name + \"_layerN_mhaviz\", for several layers\n"
        "                     \"_mhaviz\" or \"_layersLAYERS_mhaviz\")\n"
        "      --head-effects with several layers: how much each head's output moves the\n"
        "                     model's top next token (one forward per head of the model)\n"
        "      --ablate HEADS with several layers: also the prediction with these heads\n"
        "                     switched off, as LAYER.HEAD (5.1) or a list (0.3,5.1)\n"
        "      --repeat       the sentence's tokens twice over (the BOS once): induction\n"
        "                     heads show on the second copy (a model run only)\n"
        "      --head-maps    with several layers: every head's map in its layer's folder\n"
        "                     (default: only the heads worth a slide; overview.png has all)\n"
        "  -t, --threads N    threads (default: OMP_NUM_THREADS, else one per core)\n"
        "      --max-memory MB  refuse inputs whose run needs more (default: %d)\n"
        "  -q, --quiet        do not print the report to stdout\n"
        "      --kv-heads LIST  share keys and values: pool the input's K/V heads into N\n"
        "                     groups (N divides the input's n_kv_heads; 1 = multi-query).\n"
        "                     Several, such as 4,2,1, or 'all' (every count that divides\n"
        "                     n_kv_heads): each in a sub-folder kvN/, compared side by side\n"
        "      --kv-groups G  which query heads share a K/V head, such as 0,2/1,3 (groups\n"
        "                     of one size, separated by '/'; a multi-head input of at most\n"
        "                     8 heads); makes as many K/V heads as groups (default: neighbours)\n"
        "      --pool HOW     how a group's K/V heads become one: aligned (default: each head\n"
        "                     turned toward the group's first, then the mean) or mean (the\n"
        "                     plain mean, which depends on coordinates inside each head)\n"
        "      --layers N     kv_cache.png counts the K/V cache of N layers (default: 1)\n"
        "      --timing       print each phase's time and the peak memory to stderr\n"
        "      --npy          write report.json's matrices as .npy files beside it (default:\n"
        "                     only past %d M numbers in all)\n"
        "      --no-html      do not write lesson.html (the interactive page with the quiz)\n"
        "      --quiz FILE    add your own questions to lesson.html's quiz (a JSON file:\n"
        "                     see docs/lesson.md)\n",
        INPUT_MAX_MEMORY_MB, (int)(REPORT_INLINE_MAX_NUMBERS >> 20));
    char cmaps[128];
    draw_cmap_names(cmaps, sizeof cmaps, 1);
    fprintf(f,
        "\n"
        "Pictures:\n"
        "      --cmap NAME    %s\n"
        "      --font FILE    TrueType font for the labels (default: DejaVu Sans)\n"
        "      --cell PX      cell size in pixels (default: chosen for slides)\n"
        "      --annotate     print each weight in its cell (default: when T <= 16)\n"
        "      --no-annotate  never print weights in the cells\n"
        "      --size WxH     size of overview.png (default: %dx%d)\n"
        "      --steps        also write the scores before the softmax: head_NN_scores.png,\n"
        "                     single_head_scores.png, and in report.json\n"
        "      --query N|TEXT query_NN.png shows the heads' pulls on token N, or on the last\n"
        "                     token TEXT (default: where the heads' top keys differ most)\n"
        "      --svg          also write every picture as SVG beside its PNG (head_00.svg):\n"
        "                     the same layout with real text, for slides that scale\n"
        "  -h, --help         this help\n"
        "      --version      print the version\n"
        "\n"
        "Exit codes: 0 success, 1 invalid input, 2 usage error, 3 file-system error,\n"
        "4 out of memory. The input format is described in docs/input.md.\n"
        "\n"
        "       mhaviz init --tokens \"SENTENCE\" [options] > my.json\n"
        "writes a starter input for your own sentence ('mhaviz init --help').\n",
        cmaps, SLIDE_W, SLIDE_H);
}

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
    args_usage_error("mhaviz", fmt, arg);
}

static int parse_int(const char *s, int lo, int hi, const char *option)
{
    return args_parse_int("mhaviz", s, lo, hi, option);
}

/* --kv-heads: "all", or a list of counts such as "4,2,1", each from 1 to
 * INPUT_MAX_HEADS and none twice. Whether the input can be pooled into them
 * is checked after the load (kv_layouts). */
static void parse_kv_list(const char *arg, Options *o)
{
    o->kv_all = strcmp(arg, "all") == 0;
    o->n_kv = 0;
    for (const char *p = arg; !o->kv_all; p++) {
        char item[16], msg[128];
        const size_t n = strcspn(p, ",");
        snprintf(item, sizeof item, "%.*s", (int)(n < sizeof item ? n : sizeof item - 1), p);
        if (n == 0)
            usage_error("--kv-heads '%s' has an empty count (wanted: counts such as 4,2,1, or all)", arg);
        if (n >= sizeof item || strspn(item, "0123456789") != n)
            usage_error("--kv-heads wants K/V head counts such as 4,2,1, or all; '%s' is not a count", item);
        const long k = strtol(item, NULL, 10);
        snprintf(msg, sizeof msg, "--kv-heads %%s: a count of K/V heads is from 1 to %d", INPUT_MAX_HEADS);
        if (k < 1 || k > INPUT_MAX_HEADS)
            usage_error(msg, item);
        for (int i = 0; i < o->n_kv; i++)
            if (o->kv[i] == k)
                usage_error("--kv-heads lists %s twice", item);
        snprintf(msg, sizeof msg, "--kv-heads lists more than %d counts: '%%s'", VARIANTS_MAX);
        if (o->n_kv == VARIANTS_MAX)
            usage_error(msg, arg);
        o->kv[o->n_kv++] = (int)k;
        p += n;
        if (!*p)
            break;
    }
}

/* The K/V head counts to run for input shape c, most first, into kv, and
 * with --kv-groups the grouping into *groups (*grouped = 1); returns how
 * many, or 0 with err naming a count the input cannot be pooled into or a
 * grouping it cannot take (a usage error). */
static int kv_layouts(const Options *o, const MhaConfig *c, int *kv, Grouping *groups, int *grouped, char *err,
                      size_t errlen)
{
    int n = 0;
    *grouped = 0;
    if (o->kv_groups) {
        char why[MHAVIZ_ERRLEN / 2];
        if (c->n_kv_heads != c->n_heads) {
            snprintf(err, errlen, "--kv-groups %s: the input already shares K/V heads (n_kv_heads = %d of %d "
                     "heads); groups are made from a multi-head input\nTry 'mhaviz --help'.", o->kv_groups,
                     c->n_kv_heads, c->n_heads);
            return 0;
        }
        if (grouping_parse(o->kv_groups, c->n_heads, groups, why, sizeof why) != MHAVIZ_OK) {
            snprintf(err, errlen, "%s\nTry 'mhaviz --help'.", why);
            return 0;
        }
        *grouped = 1;
        int listed = o->kv_all || o->n_kv == 0;
        for (int i = 0; i < o->n_kv; i++)
            listed |= o->kv[i] == groups->n_groups;
        if (!listed) {
            snprintf(err, errlen, "--kv-groups %s makes %d K/V heads, a count --kv-heads does not list\n"
                     "Try 'mhaviz --help'.", o->kv_groups, groups->n_groups);
            return 0;
        }
        if (o->n_kv == 0 && !o->kv_all) {
            kv[0] = groups->n_groups;
            return 1;
        }
    }
    if (o->kv_all) {
        for (int k = c->n_kv_heads; k >= 1; k--)
            if (c->n_kv_heads % k == 0)
                kv[n++] = k;
        return n;
    }
    if (o->n_kv == 0) {
        kv[0] = c->n_kv_heads;
        return 1;
    }
    for (int i = 0; i < o->n_kv; i++) {
        char why[MHAVIZ_ERRLEN / 2];
        if (pool_check(c, o->kv[i], why, sizeof why) != MHAVIZ_OK) {
            snprintf(err, errlen, "--kv-heads %d: %s\nTry 'mhaviz --help'.", o->kv[i], why);
            return 0;
        }
        int at = n++; /* insertion sort: most K/V heads first (MHA, then GQA, then MQA) */
        for (; at > 0 && kv[at - 1] < o->kv[i]; at--)
            kv[at] = kv[at - 1];
        kv[at] = o->kv[i];
    }
    return n;
}

/* --size WIDTHxHEIGHT: the overview's size in pixels, from 320x240 to 7680x4320 (a usage error
 * otherwise). */
static void parse_size(const char *arg, Options *o)
{
    int w, h;
    char x, extra;
    if (sscanf(arg, "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') ||
        w < 320 || w > 7680 || h < 240 || h > 4320)
        usage_error("--size wants WIDTHxHEIGHT from 320x240 to 7680x4320, not '%s'", arg);
    o->render.overview_w = w;
    o->render.overview_h = h;
}

/* After the options: the one input file, whether it is a model folder, and the options that need
 * (or exclude) one.  A usage error (exit) when they do not fit together. */
static void check_args(int argc, char **argv, Options *o)
{
    if (o->quiz && o->no_html)
        usage_error("--quiz adds questions to lesson.html, which --no-html leaves out%s", "");
    if (optind == argc)
        usage_error("no input file given%s", "");
    if (optind + 1 < argc)
        usage_error("one input file at a time; extra argument '%s'", argv[optind + 1]);
    o->input = argv[optind];
    /* A model: a folder holding config.json. */
    char config[PATH_MAX];
    struct stat sb;
    snprintf(config, sizeof config, "%s/config.json", o->input);
    const int found = stat(o->input, &sb) == 0;
    o->model = found && S_ISDIR(sb.st_mode) && access(config, F_OK) == 0;
    if (!o->model && (o->text || o->ablate || o->repeat || o->text_file)) {
        char why[PATH_MAX + 32];
        snprintf(why, sizeof why, "'%s' %s", o->input,
                 !found ? "does not exist" : S_ISDIR(sb.st_mode) ? "has no config.json" : "is a file");
        usage_error("--text, --text-file, --ablate and --repeat are for a model folder (one holding config.json); "
                    "%s", why);
    }
    if (o->text && o->text_file)
        usage_error("give the sentences with --text or with --text-file, not both (--text-file %s)", o->text_file);
    if (o->model && !o->text && !o->text_file)
        usage_error("'%s' is a model folder: give the sentence it reads with --text TEXT", o->input);
}

/* The command line into o: every option, then check_args on what they leave. */
static void parse_args(int argc, char **argv, Options *o)
{
    enum { OPT_VERSION = 256, OPT_KV_HEADS, OPT_MAX_MEMORY, OPT_CMAP, OPT_FONT, OPT_CELL, OPT_ANNOTATE,
           OPT_NO_ANNOTATE, OPT_SIZE, OPT_STEPS, OPT_TIMING, OPT_LAYERS, OPT_NPY, OPT_QUERY, OPT_NO_HTML, OPT_QUIZ,
           OPT_KV_GROUPS, OPT_TEXT, OPT_LAYER, OPT_SVG, OPT_POOL, OPT_HEAD_EFFECTS,
           OPT_ABLATE, OPT_REPEAT, OPT_TEXT_FILE,
           OPT_HEAD_MAPS };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
        {"kv-groups", required_argument, NULL, OPT_KV_GROUPS},
        {"pool", required_argument, NULL, OPT_POOL},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"cmap", required_argument, NULL, OPT_CMAP},
        {"font", required_argument, NULL, OPT_FONT},
        {"cell", required_argument, NULL, OPT_CELL},
        {"annotate", no_argument, NULL, OPT_ANNOTATE},
        {"no-annotate", no_argument, NULL, OPT_NO_ANNOTATE},
        {"size", required_argument, NULL, OPT_SIZE},
        {"steps", no_argument, NULL, OPT_STEPS},
        {"timing", no_argument, NULL, OPT_TIMING},
        {"layers", required_argument, NULL, OPT_LAYERS},
        {"npy", no_argument, NULL, OPT_NPY},
        {"query", required_argument, NULL, OPT_QUERY},
        {"no-html", no_argument, NULL, OPT_NO_HTML},
        {"text", required_argument, NULL, OPT_TEXT},
        {"layer", required_argument, NULL, OPT_LAYER},
        {"svg", no_argument, NULL, OPT_SVG},
        {"quiz", required_argument, NULL, OPT_QUIZ},
        {"head-effects", no_argument, NULL, OPT_HEAD_EFFECTS},
        {"ablate", required_argument, NULL, OPT_ABLATE},
        {"repeat", no_argument, NULL, OPT_REPEAT},
        {"text-file", required_argument, NULL, OPT_TEXT_FILE},
        {"head-maps", no_argument, NULL, OPT_HEAD_MAPS},
        {NULL, 0, NULL, 0},
    };
    memset(o, 0, sizeof *o);
    o->layers = 1;
    render_default_options(&o->render);
    opterr = 0;
    int ch;
    while ((ch = getopt_long(argc, argv, ":o:t:qh", longopts, NULL)) != -1) {
        switch (ch) {
        case 'o': o->out_dir = optarg; break;
        case 't': o->threads = parse_int(optarg, 1, 1024, "--threads"); break;
        case 'q': o->quiet = 1; break;
        case 'h': usage(stdout); exit(MHAVIZ_OK);
        case OPT_KV_HEADS: parse_kv_list(optarg, o); break;
        case OPT_KV_GROUPS: o->kv_groups = optarg; break; /* checked against the heads once they are loaded */
        case OPT_POOL:
            if (strcmp(optarg, "aligned") != 0 && strcmp(optarg, "mean") != 0)
                usage_error("--pool wants aligned or mean, not '%s'", optarg);
            o->pool = strcmp(optarg, "mean") == 0 ? POOL_MEAN : POOL_ALIGNED;
            break;
        case OPT_LAYERS: o->layers = parse_int(optarg, 1, 100000, "--layers"); break;
        case OPT_MAX_MEMORY: o->max_memory_mb = parse_int(optarg, 1, 1 << 30, "--max-memory"); break;
        case OPT_TIMING: o->timing = 1; break;
        case OPT_NPY: o->npy = 1; break;
        case OPT_NO_HTML: o->no_html = 1; break;
        case OPT_TEXT: o->text = optarg; break;
        case OPT_HEAD_EFFECTS: o->head_effects = 1; break;
        case OPT_ABLATE: o->ablate = optarg; break; /* read once the model's heads are known */
        case OPT_REPEAT: o->repeat = 1; break;
        case OPT_TEXT_FILE: o->text_file = optarg; break; /* read once the options are all known */
        case OPT_HEAD_MAPS: o->head_maps = 1; break;
        case OPT_LAYER: o->layer = optarg; break; /* read once the model's layers are known */
        case OPT_SVG: o->svg = 1; break;
        case OPT_QUIZ: o->quiz = optarg; break; /* read and checked before the input */
        case OPT_VERSION: printf("mhaviz %s\n", MHAVIZ_VERSION); exit(MHAVIZ_OK);
        case OPT_CMAP:
            if (!render_cmap_known(optarg)) {
                char cmaps[128], fmt[192];
                draw_cmap_names(cmaps, sizeof cmaps, 0);
                snprintf(fmt, sizeof fmt, "--cmap wants %s, not '%%s'", cmaps);
                usage_error(fmt, optarg);
            }
            o->render.cmap = optarg;
            break;
        case OPT_FONT: o->render.font_path = optarg; break;
        case OPT_CELL: o->render.cell_px = parse_int(optarg, 1, 200, "--cell"); break;
        case OPT_ANNOTATE: o->render.annotate = 1; break;
        case OPT_NO_ANNOTATE: o->render.annotate = 0; break;
        case OPT_SIZE: parse_size(optarg, o); break;
        case OPT_STEPS: o->steps = 1; break;
        case OPT_QUERY: o->query = optarg; break; /* checked against the tokens once they are loaded */
        case ':': usage_error("option '%s' needs an argument", argv[optind - 1]); break;
        default: usage_error("unknown option '%s' (or an abbreviation that fits several)", argv[optind - 1]); break;
        }
    }
    check_args(argc, argv, o);
}

/* Add the hint a usage error ends with to the message in err. */
static void add_help_hint(char *err, size_t errlen)
{
    snprintf(err + strlen(err), errlen - strlen(err), "\nTry 'mhaviz --help'.");
}

/* --layer's value for an input of n_model layers (o->input's, counted in
 * field) into layers (room for n_model), *n of them, and *many = 1 when the
 * run shows several. MHAVIZ_EUSAGE with err naming a --layer the input
 * lacks, or an option that asks for one layer at a time. */
static int parse_layers(const Options *o, int n_model, const char *field, int *layers, int *n, int *many, char *err,
                        size_t errlen)
{
    if (layer_list_parse(o->layer, n_model, o->input, field, layers, n, err, errlen) != 0) {
        add_help_hint(err, errlen);
        return MHAVIZ_EUSAGE;
    }
    *many = !o->layer || *n > 1;
    if (*many && (o->n_kv || o->kv_all || o->kv_groups)) {
        snprintf(err, errlen, "--kv-heads and --kv-groups are for one layer at a time (--layer N)\n"
                 "Try 'mhaviz --help'.");
        return MHAVIZ_EUSAGE;
    }
    return MHAVIZ_OK;
}

/* A file of "layers" (io/input.h), its *n layers in in: keep those --layer
 * lists (every one by default), in order, *n of them, and *many = 1 when
 * the run shows several. A --layer the file lacks, or --layer with a file
 * of one layer: MHAVIZ_EUSAGE. */
static int pick_layers(const Options *o, MhaInput *in, int *n, int *many, char *err, size_t errlen)
{
    if (in[0].n_layers == 0) {
        if (!o->layer)
            return MHAVIZ_OK;
        snprintf(err, errlen, "--layer %s: %s holds one layer (it has no \"layers\" array)\nTry 'mhaviz --help'.",
                 o->layer, o->input);
        return MHAVIZ_EUSAGE;
    }
    int *keep = malloc((size_t)*n * sizeof *keep); // (*n) the layers kept, ascending
    int k;
    if (!keep)
        return MHAVIZ_ENOMEM;
    int rc = parse_layers(o, *n, "its \"layers\" array", keep, &k, many, err, errlen);
    if (rc != MHAVIZ_OK) {
        free(keep);
        return rc;
    }
    for (int i = 0, j = 0; i < *n; i++) {
        if (j < k && keep[j] == i) {
            MhaInput moved = in[i];
            memset(&in[i], 0, sizeof in[i]);
            in[j++] = moved;
        } else {
            input_free(&in[i]);
        }
    }
    *n = k;
    free(keep);
    return MHAVIZ_OK;
}

/* A model run: the layers --layer lists of the checkpoint in folder
 * o->input, on text, in one forward: *in (n of them, malloc'd) and
 * *many = 1 when the run shows several (every layer, or a list of more than
 * one; then also the model's prediction, *pred). A --layer the model does not have: a usage error naming its layers.
 * *bytes: what the load held at most, the layers kept included (model_memory).
 * Returns as model_load does, or MHAVIZ_EUSAGE. */
static int load_model(const Options *o, const char *text, MhaInput **in, int *n, int *many, ModelPrediction *pred,
                      size_t *bytes, char *err, size_t errlen)
{
    ModelConfig c;
    int rc = model_config_load(o->input, &c, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    int *layers = malloc((size_t)c.n_layers * sizeof *layers);
    if (!layers)
        return MHAVIZ_ENOMEM;
    rc = parse_layers(o, c.n_layers,
                      c.family == MODEL_GPT2 ? "config.json's \"n_layer\"" : "config.json's \"num_hidden_layers\"",
                      layers, n, many, err, errlen);
    if (rc != MHAVIZ_OK) {
        free(layers);
        return rc;
    }
    /* --ablate: the heads switched off for the second prediction, (n_layers, n_heads) 1: off. */
    unsigned char *off = NULL;
    if (o->ablate && !*many) {
        free(layers);
        snprintf(err, errlen, "--ablate changes the model's prediction, which a run over several layers reports "
                 "(leave out --layer, or list several)\nTry 'mhaviz --help'.");
        return MHAVIZ_EUSAGE;
    }
    if (o->text_file && !*many) {
        free(layers);
        snprintf(err, errlen, "--text-file scores the heads' roles over its sentences in a run over several layers "
                 "(leave out --layer, or list several)\nTry 'mhaviz --help'.");
        return MHAVIZ_EUSAGE;
    }
    if (o->ablate && !(off = malloc((size_t)c.n_layers * c.n_heads))) {
        free(layers);
        return MHAVIZ_ENOMEM;
    }
    if (off && head_list_parse(o->ablate, c.n_layers, c.n_heads, o->input, off, err, errlen) != 0) {
        free(layers), free(off);
        add_help_hint(err, errlen);
        return MHAVIZ_EUSAGE;
    }
    if (!(*in = calloc((size_t)*n, sizeof **in))) {
        free(layers), free(off);
        return MHAVIZ_ENOMEM;
    }
    const ModelAsk ask = {o->head_effects, off, o->repeat};
    rc = model_load(o->input, text, layers, *n, *in, *many ? pred : NULL, &ask, err, errlen);
    free(layers), free(off);
    if (rc == MHAVIZ_OK)
        *bytes = model_memory(o->input, &c, (*in)[0].cfg.T, *n, *many);
    return rc;
}

/* The input file's name without its folder ("story.json"). */
static const char *file_name(const char *path)
{
    const char *base = strrchr(path, '/');
    return base ? base + 1 : path;
}

/* Default output folder, in the current folder: the input's file stem, or
 * a model's folder's name (name), + "_mhaviz" (for a model or a file of
 * "layers": every layer), + "_layerN_mhaviz" for --layer N (N: the layer,
 * layer), else + "_layersLAYERS_mhaviz" (LAYERS: --layer's value, "3-6"). */
static char *default_out_dir(const Options *o, const char *name, int layer)
{
    if (!o->model)
        name = file_name(o->input);
    const char *dot = o->model ? NULL : strrchr(name, '.');
    const int stem = dot && dot != name ? (int)(dot - name) : (int)strlen(name);
    size_t n = (size_t)stem + (o->layer ? strlen(o->layer) : 0) + sizeof "_layers_mhaviz" + 12;
    char *s = malloc(n);
    if (!s)
        return NULL;
    if (o->layer && strspn(o->layer, "0123456789") == strlen(o->layer))
        snprintf(s, n, "%.*s_layer%d_mhaviz", stem, name, layer);
    else if (o->layer)
        snprintf(s, n, "%.*s_layers%s_mhaviz", stem, name, o->layer);
    else
        snprintf(s, n, "%.*s_mhaviz", stem, name);
    return s;
}

/* 1 when path (a file, or a model's folder) is folder dir or lies inside
 * it (so replacing dir would lose it). */
static int inside(const char *path, const char *dir)
{
    char rp[PATH_MAX], rd[PATH_MAX];
    if (!realpath(path, rp) || !realpath(dir, rd))
        return 0;
    size_t n = strlen(rd);
    return strncmp(rp, rd, n) == 0 && (rp[n] == '/' || rp[n] == '\0');
}

/* Copy the text file at path to standard output. Returns MHAVIZ_OK, or
 * MHAVIZ_EIO with err saying which side failed (a full disk or a closed
 * pipe on stdout must not pass for a printed report). */
static int print_file(const char *path, char *err, size_t errlen)
{
    FILE *in = fopen(path, "r");
    if (!in) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    char buf[4096];
    size_t n;
    while ((n = fread(buf, 1, sizeof buf, in)) > 0 && fwrite(buf, 1, n, stdout) == n)
        ;
    const int read_failed = ferror(in);
    fclose(in);
    if (read_failed) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        snprintf(err, errlen, "standard output: cannot write the report: %s", strerror(errno));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

/* What a run holds from its first step to the exit (free_run frees it). */
typedef struct {
    char err[MHAVIZ_ERRLEN]; /* the message: an error, or a warning once the folder is written */
    Timing tm;
    Renderer *renderer;      /* the font and the colormap */
    QuizFile quiz;           /* --quiz's questions */
    Sentences sentences;     /* --text-file's */
    InputLimits lim;
    MhaInput *ins;           /* (n_in) the input, or the model's layers shown */
    int n_in, many;          /* many: a run over several layers (run/model_run.h) */
    size_t model_bytes;      /* a model's load, the layers it keeps included */
    ModelPrediction pred;    /* with many: the model's next tokens */
    int kv[VARIANTS_MAX];    /* (n_vars) the K/V head counts run, most first */
    int n_vars;
    Grouping groups;         /* --kv-groups' grouping, when grouped */
    int grouped;
    int query;               /* --query's token; -1: pull.h's choice once the pulls are known */
    Variant *vars;           /* (n_vars) the K/V layouts, most K/V heads first */
    char *out_dir;
    int committed;           /* the output folder is in place */
} Run;

static int out_of_memory(Run *r)
{
    snprintf(r->err, sizeof r->err, "out of memory");
    return MHAVIZ_ENOMEM;
}

/* What the whole process keeps to, set before anything is read. */
static void process_setup(void)
{
    /* Over a file size limit (ulimit -f) a write then fails with EFBIG, which
     * the run reports and cleans up after, instead of the process being
     * killed with its temporary folder left behind. */
    signal(SIGXFSZ, SIG_IGN);
    blas_setup();
    /* Each picture's encoding allocates and frees a few buffers of its size
     * (stb_image_write's filtered rows, the compressed stream, the file).
     * glibc's default serves such blocks from fresh pages of the kernel and
     * gives them back on free, so a picture often paid for new pages again
     * (a page fault costs about 11 us on this project's machine). Kept in
     * the heap, the next picture reuses them: the class-size input made
     * 8,040 page faults instead of 13,243, in 174 ms instead of 236 (mean
     * of 30 runs each, same minute). */
    mallopt(M_MMAP_THRESHOLD, 32 << 20);
    mallopt(M_TRIM_THRESHOLD, 128 << 20);
}

/* The font, the colormap and --quiz's questions, before any work: a bad
 * --font or quiz file fails first. */
static int open_pictures(const Options *o, Run *r)
{
    /* --svg: every canvas drawn from here on also records its SVG. */
    draw_svg_record(o->svg);
    int rc = render_open(&r->renderer, &o->render, r->err, sizeof r->err);
    if (rc == MHAVIZ_OK && o->quiz)
        rc = quiz_file_load(o->quiz, &r->quiz, r->err, sizeof r->err);
    return rc;
}

/* The input: a file's layers (those --layer lists), or a model's on its
 * sentence (--text, or --text-file's first). */
static int load_input(const Options *o, Run *r)
{
    const char *text = o->text;
    int rc;
    input_default_limits(&r->lim);
    if (o->max_memory_mb > 0)
        r->lim.max_memory_bytes = (size_t)o->max_memory_mb << 20;
    /* --text-file: its first sentence is the run's; the others join the roles. */
    if (o->text_file) {
        if ((rc = sentences_load(o->text_file, &r->sentences, r->err, sizeof r->err)) != MHAVIZ_OK)
            return rc;
        text = r->sentences.text[0];
    }
    if (o->model) {
        rc = load_model(o, text, &r->ins, &r->n_in, &r->many, &r->pred, &r->model_bytes, r->err, sizeof r->err);
        if (rc != MHAVIZ_OK && o->text_file && rc != MHAVIZ_ENOMEM && rc != MHAVIZ_EUSAGE) {
            char why[MHAVIZ_ERRLEN]; /* the message names the sentence's line */
            snprintf(why, sizeof why, "%s", r->err);
            snprintf(r->err, sizeof r->err, "%s:%d: %.*s", o->text_file, r->sentences.line[0],
                     (int)sizeof r->err / 2, why);
        }
    } else
        rc = input_load_layers(o->input, &r->lim, &r->ins, &r->n_in, r->err, sizeof r->err);
    if (r->ins && r->ins->warnings)
        fprintf(stderr, "%s", r->ins->warnings);
    /* a file of "layers": the layers --layer lists */
    if (rc == MHAVIZ_OK && !o->model)
        rc = pick_layers(o, r->ins, &r->n_in, &r->many, r->err, sizeof r->err);
    return rc;
}

/* --kv-heads and --kv-groups: the K/V layouts to run, each pooled from the
 * input's K/V heads (a usage error names one the input cannot take). */
static int choose_layouts(const Options *o, Run *r)
{
    r->n_vars = kv_layouts(o, &r->ins->cfg, r->kv, &r->groups, &r->grouped, r->err, sizeof r->err);
    return r->n_vars == 0 ? MHAVIZ_EUSAGE : MHAVIZ_OK;
}

/* The memory of the whole run: the arrays of every variant, the parse
 * (over by now, but counted as if it lasted), or a model's load and the
 * layers it keeps, the pictures' canvases and the program. A model is
 * checked once its forward has run (the tokens count is known then),
 * before any layer is measured or anything written. Over the limit:
 * MHAVIZ_EINPUT with err saying what needs it. */
static int check_memory(const Options *o, Run *r)
{
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    double pictures;
    if (run_memory(r->renderer, r->ins, r->kv, r->n_vars, o->steps, threads, r->n_in, r->model_bytes,
                   &r->tm.estimate_bytes, &pictures) != MHAVIZ_OK)
        return out_of_memory(r);
    const size_t need = r->tm.estimate_bytes, limit = r->lim.max_memory_bytes;
    if (r->n_vars > 1 && need > limit) {
        snprintf(r->err, sizeof r->err,
                 "%s: its %d variants (--kv-heads) would need about %zu MB of memory together, over the limit "
                 "of %zu MB; raise it with --max-memory MB, or list fewer",
                 o->input, r->n_vars, (need >> 20) + 1, limit >> 20);
        return MHAVIZ_EINPUT;
    }
    if (r->many && need > limit) {
        snprintf(r->err, sizeof r->err,
                 "%s: its %d layers would need about %zu MB of memory together (the model's load and the layers "
                 "it keeps %zu MB of it), over the limit of %zu MB; raise it with --max-memory MB, or show fewer "
                 "with --layer",
                 o->input, r->n_in, (need >> 20) + 1, (r->model_bytes >> 20) + 1, limit >> 20);
        return MHAVIZ_EINPUT;
    }
    if (need > limit) {
        snprintf(r->err, sizeof r->err,
                 "%s: this run would need about %zu MB of memory (the pictures %.0f MB of it, with overview.png and "
                 "sharpness.png at %dx%d), over the limit of %zu MB; raise it with --max-memory MB",
                 o->input, (need >> 20) + 1, pictures / (1 << 20), o->render.overview_w, o->render.overview_h,
                 limit >> 20);
        return MHAVIZ_EINPUT;
    }
    return MHAVIZ_OK;
}

/* --query: the token query_NN.png is about (a usage error names a bad one). */
static int find_query(const Options *o, Run *r)
{
    r->query = -1; /* the default: pull.h's choice once the pulls are known */
    if (o->query && (r->query = query_find(o->query, r->ins->tokens, r->ins->cfg.T, r->err, sizeof r->err)) < 0)
        return MHAVIZ_EUSAGE;
    return MHAVIZ_OK;
}

/* Each K/V layout's forward passes and measures (core/variant.c). A run
 * over several layers runs each layer as it is written instead. */
static int forward_layouts(const Options *o, Run *r)
{
    if (!(r->vars = calloc((size_t)r->n_vars, sizeof *r->vars)))
        return out_of_memory(r);
    for (int i = 0; i < r->n_vars && !r->many; i++) {
        const Grouping *groups = r->grouped && r->kv[i] == r->groups.n_groups ? &r->groups : NULL;
        int rc = variant_run(&r->vars[i], r->ins, r->kv[i], groups, o->pool, r->query, o->input, &r->tm, r->err,
                             sizeof r->err);
        if (rc != MHAVIZ_OK)
            return rc;
        /* What random layers of the same shape and sentence give, for the report to compare with;
         * for a layout pooled from a multi-head input, also how far pooling moves their heads (the same
         * numbers whether it runs alone or among others). Timed apart: no part of the forward pass. */
        timing_phase(&r->tm, TIMING_CHANCE);
        const int *group_of = groups && !grouping_is_contiguous(groups) ? groups->of : NULL;
        if (run_chance(&r->vars[i], r->ins, NULL, group_of, o->pool) != MHAVIZ_OK)
            return out_of_memory(r);
    }
    return MHAVIZ_OK;
}

/* The outputs: written aside, then moved into place whole. Creating the
 * folder is writing (timed so; it is no part of the forward pass). */
static int write_outputs(const Options *o, Run *r)
{
    const MhaInput *in = r->ins;
    timing_phase(&r->tm, TIMING_WRITE);
    r->out_dir = o->out_dir ? strdup(o->out_dir)
                            : default_out_dir(o, in->model ? in->model->name : NULL,
                                              in->model ? in->model->layer : in->layer);
    if (!r->out_dir)
        return out_of_memory(r);
    if (inside(o->input, r->out_dir)) {
        snprintf(r->err, sizeof r->err, "%s: the input lies inside the output folder %s; choose another with -o",
                 o->input, r->out_dir);
        return MHAVIZ_EIO;
    }
    OutDir out = {0};
    int rc = outdir_begin(&out, r->out_dir, r->err, sizeof r->err);
    if (rc != MHAVIZ_OK)
        return rc;
    const Sentences *st = &r->sentences;
    const VariantOptions run_opt = {o->steps, o->npy, o->layers, !o->no_html, o->quiz ? &r->quiz : NULL, NULL,
                                    o->head_maps};
    const ModelSentences more = {o->input, o->text_file, st->n > 1 ? st->text + 1 : NULL,
                                 st->n > 1 ? st->line + 1 : NULL, st->n > 1 ? st->n - 1 : 0, o->repeat};
    rc = r->many ? model_run_write(r->ins, r->n_in, in->model ? in->model->name : file_name(o->input),
                                   in->model ? &r->pred : NULL, &more, r->query, r->renderer, &out, &run_opt, &r->tm,
                                   r->err, sizeof r->err)
                 : variants_write(r->vars, r->n_vars, r->renderer, &out, &run_opt, &r->tm, r->err, sizeof r->err);
    if (rc != MHAVIZ_OK) {
        outdir_name_target(&out, r->err, sizeof r->err);
        outdir_abort(&out);
        return rc;
    }
    if ((rc = outdir_commit(&out, r->err, sizeof r->err)) != MHAVIZ_OK)
        return rc;
    if (r->err[0])
        fprintf(stderr, "mhaviz: warning: %s\n", r->err);
    r->committed = 1;
    return MHAVIZ_OK;
}

/* The end of a run on the terminal: the report (unless -q) and the folder
 * written, or the error (rc); --timing's phases. Returns the exit status:
 * rc, or the error of printing the report. */
static int finish(const Options *o, Run *r, int rc)
{
    timing_end(&r->tm);
    if (r->committed) {
        if (!o->quiet) { /* the report before the line below, also when both go to one pipe */
            size_t n = strlen(r->out_dir) + sizeof "/" OUTDIR_REPORT_TXT;
            char *report = malloc(n);
            if (report) {
                snprintf(report, n, "%s/" OUTDIR_REPORT_TXT, r->out_dir);
                rc = print_file(report, r->err, sizeof r->err);
                free(report);
            } else {
                rc = out_of_memory(r);
            }
        }
        fprintf(stderr, "mhaviz: wrote %s/\n", r->out_dir);
    }
    if (rc != MHAVIZ_OK)
        fprintf(stderr, "mhaviz: %s\n", r->err);
    if (o->timing)
        timing_print(&r->tm, stderr);
    return rc;
}

static void free_run(Run *r)
{
    free(r->out_dir);
    for (int i = 0; r->vars && i < r->n_vars; i++)
        variant_free(&r->vars[i]);
    free(r->vars);
    render_close(r->renderer);
    for (int i = 0; r->ins && i < r->n_in; i++)
        input_free(&r->ins[i]);
    free(r->ins);
    model_prediction_free(&r->pred);
    quiz_file_free(&r->quiz);
    sentences_free(&r->sentences);
}

/* A step of the run: MHAVIZ_OK, or the error with r->err saying why. */
typedef int Step(const Options *o, Run *r);

/* The run's steps in the order they happen; the first that fails ends it. */
static Step *const steps[] = {
    open_pictures,   /* the font, the colormap, --quiz's questions */
    load_input,      /* the file's layers, or the model's on the sentence */
    choose_layouts,  /* --kv-heads, --kv-groups */
    check_memory,    /* the whole run's, against --max-memory */
    find_query,      /* --query */
    forward_layouts, /* each layout's forward passes and measures */
    write_outputs,   /* the pictures and the report, into their folder */
};

/* The options, the steps, then finish says how it went. */
int main(int argc, char **argv)
{
    process_setup();
    if (argc > 1 && strcmp(argv[1], "init") == 0)
        return init_command(argc - 1, argv + 1);
    Options o;
    parse_args(argc, argv, &o);
    /* Threads: -t, else OpenMP's default (OMP_NUM_THREADS, else one per core). */
#ifdef _OPENMP
    if (o.threads > 0)
        omp_set_num_threads(o.threads);
#endif

    Run r = {.n_in = 1};
    timing_begin(&r.tm, isatty(STDERR_FILENO));
    timing_phase(&r.tm, TIMING_LOAD);
    int rc = MHAVIZ_OK;
    for (size_t i = 0; rc == MHAVIZ_OK && i < sizeof steps / sizeof steps[0]; i++)
        rc = steps[i](&o, &r);
    rc = finish(&o, &r, rc);
    free_run(&r);
    return rc;
}
