/* draw_png.c — draw_write_png: a canvas as a PNG file, through
 * stb_image_write with libdeflate as its compressor.
 *
 * stb_image_write's own deflate is slow on pictures this size (about 24 ms
 * for a class-size heatmap); it lets a program plug in another through
 * STBIW_ZLIB_COMPRESS, and libdeflate is Debian's well-kept one. The hook
 * must be compiled into stb's implementation, so this file (and only this
 * one) compiles it, instead of taking the copy in libstb: with
 * STB_IMAGE_WRITE_STATIC its functions are private to this file and do
 * not clash with libstb's. */
#include "core/status.h"
#include "draw/draw.h"
#include "draw/draw_parts.h"

#include <libdeflate.h>

#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* libdeflate's level 2 with PNG's filter 0 (none) on every row. Thread
 * CPU time of the compression alone, best of 7, on this project's machine:
 * the class-size heatmap (1143 x 1052) 5.9 ms at level 2, 8.1 at level 1,
 * 7.6 at level 6; the 1920 x 1080 slides 9-9.5 ms at level 2, 15-18 at
 * level 1, 11-12 at level 6. Level 2 writes 5-30 % more bytes than level 6
 * (147 KB against 139 for the heatmap); end to end on the class-size input
 * (13 pictures, 2 threads, mean of 20 runs): level 2 151 ms, 4 156, 6 165,
 * 1 186. Filters 1, 2 and 4 took as long or longer at every level, and
 * stb's choice of filter per row (-1) twice as long again. */
#define PNG_LEVEL 2
#define PNG_FILTER 0

/* stb_image_write's compressor hook: the zlib stream of data[0..len) in
 * *out_len bytes of memory stb frees (free), or NULL when out of memory.
 * stb's quality (its own level scale) is ignored: the level is PNG_LEVEL. */
static unsigned char *zlib_compress(unsigned char *data, int len, int *out_len, int quality)
{
    (void)quality;
    struct libdeflate_compressor *z = libdeflate_alloc_compressor(PNG_LEVEL);
    if (!z)
        return NULL;
    const size_t cap = libdeflate_zlib_compress_bound(z, (size_t)len);
    unsigned char *out = cap <= INT_MAX ? malloc(cap) : NULL;
    const size_t n = out ? libdeflate_zlib_compress(z, data, (size_t)len, out, cap) : 0;
    libdeflate_free_compressor(z);
    if (n == 0) { /* cannot happen with cap from the bound, but never hand stb an empty stream */
        free(out);
        return NULL;
    }
    *out_len = (int)n;
    return out;
}

#define STBIW_ZLIB_COMPRESS zlib_compress
/* And libdeflate's CRC-32 for the chunks' checksums: the same numbers,
 * computed several times faster than stb's table (stb's took 2 % of the
 * class-size run's CPU). */
#define STBIW_CRC32(buffer, len) libdeflate_crc32(0, buffer, (size_t)(len))
#define STB_IMAGE_WRITE_STATIC
#define STB_IMAGE_WRITE_IMPLEMENTATION
#define STBI_WRITE_NO_STDIO /* the file is written below, each step checked */
/* Unused here: the other formats' writers (the warning for one of them
 * comes at the end of the file, so it stays off to the end). */
#pragma GCC diagnostic ignored "-Wunused-function"
#include <stb_image_write.h>

/* stb takes the PNG filter from a variable of this file, read by every
 * encoding: set once, before the first, whichever thread comes first. */
static pthread_once_t filter_once = PTHREAD_ONCE_INIT;
static void set_filter(void)
{
    stbi_write_force_png_filter = PNG_FILTER;
}

/* A regular file left half-written is removed (a device such as
 * /dev/full stays). */
int draw_write_file(const char *path, const unsigned char *bytes, size_t n, const char *what, char *err, size_t errlen)
{
    errno = 0;
    FILE *f = fopen(path, "wb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot create: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    int ok = fwrite(bytes, 1, n, f) == n && fflush(f) == 0;
    int saved = errno;
    struct stat st;
    const int regular = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode);
    if (fclose(f) != 0 && ok) {
        ok = 0;
        saved = errno;
    }
    if (!ok) {
        if (regular)
            remove(path);
        snprintf(err, errlen, "%s: cannot write the %s: %s", path, what, strerror(saved ? saved : EIO));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}

int draw_write_png(const DrawCanvas *c, const char *path, char *err, size_t errlen)
{
    /* stb counts the filtered rows' bytes, (3 w + 1) h, in an int */
    if (c->w < 1 || c->h < 1 || ((size_t)c->w * 3 + 1) * (size_t)c->h > INT_MAX) {
        snprintf(err, errlen, "%s: a picture of %d x %d pixels is too big for a PNG here", path, c->w, c->h);
        return MHAVIZ_EINPUT;
    }
    int len = 0;
    unsigned char *png = draw_png_encode(c, 0, 0, c->w, c->h, &len);
    if (!png) {
        snprintf(err, errlen, "%s: out of memory encoding the PNG", path);
        return MHAVIZ_ENOMEM;
    }
    int rc = draw_write_file(path, png, (size_t)len, "PNG", err, errlen);
    free(png);
    if (rc == MHAVIZ_OK && c->svg)
        rc = draw_svg_write(c->svg, path, err, errlen);
    return rc;
}

unsigned char *draw_png_encode(const DrawCanvas *c, int x, int y, int w, int h, int *len)
{
    pthread_once(&filter_once, set_filter);
    return stbi_write_png_to_mem(draw_pixel(c, x, y), (int)c->stride, w, h, 3, len);
}
