/* check_files.h — comparing files the tests wrote. */
#ifndef MHAVIZ_CHECK_FILES_H
#define MHAVIZ_CHECK_FILES_H

/* 1 when files a and b hold the same bytes, else 0; the calling test
 * fails when either cannot be opened. */
int files_same(const char *a, const char *b);

#endif
