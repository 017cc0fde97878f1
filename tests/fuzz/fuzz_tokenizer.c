/* fuzz_tokenizer.c — libFuzzer harness for the tokenizer.json reader and
 * encoder (src/checkpoint/tokenizer.c).
 *
 * The fuzz bytes up to the first NUL are DIR/tokenizer.json, the bytes after
 * it the text to encode (no NUL: the text is "Mary's  café 12 é\n"). The
 * loader must refuse a bad file with a message; a loaded tokenizer must give,
 * for any text, either ids inside its vocabulary whose piece texts are UTF-8,
 * or a documented status with a message. Built by
 * `make fuzz FUZZ_TARGET=tokenizer`; seeds in tests/fuzz/corpus_tokenizer/. */
#include "checkpoint/tokenizer.h"
#include "core/status.h"
#include "text/utf8.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[] = "/tmp/mhaviz-fuzz-tokenizer-XXXXXX";
static char path[sizeof dir + 32];

static void remove_scratch(void)
{
    unlink(path);
    rmdir(dir);
}

static void check_utf8(const char *s)
{
    size_t n = strlen(s);
    for (size_t i = 0; i < n;) {
        int k = utf8_decode((const unsigned char *)s + i, n - i, NULL);
        if (k == 0)
            abort();
        i += (size_t)k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (!path[0]) {
        if (!mkdtemp(dir))
            abort();
        snprintf(path, sizeof path, "%s/tokenizer.json", dir);
        atexit(remove_scratch);
    }
    const uint8_t *nul = memchr(data, 0, size);
    size_t json_len = nul ? (size_t)(nul - data) : size;
    FILE *f = fopen(path, "wb");
    if (!f || fwrite(data, 1, json_len, f) != json_len || fclose(f) != 0)
        abort();
    char *text;
    if (nul) {
        size_t n = size - json_len - 1;
        text = malloc(n + 1);
        if (!text)
            abort();
        memcpy(text, nul + 1, n);
        text[n] = '\0'; /* (a NUL inside ends the text early) */
    } else {
        text = strdup("Mary's  caf\xc3\xa9 12 \xc3\xa9\n");
    }

    char msg[512];
    msg[0] = '\0';
    Tokenizer *tok = tokenizer_load(dir, msg, sizeof msg);
    if (!tok) {
        if (msg[0] == '\0' || !memchr(msg, '\0', sizeof msg))
            abort();
        free(text);
        return 0;
    }
    int *ids = NULL, n_ids = -1;
    int rc = tokenizer_encode(tok, text, &ids, &n_ids, msg, sizeof msg);
    if (rc != MHAVIZ_OK && rc != MHAVIZ_EINPUT && rc != MHAVIZ_ENOMEM)
        abort();
    if (rc != MHAVIZ_OK && (msg[0] == '\0' || ids != NULL || n_ids != 0))
        abort();
    for (int i = 0; rc == MHAVIZ_OK && i < n_ids; i++) {
        if (ids[i] < 0 || ids[i] >= tokenizer_vocab_size(tok))
            abort();
        char *piece = tokenizer_piece_text(tok, ids[i]);
        if (!piece)
            abort();
        check_utf8(piece);
        free(piece);
    }
    free(ids);
    free(text);
    tokenizer_free(tok);
    return 0;
}
