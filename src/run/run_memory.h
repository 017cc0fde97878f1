/* run_memory.h — the memory a whole run needs, estimated before it starts
 * (--max-memory refuses a run over it; --timing prints it): every
 * variant's arrays (core/memory.h, the model the loader checks first), the
 * parse, the pictures' canvases (and their SVG documents, with --svg), and
 * the program. */
#ifndef MHAVIZ_RUN_MEMORY_H
#define MHAVIZ_RUN_MEMORY_H

#include "core/layer.h"
#include "pictures/render.h"

#include <stddef.h>

/* The estimate for input in, run as n_vars variants of kv[i] K/V heads
 * (a run of several holds them all at once), with --steps when steps, on
 * threads threads, into *total, and the pictures' part of it into
 * *pictures. Returns MHAVIZ_OK, or MHAVIZ_ENOMEM. */
int run_memory(Renderer *r, const MhaInput *in, const int *kv, int n_vars, int steps, int threads, size_t *total,
               double *pictures);

#endif
