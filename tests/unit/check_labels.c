/* check_labels.c — the one rule for token labels (labels.h). */
#include "pictures/labels.h"

#include <check.h>
#include <stdio.h>
#include <string.h>

#define MAX_T 4096

/* The 45-token sentence the slides are checked on:
 * names that come back, and punctuation. */
static char *class45[] = {"Mary", "gave",  "the",   "old",  "book", "to",   "John", "because", "John",
                          "had",  "helped", "Mary", "move", ".",    "Then", "John", "thanked", "Mary",
                          ",",    "and",   "Mary",  "smiled", "at",  "John", ".",    "Later",   "Tom",
                          "asked", "John", "where", "Mary", "was",  ",",    "and",  "John",    "said",
                          "that", "Mary",  "went",  "home", "with", "Tom",  "and",  "Sue",     "."};

static unsigned char shown[MAX_T];
static float centre[MAX_T];

/* Up to 48 tokens every one has a label at LABELS_MIN_PX or more: one
 * level while a line fits a token (17 px a token: 15 px lines, 17 / 1.1),
 * two staggered levels when only two tokens' room fits one (8 px a token:
 * 14 px lines, 2 x 8 / 1.1 = 14.5), none overlapping. */
START_TEST(test_every_token_up_to_48)
{
    ck_assert_int_eq((int)(sizeof class45 / sizeof class45[0]), 45);
    LabelsPlan p = labels_plan(45, class45, -1, 800.0f / 45.0f, 28.0f, 2, shown, centre);
    ck_assert_int_eq(p.n, 45);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, 16.0f); /* floor(17.78 / 1.1) */
    ck_assert(!p.thinned);
    int a, b;
    const float one_from[1] = {0.0f}, one_to[1] = {60.0f};
    ck_assert(!labels_overlap(&p, 45, shown, centre, one_from, one_to, &a, &b));

    p = labels_plan(45, class45, -1, 8.0f, 28.0f, 2, shown, centre);
    ck_assert_int_eq(p.n, 45);
    ck_assert_int_eq(p.levels, 2);
    ck_assert_float_ge(p.px, LABELS_MIN_PX);
    for (int t = 0; t < 45; t++)
        ck_assert_int_eq(shown[t], 1 + t % 2);
    /* level 1 set beyond level 0's widest label: apart; set over it: overlapping neighbours */
    const float apart_from[2] = {0.0f, 66.0f}, apart_to[2] = {60.0f, 126.0f};
    const float over_from[2] = {0.0f, 30.0f}, over_to[2] = {60.0f, 90.0f};
    ck_assert(!labels_overlap(&p, 45, shown, centre, apart_from, apart_to, &a, &b));
    ck_assert(labels_overlap(&p, 45, shown, centre, over_from, over_to, &a, &b));
    ck_assert_int_eq(b, a + 1);

    /* 5 px a token (variants.png's maps): four levels, each with 20 px a line */
    p = labels_plan(45, class45, -1, 5.0f, 20.0f, LABELS_MAX_LEVELS, shown, centre);
    ck_assert_int_eq(p.n, 45);
    ck_assert_int_eq(p.levels, 4);
    ck_assert_float_ge(p.px, LABELS_MIN_PX);

    /* 48 tokens at the heatmap's 16 px a token (768 px map): one level at 14 px */
    char *t48[48];
    for (int t = 0; t < 48; t++)
        t48[t] = class45[t % 45];
    p = labels_plan(48, t48, -1, 16.0f, 28.0f, 2, shown, centre);
    ck_assert_int_eq(p.n, 48);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, 14.0f);
}
END_TEST

/* Past 48: one level at LABELS_MIN_PX, the first, the last, the query and
 * the repeated words always labelled while they keep their room, then
 * every step-th; nothing overlaps. */
