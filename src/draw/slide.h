/* slide.h — the size of a slide: every picture mhaviz draws for a class
 * (the heatmaps fit it, the overview's and sharpness.png's default --size,
 * the pull slide, the architecture diagram, variants.png, kv_cache.png). */
#ifndef MHAVIZ_SLIDE_H
#define MHAVIZ_SLIDE_H

#define SLIDE_W 1920
#define SLIDE_H 1080

#endif
