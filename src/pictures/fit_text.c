/* fit_text.c — text made to fit a picture: the label shown for a token,
 * and text shrunk, cut or wrapped to a width (render_parts.h). */
#include "pictures/render_parts.h"
#include "pictures/render.h"
#include "draw/draw.h"
#include "text/token_text.h"

#include <stdio.h>
#include <string.h>

void render_token_label(const DrawFont *font, const char *tok, float px, float max_w, char *buf)
{
    token_text(buf, LABEL_BYTES, tok); /* the report's rule: one way to show a token */
    draw_ellipsize(font, buf, LABEL_BYTES, px, max_w);
}

float render_fit_shrink(const DrawFont *font, char *text, size_t cap, float px, float min_px, float max_w)
{
    while (px > min_px && draw_text_width(font, text, px) > max_w)
        px -= 1.0f;
    draw_ellipsize(font, text, cap, px, max_w);
    return px;
}

float render_fit_two_lines(const DrawFont *font, const char *text, float px, float min_px, float max_w, char *first,
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

void render_wrap_parts(const DrawFont *font, const char *text, float px, float max_w, TextLines *out)
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