START_TEST(test_thinned_past_48)
{
    enum { T = 90 };
    char *tok[T];
    static char words[T][16];
    for (int t = 0; t < T; t++) {
        snprintf(words[t], sizeof words[t], "w%d", t);
        tok[t] = words[t];
    }
    tok[30] = tok[70] = "John"; /* one name, twice */
    const float pitch = 800.0f / T; /* 8.9 px: a 14 px label needs 15.4, so every 2nd fits */
    LabelsPlan p = labels_plan(T, tok, 57, pitch, 28.0f, 2, shown, centre);
    ck_assert(p.thinned);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, LABELS_MIN_PX);
    ck_assert_int_eq(p.step, 2);
    ck_assert(shown[0] && shown[T - 1] && shown[57] && shown[30] && shown[70]);
    ck_assert(!shown[56] && !shown[58]); /* the query's neighbours give way to it */
    int a, b;
    const float from[1] = {0.0f}, to[1] = {40.0f};
    ck_assert(!labels_overlap(&p, T, shown, centre, from, to, &a, &b));
    /* the end labels stay half a line inside the axis */
    ck_assert_float_ge(centre[0], 0.5f * p.px);
    ck_assert_float_le(centre[T - 1], (float)T * pitch - 0.5f * p.px);
    char note[200];
    labels_note(&p, note, sizeof note);
    ck_assert_ptr_nonnull(strstr(note, "every 2nd"));
}
END_TEST

/* Many tokens in few pixels (4096 in 800): still no overlap, and fast
 * enough (the repeated words are found by sorting). */
START_TEST(test_thinned_long)
{
    static char *tok[MAX_T];
    static char words[MAX_T][8];
    for (int t = 0; t < MAX_T; t++) {
        snprintf(words[t], sizeof words[t], "%d", t % 500);
        tok[t] = words[t];
    }
    LabelsPlan p = labels_plan(MAX_T, tok, -1, 800.0f / MAX_T, 28.0f, 2, shown, centre);
    ck_assert(p.thinned);
    ck_assert_int_gt(p.n, 20);
    ck_assert_int_le(p.n, 60); /* 800 px / 15.4 px a label */
    int a, b;
    const float from[1] = {0.0f}, to[1] = {40.0f};
    ck_assert(!labels_overlap(&p, MAX_T, shown, centre, from, to, &a, &b));
    ck_assert(shown[0] && shown[MAX_T - 1]);
}
END_TEST

/* 48 tokens at 8 px a token (one level needs 8 x 1.1 = 8.8 px a line: no;
 * two levels give 2 x 8 / 1.1 = 14.5 px): every token labelled, on two
 * levels. The thinned rule would label every 2nd token only (8 px a token,
 * 15.4 px a 14 px label needs), so this case fails if the rule thins at 48.
 * One token more, 49 at the same pitch: past LABELS_ALL_UP_TO, thinned to
 * every 2nd token on one level at 14 px. */
START_TEST(test_48_all_49_thinned)
{
    char *tok[49];
    static char words[49][8];
    for (int t = 0; t < 49; t++) {
        snprintf(words[t], sizeof words[t], "w%d", t); /* no word repeats */
        tok[t] = words[t];
    }
    LabelsPlan p = labels_plan(48, tok, -1, 8.0f, 28.0f, 2, shown, centre);
    ck_assert(!p.thinned);
    ck_assert_int_eq(p.n, 48);
    ck_assert_int_eq(p.levels, 2);
    ck_assert_float_eq(p.px, 14.0f); /* floor(14.5) */
    for (int t = 0; t < 48; t++)
        ck_assert_int_eq(shown[t], 1 + t % 2);

    p = labels_plan(49, tok, -1, 8.0f, 28.0f, 2, shown, centre);
    ck_assert(p.thinned);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_int_eq(p.step, 2);
    ck_assert_float_eq(p.px, 14.0f);
    /* tokens 0, 4, 6, ..., 44, 48: the end labels kept half a line inside
     * the axis (centres 7 and 385 px) leave 2 and 46 too little room */
    for (int t = 0; t < 49; t++)
        ck_assert_int_eq(shown[t] != 0, t == 0 || t == 48 || (t % 2 == 0 && t >= 4 && t <= 44));
    ck_assert_int_eq(p.n, 23);
}
END_TEST

/* No label below 14 px, the number written here rather than read from
 * labels.h (a change of LABELS_MIN_PX must fail a test):
 *   - 15.3 px a token: one level would give 15.3 / 1.1 = 13.9 px, under
 *     14, so two levels, at floor(2 x 15.3 / 1.1) = 27 px;
 *   - 15.5 px a token: one level at floor(14.09) = 14 px;
 *   - a picture that allows only 10 px still gets 14 px labels;
 *   - past 48 tokens, the thinned labels are 14 px, and their step the
 *     smallest that gives a 14 px label its 15.4 px: 4 at 4 px a token. */
