/* sharpness.c — sharpness.png: each query's effective number of keys in
 * every head and in the single wide head, as lines on one slide.
 *
 * For each query token i (x axis, labelled with the tokens, labels.h) and
 * each map, the effective number of keys of row i, 2^H_i with H_i its
 * entropy in bits: 1 = all on one key, 2 = an even split of two keys, k =
 * as spread as an even split of k; it reads the same whatever the row's
 * length (the normalised entropy H_i / log2 n_i puts a 50/50 split at 0.5
 * for 4 keys and 0.33 for 8). One line per head in a colour of its own
 * (more than RENDER_SHARPNESS_COLOURS heads: thin grey lines), heads with
 * one value drawn side by side, the wide head's line in ink and bold, a
 * legend on the right. The class sees where the wide head is blurrier than
 * the heads, and where it is not. A render job draws it from each row's
 * normalised entropy, measured once in the layer's summary
 * (core/layer_summary.h): render_draw_sharpness (render.h).
 *
 * Left to right: the y axis caption, its ticks, the plot, the legend; top
 * to bottom: title, subtitle, the plot, the query tokens (turned), the x
 * axis caption. Sizes follow the picture's height (1080 px: a 44 px
 * title, 28 px token labels at most and ticks, a 30 px legend). */
#include "pictures/render_parts.h"
#include "core/status.h"
#include "pictures/labels.h"
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

#define Y_CAPTION "effective keys, 2^entropy: 1 = one key, 2 = an even split of two"
#define X_CAPTION "query token"
/* Under the legend: what the heads' lines being moved apart means. */
static const char *const SHIFTED[] = {
    "Each head's line is moved a few pixels",
    "(head 0 highest), so that heads with the",
    "same value lie side by side, not hidden.",
    "Read a value on the axis; the wide",
    "head's line is not moved.",
};
#define N_SHIFTED (int)(sizeof SHIFTED / sizeof SHIFTED[0])

typedef struct {
    RenderSharpnessLayout pub;
    float s;                        /* scale: h / SLIDE_H */
    float title_px, sub_px, tick_px, label_px, cap_px, legend_px;
    int m, tick_w, label_w, legend_x, legend_dy, swatch_w;
    int n_heads;                    /* maps before the wide head's */
    unsigned char *shown;           /* (T) 0: no label, else 1 + its level (labels.h) */
    float *centre;                  /* (T) each label's centre, pixels from plot_x */
    float level0_w;                 /* the widest label of the first level */
} Layout;

/* The legend's lines: one per head while they have colours, else one for
 * all of them; then the wide head. */
static int legend_lines(const Layout *L) { return L->n_heads <= RENDER_SHARPNESS_COLOURS ? L->n_heads + 1 : 2; }

/* The legend's text for line k (0..legend_lines - 1) into buf. */
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

/* Each row's effective number of keys, v (n_maps, T), from rows (n_maps,
 * T) its normalised entropy: 2^H_i, H_i = the normalised entropy times
 * log2 n_i; 1 for a row with one key (NAN). Returns the largest. */
static double effective_keys(const double *rows, int n_maps, int T, int causal, double *v)
{
    double most = 1.0;
    for (int p = 0; p < n_maps; p++) {
        const double *e_p = rows + (size_t)p * T; /* (T) */
        double *v_p = v + (size_t)p * T;          /* (T) */
        for (int i = 0; i < T; i++) {
            const int n_i = mha_visible_keys(causal, i, T);
            v_p[i] = isnan(e_p[i]) ? 1.0 : pow(2.0, e_p[i] * log2((double)n_i));
            most = fmax(most, v_p[i]);
        }
    }
    return most;
}

/* The y axis's tick step for an axis of 1 to keys_max keys: 1, 2, 5, 10, ... */
static int key_step(int keys_max)
{
    int step = 1;
    for (int mag = 1; (keys_max - 1) / step > 8; mag *= 10)
        for (int k = 0; k < 3 && (keys_max - 1) / step > 8; k++)
            step = (int[]){1, 2, 5}[k] * mag;
    return step;
}

/* Lay out for the largest effective number of keys `most`; L->shown and
 * L->centre (T) are the caller's. */
