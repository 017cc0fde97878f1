/* variants_slide.c — variants.png (see variants_slide.h). */
#include "pictures/variants_slide.h"
#include "core/measures.h"
#include "core/rival.h"
#include "core/status.h"
#include "draw/draw.h"
#include "draw/figure.h"
#include "pictures/head_columns.h"
#include "pictures/labels.h"
#include "text/format.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define TITLE_PX 44.0f
#define NAME_PX 40.0f  /* the variant's name */
#define TEXT_PX 28.0f  /* everything else */
#define GROUP_PX 24.0f /* the K/V marks */
#define ROLE_PX 22.0f  /* each map's role, under it */
#define LABEL_PX 22.0f     /* the token labels (queries at the left, keys under the last row), at most */
#define LABEL_MIN_PX 18.0f /* and at least: read from the back row (thinned where they do not fit) */
#define LABEL_LEVELS 2     /* staggered levels at most */
#define LEVEL_GAP 6        /* between staggered levels of labels */
#define KEY_CUT (4.0f * LABEL_PX) /* a key label is cut to this length (it hangs below the maps) */

#define TOP 150        /* below the title and the column names */
#define BOTTOM 96      /* the caption's two lines */
#define NAMES_W 240    /* the variants' names */
#define BAR_W 190      /* the colour bar, its ticks and "masked" */
#define MARK_H 32      /* the K/V mark above each row of maps */
#define ROLE_H 28      /* each map's role under it */
#define GAP 14         /* between maps */
#define WIDE_GAP 50    /* before the wide head's column */

/* The K/V marks, a hue per K/V head (Paul Tol's "muted" set, told apart
 * by colour-blind eyes too), cycled past N_MARKS: two neighbouring groups
 * never share a colour, and none is a shade of another's hue. */
static const DrawRgb MARKS[] = {{51, 34, 136},   {204, 102, 119}, {17, 119, 51},  {221, 204, 119}, {136, 204, 238},
                                {136, 34, 85},   {68, 170, 153},  {153, 153, 51}, {170, 68, 153}};
#define N_MARKS (int)(sizeof MARKS / sizeof MARKS[0])
static const DrawRgb GREY_TEXT = {90, 90, 90}, TICK = {175, 175, 175};

/* The widest label of tokens (T) at LABEL_PX, each cut at cut pixels. */
static float widest_label(const DrawFont *f, char *const *tokens, int T, float cut)
{
    char label[RENDER_LABEL_BYTES];
    float widest = 0.0f;
    for (int t = 0; t < T; t++) {
        render_token_label(f, tokens[t], LABEL_PX, cut, label);
        widest = fmaxf(widest, draw_text_width(f, label, LABEL_PX));
    }
    return widest;
}

/* Each level's width (LABEL_LEVELS): its widest label as plan p sets it. */
static void level_widths(const DrawFont *f, char *const *tokens, int T, const unsigned char *shown, float px,
                         float cut, float *w)
{
    char label[RENDER_LABEL_BYTES];
    for (int l = 0; l < LABEL_LEVELS; l++)
        w[l] = 0.0f;
    for (int t = 0; t < T; t++) {
        if (!shown[t])
            continue;
        render_token_label(f, tokens[t], px, cut, label);
        w[shown[t] - 1] = fmaxf(w[shown[t] - 1], draw_text_width(f, label, px));
    }
}

/* The height of the key labels of a plan (shown: (T) its levels, px its
 * size) under the maps: its levels' widest labels, turned, one below the
 * other, and a margin. */
static int keys_band(const DrawFont *f, char *const *tokens, int T, const unsigned char *shown, float px)
{
    float w[LABEL_LEVELS];
    level_widths(f, tokens, T, shown, px, KEY_CUT, w);
    return (int)ceilf(w[0] + (w[1] > 0.0f ? LEVEL_GAP + w[1] : 0.0f)) + 8;
}

/* The map side when n rows of maps and band pixels of key labels under
 * them share the slide's height, at most col_room: whole pixels a token
 * when it is T or more, as render_paint_map draws them. */
