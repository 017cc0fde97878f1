/* check_svg.c — --svg: every picture also as an SVG, recorded by the same
 * draw.h calls that paint its PNG (draw_svg.c). Checked with tools that
 * share nothing with the writer:
 *   - xmllint --noout (libxml2): the SVG is well-formed XML;
 *   - tests/svg_texts.py (Python's XML parser): its <text>s are the texts
 *     the PNG drew (draw_text_log), in the order drawn;
 *   - rsvg-convert (librsvg) renders it close to the PNG (close_to_png
 *     says how close, and why that much);
 *   - the PNG's bytes are the same with and without the SVG.
 * Pictures: every picture of a run (variants_write, with --steps, three
 * K/V layouts) for the designed 11-token lesson sentence and a 45-token
 * class sentence; a map too fine for <rect>s (150 tokens); and the
 * primitives one by one, with text that needs escaping. */
#include "core/status.h"
#include "core/timing.h"
#include "core/variant.h"
#include "draw/draw.h"
#include "io/outdir.h"
#include "models/init.h"
#include "pictures/render.h"
#include "run/run_memory.h"
#include "run/variants.h"
#include "support.h"

#include <check.h>
#include <cJSON.h>
#include <stb_image.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#ifdef _OPENMP
#include <omp.h>
#endif

/* 1 when the tools the checks need are installed; else the test says so (support.h). */
static int tools_here(const char *test)
{
    if (system("command -v xmllint > /dev/null && command -v rsvg-convert > /dev/null && "
               "command -v python3 > /dev/null") == 0)
        return 1;
    cannot_run(test, "xmllint (libxml2-utils), rsvg-convert (librsvg2-bin) or python3 missing");
    return 0;
}

static void assert_well_formed(const char *svg)
{
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", svg);
    ck_assert_msg(system(cmd) == 0, "%s: not well-formed XML (xmllint)", svg);
}

/* The texts of the n SVGs' <text> elements, each file's in document
 * order: a cJSON object, file -> array of strings (the caller deletes it).
 * One Python for all the files of a run. */
static cJSON *svg_texts(char *const *svg, int n)
{
    char cmd[1 << 14] = "python3 tests/svg_texts.py";
    for (int i = 0; i < n; i++) {
        const size_t len = strlen(cmd);
        ck_assert_int_lt(len + strlen(svg[i]) + 4, sizeof cmd);
        snprintf(cmd + len, sizeof cmd - len, " '%s'", svg[i]);
    }
    FILE *p = popen(cmd, "r");
    ck_assert_ptr_nonnull(p);
    size_t got = 0, cap = 1 << 16;
    char *buf = malloc(cap);
    for (size_t k; (k = fread(buf + got, 1, cap - got - 1, p)) > 0;)
        if ((got += k) + 1 == cap)
            buf = realloc(buf, cap *= 2);
    buf[got] = '\0';
    ck_assert_msg(pclose(p) == 0, "%s: failed", cmd);
    cJSON *texts = cJSON_Parse(buf);
    ck_assert_msg(cJSON_IsObject(texts), "tests/svg_texts.py gave no object");
    free(buf);
    return texts;
}

/* 1 when text s, as the SVG holds it, is what the log kept of the text drawn:
 * the log keeps the first sizeof e->text - 1 bytes. */
static int same_text(const char *s, const DrawTextEntry *e)
{
    const size_t kept = strlen(e->text);
    return kept == sizeof e->text - 1 ? strncmp(s, e->text, kept) == 0 : strcmp(s, e->text) == 0;
}

/* svg's texts, in order, are entries at .. at + n - 1 of the log, for some
 * at: one picture's texts among those of all pictures drawn (one thread
 * draws them one after the other). Returns n. */
