/* check_samples.c — the shipped samples do what samples/README.md says.
 *
 * Lesson 1's heads were designed by hand (samples/generate.c); here each
 * head must get the role it was built for from the report's measures
 * (src/core/measures.c), the single wide head built from the same weights must be
 * blurrier than the heads, and the
 * pooled lessons 2 (GQA) and 3 (MQA) must show what the README says sharing
 * K/V heads does. Then: `make samples` regenerates every file byte for byte,
 * every sample runs through the CLI, and `mhaviz init` / `--kv-heads` behave
 * as documented. Binaries: $MHAVIZ_BIN (mhaviz), $MHAVIZ_GEN (generate_samples). */
#include "io/input.h"
#include "core/measures.h"
#include "core/mha.h"
#include "core/status.h"

#include "support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

static const char *const SAMPLES[] = {
    "lesson1.json", "lesson2_gqa.json", "lesson3_mqa.json", "base_paper.json", "random_init.json",
};
enum { N_SAMPLES = sizeof SAMPLES / sizeof SAMPLES[0] };

/* ---- maps of a sample --------------------------------------------------- */

typedef struct {
    MhaInput in;
    MhaState multi, single;
} Run;

/* Load samples/name and run the heads and the single wide head; causal
 * 0 or 1 overrides the sample's mask, -1 keeps it. */
static void run_sample_causal(const char *name, int causal, Run *r)
{
    char path[256], err[MHAVIZ_ERRLEN];
    snprintf(path, sizeof path, "samples/%s", name);
    memset(r, 0, sizeof *r);
    int rc = input_load(path, &r->in, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "%s: %s", path, err);
    ck_assert_ptr_null(r->in.warnings);
    if (causal >= 0)
        r->in.cfg.causal = causal;
    MhaConfig wc;
    MhaWeights wide;
    ck_assert_int_eq(mha_single_head_weights(&r->in.cfg, &r->in.w, &wc, &wide), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build(&r->multi, &r->in.cfg, 0), MHAVIZ_OK);
    ck_assert_int_eq(mha_state_build(&r->single, &wc, 0), MHAVIZ_OK);
    mha_forward(&r->in.cfg, &r->in.w, r->in.x, &r->multi);
    mha_forward(&wc, &wide, r->in.x, &r->single);
    mha_weights_free(&wide);
}

static void run_sample(const char *name, Run *r) { run_sample_causal(name, -1, r); }

static void run_free(Run *r)
{
    mha_state_free(&r->multi);
    mha_state_free(&r->single);
    input_free(&r->in);
}

static const float *head_map(const Run *r, int h)
{
    const size_t T = (size_t)r->in.cfg.T;
    return h < 0 ? r->single.att : r->multi.att + (size_t)h * T * T;
}

/* The report's measures (src/core/measures.c, issue 4) of head h, or of the
 * single wide head when h < 0. */
static MapMeasures measure(const Run *r, int h)
{
    int ids[64];
    ck_assert_int_le(r->in.cfg.T, 64);
    measures_token_ids(r->in.tokens, r->in.cfg.T, ids);
    MapMeasures m;
    measures_map(head_map(r, h), r->in.cfg.T, r->in.cfg.causal, ids, &m);
    return m;
}

/* Head h's role as the report names it, with its pattern score at least
 * at_least (the issue asks >= 0.6 of the mass on the intended cells). */
static void assert_role(const Run *r, int h, MeasuresRole want, double at_least)
{
    MapMeasures m = measure(r, h);
    ck_assert_msg(m.role == want, "head %d: role %s, expected %s", h, measures_role_name(m.role),
                  measures_role_name(want));
    ck_assert_msg(m.pattern[want] >= at_least, "head %d: %s %.3f < %.2f", h,
                  measures_pattern_field(want), m.pattern[want], at_least);
}

