/* support.c — what the tests share (see support.h). */
#include "support.h"

#include <check.h>
#include <stdio.h>

int files_same(const char *a, const char *b)
{
    FILE *fa = fopen(a, "rb"), *fb = fopen(b, "rb");
    ck_assert_msg(fa && fb, "cannot open %s or %s", a, b);
    int ca, cb;
    do {
        ca = getc(fa);
        cb = getc(fb);
    } while (ca == cb && ca != EOF);
    fclose(fa);
    fclose(fb);
    return ca == cb;
}