static int texts_in_log(const char *svg, const cJSON *all, const DrawTextLog *log)
{
    const cJSON *texts = cJSON_GetObjectItemCaseSensitive(all, svg);
    ck_assert_msg(cJSON_IsArray(texts), "%s: no texts read", svg);
    const int n = cJSON_GetArraySize(texts);
    int found = 0;
    for (int at = 0; at + n <= log->n && !found; at++) {
        int k = 0;
        const cJSON *t;
        cJSON_ArrayForEach(t, texts)
        {
            if (!same_text(t->valuestring, &log->e[at + k]))
                break;
            k++;
        }
        found = k == n;
    }
    ck_assert_msg(n > 0 && found, "%s: its %d texts are not the texts its PNG drew (first: '%s')", svg, n,
                  n > 0 ? cJSON_GetArrayItem(texts, 0)->valuestring : "");
    return n;
}

/* rsvg-convert's rendering of svg against the PNG png, per colour channel:
 *   - the mean absolute difference at most 2.0 of 255;
 *   - at most 0.1 % of the pixels more than 64 off in some channel;
 *   - no 4 x 4 square of pixels all more than 64 off.
 * Why these: the shapes are the same geometry (a pixel (x, y) is the
 * square [x, x + 1) x [y, y + 1) in both), but text is rasterised by
 * FreeType with its own hinting and antialiasing instead of stb_truetype,
 * and hatching and round line ends are antialiased where the PNG has a
 * pixel staircase: differences at edges, one or two pixels wide (measured
 * on the class-size run: mean 0.15 to 1.1, 0.001 % to 0.06 % of pixels
 * over 64, no square). A shape missing, misplaced or in another colour
 * differs over a solid area, and a map cell is 4 pixels a side or more
 * when it is a <rect>; a text in the wrong place or size leaves its
 * strokes' widths apart. */