static int side_for(int band, int n, int col_room, int T)
{
    const int row_room = (SLIDE_H - TOP - BOTTOM - band) / n - MARK_H - ROLE_H - GAP;
    int side = row_room < col_room ? row_room : col_room;
    if (side >= T)
        side -= side % T;
    return side;
}

/* The room the row labels of a plan (shown: (T) its levels, px its size)
 * take left of the maps: its levels' widest labels side by side. */
static int rows_room(const DrawFont *f, char *const *tokens, int T, const unsigned char *shown, float px)
{
    float w[LABEL_LEVELS];
    level_widths(f, tokens, T, shown, px, 5.0f * LABEL_PX, w);
    return (int)ceilf(w[0] + LEVEL_GAP + (w[1] > 0.0f ? w[1] + LEVEL_GAP : 0.0f)) + 10;
}

/* The room across for a map and its gap, with labels_room for the row
 * labels, among n_cols columns and the wide head's. */
static int col_room_for(int labels_room, int n_cols)
{
    return (SLIDE_W - NAMES_W - labels_room - BAR_W - WIDE_GAP) / (n_cols + 1) - GAP;
}

/* The map side for n rows of maps at most col_room wide, with the key
 * labels under the last row: on one level, or on two when that labels
 * every key and one level does not. The band for the longest labels first,
 * then for the labels the plan shows (when the larger side that gives
 * shows none longer). Sets *keys_h (the band's height) and *levels; leaves
 * the plan in key_shown, key_centre (T) (labels.h). */
static int fit_maps(const DrawFont *f, char *const *tokens, int T, int n, int col_room, float key_widest,
                    unsigned char *key_shown, float *key_centre, int *keys_h, int *levels)
{
    int side = 0;
    *keys_h = 0, *levels = 1;
    for (int lv = 1; lv <= LABEL_LEVELS; lv++) {
        int band = (int)ceilf((float)lv * (key_widest + LEVEL_GAP)) + 8;
        int sd = side_for(band, n, col_room, T);
        LabelsPlan kp = labels_plan_min(T, tokens, -1, (float)sd / (float)T, LABEL_MIN_PX, LABEL_PX, lv, key_shown,
                                        key_centre);
        const int used = keys_band(f, tokens, T, key_shown, kp.px), sd2 = side_for(used, n, col_room, T);
        if (sd2 > sd) {
            const LabelsPlan kp2 = labels_plan_min(T, tokens, -1, (float)sd2 / (float)T, LABEL_MIN_PX, LABEL_PX, lv,
                                                   key_shown, key_centre);
            if (keys_band(f, tokens, T, key_shown, kp2.px) <= used)
                band = used, sd = sd2, kp = kp2;
        }
        if (lv == 1 || !kp.thinned)
            side = sd, *keys_h = band, *levels = lv;
        if (!kp.thinned)
            break;
    }
    return side;
}

/* Where the slide puts everything: the map side, the token labels' plans
 * and the maps' origins. */
typedef struct {
    int n_heads, T, n;          /* query heads, tokens, variants (rows of maps) */
    char *const *tokens;        /* (T) */
    int col_head[VARIANTS_SLIDE_MAX_COLUMNS]; /* (n_cols) the head each column shows, or HEAD_COLUMNS_ELIDED */
    int n_cols;
    unsigned char *shown, *key_shown; /* (T) each, rows' and keys': 0 no label, else 1 + its level (labels.h) */
    float *centre, *key_centre; /* (T) each label's centre, pixels from a map's edge */
    LabelsPlan plan, keys;      /* the rows' labels, the keys' */
    float from[LABEL_LEVELS];   /* each row level's start, pixels left of the map */
    float key_w[LABEL_LEVELS];  /* each key level's widest label */
    int side;                   /* a map's side */
    int keys_h, keys_used;      /* the key labels' band under the last row: planned, used */
    int pitch, row_pitch;       /* from one column to the next; from one row to the next */
    int x0, wide_x, y0;         /* the first column's left, the wide head's column's, the first row's top */
} Layout;

/* Lay the slide out in L for n rows of maps (L's tokens, shown and centre set).
 * The tokens label the rows left of the first column and the keys under
 * the last row's maps (labels.h), at LABEL_MIN_PX or more on at most
 * LABEL_LEVELS levels, else thinned. The map side is as large as the rows
 * and the columns allow, with room for the row labels' two levels beside
 * the maps and for the key labels under them: on one level, or on two when
 * that labels every key and one level does not. */
