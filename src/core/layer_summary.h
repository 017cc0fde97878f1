/* layer_summary.h — everything the writers say about one layer, measured
 * once before any of them runs: each map's measures against the wide head,
 * each map's rows' sharpness, the blur, what the wide head kept of the
 * heads' relations, how far the two outputs differ, the cost table and the
 * K/V cache of the input's trained models. report/, pictures/ and the page
 * format it; none of them measures again. */
#ifndef MHAVIZ_LAYER_SUMMARY_H
#define MHAVIZ_LAYER_SUMMARY_H

#include "core/kept.h"
#include "core/layer.h"
#include "core/measures.h"
#include "core/mha.h"

#include <stdint.h>

typedef struct {
    const MhaConfig *c;     /* the layer's config (borrowed) */
    const float *wide_att;  /* (T, T) the single wide head's map (borrowed) */
    const int *kv_of;       /* (n_heads) each query head's K/V head (borrowed); NULL: h / (n_heads / n_kv_heads) */
    MapMeasures *heads;     /* (n_heads) */
    MapComparison *cmp;     /* (n_heads) each head against the wide head */
    MapMeasures wide;       /* the single wide head */
    double *rows_entropy_norm; /* (n_heads + 1, T) each map's rows' normalised entropy, the wide head's
                                * last, NAN for a row of one key (measures_row_entropy_norm): sharpness.png */
    double heads_bits_mean; /* mean of the heads' entropy_bits */
    double heads_norm_mean; /* mean of the heads' entropy_norm (NAN = null) */
    double heads_norm_min;  /* the sharpest head's entropy_norm (NAN = null) */
    double blur;            /* wide entropy_norm - heads_norm_mean */
    double rel_diff;        /* ||O_multi - O_single||_F / ||O_multi||_F */
    double cosine;          /* mean over tokens of cos(O_multi row, O_single row) */
    KeptLayer kept;         /* the heads' relations the wide head kept and lost (kept.h) */
    CostTable cost;         /* the layer's and the wide head's cost, with their totals */
    int64_t trained_kv_bytes[TRAINING_MAX_KV + 1]; /* (training.n_kv_losses + 1) the K/V cache bytes per token
                                                    * of the input's models trained by K/V heads (its
                                                    * "training"), by training.kv_heads, the one head last */
} LayerSummary;

/* Summarise the layer of in (its cfg, tokens and weights' biases): multi is
 * the heads' forward pass, single the wide head's (its own weights when
 * single_given, else built from the heads'), m (n_heads + 1) the maps'
 * measures_layer, the wide head last (NULL: measured here), kv_of as in
 * LayerSummary. *s borrows c, single's map and kv_of; free it with
 * layer_summary_free (also after a failure). Returns MHAVIZ_OK or
 * MHAVIZ_ENOMEM. */
int layer_summary_build(LayerSummary *s, const MhaInput *in, const MhaState *multi, const MhaState *single,
                        int single_given, const MapMeasures *m, const int *kv_of);

/* Free what layer_summary_build made and zero *s. Safe on a zeroed summary. */
void layer_summary_free(LayerSummary *s);

/* Query head h's K/V head: s->kv_of[h], or h / (n_heads / n_kv_heads). */
int layer_summary_kv_head(const LayerSummary *s, int h);

#endif
