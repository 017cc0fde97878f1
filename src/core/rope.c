/* rope.c — the frequencies of rotary positions. */
#include "core/rope.h"

#include <math.h>

double rope_frequency(const MhaRope *r, int e)
{
    const double freq = pow(r->theta, -2.0 * e / r->dim);
    if (r->factor <= 0.0)
        return freq;
    /* llama3: long wavelengths (low frequencies) slowed down by factor, short ones kept. */
    const double wavelen = 2.0 * M_PI / freq;
    const double low_freq_wavelen = r->original_max_position / r->low_freq_factor;
    const double high_freq_wavelen = r->original_max_position / r->high_freq_factor;
    if (wavelen < high_freq_wavelen)
        return freq;
    if (wavelen > low_freq_wavelen)
        return freq / r->factor;
    const double smooth = (r->original_max_position / wavelen - r->low_freq_factor) /
                          (r->high_freq_factor - r->low_freq_factor);
    return (1.0 - smooth) * freq / r->factor + smooth * freq;
}
