/* memory.h — the memory a run needs, estimated from the layer's shape
 * before anything is allocated (the loader refuses an input over
 * --max-memory with it; run/run_memory.c adds the pictures' canvases). */
#ifndef MHAVIZ_MEMORY_H
#define MHAVIZ_MEMORY_H

#include "core/layer.h"

#include <stddef.h>

/* Bytes of memory per byte of JSON text while it is parsed, for numbers
 * printed with about 6 significant digits (the text plus cJSON's tree: one
 * 64-byte node, 80 bytes from malloc, per number of about 11 characters with
 * its ", ": 1 + 80 / 11 = 8.3). The loader itself counts the exact figure in
 * the text before parsing. */
#define MEMORY_JSON_FACTOR 9

/* Estimated bytes of the arrays of a whole run for config c (the input, the
 * weights, both forward passes, the maps' copies for the pictures and the
 * reports), plus parsing json_bytes of typical JSON. The pictures' canvases
 * and the program itself are the caller's to add (run/run_memory.c). */
size_t memory_estimate(const MhaConfig *c, size_t json_bytes);

/* The same with the memory parsing took counted exactly (parse_bytes), as
 * the loader counts it before parsing. */
size_t memory_estimate_parsed(const MhaConfig *c, size_t parse_bytes);

/* Bytes of one layer's input as loaded (x, the weights and the single
 * head's): what each further layer of a file of "layers" adds while the
 * layers wait their turn. */
size_t memory_input(const MhaConfig *c);

#endif