START_TEST(test_labels_never_below_14px)
{
    LabelsPlan p = labels_plan(45, class45, -1, 15.3f, 28.0f, 2, shown, centre);
    ck_assert_int_eq(p.levels, 2);
    ck_assert_float_eq(p.px, 27.0f);
    p = labels_plan(45, class45, -1, 15.5f, 28.0f, 2, shown, centre);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, 14.0f);
    p = labels_plan(45, class45, -1, 30.0f, 10.0f, 2, shown, centre);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, 14.0f);
    p = labels_plan(45, class45, -1, 4.0f, 28.0f, 2, shown, centre);
    ck_assert(p.thinned);
    ck_assert_float_eq(p.px, 14.0f);
    ck_assert_int_eq(p.step, 5); /* 2 x 4 = 8 px < 15.4; 5 x 4 = 20 px (steps go 1, 2, 5, 10) */
}
END_TEST

/* Punctuation gets a chip: ASCII's, and the curly quotes, dashes and the
 * ellipsis a typed sentence brings (UTF-8); a word, or a word with a quote
 * on it, does not. */
START_TEST(test_punctuation_chips)
{
    static const char *const chip[] = {".", ",", "?!", "\"", "\xe2\x80\x9c", "\xe2\x80\x9d", "\xe2\x80\x98",
                                       "\xe2\x80\x99", "\xe2\x80\x94", "\xe2\x80\xa6", "\xc2\xab", "\xc2\xbb",
                                       "\xe2\x80\x9d."};
    static const char *const none[] = {"", "a", "John", "\xe2\x80\x9cJohn", "don\xe2\x80\x99t", "\xc3\xa9",
                                       "\xe2\x82\xac", "\xff"};
    for (size_t k = 0; k < sizeof chip / sizeof chip[0]; k++)
        ck_assert_msg(labels_is_punctuation(chip[k]), "%s", chip[k]);
    for (size_t k = 0; k < sizeof none / sizeof none[0]; k++)
        ck_assert_msg(!labels_is_punctuation(none[k]), "%s", none[k]);
}
END_TEST

/* A picture's own floor (labels_plan_min): 45 tokens at 10 px a token
 * and an 18 px floor: two levels give 2 x 10 / 1.1 = 18.2 px, every token
 * at 18 px; at 8 px a token two levels give 14.5 px, under 18: thinned,
 * one level at 18 px, every 2nd token room enough (2 x 8 = 16 px < 19.8,
 * 5 x 8 = 40: step 5). A floor under 14 px is 14 px. */
START_TEST(test_floor_of_a_picture)
{
    LabelsPlan p = labels_plan_min(45, class45, -1, 10.0f, 18.0f, 22.0f, 2, shown, centre);
    ck_assert(!p.thinned);
    ck_assert_int_eq(p.levels, 2);
    ck_assert_float_eq(p.px, 18.0f);
    p = labels_plan_min(45, class45, -1, 8.0f, 18.0f, 22.0f, 2, shown, centre);
    ck_assert(p.thinned);
    ck_assert_int_eq(p.levels, 1);
    ck_assert_float_eq(p.px, 18.0f);
    ck_assert_int_eq(p.step, 5);
    p = labels_plan_min(45, class45, -1, 8.0f, 10.0f, 22.0f, 2, shown, centre);
    ck_assert(!p.thinned);
    ck_assert_float_eq(p.px, 14.0f);
}
END_TEST

Suite *labels_suite(void)
{
    Suite *s = suite_create("labels");
    TCase *tc = tcase_create("core");
    tcase_add_test(tc, test_every_token_up_to_48);
    tcase_add_test(tc, test_thinned_past_48);
    tcase_add_test(tc, test_thinned_long);
    tcase_add_test(tc, test_48_all_49_thinned);
    tcase_add_test(tc, test_labels_never_below_14px);
    tcase_add_test(tc, test_punctuation_chips);
    tcase_add_test(tc, test_floor_of_a_picture);
    suite_add_tcase(s, tc);
    return s;
}
