/* layers_chart.h — layers.png: the lesson layer by layer.
 *
 * 1920 x 1080, three panels side by side, one row per layer shown: the
 * rows where the heads hold their relation with those the wide head built
 * from that layer kept (filled) of all (outlined); the rows it lost; the
 * blur. Behind each number a grey band spans the middle 95% of random
 * layers of the same shape and sentence (chance.h), when they were drawn. */
#ifndef MHAVIZ_LAYERS_CHART_H
#define MHAVIZ_LAYERS_CHART_H

#include "core/model_summary.h"
#include "pictures/render.h"

#include <stddef.h>

/* Draw summary s of the model named name into the PNG at path with r's
 * font. Returns MHAVIZ_OK, MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int layers_chart_draw(const Renderer *r, const char *path, const ModelSummary *s, const char *name, char *err,
                      size_t errlen);

#endif