/* Lesson 1: head 0 previous token, head 1 the subject (Mary, token 0: the
 * first-token pattern), head 2 duplicate token, head 3 self. Designed
 * strengths (samples/README.md) put each above 0.95; the issue asks >= 0.6. */
START_TEST(lesson1_heads_do_their_jobs)
{
    Run r;
    run_sample("lesson1.json", &r);
    ck_assert_int_eq(r.in.cfg.n_heads, 4);
    ck_assert_int_eq(r.in.cfg.n_kv_heads, 4);
    assert_role(&r, 0, MEASURES_PREVIOUS_TOKEN, 0.95);
    assert_role(&r, 1, MEASURES_FIRST_TOKEN, 0.95);
    assert_role(&r, 2, MEASURES_DUPLICATE_TOKEN, 0.95);
    assert_role(&r, 3, MEASURES_SELF, 0.95);
    /* the subject head looks at Mary from every later token, one by one */
    for (int i = 1; i < r.in.cfg.T; i++)
        ck_assert_double_ge(head_map(&r, 1)[i * r.in.cfg.T], 0.9);
    run_free(&r);
}
END_TEST

/* The single wide head made of the same weights: one distribution per token
 * has to average the four pulls, so it is blurrier than the heads (its
 * entropy_norm above their mean: the report's blur > 0; designed 0.27
 * against 0.04) and holds no role of its own: it splits its rows between
 * the previous token (0.48) and itself (0.44), no pattern >= 0.5 (split). */