static void layout(const DrawFont *f, Layout *L)
{
    char *const *tokens = L->tokens;
    const int T = L->T, n = L->n;
    const float row_widest = widest_label(f, tokens, T, 5.0f * LABEL_PX);
    const float key_widest = widest_label(f, tokens, T, KEY_CUT);
    int key_levels;
    /* the labels' room for both levels of the longest label first, then for
     * the labels the rows' plan shows (when the larger maps that gives show
     * none longer) */
    const int labels_room = (int)ceilf(LABEL_LEVELS * (row_widest + LEVEL_GAP)) + 10;
    int side = fit_maps(f, tokens, T, n, col_room_for(labels_room, L->n_cols), key_widest, L->key_shown,
                        L->key_centre, &L->keys_h, &key_levels);
    LabelsPlan rp = labels_plan_min(T, tokens, -1, (float)side / (float)T, LABEL_MIN_PX, LABEL_PX, LABEL_LEVELS,
                                    L->shown, L->centre);
    const int room = rows_room(f, tokens, T, L->shown, rp.px);
    if (room < labels_room) {
        int keys_h2, key_levels2;
        const int side2 = fit_maps(f, tokens, T, n, col_room_for(room, L->n_cols), key_widest, L->key_shown,
                                   L->key_centre, &keys_h2, &key_levels2);
        rp = labels_plan_min(T, tokens, -1, (float)side2 / (float)T, LABEL_MIN_PX, LABEL_PX, LABEL_LEVELS, L->shown,
                             L->centre);
        if (side2 > side && rows_room(f, tokens, T, L->shown, rp.px) <= room)
            side = side2, L->keys_h = keys_h2, key_levels = key_levels2;
    }
    const float token_px = (float)side / (float)T; /* pixels a token along a map's side */
    L->side = side;
    L->keys = labels_plan_min(T, tokens, -1, token_px, LABEL_MIN_PX, LABEL_PX, key_levels, L->key_shown,
                              L->key_centre);
    L->plan = labels_plan_min(T, tokens, -1, token_px, LABEL_MIN_PX, LABEL_PX, LABEL_LEVELS, L->shown, L->centre);
    float level_w[LABEL_LEVELS];
    level_widths(f, tokens, T, L->shown, L->plan.px, 5.0f * LABEL_PX, level_w);
    level_widths(f, tokens, T, L->key_shown, L->keys.px, KEY_CUT, L->key_w);
    float labels_w = 10.0f;
    for (int l = 0; l < L->plan.levels; l++) {
        L->from[l] = labels_w;
        labels_w += level_w[l] + LEVEL_GAP;
    }
    L->keys_used = keys_band(f, tokens, T, L->key_shown, L->keys.px);
    L->pitch = side + GAP, L->row_pitch = MARK_H + side + ROLE_H + GAP;
    L->x0 = NAMES_W + (int)ceilf(labels_w) +
            (SLIDE_W - NAMES_W - (int)ceilf(labels_w) - BAR_W - WIDE_GAP - (L->n_cols + 1) * L->pitch) / 2;
    L->wide_x = L->x0 + L->n_cols * L->pitch + WIDE_GAP;
    L->y0 = TOP + (SLIDE_H - TOP - BOTTOM - L->keys_h - n * L->row_pitch) / 2;
}

/* The title ("Each head's map under MHA, GQA-2 and MQA", or without the
 * names when too long), the columns' names and the line before the wide head's. */
