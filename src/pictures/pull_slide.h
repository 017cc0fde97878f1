/* pull_slide.h — query_NN.png: the heads' pulls on one query token, and
 * what the wide head made of them (pull.h), as a 1920 x 1080 slide.
 *
 * One row of bar charts per head, then the wide head's row; every chart
 * has one bar per key the query may see, the keys labelled below.
 *   left:  each head's scores less its top score (0: its favourite key;
 *          the softmax ignores a constant per row); for the wide head the
 *          heads' contributions (pull_contributions) stacked, one colour
 *          per head, so each key's total is the wide head's score less a
 *          constant (a separately trained wide head: its own scores)
 *   right: each head's softmax weights, then the wide head's
 * The title names the query token and its index; the caption under it is
 * pull_caption's sentence (text/pull_caption.h). */
#ifndef MHAVIZ_SLIDE_H
#define MHAVIZ_SLIDE_H

#include "core/mha.h"
#include "core/pull.h"
#include "draw/draw.h"
#include "io/input.h"

/* Draw query's slide for layer c (tokens (T)) from the heads' pass multi
 * and the wide head's pass single (both with their scores kept) and their
 * pulls p, in font, on canvas cv (reset to SLIDE_W x SLIDE_H;
 * the caller keeps it), and write it to png_path. Returns MHAVIZ_OK, MHAVIZ_EIO (err names the
 * file) or MHAVIZ_ENOMEM. */
int render_pull(DrawCanvas *cv, const DrawFont *font, const char *png_path, const MhaConfig *c, char *const *tokens,
                const MhaState *multi, const MhaState *single, const PullLayer *p, int query, char *err,
                size_t errlen);

#endif
