/* labels.h — which tokens get a label along a picture's axis, and where:
 * the one rule every picture of mhaviz labels its tokens by.
 *
 * A picture has an axis of T tokens, `pitch` pixels each (a heatmap's
 * rows or columns, the sharpness plot's queries, the pull slide's keys).
 * Every label is a line of text at least LABELS_MIN_PX high, centred on
 * its token, and two labels of one level never come closer than
 * LABELS_SPACING line heights, centre to centre:
 *
 *   up to LABELS_ALL_UP_TO tokens, every token is labelled: on one level
 *   while a line fits a token, else on k staggered levels (token t on
 *   level t % k, each level set beyond the one before, k as small as fits
 *   and at most what the picture has room for), so that each level has k
 *   tokens' room per line;
 *
 *   past it (or when even two levels do not fit), on one level, in order:
 *   the first and the last token, the query the picture is about, every
 *   repeated token (its text appears again in the sentence: the names the
 *   lesson follows), then every step-th token (step 1, 2, 5, 10, 20, ...:
 *   the smallest whose labels fit) — each placed only where it keeps its
 *   room from the labels placed before it.
 *
 * A token made of punctuation (".", ",") is labelled as any other and
 * drawn on a grey chip (labels_draw), so that a lone dot stays visible. */
#ifndef MHAVIZ_LABELS_H
#define MHAVIZ_LABELS_H

#include "draw/draw.h"

#define LABELS_MIN_PX 14.0f   /* no token label is set smaller (line height, px, on the 1920 x 1080 slide) */
#define LABELS_ALL_UP_TO 48   /* every token has a label up to this many tokens */
#define LABELS_SPACING 1.1f   /* fewest line heights from one label's centre to the next on its level */
#define LABELS_MAX_LEVELS 4   /* staggered levels at most */

/* Where the labels of one axis go. */
typedef struct {
    float px;    /* line height of every label: from LABELS_MIN_PX to the picture's max_px */
    int levels;  /* 1, or more: staggered, token t on level t % levels */
    int step;    /* thinned: the regular step (else 1) */
    int n;       /* tokens labelled */
    int thinned; /* 1 when some token has no label */
} LabelsPlan;

/* Plan the labels of an axis of T tokens, pitch pixels each, with tokens
 * (T) their texts (for the repeated ones; NULL: none counts as repeated)
 * and query the token the picture is about (-1: none). Labels get the
 * largest line height up to max_px at which they fit (never below
 * LABELS_MIN_PX) on as few levels as fit, at most max_levels (1 when the
 * picture has no room for a second). Fills shown (T): 0 = no label, else 1 + its level,
 * and centre (T): each label's centre along the axis in pixels from the
 * axis's start (a thinned label is kept half a line inside the axis's
 * ends). Returns the plan. */
LabelsPlan labels_plan(int T, char *const *tokens, int query, float pitch, float max_px, int max_levels,
                       unsigned char *shown, float *centre);

/* labels_plan with a floor of the picture's own: no label below min_px
 * (LABELS_MIN_PX at least), the same rule above it (a slide read from the
 * back row of a class, variants.png, asks for 18 px). */
LabelsPlan labels_plan_min(int T, char *const *tokens, int query, float pitch, float min_px, float max_px,
                           int max_levels, unsigned char *shown, float *centre);

/* The first pair of labels that overlap, as a picture placed plan p's
 * labels: level l's labels start from[l] pixels from the axis (across it)
 * and reach to[l]. Labels a and b (a < b) overlap when their centres lie
 * closer than a line height (p.px) and their levels' spans [from, to)
 * meet. Returns 1 and sets *a, *b, or 0 when none overlap. For the tests,
 * and for a picture to check itself. */
int labels_overlap(const LabelsPlan *p, int T, const unsigned char *shown, const float *centre, const float *from,
                   const float *to, int *a, int *b);

/* "every 5th token labelled, with the first, the last and the repeated
 * words" into buf for a thinned plan; "" when every token has a label. */
void labels_note(const LabelsPlan *p, char *buf, unsigned long len);

/* 1 when label (as shown) is made of punctuation only: ".", ",", "?!", and
 * beyond ASCII the curly quotes, dashes, the ellipsis, « » and CJK's 、。. */
int labels_is_punctuation(const char *label);

/* Draw label as draw_text does (anchor (x, y), along, across DRAW_MID,
 * rotated 1: reading upwards), in ink at line height px; a punctuation
 * label on a light grey chip. Returns MHAVIZ_OK or MHAVIZ_ENOMEM. */
int labels_draw(DrawCanvas *c, const DrawFont *f, const char *label, float px, int x, int y, int along, int rotated);

#endif
