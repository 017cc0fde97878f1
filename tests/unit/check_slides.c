/* check_slides.c — every picture type drawn for a class-size sentence (45
 * tokens with names that come back, and punctuation) with the designed
 * heads, checked for what can be checked without eyes, on the texts the
 * picture drew (draw_text_log: each text, its size and its inked box):
 *   - every token has its label, at LABELS_MIN_PX or more (labels.h), on
 *     every axis the picture labels;
 *   - no two texts of the picture overlap;
 *   - no number is written in scientific notation ("1.2e+04").
 * The pictures themselves are looked at by eye (docs/pictures.md). */
#include "core/measures.h"
#include "core/status.h"
#include "core/timing.h"
#include "core/variant.h"
#include "models/init.h"
#include "pictures/architecture.h"
#include "pictures/kv_cache_chart.h"
#include "pictures/labels.h"
#include "pictures/pull_slide.h"
#include "pictures/render.h"
#include "pictures/variants_slide.h"
#include "support.h"

#include <check.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* 45 tokens: Mary and John come back again and again, Tom twice; "." and "," three times each. */
static const char CLASS45[] =
    "Mary gave the old book to John because John had helped Mary move . Then John thanked Mary , and Mary "
    "smiled at John . Later Tom asked John where Mary was , and John said that Mary went home with Tom and Sue .";

static char *dir; /* the suite's scratch folder (support.h), made by class_open */

/* A file name in the scratch folder (caller frees). */
static char *scratch_png(const char *name)
{
    char *p = malloc(strlen(dir) + strlen(name) + 2);
    sprintf(p, "%s/%s", dir, name);
    return p;
}

/* The class sentence's designed layer under MHA, GQA-2 and MQA. */
typedef struct {
    InitModel m;
    Variant v[3];
    Renderer *r;
    Timing tm;
} Class;

static void class_open(Class *k)
{
    char err[MHAVIZ_ERRLEN];
    memset(k, 0, sizeof *k);
#ifdef _OPENMP
    omp_set_num_threads(1); /* the log records the calling thread's texts */
#endif
    ck_assert_msg(init_designed(CLASS45, 4, 0, NULL, &k->m, err, sizeof err) == MHAVIZ_OK, "%s", err);
    ck_assert_int_eq(k->m.in.cfg.T, 45);
    timing_begin(&k->tm, 0);
    static const int kv[3] = {4, 2, 1};
    for (int i = 0; i < 3; i++)
        ck_assert_msg(variant_run(&k->v[i], &k->m.in, kv[i], NULL, POOL_ALIGNED, -1, "class45", &k->tm, err, sizeof err) == MHAVIZ_OK,
                      "%s", err);
    RenderOptions o;
    render_default_options(&o);
    ck_assert_msg(render_open(&k->r, &o, err, sizeof err) == MHAVIZ_OK, "%s", err);
    dir = scratch("slides");
}

static void class_close(Class *k)
{
    for (int i = 0; i < 3; i++)
        variant_free(&k->v[i]);
    render_close(k->r);
    init_model_free(&k->m);
    remove_tree(dir);
    free(dir);
}

/* 1 when s holds a number in scientific notation: a digit, 'e' or 'E', an optional sign, a digit. */
static int scientific(const char *s)
{
    for (const char *p = s; *p; p++) {
        if (!isdigit((unsigned char)p[0]) || (p[1] != 'e' && p[1] != 'E'))
            continue;
        const char *q = p + 2 + (p[2] == '+' || p[2] == '-');
        if (isdigit((unsigned char)*q))
            return 1;
    }
    return 0;
}

/* What a picture drew: no two texts overlap, no number in scientific
 * notation; with tokens, each token's label (as label_of writes it) drawn
 * at least `axes` times as often as the token occurs, each at
 * LABELS_MIN_PX or more. */
