/* labels.c — token labels on every picture: the one rule for which tokens
 * get a label, at what size and where (labels.h), and how a label is drawn
 * (punctuation on a chip). The label shown for a token and text fitted to
 * a width are in fit_text.c, the maps' labels in map_labels.c. */
#include "pictures/labels.h"
#include "draw/draw.h"
#include "text/utf8.h"

#include <ctype.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ the rule */

/* 1 when token t's text appears again among tokens (T). */
static int labels_repeated(char *const *tokens, int T, int t)
{
    if (!tokens)
        return 0;
    for (int u = 0; u < T; u++)
        if (u != t && strcmp(tokens[u], tokens[t]) == 0)
            return 1;
    return 0;
}

/* A token's text and index, sorted by text to find the repeated ones in T log T. */
typedef struct {
    const char *text;
    int t;
} Entry;

static int by_text(const void *a, const void *b)
{
    const Entry *x = a, *y = b;
    const int c = strcmp(x->text, y->text);
    return c ? c : (x->t > y->t) - (x->t < y->t);
}

/* rep (T) = 1 for each token whose text appears again; 0 when out of memory. */
static int mark_repeated(char *const *tokens, int T, unsigned char *rep)
{
    Entry *e = malloc((size_t)T * sizeof *e); /* (T) the tokens sorted by text */
    if (!e)
        return 0;
    for (int t = 0; t < T; t++)
        e[t] = (Entry){tokens[t], t};
    qsort(e, (size_t)T, sizeof *e, by_text);
    for (int k = 0; k < T; k++)
        rep[e[k].t] = (unsigned char)((k > 0 && strcmp(e[k - 1].text, e[k].text) == 0) ||
                                      (k + 1 < T && strcmp(e[k + 1].text, e[k].text) == 0));
    free(e);
    return 1;
}

/* Token t's label centre on an axis of T tokens: the middle of its token,
 * moved in to keep half a line (half) from the axis's ends. */
static float centre_of(int t, int T, float pitch, float half)
{
    const float c = ((float)t + 0.5f) * pitch, end = (float)T * pitch;
    if (end < 2.0f * half)
        return end / 2.0f;
    return c < half ? half : c > end - half ? end - half : c;
}

/* Place token t's label on level 0 unless a placed one is closer than
 * room (only tokens within room and a line of t can be: the ends move a
 * centre by half a line at most). */
static int try_place(int t, int T, float pitch, float px, unsigned char *shown, float *centre)
{
    const float c = centre_of(t, T, pitch, 0.5f * px), room = LABELS_SPACING * px;
    const int reach = (int)ceilf((room + px) / pitch) + 1;
    if (shown[t])
        return 1;
    for (int u = t - reach < 0 ? 0 : t - reach; u < T && u <= t + reach; u++)
        if (shown[u] && fabsf(centre[u] - c) < room)
            return 0;
    shown[t] = 1;
    centre[t] = c;
    return 1;
}

LabelsPlan labels_plan(int T, char *const *tokens, int query, float pitch, float max_px, int max_levels,
                       unsigned char *shown, float *centre)
{
    return labels_plan_min(T, tokens, query, pitch, LABELS_MIN_PX, max_px, max_levels, shown, centre);
}

LabelsPlan labels_plan_min(int T, char *const *tokens, int query, float pitch, float min_px, float max_px,
                           int max_levels, unsigned char *shown, float *centre)
{
    if (min_px < LABELS_MIN_PX)
        min_px = LABELS_MIN_PX;
    LabelsPlan p = {min_px, 1, 1, 0, 0};
    if (max_px < min_px)
        max_px = min_px;
    memset(shown, 0, (size_t)T);
    for (int t = 0; t < T; t++)
        centre[t] = ((float)t + 0.5f) * pitch;

    /* Every token: one level, else as few staggered ones as fit. */
    for (int levels = 1; T <= LABELS_ALL_UP_TO && levels <= max_levels && levels <= LABELS_MAX_LEVELS; levels++) {
        const float px = fminf(max_px, (float)levels * pitch / LABELS_SPACING);
        if (px >= min_px) {
            p.px = floorf(px);
            p.levels = levels;
            p.n = T;
            for (int t = 0; t < T; t++)
                shown[t] = (unsigned char)(1 + t % levels);
            return p;
        }
    }

    /* Thinned, one level, at the smallest size: the tokens that must have a
     * label first, then every step-th where there is room. */
    p.thinned = 1;
    const float px = min_px;
    for (int mag = 1;; mag *= 10) {
        static const int nice[3] = {1, 2, 5};
        int k = 0;
        for (; k < 3; k++) {
            p.step = nice[k] * mag;
            if ((float)p.step * pitch >= LABELS_SPACING * px)
                break;
        }
        if (k < 3 || mag > T)
            break;
    }
    try_place(0, T, pitch, px, shown, centre);
    if (T > 1)
        try_place(T - 1, T, pitch, px, shown, centre);
    if (query >= 0 && query < T)
        try_place(query, T, pitch, px, shown, centre);
    unsigned char *rep = tokens ? malloc((size_t)T) : NULL; /* (T) 1: the token's text appears again */
    if (rep && !mark_repeated(tokens, T, rep))
        for (int t = 0; t < T; t++) /* out of memory to sort: the slow way */
            rep[t] = (unsigned char)labels_repeated(tokens, T, t);
    for (int t = 0; rep && t < T; t++)
        if (rep[t])
            try_place(t, T, pitch, px, shown, centre);
    free(rep);
    for (int t = 0; t < T; t += p.step)
        try_place(t, T, pitch, px, shown, centre);
    for (int t = 0; t < T; t++)
        p.n += shown[t] != 0;
    p.thinned = p.n < T;
    return p;
}

