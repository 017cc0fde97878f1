/* fuzz_npy.c — libFuzzer harness for the .npy reader (src/io/npy.c).
 *
 * The JSON harness cannot reach it (its inputs never name a real file), so
 * this one writes the fuzz bytes after the first three into a scratch file
 * and reads it back with npy_read_floats, then with npy_load_floats (which
 * maps a float32 file instead of copying it). The first three bytes choose
 * the shape the caller expects and the layout:
 *   rows = data[0] % 9 - 1 (-1: a vector), cols = data[1] % 8 + 1,
 *   transpose = data[2] & 1.
 * Every status must be a documented one, a failure must come with a message,
 * every number read must be finite, and both ways of reading must give the
 * same status, message and numbers. Built by `make fuzz FUZZ_TARGET=npy`. */
#include "io/npy.h"
#include "core/status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/mhaviz-fuzz-npy-XXXXXX";
static char path[sizeof dir + 16];

static void remove_scratch(void)
{
    unlink(path);
    rmdir(dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 3)
        return 0;
    if (!path[0]) {
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof path, "%s/m.npy", dir);
        atexit(remove_scratch);
    }
    const int rows = data[0] % 9 - 1, cols = data[1] % 8 + 1, transpose = data[2] & 1;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data + 3, 1, size - 3, f) != size - 3 || fclose(f) != 0)
        abort();
    const size_t n = (size_t)(rows < 0 ? 1 : rows) * (size_t)cols;
    float *dst = malloc(n * sizeof *dst); /* n >= 1 */
    char msg[512];
    msg[0] = '\0';
    int rc = npy_read_floats(dir, "m.npy", rows, cols, transpose, dst, msg, sizeof msg);
    if (rc != MHAVIZ_OK && rc != MHAVIZ_EINPUT && rc != MHAVIZ_EIO && rc != MHAVIZ_ENOMEM)
        abort();
    if (rc != MHAVIZ_OK && (msg[0] == '\0' || !memchr(msg, '\0', sizeof msg)))
        abort();
    if (rc == MHAVIZ_OK)
        for (size_t i = 0; i < n; i++)
            if (!isfinite(dst[i]))
                abort();

    float *loaded;
    MappedFile map;
    char msg2[512];
    msg2[0] = '\0';
    int rc2 = npy_load_floats(dir, "m.npy", rows, cols, transpose, &loaded, &map, msg2, sizeof msg2);
    if (rc2 != rc || strcmp(msg2, msg) != 0 || (rc == MHAVIZ_OK) != (loaded != NULL))
        abort();
    if (rc == MHAVIZ_OK && memcmp(loaded, dst, n * sizeof *dst) != 0)
        abort();
    if (map.addr)
        npy_unmap(&map);
    else
        free(loaded);
    free(dst);
    return 0;
}
