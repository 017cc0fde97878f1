/* contest.h — the sentence that says which heads decided a choice of the
 * wide head (core/pull.h, pull_contest): report.txt, query_NN.png and the
 * lesson page say it in these words. */
#ifndef MHAVIZ_CONTEST_H
#define MHAVIZ_CONTEST_H

#include "core/pull.h"

#include <stddef.h>

/* Contest ct of n_heads heads as one sentence into buf (n bytes):
 * "'John' over 'because' by 5.0: head 1 +5.8, head 0 +3.0; against:
 * head 2 -2.0, head 3 -1.8", the heads that carried the choice first
 * (largest part first), then those that lost it; a head whose part is 0
 * is left out. A tie: "'Anna' and 'the' tie (by 0.0040): head 0 +3.0;
 * against: head 2 -3.0", or "tie (by 0, within float error)" when the
 * margin is within float error of 0 (PULL_TIE_REL). key and other are the keys as the caller shows
 * them, quoted. Returns buf. */
char *contest_text(char *buf, size_t n, const PullContest *ct, int n_heads, const char *key, const char *other);

/* Key `key` of query i's n_keys visible keys as contest_text names it:
 * shown (the token as the caller shows it, quoted by the caller), then its
 * index when another visible key has the same text ("'John' 5"), as the
 * captions name keys. Returns buf. */
char *contest_key(char *buf, size_t n, const char *shown, char *const *tokens, int n_keys, int key);

#endif