START_TEST(lesson1_wide_head_is_blurrier)
{
    Run r;
    run_sample("lesson1.json", &r);
    double mean = 0;
    for (int h = 0; h < 4; h++)
        mean += measure(&r, h).entropy_norm / 4;
    MapMeasures wide = measure(&r, -1);
    ck_assert_msg(wide.entropy_norm > mean + 0.2, "wide %.3f vs heads' mean %.3f",
                  wide.entropy_norm, mean);
    ck_assert_int_eq(wide.role, MEASURES_SPLIT);
    ck_assert_int_eq(wide.split[0], MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(wide.split[1], MEASURES_SELF);
    run_free(&r);
}
END_TEST

/* Lesson 2 (two K/V groups): each pair of heads kept to different key
 * coordinates, so each head keeps its role at half strength: softer maps
 * (every head's entropy_norm up), same roles. */
START_TEST(lesson2_keeps_roles_softer)
{
    Run one, two;
    run_sample("lesson1.json", &one);
    run_sample("lesson2_gqa.json", &two);
    ck_assert_int_eq(two.in.cfg.n_kv_heads, 2);
    assert_role(&two, 0, MEASURES_PREVIOUS_TOKEN, 0.6);
    assert_role(&two, 1, MEASURES_FIRST_TOKEN, 0.6);
    assert_role(&two, 2, MEASURES_DUPLICATE_TOKEN, 0.6);
    assert_role(&two, 3, MEASURES_SELF, 0.6);
    for (int h = 0; h < 4; h++)
        ck_assert_double_gt(measure(&two, h).entropy_norm, measure(&one, h).entropy_norm);
    run_free(&one);
    run_free(&two);
}
END_TEST

/* Lesson 3 (one K/V head): heads 0 and 2, and heads 1 and 3, used the same
 * key coordinates for different things; averaged, they collide: the
 * previous-token head falls below half and splits its rows between the
 * previous token (0.37) and head 1's first token (0.27), the duplicate-token head
 * turns into a self head, the self head into a first-token head. */
START_TEST(lesson3_heads_collide)
{
    Run r;
    run_sample("lesson3_mqa.json", &r);
    ck_assert_int_eq(r.in.cfg.n_kv_heads, 1);
    ck_assert_int_eq(measure(&r, 0).role, MEASURES_SPLIT);
    ck_assert_int_eq(measure(&r, 0).split[0], MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(measure(&r, 0).split[1], MEASURES_FIRST_TOKEN);
    ck_assert_double_lt(measure(&r, 2).pattern[MEASURES_DUPLICATE_TOKEN], 0.5);
    assert_role(&r, 1, MEASURES_FIRST_TOKEN, 0.6);
    assert_role(&r, 2, MEASURES_SELF, 0.6);
    assert_role(&r, 3, MEASURES_FIRST_TOKEN, 0.6);
    run_free(&r);
}
END_TEST

/* Lesson 3's head 0 at "John" (7) looks at "because" (6): the token just
 * before, which also follows the first John. It counts as the previous
 * token, not induction: only the last "Mary" could show induction. */
START_TEST(lesson3_previous_token_is_not_induction)
{
    Run r;
    run_sample("lesson3_mqa.json", &r);
    MapMeasures m = measure(&r, 0);
    ck_assert_int_eq(m.rows[MEASURES_INDUCTION], 1);
    ck_assert_double_lt(m.pattern[MEASURES_INDUCTION], 0.1);
    ck_assert_int_eq(m.strongest, MEASURES_PREVIOUS_TOKEN);
    ck_assert_int_eq(m.role, MEASURES_SPLIT);
    run_free(&r);
}
END_TEST

/* Lesson 1 without the causal mask: head 3's "latest key" is the last
 * token, "Mary", for every row (about 0.97): a last-token head, not "no
 * pattern". The subject head still looks at Mary, token 0: first-token. */
START_TEST(lesson1_noncausal_last_token)
{
    Run r;
    run_sample_causal("lesson1.json", 0, &r);
    assert_role(&r, 3, MEASURES_LAST_TOKEN, 0.95);
    assert_role(&r, 1, MEASURES_FIRST_TOKEN, 0.95);
    assert_role(&r, 0, MEASURES_PREVIOUS_TOKEN, 0.95);
    run_free(&r);
}
END_TEST

/* The random samples have the documented shapes; an untrained layer has no
 * sharp head (every entropy_norm above 0.5). */
START_TEST(random_samples_shapes)
{
    Run r;
    run_sample("base_paper.json", &r);
    ck_assert_int_eq(r.in.cfg.d_model, 512);
    ck_assert_int_eq(r.in.cfg.n_heads, 8);
    ck_assert_int_eq(r.in.cfg.head_dim, 64);
    run_free(&r);
    run_sample("random_init.json", &r);
    ck_assert_int_eq(r.in.cfg.d_model, 16);
    ck_assert_int_eq(r.in.cfg.n_heads, 4);
    for (int h = 0; h < 4; h++)
        ck_assert_double_gt(measure(&r, h).entropy_norm, 0.5);
    run_free(&r);
    /* random weights get no role by chance (base_paper's one repeated
     * "the" is no induction habit) */
    for (int k = 0; k < 2; k++) {
        run_sample(k ? "random_init.json" : "base_paper.json", &r);
        for (int h = -1; h < r.in.cfg.n_heads; h++)
            ck_assert_msg(measure(&r, h).role >= MEASURES_N_PATTERNS, "random head %d: %s", h,
                          measures_role_name(measure(&r, h).role));
        run_free(&r);
    }
}
END_TEST

/* ---- the binaries --------------------------------------------------------- */

static int exists(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0;
}

/* `make samples` writes the very bytes that are shipped. */
START_TEST(generator_reproduces_samples)
{
    char *dir = scratch("samples"), err[4096];
    const char *argv[] = {need_env("MHAVIZ_GEN"), dir, NULL};
    ck_assert_msg(run_program(NULL, argv, NULL, err, sizeof err) == 0, "generator: %s", err);
    for (int s = 0; s < N_SAMPLES; s++) {
        char fresh[512], shipped[512];
        snprintf(fresh, sizeof fresh, "%s/%s", dir, SAMPLES[s]);
        snprintf(shipped, sizeof shipped, "samples/%s", SAMPLES[s]);
        ck_assert_msg(files_same(fresh, shipped), "%s differs from what `make samples` writes", shipped);
    }
    remove_tree(dir);
    free(dir);
}
END_TEST

/* Every sample runs through the CLI: exit 0, one PNG per head, the single
 * head's PNG and both reports. */
START_TEST(every_sample_runs)
{
    char *dir = scratch("samples"), err[4096];
    for (int s = 0; s < N_SAMPLES; s++) {
        char in[256], out[512], file[600];
        snprintf(in, sizeof in, "samples/%s", SAMPLES[s]);
        snprintf(out, sizeof out, "%s/%d", dir, s);
        const char *argv[] = {need_env("MHAVIZ_BIN"), "-q", "-o", out, in, NULL};
        ck_assert_msg(run_program(NULL, argv, NULL, err, sizeof err) == 0, "%s: %s", in, err);
        const int heads = s == 3 ? 8 : 4;
        for (int h = 0; h < heads; h++) {
            snprintf(file, sizeof file, "%s/head_%02d.png", out, h);
            ck_assert_msg(exists(file), "%s: no %s", in, file);
        }
        const char *files[] = {"single_head.png", "report.txt", "report.json"};
        for (int f = 0; f < 3; f++) {
            snprintf(file, sizeof file, "%s/%s", out, files[f]);
            ck_assert_msg(exists(file), "%s: no %s", in, file);
        }
    }
    remove_tree(dir);
    free(dir);
}
END_TEST

/* `mhaviz init`: same seed, same bytes; another seed, other bytes; the file
 * runs through the main command; the shipped random and designed samples
 * are exactly what init writes for the options samples/README.md gives. */
START_TEST(init_cli_reproducible_and_runs)
{
    char *dir = scratch("samples"), err[4096], a[512], b[512], c[512], out[512];
    snprintf(a, sizeof a, "%s/a.json", dir);
    snprintf(b, sizeof b, "%s/b.json", dir);
    snprintf(c, sizeof c, "%s/c.json", dir);
    snprintf(out, sizeof out, "%s/out", dir);
    const char *bin = need_env("MHAVIZ_BIN");
    const char *args7[] = {bin, "init", "--tokens", "the cat sat on the mat", "--d-model", "16",
                     "--heads", "4", "--kv-heads", "2", "--seed", "7", NULL};
    const char *args8[] = {bin, "init", "--tokens", "the cat sat on the mat", "--d-model", "16",
                     "--heads", "4", "--kv-heads", "2", "--seed", "8", "--embeddings", NULL};
    ck_assert_msg(run_program(NULL, args7, a, err, sizeof err) == 0, "init: %s", err);
    ck_assert_msg(run_program(NULL, args7, b, err, sizeof err) == 0, "init: %s", err);
    ck_assert_msg(run_program(NULL, args8, c, err, sizeof err) == 0, "init: %s", err);
    ck_assert(files_same(a, b));
    ck_assert(!files_same(a, c));
    const char *main_a[] = {bin, "-q", "-o", out, a, NULL};
    ck_assert_msg(run_program(NULL, main_a, NULL, err, sizeof err) == 0, "run: %s", err);
    const char *main_c[] = {bin, "-q", "-o", out, c, NULL};
    ck_assert_msg(run_program(NULL, main_c, NULL, err, sizeof err) == 0, "run: %s", err);

    const char *fresh[] = {bin, "init", "--tokens", "Mary gave the book to John because John had helped Mary",
                     "--d-model", "16", "--heads", "4", "--seed", "1", "--embeddings", NULL};
    ck_assert_int_eq(run_program(NULL, fresh, a, err, sizeof err), 0);
    ck_assert_msg(files_same(a, "samples/random_init.json"), "random_init.json is not init's output");
    const char *base[] = {bin, "init", "--tokens", "the animal didn't cross the street because it was too tired",
                    "--d-model", "512", "--heads", "8", "--seed", "2017", "--embeddings",
                    "--digits", "2", NULL};
    ck_assert_int_eq(run_program(NULL, base, a, err, sizeof err), 0);
    ck_assert_msg(files_same(a, "samples/base_paper.json"), "base_paper.json is not init's output");
    /* lesson 1 and 2 are designed models (samples/README.md) */
    const char *lesson1[] = {bin, "init", "--tokens", "Mary gave the book to John because John had helped Mary",
                       "--designed", "--subject", "Mary John", "--digits", "6", NULL};
    ck_assert_int_eq(run_program(NULL, lesson1, a, err, sizeof err), 0);
    ck_assert_msg(files_same(a, "samples/lesson1.json"), "lesson1.json is not init --designed's output");
    const char *lesson2[] = {bin, "init", "--tokens", "Mary gave the book to John because John had helped Mary",
                       "--designed", "--subject", "Mary John", "--kv-heads", "2", "--digits", "6", NULL};
    ck_assert_int_eq(run_program(NULL, lesson2, a, err, sizeof err), 0);
    ck_assert_msg(files_same(a, "samples/lesson2_gqa.json"), "lesson2_gqa.json is not init --designed's output");
    remove_tree(dir);
    free(dir);
}
END_TEST

/* init's bad command lines are usage errors (exit 2) naming the option. */
START_TEST(init_cli_errors)
{
    char err[4096];
    const char *bin = need_env("MHAVIZ_BIN");
    struct {
        const char *argv[12];
        const char *says;
    } cases[] = {
        {{bin, "init", NULL}, "--tokens"},
        {{bin, "init", "--tokens", "   ", NULL}, "no token"},
        {{bin, "init", "--tokens", "a b", "--heads", "3", NULL}, "--heads 3 must divide --d-model 16"},
        {{bin, "init", "--tokens", "a b", "--kv-heads", "3", NULL}, "--kv-heads 3 must divide --heads 4"},
        {{bin, "init", "--tokens", "a b", "--d-model", "x", NULL}, "--d-model"},
        {{bin, "init", "--tokens", "a b", "--seed", "-3", NULL}, "--seed"},
        {{bin, "init", "--tokens", "a b", "--frobnicate", NULL}, "unknown option '--frobnicate'"},
        {{bin, "init", "--tokens", NULL}, "needs an argument"},
        {{bin, "init", "--tokens", "a", "--d-model", "16384", "--heads", "1", NULL}, "too big"},
        {{bin, "init", "--tokens", "a b", "--designed", "--seed", "3", NULL}, "--seed is for random weights"},
        {{bin, "init", "--tokens", "a b", "--designed", "--d-model", "8", NULL}, "--d-model is for random"},
        {{bin, "init", "--tokens", "a b", "--designed", "--embeddings", NULL}, "--embeddings is for random"},
        {{bin, "init", "--tokens", "a b", "--subject", "a", NULL}, "--subject 'a' needs --designed"},
        {{bin, "init", "--tokens", "a b", "--designed", "--subject", "c", NULL}, "\"c\" is not one of the tokens"},
        {{bin, "init", "--tokens", "a b", "--designed", "--kv-heads", "3", NULL}, "--kv-heads 3 must divide --heads 4"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        ck_assert_int_eq(run_program(NULL, cases[i].argv, NULL, err, sizeof err), MHAVIZ_EUSAGE);
        ck_assert_msg(strstr(err, cases[i].says) != NULL, "case %zu: stderr was: %s", i, err);
    }
    /* a full disk is a file-system error (exit 3) */
    const char *ok[] = {bin, "init", "--tokens", "a b", NULL};
    ck_assert_int_eq(run_program(NULL, ok, "/dev/full", err, sizeof err), MHAVIZ_EIO);
    ck_assert_msg(strstr(err, "standard output") != NULL, "stderr was: %s", err);
}
END_TEST

/* --kv-heads: a count that does not divide the input's n_kv_heads is
 * a usage error (exit 2) and says so; --kv-heads 2 --pool mean on lesson 1
 * is lesson2_gqa.json (lesson 1's K/V heads plainly averaged): the same maps
 * and outputs in report.json, and the report says what was done. */
START_TEST(kv_heads_option)
{
    char *dir = scratch("samples"), err[4096], o1[512], o2[512], p1[600], p2[600];
    const char *bin = need_env("MHAVIZ_BIN");
    snprintf(o1, sizeof o1, "%s/pooled", dir);
    snprintf(o2, sizeof o2, "%s/shipped", dir);
    const char *bad[] = {bin, "-q", "-o", o1, "--kv-heads", "3", "samples/lesson1.json", NULL};
    ck_assert_int_eq(run_program(NULL, bad, NULL, err, sizeof err), MHAVIZ_EUSAGE);
    ck_assert_msg(strstr(err, "--kv-heads 3") && strstr(err, "n_kv_heads = 4"), "stderr: %s", err);
    ck_assert(!exists(o1));

    const char *pooled[] = {bin, "-q", "-o", o1, "--kv-heads", "2", "--pool", "mean", "samples/lesson1.json", NULL};
    const char *shipped[] = {bin, "-q", "-o", o2, "samples/lesson2_gqa.json", NULL};
    ck_assert_msg(run_program(NULL, pooled, NULL, err, sizeof err) == 0, "stderr: %s", err);
    ck_assert_msg(run_program(NULL, shipped, NULL, err, sizeof err) == 0, "stderr: %s", err);
    snprintf(p1, sizeof p1, "%s/report.txt", o1);
    size_t len;
    char *txt = slurp(p1, &len);
    ck_assert_msg(strstr(txt, "pooled from MHA, before uptraining (--kv-heads 2 --pool mean)") &&
                      strstr(txt, "mean nothing"),
                  "report.txt does not say the K/V heads were pooled:\n%s", txt);
    free(txt);
    /* the attention maps and outputs: same text in both report.json files */
    snprintf(p1, sizeof p1, "%s/report.json", o1);
    snprintf(p2, sizeof p2, "%s/report.json", o2);
    size_t l1, l2;
    char *j1 = slurp(p1, &l1), *j2 = slurp(p2, &l2);
    const char *h1 = strstr(j1, "\"heads\""), *h2 = strstr(j2, "\"heads\"");
    ck_assert_ptr_nonnull(h1);
    ck_assert_ptr_nonnull(h2);
    const char *e1 = strstr(h1, "\"single_head\""), *e2 = strstr(h2, "\"single_head\"");
    ck_assert_ptr_nonnull(e1);
    ck_assert_ptr_nonnull(e2);
    ck_assert_int_eq(e1 - h1, e2 - h2);
    ck_assert_msg(memcmp(h1, h2, (size_t)(e1 - h1)) == 0, "maps differ");
    free(j1);
    free(j2);
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *samples_suite(void)
{
    Suite *s = suite_create("samples");
    TCase *roles = tcase_create("roles");
    tcase_add_test(roles, lesson1_heads_do_their_jobs);
    tcase_add_test(roles, lesson1_wide_head_is_blurrier);
    tcase_add_test(roles, lesson2_keeps_roles_softer);
    tcase_add_test(roles, lesson3_heads_collide);
    tcase_add_test(roles, lesson3_previous_token_is_not_induction);
    tcase_add_test(roles, lesson1_noncausal_last_token);
    tcase_add_test(roles, random_samples_shapes);
    suite_add_tcase(s, roles);
    TCase *cli = tcase_create("cli");
    tcase_set_timeout(cli, 60);
    tcase_add_test(cli, generator_reproduces_samples);
    tcase_add_test(cli, every_sample_runs);
    tcase_add_test(cli, init_cli_reproducible_and_runs);
    tcase_add_test(cli, init_cli_errors);
    tcase_add_test(cli, kv_heads_option);
    suite_add_tcase(s, cli);
    return s;
}
