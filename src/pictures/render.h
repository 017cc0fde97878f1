/* render.h — the renderer and the maps' pictures: attention maps as PNG
 * heatmaps for slides, and the jobs every picture of a run is drawn as.
 *
 * A Renderer holds what every picture shares (the font, the colormap), so a
 * run loads them once. Pictures:
 *   render_heatmap     one softmax map (T, T) on the fixed 0..1 scale
 *   render_scores      one map of pre-softmax scores (T, T), each row less
 *                      its maximum: blue (10 below) to white (the row's winner)
 *   render_overview    the heads' softmax maps and the wide head's on one slide
 *   render_draw_sharpness  each query's effective number of keys, head by
 *                      head and in the wide head, as lines (sharpness.c)
 *   render_jobs        any list of pictures, each a job whose draw function
 *                      is its kind (one of the above, or a slide's own: the
 *                      pull slide, the architecture), in parallel (OpenMP); with
 *                      render_jobs_progress, reporting as pictures finish
 * Token labels on every picture: labels.h.
 * Every function returns MHAVIZ_OK, MHAVIZ_EIO (cannot load the font or
 * write the PNG; err names the file) or MHAVIZ_ENOMEM. The PNG bytes depend
 * only on the inputs and options, never on the thread count. */
#ifndef MHAVIZ_RENDER_H
#define MHAVIZ_RENDER_H

#include "draw/draw.h"

#include <stddef.h>

typedef struct {
    const char *font_path; /* NULL: DejaVu Sans at its Debian path */
    const char *cmap;      /* a map draw_cmap_choosable knows; NULL: DRAW_CMAP_DEFAULT */
    int cell_px;           /* cell size in pixels; 0 = chosen for slides */
    int annotate;          /* -1 = when T <= 16, 0 = never, 1 = always (when the cells are big enough) */
    int overview_w;        /* overview.png size in pixels, default 1920 x 1080 */
    int overview_h;
} RenderOptions;

/* Defaults: DejaVu Sans, DRAW_CMAP_DEFAULT, automatic cell size and annotation, 1920x1080 overview. */
void render_default_options(RenderOptions *o);

/* 1 when name is a colormap render_open accepts. */
int render_cmap_known(const char *name);

typedef struct Renderer Renderer;

/* Load the font and colormap. Returns MHAVIZ_OK, MHAVIZ_EIO (font file
 * unreadable or not a font; err names it), MHAVIZ_EINPUT (unknown colormap)
 * or MHAVIZ_ENOMEM. On success *out is owned by the caller and freed with
 * render_close. */
int render_open(Renderer **out, const RenderOptions *o, char *err, size_t errlen);
void render_close(Renderer *r);

/* For the pictures drawn outside the job list (variants.png, pull_slide.h, ...)
 * with draw.h: the font r draws its text in (owned by r); */
const DrawFont *render_font(const Renderer *r);

/* The colours r draws the maps with: the softmax maps' colour map (256
 * entries) and its name, the masked cells' flat colour, and the score
 * maps' (their colour map is draw_cmap("rdbu")'s blue half). */
typedef struct {
    DrawCmap cmap;
    const char *name;
    DrawRgb mask, scores_mask;
    DrawRgb scores_clipped; /* score cells below the scale's end (render_scores_end) */
} RenderColours;
RenderColours render_colours(const Renderer *r);

/* softmax map att (T, T) painted on r's 0..1 colour scale, masked cells
 * hatched, framed, into c at (x, y) as an overview panel of at most side
 * pixels (returns the side drawn: side, or less to give each token whole
 * pixels when side >= T); */
int render_paint_map(const Renderer *r, DrawCanvas *c, const float *att, int T, int causal, int x, int y, int side);

/* and the colour bar of that scale at (x, y), w x h, ticks at the right set
 * at tick_px, with a "masked" swatch below when causal masks a cell of T
 * tokens' maps. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_weights_bar(const Renderer *r, DrawCanvas *c, int x, int y, int w, int h, float tick_px, int causal,
                       int T);

/* Write att (T, T), row = query, as a heatmap PNG at png_path: query labels
 * left, key labels below, title on top, colour bar at the right. When causal,
 * cells with key > query are drawn in the mask colour. */
int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen);