static void check_texts(const DrawTextLog *log, const char *picture, char *const *tokens, int T, int axes,
                        void (*label_of)(const Class *, int, char *), const Class *k)
{
    ck_assert_msg(log->n > 0, "%s: no text drawn", picture);
    for (int a = 0; a < log->n; a++) {
        const DrawTextEntry *e = &log->e[a];
        ck_assert_msg(!scientific(e->text), "%s: '%s' in scientific notation", picture, e->text);
        for (int b = a + 1; b < log->n; b++) {
            const DrawTextEntry *f = &log->e[b];
            const int meet = e->x0 < f->x1 && f->x0 < e->x1 && e->y0 < f->y1 && f->y0 < e->y1;
            ck_assert_msg(!meet, "%s: '%s' (%d,%d)-(%d,%d) overlaps '%s' (%d,%d)-(%d,%d)", picture, e->text, e->x0,
                          e->y0, e->x1, e->y1, f->text, f->x0, f->y0, f->x1, f->y1);
        }
    }
    for (int t = 0; t < T && tokens; t++) {
        char want[128];
        label_of(k, t, want);
        int occurs = 0, drawn = 0;
        for (int u = 0; u < T; u++) {
            char other[128];
            label_of(k, u, other);
            occurs += strcmp(other, want) == 0;
        }
        for (int a = 0; a < log->n; a++) {
            if (strcmp(log->e[a].text, want) != 0)
                continue;
            ck_assert_msg(log->e[a].px >= LABELS_MIN_PX, "%s: '%s' set at %.1f px", picture, want, log->e[a].px);
            drawn++;
        }
        ck_assert_msg(drawn >= axes * occurs, "%s: '%s' (token %d) drawn %d times, %d expected", picture, want, t,
                      drawn, axes * occurs);
    }
}

/* A token's label on the heatmaps, the overview, sharpness.png, variants.png: the token as shown. */
static void token_label(const Class *k, int t, char *buf)
{
    render_token_label(render_font(k->r), k->m.in.tokens[t], 100.0f, 1e6f, buf);
}

/* A key's label on the pull slide: the token and its index. */
static void key_label(const Class *k, int t, char *buf)
{
    char shown[RENDER_LABEL_BYTES];
    token_label(k, t, shown);
    sprintf(buf, "%s %d", shown, t);
}

/* Draw job with the texts logged, then check them. */
static void check_job(Class *k, RenderJob job, const char *name, int axes)
{
    DrawTextLog log = {0};
    char *png = scratch_png(name), err[MHAVIZ_ERRLEN];
    job.path = png;
    draw_text_log(&log);
    const int rc = render_jobs(k->r, &job, 1, 45, k->m.in.tokens, 1, err, sizeof err);
    draw_text_log(NULL);
    ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
    check_texts(&log, name, k->m.in.tokens, 45, axes, token_label, k);
    free(log.e);
    free(png);
}

/* head_NN.png and single_head.png: every token on both axes. */
START_TEST(heatmap_45)
{
    Class k;
    class_open(&k);
    const Variant *v = &k.v[0];
    check_job(&k, (RenderJob){.draw = render_draw_weights, .title = "head 2 of 4", .values = v->multi.att + 2 * 45 * 45,
                              .subtitle = "weights designed by hand, not trained"},
              "head_02.png", 2);
    check_job(&k, (RenderJob){.draw = render_draw_weights, .title = "single wide head", .values = v->single.att},
              "single_head.png", 2);
    RenderLayout l;
    ck_assert_int_eq(render_heatmap_layout(k.r, 45, k.m.in.tokens, "head 2 of 4", NULL, &l), MHAVIZ_OK);
    ck_assert_int_eq(l.labelled, 45);
    ck_assert_int_eq(l.label_step, 1);
    ck_assert_float_ge(l.label_px, LABELS_MIN_PX);
    ck_assert_int_le(l.height, 1080);
    class_close(&k);
}
END_TEST

/* head_NN_scores.png (--steps): every token on both axes; the scale ends
 * at -10 and the clipped cells are named under the colour bar. */
START_TEST(scores_45)
{
    Class k;
    class_open(&k);
    DrawTextLog log = {0};
    char *png = scratch_png("head_00_scores.png"), err[MHAVIZ_ERRLEN];
    const RenderJob job = {.draw = render_draw_scores, .path = png, .title = "head 0 of 4 scores",
                           .values = k.v[0].multi.scores};
    draw_text_log(&log);
    ck_assert_int_eq(render_jobs(k.r, &job, 1, 45, k.m.in.tokens, 1, err, sizeof err), MHAVIZ_OK);
    draw_text_log(NULL);
    check_texts(&log, "head_00_scores.png", k.m.in.tokens, 45, 2, token_label, &k);
    int clipped = 0, ten = 0;
    for (int a = 0; a < log.n; a++) {
        clipped |= strstr(log.e[a].text, "clipped") != NULL;
        ten |= strcmp(log.e[a].text, "\xe2\x88\x92" "10") == 0;
    }
    ck_assert(clipped && ten);
    free(log.e);
    free(png);
    class_close(&k);
}
END_TEST

