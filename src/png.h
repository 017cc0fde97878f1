/* png.h — write an RGB picture as a PNG file, fast.
 *
 * The pictures mhaviz draws are mostly flat colour: white margins, cells of
 * one colour, rows repeated cell after cell. png_write_rows compresses them
 * with a deflate encoder made for exactly that (each byte is matched against
 * the pixel to its left, the pixel above it and the hatching's diagonals;
 * see png.c), several times faster than a general-purpose encoder, with
 * files as small. The file is a standard PNG (8-bit RGB, zlib stream,
 * CRC-checked chunks) that every viewer reads. The bytes depend only on the
 * pixels. */
#ifndef MHAVIZ_PNG_H
#define MHAVIZ_PNG_H

#include <stddef.h>
#include <stdint.h>

/* Write the picture rows (h, 1 + 3 w) as the PNG file path: each row is the
 * filter byte 0 followed by w RGB pixels, the layout PNG compresses (so a
 * canvas kept this way is written without a copy). Returns MHAVIZ_OK,
 * MHAVIZ_EIO (cannot create or write the file, full disk included; err names
 * it; a regular file left half-written is removed), MHAVIZ_ENOMEM, or
 * MHAVIZ_EINPUT when w or h is outside 1 .. PNG_MAX_SIDE. */
#define PNG_MAX_SIDE (1 << 24)
int png_write_rows(const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen);

/* The same with an encoder's memory (about 0.5 MB) kept from one picture to
 * the next: a thread writing many pictures makes one PngWriter and passes it
 * to each png_write. png_writer_new returns a writer the caller owns and
 * frees with png_writer_free (which takes NULL too), or NULL when out of
 * memory. */
typedef struct PngWriter PngWriter;
PngWriter *png_writer_new(void);
void png_writer_free(PngWriter *pw);
int png_write(PngWriter *pw, const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen);

/* The Adler-32 (RFC 1950) of s[0..n), which ends a PNG's zlib stream,
 * computed with the widest vectors the processor has, up to at_most: the
 * encoder asks for PNG_SIMD_BEST; the tests ask for each in turn, so that
 * every version is checked on any machine (one the processor lacks gives
 * way to the next narrower one). */
typedef enum { PNG_SIMD_NONE, PNG_SIMD_SSE2, PNG_SIMD_AVX2, PNG_SIMD_BEST = PNG_SIMD_AVX2 } PngSimd;
uint32_t png_adler32(const unsigned char *s, size_t n, PngSimd at_most);

#endif
