/* run_memory.h — the memory a whole run needs, estimated before it starts
 * (--max-memory refuses a run over it; --timing prints it): every
 * variant's arrays (core/memory.h, the model the loader checks first), the
 * parse, or a model's load and the layers it keeps, the summary of a run
 * over several layers, the pictures' canvases (and their SVG documents,
 * with --svg), and the program. The parts are added as if all were held at
 * once: a bound above the peak, never below it. */
#ifndef MHAVIZ_RUN_MEMORY_H
#define MHAVIZ_RUN_MEMORY_H

#include "core/layer.h"
#include "pictures/render.h"

#include <stddef.h>

/* The estimate for input in, run as n_vars variants of kv[i] K/V heads
 * (a run of several holds them all at once), with --steps when steps, on
 * threads threads, into *total, and the pictures' part of it into
 * *pictures. For a model: model_bytes what its load holds
 * (checkpoint/model.h's model_memory, the n_layers layers it keeps
 * included); n_layers > 1, a run over that many layers (run/model_run.h);
 * an input file: 0 and 1. Returns MHAVIZ_OK, or MHAVIZ_ENOMEM. */
int run_memory(Renderer *r, const MhaInput *in, const int *kv, int n_vars, int steps, int threads, int n_layers,
               size_t model_bytes, size_t *total, double *pictures);

#endif
