/* head_columns.c — the heads a picture shows (see head_columns.h). */
#include "pictures/head_columns.h"

int head_columns(int n_heads, int max, int *col_head)
{
    if (n_heads <= max) {
        for (int h = 0; h < n_heads; h++)
            col_head[h] = h;
        return n_heads;
    }
    int n = 0;
    for (int h = 0; h < max - 3; h++)
        col_head[n++] = h;
    col_head[n++] = HEAD_COLUMNS_ELIDED;
    col_head[n++] = n_heads - 2;
    col_head[n++] = n_heads - 1;
    return n;
}
