/* render.h — attention maps as PNG heatmaps for slides.
 *
 * A Renderer holds what every picture shares (the font, the colormap), so a
 * run loads them once. Pictures:
 *   render_heatmap     one softmax map (T, T) on the fixed 0..1 scale
 *   render_diverging   one signed map (T, T) on a symmetric blue-white-red
 *                      scale (white = 0): differences, pre-softmax scores
 *   render_overview    several softmax maps side by side on one slide
 *   render_jobs        any list of the above, in parallel (OpenMP); with
 *                      render_jobs_progress, reporting as pictures finish
 * Every function returns MHAVIZ_OK, MHAVIZ_EIO (cannot load the font or
 * write the PNG; err names the file) or MHAVIZ_ENOMEM. The PNG bytes depend
 * only on the inputs and options, never on the thread count. */
#ifndef MHAVIZ_RENDER_H
#define MHAVIZ_RENDER_H

#include <stddef.h>

typedef struct {
    const char *font_path; /* NULL: DejaVu Sans at its Debian path */
    const char *cmap;      /* "viridis" (default), "magma", "cividis", "gray" */
    int cell_px;           /* cell size in pixels; 0 = chosen for slides */
    int annotate;          /* -1 = when T <= 16, 0 = never, 1 = always (when the cells are big enough) */
    int overview_w;        /* overview.png size in pixels, default 1920 x 1080 */
    int overview_h;
} RenderOptions;

/* Defaults: DejaVu Sans, viridis, automatic cell size and annotation, 1920x1080 overview. */
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

/* The font r loaded, for pictures drawn outside the job list (render_pull.h).
 * Owned by r. */
const struct DrawFont *render_font(const Renderer *r);

/* Write att (T, T), row = query, as a heatmap PNG at png_path: query labels
 * left, key labels below, title on top, colour bar at the right. When causal,
 * cells with key > query are drawn in the mask colour. */
int render_heatmap(Renderer *r, const char *png_path, const float *att, int T,
                   char *const *tokens, int causal, const char *title,
                   char *err, size_t errlen);

/* Where render_heatmap (and render_diverging) put things for T tokens and
 * this title: for tests, and for callers placing the pictures. */
typedef struct {
    int width, height;   /* the PNG, pixels */
    int map_x, map_y;    /* top-left pixel of the map */
    int cell;            /* pixels per drawn cell side */
    int block;           /* tokens per cell side: 1, or k when k x k blocks are averaged */
    int label_step;      /* every label_step-th token is labelled (and the last) */
    int frame;           /* pixels of dark frame just outside the map */
} RenderLayout;

/* Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_heatmap_layout(Renderer *r, int T, char *const *tokens, const char *title, RenderLayout *out);

/* Same layout for a signed map values (T, T) (masked cells ignored) on the
 * diverging scale [-m, m], m = the largest |value| among visible cells. */
int render_diverging(Renderer *r, const char *png_path, const float *values, int T,
                     char *const *tokens, int causal, const char *title,
                     char *err, size_t errlen);

/* Write n_maps softmax maps, maps[p] (T, T), as panels of one figure of
 * o->overview_w x o->overview_h pixels with one shared colour bar; panel p is
 * titled panel_titles[p], the figure title. Token labels where they fit. */
int render_overview(Renderer *r, const char *png_path, const float *const *maps, int n_maps,
                    int T, char *const *tokens, int causal, const char *title,
                    char *const *panel_titles, char *err, size_t errlen);

/* Where render_overview puts things: panel p (row p / cols, column
 * p % cols) has its map's top-left pixel at (map_x + col dx, map_y + row dy). */
typedef struct {
    int width, height;   /* the PNG, pixels */
    int rows, cols;      /* the grid of panels */
    int map_x, map_y;    /* top-left pixel of panel 0's map */
    int dx, dy;          /* from one panel's map to the next column's / row's */
    int side;            /* map side in pixels */
    int cell;            /* pixels per drawn cell side */
    int block;           /* 1, or when T > side the most tokens a block side holds: the panel's
                            side pixels share the T tokens out evenly (block - 1 or block each) */
    int label_step;      /* every label_step-th token labelled (and the last); 0: no token labels */
    float label_px;      /* line height of the token labels */
    int frame;           /* pixels of dark frame just outside each map */
} RenderOverviewLayout;

/* Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int render_overview_layout(Renderer *r, int n_maps, int T, char *const *tokens, int causal,
                           RenderOverviewLayout *out);

/* diff (T, T) = single (T, T) - mean over heads of att (n_heads, T, T); the
 * heads are summed in order 0..n_heads-1. Masked cells come out 0. */
void render_difference(float *diff, const float *att, int n_heads, const float *single, int T);

/* One picture to draw. Nothing here is owned by the job. */
typedef enum { RENDER_WEIGHTS, RENDER_DIVERGING, RENDER_OVERVIEW } RenderKind;
typedef struct {
    RenderKind kind;
    const char *path;               /* the PNG to write */
    const char *title;
    const float *values;            /* WEIGHTS, DIVERGING: (T, T) */
    const float *const *maps;       /* OVERVIEW: (n_maps) pointers to (T, T) maps */
    int n_maps;                     /* OVERVIEW */
    char *const *panel_titles;      /* OVERVIEW: (n_maps) */
} RenderJob;

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

#endif
