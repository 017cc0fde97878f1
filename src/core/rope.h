/* rope.h — the frequencies of rotary positions (MhaRope, core/layer.h). */
#ifndef MHAVIZ_ROPE_H
#define MHAVIZ_ROPE_H

#include "core/layer.h"

/* The angle per position, in radians, by which pair e (0 <= e < dim/2:
 * columns e and e + dim/2 of a block) turns: theta^(-2e/dim), then, under
 * rope_scaling of type llama3, divided by factor for wavelengths longer than
 * original_max_position / low_freq_factor, kept for those shorter than
 * original_max_position / high_freq_factor, and blended in between (as
 * transformers' _compute_llama3_parameters does). */
double rope_frequency(const MhaRope *r, int e);

#endif
