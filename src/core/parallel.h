/* parallel.h — when a loop is worth threads.
 *
 * Below these figures a loop runs on one thread: waking a second thread
 * costs more than it saves, far more on a busy machine, where each parallel
 * loop may wait milliseconds for a core (T = 7, d_model 16: 0.6 ms a
 * forward pass on one thread, 79 ms on two, with 12 programs running).
 * A class-size layer stays on one thread throughout. */
#ifndef MHAVIZ_PARALLEL_H
#define MHAVIZ_PARALLEL_H

/* 2^22 multiply-adds: the forward pass and the matrix products (mha.c, wide.c, matmul.c) */
#define PARALLEL_MIN_WORK 4194304.0
/* map cells measured, or elements computed one by one (measures.c, pull.c, layer_summary.c,
 * variants_summary.c; checkpoint/model.c's activations and converted rows) */
#define PARALLEL_MIN_CELLS ((size_t)1 << 15)

#endif
