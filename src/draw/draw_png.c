/* draw_png.c — RGB pixels as PNG bytes, through stb_image_write with
 * libdeflate as its compressor; and draw_write_file, which writes bytes
 * (a PNG's, an SVG's) as a whole file. It knows no canvas.
 *
 * stb_image_write's own deflate is slow on pictures this size (about 24 ms
 * for a class-size heatmap); it lets a program plug in another through
 * STBIW_ZLIB_COMPRESS, and libdeflate is Debian's well-kept one. The hook
 * must be compiled into stb's implementation, so this file (and only this
 * one) compiles it, instead of taking the copy in libstb: with
 * STB_IMAGE_WRITE_STATIC its functions are private to this file and do
 * not clash with libstb's. */
#include "draw/draw_png.h"
#include "core/status.h"

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

int draw_png_too_big(int w, int h)
{
    return ((size_t)w * 3 + 1) * (size_t)h > INT_MAX;
}

unsigned char *draw_png_encode(const unsigned char *px, size_t stride, int w, int h, int *len)
{
    pthread_once(&filter_once, set_filter);
    return stbi_write_png_to_mem(px, (int)stride, w, h, 3, len);
}