/* overview.png: the query labels left of each row of the grid and of the
 * wide head (3), the key labels under each column and the wide head (3). */
START_TEST(overview_45)
{
    Class k;
    class_open(&k);
    const Variant *v = &k.v[0];
    const float *maps[5];
    char *titles[5] = {"head 0", "head 1", "head 2", "head 3", "wide head"};
    for (int p = 0; p < 4; p++)
        maps[p] = v->multi.att + (size_t)p * 45 * 45;
    maps[4] = v->single.att;
    check_job(&k, (RenderJob){.draw = render_draw_overview, .title = "MHA: 4 heads of width 8", .maps = maps, .n_maps = 5,
                              .panel_titles = titles, .subtitle = "weights designed by hand, not trained"},
              "overview.png", 6);
    RenderOverviewLayout l;
    ck_assert_int_eq(render_overview_layout(k.r, 5, 45, k.m.in.tokens, 1, NULL, &l), MHAVIZ_OK);
    ck_assert_int_eq(l.labelled, 45);
    ck_assert_float_ge(l.label_px, LABELS_MIN_PX);
    class_close(&k);
}
END_TEST

/* sharpness.png: every query token under the plot; the y axis in whole
 * numbers of keys. */
START_TEST(sharpness_45)
{
    Class k;
    class_open(&k);
    const double *rows = k.v[0].summary.rows_entropy_norm; /* (5, 45) */
    char *legend[5] = {"head 0", "head 1", "head 2", "head 3", "wide head"};
    check_job(&k, (RenderJob){.draw = render_draw_sharpness, .title = "How sharp", .rows = rows, .n_maps = 5,
                              .panel_titles = legend},
              "sharpness.png", 1);
    RenderSharpnessLayout l;
    ck_assert_int_eq(render_sharpness_layout(k.r, rows, 5, 45, k.m.in.tokens, 1, legend, NULL, &l), MHAVIZ_OK);
    ck_assert_int_eq(l.labelled, 45);
    ck_assert_int_ge(l.keys_max, 2);
    class_close(&k);
}
END_TEST

/* query_NN.png: every key under both charts, on each query the slide can
 * be about (the last: 45 keys; the default; a name). */
START_TEST(pull_45)
{
    Class k;
    class_open(&k);
    const Variant *v = &k.v[0];
    DrawCanvas *c = draw_canvas_new(1, 1);
    const int queries[3] = {44, v->pulls.default_query, 15};
    for (int q = 0; q < 3; q++) {
        DrawTextLog log = {0};
        char name[32], err[MHAVIZ_ERRLEN];
        snprintf(name, sizeof name, "query_%02d.png", queries[q]);
        char *png = scratch_png(name);
        draw_text_log(&log);
        const int rc = render_pull(c, render_font(k.r), png, &v->in.cfg, v->in.tokens, &v->multi, &v->single,
                                   &v->pulls, queries[q], err, sizeof err);
        draw_text_log(NULL);
        ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
        check_texts(&log, name, k.m.in.tokens, queries[q] + 1, 2, key_label, &k);
        /* each head's favourite named with its index, uncut */
        for (int h = 0; h < 4; h++) {
            const int top = v->pulls.top[(size_t)queries[q] * 4 + h];
            char want[200], shown[RENDER_LABEL_BYTES];
            token_label(&k, top, shown);
            snprintf(want, sizeof want, "%s %d", shown, top);
            int found = 0;
            for (int a = 0; a < log.n; a++)
                found |= strstr(log.e[a].text, want) != NULL && strstr(log.e[a].text, "\xe2\x80\xa6") == NULL &&
                         log.e[a].x0 < 300;
            ck_assert_msg(found, "%s: head %d's favourite '%s' not named", name, h, want);
        }
        free(log.e);
        free(png);
    }
    draw_canvas_free(c);
    class_close(&k);
}
END_TEST

/* variants.png, read from the back row: the token labels at 18 px or more
 * (variants_slide.c's LABEL_MIN_PX), so at 45 tokens in maps of 180 px
 * thinned by the one rule (labels.h), the rows left of each variant's
 * first column (3) and the keys under each of the last row's 5 maps: the
 * first token ("Mary") and the last (".") labelled on each, 8 times; no
 * label smaller; each map's role under it; no texts overlap. */
