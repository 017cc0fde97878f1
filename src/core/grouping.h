/* grouping.h — which query heads share a K/V head (GQA), and how much it matters.
 *
 * A grouping puts the n_heads query heads into n_groups groups of the same
 * size; the heads of a group share one K/V head, the mean of theirs
 * (pool.h). Written as the command line takes it: the groups separated by
 * '/', the heads of a group by ',': "0,2/1,3". The default grouping, the
 * one GQA's contiguous layout gives (head h in group h / (n_heads /
 * n_groups)), is "0,1/2,3" for 4 heads in 2 groups.
 *
 * Which heads share matters: a shared K/V head is the mean of its heads'
 * keys and values (each turned toward the group's first head, pool.h), so
 * heads whose keys one turn brings together share with little loss, and
 * heads that want different keys cannot.
 * grouping_rank runs the layer under every grouping into n_groups (up to
 * GROUPING_MAX_HEADS heads) and measures how far each head moves from its
 * multi-head self. */
#ifndef MHAVIZ_GROUPING_H
#define MHAVIZ_GROUPING_H

#include "core/layer.h"
#include "core/pool.h"

#include <stddef.h>

/* Groupings are chosen (--kv-groups) and ranked for layers of at most this
 * many heads: 8 heads have 105 groupings into 4 pairs, 35 into 2 fours. */
#define GROUPING_MAX_HEADS 8

typedef struct {
    int n_heads, n_groups;
    int of[GROUPING_MAX_HEADS]; /* of[h]: head h's group; groups numbered in order of their first head */
} Grouping;

/* Parse a grouping such as "0,2/1,3" for n_heads heads into *g. Returns
 * MHAVIZ_OK, or MHAVIZ_EINPUT with err naming what is wrong ("--kv-groups
 * 0,2/1: head 3 is in no group", "... head 2 is in two groups", "... the
 * groups differ in size (2 and 1 heads)", "... 'x' is not a head", "... head
 * 5: the layer has 4 heads (0 to 3)", "... more than 8 heads"). */
int grouping_parse(const char *arg, int n_heads, Grouping *g, char *err, size_t errlen);

/* The default grouping of n_heads heads into n_groups (n_groups divides n_heads). */
void grouping_contiguous(Grouping *g, int n_heads, int n_groups);

/* 1 when g is the default (contiguous) grouping. */
int grouping_is_contiguous(const Grouping *g);

/* g as "0,2/1,3" into buf. */
void grouping_format(char *buf, size_t n, const Grouping *g);

/* How far the heads move under one grouping, over the rows with a choice
 * (measures.h, MapComparison). */
typedef struct {
    Grouping g;
    double js_mean;   /* mean over the heads of their JS from their MHA maps, in bits */
    double js_max;    /* the head that moves most */
    int js_max_head;
    double top1_mean; /* mean over the heads of top-1 agreement with their MHA maps */
    int unique;       /* 1 when the pooling's alignment was unique (pool.h), or nothing was aligned */
} GroupingScore;

/* The groupings of one variant, ranked (n = 0: none, the layer is not one
 * grouping_rank takes). */
typedef struct {
    GroupingScore *scores; /* (n) the least moved first */
    int n;
    int withheld; /* 1: ranked, but not shown (n = 0): some grouping's pooling was coordinate-dependent
                   * (--pool mean, or an alignment that was not unique) */
} GroupingRanking;

/* Every grouping of in's n_heads heads (n_heads <= GROUPING_MAX_HEADS, in
 * a multi-head input: n_kv_heads = n_heads) into n_groups, run on in's x
 * and compared with the heads' multi-head maps mha_att (n_heads, T, T),
 * into *out (*n of them, the caller frees *out), the least moved first (the
 * mean JS; ties in the order of the groupings' text); each grouping pooled
 * by method. Returns MHAVIZ_OK, MHAVIZ_EINPUT (not such a layer) or
 * MHAVIZ_ENOMEM. */
int grouping_rank(const MhaInput *in, const float *mha_att, int n_groups, PoolMethod method, GroupingScore **out,
                  int *n);

#endif