static void assert_close_to_png(const char *svg, const char *png)
{
    char rendered[1024], cmd[2200];
    snprintf(rendered, sizeof rendered, "%s.rsvg.png", svg);
    snprintf(cmd, sizeof cmd, "rsvg-convert -o '%s' '%s'", rendered, svg);
    ck_assert_msg(system(cmd) == 0, "%s: rsvg-convert failed", svg);
    int w, h, n, w2, h2;
    unsigned char *a = stbi_load(png, &w, &h, &n, 3), *b = stbi_load(rendered, &w2, &h2, &n, 3);
    ck_assert_msg(a && b, "%s: cannot decode", a ? rendered : png);
    ck_assert_msg(w == w2 && h == h2, "%s: %dx%d, its PNG %dx%d", svg, w2, h2, w, h);
    const size_t N = (size_t)w * h;
    unsigned char *far = calloc(N, 1); /* (h, w) 1: more than 64 off */
    double sum = 0.0;
    size_t n_far = 0;
    for (size_t i = 0; i < N; i++) {
        for (int c = 0; c < 3; c++) {
            const int d = abs(a[3 * i + c] - b[3 * i + c]);
            sum += d;
            far[i] |= d > 64;
        }
        n_far += far[i];
    }
    const double mean = sum / (3.0 * (double)N);
    ck_assert_msg(mean <= 2.0, "%s: mean difference %.3f from its PNG", svg, mean);
    ck_assert_msg(n_far * 1000 <= N, "%s: %.3f %% of pixels far from its PNG", svg, 100.0 * (double)n_far / (double)N);
    int square = -1; /* the first square all far, y * w + x (a plain loop: Check marks every assertion passed) */
    for (int y = 0; y + 4 <= h && square < 0; y++) {
        for (int x = 0; x + 4 <= w && square < 0; x++) {
            int all = 1;
            for (int k = 0; k < 16 && all; k++)
                all = far[(size_t)(y + k / 4) * w + x + k % 4];
            if (all)
                square = y * w + x;
        }
    }
    ck_assert_msg(square < 0, "%s: the 4x4 pixels at (%d, %d) differ from its PNG", svg, square % w, square / w);
    free(far);
    stbi_image_free(a);
    stbi_image_free(b);
    remove(rendered);
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

/* The files named *.ext under folder (and its sub-folders), their paths
 * appended to list (n there already, at most max in all); returns n. */
static int files_under(const char *folder, const char *ext, char **list, int n, int max)
{
    DIR *d = opendir(folder);
    ck_assert_ptr_nonnull(d);
    for (struct dirent *e; (e = readdir(d)) != NULL;) {
        if (e->d_name[0] == '.')
            continue;
        char path[1024];
        snprintf(path, sizeof path, "%s/%s", folder, e->d_name);
        struct stat st;
        ck_assert_int_eq(stat(path, &st), 0);
        const size_t len = strlen(path), el = strlen(ext);
        if (S_ISDIR(st.st_mode)) {
            n = files_under(path, ext, list, n, max);
        } else if (len > el && strcmp(path + len - el, ext) == 0) {
            ck_assert_int_lt(n, max);
            list[n++] = strdup(path);
        }
    }
    closedir(d);
    return n;
}

/* ---------------------------------------------------------- a whole run */

/* The run of sentence's designed layer (4 heads) under the K/V layouts kv
 * (n of them), with --steps, into the folder at, one thread, every text
 * logged into log (may be NULL). */
static void write_run(const char *sentence, const int *kv, int n, const char *at, DrawTextLog *log)
{
    char err[MHAVIZ_ERRLEN] = "";
    InitModel m;
    ck_assert_msg(init_designed(sentence, 4, 0, NULL, &m, err, sizeof err) == MHAVIZ_OK, "%s", err);
    Timing tm;
    timing_begin(&tm, 0);
    Variant v[3];
    for (int i = 0; i < n; i++)
        ck_assert_msg(variant_run(&v[i], &m.in, kv[i], NULL, POOL_ALIGNED, -1, "svg", &tm, err, sizeof err) == MHAVIZ_OK, "%s",
                      err);
    RenderOptions o;
    render_default_options(&o);
    Renderer *r;
    ck_assert_msg(render_open(&r, &o, err, sizeof err) == MHAVIZ_OK, "%s", err);
    OutDir out;
    ck_assert_msg(outdir_begin(&out, at, err, sizeof err) == MHAVIZ_OK, "%s", err);
    const VariantOptions vo = {1, 0, 1, 0, NULL, NULL, 0}; /* --steps, no .npy, 1 layer, no lesson.html */
    draw_text_log(log);
    const int rc = variants_write(v, n, r, &out, &vo, &tm, err, sizeof err);
    draw_text_log(NULL);
    ck_assert_msg(rc == MHAVIZ_OK, "%s", err);
    ck_assert_msg(outdir_commit(&out, err, sizeof err) == MHAVIZ_OK, "%s", err);
    render_close(r);
    for (int i = 0; i < n; i++)
        variant_free(&v[i]);
    init_model_free(&m);
}

/* Every picture of the run, with --svg: its SVG beside it, well-formed,
 * with the texts its PNG drew, rendering like it; and the PNGs the same
 * bytes as a run without --svg. */
static void check_run(const char *test, const char *sentence, const int *kv, int n)
{
    if (!tools_here(test))
        return;
#ifdef _OPENMP
    omp_set_num_threads(1); /* the log records the calling thread's texts */
#endif
    char *dir = scratch("svg"), with[1024], without[1024];
    snprintf(with, sizeof with, "%s/with", dir);
    snprintf(without, sizeof without, "%s/without", dir);
    DrawTextLog log = {0};
    draw_svg_record(1);
    write_run(sentence, kv, n, with, &log);
    draw_svg_record(0);
    write_run(sentence, kv, n, without, NULL);

    char *png[64], *svg[64], *plain[64];
    const int n_png = files_under(with, ".png", png, 0, 64), n_svg = files_under(with, ".svg", svg, 0, 64);
    ck_assert_int_gt(n_png, 10);
    ck_assert_int_eq(n_svg, n_png);
    ck_assert_int_eq(files_under(without, ".svg", plain, 0, 64), 0);
    ck_assert_int_eq(files_under(without, ".png", plain, 0, 64), n_png);
    qsort(png, (size_t)n_png, sizeof *png, by_name);
    qsort(plain, (size_t)n_png, sizeof *plain, by_name);
    cJSON *all = svg_texts(svg, n_svg);
    int texts = 0;
    for (int i = 0; i < n_png; i++) {
        char *beside = outdir_svg_beside(png[i]);
        struct stat st;
        ck_assert_msg(stat(beside, &st) == 0, "%s: no SVG beside it", png[i]);
        assert_well_formed(beside);
        texts += texts_in_log(beside, all, &log);
        assert_close_to_png(beside, png[i]);
        ck_assert_msg(strncmp(plain[i], without, strlen(without)) == 0 &&
                          strcmp(plain[i] + strlen(without), png[i] + strlen(with)) == 0,
                      "%s and %s: not the same picture", plain[i], png[i]);
        ck_assert_msg(files_same(png[i], plain[i]), "%s: other bytes than without --svg", png[i]);
        free(beside);
        free(png[i]), free(svg[i]), free(plain[i]);
    }
    ck_assert_msg(texts == log.n, "the SVGs hold %d texts, the PNGs drew %d", texts, log.n);
    cJSON_Delete(all);
    free(log.e);
    remove_tree(dir);
    free(dir);
}

/* The designed 11-token lesson sentence, as MHA, GQA-2 and MQA (variants.png, kv_cache.png at the top). */
START_TEST(every_picture_of_a_lesson_run)
{
    static const int kv[3] = {4, 2, 1};
    check_run("every_picture_of_a_lesson_run", "Mary gave the book to John because John had helped Mary", kv, 3);
}
END_TEST

/* 45 tokens with names that come back and punctuation: maps of 45 x 45 <rect>s. */
START_TEST(every_picture_of_a_class_run)
{
    static const int kv[2] = {4, 1};
    check_run("every_picture_of_a_class_run",
              "Mary gave the old book to John because John had helped Mary move . Then John thanked Mary , and "
              "Mary smiled at John . Later Tom asked John where Mary was , and John said that Mary went home "
              "with Tom and Sue .",
              kv, 2);
}
END_TEST

/* ------------------------------------------------------ a map's size */

/* Bytes of the file at path, and how often needle occurs in it. */
static size_t count_in(const char *path, const char *needle, int *n)
{
    size_t len;
    char *s = slurp(path, &len);
    *n = 0;
    for (const char *p = strstr(s, needle); p; p = strstr(p + 1, needle))
        (*n)++;
    free(s);
    return len;
}

/* A 45-token map is one <rect> per cell at most (cells of one colour
 * merged), a 150-token map (cells of 5 px, too many) one PNG <image>: an
 * SVG of reasonable size either way, rendering like the PNG. */
START_TEST(maps_are_rects_or_one_image)
{
    if (!tools_here("maps_are_rects_or_one_image"))
        return;
    draw_svg_record(1);
    char err[MHAVIZ_ERRLEN], *dir = scratch("svg-maps");
    RenderOptions o;
    render_default_options(&o);
    Renderer *r;
    ck_assert_msg(render_open(&r, &o, err, sizeof err) == MHAVIZ_OK, "%s", err);
    static const int sizes[2] = {45, 150};
    for (int k = 0; k < 2; k++) {
        const int T = sizes[k];
        char sentence[2048] = "", png[1024];
        for (int t = 0; t < T; t++)
            snprintf(sentence + strlen(sentence), sizeof sentence - strlen(sentence), "w%d ", t);
        InitModel m;
        const InitOptions io = {sentence, 16, 2, 0, 7, 0};
        ck_assert_msg(init_model(&io, &m, err, sizeof err) == MHAVIZ_OK, "%s", err);
        Timing tm;
        timing_begin(&tm, 0);
        Variant v;
        ck_assert_msg(variant_run(&v, &m.in, 2, NULL, POOL_ALIGNED, -1, "svg", &tm, err, sizeof err) == MHAVIZ_OK, "%s", err);
        /* the run's memory estimate counts the documents: at least the map's
         * <rect>s (64 bytes a cell) or its <image> (4 bytes a pixel) more */
        size_t with, without;
        double pictures;
        const int kv = 2;
        ck_assert_int_eq(run_memory(r, &m.in, &kv, 1, 0, 1, 1, 0, &with, &pictures), MHAVIZ_OK);
        draw_svg_record(0);
        ck_assert_int_eq(run_memory(r, &m.in, &kv, 1, 0, 1, 1, 0, &without, &pictures), MHAVIZ_OK);
        draw_svg_record(1);
        ck_assert_uint_ge(with, without + (T == 45 ? 64 * 45 * 45 : 4 * 750 * 750));
        snprintf(png, sizeof png, "%s/head_%d.png", dir, T);
        ck_assert_msg(render_heatmap(r, png, v.multi.att, T, m.in.tokens, m.in.cfg.causal, "head 0", err,
                                     sizeof err) == MHAVIZ_OK,
                      "%s", err);
        char *svg = outdir_svg_beside(png);
        int rects, images;
        const size_t bytes = count_in(svg, "<rect ", &rects);
        count_in(svg, "<image ", &images);
        if (T == 45) { /* the cells, the colour bar's stripes (at most one each of its 256 colours), frames */
            ck_assert_int_eq(images, 0);
            ck_assert_int_le(rects, 45 * 45 + 256 + 16);
            ck_assert_uint_lt(bytes, 300 << 10);
        } else {
            ck_assert_int_eq(images, 1);
            ck_assert_int_le(rects, 256 + 16);
            ck_assert_uint_lt(bytes, 1 << 20);
        }
        assert_well_formed(svg);
        assert_close_to_png(svg, png);
        free(svg);
        variant_free(&v);
        init_model_free(&m);
    }
    render_close(r);
    draw_svg_record(0);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* ------------------------------------------------------- the primitives */

/* Each primitive, on a canvas that records SVG when svg is 1. */
static void scene(DrawCanvas *c, const DrawFont *f, const char *text)
{
    static const DrawRgb blue = {0, 114, 178}, orange = {230, 159, 0}, grey = {222, 222, 222}, dark = {168, 168, 168};
    draw_fill_rect(c, 10, 10, 60, 40, blue);
    draw_stroke_rect(c, 80, 10, 60, 40, DRAW_INK);
    draw_frame(c, 160, 14, 50, 32, 3, DRAW_FRAME);
    draw_fill_hatched(c, 230, 10, 90, 40, 230, 10, grey, dark);
    draw_fill_hatched(c, 330, 13, 50, 37, 0, 0, grey, orange);
    draw_line(c, 10.5f, 70.5f, 380.5f, 120.5f, 3.0f, orange);
    draw_line(c, 20.0f, 130.0f, 20.0f, 130.0f, 6.0f, blue); /* a dot */
    for (int along = 0; along < 3; along++)
        for (int across = 0; across < 3; across++)
            ck_assert_int_eq(draw_text(c, f, text, 18.0f, 60 + 130 * along, 160 + 40 * across, along, across, DRAW_INK, 0),
                             MHAVIZ_OK);
    ck_assert_int_eq(draw_text(c, f, "turned up", 22.0f, 420, 200, DRAW_MID, DRAW_BOTTOM, blue, 1), MHAVIZ_OK);
    ck_assert_int_eq(draw_text(c, f, "0.25", 40.0f, 470, 20, DRAW_END, DRAW_TOP, orange, 1), MHAVIZ_OK);
}

/* Each primitive's element where its pixels are; text escaped for XML: &
 * < > " as entities, a control character and a malformed byte as U+FFFD
 * (what the PNG draws for them); the PNG's bytes the same without SVG. */
START_TEST(primitives_become_their_elements)
{
    if (!tools_here("primitives_become_their_elements"))
        return;
    char err[MHAVIZ_ERRLEN], *dir = scratch("svg-draw"), png[1024], plain[1024];
    snprintf(png, sizeof png, "%s/scene.png", dir);
    snprintf(plain, sizeof plain, "%s/plain.png", dir);
    DrawFont *f;
    ck_assert_msg(draw_font_open(&f, NULL, err, sizeof err) == MHAVIZ_OK, "%s", err);
    static const char text[] = "a&b <c> \"d\" \x01\xff caf\xc3\xa9";
    DrawCanvas *without = draw_canvas_new(480, 300);
    ck_assert_ptr_null(without->svg);
    draw_svg_record(1);
    DrawCanvas *c = draw_canvas_new(480, 300);
    draw_svg_record(0);
    ck_assert_ptr_nonnull(c->svg);
    DrawTextLog log = {0};
    draw_text_log(&log);
    scene(c, f, text);
    draw_text_log(NULL);
    scene(without, f, text);
    ck_assert_int_eq(draw_write_png(c, png, err, sizeof err), MHAVIZ_OK);
    ck_assert_int_eq(draw_write_png(without, plain, err, sizeof err), MHAVIZ_OK);
    ck_assert(files_same(png, plain));
    char *svg = outdir_svg_beside(png);
    assert_well_formed(svg);
    cJSON *all = svg_texts(&svg, 1);
    const cJSON *texts = cJSON_GetObjectItemCaseSensitive(all, svg);
    ck_assert_int_eq(cJSON_GetArraySize(texts), log.n);
    ck_assert_int_eq(log.n, 11);
    /* U+0001 and the byte 0xff: no glyph, drawn as U+FFFD */
    ck_assert_str_eq(cJSON_GetArrayItem(texts, 0)->valuestring, "a&b <c> \"d\" \xef\xbf\xbd\xef\xbf\xbd caf\xc3\xa9");
    ck_assert_str_eq(cJSON_GetArrayItem(texts, 9)->valuestring, "turned up");
    cJSON_Delete(all);
    assert_close_to_png(svg, png);
    /* the canvas begins a new document when reset */
    ck_assert_int_eq(draw_canvas_reset(c, 20, 20), MHAVIZ_OK);
    ck_assert_int_eq(draw_write_png(c, png, err, sizeof err), MHAVIZ_OK);
    int n;
    count_in(svg, "<text", &n);
    ck_assert_int_eq(n, 0);
    assert_well_formed(svg);
    free(svg);
    free(log.e);
    draw_canvas_free(c);
    draw_canvas_free(without);
    draw_font_close(f);
    remove_tree(dir);
    free(dir);
}
END_TEST

/* outdir_svg_beside: the one rule for the SVG's name. */
START_TEST(the_svg_is_named_after_its_png)
{
    static const char *const cases[][2] = {
        {"out/head_00.png", "out/head_00.svg"}, {"kv2/query_07.png", "kv2/query_07.svg"}, {"picture", "picture.svg"},
        {".png", ".svg"},
    };
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        char *s = outdir_svg_beside(cases[k][0]);
        ck_assert_str_eq(s, cases[k][1]);
        free(s);
    }
}
END_TEST

Suite *svg_suite(void)
{
    Suite *s = suite_create("svg");
    TCase *tc = tcase_create("svg");
    tcase_set_timeout(tc, 240);
    tcase_add_test(tc, the_svg_is_named_after_its_png);
    tcase_add_test(tc, primitives_become_their_elements);
    tcase_add_test(tc, maps_are_rects_or_one_image);
    tcase_add_test(tc, every_picture_of_a_lesson_run);
    tcase_add_test(tc, every_picture_of_a_class_run);
    suite_add_tcase(s, tc);
    return s;
}