static void draw_title(Figure *s, const Variant *v, const Layout *L)
{
    const int nh = L->n_heads, n = L->n, side = L->side, y0 = L->y0;
    char a[256], b[64];
    int used = snprintf(a, sizeof a, "Each of the %d heads' maps under ", nh);
    for (int k = 0; k < n && used < (int)sizeof a; k++) {
        variant_name(b, sizeof b, nh, v[k].in.cfg.n_kv_heads);
        used += snprintf(a + used, sizeof a - (size_t)used, "%s%s", k == 0 ? "" : k + 1 < n ? ", " : " and ", b);
    }
    if (used >= (int)sizeof a || draw_text_width(s->f, a, TITLE_PX) > SLIDE_W - 80)
        snprintf(a, sizeof a, "Each of the %d heads' maps as their keys and values are shared", nh);
    figure_text(s, a, TITLE_PX, SLIDE_W / 2, 24, DRAW_MID, DRAW_TOP, DRAW_INK);
    for (int i = 0; i < L->n_cols; i++) {
        if (L->col_head[i] == HEAD_COLUMNS_ELIDED)
            snprintf(a, sizeof a, "\xe2\x80\xa6");
        else
            snprintf(a, sizeof a, "head %d", L->col_head[i]);
        figure_text(s, a, TEXT_PX, L->x0 + i * L->pitch + side / 2, y0 - 12, DRAW_MID, DRAW_BOTTOM, DRAW_INK);
    }
    figure_text(s, rival_name(v[0].in.has_single)->panel, TEXT_PX, L->wide_x + side / 2, y0 - 12, DRAW_MID,
                DRAW_BOTTOM, DRAW_INK);
    draw_line(s->c, L->wide_x - WIDE_GAP / 2.0f, y0 - 40, L->wide_x - WIDE_GAP / 2.0f, y0 + n * L->row_pitch, 2.0f,
              GREY_TEXT);
}

/* Variant x's name at the left of its maps (their top at my): its K/V
 * heads, its K/V cache per token, its groups and how it was made. */
static void draw_name(Figure *s, const Variant *x, const Layout *L, int my)
{
    const int n_kv = x->in.cfg.n_kv_heads, mid = my + L->side / 2;
    char a[256], b[64];
    variant_name(a, sizeof a, L->n_heads, n_kv);
    figure_text(s, a, NAME_PX, 30, mid - 30, DRAW_START, DRAW_BOTTOM, DRAW_INK);
    snprintf(a, sizeof a, "%d K/V head%s", n_kv, n_kv == 1 ? "" : "s");
    figure_text(s, a, TEXT_PX, 30, mid - 22, DRAW_START, DRAW_TOP, GREY_TEXT);
    snprintf(a, sizeof a, "%s B/token", format_grouped(b, x->summary.cost.input.kv_cache_bytes));
    figure_text(s, a, TEXT_PX, 30, mid + 14, DRAW_START, DRAW_TOP, GREY_TEXT);
    int line_y = mid + 50;
    if (x->grouping[0]) { /* --kv-groups chose who shares */
        snprintf(a, sizeof a, "groups %s", x->grouping);
        figure_text(s, a, TEXT_PX, 30, line_y, DRAW_START, DRAW_TOP, GREY_TEXT);
        line_y += 36;
    }
    if (x->pooled_from) { /* made from the input's K/V heads, never trained so (pool.h) */
        const PoolAlignment *al = &x->layer.alignment;
        figure_text(s, "pooled, untrained", TEXT_PX, 30, line_y, DRAW_START, DRAW_TOP, GREY_TEXT);
        if (x->pool == POOL_MEAN || (al->aligned && !al->unique))
            figure_text(s, x->pool == POOL_MEAN ? "plain mean" : "one of many", TEXT_PX, 30, line_y + 36, DRAW_START,
                        DRAW_TOP, GREY_TEXT);
    }
}

/* Variant x's K/V marks in the band from y: one bar over the maps of each
 * group's shown heads. */
