/* run_memory.c — the memory a whole run needs (see run_memory.h). */
#include "run/run_memory.h"
#include "core/memory.h"
#include "core/model_summary.h"
#include "core/status.h"
#include "draw/draw.h"
#include "run/variant_write.h"

#include <math.h>

/* The program itself: code, libraries, thread stacks, the font, the glyph
 * caches (a class-size run without its arrays and canvases peaks about there). */
#define PROGRAM_BYTES ((size_t)8 << 20)

/* Bytes a thread holds for a picture of w x h pixels: the canvas (3 bytes
 * a pixel, 1 filter byte a row), the filtered copy stb_image_write makes of
 * it to compress, and 1 MB for libdeflate's compressor and the compressed
 * stream (pictures of flat cells compress to a few percent). */
static double canvas_bytes(int w, int h) { return 2.0 * (1.0 + 3.0 * w) * h + (1 << 20); }

/* The same, and with --svg the SVG document the canvas keeps beside its
 * pixels, for a picture of maps maps of n x n cells, side pixels a side
 * (draw_svg_bytes). */
static double picture_bytes(int w, int h, int maps, int n, int side)
{
    return canvas_bytes(w, h) + (draw_svg_recording() ? (double)draw_svg_bytes(maps, n, side) : 0.0);
}

/* Bytes the pictures hold at once. Each drawing thread keeps one canvas,
 * as large as the largest picture it drew: at worst two threads draw
 * overview.png and sharpness.png at --size, two others the 1920 x 1080
 * slides (query_NN.png, architecture.png), and every other one heatmaps
 * of T tokens; a thread may draw several of these. And the heap keeps, for
 * each thread, the freed filtered copy of a 1920 x 1080 slide for its next
 * picture (cli/main.c's mallopt). With --svg, each canvas also keeps its
 * picture's SVG document. -1 when out of memory. */
static double pictures_bytes(Renderer *r, const MhaInput *in, int threads, int n_pictures)
{
    RenderLayout heat;
    RenderOverviewLayout over;
    if (render_heatmap_layout(r, in->cfg.T, in->tokens, "", NULL, &heat) != MHAVIZ_OK ||
        render_overview_layout(r, in->cfg.n_heads + 1, in->cfg.T, in->tokens, in->cfg.causal, NULL, &over) !=
            MHAVIZ_OK)
        return -1;
    const int T = in->cfg.T, heat_n = (T + heat.block - 1) / heat.block, over_n = T < over.side ? T : over.side;
    const double heatmap = picture_bytes(heat.width, heat.height, 1, heat_n, heat.cell * heat_n);
    const double fixed = fmax(picture_bytes(SLIDE_W, SLIDE_H, 0, 0, 0), heatmap); /* no maps */
    const double largest =
        fmax(picture_bytes(over.width, over.height, in->cfg.n_heads + 1, over_n, over.side), fixed);
    const int held = threads < n_pictures ? threads : n_pictures; /* canvases */
    const int at_size = held < 2 ? held : 2;                         /* overview, sharpness */
    const int at_fixed = held - at_size < 2 ? held - at_size : 2;    /* the two slides */
    const double kept = (1.0 + 3.0 * SLIDE_W) * SLIDE_H; /* a slide's filtered copy */
    return at_size * largest + at_fixed * fixed + (held - at_size - at_fixed) * heatmap + held * kept;
}

int run_memory(Renderer *r, const MhaInput *in, const int *kv, int n_vars, int steps, int threads, int n_layers,
               size_t model_bytes, size_t *total, double *pictures)
{
    *pictures = pictures_bytes(r, in, threads, variant_write_pictures(in->cfg.n_heads, steps));
    if (*pictures < 0)
        return MHAVIZ_ENOMEM;
    size_t arrays = 0;
    for (int i = 0; i < n_vars; i++) {
        MhaConfig vc = in->cfg;
        vc.n_kv_heads = kv[i];
        arrays += memory_estimate(&vc, 0);
    }
    /* a model's load (its layers kept among it), and over several layers their summary and
     * one more slide's canvas, model_overview.png's or layers.png's, drawn while the
     * renderer's threads keep theirs (every layer's maps, each at most a row of the slide) */
    arrays += model_bytes;
    if (n_layers > 1) {
        const int H = in->cfg.n_heads, side = in->cfg.T < MODEL_SUMMARY_THUMB ? in->cfg.T : MODEL_SUMMARY_THUMB;
        arrays += model_summary_bytes(n_layers, H, in->cfg.T);
        *pictures += picture_bytes(SLIDE_W, SLIDE_H, n_layers * H, side, SLIDE_H / n_layers);
    }
    *total = arrays + in->parse_bytes + (size_t)*pictures + PROGRAM_BYTES;
    return MHAVIZ_OK;
}
