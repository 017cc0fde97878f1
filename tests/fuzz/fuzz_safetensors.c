/* fuzz_safetensors.c — libFuzzer harness for the safetensors reader
 * (src/checkpoint/safetensors.c): the fuzz bytes are written as a model
 * folder's model.safetensors and opened; every tensor the header lists is
 * then read as floats (the first 64 elements and the last one). Every
 * status must be a documented one, a failure must come with a message, and
 * every number read must be finite. Built by
 * `make fuzz FUZZ_TARGET=safetensors`; seeds in tests/fuzz/corpus_safetensors/
 * (tests/fuzz/make_corpus_safetensors.py writes them). */
#include "checkpoint/safetensors.h"
#include "core/status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/mhaviz-fuzz-st-XXXXXX";
static char path[sizeof dir + 32];

static void remove_scratch(void)
{
    unlink(path);
    rmdir(dir);
}

static void check_status(int rc, const char *err, size_t errlen)
{
    if (rc != MHAVIZ_OK && rc != MHAVIZ_EINPUT && rc != MHAVIZ_EIO && rc != MHAVIZ_ENOMEM)
        abort();
    if (rc != MHAVIZ_OK && (err[0] == '\0' || !memchr(err, '\0', errlen)))
        abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof path, "%s/model.safetensors", dir);
        atexit(remove_scratch);
    }
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, size, f) != size || fclose(f) != 0)
        abort();
    Safetensors st;
    char err[512] = "";
    int rc = safetensors_open(dir, &st, err, sizeof err);
    check_status(rc, err, sizeof err);
    for (int i = 0; rc == MHAVIZ_OK && i < st.n_tensors; i++) {
        const StTensor *t = &st.tensors[i];
        if (safetensors_find(&st, t->name) == NULL)
            abort();
        float got[64];
        const size_t n = t->count < 64 ? (size_t)t->count : 64;
        err[0] = '\0';
        int r = safetensors_floats(t, 0, n, got, err, sizeof err);
        check_status(r, err, sizeof err);
        if (r == MHAVIZ_OK && t->count > 0) {
            r = safetensors_floats(t, (size_t)t->count - 1, 1, got + (n ? n - 1 : 0), err, sizeof err);
            check_status(r, err, sizeof err);
        }
        for (size_t k = 0; r == MHAVIZ_OK && k < n; k++)
            if (!isfinite(got[k]))
                abort();
    }
    safetensors_close(&st);
    return 0;
}
