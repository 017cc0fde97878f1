/* png.h — write an RGB picture as a PNG file with stb_image_write.
 *
 * The pictures mhaviz draws are mostly flat colour: white margins, cells of
 * one colour, rows repeated cell after cell. For them stb's filter search
 * and its slower compression levels cost time and buy almost nothing, so
 * png_write_rows asks for no filter and compression level 1 (measured in
 * README.md, "Pictures"). The bytes depend only on the pixels. */
#ifndef MHAVIZ_PNG_H
#define MHAVIZ_PNG_H

#include <stddef.h>

/* Set stb_image_write's encoder settings (process-wide). Call once before
 * any png_write_rows, outside parallel regions: render_open does. */
void png_setup(void);

/* Write the picture rows (h, 1 + 3 w) as the PNG file path: each row is one
 * spare byte (PNG's filter byte, ignored here) followed by w RGB pixels.
 * Returns MHAVIZ_OK, MHAVIZ_EIO (cannot create or write the file, full disk
 * included; err names it) or MHAVIZ_ENOMEM. w and h are 1 .. 2^24. */
int png_write_rows(const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen);

#endif