int labels_overlap(const LabelsPlan *p, int T, const unsigned char *shown, const float *centre, const float *from,
                   const float *to, int *a, int *b)
{
    for (int s = 0; s < T; s++) {
        if (!shown[s])
            continue;
        for (int t = s + 1; t < T; t++) {
            if (!shown[t] || fabsf(centre[t] - centre[s]) >= p->px)
                continue;
            const int k = shown[s] - 1, l = shown[t] - 1;
            if (from[k] < to[l] && from[l] < to[k]) {
                *a = s, *b = t;
                return 1;
            }
        }
    }
    return 0;
}

/* English ordinal suffix: 2 -> "nd", 5 -> "th", 21 -> "st", 12 -> "th". */
static const char *ordinal(int n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

void labels_note(const LabelsPlan *p, char *buf, unsigned long len)
{
    if (!p->thinned)
        snprintf(buf, len, "%s", "");
    else
        snprintf(buf, len, "%d of the tokens labelled: the first, the last, the repeated words and every %d%s",
                 p->n, p->step, ordinal(p->step));
}

/* 1 when code point cp is punctuation: ASCII's, Latin-1's (« » ¿ ¡ · ...),
 * the General Punctuation block (curly quotes, dashes, the ellipsis) and
 * CJK's (、 。 and its brackets). */
static int is_punctuation(unsigned cp)
{
    if (cp < 0x80)
        return ispunct((int)cp) != 0;
    return cp == 0xA1 || cp == 0xA7 || cp == 0xAB || cp == 0xB6 || cp == 0xB7 || cp == 0xBB || cp == 0xBF ||
           (cp >= 0x2010 && cp <= 0x205E) || (cp >= 0x3001 && cp <= 0x3003) || (cp >= 0x3008 && cp <= 0x3011);
}

int labels_is_punctuation(const char *label)
{
    const unsigned char *p = (const unsigned char *)label;
    if (!*p)
        return 0;
    while (*p) {
        unsigned cp;
        const int n = utf8_decode(p, SIZE_MAX, &cp);
        if (n == 0 || !is_punctuation(cp))
            return 0;
        p += n;
    }
    return 1;
}

int labels_draw(DrawCanvas *c, const DrawFont *f, const char *label, float px, int x, int y, int along, int rotated)
{
    static const DrawRgb CHIP = {215, 215, 215};
    if (!labels_is_punctuation(label))
        return draw_text(c, f, label, px, x, y, along, DRAW_MID, DRAW_INK, rotated);
    /* The chip: along, the text's width and a little more (at least a
     * line's), the text centred in it; across, from above the capitals'
     * middle to below the baseline, where "." and "," sit. */
    const int w = (int)ceilf(fmaxf(draw_text_width(f, label, px) + 0.4f * px, 1.0f * px));
    const int up = (int)ceilf(0.45f * px), down = (int)ceilf(0.55f * px);
    const int start = along == DRAW_START ? 0 : along == DRAW_MID ? -w / 2 : -w; /* along the text, from the anchor */
    if (rotated) { /* along runs up the canvas, the text's top faces left */
        draw_fill_rect(c, x - up, y - start - w, up + down, w, CHIP);
        return draw_text(c, f, label, px, x, y - start - w / 2, DRAW_MID, DRAW_MID, DRAW_INK, 1);
    }
    draw_fill_rect(c, x + start, y - up, w, up + down, CHIP);
    return draw_text(c, f, label, px, x + start + w / 2, y, DRAW_MID, DRAW_MID, DRAW_INK, 0);
}
