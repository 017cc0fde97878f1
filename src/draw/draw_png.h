/* draw_png.h — RGB pixels as PNG bytes, and bytes as a file: the bottom of
 * draw/, which knows no canvas (draw.h writes a canvas with these). Not for
 * use outside draw/. */
#ifndef MHAVIZ_DRAW_PNG_H
#define MHAVIZ_DRAW_PNG_H

#include <stddef.h>

/* 1 when a w x h picture is too big for the encoder: stb counts its
 * filtered rows' bytes, (3 w + 1) h, in an int (over 2 GB). */
int draw_png_too_big(int w, int h);

/* The w x h RGB pixels at px, (h, w, 3) with rows stride bytes apart, as
 * PNG bytes (8-bit RGB), *len of them, which the caller frees; NULL when
 * out of memory. The bytes depend only on the pixels (and on libdeflate's
 * version). */
unsigned char *draw_png_encode(const unsigned char *px, size_t stride, int w, int h, int *len);

/* Write n bytes to the file path, what it holds ("PNG", "SVG") named in
 * a message; a regular file left half-written is removed. Returns
 * MHAVIZ_OK or MHAVIZ_EIO (err names the file). */
int draw_write_file(const char *path, const unsigned char *bytes, size_t n, const char *what, char *err, size_t errlen);

#endif
