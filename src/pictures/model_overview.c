/* model_overview.c — model_overview.png (see model_overview.h). */
#include "pictures/model_overview.h"
#include "core/status.h"
#include "draw/draw.h"
#include "draw/figure.h"

#include <stdio.h>

#define TITLE_PX 44.0f
#define TEXT_PX 28.0f
#define TOP 140      /* the title, the note and the head numbers */
#define LEGEND_H 100 /* the legend and the caption */
#define LABELS_W 150 /* "layer 11" */
#define BAR_W 150    /* the colour bar and its ticks */
#define GAP_PART 8   /* a cell's gap: 1/GAP_PART of its pitch */

static const DrawRgb GREY_TEXT = {90, 90, 90};

/* Each role's colour and letter, indexed by MeasuresRole: the patterns in
 * clear hues, split (its rows shared by two patterns) in pink, diffuse and
 * mixed in greys, none white. */
static const struct {
    DrawRgb col;
    const char *letter;
} ROLE[MEASURES_NONE + 1] = {
    [MEASURES_PREVIOUS_TOKEN] = {{214, 39, 40}, "P"},   [MEASURES_SELF] = {{255, 127, 14}, "S"},
    [MEASURES_NEXT_TOKEN] = {{140, 86, 75}, "N"},       [MEASURES_DUPLICATE_TOKEN] = {{148, 103, 189}, "D"},
    [MEASURES_INDUCTION] = {{44, 160, 44}, "I"},        [MEASURES_FIRST_TOKEN] = {{31, 119, 180}, "F"},
    [MEASURES_LAST_TOKEN] = {{23, 190, 207}, "L"},      [MEASURES_FIXED_TOKEN] = {{188, 189, 34}, "K"},
    [MEASURES_SPLIT] = {{227, 119, 194}, "/"},          [MEASURES_DIFFUSE] = {{200, 200, 200}, "~"},
    [MEASURES_MIXED] = {{120, 120, 120}, "M"},          [MEASURES_NONE] = {{255, 255, 255}, "-"},
};

const char *model_overview_role(MeasuresRole r, DrawRgb *colour)
{
    *colour = ROLE[r].col;
    return ROLE[r].letter;
}

/* Black or white, whichever reads on bg. */
static DrawRgb ink_on(DrawRgb bg)
{
    return 299 * bg.r + 587 * bg.g + 114 * bg.b > 140000 ? DRAW_INK : DRAW_WHITE;
}