static void layout(const DrawFont *font, int w, int h, int n_maps, int T, char *const *tokens, char *const *legend,
                   const char *subtitle, double most, Layout *L)
{
    unsigned char *shown = L->shown;
    float *centre = L->centre;
    memset(L, 0, sizeof *L);
    L->shown = shown, L->centre = centre;
    const float s = (float)h / (float)SLIDE_H;
    L->s = s;
    L->n_heads = n_maps - 1;
    L->m = (int)(32.0f * s);
    L->title_px = clampf(44.0f * s, 14.0f, 88.0f);
    L->sub_px = L->cap_px = L->legend_px = clampf(30.0f * s, 11.0f, 60.0f);
    L->tick_px = L->label_px = clampf(28.0f * s, 10.0f, 56.0f);
    L->swatch_w = (int)(64.0f * s);
    L->tick_w = (int)ceilf(draw_text_width(font, "888", L->tick_px));

    /* The legend: as wide as its longest line, at most a third of the picture. */
    float lw = 0.0f;
    for (int k = 0; k < legend_lines(L); k++) {
        char line[RENDER_LABEL_BYTES * 2];
        legend_text(L, legend, k, line, sizeof line);
        lw = fmaxf(lw, draw_text_width(font, line, L->legend_px));
    }
    int legend_w = L->swatch_w + (int)(14.0f * s) + (int)ceilf(fminf(lw, (float)w / 3.0f));
    for (int k = 0; k < N_SHIFTED; k++) { /* under the lines */
        const int note_w = (int)ceilf(draw_text_width(font, SHIFTED[k], 0.85f * L->legend_px));
        if (legend_w < note_w)
            legend_w = note_w;
    }
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
    const LabelsPlan lp = labels_plan(T, tokens, -1, P->pitch, L->label_px, 2, shown, centre);
    P->label_step = lp.step;
    P->label_levels = lp.levels;
    P->label_px = lp.px;
    P->labelled = lp.n;
    float widest[2] = {0.0f, 0.0f};
    for (int t = 0; t < T; t++) {
        if (!shown[t])
            continue;
        char label[RENDER_LABEL_BYTES];
        render_token_label(font, tokens[t], lp.px, 8.0f * lp.px, label);
        widest[shown[t] - 1] = fmaxf(widest[shown[t] - 1], draw_text_width(font, label, lp.px));
    }
    L->level0_w = widest[0];
    L->label_w = (int)ceilf(lp.levels == 2 ? widest[0] + 8.0f * s + widest[1] : widest[0]);
    P->plot_y = L->m + (int)draw_line_height(L->title_px) + (subtitle && subtitle[0] ? (int)draw_line_height(L->sub_px) : 0) +
                (int)(30.0f * s);
    P->plot_h = h - L->m - (int)draw_line_height(L->cap_px) - (int)(18.0f * s) - L->label_w - P->plot_y;
    if (P->plot_h < 10)
        P->plot_h = 10;
    P->head_px = fmaxf(3.0f * s, 1.5f);
    P->wide_px = fmaxf(8.0f * s, 3.0f);
    P->keys_max = (int)ceil(most - 1e-9) < 2 ? 2 : (int)ceil(most - 1e-9);
    P->lift = (int)(14.0f * s) + (int)ceilf(P->head_px);
    P->head_gap = 1.4f * P->head_px;
}

/* The y of v keys. */
static float y_of(const RenderSharpnessLayout *P, double v)
{
    return (float)P->plot_y + (float)((P->keys_max - v) / (P->keys_max - 1)) * (float)(P->plot_h - P->lift);
}

/* The layout of a w x h sharpness.png for rows (n_maps, T) of T tokens whose
 * legend lines are legend[p] (NULL: "map p"), under subtitle (NULL: none).
 * Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int render_sharpness_layout_at(const DrawFont *font, int w, int h, const double *rows, int n_maps, int T,
                               char *const *tokens, int causal, char *const *legend, const char *subtitle,
                               RenderSharpnessLayout *out)
{
    Layout L;
    L.shown = malloc((size_t)T);
    L.centre = malloc((size_t)T * sizeof *L.centre);
    double *v = malloc((size_t)n_maps * T * sizeof *v);
    int rc = MHAVIZ_ENOMEM;
    if (L.shown && L.centre && v) {
        layout(font, w, h, n_maps, T, tokens, legend, subtitle, effective_keys(rows, n_maps, T, causal, v), &L);
        *out = L.pub;
        rc = MHAVIZ_OK;
    }
    free(L.shown), free(L.centre), free(v);
    return rc;
}

/* Map p's line, shift pixels below its values: a segment between
 * neighbouring queries, a dot on every value while the tokens are 12 px
 * apart or more (or the line has one point). */