START_TEST(variants_45)
{
    Class k;
    class_open(&k);
    DrawTextLog log = {0};
    char *png = scratch_png("variants.png"), err[MHAVIZ_ERRLEN];
    draw_text_log(&log);
    const int rc = variants_slide_draw(k.r, png, k.v, 3, err, sizeof err);
    draw_text_log(NULL);
    ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
    check_texts(&log, "variants.png", NULL, 45, 0, token_label, &k);
    int first = 0, last = 0;
    for (int a = 0; a < log.n; a++) {
        int is_token = 0;
        for (int t = 0; t < 45 && !is_token; t++) {
            char want[128];
            token_label(&k, t, want);
            is_token = strcmp(log.e[a].text, want) == 0;
        }
        if (!is_token)
            continue;
        ck_assert_msg(log.e[a].px >= 18.0f, "variants.png: '%s' set at %.1f px", log.e[a].text, log.e[a].px);
        first += strcmp(log.e[a].text, "Mary") == 0;
        last += strcmp(log.e[a].text, ".") == 0;
    }
    ck_assert_int_ge(first, 8);
    ck_assert_int_ge(last, 8);
    for (int i = 0; i < 3; i++)
        for (int h = 0; h <= 4; h++) {
            const char *role = measures_role_name(k.v[i].measures[h].role);
            int n = 0;
            for (int a = 0; a < log.n; a++)
                n += strcmp(log.e[a].text, role) == 0;
            ck_assert_msg(n >= 1, "variant %d head %d: role '%s' not named", i, h, role);
        }
    free(log.e);
    free(png);
    class_close(&k);
}
END_TEST

/* kv_cache.png and architecture.png: no overlap, no scientific notation;
 * the head's steps with their shapes. */
START_TEST(kv_cache_and_architecture_45)
{
    Class k;
    class_open(&k);
    DrawTextLog log = {0};
    char *png = scratch_png("kv_cache.png"), err[MHAVIZ_ERRLEN];
    const KvCacheLine lines[3] = {{"MHA", 4, 128}, {"GQA-2", 2, 64}, {"MQA", 1, 32}};
    draw_text_log(&log);
    ck_assert_int_eq(kv_cache_chart_draw(render_font(k.r), png, lines, 3, 4, 8, 45, 1, err, sizeof err), MHAVIZ_OK);
    draw_text_log(NULL);
    check_texts(&log, "kv_cache.png", NULL, 0, 0, NULL, &k);
    /* 128 B a token at 8192 tokens: 1 MiB; Llama-3-8B as built: 2 x 8 x 128 x 2 x 32 x 8192 = 1 GiB */
    int mib = 0, gib = 0;
    for (int a = 0; a < log.n; a++) {
        mib |= strcmp(log.e[a].text, "1 MiB") == 0;
        gib |= strncmp(log.e[a].text, "1 GiB", 5) == 0;
    }
    ck_assert(mib && gib);
    free(log.e);
    free(png);

    DrawTextLog arch = {0};
    png = scratch_png("architecture.png");
    DrawCanvas *c = draw_canvas_new(1, 1);
    draw_text_log(&arch);
    ck_assert_int_eq(architecture_draw(c, render_font(k.r), png, &k.v[0].in.cfg, k.v[0].kv_of, 4096, 0, err, sizeof err), MHAVIZ_OK);
    draw_text_log(NULL);
    check_texts(&arch, "architecture.png", NULL, 0, 0, NULL, &k);
    static const char *const steps[] = {"Q K\xe1\xb5\x80/\xe2\x88\x9a" "d_k: T\xc3\x97T = 45\xc3\x97" "45", "causal mask",
                                        "softmax: T\xc3\x97T = 45\xc3\x97" "45", "\xc3\x97 V: T\xc3\x97" "d_k = 45\xc3\x97" "8"};
    for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++) {
        int n = 0;
        for (int a = 0; a < arch.n; a++)
            n += strcmp(arch.e[a].text, steps[s]) == 0;
        ck_assert_msg(n == 4, "'%s' in %d head boxes, 4 expected", steps[s], n);
    }
    free(arch.e);
    free(png);
    draw_canvas_free(c);
    class_close(&k);
}
END_TEST

/* 1 when s holds a shape whose axes are not named: two numbers joined by
 * a multiplication sign ("16 × 16", "16×4") that do not follow "= " after
 * the axes' names ("T×d_k = 16×4"). */
