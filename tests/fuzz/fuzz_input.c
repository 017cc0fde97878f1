/* fuzz_input.c — libFuzzer harness: the whole load-and-validate path, then
 * the forward pass on whatever validates.
 *
 * Built by `make fuzz` with clang -fsanitize=fuzzer,address,undefined. The
 * same file is also linked into the Check runner (tests/faults/check_fuzzreplay.c),
 * which replays the seed corpus and every regression file through it, so a
 * crash found once stays fixed under `make test`, `make asan` and
 * `make memcheck` too.
 *
 * The loader must refuse every malformed input with MHAVIZ_EINPUT and a
 * message, and everything it accepts must be safe to run. Shapes that pass
 * the loader's limits but would make one fuzz execution slow (the limits are
 * sized for real runs, not for thousands of runs a second) skip the forward
 * pass: FUZZ_MAX_* below. The loader runs with its default limits except the
 * memory bound, lowered to FUZZ_MAX_MEMORY_MB so that no accepted input can
 * approach libFuzzer's 2 GB malloc limit. */
#include "io/input.h"
#include "core/finite.h"
#include "core/mha.h"
#include "core/pool.h"
#include "core/status.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Forward pass only for shapes at most this big (one execution stays fast). */
#define FUZZ_MAX_T 64
#define FUZZ_MAX_D 64
#define FUZZ_MAX_ATT (1 << 16) /* n_heads * T * T */
#define FUZZ_MAX_MEMORY_MB 256

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Abort (a crash the fuzzer reports) when cond is false. */
#define FUZZ_ASSERT(cond, what)                                                  \
    do {                                                                         \
        if (!(cond)) {                                                           \
            fprintf(stderr, "fuzz_input: broken promise: %s\n", what);            \
            abort();                                                             \
        }                                                                        \
    } while (0)

/* The promises of a validated input (input.h), checked before running it. */
static void check_config(const MhaInput *in)
{
    const MhaConfig *c = &in->cfg;
    FUZZ_ASSERT(c->T >= 1 && c->d_model >= 1 && c->n_heads >= 1, "positive shapes");
    FUZZ_ASSERT(c->n_kv_heads >= 1 && c->n_heads % c->n_kv_heads == 0, "n_kv_heads divides n_heads");
    FUZZ_ASSERT(c->d_model % c->n_heads == 0 && c->head_dim == c->d_model / c->n_heads,
                "head_dim = d_model / n_heads");
    FUZZ_ASSERT(in->tokens && in->x, "tokens and x present");
    for (int t = 0; t < c->T; t++)
        FUZZ_ASSERT(in->tokens[t] != NULL, "every token is a string");
    for (size_t i = 0; i < (size_t)c->T * c->d_model; i++)
        FUZZ_ASSERT(isfinite(in->x[i]), "x is finite");
}

/* A pass the CLI accepts (finite_check_pass) has rows that are
 * distributions: every visible weight in [0, 1], each row summing to 1. */
static void check_pass(const MhaConfig *c, const MhaState *s)
{
    char err[MHAVIZ_ERRLEN];
    if (finite_check_pass(c, s, "fuzz", err, sizeof err) != MHAVIZ_OK) {
        FUZZ_ASSERT(err[0] != '\0', "an overflow comes with a message");
        return;
    }
    for (int h = 0; h < c->n_heads; h++)
        for (int i = 0; i < c->T; i++) {
            const float *row = s->att + ((size_t)h * c->T + i) * c->T;
            double sum = 0.0;
            for (int j = 0; j < c->T; j++) {
                FUZZ_ASSERT(row[j] >= 0.0f && row[j] <= 1.0f, "a weight in [0, 1]");
                sum += row[j];
            }
            FUZZ_ASSERT(fabs(sum - 1.0) < 1e-3, "a row sums to 1");
        }
}

/* Run both forward passes like the CLI does; check every attention row.
 * pool_to (from the fuzz bytes): pool the K/V heads into this many first,
 * as --kv-heads does (refused with a message unless it divides n_kv_heads). */
