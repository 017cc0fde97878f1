/* head_columns.h — which query heads a picture shows, one column each.
 *
 * A picture with room for max columns shows every head when there are at
 * most max; else the first max - 3 heads, one column "..." standing for the
 * heads between, and the last two: 32 heads in 8 columns are 0 1 2 3 4 ...
 * 30 31. Text stays the size a projector needs; heads are left out instead. */
#ifndef MHAVIZ_HEAD_COLUMNS_H
#define MHAVIZ_HEAD_COLUMNS_H

#define HEAD_COLUMNS_ELIDED (-1) /* the "..." column */

/* Fill col_head (max entries, max >= 4) with the head of each column, or
 * HEAD_COLUMNS_ELIDED; returns the number of columns. */
int head_columns(int n_heads, int max, int *col_head);

#endif