static int bare_shape(const char *s)
{
    for (const char *p = strstr(s, "\xc3\x97"); p; p = strstr(p + 2, "\xc3\x97")) {
        const char *a = p, *b = p + 2;
        while (a > s && a[-1] == ' ')
            a--;
        while (*b == ' ')
            b++;
        if (a == s || !isdigit((unsigned char)a[-1]) || !isdigit((unsigned char)*b))
            continue; /* not between two numbers: "× V", "T×d_k", "4×d_k" */
        while (a > s && isdigit((unsigned char)a[-1]))
            a--;
        if (a - s < 2 || strncmp(a - 2, "= ", 2) != 0)
            return 1;
    }
    return 0;
}

/* architecture.png names the axes of every shape it draws, so that a
 * student can tell which number is T, d_model or d_k when two are equal
 * (16 tokens of d_model 16; 4 tokens of d_k 4); the weights' shapes in
 * the caption are d_model by d_model or by the K/V width, never T. Every
 * text at 22 px or more, none overlapping, inside the slide. */
START_TEST(architecture_names_every_axis)
{
    static const MhaConfig shapes[] = {
        {16, 16, 4, 4, 4, 1, {0}}, {4, 16, 4, 4, 4, 1, {0}}, {11, 512, 8, 8, 64, 1, {0}}, {64, 64, 32, 8, 2, 1, {0}},
        {300, 16, 2, 2, 8, 0, {0}}, {12, 64, 1, 1, 64, 1, {0}},
    };
    RenderOptions o;
    render_default_options(&o);
    Renderer *r;
    char err[MHAVIZ_ERRLEN];
    ck_assert_msg(render_open(&r, &o, err, sizeof err) == MHAVIZ_OK, "%s", err);
    dir = scratch("architecture");
    char *png = scratch_png("architecture.png");
    DrawCanvas *c = draw_canvas_new(1, 1);
    for (size_t k = 0; k < sizeof shapes / sizeof shapes[0]; k++) {
        DrawTextLog log = {0};
        draw_text_log(&log);
        ck_assert_int_eq(architecture_draw(c, render_font(r), png, &shapes[k], NULL, 1024, 0, err, sizeof err),
                         MHAVIZ_OK);
        draw_text_log(NULL);
        check_texts(&log, "architecture.png", NULL, 0, 0, NULL, NULL);
        int named = 0;
        for (int a = 0; a < log.n; a++) {
            const DrawTextEntry *e = &log.e[a];
            ck_assert_msg(e->px >= 22.0f, "T=%d: '%s' at %.1f px", shapes[k].T, e->text, e->px);
            ck_assert_msg(e->x0 >= 0 && e->x1 <= SLIDE_W, "T=%d: '%s' leaves the slide", shapes[k].T, e->text);
            if (strncmp(e->text, "parameters:", 11) != 0)
                ck_assert_msg(!bare_shape(e->text), "T=%d: '%s' has a shape without its axes", shapes[k].T, e->text);
            named += strstr(e->text, "T\xc3\x97T") != NULL;
            /* one head is "1 head" */
            ck_assert_msg(strncmp(e->text, "1 heads", 7) != 0 && !strstr(e->text, " 1 heads"), "'%s'", e->text);
        }
        ck_assert_msg(named >= 2, "T=%d: the scores' T×T in %d texts", shapes[k].T, named);
        free(log.e);
    }
    ck_assert(bare_shape("softmax: 16 \xc3\x97 16") && bare_shape("x  \xc2\xb7  16\xc3\x97" "16") &&
              !bare_shape("softmax: T\xc3\x97T = 16\xc3\x97" "16") && !bare_shape("\xc3\x97 V: T\xc3\x97" "d_k"));
    draw_canvas_free(c);
    free(png);
    render_close(r);
    remove_tree(dir);
    free(dir);
}
END_TEST

Suite *slides_suite(void)
{
    Suite *s = suite_create("slides");
    TCase *tc = tcase_create("class45");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, heatmap_45);
    tcase_add_test(tc, scores_45);
    tcase_add_test(tc, overview_45);
    tcase_add_test(tc, sharpness_45);
    tcase_add_test(tc, pull_45);
    tcase_add_test(tc, variants_45);
    tcase_add_test(tc, kv_cache_and_architecture_45);
    tcase_add_test(tc, architecture_names_every_axis);
    suite_add_tcase(s, tc);
    return s;
}
