/* pull_slide.c — query_NN.png, the heads' pulls on one query (see pull_slide.h).
 *
 * Layout, top to bottom: title, caption (up to two lines), column headers,
 * one row per head, a gap, the wide head's row (three rows tall), the key
 * labels. Left to right: the row labels, the score charts, the softmax
 * charts. All in pixels of the 1920 x 1080 slide. */
#include "pictures/pull_slide.h"
#include "core/measures.h"
#include "core/status.h"
#include "pictures/labels.h"
#include "pictures/render.h"
#include "pictures/render_parts.h"
#include "text/contest.h"
#include "text/pull_caption.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MARGIN 36
#define TITLE_PX 38.0f
#define CAPTION_PX 26.0f
#define HEADER_PX 22.0f /* column headers and row labels */
#define SMALL_PX 18.0f  /* second lines of row labels, axis numbers, weights on the bars */
#define LABEL_PX 22.0f  /* key labels, at most (at least LABELS_MIN_PX, labels.h) */
#define LABEL_MAX_LENGTH 200.0f /* pixels a turned key label may take; longer ones are shortened */

#define LABEL_X MARGIN /* the row labels' column */
#define SCORES_X 300   /* the score charts */
#define SCORES_W 760
#define WEIGHTS_X 1120 /* the softmax charts */
#define WEIGHTS_W (SLIDE_W - MARGIN - WEIGHTS_X)
#define BODY_Y 200     /* the first row's top */
#define WIDE_ROWS 3    /* the wide head's row is this many head rows tall */
#define WIDE_GAP 44    /* between the heads' rows and the wide head's: a rule and the legend */
#define CONTEST_SLIDE_HEADS 64 /* heads a contest's bar stacks at most (the sentence names the largest) */

static const DrawRgb WIDE_COLOUR = {40, 40, 40};
static const DrawRgb RULE = {200, 200, 200}; /* zero lines, baselines */

/* Where the key labels go, shared by both charts. */
typedef struct {
    int n;               /* keys */
    float slot_s;        /* pixels per key in a score chart */
    float slot_w;        /* pixels per key in a softmax chart */
    LabelsPlan plan;     /* which keys have a label, at what size (labels.h) */
    unsigned char *shown;/* (n) 0: no label, else 1 + its level */
    float *centre;       /* (n) label centres along the narrower chart, pixels */
    float level0_w;      /* the widest label of the first level (turned: its length) */
    int rotated;         /* labels read bottom to top */
    int height;          /* pixels the labels take below the charts */
} Labels;

/* Key j's label as drawn turned: "token index" (the index is never cut). */
static void turned_label(const DrawFont *f, const char *shown, int j, float px, char *text, size_t len)
{
    char index[16];
    snprintf(index, sizeof index, " %d", j);
    snprintf(text, len, "%s", shown);
    draw_ellipsize(f, text, len, px, LABEL_MAX_LENGTH - draw_text_width(f, index, px));
    snprintf(text + strlen(text), len - strlen(text), "%s", index);
}

/* Plan the key labels of query i's n keys (labels.h, with the query always
 * labelled past LABELS_ALL_UP_TO). Returns 0 when out of memory. */
static int plan_key_labels(const DrawFont *f, char *const *shown, int n, int query, Labels *L)
{
    L->n = n;
    L->slot_s = (float)SCORES_W / n;
    L->slot_w = (float)WEIGHTS_W / n;
    L->shown = malloc((size_t)n);
    L->centre = malloc((size_t)n * sizeof *L->centre);
    if (!L->shown || !L->centre)
        return 0;
    const float slot = fminf(L->slot_s, L->slot_w);
    float widest = 0;
    for (int j = 0; j < n; j++)
        widest = fmaxf(widest, draw_text_width(f, shown[j], 1.0f));
    /* Across, on two lines (the token, its index), at the largest size that fits. */
    const float across = fminf(LABEL_PX, (slot - 6) / fmaxf(widest, 1e-3f));
    if (across >= 16.0f) {
        L->rotated = 0;
        L->plan = labels_plan(n, shown, query, slot, across, 1, L->shown, L->centre);
        L->plan.px = floorf(across);
        L->height = (int)(2 * draw_line_height(L->plan.px)) + 8;
        return 1;
    }
    /* Else turned, "token index" reading upwards, as labels.h places them. */
    L->rotated = 1;
    L->plan = labels_plan(n, shown, query, slot, LABEL_PX, 2, L->shown, L->centre);
    float longest[2] = {0, 0};
    for (int j = 0; j < n; j++) {
        if (!L->shown[j])
            continue;
        char text[160];
        turned_label(f, shown[j], j, L->plan.px, text, sizeof text);
        longest[L->shown[j] - 1] = fmaxf(longest[L->shown[j] - 1], draw_text_width(f, text, L->plan.px));
    }
    L->level0_w = longest[0];
    L->height = (int)(L->plan.levels == 2 ? longest[0] + 8 + longest[1] : longest[0]) + 10;
    return 1;
}

