/* rival.h — what the pictures and reports call the one head the heads are
 * compared with. Without "single_head" in the input it is the wide head,
 * built from the heads' own projections side by side; with it, it is a head
 * trained on its own (docs/input.md), which is never called wide. One
 * source for every title and sentence that names it. */
#ifndef MHAVIZ_RIVAL_H
#define MHAVIZ_RIVAL_H

typedef struct {
    const char *the;   /* in a sentence: "the wide head" | "the one head trained on its own" */
    const char *title; /* a picture's title: "wide head" | "one head trained on its own" */
    const char *panel; /* a panel's title, under a title that says the rest: "wide head" | "one head" */
    const char *label; /* a table's row label, 5 columns at most: "wide" | "alone" */
    const char *top;   /* its top key: "the wide head's top key" | "the top key of the one head trained on its own" */
    const char *too;   /* after a key: "the wide head's" | "that of the one head trained on its own" */
} RivalName;

/* trained: 1 when the input gave "single_head", 0 for the built wide head.
 * The names are static strings. */
const RivalName *rival_name(int trained);

#endif