static void draw_marks(Figure *s, const Variant *x, const Layout *L, int y)
{
    const int *col_head = L->col_head, n_cols = L->n_cols, pitch = L->pitch;
    const int kv_mul = L->n_heads / x->in.cfg.n_kv_heads;
    char a[32];
    for (int i = 0; i < n_cols;) {
        if (col_head[i] == HEAD_COLUMNS_ELIDED) {
            i++;
            continue;
        }
        const int g = x->kv_of[col_head[i]];
        int j = i; /* the group's run of columns i .. j (across a "..." when the group spans it) */
        for (int q = i + 1; q < n_cols; q++) {
            if (col_head[q] == HEAD_COLUMNS_ELIDED)
                continue;
            if (x->kv_of[col_head[q]] != g)
                break;
            j = q;
        }
        int bx = L->x0 + i * pitch, bw = (j - i) * pitch + L->side;
        /* heads of the group among the left-out ones: the bar reaches halfway into the "..." */
        if (j + 1 < n_cols && col_head[j + 1] == HEAD_COLUMNS_ELIDED && (g + 1) * kv_mul - 1 > col_head[j])
            bw += pitch / 2;
        if (i > 0 && col_head[i - 1] == HEAD_COLUMNS_ELIDED && g * kv_mul < col_head[i])
            bx -= pitch / 2, bw += pitch / 2;
        const DrawRgb mark = MARKS[g % N_MARKS];
        draw_fill_rect(s->c, bx, y + 4, bw, MARK_H - 10, mark);
        snprintf(a, sizeof a, "K/V %d", g);
        figure_text(s, a, GROUP_PX, bx + bw / 2, y + MARK_H / 2 - 1, DRAW_MID, DRAW_MID,
                    draw_luma(mark) > 140 ? DRAW_INK : DRAW_WHITE);
        i = j + 1;
    }
}

/* Variant x's maps, their top at my: each shown head, then the wide head,
 * each with the role the measures give it under this variant; under the
 * last row (last), the keys, on their levels, above the roles. */
static void draw_maps(const Renderer *r, Figure *s, const Variant *x, const Layout *L, int my, int last)
{
    const int T = L->T, side = L->side;
    const size_t map = (size_t)T * T;
    char a[256], label[RENDER_LABEL_BYTES];
    for (int i = 0; i <= L->n_cols; i++) {
        const int wide = i == L->n_cols, px = wide ? L->wide_x : L->x0 + i * L->pitch;
        if (!wide && L->col_head[i] == HEAD_COLUMNS_ELIDED) {
            figure_text(s, "\xe2\x80\xa6", NAME_PX, px + side / 2, my + side / 2, DRAW_MID, DRAW_MID, DRAW_INK);
            continue;
        }
        const int h = wide ? L->n_heads : L->col_head[i];
        render_paint_map(r, s->c, wide ? x->single.att : x->multi.att + (size_t)h * map, T, x->in.cfg.causal, px, my,
                         side);
        for (int t = 0; last && t < T; t++) {
            if (!L->key_shown[t])
                continue;
            const int kx = px + (int)L->key_centre[t];
            const int dy = L->key_shown[t] == 2 ? (int)ceilf(L->key_w[0]) + LEVEL_GAP : 0;
            render_token_label(s->f, L->tokens[t], L->keys.px, KEY_CUT, label);
            if (dy)
                draw_fill_rect(s->c, kx, my + side + 4, 1, dy - 3, TICK);
            s->failed |= labels_draw(s->c, s->f, label, L->keys.px, kx, my + side + 4 + dy, DRAW_END, 1) != MHAVIZ_OK;
        }
        snprintf(a, sizeof a, "%s", measures_role_name(x->measures[h].role));
        draw_ellipsize(s->f, a, sizeof a, ROLE_PX, (float)side + GAP);
        figure_text(s, a, ROLE_PX, px + side / 2, my + side + 4 + (last ? L->keys_used : 0), DRAW_MID, DRAW_TOP,
                    DRAW_INK);
    }
}

/* The query tokens left of the first column of the maps whose top is at my, on their levels. */
static void draw_queries(Figure *s, const Layout *L, int my)
{
    char label[RENDER_LABEL_BYTES];
    for (int t = 0; t < L->T; t++) {
        if (!L->shown[t])
            continue;
        const int l = L->shown[t] - 1, y = my + (int)L->centre[t];
        render_token_label(s->f, L->tokens[t], L->plan.px, 5.0f * LABEL_PX, label);
        if (l > 0)
            draw_fill_rect(s->c, L->x0 - (int)L->from[l] + 3, y, (int)L->from[l] - 6, 1, TICK);
        s->failed |= labels_draw(s->c, s->f, label, L->plan.px, L->x0 - (int)L->from[l], y, DRAW_END, 0) != MHAVIZ_OK;
    }
}

/* The one colour scale, how to read the maps (at the bottom) and, under
 * the title, what the maps and labels leave out: blocks averaged
 * (render_paint_map shares the tokens out over the pixels), labels thinned. */
