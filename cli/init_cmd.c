/* init_cmd.c — `mhaviz init`: parse argv, build a designed or seeded random model, print it.
 *
 *   mhaviz init --tokens "the cat sat on the mat" --designed [--subject cat] \
 *               [--heads 4] [--kv-heads 2] [--digits 4] > my.json
 *   mhaviz init --tokens "the cat sat on the mat" --d-model 16 --heads 4 \
 *               [--kv-heads 2] [--seed 7] [--embeddings] [--digits 4] > my.json */
#include "init_cmd.h"
#include "args.h"
#include "core/status.h"
#include "core/memory.h"
#include "io/input.h"
#include "models/init.h"

#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void init_usage(FILE *f)
{
    fprintf(f,
        "usage: mhaviz init --tokens \"SENTENCE\" [options] > my.json\n"
        "\n"
        "Writes a starter input (JSON, on standard output) for your own sentence.\n"
        "With --designed, its heads do the lesson's jobs, head h job h mod 4: the\n"
        "previous token, the subject, an earlier mention of the same word (itself\n"
        "when there is none), the token itself; d_model is chosen to fit. Without,\n"
        "an untrained layer whose weights are drawn from a normal distribution with\n"
        "std 1/sqrt(d_model). The same options always give the same file.\n"
        "\n"
        "  --tokens TEXT      the tokens, separated by spaces (required)\n"
        "  --designed         the lesson's heads, designed by hand, instead of random weights\n"
        "  --subject WORDS    with --designed: the word(s) the subject head looks for,\n"
        "                     its earliest mention (default: the first token)\n"
        "  --d-model N        hidden width (default 16; not with --designed)\n"
        "  --heads N          query heads, dividing d_model (default 4)\n"
        "  --kv-heads N       key/value heads, dividing the heads (default: as many as heads)\n"
        "  --seed N           random seed, 0 to 2^64-1 (default 1; not with --designed)\n"
        "  --embeddings       write an embedding table + sinusoidal positions instead of x\n"
        "                     (not with --designed, whose x carries the positions it needs)\n"
        "  --digits N         significant digits per number, 1 to 9 (default 4; with --designed 9,\n"
        "                     every weight exact: fewer can turn an exact tie into a choice)\n"
        "  -h, --help         this help\n");
}

static _Noreturn void init_usage_error(const char *fmt, const char *arg)
{
    args_usage_error("mhaviz init", fmt, arg);
}

static int init_parse_int(const char *s, int lo, int hi, const char *option)
{
    return args_parse_int("mhaviz init", s, lo, hi, option);
}

static uint64_t init_parse_seed(const char *s)
{
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s || *end != '\0' || errno || s[strspn(s, " \t")] == '-')
        init_usage_error("--seed wants a whole number from 0 to 18446744073709551615, not '%s'", s);
    return (uint64_t)v;
}

/* Shapes the loader would refuse are usage errors here: they come from argv.
 * Everything is checked before the model is allocated. Returns MHAVIZ_OK,
 * or the status of another failure, printed. */
static int init_check_size(const InitOptions *o, int designed, int digits)
{
    char err[MHAVIZ_ERRLEN];
    if (o->d_model % o->n_heads != 0) {
        snprintf(err, sizeof err, "--heads %d must divide --d-model %d", o->n_heads, o->d_model);
        init_usage_error("%s", err);
    }
    if (o->n_kv_heads && o->n_heads % o->n_kv_heads != 0) {
        snprintf(err, sizeof err, "--kv-heads %d must divide --heads %d", o->n_kv_heads, o->n_heads);
        init_usage_error("%s", err);
    }
    char **tokens;
    MhaConfig c = {0, o->d_model, o->n_heads, o->n_kv_heads ? o->n_kv_heads : o->n_heads,
                   o->d_model / o->n_heads, 1, {0}};
    int rc = init_tokens_split(o->tokens, &tokens, &c.T, err, sizeof err);
    if (rc == MHAVIZ_EINPUT)
        init_usage_error("%s", err);
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "mhaviz init: %s\n", err);
        return rc;
    }
    init_tokens_free(tokens, c.T);
    InputLimits lim;
    input_default_limits(&lim);
    if (c.T > lim.max_T) {
        snprintf(err, sizeof err, "--tokens: %d tokens, more than the %d an input may hold", c.T, lim.max_T);
        init_usage_error("%s", err);
    }
    /* the file's size: every number printed with `digits` digits, sign, "0." and ", " */
    const double numbers = (double)c.T * c.d_model +
                           2.0 * c.d_model * c.d_model + 2.0 * c.d_model * mha_kv_dim(&c);
    const double json_bytes = numbers * (digits + 5);
    if (json_bytes > (double)lim.max_file_bytes ||
        memory_estimate(&c, (size_t)json_bytes) > lim.max_memory_bytes) {
        if (designed)
            snprintf(err, sizeof err, "--designed: %d tokens need d_model %d, a model too big to run "
                     "(over %zu MB); choose a shorter sentence", c.T, c.d_model, lim.max_memory_bytes >> 20);
        else
            snprintf(err, sizeof err, "--d-model %d with %d tokens makes a model too big to run "
                     "(over %zu MB); choose a smaller one", c.d_model, c.T, lim.max_memory_bytes >> 20);
        init_usage_error("%s", err);
    }
    return MHAVIZ_OK;
}

