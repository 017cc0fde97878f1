/* png.c — PNG files through stb_image_write, with every write checked.
 *
 * stbi_write_png() ignores fwrite's result, so a full disk would go
 * unnoticed: we encode through stbi_write_png_to_func and write the bytes
 * ourselves, remembering the first failure. */
#include "png.h"
#include "status.h"

#include <stb_image_write.h>

#include <errno.h>
#include <stdio.h>
#include <string.h>

void png_setup(void)
{
    stbi_write_force_png_filter = 0;      /* no filter: flat rows compress as they are */
    stbi_write_png_compression_level = 1; /* shortest match search */
}

/* Where the encoded bytes go: the open file and the first write error. */
typedef struct {
    FILE *f;
    int error; /* errno of the first failed write, 0 while all went well */
} PngSink;

static void sink_write(void *context, void *data, int size)
{
    PngSink *s = context;
    if (s->error == 0 && fwrite(data, 1, (size_t)size, s->f) != (size_t)size)
        s->error = errno ? errno : EIO;
}

int png_write_rows(const char *path, const unsigned char *rows, int w, int h, char *err, size_t errlen)
{
    PngSink s = {fopen(path, "wb"), 0};
    if (!s.f) {
        snprintf(err, errlen, "%s: cannot create the picture: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    errno = 0;
    /* rows + 1 skips the spare byte in front of the first row's pixels. */
    int encoded = stbi_write_png_to_func(sink_write, &s, w, h, 3, rows + 1, 1 + 3 * w);
    if (fclose(s.f) != 0 && s.error == 0)
        s.error = errno ? errno : EIO;
    /* A half-written file is left for the caller: mhaviz writes inside a
     * temporary folder that is removed whole on failure. */
    if (!encoded) {
        snprintf(err, errlen, "%s: out of memory encoding the picture", path);
        return MHAVIZ_ENOMEM;
    }
    if (s.error) {
        snprintf(err, errlen, "%s: cannot write the picture: %s", path, strerror(s.error));
        return MHAVIZ_EIO;
    }
    return MHAVIZ_OK;
}
