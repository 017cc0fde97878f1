/* pull_caption.c — the pulls of one query (core/pull.h) in a sentence,
 * for the pull slide and the page. */
#include "text/pull_caption.h"
#include "core/measures.h"
#include "core/rival.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

/* Append to buf (of n bytes, holding a string) like snprintf; the
 * compiler checks the arguments against fmt. */
__attribute__((format(printf, 3, 4)))
static void add(char *buf, size_t n, const char *fmt, ...)
{
    size_t used = strlen(buf);
    if (used + 1 >= n)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf + used, n - used, fmt, ap);
    va_end(ap);
}

/* Keys a caption lists at most (then "…"): a caption of two lines holds no more. */
#define PULL_CAPTION_KEYS 64

/* "head 2", "heads 0, 3", "heads 1-3": the heads h < H that pull (pulls[h])
 * with top[h] == key; a caption names no head that does not pull. */
static void add_heads(char *buf, size_t n, const int *top, const unsigned char *pulls, int H, int key)
{
    int members = 0;
    for (int h = 0; h < H; h++)
        members += pulls[h] && top[h] == key;
    add(buf, n, members == 1 ? "head " : "heads ");
    int first = 1;
    for (int h = 0; h < H; h++) {
        if (!pulls[h] || top[h] != key)
            continue;
        int last = h;
        while (last + 1 < H && pulls[last + 1] && top[last + 1] == key)
            last++;
        add(buf, n, "%s%d", first ? "" : ", ", h);
        if (last >= h + 2) { /* a run of three or more: "1-3" */
            add(buf, n, "-%d", last);
            h = last;
        }
        first = 0;
    }
}

/* "'John'", or "'John' 5" when another of the n_keys visible keys has the same text. */
static void add_key(char *buf, size_t n, char *const *tokens, int n_keys, int key)
{
    int twin = 0;
    for (int j = 0; j < n_keys; j++)
        twin |= j != key && strcmp(tokens[j], tokens[key]) == 0;
    if (twin)
        add(buf, n, "'%s' %d", tokens[key], key);
    else
        add(buf, n, "'%s'", tokens[key]);
}

