/* variant_write.h — one variant's pictures and report, written into its
 * folder of the output (core/variant.h computes the variant). */
#ifndef MHAVIZ_VARIANT_WRITE_H
#define MHAVIZ_VARIANT_WRITE_H

#include "core/timing.h"
#include "core/variant.h"
#include "io/outdir.h"
#include "io/quiz_file.h"
#include "pictures/render.h"

#include <stddef.h>

/* What the command line asks of every variant's outputs. */
typedef struct {
    int steps;  /* --steps: also each head's pre-softmax scores (head_NN_scores.png) */
    int npy;    /* --npy: report.json's matrices as .npy files */
    int layers; /* --layers: kv_cache.png counts this many layers (variants.h) */
    int html;   /* 1: lesson.html too (variants.h); 0 with --no-html */
    const QuizFile *quiz; /* --quiz: the teacher's questions for lesson.html; NULL: none */
    const unsigned char *heads; /* (n_heads) 1: that head's head_NN.png (with steps, its scores too);
                                 * NULL: every head's (a run over several layers draws fewer: model_run.h) */
    int head_maps; /* --head-maps: a run over several layers draws every head's map too */
} VariantOptions;

/* Write v's pictures and report.txt / report.json into the folder sub of
 * out ("" = out itself, or a sub-folder such as "kv2", made here), as o
 * asks, with query_NN.png. Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int variant_write(const Variant *v, Renderer *r, const OutDir *out, const char *sub, const VariantOptions *o,
                  Timing *tm, char *err, size_t errlen);

/* How many pictures variant_write draws when n_heads heads get their own
 * heatmap: overview.png, those heatmaps, single_head.png, sharpness.png,
 * query_NN.png and architecture.png, and with steps those maps' scores. */
int variant_write_pictures(int n_heads, int steps);

#endif
