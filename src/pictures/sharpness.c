/* sharpness.c — sharpness.png: how sharp each query's attention is,
 * in every head and in the single wide head, as lines on one slide.
 *
 * For each query token i (x axis, labelled with the tokens) and each map,
 * the normalised entropy of row i (measures_row_entropy_norm): 0 = all of
 * the attention on one key, 1 = spread evenly over the keys query i may
 * see. A row with one visible key has none: the line has a gap there (no
 * point is drawn at 0). One line per head in a colour of its own (more
 * than RENDER_SHARPNESS_COLOURS heads: thin grey lines), the wide head's
 * line in ink and bold, a legend on the right. The class sees where the
 * wide head is blurrier than the heads, and where it is not.
 * A render job draws it: render_draw_sharpness (render.h).
 *
 * Left to right: the y axis caption, its ticks, the plot, the legend; top
 * to bottom: title, subtitle, the plot, the query tokens (turned), the x
 * axis caption. Sizes follow the picture's height (1080 px: a 44 px
 * title, 28 px token labels and ticks, a 30 px legend). */
#include "pictures/render_parts.h"
#include "core/measures.h"
#include "core/status.h"
#include "pictures/render.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RENDER_SHARPNESS_COLOURS DRAW_N_COLOURS /* heads drawn in colours of their own, at most */

/* The heads' colours are draw_colour's, as on the pull slide; the wide
 * head is drawn in ink, bold. */
static const DrawRgb MANY_HEADS = {160, 160, 160}; /* every head, past RENDER_SHARPNESS_COLOURS */
static const DrawRgb GRID = {222, 222, 222};        /* the lines at 0, 0.25, ..., 1 */

#define Y_CAPTION "normalised entropy: 0 = one key, 1 = spread evenly"
#define X_CAPTION "query token"
#define NO_POINT "no point: the query sees one key"

typedef struct {
    RenderSharpnessLayout pub;
    float s;                        /* scale: h / SLIDE_H */
    float title_px, sub_px, tick_px, label_px, cap_px, legend_px;
    int m, tick_w, label_w, legend_x, legend_dy, swatch_w;
    int n_heads;                    /* maps before the wide head's */
} Layout;

/* The legend's text for line k (0..n_legend-1) into buf: one line per head
 * while they have colours, else one for all of them; then the wide head. */
static int legend_lines(const Layout *L) { return L->n_heads <= RENDER_SHARPNESS_COLOURS ? L->n_heads + 1 : 2; }

static void legend_text(const Layout *L, char *const *legend, int k, char *buf, size_t len)
{
    const int wide = k == legend_lines(L) - 1;
    const int p = wide ? L->n_heads : k; /* the map this line names */
    if (!wide && L->n_heads > RENDER_SHARPNESS_COLOURS)
        snprintf(buf, len, "heads 0 to %d (grey)", L->n_heads - 1);
    else if (legend && legend[p])
        snprintf(buf, len, "%s", legend[p]);
    else
        snprintf(buf, len, "map %d", p);
}

static void layout(const DrawFont *font, int w, int h, int n_maps, int T, char *const *tokens, char *const *legend,
                   const char *subtitle, Layout *L)
{
    memset(L, 0, sizeof *L);
    const float s = (float)h / (float)SLIDE_H;
    L->s = s;
    L->n_heads = n_maps - 1;
    L->m = (int)(32.0f * s);
    L->title_px = clampf(44.0f * s, 14.0f, 88.0f);
    L->sub_px = L->cap_px = L->legend_px = clampf(30.0f * s, 11.0f, 60.0f);
    L->tick_px = L->label_px = clampf(28.0f * s, 10.0f, 56.0f);
    L->swatch_w = (int)(64.0f * s);
    L->tick_w = (int)ceilf(draw_text_width(font, "0.75", L->tick_px));

    /* The legend: as wide as its longest line, at most a third of the picture. */
    float lw = 0.0f;
    for (int k = 0; k < legend_lines(L); k++) {
        char line[RENDER_LABEL_BYTES * 2];
        legend_text(L, legend, k, line, sizeof line);
        lw = fmaxf(lw, draw_text_width(font, line, L->legend_px));
    }
    int legend_w = L->swatch_w + (int)(14.0f * s) + (int)ceilf(fminf(lw, (float)w / 3.0f));
    const int note_w = (int)ceilf(draw_text_width(font, NO_POINT, 0.85f * L->legend_px)); /* under the lines */
    if (legend_w < note_w)
        legend_w = note_w;
    L->legend_dy = (int)draw_line_height(L->legend_px) + (int)(8.0f * s);
    L->legend_x = w - L->m - legend_w;

    /* The plot: what is left; the token labels under it as wide as the
     * longest labelled one (cut at 8 lines' width). */
    RenderSharpnessLayout *P = &L->pub;
    P->plot_x = L->m + (int)draw_line_height(L->cap_px) + (int)(10.0f * s) + L->tick_w + (int)(14.0f * s);
    P->plot_w = L->legend_x - (int)(48.0f * s) - P->plot_x;
    if (P->plot_w < T)
        P->plot_w = T; /* at least a pixel a token; clipped at the edge if the picture is that small */
    P->pitch = (float)P->plot_w / (float)T;
    P->label_step = render_label_step(P->pitch, 1.1f * L->label_px);
    float widest = 0.0f;
    for (int t = 0; t < T; t++) {
        if (!is_labelled_axis(t, T, P->label_step))
            continue;
        char label[RENDER_LABEL_BYTES];
        render_token_label(font, tokens[t], L->label_px, 8.0f * L->label_px, label);
        widest = fmaxf(widest, draw_text_width(font, label, L->label_px));
    }
    L->label_w = (int)ceilf(widest);
    P->plot_y = L->m + (int)draw_line_height(L->title_px) + (subtitle && subtitle[0] ? (int)draw_line_height(L->sub_px) : 0) +
                (int)(30.0f * s);
    P->plot_h = h - L->m - (int)draw_line_height(L->cap_px) - (int)(18.0f * s) - L->label_w - P->plot_y;
    if (P->plot_h < 10)
        P->plot_h = 10;
    P->head_px = fmaxf(3.0f * s, 1.5f);
    P->wide_px = fmaxf(8.0f * s, 3.0f);
}