static void draw_captions(const Renderer *r, Figure *s, const Variant *v, const Layout *L)
{
    const MhaConfig *c0 = &v[0].in.cfg;
    const int T = L->T, side = L->side, trained = v[0].in.has_single; /* the one head trained on its own */
    char a[256];
    const int bar_h = L->n * L->row_pitch / 2 < 400 ? L->n * L->row_pitch / 2 : 400;
    s->failed |= render_weights_bar(r, s->c, SLIDE_W - BAR_W + 10, L->y0 + MARK_H, 36, bar_h, TEXT_PX, c0->causal, T) !=
                 MHAVIZ_OK;
    snprintf(a, sizeof a, "each map: rows = queries (tokens at the left), columns = keys (tokens under the last "
             "row), T = %d, one colour scale, its role under it", T);
    figure_text(s, a, TEXT_PX * 0.9f, SLIDE_W / 2, SLIDE_H - 24 - (int)draw_line_height(TEXT_PX * 0.9f), DRAW_MID,
                DRAW_BOTTOM, GREY_TEXT);
    snprintf(a, sizeof a, "%s: width %d%s; B/token: K/V cache per token per layer, fp16", rival_name(trained)->panel,
             c0->d_model, trained ? ", trained on its own" : "");
    figure_text(s, a, TEXT_PX * 0.9f, SLIDE_W / 2, SLIDE_H - 24, DRAW_MID, DRAW_BOTTOM, GREY_TEXT);
    char note[200] = "", labelled[200], keys_note[160];
    if (side < T) {
        const int k = (T + side - 1) / side;
        snprintf(note, sizeof note, "each pixel of a map is the mean of a block of up to %d \xc3\x97 %d tokens", k, k);
    }
    /* thinned rows and keys follow one plan (one level at LABEL_MIN_PX, the
     * same pitch); keys alone are thinned when two levels do not fit them */
    labels_note(&L->plan, labelled, sizeof labelled);
    labels_note(&L->keys, keys_note, sizeof keys_note);
    if (!L->plan.thinned && L->keys.thinned)
        snprintf(labelled, sizeof labelled, "keys: %s", keys_note);
    snprintf(a, sizeof a, "%s%s%s", note, note[0] && labelled[0] ? " \xc2\xb7 " : "", labelled);
    figure_text(s, a, TEXT_PX * 0.9f, SLIDE_W / 2, 76, DRAW_MID, DRAW_TOP, GREY_TEXT);
}

int variants_slide_draw(const Renderer *r, const char *path, const Variant *v, int n, char *err, size_t errlen)
{
    const int T = v[0].in.cfg.T;
    Layout L = {.n_heads = v[0].in.cfg.n_heads, .T = T, .n = n, .tokens = v[0].in.tokens};
    unsigned char *shown = malloc(2 * (size_t)T);           /* (2, T) rows', keys' */
    float *centre = malloc(2 * (size_t)T * sizeof *centre); /* (2, T) rows', keys' */
    Figure s;
    int rc = shown && centre ? figure_begin(&s, NULL, render_font(r), SLIDE_W, SLIDE_H, err, errlen) : MHAVIZ_ENOMEM;
    if (rc != MHAVIZ_OK) {
        free(shown), free(centre);
        return rc == MHAVIZ_ENOMEM ? draw_nomem(err, errlen, path) : rc;
    }
    L.shown = shown, L.key_shown = shown + T;
    L.centre = centre, L.key_centre = centre + T;
    L.n_cols = head_columns(L.n_heads, VARIANTS_SLIDE_MAX_COLUMNS, L.col_head);

    /* Top to bottom: title, one row per variant, colour bar and captions. */
    layout(s.f, &L);
    draw_title(&s, v, &L);
    for (int k = 0; k < n; k++) {
        const int y = L.y0 + k * L.row_pitch, my = y + MARK_H; /* the row's top, its maps' */
        draw_name(&s, &v[k], &L, my);
        draw_marks(&s, &v[k], &L, y);
        draw_maps(r, &s, &v[k], &L, my, k == n - 1);
        draw_queries(&s, &L, my);
    }
    draw_captions(r, &s, v, &L);
    free(shown), free(centre);
    return figure_write(&s, path, err, errlen);
}
