/* draw_font.c — the TrueType font text is drawn in: the file read whole
 * and checked, then indexed by stb_truetype (draw_font.h). */
#include "draw/draw_font.h"
#include "draw/draw_font_parts.h"
#include "core/status.h"

#include <errno.h>
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define DEFAULT_FONT "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf"
#define FONT_MAX_BYTES (64L << 20)

/* The glyph drawn for code point cp: the font's own, else its U+FFFD, else
 * -1 (a hollow box is drawn). */
static int glyph_lookup(const DrawFont *f, int cp)
{
    int g = stbtt_FindGlyphIndex(&f->info, cp);
    if (g == 0)
        g = f->replacement ? f->replacement : -1;
    return g;
}

int draw_glyph_for(const DrawFont *f, int cp)
{
    return cp >= 0 && cp < 128 ? f->ascii_glyph[cp] : glyph_lookup(f, cp);
}

/* The whole regular file at path into f->data and f->size. Returns 0, or
 * an errno value: the one open, fstat or read gave, EISDIR or EINVAL (not
 * a regular file), EFBIG (over FONT_MAX_BYTES), ENODATA (empty), ENOMEM. A
 * file that shrinks while it is read gives the bytes it still had. */
static int read_font_file(DrawFont *f, const char *path)
{
    /* O_NONBLOCK: a FIFO would otherwise wait for a writer; it is refused below. */
    const int fd = open(path, O_RDONLY | O_NONBLOCK);
    if (fd < 0)
        return errno;
    struct stat st;
    int e = 0;
    if (fstat(fd, &st) != 0)
        e = errno;
    else if (S_ISDIR(st.st_mode))
        e = EISDIR;
    else if (!S_ISREG(st.st_mode))
        e = EINVAL;
    else if (st.st_size > FONT_MAX_BYTES)
        e = EFBIG;
    else if (st.st_size == 0)
        e = ENODATA;
    else if (!(f->data = malloc((size_t)st.st_size)))
        e = ENOMEM;
    while (!e && f->size < (size_t)st.st_size) {
        const ssize_t n = read(fd, f->data + f->size, (size_t)st.st_size - f->size);
        if (n < 0 && errno != EINTR)
            e = errno;
        else if (n == 0)
            break; /* shorter than fstat said */
        else if (n > 0)
            f->size += (size_t)n;
    }
    close(fd);
    return e;
}

static uint32_t be32(const unsigned char *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

/* stb_truetype reads a font's tables without checking that they lie within
 * the file: a font cut short would be read past its end. The table
 * directory at offset (the OpenType "sfnt" header: the table count at
 * bytes 4-5, then a 16-byte record per table, its offset and length at
 * bytes 8 and 12) is checked against the file's n bytes first. Returns
 * NULL when every table fits, else the record of the first one that does
 * not (or of the directory itself: the record's place in the file). */
static const unsigned char *table_past_end(const unsigned char *d, size_t n, size_t offset, uint64_t *end)
{
    const size_t count = offset + 6 <= n ? (size_t)(d[offset + 4] << 8 | d[offset + 5]) : 0;
    *end = offset + 12 + 16 * (uint64_t)count;
    if (*end > n)
        return d + offset;
    for (size_t k = 0; k < count; k++) {
        const unsigned char *rec = d + offset + 12 + 16 * k;
        *end = (uint64_t)be32(rec + 8) + be32(rec + 12);
        if (*end > n)
            return rec;
    }
    return NULL;
}

/* f's family name (the name table's record 1, Windows Unicode English, in
 * UTF-16BE) into f->family, its printable ASCII only, quotes and
 * backslashes left out (SVG quotes it); "" when it has none. */
static void font_name(DrawFont *f)
{
    int len = 0;
    const char *name = stbtt_GetFontNameString(&f->info, &len, STBTT_PLATFORM_ID_MICROSOFT,
                                               STBTT_MS_EID_UNICODE_BMP, STBTT_MS_LANG_ENGLISH, 1);
    size_t n = 0;
    for (int i = 0; name && i + 1 < len && n + 1 < sizeof f->family; i += 2) {
        const int unit = (unsigned char)name[i] << 8 | (unsigned char)name[i + 1];
        if (unit >= 0x20 && unit < 0x7F && unit != '\'' && unit != '"' && unit != '\\')
            f->family[n++] = (char)unit;
    }
    f->family[n] = '\0';
}

int draw_font_has(const DrawFont *f, int cp)
{
    const int g = draw_glyph_for(f, cp);
    return g > 0 && (g != f->replacement || cp == 0xFFFD);
}

const char *draw_font_family(const DrawFont *f)
{
    return f->family;
}

int draw_font_open(DrawFont **out, const char *path, char *err, size_t errlen)
{
    *out = NULL;
    const int chosen = path != NULL;
    if (!path)
        path = DEFAULT_FONT;
    DrawFont *f = calloc(1, sizeof *f);
    if (!f) {
        snprintf(err, errlen, "font %s: out of memory", path);
        return MHAVIZ_ENOMEM;
    }
    /* The whole file read (about 740 KB for DejaVu Sans), then indexed. */
    const int e = read_font_file(f, path);
    int rc = MHAVIZ_EIO;
    int offset = -1;
    const unsigned char *bad;
    uint64_t end;
    if (e == ENOMEM) {
        snprintf(err, errlen, "font %s: out of memory", path);
        rc = MHAVIZ_ENOMEM;
    } else if (e == ENOENT || e == EACCES) {
        snprintf(err, errlen, "font %s: cannot open: %s%s", path, strerror(e),
                 chosen ? "" : " (install fonts-dejavu-core, or choose a font with --font)");
    } else if (e == EISDIR || e == EINVAL) {
        snprintf(err, errlen, "font %s: not a regular file", path);
    } else if (e == EFBIG) {
        snprintf(err, errlen, "font %s: over %ld MB, not a font file", path, FONT_MAX_BYTES >> 20);
    } else if (e == ENODATA) {
        snprintf(err, errlen, "font %s: empty file", path);
    } else if (e != 0) {
        snprintf(err, errlen, "font %s: cannot read: %s", path, strerror(e));
    } else if (f->size < 16 || (offset = stbtt_GetFontOffsetForIndex(f->data, 0)) < 0 ||
               (size_t)offset + 12 > f->size) {
        snprintf(err, errlen, "font %s: not a TrueType/OpenType font", path);
    } else if ((bad = table_past_end(f->data, f->size, (size_t)offset, &end)) != NULL) {
        if (bad == f->data + offset)
            snprintf(err, errlen, "font %s: cut short: its table directory ends at byte %llu, past the file's %zu bytes",
                     path, (unsigned long long)end, f->size);
        else
            snprintf(err, errlen, "font %s: cut short: its table '%.4s' ends at byte %llu, past the file's %zu bytes",
                     path, (const char *)bad, (unsigned long long)end, f->size);
    } else if (!stbtt_InitFont(&f->info, f->data, offset)) {
        snprintf(err, errlen, "font %s: not a TrueType/OpenType font", path);
    } else {
        rc = MHAVIZ_OK;
    }
    if (rc != MHAVIZ_OK) {
        draw_font_close(f);
        return rc;
    }
    font_name(f);
    f->replacement = stbtt_FindGlyphIndex(&f->info, 0xFFFD);
    for (int cp = 0; cp < 128; cp++)
        f->ascii_glyph[cp] = glyph_lookup(f, cp);
    *out = f;
    return MHAVIZ_OK;
}

void draw_font_close(DrawFont *f)
{
    if (!f)
        return;
    free(f->data);
    free(f);
}
