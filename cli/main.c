/* main.c — the mhaviz command: parse argv, run, exit with a status.
 *
 *   load input -> forward pass (heads) -> forward pass (single wide head)
 *   -> heatmaps + reports into a temporary folder -> move it into place. */
#include "init_cmd.h"
#include "args.h"
#include "input.h"
#include "measures.h"
#include "mha.h"
#include "outdir.h"
#include "pool.h"
#include "pull.h"
#include "render.h"
#include "render_pull.h"
#include "report.h"
#include "status.h"
#include "timing.h"

#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#ifdef _OPENMP
#include <omp.h>
#endif

#define MHAVIZ_VERSION "0.1.0"

typedef struct {
    const char *input;   /* INPUT.json */
    const char *out_dir; /* -o; NULL = input's stem + "_mhaviz" */
    int threads;         /* -t; 0 = OpenMP's default (OMP_NUM_THREADS, else one per core) */
    int max_memory_mb;   /* --max-memory; 0 = the default limit */
    int quiet;           /* -q */
    int kv_heads;        /* --kv-heads; 0 = as the input says */
    int steps;           /* --steps: also the pre-softmax scores of each head */
    int npy;             /* --npy: report.json's matrices as .npy files, whatever their size */
    int timing;          /* --timing */
    const char *query;   /* --query: the query token of query_NN.png, index or text; NULL = pull.h's default */
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
        "  -t, --threads N    threads (default: OMP_NUM_THREADS, else one per core)\n"
        "      --max-memory MB  refuse inputs whose run needs more (default: %d)\n"
        "  -q, --quiet        do not print the report to stdout\n"
        "      --kv-heads N   share keys and values: mean-pool the input's K/V heads into N\n"
        "                     groups (N divides the input's n_kv_heads; 1 = multi-query)\n"
        "      --timing       print each phase's time and the peak memory to stderr\n"
        "      --npy          write report.json's matrices as .npy files beside it (default:\n"
        "                     only past %d M numbers in all)\n"
        "\n"
        "Pictures:\n"
        "      --cmap NAME    viridis (default), magma, cividis or gray\n"
        "      --font FILE    TrueType font for the labels (default: DejaVu Sans)\n"
        "      --cell PX      cell size in pixels (default: chosen for slides)\n"
        "      --annotate     print each weight in its cell (default: when T <= 16)\n"
        "      --no-annotate  never print weights in the cells\n"
        "      --size WxH     size of overview.png (default: 1920x1080)\n"
        "      --steps        also write the scores before the softmax: head_NN_scores.png,\n"
        "                     single_head_scores.png, and in report.json\n"
        "      --query N|TEXT query_NN.png shows the heads' pulls on token N, or on the last\n"
        "                     token TEXT (default: where the heads' top keys differ most)\n"
        "  -h, --help         this help\n"
        "      --version      print the version\n"
        "\n"
        "Exit codes: 0 success, 1 invalid input, 2 usage error, 3 file-system error,\n"
        "4 out of memory. The input format is described in docs/input.md.\n"
        "\n"
        "       mhaviz init --tokens \"SENTENCE\" [options] > my.json\n"
        "writes a starter input for your own sentence ('mhaviz init --help').\n",
        INPUT_MAX_MEMORY_MB, (int)(REPORT_INLINE_MAX_NUMBERS >> 20));
}

static _Noreturn void usage_error(const char *fmt, const char *arg)
{
    args_usage_error("mhaviz", fmt, arg);
}

static int parse_int(const char *s, int lo, int hi, const char *option)
{
    return args_parse_int("mhaviz", s, lo, hi, option);
}