/* Where render_heatmap (and render_scores) put things for T tokens and
 * this title and subtitle (NULL: none): for tests, and for callers placing
 * the pictures. At the default cell size the figure fits a 1920 x 1080
 * slide: labels are cut shorter, then the map made smaller, when they
 * would not fit. Every token is labelled while a token has at least
 * 19.8 px (1.1 x the 18 px label line): up to T = 40 in the 800 px map. */
typedef struct {
    int width, height;   /* the PNG, pixels */
    int map_x, map_y;    /* top-left pixel of the map */
    int cell;            /* pixels per drawn cell side */
    int block;           /* tokens per cell side: 1, or k when k x k blocks are averaged */
    int label_step;      /* 1: every token labelled; else thinned, with every label_step-th (labels.h) */
    int label_levels;    /* 1, or 2: labels staggered on two levels */
    float label_px;      /* line height of the token labels */
    int labelled;        /* tokens with a label */
    int frame;           /* pixels of dark frame just outside the map */
} RenderLayout;

/* Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_heatmap_layout(Renderer *r, int T, char *const *tokens, const char *title, const char *subtitle,
                          RenderLayout *out);

/* Same layout for scores (T, T) before the softmax, drawn as each row less
 * its maximum over the visible keys (the softmax ignores a constant added
 * to a row): the row's winner is 0, near-white, the others negative, blue
 * down to -10 (e^-10: what is further down no longer counts; such cells are
 * clipped, dark grey, and the colour bar says so), or down to the largest
 * distance from a row's maximum, rounded up, when that is less. */
int render_scores(Renderer *r, const char *png_path, const float *scores, int T,
                  char *const *tokens, int causal, const char *title,
                  char *err, size_t errlen);

/* out (T, T) = scores (T, T) less each row's maximum over its visible keys
 * (keys 0..i when causal); masked cells come out 0. */
void render_scores_less_row_max(float *out, const float *scores, int T, int causal);

/* Where the colours of a map of scores (T, T) end, below each row's top
 * score: the largest gap from a visible score to its row's top, rounded
 * up to a number a class reads off the colour bar (0.757 -> 0.8), at most
 * 10 (a key 10 below the top gets e^-10 of its weight: nothing a slide
 * shows). *clipped is 1 when some cell lies further down: such cells are
 * drawn in RenderColours' scores_clipped, not on the scale. The same end
 * for the scores and for the scores less their row's maximum. */
float render_scores_end(const float *scores, int T, int causal, int *clipped);

/* Write n_maps softmax maps, maps[p] (T, T), as panels of one figure of
 * o->overview_w x o->overview_h pixels with one shared colour bar; panel p is
 * titled panel_titles[p], the figure title. With two maps or more the last
 * one (the single wide head's) stands apart: the others in a grid, then a
 * rule, then its panel with query and key labels of its own. Token labels
 * where they fit. (A subtitle line: through render_jobs.) */
int render_overview(Renderer *r, const char *png_path, const float *const *maps, int n_maps,
                    int T, char *const *tokens, int causal, const char *title,
                    char *const *panel_titles, char *err, size_t errlen);

/* Where render_overview puts things: grid panel p (row p / cols, column
 * p % cols) has its map's top-left pixel at (map_x + col dx, map_y + row dy);
 * when apart, the last map's is at (wide_x, wide_y). */
typedef struct {
    int width, height;   /* the PNG, pixels */
    int rows, cols;      /* the grid of panels */
    int map_x, map_y;    /* top-left pixel of panel 0's map */
    int dx, dy;          /* from one panel's map to the next column's / row's */
    int side;            /* map side in pixels */
    int cell;            /* pixels per drawn cell side */
    int block;           /* 1, or when T > side the most tokens a block side holds: the panel's
                            side pixels share the T tokens out evenly (block - 1 or block each) */
    int label_step;      /* 1: every token labelled; else thinned (labels.h); 0: no token labels */
    int label_levels;    /* 1, or 2: labels staggered on two levels; 0: none */
    int labelled;        /* tokens with a label */
    float label_px;      /* line height of the token labels */
    int frame;           /* pixels of dark frame just outside each map */
    int apart;           /* 1: the last map stands apart, right of the grid */
    int wide_x, wide_y;  /* top-left pixel of the last map's when apart */
} RenderOverviewLayout;

