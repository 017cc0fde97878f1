/* contest.c — which heads decided a choice, in words (contest.h). */
#include "text/contest.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* x as contest_text prints a margin or a part: with its sign ("+5.8",
 * "-0.25", "+1 234"), one decimal from 1 on, two below, the digits that
 * show it when smaller. Returns buf (at least 32 bytes). */
static char *contest_number(char *buf, size_t n, double x)
{
    const double a = fabs(x);
    const char sign = x > 0 ? '+' : x < 0 ? '-' : '+';
    if (a >= 1.0 || a == 0.0)
        snprintf(buf, n, "%c%.1f", sign, a);
    else if (a >= 0.01)
        snprintf(buf, n, "%c%.2f", sign, a);
    else /* below 0.01: the first two significant digits, never "0.00" for a part that is not 0 */
        snprintf(buf, n, "%c%.*f", sign, 1 - (int)floor(log10(a)), a);
    return buf;
}

char *contest_key(char *buf, size_t n, const char *shown, char *const *tokens, int n_keys, int key)
{
    int twin = 0;
    for (int j = 0; j < n_keys; j++)
        twin |= j != key && strcmp(tokens[j], tokens[key]) == 0;
    if (twin)
        snprintf(buf, n, "%s %d", shown, key);
    else
        snprintf(buf, n, "%s", shown);
    return buf;
}

/* 1 when head h's part in ct is a push at all: beyond float error (at
 * most PULL_TIE_REL times the scale of the scores added up), not the
 * rounding of a margin of 0 (a head's q and k turned together, say). */
static int pushes(const PullContest *ct, int h)
{
    return fabs(ct->contrib[h]) > PULL_TIE_REL * ct->scale;
}

/* Heads at most that a sentence lists on each side; more end in "…". */
#define CONTEST_LISTED 16

/* Append the heads whose part has sign side (+1 or -1) and pushes, largest first (on
 * equal parts, the lower index first), after lead. */
static void add_side(char *buf, size_t n, const PullContest *ct, int H, int side, const char *lead)
{
    int order[CONTEST_LISTED], m = 0, more = 0;
    for (int h = 0; h < H; h++) {
        const double v = side * ct->contrib[h];
        if (v <= 0 || !pushes(ct, h))
            continue;
        if (m == CONTEST_LISTED && v <= side * ct->contrib[order[m - 1]]) {
            more = 1;
            continue;
        }
        more |= m == CONTEST_LISTED; /* the smallest listed drops out */
        int k = m < CONTEST_LISTED ? m++ : m - 1;
        for (; k > 0 && side * ct->contrib[order[k - 1]] < v; k--) /* insertion: stable */
            order[k] = order[k - 1];
        order[k] = h;
    }
    for (int k = 0; k < m; k++) {
        char num[32];
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, "%shead %d %s", k ? ", " : lead, order[k],
                 contest_number(num, sizeof num, ct->contrib[order[k]]));
    }
    if (more) {
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, ", \xe2\x80\xa6");
    }
}

char *contest_text(char *buf, size_t n, const PullContest *ct, int n_heads, const char *key, const char *other)
{
    char num[32];
    const double a = fabs(ct->margin);
    contest_number(num, sizeof num, a);
    if (ct->tie && a <= PULL_TIE_REL * ct->scale) /* the margin's digits would be float noise */
        snprintf(buf, n, "%s and %s tie (by 0, within float error)", key, other);
    else if (ct->tie)
        snprintf(buf, n, "%s and %s tie (by %s)", key, other, num + 1);
    else
        snprintf(buf, n, "%s over %s by %s", key, other, num + 1);
    int pro = 0, con = 0;
    for (int h = 0; h < n_heads; h++)
        pro += pushes(ct, h) && ct->contrib[h] > 0, con += pushes(ct, h) && ct->contrib[h] < 0;
    add_side(buf, n, ct, n_heads, 1, ": ");
    add_side(buf, n, ct, n_heads, -1, pro ? "; against: " : ": against: ");
    if (!pro && !con) {
        const size_t used = strlen(buf);
        snprintf(buf + used, n - used, ": every head's part is 0");
    }
    return buf;
}