/* The key labels under a chart whose first key's slot starts at x. */
static int draw_labels(DrawCanvas *cv, const DrawFont *f, char *const *shown, const Labels *L, int x, float slot,
                       int y)
{
    char text[160];
    const float px = L->plan.px;
    for (int j = 0; j < L->n; j++) {
        if (!L->shown[j])
            continue;
        /* the label's centre on this chart: its planned place scaled to the chart's slots */
        const int cx = x + (int)(L->centre[j] * slot / fminf(L->slot_s, L->slot_w));
        if (L->rotated) {
            turned_label(f, shown[j], j, px, text, sizeof text);
            const int dy = L->shown[j] == 2 ? (int)ceilf(L->level0_w + 8) : 0;
            if (dy)
                draw_fill_rect(cv, cx, y + 6, 1, dy - 3, RULE);
            if (labels_draw(cv, f, text, px, cx, y + 6 + dy, DRAW_END, 1) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        } else {
            snprintf(text, sizeof text, "%d", j);
            if (labels_draw(cv, f, shown[j], px, cx, y + 4 + (int)(0.6f * px), DRAW_MID, 0) != MHAVIZ_OK ||
                draw_text(cv, f, text, px, cx, y + 4 + (int)draw_line_height(px), DRAW_MID, DRAW_TOP, DRAW_INK, 0) !=
                    MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* A dot of colour col centred on (x, y): marks a top key, whose bar in the
 * score chart has no length. */
static void dot(DrawCanvas *cv, int x, int y, DrawRgb col)
{
    draw_line(cv, (float)x + 0.5f, (float)y + 0.5f, (float)x + 0.5f, (float)y + 0.5f, 11.0f, col);
}

/* depth rounded up to a number a class reads off an axis: 1, 1.2, 1.5,
 * 2, 2.5, 3, 4, 5, 6, 8 times a power of ten (9 130 -> 10 000, 19 -> 20). */
static double round_depth(double depth)
{
    static const double nice[] = {1.0, 1.2, 1.5, 2.0, 2.5, 3.0, 4.0, 5.0, 6.0, 8.0, 10.0};
    const double mag = pow(10.0, floor(log10(depth)));
    for (size_t k = 0; k < sizeof nice / sizeof nice[0]; k++)
        if (nice[k] * mag >= depth * 0.9999)
            return nice[k] * mag;
    return depth;
}

/* "−10 000", "−20", "−2.5", "−0.8": minus v, never in scientific notation,
 * thousands set apart by a thin space. */
static void axis_number(char *buf, size_t len, double v)
{
    char digits[64];
    snprintf(digits, sizeof digits, v >= 10.0 ? "%.0f" : v >= 1.0 ? "%.1f" : "%.2f", v);
    size_t n = snprintf(buf, len, "\xe2\x88\x92"); /* U+2212 minus */
    const size_t int_len = strcspn(digits, ".");
    for (size_t k = 0; digits[k] && n + 4 < len; k++) {
        if (k > 0 && k < int_len && (int_len - k) % 3 == 0) {
            memcpy(buf + n, "\xe2\x80\x89", 3); /* U+2009 thin space */
            n += 3;
        }
        buf[n++] = digits[k];
    }
    buf[n] = '\0';
    /* "−2.0" reads as "−2" */
    if (n > 2 && strcmp(buf + n - 2, ".0") == 0)
        buf[n - 2] = '\0';
}

/* The score axis of one row: 0 at y0, -depth at y1, just left of the
 * chart, each number inside the row. */
static int draw_score_axis(DrawCanvas *cv, const DrawFont *f, int y0, int y1, double depth)
{
    char num[64];
    axis_number(num, sizeof num, depth);
    if (draw_text(cv, f, "0", SMALL_PX, SCORES_X - 10, y0, DRAW_END, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, num, SMALL_PX, SCORES_X - 10, y1, DRAW_END, DRAW_BOTTOM, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    draw_fill_rect(cv, SCORES_X - 4, y0, 1, y1 - y0 + 1, RULE);
    return MHAVIZ_OK;
}

/* One row's softmax chart: weights w (n) as bars up from the row's
 * baseline y1 (1 reaches y0 less room for a number), each weight of at
 * least WEIGHT_LABELLED printed above its bar: across when the slot holds
 * it, else turned. */
#define WEIGHT_LABELLED 0.05f
#define WEIGHT_PX 16.0f

/* The widest number draw_weights prints over the n weights w: "0.00"'s
 * width, or a three-decimal weight's (measures_weight_text). */
static float widest_weight(const DrawFont *f, const float *w, int n, float widest)
{
    for (int j = 0; j < n; j++)
        if (w[j] >= WEIGHT_LABELLED) {
            char num[16];
            widest = fmaxf(widest, draw_text_width(f, measures_weight_text(num, sizeof num, w[j]), WEIGHT_PX));
        }
    return widest;
}

/* num_w: the widest number of the slide (widest_weight), so that every
 * row turns its numbers or none does. */
static int draw_weights(DrawCanvas *cv, const DrawFont *f, const float *w, int n, float slot, float num_w, int y0,
                        int y1, DrawRgb col)
{
    const int turned = slot < num_w + 4;
    const int room = turned ? (int)ceilf(num_w) + 6 : (int)draw_line_height(WEIGHT_PX);
    const int top = y0 + room, bar_w = (int)fmaxf(1.0f, slot * 0.7f);
    draw_fill_rect(cv, WEIGHTS_X, y1, WEIGHTS_W, 1, RULE);
    for (int j = 0; j < n; j++) {
        const int x = WEIGHTS_X + (int)(j * slot + (slot - bar_w) / 2);
        const int len = (int)lroundf(w[j] * (float)(y1 - top));
        draw_fill_rect(cv, x, y1 - len, bar_w, len, col);
        if (w[j] >= WEIGHT_LABELLED) {
            char num[16];
            if (draw_text(cv, f, measures_weight_text(num, sizeof num, w[j]), WEIGHT_PX, x + bar_w / 2, y1 - len - 3,
                          turned ? DRAW_START : DRAW_MID, turned ? DRAW_MID : DRAW_BOTTOM, DRAW_INK, turned) != MHAVIZ_OK)
                return MHAVIZ_ENOMEM;
        }
    }
    return MHAVIZ_OK;
}

/* A row label: a colour swatch (none when swatch is NULL), a name, and
 * under it the lines of more (separated by '\n') in smaller type, as many
 * as the row's height h holds. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
static int draw_row_label(DrawCanvas *cv, const DrawFont *f, int y, int h, const DrawRgb *swatch,
                          const char *name, const char *more)
{
    const int x = LABEL_X + (swatch ? 28 : 0);
    if (swatch)
        draw_fill_rect(cv, LABEL_X, y + 4, 20, 20, *swatch);
    if (draw_text(cv, f, name, HEADER_PX, x, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    int line_y = y + (int)draw_line_height(HEADER_PX);
    const int step = (int)draw_line_height(SMALL_PX);
    for (const char *p = more; *p && line_y + step <= y + h;) {
        char line[160];
        const size_t n = strcspn(p, "\n");
        snprintf(line, sizeof line, "%.*s", (int)n, p);
        draw_ellipsize(f, line, sizeof line, SMALL_PX, (float)(SCORES_X - 70 - x));
        if (draw_text(cv, f, line, SMALL_PX, x, line_y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
        line_y += step;
        p += n + (p[n] == '\n');
    }
    return MHAVIZ_OK;
}

/* A head's favourite key for its row label, never cut: "favourite: Mary 0"
 * on one line when it fits the label column, else "favourite:" and then
 * the key (its text shortened, never its index) on a line of its own. */
static void favourite_text(const DrawFont *f, const char *key, int j, int row_h, char *buf, size_t len)
{
    const float width = (float)(SCORES_X - 70 - LABEL_X - 28);
    char index[16], text[160];
    snprintf(index, sizeof index, " %d", j);
    snprintf(buf, len, "favourite: %s%s", key, index);
    if (draw_text_width(f, buf, SMALL_PX) <= width)
        return;
    snprintf(text, sizeof text, "%s", key);
    draw_ellipsize(f, text, sizeof text, SMALL_PX, width - draw_text_width(f, index, SMALL_PX));
    /* two lines when the row holds them, else the key alone after an arrow */
    if (row_h >= (int)draw_line_height(HEADER_PX) + 2 * (int)draw_line_height(SMALL_PX))
        snprintf(buf, len, "favourite:\n%s%s", text, index);
    else
        snprintf(buf, len, "\xe2\x86\x92 %s%s", text, index);
}

/* The colours of the stacked contributions, "head 0" to "head H-1", on
 * one line over the score chart from (SCORES_X, y); left out when they do
 * not fit (each head's row shows its colour too). */
static int draw_legend(DrawCanvas *cv, const DrawFont *f, int H, int y)
{
    char name[32];
    snprintf(name, sizeof name, "head %d", H - 1);
    const int entry_w = 24 + (int)draw_text_width(f, name, SMALL_PX) + 18;
    if (H * entry_w > SCORES_W)
        return MHAVIZ_OK;
    for (int h = 0; h < H; h++) {
        const int x = SCORES_X + h * entry_w;
        draw_fill_rect(cv, x, y + 2, 16, 16, draw_colour(h));
        snprintf(name, sizeof name, "head %d", h);
        if (draw_text(cv, f, name, SMALL_PX, x + 22, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

/* The caption on at most two lines (render_fit_two_lines: from CAPTION_PX down to 18). */
static int draw_caption(DrawCanvas *cv, const DrawFont *f, const char *caption, int y)
{
    char first[512], rest[512];
    const float px = render_fit_two_lines(f, caption, CAPTION_PX, 18.0f, (float)(SLIDE_W - 2 * MARGIN), first, rest,
                                          sizeof first);
    if (draw_text(cv, f, first, px, MARGIN, y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, rest, px, MARGIN, y + (int)draw_line_height(px), DRAW_START, DRAW_TOP, DRAW_INK, 0) !=
            MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* The contests of one row (pull.h) in the box SCORES_X .. + SCORES_W, y0
 * .. y1, on one common axis: for each, its sentence (contest_text) and a
 * bar of the heads' parts, those for the wide head's top key stacked to
 * the right of 0, those against it to the left, largest first, each in
 * its head's colour; a black mark at the margin, where they add up to.
 * shown (n): the keys as the slide labels them; tokens name twins. */
static int draw_contests(DrawCanvas *cv, const DrawFont *f, const PullContest *ct, int n_c, int H, char *const *shown,
                         char *const *tokens, int n, double scale, int y0, int y1)
{
    char text[640], a[160], b[160], qa[160], qb[160];
    if (n_c == 0)
        return draw_text(cv, f, "nothing contested: no pulling head's favourite differs from its top key", SMALL_PX,
                         SCORES_X, y0, DRAW_START, DRAW_TOP, DRAW_INK, 0);
    const int line_h = (int)draw_line_height(SMALL_PX), axis_h = line_h + 6;
    const int band = (y1 - y0 - axis_h) / n_c;
    const int x0 = SCORES_X + SCORES_W / 2, half = SCORES_W / 2 - 4;
    draw_fill_rect(cv, x0, y0 + line_h, 1, y1 - axis_h - y0 - line_h, RULE); /* 0 */
    for (int k = 0; k < n_c; k++) {
        const int top = y0 + k * band;
        snprintf(qa, sizeof qa, "'%s'", shown[ct[k].key]);
        snprintf(qb, sizeof qb, "'%s'", shown[ct[k].other]);
        contest_text(text, sizeof text, &ct[k], H, contest_key(a, sizeof a, qa, tokens, n, ct[k].key),
                     contest_key(b, sizeof b, qb, tokens, n, ct[k].other));
        draw_ellipsize(f, text, sizeof text, SMALL_PX, (float)(WEIGHTS_X - SCORES_X - 24));
        if (draw_text(cv, f, text, SMALL_PX, SCORES_X, top, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
            return MHAVIZ_ENOMEM;
        const int bar_top = top + line_h + 2;
        const int bar_h = (int)fmax(2, fmin(30, band - line_h - 8));
        for (int side = 1; side >= -1; side -= 2) { /* for, then against: each largest first */
            double at = 0;
            unsigned char done[CONTEST_SLIDE_HEADS] = {0};
            for (int m = 0; m < H && m < CONTEST_SLIDE_HEADS; m++) {
                int best = -1;
                for (int h = 0; h < H && h < CONTEST_SLIDE_HEADS; h++)
                    if (!done[h] && side * ct[k].contrib[h] > 0 &&
                        (best < 0 || side * ct[k].contrib[h] > side * ct[k].contrib[best]))
                        best = h;
                if (best < 0)
                    break;
                done[best] = 1;
                const int from = (int)lround(fmin(at, scale) / scale * half);
                at += side * ct[k].contrib[best];
                const int to = (int)lround(fmin(at, scale) / scale * half);
                if (side > 0)
                    draw_fill_rect(cv, x0 + from, bar_top, to - from, bar_h, draw_colour(best));
                else
                    draw_fill_rect(cv, x0 - to, bar_top, to - from, bar_h, draw_colour(best));
            }
            if (at > scale) /* cut at the axis's end: a white line across it */
                draw_fill_rect(cv, side > 0 ? x0 + half - 8 : x0 - half + 5, bar_top, 3, bar_h, (DrawRgb){255, 255, 255});
        }
        const double m = fmax(-scale, fmin(scale, ct[k].margin));
        const int mx = x0 + (int)lround(m / scale * half);
        draw_fill_rect(cv, mx - 1, bar_top - 4, 3, bar_h + 8, DRAW_INK);
    }
    /* The axis: one scale for every contest. */
    char num[64], plus[64];
    const int ay = y1 - axis_h + 6;
    axis_number(num, sizeof num, scale);
    snprintf(plus, sizeof plus, "+%s", num + 3); /* past U+2212 */
    snprintf(text, sizeof text, "\xe2\x86\x90 for the favourite");
    snprintf(a, sizeof a, "for its top key \xe2\x86\x92");
    if (draw_text(cv, f, num, SMALL_PX, SCORES_X, ay, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, "0", SMALL_PX, x0, ay, DRAW_MID, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, plus, SMALL_PX, SCORES_X + SCORES_W, ay, DRAW_END, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, text, SMALL_PX, x0 - 16, ay, DRAW_END, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, f, a, SMALL_PX, x0 + 16, ay, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    draw_fill_rect(cv, SCORES_X, ay - 3, SCORES_W, 1, RULE);
    return MHAVIZ_OK;
}

/* Long on purpose: the slide drawn in one pass, top to bottom: title, one
 * row of charts per head, the wide head, caption. */
/* The title and the caption (pull_caption into caption (2048)) over the slide of query i; shown (T)
 * the keys' labels, wide_att (T, T) the map of the head compared. */
static int draw_title(DrawCanvas *cv, const DrawFont *font, const PullLayer *p, int i, char **shown,
                      const float *wide_att, char *caption)
{
    char text[512];
    snprintf(text, sizeof text, "The pulls on '%s' (token %d): each head's, and the %s", shown[i], i,
             p->identity ? "wide head's, which adds them up" : "one head's, trained on its own");
    draw_ellipsize(font, text, sizeof text, TITLE_PX, (float)(SLIDE_W - 2 * MARGIN));
    if (draw_text(cv, font, text, TITLE_PX, MARGIN, MARGIN - 12, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    pull_caption(caption, 2048, p, i, shown, wide_att);
    if (draw_caption(cv, font, caption, 86) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* The contests on query i (pull.h), the closest first (the one that decided; insertion, stable):
 * the wide head's margin between its top key and each pulling head's favourite, split into the
 * heads' parts.  contested (n_heads) and parts (n_heads, n_heads) are scratch, contests (n_heads)
 * the result; returns how many.  None for a head trained on its own. */
static int sorted_contests(const MhaConfig *c, const MhaState *multi, const MhaState *single, const PullLayer *p,
                           int i, int *contested, double *parts, PullContest *contests)
{
    const int H = c->n_heads;
    const PullRow *row = &p->rows[i];
    int n_contests = p->identity ? pull_contested(p, i, contested) : 0;
    for (int k = 0; k < n_contests; k++) { /* the closest first: the one that decided (insertion, stable) */
        PullContest ct;
        pull_contest(c, multi->scores, single->scores, single->att, i, row->wide_top, contested[k],
                     parts + (size_t)k * H, &ct);
        int at = k;
        for (; at > 0 && fabs(contests[at - 1].margin) > fabs(ct.margin); at--)
            contests[at] = contests[at - 1];
        contests[at] = ct;
    }
    return n_contests;
}

/* How deep the heads' bars on query i go (contests (n_contests), the closest first).  One scale for
 * every bar on the left: each head's score less its top score, times per_head (1/sqrt(n_heads)
 * when the wide head adds them up: its part of the wide head's score), and the contests' parts
 * below, as deep as the closest choice needs (the heads' falls at the wide head's top key and at
 * the closest contested key, or its runner-up when none is; the closest contest's parts): there
 * the eye compares the heads on one axis. A bar deeper than that is cut (a white line across its
 * end): a head that falls by thousands far from its favourite shows it without hiding the others'
 * and the last keys' few points. */
static double bar_depth(const MhaConfig *c, const MhaState *multi, const PullLayer *p, int i,
                        const PullContest *contests, int n_contests, double per_head)
{
    const int T = c->T, H = c->n_heads;
    const PullRow *row = &p->rows[i];
    const int *top = p->top + (size_t)i * H;
    const int near = n_contests ? contests[0].other : row->runner_up;
    double depth = 0;
    for (int h = 0; h < H; h++) {
        const float *s_hi = multi->scores + ((size_t)h * T + i) * T;
        const double top_h = s_hi[top[h]];
        depth = fmax(depth, (top_h - s_hi[row->wide_top]) * per_head);
        if (near >= 0)
            depth = fmax(depth, (top_h - s_hi[near]) * per_head);
        if (n_contests) {
            double pro = 0, con = 0;
            for (int g = 0; g < H; g++)
                pro += fmax(contests[0].contrib[g], 0), con += fmax(-contests[0].contrib[g], 0);
            depth = fmax(depth, fmax(pro, con));
        }
    }
    return depth > 0 ? round_depth(depth) : 1;
}

/* The wide head's own scores when it has weights of its own (w_i (T) its row of scores): each key's
 * fall from its top key on its own scale, bars bar_w wide in L's slots, from y0 to y1. */
static int draw_own_scores(DrawCanvas *cv, const DrawFont *font, const float *w_i, const PullRow *row,
                           const Labels *L, int bar_w, int y0, int y1)
{
    double own_depth = 0;
    for (int j = 0; j < row->n_keys; j++)
        own_depth = fmax(own_depth, (double)w_i[row->wide_top] - w_i[j]);
    own_depth = own_depth > 0 ? round_depth(own_depth) : 1;
    if (draw_score_axis(cv, font, y0, y1, own_depth) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    for (int j = 0; j < row->n_keys; j++) {
        const int x = SCORES_X + (int)(j * L->slot_s + (L->slot_s - bar_w) / 2);
        draw_fill_rect(cv, x, y0, bar_w, (int)lround((w_i[row->wide_top] - w_i[j]) / own_depth * (y1 - y0)),
                       WIDE_COLOUR);
    }
    draw_fill_rect(cv, SCORES_X, y0, SCORES_W, 1, RULE);
    dot(cv, SCORES_X + (int)((row->wide_top + 0.5f) * L->slot_s), y0, WIDE_COLOUR);
    return MHAVIZ_OK;
}

/* The two column headers over the rows: the scores' scale (each head's part of the wide head's when
 * identity, else its own) and the softmax's. */
static int draw_headers(DrawCanvas *cv, const DrawFont *font, int identity, int H)
{
    char text[512];
    const int header_y = BODY_Y - (int)draw_line_height(HEADER_PX) - 8;
    if (identity)
        snprintf(text, sizeof text, "score \xe2\x88\x92 top score, \xc3\xb7 \xe2\x88\x9a%d: each head's part of "
                 "the wide head's", H);
    else
        snprintf(text, sizeof text, "score \xe2\x88\x92 the head's top score (0: its favourite), one scale");
    draw_ellipsize(font, text, sizeof text, HEADER_PX, (float)(WEIGHTS_X - SCORES_X - 20));
    if (draw_text(cv, font, text, HEADER_PX, SCORES_X, header_y, DRAW_START, DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK ||
        draw_text(cv, font, "softmax: its share of attention", HEADER_PX, WEIGHTS_X, header_y, DRAW_START,
                  DRAW_TOP, DRAW_INK, 0) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* The wide head's row label (from y0 to y1, its rule at y - WIDE_GAP): what its row shows, and the
 * heads' colour legend when it adds them up (identity). */
static int draw_wide_label(DrawCanvas *cv, const DrawFont *font, int identity, int H, int y, int y0, int y1)
{
    char more[256];
    if (identity)
        snprintf(more, sizeof more, "who chose its top\nkey: its margin over\neach pulling head's\nfavourite, split "
                 "into\nthe heads' parts;\n| : the margin");
    else
        snprintf(more, sizeof more, "trained separately:\nits own scores, not\nthe heads' sum, so no\nsplit into "
                 "parts;\ndot: its top key");
    if (draw_row_label(cv, font, y0, y1 - y0, NULL, identity ? "wide head" : "one head", more) != MHAVIZ_OK ||
        (identity && draw_legend(cv, font, H, y - WIDE_GAP + 14) != MHAVIZ_OK))
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

/* Head h's row (from y to y + unit, pad inside): its name and favourite key (top_h, shown as
 * top_label), its scores' falls from its top score (s_hi (n), times per_head) as bars bar_w wide on
 * the common depth, a cut line on bars deeper than it, and its softmax weights (att_hi (n)) with
 * numbers num_w wide; L's slots place the keys. */
static int draw_head_row(DrawCanvas *cv, const DrawFont *font, const float *s_hi, const float *att_hi, int n, int h,
                         int top_h, const char *top_label, const Labels *L, int y, int unit, int pad, int bar_w,
                         double depth, double per_head, float num_w)
{
    const int y0 = y + pad, y1 = y + unit - pad;
    const DrawRgb col = draw_colour(h);
    char name[32], second[200];
    snprintf(name, sizeof name, "head %d", h);
    if (pull_top_tied(att_hi, n, top_h)) /* no favourite to name */
        snprintf(second, sizeof second, "no favourite: a tie");
    else
        favourite_text(font, top_label, top_h, unit - pad, second, sizeof second);
    if (draw_row_label(cv, font, y + pad, unit - pad, &col, name, second) != MHAVIZ_OK ||
        draw_score_axis(cv, font, y0, y1, depth) != MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    for (int j = 0; j < n; j++) {
        const int x = SCORES_X + (int)(j * L->slot_s + (L->slot_s - bar_w) / 2);
        const double fall = (s_hi[top_h] - s_hi[j]) * per_head;
        const int len = (int)lround(fmin(fall, depth) / depth * (y1 - y0));
        draw_fill_rect(cv, x, y0, bar_w, len, col);
        if (fall > depth && y1 - y0 > 12) /* cut: deeper than the scale */
            draw_fill_rect(cv, x, y1 - 7, bar_w, 3, (DrawRgb){255, 255, 255});
    }
    draw_fill_rect(cv, SCORES_X, y0, SCORES_W, 1, RULE);
    dot(cv, SCORES_X + (int)((top_h + 0.5f) * L->slot_s), y0, col);
    if (draw_weights(cv, font, att_hi, n, L->slot_w, num_w, y0, y1, col) !=
        MHAVIZ_OK)
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

int render_pull(DrawCanvas *cv, const DrawFont *font, const char *png_path, const MhaConfig *c, char *const *tokens,
                const MhaState *multi, const MhaState *single, const PullLayer *p, int query, char *err,
                size_t errlen)
{
    const int T = c->T, H = c->n_heads, i = query;
    const PullRow *row = &p->rows[i];
    const int n = row->n_keys;
    const int *top = p->top + (size_t)i * H;
    int *contested = malloc((size_t)H * sizeof *contested);           /* (n_heads) the contested keys */
    double *parts = malloc((size_t)H * H * sizeof *parts);            /* (n_heads, n_heads) each contest's parts */
    PullContest *contests = malloc((size_t)H * sizeof *contests);     /* (n_heads) */
    char *caption = malloc(2048);
    char *labels = malloc((size_t)n * RENDER_LABEL_BYTES); /* (n, RENDER_LABEL_BYTES) the keys as shown */
    char **shown = malloc((size_t)n * sizeof *shown);       /* (n) key j's label, as every picture shows it */
    Labels L = {0};
    int rc = MHAVIZ_ENOMEM;
    if (!contested || !parts || !contests || !caption || !labels || !shown ||
        draw_canvas_reset(cv, SLIDE_W, SLIDE_H) != MHAVIZ_OK)
        goto cleanup;
    for (int j = 0; j < n; j++) { /* whitespace made visible, "" for the empty token (render.h) */
        shown[j] = labels + (size_t)j * RENDER_LABEL_BYTES;
        render_token_label(font, tokens[j], LABEL_PX, LABEL_MAX_LENGTH, shown[j]);
    }

    if (draw_title(cv, font, p, i, shown, single->att, caption) != MHAVIZ_OK)
        goto cleanup;

    /* The contests (pull.h): the wide head's margin between its top key and
     * each pulling head's favourite, split into the heads' parts. None for a
     * head trained on its own. */
    const int n_contests = sorted_contests(c, multi, single, p, i, contested, parts, contests);

    /* One scale for every bar on the left (bar_depth). */
    const double per_head = p->identity ? 1.0 / sqrt((double)H) : 1.0;
    const double depth = bar_depth(c, multi, p, i, contests, n_contests, per_head);

    /* Column headers. */
    if (draw_headers(cv, font, p->identity, H) != MHAVIZ_OK)
        goto cleanup;

    /* The numbers over the softmax bars: as wide as the widest of the slide. */
    float num_w = widest_weight(font, single->att + (size_t)i * T, n, draw_text_width(font, "0.00", WEIGHT_PX));
    for (int h = 0; h < H; h++)
        num_w = widest_weight(font, multi->att + ((size_t)h * T + i) * T, n, num_w);

    /* Rows: H of height unit, then the wide head's. */
    if (!plan_key_labels(font, shown, n, i, &L))
        goto cleanup;
    const int body_end = SLIDE_H - 12 - L.height;
    const int unit = (body_end - BODY_Y - WIDE_GAP) / (H + WIDE_ROWS);
    const int pad = unit >= 40 ? 8 : 2;
    const int bar_w = (int)fmaxf(1.0f, L.slot_s * 0.7f);

    for (int h = 0; h < H; h++) {
        const int y = BODY_Y + h * unit;
        if (draw_head_row(cv, font, multi->scores + ((size_t)h * T + i) * T, multi->att + ((size_t)h * T + i) * T, n,
                          h, top[h], shown[top[h]], &L, y, unit, pad, bar_w, depth, per_head, num_w) != MHAVIZ_OK)
            goto cleanup;
        if (h + 1 < H)
            draw_fill_rect(cv, LABEL_X, y + unit - 1, SLIDE_W - 2 * MARGIN, 1, (DrawRgb){235, 235, 235});
    }

    /* The wide head: who decided its choice, each contest on one common
     * axis; or, when it has weights of its own, its own scores. */
    const int y = BODY_Y + H * unit + WIDE_GAP, y0 = y + pad, y1 = y + WIDE_ROWS * unit - pad;
    draw_fill_rect(cv, LABEL_X, y - WIDE_GAP + 4, SLIDE_W - 2 * MARGIN, 2, DRAW_FRAME);
    const float *w_i = single->scores + (size_t)i * T;
    if (draw_wide_label(cv, font, p->identity, H, y, y0, y1) != MHAVIZ_OK)
        goto cleanup;
    if (p->identity) {
        if (draw_contests(cv, font, contests, n_contests, H, shown, tokens, n, depth, y0, y1) != MHAVIZ_OK)
            goto cleanup;
    } else {
        if (draw_own_scores(cv, font, w_i, row, &L, bar_w, y0, y1) != MHAVIZ_OK)
            goto cleanup;
    }
    if (draw_weights(cv, font, single->att + (size_t)i * T, n, L.slot_w, num_w, y0, y1, WIDE_COLOUR) != MHAVIZ_OK)
        goto cleanup;

    /* The keys, under both columns. */
    if (draw_labels(cv, font, shown, &L, SCORES_X, L.slot_s, body_end) != MHAVIZ_OK ||
        draw_labels(cv, font, shown, &L, WEIGHTS_X, L.slot_w, body_end) != MHAVIZ_OK)
        goto cleanup;

    rc = draw_write_png(cv, png_path, err, errlen);
cleanup:
    if (rc == MHAVIZ_ENOMEM && !err[0])
        snprintf(err, errlen, "%s: out of memory", png_path);
    free(contested);
    free(parts);
    free(contests);
    free(caption);
    free(labels);
    free(shown);
    free(L.shown);
    free(L.centre);
    return rc;
}
