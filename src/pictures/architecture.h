/* architecture.h — architecture.png: the lesson's diagram of one
 * attention layer, drawn with this input's numbers.
 *
 * A vertical stack read bottom to top: the input x (T x d_model), the query
 * projections (one per head, T x head_dim) and the key/value projections
 * (one per K/V head, drawn once and joined to every query head of its
 * group: one per head for MHA, shared in groups for GQA, one for all in
 * MQA), the heads side by side each with its own softmax, the concatenation
 * back to T x d_model, and W_O on top; a caption counts the parameters.
 * With more than 8 heads the middle ones are left out ("...") rather than
 * the text made smaller (head_columns.h). */
#ifndef MHAVIZ_ARCHITECTURE_H
#define MHAVIZ_ARCHITECTURE_H

#include "draw/draw.h"
#include "io/input.h"

#include <stddef.h>
#include <stdint.h>

#define ARCHITECTURE_MAX_COLUMNS 8 /* head columns drawn at most (1920 pixels wide) */

/* Draw the layer of shape c, query head h reading K/V head kv_of[h] (NULL:
 * h / (n_heads / n_kv_heads)), with `params` parameters (has_bias: they
 * include the biases) on canvas (reset to 1920 x 1080; the caller keeps
 * it) and write it to the PNG at path. Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int architecture_draw(DrawCanvas *canvas, const DrawFont *f, const char *path, const MhaConfig *c, const int *kv_of,
                      int64_t params, int has_bias, char *err, size_t errlen);

#endif