/* The layout of a w x h sharpness.png for n_maps maps of T tokens whose
 * legend lines are legend[p] (NULL: "map p"), under subtitle (NULL: none).
 * Returns MHAVIZ_OK. */
static int render_sharpness_layout_at(const DrawFont *font, int w, int h, int n_maps, int T, char *const *tokens,
                               char *const *legend, const char *subtitle, RenderSharpnessLayout *out)
{
    Layout L;
    layout(font, w, h, n_maps, T, tokens, legend, subtitle, &L);
    *out = L.pub;
    return MHAVIZ_OK;
}

/* Map p's line: a segment between neighbouring queries that both have a
 * value, a dot on every value (so a value without neighbours shows too;
 * dots only while the tokens are 12 px apart or more, or alone). */
static void draw_series(DrawCanvas *c, const RenderSharpnessLayout *P, const double *v, int T, float thick, DrawRgb col)
{
    const float bottom = (float)(P->plot_y + P->plot_h);
    for (int i = 0; i < T; i++) {
        if (isnan(v[i]))
            continue;
        const float x = (float)P->plot_x + ((float)i + 0.5f) * P->pitch;
        const float y = bottom - (float)v[i] * (float)P->plot_h;
        const int prev = i > 0 && !isnan(v[i - 1]), next = i + 1 < T && !isnan(v[i + 1]);
        if (prev)
            draw_line(c, x - P->pitch, bottom - (float)v[i - 1] * (float)P->plot_h, x, y, thick, col);
        if (P->pitch >= 12.0f || (!prev && !next))
            draw_line(c, x, y, x, y, 2.6f * thick > 8.0f ? 2.6f * thick : 8.0f, col);
    }
}

/* Draw sharpness.png on c (w x h) and write it to png_path: maps (n_maps)
 * pointers to (T, T) softmax maps, the last the single wide head's; title
 * and subtitle (NULL: none) on top. Returns MHAVIZ_OK, MHAVIZ_EIO (err
 * names the file) or MHAVIZ_ENOMEM.
 * Long on purpose: the picture drawn in one pass, top to bottom. */
