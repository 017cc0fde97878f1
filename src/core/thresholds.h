/* thresholds.h — every threshold a verdict rests on, in one place: the
 * measures' roles, a sharp row, the pulls and their ties, what one softmax
 * keeps, and the words report.txt, the variants section and lesson.html's
 * quiz judge numbers by. The report prints its legends and the page its
 * facts from these; none is restated elsewhere. */
#ifndef MHAVIZ_THRESHOLDS_H
#define MHAVIZ_THRESHOLDS_H

/* ---- the role rule (core/measures.c): what a map does */

/* The role rule's thresholds (MeasuresRole's comment in measures.h;
 * report.txt prints its legend from these). */
#define MEASURES_SHOWN_SHARE 0.5   /* a row shows a pattern holding this share of it, or more */
#define MEASURES_ROLE_SHARE 0.5    /* a role's mean share, at least */
#define MEASURES_ROLE_EVEN_TIMES 2 /* and at least this many times its even share */
#define MEASURES_MIN_ROLE_ROWS 2   /* rows that must show a pattern before it names the role */
#define MEASURES_ROLE_ROWS_PART 4  /* and at least 1/this of the rows that could show it */
#define MEASURES_DIFFUSE_NORM 0.8  /* no role, and a mean entropy_norm this high or more: diffuse */
#define MEASURES_SPLIT_EACH 0.2    /* split: each of its two patterns this share at least, */
#define MEASURES_SPLIT_EVEN_TIMES 1.5 /* the two together this many times their even shares */
/* Two patterns' shares closer than this tie (0.5 against 0.4999): neither
 * is the role, or the strongest pattern, alone. The tie of two weights in a
 * row (PULL_TIE_WEIGHT below), for two shares of a map. */
#define MEASURES_TIE_SHARE 0.005

/* ---- a sharp row (core/measures.c) */

/* A row is sharp enough to pull when its normalised entropy (measures_row_norm_entropy) is
 * under this: half of what spreading evenly gives. Two keys at 0.89 / 0.11
 * are just sharp enough; a head that spreads its rows (the diffuse heads of
 * random layers, 0.7 to 0.9) has no pull to keep, follow or split. */
#define MEASURES_SHARP_BELOW 0.5

/* ---- the pulls (core/pull.c) and their captions */

/* A row blurs when the wide head gives no key more than this share of its
 * attention (a tie of two keys at one half each blurs). A head pulls in a
 * row when it gives its top key more than this share, at least
 * PULL_TIE_WEIGHT more than its runner-up (0.5001 against 0.4999 is a tie,
 * as it is for the wide head), and the row is sharp
 * (normalised entropy below MEASURES_SHARP_BELOW, measures.h): a head that
 * spreads its row has no pull for the wide head to keep, follow or split. */
#define PULL_BLUR_AT_MOST 0.5

/* Two keys tie for the wide head when a verdict between them would rest on
 * a difference too small to mean anything: its weights on them differ by
 * less than PULL_TIE_WEIGHT (0.499 against 0.501 is no choice), or the
 * margin between their scores is within float error, at most PULL_TIE_REL
 * times the scale of the numbers added up (pull_contest). A row whose
 * wide head ties its top key with another is a tie, never "followed" or "a
 * choice no head made". */
#define PULL_TIE_WEIGHT 0.005
#define PULL_TIE_REL 1e-5

/* ---- what one softmax keeps (core/kept.c) */

/* The wide head halved a relation in a row when its cells of it hold at
 * least this share of its row, and less than MEASURES_SHOWN_SHARE: half of
 * a half. Below it, the relation is lost. */
#define KEPT_HALVED_AT_LEAST 0.25

/* ---- the blur in report.txt's words (report/) */

/* A blur smaller than this (in normalised entropy, 0..1) is read as "about as sharp". */
#define BLUR_NOTICEABLE 0.05

/* ---- the variants section (report/report_variants.c) */

/* Thresholds of "barely changes" in the variants section: a head whose
 * map's mean JS divergence from the reference is below REPORT_BARELY_JS bits
 * and whose top key stays in at least REPORT_BARELY_TOP1 of the rows. */
#define REPORT_BARELY_JS 0.02
#define REPORT_BARELY_TOP1 0.9

/* ---- lesson.html's quiz (report/lesson_page.c, assets/lesson/quiz.js from the page's facts) */

/* The page shows a weight to 2 decimals: no quiz answer, and no
 * explanation, rests on a gap between two weights smaller than this. */
#define LESSON_PAGE_CLEAR_MARGIN 0.01

#endif
