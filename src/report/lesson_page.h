/* lesson_page.h — lesson.html: a run as one self-contained interactive page.
 *
 * The page's HTML, CSS and JavaScript are the readable files under
 * assets/lesson/, built into the program; this module fills them with the
 * run's numbers: the same arrays, measures, sentences, pulls and cost
 * tables report.json is written from. The page needs no network: no CDN,
 * no font, no request (its Content-Security-Policy forbids them).
 *
 * What the page embeds (assets/lesson/lesson.js reads it):
 *   - a JSON object (<script type="application/json">): the tokens, the
 *     shape, and for each variant each map's role and sentence, the pulls'
 *     rows and the cost table. Every '<', '>', '&', U+2028 and U+2029 in it
 *     is written as a \u escape, so no token can end the script element;
 *   - the maps, base64 in a <script type="application/octet-stream">:
 *     "full": every visible cell of every map, the softmax weight and the
 *     score, as float16 (IEEE half, little-endian); past LESSON_PAGE_CAP_BYTES
 *     "summary": each map as a thumbnail (one byte a pixel) and the top keys
 *     of each row with their weights and scores, which the page says.
 *
 * A run over several layers of a model writes one page for them all: each
 * layer is one entry of the facts' "variants" (with its "layer"), the maps
 * layer after layer, and "model" holds what the page's grid of every
 * layer's heads needs (the roles' colours and letters, each head's effect
 * on the prediction when the run measured them). */
#ifndef MHAVIZ_LESSON_PAGE_H
#define MHAVIZ_LESSON_PAGE_H

#include "checkpoint/model.h"
#include "core/variant.h"
#include "core/thresholds.h"
#include "io/quiz_file.h"
#include "pictures/render.h"

#include <stddef.h>

/* The largest page written: 16 MiB. A class-size run is a few hundred KB;
 * every visible cell of a T = 512, 12-head layer fits (9.1 MB); past the
 * cap the page keeps thumbnails and each row's top keys. */
#define LESSON_PAGE_CAP_BYTES ((size_t)16 << 20)

/* A page being built, one variant (or layer) at a time: begun for n of
 * them (n >= 1), each added in turn, then written. Only the facts and the
 * maps as the page embeds them are kept, never a variant itself, so a run
 * can free each layer once it is added. */
typedef struct LessonPage LessonPage;

/* What a page of several layers of a model says of the model: its name
 * (the page's title) and its prediction (each head's effect, when measured;
 * NULL: none). */
typedef struct {
    const char *name;
    const ModelPrediction *pred;
} LessonModel;

/* A page for n variants, its maps in the PNGs' colours, its quiz followed
 * by the teacher's questions quiz (NULL: none; kept, not copied). NULL when
 * memory runs out. Free with lesson_page_free. */
LessonPage *lesson_page_begin(int n, const RenderColours *colours, const QuizFile *quiz);

/* Add variant v (the same heads and tokens as the first), the model's layer
 * `layer` (-1: a K/V layout of one layer). v is only read. Returns
 * MHAVIZ_OK, MHAVIZ_ENOMEM, or MHAVIZ_EINPUT for a variant of another shape
 * or one too many (err says which). */
int lesson_page_add(LessonPage *pg, const Variant *v, int layer, char *err, size_t errlen);

/* Write the page of the variants added (all n of them) into file path;
 * model: the model whose layers they are (NULL: one layer's variants).
 * Returns MHAVIZ_OK, MHAVIZ_EIO (err names the file), MHAVIZ_EINPUT (not
 * all added) or MHAVIZ_ENOMEM. Call once. */
int lesson_page_finish(LessonPage *pg, const char *path, const LessonModel *model, char *err, size_t errlen);

/* Free the page; safe on NULL. */
void lesson_page_free(LessonPage *pg);

/* Write the page of the n variants v (most K/V heads first; n >= 1) into
 * file path, its maps in the PNGs' colours, its quiz followed by the
 * teacher's questions quiz (--quiz; NULL: none). Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int lesson_page_write(const char *path, const Variant *v, int n, const RenderColours *colours,
                      const QuizFile *quiz, char *err, size_t errlen);

#endif
