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
 *     of each row with their weights and scores, which the page says. */
#ifndef MHAVIZ_LESSON_PAGE_H
#define MHAVIZ_LESSON_PAGE_H

#include "core/variant.h"
#include "core/thresholds.h"
#include "io/quiz_file.h"
#include "pictures/render.h"

#include <stddef.h>

/* The largest page written: 16 MiB. A class-size run is a few hundred KB;
 * every visible cell of a T = 512, 12-head layer fits (9.1 MB); past the
 * cap the page keeps thumbnails and each row's top keys. */
#define LESSON_PAGE_CAP_BYTES ((size_t)16 << 20)

/* The page's file name in the output folder. */
#define LESSON_PAGE_NAME "lesson.html"

/* Write the page of the n variants v (most K/V heads first; n >= 1) into
 * file path, its maps in the PNGs' colours, its quiz followed by the
 * teacher's questions quiz (--quiz; NULL: none). Returns MHAVIZ_OK,
 * MHAVIZ_EIO (err names the file) or MHAVIZ_ENOMEM. */
int lesson_page_write(const char *path, const Variant *v, int n, const RenderColours *colours,
                      const QuizFile *quiz, char *err, size_t errlen);

#endif