static void parse_args(int argc, char **argv, Options *o)
{
    enum { OPT_VERSION = 256, OPT_KV_HEADS, OPT_MAX_MEMORY, OPT_CMAP, OPT_FONT, OPT_CELL, OPT_ANNOTATE,
           OPT_NO_ANNOTATE, OPT_SIZE, OPT_STEPS, OPT_TIMING, OPT_NPY, OPT_QUERY };
    static const struct option longopts[] = {
        {"out", required_argument, NULL, 'o'},
        {"threads", required_argument, NULL, 't'},
        {"quiet", no_argument, NULL, 'q'},
        {"help", no_argument, NULL, 'h'},
        {"version", no_argument, NULL, OPT_VERSION},
        {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
        {"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
        {"cmap", required_argument, NULL, OPT_CMAP},
        {"font", required_argument, NULL, OPT_FONT},
        {"cell", required_argument, NULL, OPT_CELL},
        {"annotate", no_argument, NULL, OPT_ANNOTATE},
        {"no-annotate", no_argument, NULL, OPT_NO_ANNOTATE},
        {"size", required_argument, NULL, OPT_SIZE},
        {"steps", no_argument, NULL, OPT_STEPS},
        {"timing", no_argument, NULL, OPT_TIMING},
        {"npy", no_argument, NULL, OPT_NPY},
        {"query", required_argument, NULL, OPT_QUERY},
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
        case OPT_TIMING: o->timing = 1; break;
        case OPT_NPY: o->npy = 1; break;
        case OPT_VERSION: printf("mhaviz %s\n", MHAVIZ_VERSION); exit(MHAVIZ_OK);
        case OPT_CMAP:
            if (!render_cmap_known(optarg))
                usage_error("--cmap wants viridis, magma, cividis or gray, not '%s'", optarg);
            o->render.cmap = optarg;
            break;
        case OPT_FONT: o->render.font_path = optarg; break;
        case OPT_CELL: o->render.cell_px = parse_int(optarg, 1, 200, "--cell"); break;
        case OPT_ANNOTATE: o->render.annotate = 1; break;
        case OPT_NO_ANNOTATE: o->render.annotate = 0; break;
        case OPT_SIZE: {
            int w, h;
            char x, extra;
            if (sscanf(optarg, "%d%c%d%c", &w, &x, &h, &extra) != 3 || (x != 'x' && x != 'X') ||
                w < 320 || w > 7680 || h < 240 || h > 4320)
                usage_error("--size wants WIDTHxHEIGHT from 320x240 to 7680x4320, not '%s'", optarg);
            o->render.overview_w = w;
            o->render.overview_h = h;
            break;
        }
        case OPT_STEPS: o->steps = 1; break;
        case OPT_QUERY: o->query = optarg; break; /* checked against the tokens once they are loaded */
        case ':': usage_error("option '%s' needs an argument", argv[optind - 1]); break;
        default: usage_error("unknown option '%s' (or an abbreviation that fits several)", argv[optind - 1]); break;
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

/* The program itself: code, libraries, thread stacks, the font, the glyph
 * caches (a class-size run without its arrays and canvases peaks about there). */
#define PROGRAM_BYTES ((size_t)8 << 20)

/* Bytes a thread holds for a picture of w x h pixels: the canvas (3 bytes
 * a pixel, 1 filter byte a row), the filtered copy stb_image_write makes of
 * it to compress, and 1 MB for libdeflate's compressor and the compressed
 * stream (pictures of flat cells compress to a few percent). */
static double canvas_bytes(int w, int h) { return 2.0 * (1.0 + 3.0 * w) * h + (1 << 20); }

/* Bytes the pictures hold at once: each drawing thread keeps a canvas as
 * large as the largest picture it drew, so at worst two hold a slide at
 * --size (overview.png and sharpness.png) and every other one a heatmap
 * of T tokens. -1 when out of memory. */
static double pictures_bytes(Renderer *r, const MhaInput *in, int threads, int n_pictures)
{
    RenderLayout heat;
    RenderOverviewLayout over;
    if (render_heatmap_layout(r, in->cfg.T, in->tokens, "", NULL, &heat) != MHAVIZ_OK ||
        render_overview_layout(r, in->cfg.n_heads + 1, in->cfg.T, in->tokens, in->cfg.causal, NULL, &over) !=
            MHAVIZ_OK)
        return -1;
    const int held = threads < n_pictures ? threads : n_pictures; /* canvases */
    const int slides = held < 2 ? held : 2;
    return slides * canvas_bytes(over.width, over.height) + (held - slides) * canvas_bytes(heat.width, heat.height);
}

/* The progress line during the render phase. */
static void render_progress(void *tm, double fraction) { timing_progress(tm, fraction); }

/* s + " · " + part when both are non-empty, into s (len bytes). */
static void join(char *s, size_t len, const char *part)
{
    if (!part || !part[0])
        return;
    const size_t n = strlen(s);
    snprintf(s + n, len - n, "%s%s", n ? " \xc2\xb7 " : "", part);
}

/* Render every picture into the output folder: overview.png, one heatmap
 * per head, single_head.png, sharpness.png and, with --steps, each map's pre-softmax
 * scores (head_NN_scores.png, single_head_scores.png). pooled_from: the
 * input's K/V heads when --kv-heads mean-pooled them, else 0. The pictures
 * are drawn in parallel by render_jobs_progress. */
static int render_maps(Renderer *r, const Options *o, const MhaInput *in, const MhaState *multi,
                       const MhaState *single, const MapMeasures *m, int pooled_from, const OutDir *out,
                       Timing *tm, char *err, size_t errlen)
{
    const MhaConfig *c = &in->cfg;
    const int H = c->n_heads, T = c->T, G = c->n_kv_heads;
    const size_t map = (size_t)T * T;
    const int kv_mul = H / G;
    const int n_jobs = 3 + (H + 1) * (o->steps ? 2 : 1);
    RenderJob *jobs = calloc((size_t)n_jobs, sizeof *jobs);
    char **names = calloc((size_t)n_jobs, sizeof *names);    /* (n_jobs) PNG paths */
    char **titles = calloc((size_t)n_jobs, sizeof *titles);  /* (n_jobs) picture titles */
    char **subs = calloc((size_t)n_jobs, sizeof *subs);      /* (n_jobs) the lines under them */
    char **panels = calloc((size_t)H + 1, sizeof *panels);   /* (H + 1) overview panel titles */
    const float **maps = calloc((size_t)H + 1, sizeof *maps); /* (H + 1) the softmax maps */
    int rc = MHAVIZ_ENOMEM;
    if (!jobs || !names || !titles || !subs || !panels || !maps)
        goto cleanup;

    /* What the titles say: the layout (MHA, GQA or MQA), whether the K/V
     * heads were pooled here, and the input's own title. */
    const char *layout = measures_layout_name(H, G);
    char variant[64], pooled[96] = "", sharing[128], wide_from[160], sub[512];
    if (G == H)
        snprintf(variant, sizeof variant, "MHA");
    else
        snprintf(variant, sizeof variant, "%s (%d K/V head%s)", layout, G, G == 1 ? "" : "s");
    if (pooled_from)
        snprintf(pooled, sizeof pooled, "K/V mean-pooled from %d heads, not retrained", pooled_from);
    if (G == H)
        snprintf(sharing, sizeof sharing, "MHA: each head has its own keys and values");
    else if (G == 1)
        snprintf(sharing, sizeof sharing, "MQA: all %d heads share one K/V head", H);
    else
        snprintf(sharing, sizeof sharing, "GQA: each K/V head serves %d query heads", kv_mul);
    if (in->has_single)
        snprintf(wide_from, sizeof wide_from, "its own weights (the input's single_head), not the heads'");
    else
        snprintf(wide_from, sizeof wide_from,
                 "the heads' projections as one head: its score = (sum of the %d heads' scores) / \xe2\x88\x9a%d",
                 H, H);

    /* One line per picture: kind, file, title, subtitle. The titles carry
     * each map's role and entropy (issue 4) from m (H + 1). */
    int n = 0;
    const char *pad = H >= 100 ? "%03d" : "%02d"; /* head_00 .. head_99, head_000 from 100 heads */
    char fmt[64], name[64], title[192];
    for (int p = 0; p <= H; p++) {
        maps[p] = p < H ? multi->att + (size_t)p * map : single->att;
        if (p < H && G < H && G > 1) /* GQA: which K/V head (with MQA there is one) */
            snprintf(title, sizeof title, "head %d \xc2\xb7 K/V %d \xc2\xb7 %s", p, p / kv_mul,
                     measures_role_name(m[p].role));
        else if (p < H)
            snprintf(title, sizeof title, "head %d \xc2\xb7 %s", p, measures_role_name(m[p].role));
        else
            snprintf(title, sizeof title, "wide head \xc2\xb7 %s", measures_role_name(m[p].role));
        if (!(panels[p] = strdup(title)))
            goto cleanup;
    }
    snprintf(title, sizeof title, "%s: %d heads of width %d, and one wide head of width %d", variant, H,
             c->head_dim, c->d_model);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, pooled);
    jobs[n] = (RenderJob){.kind = RENDER_OVERVIEW, .maps = maps, .n_maps = H + 1, .panel_titles = panels};
    names[n] = outdir_path(out, "overview.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    for (int h = 0; h < H; h++) {
        snprintf(fmt, sizeof fmt, "head_%s.png", pad);
        snprintf(name, sizeof name, fmt, h);
        if (G == 1 && H > 1)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 the shared K/V head \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, measures_role_name(m[h].role), m[h].entropy_bits);
        else if (G < H)
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 K/V head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits",
                     h, H, h / kv_mul, G, measures_role_name(m[h].role), m[h].entropy_bits);
        else
            snprintf(title, sizeof title, "head %d of %d \xc2\xb7 %s \xc2\xb7 %.2f bits", h, H,
                     measures_role_name(m[h].role), m[h].entropy_bits);
        snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
        join(sub, sizeof sub, sharing);
        join(sub, sizeof sub, pooled);
        jobs[n] = (RenderJob){.kind = RENDER_WEIGHTS, .values = maps[h]};
        names[n] = outdir_path(out, name), titles[n] = strdup(title), subs[n++] = strdup(sub);
    }
    snprintf(title, sizeof title, "single wide head (1 head of width %d) \xc2\xb7 %s \xc2\xb7 %.2f bits", c->d_model,
             measures_role_name(m[H].role), m[H].entropy_bits);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, wide_from);
    join(sub, sizeof sub, in->has_single ? NULL : pooled);
    jobs[n] = (RenderJob){.kind = RENDER_WEIGHTS, .values = single->att};
    names[n] = outdir_path(out, "single_head.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    snprintf(title, sizeof title, "How sharp is each query's attention? %s: %d heads, and the wide head (bold)",
             variant, H);
    snprintf(sub, sizeof sub, "%s", in->title ? in->title : "");
    join(sub, sizeof sub, pooled);
    jobs[n] = (RenderJob){.kind = RENDER_SHARPNESS, .maps = maps, .n_maps = H + 1, .panel_titles = panels};
    names[n] = outdir_path(out, "sharpness.png"), titles[n] = strdup(title), subs[n++] = strdup(sub);

    for (int p = 0; o->steps && p <= H; p++) {
        snprintf(fmt, sizeof fmt, "head_%s_scores.png", pad);
        if (p < H)
            snprintf(name, sizeof name, fmt, p);
        else
            snprintf(name, sizeof name, "single_head_scores.png");
        if (p < H)
            snprintf(title, sizeof title,
                     "head %d of %d \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum", p, H,
                     c->head_dim);
        else
            snprintf(title, sizeof title,
                     "single wide head \xc2\xb7 scores q\xc2\xb7k/\xe2\x88\x9a%d, less the row's maximum", c->d_model);
        snprintf(sub, sizeof sub, "the softmax ignores a constant added to a row \xc2\xb7 "
                                  "each row's winner is 0, its lightest cell");
        join(sub, sizeof sub, pooled);
        jobs[n] = (RenderJob){.kind = RENDER_SCORES, .values = p < H ? multi->scores + (size_t)p * map : single->scores};
        names[n] = outdir_path(out, name), titles[n] = strdup(title), subs[n++] = strdup(sub);
    }
    for (int k = 0; k < n; k++) {
        if (!names[k] || !titles[k] || !subs[k])
            goto cleanup;
        jobs[k].path = names[k];
        jobs[k].title = titles[k];
        jobs[k].subtitle = subs[k];
    }

    rc = render_jobs_progress(r, jobs, n, T, in->tokens, c->causal, render_progress, tm, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "out of memory");
    for (int k = 0; names && titles && subs && k < n_jobs; k++)
        free(names[k]), free(titles[k]), free(subs[k]);
    for (int p = 0; panels && p <= H; p++)
        free(panels[p]);
    free(jobs), free(names), free(titles), free(subs), free(panels), free(maps);
    return rc;
}

