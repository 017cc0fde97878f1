/* labels.c — text on the pictures: the label shown for a token, which
 * tokens get one when there is no room for all (three rules, one per kind
 * of picture), and text fitted to a width (shrunk, put on two lines, or
 * wrapped at its parts: the ways of fitting text, in one place). */
#include "pictures/render_parts.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* -------------------------------------------------------------------- text */

void render_token_label(const DrawFont *font, const char *tok, float px, float max_w, char *buf)
{
    size_t n = 0;
    int only_space = *tok != '\0';
    for (const char *p = tok; *p; p++)
        if (!strchr(" \t\n\r\v\f", *p))
            only_space = 0;
    if (!*tok) {
        snprintf(buf, LABEL_BYTES, "\"\"");
    } else {
        const char *p = tok;
        for (; *p && n + 8 < LABEL_BYTES; p++) {
            const char *rep = NULL;
            switch (*p) {
            case '\n': rep = "\\n"; break;
            case '\t': rep = "\\t"; break;
            case '\r': rep = "\\r"; break;
            case '\v': rep = "\\v"; break;
            case '\f': rep = "\\f"; break;
            case ' ': rep = only_space ? "\xe2\x90\xa3" : NULL; break;
            }
            if (rep) {
                size_t k = strlen(rep);
                memcpy(buf + n, rep, k);
                n += k;
            } else {
                buf[n++] = *p;
            }
        }
        if (*p) {
            /* Longer than any margin: cut at a code point boundary and say so. */
            while (n > 0 && ((unsigned char)*p & 0xC0) == 0x80)
                n--, p--;
            memcpy(buf + n, "\xe2\x80\xa6", 4);
        } else {
            buf[n] = '\0';
        }
    }
    draw_ellipsize(font, buf, LABEL_BYTES, px, max_w);
}

float fit_shrink(const DrawFont *font, char *text, size_t cap, float px, float min_px, float max_w)
{
    while (px > min_px && draw_text_width(font, text, px) > max_w)
        px -= 1.0f;
    draw_ellipsize(font, text, cap, px, max_w);
    return px;
}

float fit_two_lines(const DrawFont *font, const char *text, float px, float min_px, float max_w, char *first,
                    char *rest, size_t cap)
{
    for (;; px -= 2) {
        /* Fill the first line word by word, the rest goes to the second. */
        size_t cut = strlen(text);
        if (draw_text_width(font, text, px) > max_w) {
            cut = 0;
            for (size_t k = 0; text[k]; k++)
                if (text[k] == ' ') {
                    snprintf(first, cap, "%.*s", (int)k, text);
                    if (draw_text_width(font, first, px) > max_w)
                        break;
                    cut = k;
                }
        }
        snprintf(first, cap, "%.*s", (int)cut, text);
        snprintf(rest, cap, "%s", text[cut] ? text + cut + 1 : "");
        if (draw_text_width(font, rest, px) <= max_w || px <= min_px)
            break;
    }
    draw_ellipsize(font, rest, cap, px, max_w);
    return px;
}

void wrap_parts(const DrawFont *font, const char *text, float px, float max_w, TextLines *out)
{
    static const char sep[] = " \xc2\xb7 ";
    out->n = 0;
    for (const char *p = text; p && *p;) {
        const char *end = strstr(p, sep);
        const size_t len = end ? (size_t)(end - p) : strlen(p);
        char *cur = out->line[out->n > 0 ? out->n - 1 : 0];
        char joined[sizeof out->line[0]];
        snprintf(joined, sizeof joined, "%s%s%.*s", cur, sep, (int)len, p);
        if (out->n > 0 && (draw_text_width(font, joined, px) <= max_w || out->n == TEXT_LINES))
            snprintf(cur, sizeof out->line[0], "%s", joined);
        else
            snprintf(out->line[out->n++], sizeof out->line[0], "%.*s", (int)len, p);
        p = end ? end + strlen(sep) : NULL;
    }
    for (int k = 0; k < out->n; k++)
        draw_ellipsize(font, out->line[k], sizeof out->line[k], px, max_w);
}

