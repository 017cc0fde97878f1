/* memory.c — the memory a run needs, from the layer's shape. */
#include "core/memory.h"

#include <stdint.h>

/* Floats of a layer's input: x, the weights and the single head's. */
static double input_floats(const MhaConfig *c)
{
    const double T = c->T, d = c->d_model;
    const double kv = (double)c->n_kv_heads * c->head_dim;
    double floats = 0;
    floats += T * d;                                 /* x */
    floats += 2 * d * d + 2 * d * kv + 2 * d + 2 * kv; /* the layer's weights and biases */
    floats += 4 * d * d + 4 * d;                      /* the single head's (given or built) */
    return floats;
}

/* Bytes of the arrays a run allocates for config c (input, weights, both
 * forward passes, the maps' copies for rendering and the reports). */
static double run_bytes(const MhaConfig *c)
{
    const double T = c->T, d = c->d_model, H = c->n_heads;
    const double kv = (double)c->n_kv_heads * c->head_dim;
    double floats = input_floats(c);
    floats += 3 * T * d + 3 * T * kv + 2 * H * T * T; /* multi-head state: q concat out, k v kt, att + scores */
    floats += 6 * T * d + 2 * T * T;                  /* single-head state (a given single head's: q k v kt too) */
    floats += 2 * H * T * T;                          /* rendering and report copies of the maps */
    return floats * sizeof(float);
}

static size_t to_size(double bytes)
{
    return bytes >= (double)SIZE_MAX ? SIZE_MAX : (size_t)bytes;
}

size_t memory_estimate(const MhaConfig *c, size_t json_bytes)
{
    return to_size(run_bytes(c) + (double)json_bytes * MEMORY_JSON_FACTOR);
}

size_t memory_estimate_parsed(const MhaConfig *c, size_t parse_bytes)
{
    return to_size(run_bytes(c) + (double)parse_bytes);
}

size_t memory_input(const MhaConfig *c)
{
    return to_size(input_floats(c) * sizeof(float));
}