void pull_caption(char *buf, size_t n, const PullLayer *p, int i, char *const *tokens,
                  const float *wide_att)
{
    const int T = p->T, H = p->n_heads;
    const PullRow *r = &p->rows[i];
    const int *top = p->top + (size_t)i * H;
    const unsigned char *pulls = p->pulls + (size_t)i * H; /* (n_heads) */
    const float *att_i = wide_att + (size_t)i * T;
    const RivalName *wide = rival_name(!p->identity); /* weights of its own: trained on its own */
    char w[16]; /* a weight as the pictures print it */
    buf[0] = '\0';
    switch (r->outcome) {
    case PULL_NO_CHOICE:
        add(buf, n, "'%s' sees only itself: no choice to make", tokens[i]);
        return;
    case PULL_NO_PULL:
        add(buf, n, "no head is sharp enough to pull (more than half of its row on one key, not tied with "
                    "another, its row's normalised entropy below %.1f); ", MEASURES_SHARP_BELOW);
        if (r->runner_up >= 0 && fabsf(r->wide_top_att - r->runner_up_att) < PULL_TIE_WEIGHT) {
            /* four decimals, as for PULL_TIE: no top key to name */
            add(buf, n, "%s ties ", wide->the);
            add_key(buf, n, tokens, r->n_keys, r->wide_top);
            add(buf, n, " and ");
            add_key(buf, n, tokens, r->n_keys, r->runner_up);
            add(buf, n, " (%.4f and %.4f): no top key", r->wide_top_att, r->runner_up_att);
            return;
        }
        add(buf, n, "%s is ", wide->top);
        add_key(buf, n, tokens, r->n_keys, r->wide_top);
        add(buf, n, " (%s)", measures_weight_text(w, sizeof w, r->wide_top_att));
        return;
    case PULL_AGREED:
        add(buf, n, r->n_pulling == H ? "every head's top key is " : "every pulling head's top key is ");
        add_key(buf, n, tokens, r->n_keys, r->wide_top);
        add(buf, n, ", and %s too (%s): nothing lost", wide->too,
            measures_weight_text(w, sizeof w, r->wide_top_att));
        if (r->blurs) /* agreed, and still no key gets more than half */
            add(buf, n, "; no key gets more than half its attention: the row blurs");
        return;
    case PULL_FOLLOWED: /* an outcome, not a cause: which heads decided it is pull_contest's */
        add(buf, n, "%s ", wide->top);
        add_key(buf, n, tokens, r->n_keys, r->wide_top);
        add(buf, n, " (%s) is the top key of ", measures_weight_text(w, sizeof w, r->wide_top_att));
        add_heads(buf, n, top, pulls, H, r->wide_top);
        add(buf, n, " too; it gives ");
        break;
    case PULL_OWN:
        add(buf, n, "%s ", wide->top);
        add_key(buf, n, tokens, r->n_keys, r->wide_top);
        add(buf, n, " (%s) is no head's top key; it gives ",
            measures_weight_text(w, sizeof w, r->wide_top_att));
        break;
    case PULL_SPLIT:
        add(buf, n, "%s: %s gives ", p->identity ? "the pulls split and the row blurs" : "the row blurs", wide->the);
        break;
    case PULL_TIE: /* four decimals: two-decimal weights rounded away from a half would look 0.006 apart */
        add(buf, n, "a tie: %s gives ", wide->the);
        add_key(buf, n, tokens, r->n_keys, r->wide_top);
        add(buf, n, " %.4f and ", r->wide_top_att);
        add_key(buf, n, tokens, r->n_keys, r->runner_up);
        add(buf, n, " %.4f", r->runner_up_att);
        if (fabsf(r->wide_top_att - r->runner_up_att) < PULL_TIE_WEIGHT)
            add(buf, n, ", less than %.3f apart: it chose neither", PULL_TIE_WEIGHT);
        else
            add(buf, n, ", their scores equal within float error: it chose neither");
        return;
    }
    /* The heads' top keys it did not follow (all of them when it split),
     * the most weighted first (on ties, in the order of the heads), each
     * with the heads that chose it. keys is at most (H) long. */
    int keys[PULL_CAPTION_KEYS], m = 0, more = 0;
    for (int h = 0; h < H; h++) {
        int skip = !pulls[h] || (top[h] == r->wide_top && r->outcome != PULL_SPLIT);
        for (int k = 0; k < m && !skip; k++)
            skip = keys[k] == top[h];
        if (!skip && m == PULL_CAPTION_KEYS)
            more = 1; /* said with an ellipsis: the list is not all there */
        if (skip || m == PULL_CAPTION_KEYS)
            continue;
        int k = m++;
        for (; k > 0 && att_i[keys[k - 1]] < att_i[top[h]]; k--) /* insertion: stable */
            keys[k] = keys[k - 1];
        keys[k] = top[h];
    }
    for (int k = 0; k < m; k++) {
        add(buf, n, "%s%s to ", k ? ", " : "", measures_weight_text(w, sizeof w, att_i[keys[k]]));
        add_key(buf, n, tokens, r->n_keys, keys[k]);
        add(buf, n, " (");
        add_heads(buf, n, top, pulls, H, keys[k]);
        add(buf, n, ")");
    }
    if (more)
        add(buf, n, ", \xe2\x80\xa6");
    if (r->outcome == PULL_SPLIT) {
        int own = 1;
        for (int h = 0; h < H; h++)
            own &= top[h] != r->wide_top;
        if (own) {
            add(buf, n, "; its top key ");
            add_key(buf, n, tokens, r->n_keys, r->wide_top);
            add(buf, n, " (%s) is no head's", measures_weight_text(w, sizeof w, r->wide_top_att));
        }
    }
}
