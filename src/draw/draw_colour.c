/* draw_colour.c — the colour maps, the palette of heads, a colour's
 * brightness (see draw_colour.h). */
#include "draw/draw_colour.h"

#include <stdio.h>
#include <string.h>

/* The colormap tables, generated once from published data (sources cited in
 * assets/make_colormaps.py): cmap_viridis, cmap_magma, cmap_cividis,
 * cmap_gray, cmap_rdbu, each (256, 3). */
#include "../../assets/colormaps.inc"

static const DrawCmapEntry CMAPS[] = {
    /* Light grey with darker hatching: no colour of these maps is a grey this light. */
    {"viridis", cmap_viridis, 1, {222, 222, 222}, {168, 168, 168}},
    {"magma", cmap_magma, 1, {222, 222, 222}, {168, 168, 168}},
    {"cividis", cmap_cividis, 1, {222, 222, 222}, {150, 150, 150}},
    /* A grey map needs a mask that is not grey: pale rose with rose hatching. */
    {"gray", cmap_gray, 1, {250, 218, 214}, {214, 120, 110}},
    /* Diverging, for the scores (their mask colours are the scores' own). */
    {"rdbu", cmap_rdbu, 0, {0, 0, 0}, {0, 0, 0}},
};
#define N_CMAPS (sizeof CMAPS / sizeof CMAPS[0])

DrawCmap draw_cmap(const char *name)
{
    for (size_t i = 0; i < N_CMAPS; i++)
        if (strcmp(name, CMAPS[i].name) == 0)
            return CMAPS[i].table;
    return NULL;
}

const DrawCmapEntry *draw_cmap_choosable(const char *name)
{
    for (size_t i = 0; i < N_CMAPS; i++)
        if (CMAPS[i].choosable && strcmp(name, CMAPS[i].name) == 0)
            return &CMAPS[i];
    return NULL;
}

void draw_cmap_names(char *buf, size_t cap, int mark_default)
{
    size_t n_choosable = 0, k = 0, len = 0;
    for (size_t i = 0; i < N_CMAPS; i++)
        n_choosable += (size_t)CMAPS[i].choosable;
    if (cap > 0)
        buf[0] = '\0';
    for (size_t i = 0; i < N_CMAPS && len < cap; i++) {
        if (!CMAPS[i].choosable)
            continue;
        const char *sep = k == 0 ? "" : k + 1 == n_choosable ? " or " : ", ";
        const int dflt = mark_default && strcmp(CMAPS[i].name, DRAW_CMAP_DEFAULT) == 0;
        const int w = snprintf(buf + len, cap - len, "%s%s%s", sep, CMAPS[i].name, dflt ? " (default)" : "");
        len += w > 0 ? (size_t)w : 0;
        k++;
    }
}

DrawRgb draw_cmap_at(DrawCmap map, float t)
{
    const int i = !(t >= 0.0f) ? 0 : t >= 1.0f ? 255 : (int)(t * 255.0f + 0.5f); /* NaN: 0 */
    return (DrawRgb){map[i][0], map[i][1], map[i][2]};
}

int draw_luma(DrawRgb col)
{
    return (2126 * col.r + 7152 * col.g + 722 * col.b) / 10000;
}

DrawRgb draw_colour(int k)
{
    static const DrawRgb colours[DRAW_N_COLOURS] = {
        {0, 114, 178}, {230, 159, 0}, {0, 158, 115}, {213, 94, 0},
        {204, 121, 167}, {86, 180, 233}, {170, 150, 20}, {110, 110, 110},
    };
    return colours[k % DRAW_N_COLOURS];
}