static void run_forward(MhaInput *in, int pool_to)
{
    MhaConfig *c = &in->cfg;
    if (c->T > FUZZ_MAX_T || c->d_model > FUZZ_MAX_D ||
        (size_t)c->n_heads * c->T * c->T > FUZZ_MAX_ATT)
        return;
    MhaState multi = {0}, single = {0};
    if (pool_to != c->n_kv_heads) {
        char err[MHAVIZ_ERRLEN] = "";
        const int rc = pool_kv_heads(c, &in->w, pool_to, err, sizeof err);
        FUZZ_ASSERT(rc == MHAVIZ_OK || (rc != MHAVIZ_OK && err[0]), "a refused pooling says why");
        FUZZ_ASSERT(rc != MHAVIZ_OK || c->n_kv_heads == pool_to, "pooled to what was asked");
    }
    if (mha_state_build(&multi, c, 1) != MHAVIZ_OK)
        goto cleanup;
    mha_forward(c, &in->w, in->x, &multi);
    /* The single head as the CLI runs it (core/variant.c): a given one
     * through its own pass, else the wide head from the heads' pass. */
    const MhaConfig wide_cfg = mha_single_head_config(c);
    if (in->has_single) {
        if (mha_state_build(&single, &wide_cfg, 1) != MHAVIZ_OK)
            goto cleanup;
        mha_forward(&wide_cfg, &in->single, in->x, &single);
    } else {
        if (mha_state_build_wide(&single, &wide_cfg, 1) != MHAVIZ_OK)
            goto cleanup;
        mha_forward_wide(c, &in->w, &multi, &single);
    }
    check_pass(c, &multi);
    check_pass(&wide_cfg, &single);
    /* Masked cells are exact zeros whatever the numbers did. */
    for (int h = 0; h < c->n_heads && c->causal; h++)
        for (int i = 0; i < c->T; i++)
            for (int j = i + 1; j < c->T; j++)
                FUZZ_ASSERT(multi.att[((size_t)h * c->T + i) * c->T + j] == 0.0f, "masked cell is 0");
cleanup:
    mha_state_free(&single);
    mha_state_free(&multi);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char err[MHAVIZ_ERRLEN];
    err[0] = '\0';
    MhaInput *in = NULL;
    int n = 0;
    /* base_dir names a folder that does not exist: fuzz bytes never make the
     * loader open a real file. No NUL after the bytes: the loader must stay
     * within len. A file of "layers" gives several inputs, each run. */
    InputLimits lim;
    input_default_limits(&lim);
    lim.max_memory_bytes = (size_t)FUZZ_MAX_MEMORY_MB << 20;
    int rc = input_parse_layers((const char *)data, size, "fuzz.json", "/nonexistent-mhaviz-fuzz", &lim, &in, &n,
                                err, sizeof err);
    FUZZ_ASSERT(rc == MHAVIZ_OK || rc == MHAVIZ_EINPUT || rc == MHAVIZ_ENOMEM || rc == MHAVIZ_EIO,
                "a documented status");
    FUZZ_ASSERT(memchr(err, '\0', sizeof err) != NULL, "err is NUL-terminated");
    FUZZ_ASSERT(in != NULL || rc == MHAVIZ_ENOMEM, "inputs unless out of memory");
    if (rc != MHAVIZ_OK) {
        FUZZ_ASSERT(err[0] != '\0', "a failure comes with a message");
        FUZZ_ASSERT(n == 1 && (!in || (!in->x && !in->tokens)), "a failure keeps only the warnings");
    } else {
        FUZZ_ASSERT(n >= 1, "at least one layer");
        for (int i = 0; i < n; i++) {
            FUZZ_ASSERT(in[i].cfg.T == in[0].cfg.T && in[i].cfg.d_model == in[0].cfg.d_model &&
                            in[i].cfg.n_heads == in[0].cfg.n_heads,
                        "every layer of a file has the first one's shape");
            check_config(&in[i]);
            run_forward(&in[i], size ? data[size - 1] % in[i].cfg.n_kv_heads + 1 : in[i].cfg.n_kv_heads);
        }
    }
    for (int i = 0; in && i < n; i++)
        input_free(&in[i]);
    free(in);
    return 0;
}
