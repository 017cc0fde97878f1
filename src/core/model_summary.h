/* model_summary.h — a run over several layers of one model, summed up
 * layer by layer as each layer is measured (report/report_model.c writes
 * it): per layer the heads' roles counted, what the wide head kept and
 * lost, the blur and chance's ranges; across the layers the strongest head
 * of each pattern a class looks for.
 *
 * A head's support for a pattern is the rows that show it (measures.h: the
 * pattern's cells hold at least half of the row) out of the rows that could
 * show it (the pattern names one of the row's visible cells; each cell
 * counts for one pattern only, measures.h's list order). Induction: key j
 * follows an earlier copy of query i's token (token j - 1 = token i), and
 * j is not the previous token, the query itself nor another copy; a row
 * shows it when such keys hold half of it: "L5H1 induction: 14 of 16
 * rows on the token after the earlier copy". */
#ifndef MHAVIZ_MODEL_SUMMARY_H
#define MHAVIZ_MODEL_SUMMARY_H

#include "core/chance.h"
#include "core/measures.h"
#include "core/variant.h"

/* One layer's row of the table. */
typedef struct {
    int layer;                   /* the model's layer, from 0 */
    int n_heads;
    int roles[MEASURES_NONE + 1]; /* heads per role (MeasuresRole) */
    MeasuresRole *head_role;     /* (n_heads) each head's role */
    int rows, kept, lost;        /* kept.h: the heads' relation rows, those the wide head kept and those it
                                  * lost (the rest it halved) */
    double blur;                 /* measures_blur: NAN when undefined */
    int draws;                   /* chance's random layers (0: no ranges) */
    ChanceRange blur_r, kept_r, lost_r; /* chance's ranges of blur, kept and lost */
} LayerRow;

/* The patterns whose strongest head the report names, in its order. */
#define MODEL_SUMMARY_N_SLIDES 4
extern const MeasuresRole model_summary_slides[MODEL_SUMMARY_N_SLIDES];

/* The strongest head of one pattern across the layers: the most rows
 * showing it, then the largest mean share, then the first layer and head. */
typedef struct {
    int layer, head; /* -1: no head shows it in MEASURES_MIN_ROLE_ROWS rows */
    int shown, rows; /* its support: rows that show the pattern, of the rows that could
                      * (with no head: shown 0, rows the most rows that could show it) */
    double share;    /* the pattern's mean share of those rows (measures.h's pattern[]) */
    int is_role;     /* 1: the pattern is the head's role */
} SlideHead;

/* One head's rows over several sentences, summed: what its MapMeasures'
 * means come from (measures_role_from_sums). */
typedef struct {
    MapMeasures m;                   /* rows and shown summed; pattern, even and role from the sums */
    double sum[MEASURES_N_PATTERNS];  /* each pattern's shares summed over the rows that could show it */
    double even[MEASURES_N_PATTERNS]; /* and spreading evenly's */
    double entropy_sum;              /* entropy_norm summed over the rows with a choice */
    long choice_rows;                /* rows with a choice (two visible keys or more) */
} PooledHead;

/* The maps kept for model_overview.png: at most this many tokens a side. */
#define MODEL_SUMMARY_THUMB 48

typedef struct {
    int n;           /* layers summed */
    int n_heads;     /* every layer's */
    int thumb_T;     /* the side of each kept map: T, or ceil(T / k) for blocks of k x k tokens,
                      * k = ceil(T / MODEL_SUMMARY_THUMB) */
    int block;       /* k: tokens per side of a block */
    float *thumbs;   /* (n, n_heads, thumb_T, thumb_T) each head's map, each cell the mean of its
                      * block's visible cells (0 when it has none: masked) */
    LayerRow *layers; /* (n) */
    int sentences;   /* the sentences the roles and the heads worth a slide rest on (1: the run's own) */
    PooledHead *pooled; /* (n, n_heads) each head's rows over every sentence */
    SlideHead best[MODEL_SUMMARY_N_SLIDES]; /* indexed as model_summary_slides */
} ModelSummary;

/* Start an empty summary for up to n layers of n_heads heads over T
 * tokens. MHAVIZ_OK or MHAVIZ_ENOMEM. */
int model_summary_init(ModelSummary *s, int n, int n_heads, int T);

/* Bytes a summary of n layers of n_heads heads over T tokens holds once
 * filled (its rows, the heads' roles, the kept maps). */
size_t model_summary_bytes(int n, int n_heads, int T);

/* Add the measured variant v (its chance drawn) as the model's layer
 * `layer`. MHAVIZ_OK or MHAVIZ_ENOMEM. */
int model_summary_add(ModelSummary *s, const Variant *v, int layer);

/* Add another sentence's measured variant v of the summary's i-th layer
 * (the same layer, the same heads): its rows join each head's pooled
 * rows. Call model_summary_pooled_roles once every sentence is in. */
void model_summary_pool(ModelSummary *s, int i, const Variant *v);

/* With more than one sentence: each head's role (head_role, the roles
 * counted) and the heads worth a slide from its rows over every sentence,
 * by the same rule as one map's (core/measures.h). The maps, kept, lost
 * and blur stay the first sentence's. With one sentence nothing changes. */
void model_summary_pooled_roles(ModelSummary *s);

/* Free what the summary holds and zero it. Safe on a zeroed summary. */
void model_summary_free(ModelSummary *s);

#endif