/* `mhaviz init`'s steps in order: the options, the model's size
 * (init_check_size), the model, the JSON on stdout. */
int init_command(int argc, char **argv)
{
    enum { OPT_TOKENS = 256, OPT_D_MODEL, OPT_HEADS, OPT_KV_HEADS, OPT_SEED, OPT_EMB, OPT_DIGITS,
           OPT_DESIGNED, OPT_SUBJECT };
    static const struct option longopts[] = {
        {"tokens", required_argument, NULL, OPT_TOKENS},
        {"d-model", required_argument, NULL, OPT_D_MODEL},
        {"heads", required_argument, NULL, OPT_HEADS},
        {"kv-heads", required_argument, NULL, OPT_KV_HEADS},
        {"seed", required_argument, NULL, OPT_SEED},
        {"embeddings", no_argument, NULL, OPT_EMB},
        {"digits", required_argument, NULL, OPT_DIGITS},
        {"designed", no_argument, NULL, OPT_DESIGNED},
        {"subject", required_argument, NULL, OPT_SUBJECT},
        {"help", no_argument, NULL, 'h'},
        {NULL, 0, NULL, 0},
    };
    InitOptions o = {NULL, 16, 4, 0, 1, 0};
    int digits = 0, designed = 0; /* 0: the default, below */
    const char *subject = NULL, *random_only = NULL; /* an option --designed does not take */
    opterr = 0;
    optind = 1;
    int ch;
    while ((ch = getopt_long(argc, argv, ":h", longopts, NULL)) != -1) {
        switch (ch) {
        case OPT_TOKENS: o.tokens = optarg; break;
        case OPT_D_MODEL:
            o.d_model = init_parse_int(optarg, 1, INPUT_MAX_D_MODEL, "--d-model");
            random_only = "--d-model";
            break;
        case OPT_HEADS: o.n_heads = init_parse_int(optarg, 1, INPUT_MAX_HEADS, "--heads"); break;
        case OPT_KV_HEADS: o.n_kv_heads = init_parse_int(optarg, 1, INPUT_MAX_HEADS, "--kv-heads"); break;
        case OPT_SEED: o.seed = init_parse_seed(optarg); random_only = "--seed"; break;
        case OPT_EMB: o.embeddings = 1; random_only = "--embeddings"; break;
        case OPT_DESIGNED: designed = 1; break;
        case OPT_SUBJECT: subject = optarg; break;
        case OPT_DIGITS: digits = init_parse_int(optarg, 1, 9, "--digits"); break;
        case 'h': init_usage(stdout); return MHAVIZ_OK;
        case ':': init_usage_error("option '%s' needs an argument", argv[optind - 1]); break;
        default: init_usage_error("unknown option '%s'", argv[optind - 1]); break;
        }
    }
    if (optind < argc)
        init_usage_error("unexpected argument '%s' (put the sentence in --tokens \"...\")", argv[optind]);
    if (!o.tokens)
        init_usage_error("--tokens \"SENTENCE\" is required%s", "");
    if (designed && random_only)
        init_usage_error("%s is for random weights: --designed chooses its own", random_only);
    if (subject && !designed)
        init_usage_error("--subject '%s' needs --designed", subject);
    if (designed)
        o.d_model = init_designed_d_model(o.tokens, o.n_heads); /* 0: no token, said below */
    /* Random weights: 4 digits say enough. Designed weights: 9, as many as
     * a float needs to read back to its own bits, so the file holds the
     * design exactly; rounded, a tie the design makes (two keys' scores
     * equal) can come out as a choice of 0.501 against 0.499. */
    if (digits == 0)
        digits = designed ? 9 : 4;

    int rc = init_check_size(&o, designed, digits);
    if (rc != MHAVIZ_OK)
        return rc;

    char err[MHAVIZ_ERRLEN];
    InitModel m;
    rc = designed ? init_designed(o.tokens, o.n_heads, o.n_kv_heads, subject, &m, err, sizeof err)
                  : init_model(&o, &m, err, sizeof err);
    if (rc == MHAVIZ_EINPUT)
        init_usage_error("%s", err);
    if (rc != MHAVIZ_OK) {
        fprintf(stderr, "mhaviz init: %s\n", err);
        return rc;
    }
    rc = init_write(stdout, &m, digits, err, sizeof err);
    if (rc != MHAVIZ_OK)
        fprintf(stderr, "mhaviz init: standard output: %s\n", err);
    init_model_free(&m);
    return rc;
}
