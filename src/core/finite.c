/* finite.c — finding the first number of an array that is not finite,
 * and the first of a forward pass, named in words (finite_check_pass).
 *
 * Every array a run reads or computes is checked once (the .npy loader, the
 * forward pass's overflow check), hundreds of MB for a real model's layer.
 * A loop that stops at the first bad number is not vectorised; so blocks
 * of 4096 are swept whole first, a loop gcc vectorises at -O3 (the Makefile
 * compiles this file so), and only a block with a bad number is looked into.
 * At the Llama-sized layer (bench/), the forward pass's arrays took 15 ms of
 * CPU instead of 30 to 50. */
#include "core/finite.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>

#define BLOCK 4096

size_t finite_first_bad(const float *m, size_t n)
{
    for (size_t b = 0; b < n; b += BLOCK) {
        const size_t end = n - b < BLOCK ? n : b + BLOCK;
        int bad = 0;
        for (size_t i = b; i < end; i++)
            bad |= !isfinite(m[i]);
        if (bad)
            for (size_t i = b; i < end; i++)
                if (!isfinite(m[i]))
                    return i;
    }
    return n;
}

int finite_check_pass(const MhaConfig *c, const MhaState *s, const char *what, char *err,
                      size_t errlen)
{
    const int T = c->T, d_model = c->d_model, kv_dim = mha_kv_dim(c);
    /* The steps in the order they run: the first overflow is the cause. */
    const struct {
        const char *name;
        const float *m;
        size_t n;
        int cols;
    } steps[] = {
        {"q", s->q, (size_t)T * d_model, d_model},
        {"k", s->k, (size_t)T * kv_dim, kv_dim},
        {"v", s->v, (size_t)T * kv_dim, kv_dim},
        {"attention", s->att, (size_t)c->n_heads * T * T, T},
        {"the heads' concatenated output", s->concat, (size_t)T * d_model, d_model},
        {"the output", s->out, (size_t)T * d_model, d_model},
    };
    for (size_t k = 0; k < sizeof steps / sizeof steps[0]; k++) {
        if (!steps[k].m)
            continue; /* the wide head built from the heads keeps no q, k, v of its own */
        const size_t i = finite_first_bad(steps[k].m, steps[k].n);
        if (i == steps[k].n)
            continue;
        char place[128];
        const long row = (long)(i / steps[k].cols), col = (long)(i % steps[k].cols);
        if (steps[k].m == s->att)
            snprintf(place, sizeof place, "the attention of head %ld, query %ld, key %ld "
                     "(its scores q.k overflowed)", row / T, row % T, col);
        else
            snprintf(place, sizeof place, "%s at token %ld, column %ld", steps[k].name, row, col);
        snprintf(err, errlen, "%s: the numbers overflow float32: %s is %s; "
                 "scale the weights or the inputs down", what, place,
                 isnan(steps[k].m[i]) ? "not a number" : "infinite");
        return MHAVIZ_EINPUT;
    }
    return MHAVIZ_OK;
}
