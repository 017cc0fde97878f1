/* model_overview.h — model_overview.png: every layer's heads on one slide.
 *
 * 1920 x 1080: one row per layer shown (labelled at the left), one column
 * per head (numbered on top); each cell the head's map, on the run's
 * colour scale (blocks of k x k tokens averaged when T > 48: their visible
 * cells' mean), with a band in its role's colour carrying the role's
 * letter (under the map, or beside it when the columns leave room); a legend of the roles present, the colour bar. 512 heads (16 x
 * 32) still fit. */
#ifndef MHAVIZ_MODEL_OVERVIEW_H
#define MHAVIZ_MODEL_OVERVIEW_H

#include "core/model_summary.h"
#include "draw/draw.h"
#include "pictures/render.h"

#include <stddef.h>

/* Draw summary s of the model named name (T tokens, causal) into the PNG
 * at path with r's font and colour map. Returns MHAVIZ_OK, MHAVIZ_EIO (err
 * names the file) or MHAVIZ_ENOMEM. */
int model_overview_draw(const Renderer *r, const char *path, const ModelSummary *s, const char *name, int T,
                        int causal, char *err, size_t errlen);

/* Role r's letter (a static string) and, into *colour, its colour, as
 * the grid's cells show them (lesson.html's grid too). */
const char *model_overview_role(MeasuresRole r, DrawRgb *colour);

#endif