static void draw_series(DrawCanvas *c, const RenderSharpnessLayout *P, const double *v, int T, float shift, float thick,
                        DrawRgb col)
{
    for (int i = 0; i < T; i++) {
        const float x = (float)P->plot_x + ((float)i + 0.5f) * P->pitch;
        const float y = y_of(P, v[i]) + shift;
        if (i > 0)
            draw_line(c, x - P->pitch, y_of(P, v[i - 1]) + shift, x, y, thick, col);
        if (P->pitch >= 12.0f || T == 1)
            draw_line(c, x, y, x, y, 2.6f * thick > 8.0f ? 2.6f * thick : 8.0f, col);
    }
}

/* The axes on c: grid lines and ticks at whole numbers of keys, the axis lines, the captions and the
 * query tokens (T, the ones L shows) turned under the axis.  MHAVIZ_ENOMEM when text cannot be drawn. */
static int sharpness_axes(DrawCanvas *c, const DrawFont *font, const Layout *L, int T, char *const *tokens)
{
    const RenderSharpnessLayout *P = &L->pub;
    const float s = L->s;
    const int m = L->m, bottom = P->plot_y + P->plot_h;
    const int step = key_step(P->keys_max);
    for (int k = 1; k <= P->keys_max; k += k == 1 && step > 1 ? step - 1 : step) {
        const int y = (int)lroundf(y_of(P, k));
        char tick[16];
        snprintf(tick, sizeof tick, "%d", k);
        draw_fill_rect(c, P->plot_x, y, P->plot_w, 1, GRID);
        draw_fill_rect(c, P->plot_x - (int)(8.0f * s), y, (int)(8.0f * s), 2, DRAW_INK);
        if (draw_text(c, font, tick, L->tick_px, P->plot_x - (int)(14.0f * s), y, DRAW_END, DRAW_MID, DRAW_INK, 0) !=
            MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    draw_fill_rect(c, P->plot_x - 2, P->plot_y, 2, P->plot_h + 2, DRAW_INK);
    draw_fill_rect(c, P->plot_x - 2, bottom, P->plot_w + 2, 2, DRAW_INK);
    if (draw_text(c, font, Y_CAPTION, L->cap_px, m, P->plot_y + P->plot_h / 2, DRAW_MID, DRAW_TOP, DRAW_INK, 1) !=
        MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    /* The query tokens, turned, under the axis: the second level of
     * staggered labels beyond the first, a thin tick leading up to it. */
    const int label_top = bottom + (int)(10.0f * s);
    for (int t = 0; t < T; t++) {
        if (!L->shown[t])
            continue;
        char label[RENDER_LABEL_BYTES];
        render_token_label(font, tokens[t], P->label_px, 8.0f * P->label_px, label);
        const int x = P->plot_x + (int)L->centre[t];
        const int dy = L->shown[t] == 2 ? (int)ceilf(L->level0_w + 8.0f * s) : 0;
        if (dy)
            draw_fill_rect(c, x, label_top, 1, dy - 3, GRID);
        if (labels_draw(c, font, label, P->label_px, x, label_top + dy, DRAW_END, 1) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    if (draw_text(c, font, X_CAPTION, L->cap_px, P->plot_x + P->plot_w / 2, label_top + L->label_w + (int)(8.0f * s),
                  DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* The legend on c (w wide), level with the plot's top: one line per map (legend's names), and why
 * lines lie side by side when the heads are coloured.  MHAVIZ_ENOMEM when text cannot be drawn. */
static int sharpness_legend(DrawCanvas *c, const DrawFont *font, const Layout *L, int w, char *const *legend,
                            int coloured)
{
    const RenderSharpnessLayout *P = &L->pub;
    const float s = L->s;
    const int m = L->m;
    char line[RENDER_LABEL_BYTES * 2];
    const int n_lines = legend_lines(L);
    for (int k = 0; coloured && L->n_heads > 1 && k < N_SHIFTED; k++)
        if (draw_text(c, font, SHIFTED[k], 0.85f * L->legend_px, L->legend_x,
                      P->plot_y + n_lines * L->legend_dy + L->legend_dy / 2 + (int)(k * draw_line_height(0.85f * L->legend_px)),
                      DRAW_START, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    for (int k = 0; k < n_lines; k++) {
        const int wide = k == n_lines - 1;
        const DrawRgb col = wide ? DRAW_INK : coloured ? draw_colour(k) : MANY_HEADS;
        const int y = P->plot_y + L->legend_dy / 2 + k * L->legend_dy;
        draw_line(c, (float)L->legend_x, (float)y + 0.5f, (float)(L->legend_x + L->swatch_w), (float)y + 0.5f,
                  wide ? P->wide_px : P->head_px, col);
        legend_text(L, legend, k, line, sizeof line);
        draw_ellipsize(font, line, sizeof line, L->legend_px, (float)(w - m - L->legend_x - L->swatch_w) - 14.0f * s);
        if (draw_text(c, font, line, L->legend_px, L->legend_x + L->swatch_w + (int)(14.0f * s), y, DRAW_START, DRAW_MID,
                      DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* Draw sharpness.png on c (w x h) and write it to png_path: rows (n_maps,
 * T) each map's rows' normalised entropy (RenderJob), the last the single
 * wide head's; title and subtitle (NULL: none) on top. Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
static int sharpness_draw_png(DrawCanvas *c, const DrawFont *font, int w, int h, const char *png_path,
                          const double *rows, int n_maps, int T, char *const *tokens, int causal,
                          const char *title, const char *subtitle, char *const *legend, char *err, size_t errlen)
{
    Layout L;
    L.shown = malloc((size_t)T);
    L.centre = malloc((size_t)T * sizeof *L.centre);
    double *v = malloc((size_t)n_maps * T * sizeof *v); /* (n_maps, T) each row's effective number of keys */
    if (!L.shown || !L.centre || !v || draw_canvas_reset(c, w, h) != MHAVIZ_OK)
        goto oom;
    layout(font, w, h, n_maps, T, tokens, legend, subtitle, effective_keys(rows, n_maps, T, causal, v), &L);
    const RenderSharpnessLayout *P = &L.pub;
    const int m = L.m;

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

    if (sharpness_axes(c, font, &L, T, tokens) != MHAVIZ_OK)
        goto oom;

    /* The lines: the wide head's bold one first, so that a head's line on
     * top of it still shows; each head's moved by its shift, so heads with
     * one value lie side by side. */
    const int coloured = L.n_heads <= RENDER_SHARPNESS_COLOURS;
    for (int k = 0; k < n_maps; k++) {
        const int p = (k + n_maps - 1) % n_maps; /* n_maps - 1, then 0, 1, ... */
        const int wide = p == n_maps - 1;
        const DrawRgb col = wide ? DRAW_INK : coloured ? draw_colour(p) : MANY_HEADS;
        const float shift = wide || !coloured ? 0.0f : ((float)p - 0.5f * (float)(L.n_heads - 1)) * P->head_gap;
        draw_series(c, P, v + (size_t)p * T, T, shift, wide ? P->wide_px : P->head_px, col);
    }

    if (T == 1 && draw_text(c, font, "no query sees more than one key: nothing to spread", L.legend_px,
                            P->plot_x + P->plot_w / 2, P->plot_y + P->plot_h / 2, DRAW_MID, DRAW_MID, DRAW_INK, 0) !=
                      MHAVIZ_OK)
        goto oom;

    if (sharpness_legend(c, font, &L, w, legend, coloured) != MHAVIZ_OK)
        goto oom;

    free(v), free(L.shown), free(L.centre);
    return draw_write_png(c, png_path, err, errlen);

oom:
    free(v), free(L.shown), free(L.centre);
    return draw_nomem(err, errlen, png_path);
}

int render_sharpness_layout(Renderer *r, const double *rows, int n_maps, int T, char *const *tokens, int causal,
                            char *const *legend, const char *subtitle, RenderSharpnessLayout *out)
{
    return render_sharpness_layout_at(r->font, r->opt.overview_w, r->opt.overview_h, rows, n_maps, T, tokens, causal,
                                      legend, subtitle, out);
}

int render_draw_sharpness(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                          char *err, size_t errlen)
{
    return sharpness_draw_png(c, r->font, r->opt.overview_w, r->opt.overview_h, j->path, j->rows, j->n_maps, T,
                              tokens, causal, j->title, j->subtitle, j->panel_titles, err, errlen);
}