int render_label_step(float pitch, float min_pitch)
{
    int step = 1;
    for (int mag = 1;; mag *= 10) {
        static const int nice[3] = {1, 2, 5};
        for (int k = 0; k < 3; k++) {
            step = nice[k] * mag;
            if ((float)step * pitch >= min_pitch || mag > 100000)
                return step;
        }
    }
}

LabelPick label_pick(float pitch, float min_pitch)
{
    LabelPick lp;
    lp.step = render_label_step(pitch, min_pitch);
    lp.need = (int)ceilf(min_pitch / pitch);
    if (lp.need < 1)
        lp.need = 1;
    return lp;
}

int label_need(float px, float pitch)
{
    const int need = (int)ceilf((1.1f * px + 0.5f * fmaxf(px, pitch)) / pitch - 0.5f);
    return need < 1 ? 1 : need;
}

/* Which tokens get a label when not all fit: three rules, one per kind of
 * picture, kept apart here (one rule for all would change pictures).
 *
 * 1. The maps (heatmaps, overview panels): the first, the last, and the
 *    multiples of lp.step at least lp.need tokens from both. */
static int is_labelled(int t, int T, LabelPick lp)
{
    if (lp.step <= 1 || t == 0 || t == T - 1)
        return 1;
    return t % lp.step == 0 && t >= lp.need && T - 1 - t >= lp.need;
}

/* 2. sharpness.png's axis: every step-th token, and the last, which keeps
 *    a step's room from the one before it. */
int is_labelled_axis(int t, int T, int step) { return t == T - 1 || (t % step == 0 && T - 1 - t >= step); }

/* 3. The pull slide's keys: every step-th key and the last, the step the
 *    keys a line of text covers (line_h pixels over slots of slot). */
int key_label_step(float line_h, float slot) { return (int)ceilf(line_h / slot); }
int is_labelled_key(int j, int n, int step) { return j % step == 0 || j == n - 1; }

const char *ordinal(int n)
{
    if (n % 100 >= 11 && n % 100 <= 13)
        return "th";
    return n % 10 == 1 ? "st" : n % 10 == 2 ? "nd" : n % 10 == 3 ? "rd" : "th";
}

float make_labels(const Renderer *r, char *const *tokens, int T, LabelPick lp, float px, float max_w,
                  char *labels)
{
    float widest = 0.0f;
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        char *l = labels + (size_t)t * LABEL_BYTES;
        render_token_label(r->font, tokens[t], px, max_w, l);
        const float w = draw_text_width(r->font, l, px);
        if (w > widest)
            widest = w;
    }
    return widest;
}

int token_labels(DrawCanvas *c, const Renderer *r, const char *labels, int T, LabelPick lp,
                             float pitch, float px, int map_x, int map_y, int x_right, int y_top,
                             int query, int key)
{
    const int half = (int)ceilf(0.5f * px), side = (int)lroundf(pitch * (float)T);
    for (int t = 0; t < T; t++) {
        if (!is_labelled(t, T, lp))
            continue;
        const char *l = labels + (size_t)t * LABEL_BYTES;
        int centre = (int)floorf(((float)t + 0.5f) * pitch);
        if (lp.step > 1 && side > 2 * half) {
            /* thinned: the end labels stay within the map's edges, clear of the next panel's */
            centre = centre < half ? half : centre > side - half ? side - half : centre;
        }
        if ((query && draw_text(c, r->font, l, px, x_right, map_y + centre, DRAW_END, DRAW_MID, DRAW_INK, 0) != MHAVIZ_OK) ||
            (key && draw_text(c, r->font, l, px, map_x + centre, y_top, DRAW_END, DRAW_MID, DRAW_INK, 1) != MHAVIZ_OK))
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}