/* For subtitle (NULL: none). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_overview_layout(Renderer *r, int n_maps, int T, char *const *tokens, int causal, const char *subtitle,
                           RenderOverviewLayout *out);

/* Where sharpness.png puts things (the overview's size, --size): token i
 * at x = plot_x + (i + 0.5) pitch; an effective number of keys v (1 to
 * keys_max) at y = plot_y + (keys_max - v) / (keys_max - 1) (plot_h - lift):
 * one key lies lift pixels above the x axis, so a line there shows. Head p
 * of H is drawn (p - (H - 1) / 2) head_gap pixels lower, so heads with one
 * value lie side by side; the wide head's line is not moved. */
typedef struct {
    int plot_x, plot_y, plot_w, plot_h; /* the plot area */
    float pitch;                        /* pixels per query token */
    int keys_max;                       /* the top of the y axis: a whole number of keys, at least 2 */
    int lift;                           /* pixels from the x axis up to 1 key */
    float head_gap;                     /* pixels between the lines of two heads with one value */
    int label_step;                     /* 1: every token labelled; else thinned (labels.h) */
    int label_levels;                   /* 1, or 2 staggered */
    float label_px;                     /* line height of the token labels */
    int labelled;                       /* tokens with a label */
    float head_px, wide_px;             /* line thickness: each head's, the wide head's */
} RenderSharpnessLayout;

/* For rows (n_maps, T) as RenderJob's (the last map the wide head's) of T
 * tokens, legend[p] naming map p (NULL: "map p"), and subtitle (NULL:
 * none). Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_sharpness_layout(Renderer *r, const double *rows, int n_maps, int T, char *const *tokens, int causal,
                            char *const *legend, const char *subtitle, RenderSharpnessLayout *out);

/* One picture to draw: its kind is the function that draws it, one of the
 * render_draw_* below or a slide's own. Nothing here is owned by the job. */
typedef struct RenderJob RenderJob;
typedef int (*RenderDraw)(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                          char *err, size_t errlen);
struct RenderJob {
    RenderDraw draw;                /* draws the picture on the thread's canvas c and writes it at path,
                                       returning a status as the functions here do */
    const char *path;               /* the PNG to write */
    const char *title;
    const float *values;            /* weights: (T, T) softmax weights; scores: (T, T) scores */
    const float *const *maps;       /* overview: (n_maps) pointers to (T, T) softmax maps, the last the
                                       single wide head's */
    const double *rows;             /* sharpness: (n_maps, T) each map's rows' normalised entropy, NAN for a
                                       row of one key (LayerSummary's rows_entropy_norm), the wide head's last */
    int n_maps;                     /* overview, sharpness */
    char *const *panel_titles;      /* overview: (n_maps) panel titles; sharpness: the legend's lines */
    const char *subtitle;           /* a line under the title; NULL: none */
    const void *arg;                /* a slide's own draw function: what it draws from */
};

/* The kinds of picture drawn here: a softmax map (values) on its own
 * figure, a scores map (values, drawn less each row's maximum), the
 * overview (maps), sharpness (rows; sharpness.c). */
int render_draw_weights(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                        char *err, size_t errlen);
int render_draw_scores(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                       char *err, size_t errlen);
int render_draw_overview(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                         char *err, size_t errlen);
int render_draw_sharpness(Renderer *r, DrawCanvas *c, const RenderJob *j, int T, char *const *tokens, int causal,
                          char *err, size_t errlen);

/* Draw every job, several at a time with OpenMP. On failure err holds the
 * message of the first failed job in list order. */
int render_jobs(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens,
                int causal, char *err, size_t errlen);

/* The same, calling progress(ctx, fraction of the jobs done) from the
 * calling thread each time it has finished a picture, and with 1.0 at the
 * end (so a progress line moves on while the pictures are drawn in one go,
 * each thread keeping its memory from picture to picture). */
typedef void (*RenderProgress)(void *ctx, double fraction);
int render_jobs_progress(Renderer *r, const RenderJob *jobs, int n_jobs, int T, char *const *tokens,
                         int causal, RenderProgress progress, void *ctx, char *err, size_t errlen);

/* For the pictures' own files (sharpness.c, pull_slide.c): the label shown for
 * token tok into buf (RENDER_LABEL_BYTES), as text/token_text.h shows it
 * (report.txt's rule: a newline as \n, a tab as \t, the empty token as "",
 * ...), cut with an ellipsis to max_w pixels at px. Which tokens get a
 * label: labels.h. */
#define RENDER_LABEL_BYTES 160
void render_token_label(const DrawFont *font, const char *tok, float px, float max_w, char *buf);

#endif
