/* map_labels.c — the maps' labels: the tokens along a map's query rows and
 * key columns, planned by labels.h's rule, cut to fit (fit_text.c) and
 * painted, further levels with a tick back to the map (render_parts.h). */
#include "pictures/render_parts.h"
#include "pictures/labels.h"
#include "core/status.h"
#include "draw/draw.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

int render_labelset_alloc(LabelSet *s, int T)
{
    memset(s, 0, sizeof *s);
    s->text = calloc((size_t)T, LABEL_BYTES);
    s->shown = calloc((size_t)T, 1);
    s->centre = calloc((size_t)T, sizeof *s->centre);
    return s->text && s->shown && s->centre;
}

void render_labelset_free(LabelSet *s)
{
    free(s->text);
    free(s->shown);
    free(s->centre);
}

/* Plan the labels for T tokens at pitch pixels a token (labels.h), at most
 * max_px and max_levels, each cut to max_w pixels; returns the pixels the
 * labels take across the axis (both levels and the gap between). */
float render_plan_labels(const Renderer *r, char *const *tokens, int T, float pitch, float max_px, int max_levels,
                         float max_w, LabelSet *s)
{
    s->plan = labels_plan(T, tokens, -1, pitch, max_px, max_levels, s->shown, s->centre);
    memset(s->level_w, 0, sizeof s->level_w);
    for (int t = 0; t < T; t++) {
        if (!s->shown[t])
            continue;
        char *l = s->text + (size_t)t * LABEL_BYTES;
        render_token_label(r->font, tokens[t], s->plan.px, max_w, l);
        const float w = draw_text_width(r->font, l, s->plan.px);
        if (w > s->level_w[s->shown[t] - 1])
            s->level_w[s->shown[t] - 1] = w;
    }
    float out = 0.0f;
    for (int l = 0; l < s->plan.levels; l++) {
        s->from[l] = out;
        out += s->level_w[l] + (l + 1 < s->plan.levels ? LEVEL_GAP : 0.0f);
    }
    return out;
}

/* The widest label of all T tokens at line height px (no cut past max_w). */
float render_widest_label(const Renderer *r, char *const *tokens, int T, float px, float max_w)
{
    float widest = 0.0f;
    char l[LABEL_BYTES];
    for (int t = 0; t < T; t++) {
        render_token_label(r->font, tokens[t], px, max_w, l);
        widest = fmaxf(widest, draw_text_width(r->font, l, px));
    }
    return widest;
}

/* Query labels left of the rows (right-aligned at x_right) and key labels
 * under the columns (turned, ending at y_top), as s planned them: a label
 * of a further level set beyond the levels before it, with a thin tick
 * back to the map so the eye finds its row. Either side is skipped when
 * its flag is 0. */
int render_paint_labels(DrawCanvas *c, const Renderer *r, const LabelSet *s, int T, int map_x, int map_y,
                        int x_right, int y_top, int query, int key)
{
    const float px = s->plan.px;
    static const DrawRgb TICK = {175, 175, 175};
    for (int t = 0; t < T; t++) {
        if (!s->shown[t])
            continue;
        const char *l = s->text + (size_t)t * LABEL_BYTES;
        const int centre = (int)floorf(s->centre[t]), far = s->shown[t] > 1;
        const int dx = (int)ceilf(s->from[s->shown[t] - 1]);
        if (far && query)
            draw_fill_rect(c, x_right - dx + 3, map_y + centre, dx - 3, 1, TICK);
        if (far && key)
            draw_fill_rect(c, map_x + centre, y_top, 1, dx - 3, TICK);
        if ((query && labels_draw(c, r->font, l, px, x_right - dx, map_y + centre, DRAW_END, 0) != MHAVIZ_OK) ||
            (key && labels_draw(c, r->font, l, px, map_x + centre, y_top + dx, DRAW_END, 1) != MHAVIZ_OK))
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}