/* Long on purpose: the slide in one pass: title, grid, legend. */
int model_overview_draw(const Renderer *r, const char *path, const ModelSummary *s, const char *name, int T,
                        int causal, char *err, size_t errlen)
{
    Figure f;
    int rc = figure_begin(&f, NULL, render_font(r), SLIDE_W, SLIDE_H, err, errlen);
    if (rc != MHAVIZ_OK)
        return rc;
    const int L = s->n, H = s->n_heads, B = s->thumb_T;
    const size_t thumb = (size_t)B * B;
    /* The cell: a square map and a band for the role's letter, under the
     * map when the columns are narrow (a third of its side, at least 12
     * px), beside it when they leave room (half its side): each as large as
     * the rows and columns allow. */
    const int grid_w = SLIDE_W - LABELS_W - BAR_W - 40, grid_h = SLIDE_H - TOP - LEGEND_H;
    const int pitch_x = grid_w / H, pitch_y = grid_h / L;
    const int room_x = pitch_x - pitch_x / GAP_PART - 1, room_y = pitch_y - pitch_y / GAP_PART - 1;
    const int beside = room_x * 2 >= room_y * 3; /* a map of room_y and a band of half that fit side by side */
    int side, band;
    if (beside) {
        side = room_y < room_x * 2 / 3 ? room_y : room_x * 2 / 3;
    } else {
        side = room_x;
        band = side / 3 > 12 ? side / 3 : 12;
        if (side + band > room_y)
            side = room_y - (room_y / 4 > 12 ? room_y / 4 : 12);
    }
    if (side >= B)
        side -= side % B; /* whole pixels per token (or block), as render_paint_map draws them */
    band = beside ? side / 2 : side / 3;
    band = band < 12 ? 12 : band > 60 ? 60 : band;
    const int x0 = LABELS_W + (grid_w - H * pitch_x) / 2, y0 = TOP;
    char a[256];

    snprintf(a, sizeof a, "%s: every head of %d layer%s (%d head%s each)", name, L, L == 1 ? "" : "s", H,
             H == 1 ? "" : "s");
    figure_text(&f, a, TITLE_PX, SLIDE_W / 2, 20, DRAW_MID, DRAW_TOP, DRAW_INK);
    if (s->sentences > 1) /* --text-file: the letters from every sentence, the maps from the first */
        snprintf(a, sizeof a, "roles over %d sentences (each head's rows of all of them); the maps: the first "
                 "sentence's, T = %d%s", s->sentences, T, s->block > 1 ? ", in blocks" : "");
    else if (s->block > 1)
        snprintf(a, sizeof a, "T = %d tokens; each pixel of a map: the mean of a block of %d \xc3\x97 %d tokens' "
                 "visible weights", T, s->block, s->block);
    else
        snprintf(a, sizeof a, "T = %d tokens; each map: rows = queries, columns = keys", T);
    figure_text(&f, a, TEXT_PX * 0.9f, SLIDE_W / 2, 70, DRAW_MID, DRAW_TOP, GREY_TEXT);

    /* Head numbers on top: every head while they fit, else every k-th. */
    const float num_px = pitch_x >= 40 ? 24.0f : 18.0f;
    int step = 1;
    while (draw_text_width(f.f, "00", num_px) + 6 > step * pitch_x)
        step++;
    for (int h = 0; h < H; h += step) {
        snprintf(a, sizeof a, "%d", h);
        figure_text(&f, a, num_px, x0 + h * pitch_x + (beside ? side + band : side) / 2, y0 - 8, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    }
    figure_text(&f, "head", num_px, x0 - 14, y0 - 8, DRAW_END, DRAW_BOTTOM, GREY_TEXT);

    int present[MEASURES_NONE + 1] = {0};
    const float letter_px = (beside ? band * 1.2f : band * 0.95f) < 40.0f ? (beside ? band * 1.2f : band * 0.95f)
                                                                          : 40.0f;
    for (int l = 0; l < L; l++) {
        const int y = y0 + l * pitch_y;
        const float label_px = pitch_y >= 40 ? 28.0f : 20.0f;
        snprintf(a, sizeof a, "layer %d", s->layers[l].layer);
        figure_text(&f, a, label_px, x0 - 14, y + (beside ? side : side + band) / 2, DRAW_END, DRAW_MID, DRAW_INK);
        for (int h = 0; h < H; h++) {
            const int x = x0 + h * pitch_x;
            const MeasuresRole role = s->layers[l].head_role[h];
            present[role] = 1;
            render_paint_map(r, f.c, s->thumbs + ((size_t)l * H + h) * thumb, B, causal, x, y, side);
            const int bx = beside ? x + side + 2 : x, by = beside ? y : y + side + 1;
            const int bw = beside ? band : side, bh = beside ? side : band;
            draw_fill_rect(f.c, bx, by, bw, bh, ROLE[role].col);
            figure_text(&f, ROLE[role].letter, letter_px, bx + bw / 2, by + bh / 2, DRAW_MID, DRAW_MID,
                        ink_on(ROLE[role].col));
        }
    }

    /* The legend: the roles present, each a swatch with its letter. */
    int lx = 40;
    const int ly = SLIDE_H - LEGEND_H + 8;
    for (int k = 0; k <= MEASURES_NONE; k++) {
        if (!present[k])
            continue;
        draw_fill_rect(f.c, lx, ly, 40, 40, ROLE[k].col);
        draw_stroke_rect(f.c, lx, ly, 40, 40, DRAW_FRAME);
        figure_text(&f, ROLE[k].letter, 32.0f, lx + 20, ly + 20, DRAW_MID, DRAW_MID, ink_on(ROLE[k].col));
        const char *rn = measures_role_name(k);
        figure_text(&f, rn, TEXT_PX, lx + 50, ly + 20, DRAW_START, DRAW_MID, DRAW_INK);
        lx += 50 + (int)draw_text_width(f.f, rn, TEXT_PX) + 36;
    }
    figure_text(&f, "the band by each map: its role (report.txt's rule); the table of layers and the heads worth a slide: "
                "report.txt", TEXT_PX * 0.8f, SLIDE_W / 2, SLIDE_H - 14, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    f.failed |= render_weights_bar(r, f.c, SLIDE_W - BAR_W + 10, y0, 30, grid_h / 2 < 400 ? grid_h / 2 : 400,
                                   TEXT_PX * 0.8f, causal, T) != MHAVIZ_OK;
    return figure_write(&f, path, err, errlen);
}