static int render_sharpness_draw(DrawCanvas *c, const DrawFont *font, int w, int h, const char *png_path,
                          const float *const *maps, int n_maps, int T, char *const *tokens, int causal,
                          const char *title, const char *subtitle, char *const *legend, char *err, size_t errlen)
{
    Layout L;
    layout(font, w, h, n_maps, T, tokens, legend, subtitle, &L);
    const RenderSharpnessLayout *P = &L.pub;
    const float s = L.s;
    const int m = L.m, bottom = P->plot_y + P->plot_h, right = P->plot_x + P->plot_w;
    double *v = malloc((size_t)n_maps * T * sizeof *v); /* (n_maps, T) each row's normalised entropy */
    if (!v || draw_canvas_reset(c, w, h) != MHAVIZ_OK)
        goto oom;
    int any = 0, gaps = 0; /* a row with a value; a row without */
    for (int p = 0; p < n_maps; p++) {
        measures_row_entropy_norm(maps[p], T, causal, v + (size_t)p * T);
        for (int i = 0; i < T; i++) {
            any |= !isnan(v[(size_t)p * T + i]);
            gaps |= isnan(v[(size_t)p * T + i]);
        }
    }

    /* Title and subtitle. */
    char line[RENDER_LABEL_BYTES * 2];
    snprintf(line, sizeof line, "%s", title ? title : "");
    draw_ellipsize(font, line, sizeof line, L.title_px, (float)(w - 2 * m));
    if (draw_text(c, font, line, L.title_px, w / 2, m, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;
    snprintf(line, sizeof line, "%s", subtitle ? subtitle : "");
    draw_ellipsize(font, line, sizeof line, L.sub_px, (float)(w - 2 * m));
    if (draw_text(c, font, line, L.sub_px, w / 2, m + (int)draw_line_height(L.title_px), DRAW_MID, DRAW_TOP,
                  DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;

    /* The axes: grid lines and ticks at 0, 0.25, ..., 1, the captions. */
    static const char *const ticks[5] = {"0", "0.25", "0.5", "0.75", "1"};
    for (int k = 0; k < 5; k++) {
        const int y = bottom - (int)lroundf((float)k / 4.0f * (float)P->plot_h);
        draw_fill_rect(c, P->plot_x, y, P->plot_w, 1, GRID);
        draw_fill_rect(c, P->plot_x - (int)(8.0f * s), y, (int)(8.0f * s), 2, DRAW_INK);
        if (draw_text(c, font, ticks[k], L.tick_px, P->plot_x - (int)(14.0f * s), y, DRAW_END, DRAW_MID, DRAW_INK, 0) !=
            MHAVIZ_OK)
            goto oom;
    }
    draw_fill_rect(c, P->plot_x - 2, P->plot_y, 2, P->plot_h + 2, DRAW_INK);
    draw_fill_rect(c, P->plot_x - 2, bottom, P->plot_w + 2, 2, DRAW_INK);
    if (draw_text(c, font, Y_CAPTION, L.cap_px, m, P->plot_y + P->plot_h / 2, DRAW_MID, DRAW_TOP, DRAW_INK, 1) !=
        MHAVIZ_OK)
        goto oom;
    const int label_top = bottom + (int)(10.0f * s);
    for (int t = 0; t < T; t++) {
        if (!is_labelled_axis(t, T, P->label_step))
            continue;
        char label[RENDER_LABEL_BYTES];
        render_token_label(font, tokens[t], L.label_px, 8.0f * L.label_px, label);
        const int x = P->plot_x + (int)(((float)t + 0.5f) * P->pitch);
        if (draw_text(c, font, label, L.label_px, x, label_top, DRAW_END, DRAW_MID, DRAW_INK, 1) != MHAVIZ_OK)
            goto oom;
    }
    if (draw_text(c, font, X_CAPTION, L.cap_px, P->plot_x + P->plot_w / 2, label_top + L.label_w + (int)(8.0f * s),
                  DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;

    /* The lines: the wide head's bold one first, so that a head's line on
     * top of it still shows. */
    const int coloured = L.n_heads <= RENDER_SHARPNESS_COLOURS;
    for (int k = 0; k < n_maps; k++) {
        const int p = (k + n_maps - 1) % n_maps; /* n_maps - 1, then 0, 1, ... */
        const int wide = p == n_maps - 1;
        const DrawRgb col = wide ? DRAW_INK : coloured ? draw_colour(p) : MANY_HEADS;
        draw_series(c, P, v + (size_t)p * T, T, wide ? P->wide_px : P->head_px, col);
    }
    if (!any && draw_text(c, font, "no query sees more than one key: nothing to spread", L.legend_px,
                          (P->plot_x + right) / 2, P->plot_y + P->plot_h / 2, DRAW_MID, DRAW_MID, DRAW_INK, 0) !=
                    MHAVIZ_OK)
        goto oom;

    /* The legend, level with the plot's top, and why a line has a gap. */
    const int n_lines = legend_lines(&L);
    if (any && gaps &&
        draw_text(c, font, NO_POINT, 0.85f * L.legend_px, L.legend_x, P->plot_y + n_lines * L.legend_dy + L.legend_dy / 2,
                  DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
        goto oom;
    for (int k = 0; k < n_lines; k++) {
        const int wide = k == n_lines - 1;
        const DrawRgb col = wide ? DRAW_INK : coloured ? draw_colour(k) : MANY_HEADS;
        const int y = P->plot_y + L.legend_dy / 2 + k * L.legend_dy;
        draw_line(c, (float)L.legend_x, (float)y + 0.5f, (float)(L.legend_x + L.swatch_w), (float)y + 0.5f,
                  wide ? P->wide_px : P->head_px, col);
        legend_text(&L, legend, k, line, sizeof line);
        draw_ellipsize(font, line, sizeof line, L.legend_px, (float)(w - m - L.legend_x - L.swatch_w) - 14.0f * s);
        if (draw_text(c, font, line, L.legend_px, L.legend_x + L.swatch_w + (int)(14.0f * s), y, DRAW_START, DRAW_MID,
                      DRAW_INK, 0) != MHAVIZ_OK)
            goto oom;
    }

    free(v);
    return draw_write_png(c, png_path, err, errlen);

oom:
    free(v);
    return draw_nomem(err, errlen, png_path);
}

int render_sharpness_layout(Renderer *r, int n_maps, int T, char *const *tokens, char *const *legend,
                            const char *subtitle, RenderSharpnessLayout *out)
{
    return render_sharpness_layout_at(r->font, r->opt.overview_w, r->opt.overview_h, n_maps, T, tokens, legend,
                                      subtitle, out);
}

int render_draw_sharpness(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                          char *err, size_t errlen)
{
    return render_sharpness_draw(c, r->font, r->opt.overview_w, r->opt.overview_h, j->path, j->maps, j->n_maps, T,
                                 tokens, causal, j->title, j->subtitle, j->panel_titles, err, errlen);
}