/* query_NN.png: the heads' pulls on token query (render_pull.h), NN its
 * index zero-padded to the digits of the last token's (at least two). */
static int render_query(const Renderer *r, const MhaInput *in, const MhaState *multi, const MhaState *single,
                        const PullLayer *pulls, int query, const OutDir *out, char *err, size_t errlen)
{
    char name[32];
    int digits = 2;
    for (int t = in->cfg.T - 1; t >= 100; t /= 10)
        digits++;
    snprintf(name, sizeof name, "query_%0*d.png", digits, query);
    char *path = outdir_path(out, name);
    if (!path) {
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    int rc = render_pull(render_font(r), path, &in->cfg, in->tokens, multi, single, pulls, query, err, errlen);
    free(path);
    return rc;
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

int main(int argc, char **argv)
{
    /* Over a file size limit (ulimit -f) a write then fails with EFBIG, which
     * the run reports and cleans up after, instead of the process being
     * killed with its temporary folder left behind. */
    signal(SIGXFSZ, SIG_IGN);
    if (argc > 1 && strcmp(argv[1], "init") == 0)
        return init_command(argc - 1, argv + 1);
    Options o;
    parse_args(argc, argv, &o);
    /* Threads: -t, else OpenMP's default (OMP_NUM_THREADS, else one per core). */
#ifdef _OPENMP
    if (o.threads > 0)
        omp_set_num_threads(o.threads);
#endif

    char err[MHAVIZ_ERRLEN] = "";
    MhaInput in = {0};
    MhaState multi = {0}, single = {0};
    MhaConfig wide_cfg;
    OutDir out = {0};
    char *out_dir = NULL;
    int committed = 0;
    char note[512] = "";
    int pooled_from = 0; /* the input's K/V heads, when --kv-heads pooled them */
    MapMeasures *measures = NULL; /* (n_heads + 1) each head's map, then the wide head's */
    PullLayer pulls = {0};
    Timing tm;
    timing_begin(&tm, isatty(STDERR_FILENO));
    timing_phase(&tm, TIMING_LOAD);

    /* The font and colormap first: a bad --font fails before any work. */
    Renderer *renderer = NULL;
    int rc = render_open(&renderer, &o.render, err, sizeof err);
    if (rc != MHAVIZ_OK)
        goto cleanup;

    InputLimits lim;
    input_default_limits(&lim);
    if (o.max_memory_mb > 0)
        lim.max_memory_bytes = (size_t)o.max_memory_mb << 20;
    rc = input_load_limits(o.input, &lim, &in, err, sizeof err);
    if (in.warnings)
        fprintf(stderr, "%s", in.warnings);
    if (rc != MHAVIZ_OK)
        goto cleanup;

    /* The memory of the whole run: the arrays, the parse (over by now, but
     * counted as if it lasted), the pictures' canvases and the program. */
#ifdef _OPENMP
    const int threads = omp_get_max_threads();
#else
    const int threads = 1;
#endif
    const int n_pictures = 3 + in.cfg.n_heads + (o.steps ? in.cfg.n_heads + 1 : 0);
    const double pictures = pictures_bytes(renderer, &in, threads, n_pictures);
    if (pictures < 0)
        goto oom;
    tm.estimate_bytes = input_memory_estimate(&in.cfg, 0) + in.parse_bytes + (size_t)pictures + PROGRAM_BYTES;
    if (tm.estimate_bytes > lim.max_memory_bytes) {
        snprintf(err, sizeof err, "%s: this run would need about %zu MB of memory (the pictures %.0f MB of it: "
                 "overview.png and sharpness.png at %dx%d), over the limit of %zu MB; raise it with --max-memory MB",
                 o.input, (tm.estimate_bytes >> 20) + 1, pictures / (1 << 20), o.render.overview_w,
                 o.render.overview_h, lim.max_memory_bytes >> 20);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }

    /* --kv-heads: share keys and values by mean-pooling K/V heads (GQA, MQA). */
    if (o.kv_heads && o.kv_heads != in.cfg.n_kv_heads) {
        const int n_from = in.cfg.n_kv_heads;
        char why[MHAVIZ_ERRLEN / 2];
        if ((rc = pool_kv_heads(&in.cfg, &in.w, o.kv_heads, why, sizeof why)) != MHAVIZ_OK) {
            snprintf(err, sizeof err, "--kv-heads %d: %s", o.kv_heads, why);
            goto cleanup;
        }
        pool_note(note, sizeof note, in.cfg.n_heads, n_from, o.kv_heads);
        pooled_from = n_from;
    }

    /* --query: the token query_NN.png is about (a usage error names a bad one). */
    int query = -1; /* -1: the default, pull.h's choice once the pulls are known */
    if (o.query && (query = pull_find_query(o.query, in.tokens, in.cfg.T, err, sizeof err)) < 0) {
        rc = MHAVIZ_EUSAGE;
        goto cleanup;
    }

    /* The forward passes: h heads, then one wide head of the same width. */
    timing_phase(&tm, TIMING_FORWARD);
    /* Both passes keep their scores: the heads' pulls (pull.h) are made of them. */
    rc = mha_state_build(&multi, &in.cfg, 1);
    if (rc != MHAVIZ_OK)
        goto oom;
    mha_forward(&in.cfg, &in.w, in.x, &multi);
    char pass[MHAVIZ_ERRLEN / 2]; /* names a pass in overflow messages */
    snprintf(pass, sizeof pass, "%s: the heads", o.input);
    if ((rc = mha_check_finite(&in.cfg, &multi, pass, err, sizeof err)) != MHAVIZ_OK)
        goto cleanup;
    timing_progress(&tm, 0.5);

    wide_cfg = mha_single_head_config(&in.cfg);
    if ((rc = mha_state_build(&single, &wide_cfg, 1)) != MHAVIZ_OK)
        goto oom;
    if (in.has_single) /* the input gave the wide head's own weights */
        mha_forward(&wide_cfg, &in.single, in.x, &single);
    else /* built from the heads' weights: their q, k, v serve it too */
        mha_forward_wide(&in.cfg, &in.w, &multi, &single);
    snprintf(pass, sizeof pass, "%s: the single wide head", o.input);
    if ((rc = mha_check_finite(&wide_cfg, &single, pass, err, sizeof err)) != MHAVIZ_OK)
        goto cleanup;

    /* What each map does, for the picture titles and the reports alike. */
    if (!(measures = malloc(((size_t)in.cfg.n_heads + 1) * sizeof *measures)) ||
        measures_layer(multi.att, in.cfg.n_heads, single.att, in.cfg.T, in.cfg.causal, in.tokens,
                       measures) != MHAVIZ_OK)
        goto oom;
    /* How the wide head combines the heads' scores, row by row. */
    if (pull_layer_build(&pulls, &in.cfg, multi.scores, single.scores, single.att, !in.has_single) != MHAVIZ_OK)
        goto oom;
    if (query < 0)
        query = pulls.default_query;

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
    timing_phase(&tm, TIMING_RENDER);
    rc = render_maps(renderer, &o, &in, &multi, &single, measures, pooled_from, &out, &tm, err, sizeof err);
    if (rc == MHAVIZ_OK)
        rc = render_query(renderer, &in, &multi, &single, &pulls, query, &out, err, sizeof err);
    if (rc == MHAVIZ_OK) {
        timing_phase(&tm, TIMING_WRITE);
        ReportData d = {&in, &multi, &single, in.has_single, note[0] ? note : NULL, measures, o.npy, &pulls, o.steps};
        rc = report_write(out.tmp, &d, err, sizeof err);
    }
    if (rc != MHAVIZ_OK) {
        outdir_name_target(&out, err, sizeof err);
        outdir_abort(&out);
        goto cleanup;
    }
    if ((rc = outdir_commit(&out, err, sizeof err)) != MHAVIZ_OK)
        goto cleanup;
    if (err[0])
        fprintf(stderr, "mhaviz: warning: %s\n", err);
    committed = 1;
    goto cleanup;

oom:
    snprintf(err, sizeof err, "out of memory");
    rc = MHAVIZ_ENOMEM;
cleanup:
    timing_end(&tm);
    if (committed) {
        if (!o.quiet) { /* the report before the line below, also when both go to one pipe */
            size_t n = strlen(out_dir) + sizeof "/report.txt";
            char *report = malloc(n);
            if (report) {
                snprintf(report, n, "%s/report.txt", out_dir);
                rc = print_file(report, err, sizeof err);
                free(report);
            } else {
                snprintf(err, sizeof err, "out of memory");
                rc = MHAVIZ_ENOMEM;
            }
        }
        fprintf(stderr, "mhaviz: wrote %s/\n", out_dir);
    }
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "mhaviz: %s\n", err);
    }
    if (o.timing)
        timing_print(&tm, stderr);
    free(out_dir);
    free(measures);
    pull_layer_free(&pulls);
    render_close(renderer);
    mha_state_free(&single);
    mha_state_free(&multi);
    input_free(&in);
    return rc;
}
