/* support.h — what the tests share: comparing the files they wrote. */
#ifndef MHAVIZ_TEST_SUPPORT_H
#define MHAVIZ_TEST_SUPPORT_H

/* 1 when files a and b hold the same bytes, else 0; the calling test
 * fails when either cannot be opened. */
int files_same(const char *a, const char *b);

#endif
