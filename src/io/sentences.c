/* sentences.c — --text-file's sentences, one a line. */
#include "io/sentences.h"
#include "core/status.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Add the n bytes at line (line number no) to s. */
static int add(Sentences *s, const char *line, size_t n, int no)
{
    char **text = realloc(s->text, (size_t)(s->n + 1) * sizeof *text);
    if (text)
        s->text = text;
    int *lines = realloc(s->line, (size_t)(s->n + 1) * sizeof *lines);
    if (lines)
        s->line = lines;
    char *copy = malloc(n + 1);
    if (!text || !lines || !copy) {
        free(copy);
        return MHAVIZ_ENOMEM;
    }
    memcpy(copy, line, n);
    copy[n] = '\0';
    s->text[s->n] = copy;
    s->line[s->n++] = no;
    return MHAVIZ_OK;
}

int sentences_load(const char *path, Sentences *s, char *err, size_t errlen)
{
    memset(s, 0, sizeof *s);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: cannot open: %s", path, strerror(errno));
        return MHAVIZ_EIO;
    }
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    int rc = MHAVIZ_OK, no = 0;
    errno = 0;
    while (rc == MHAVIZ_OK && (got = getline(&line, &cap, f)) >= 0) {
        size_t n = (size_t)got;
        no++;
        if (n > 0 && line[n - 1] == '\n')
            n--;
        if (n > 0 && line[n - 1] == '\r')
            n--;
        if (strspn(line, " \t") >= n) {
            snprintf(err, errlen, "%s:%d: an empty line; the file holds one sentence a line, none empty", path, no);
            rc = MHAVIZ_EINPUT;
        } else if (s->n == SENTENCES_MAX) {
            snprintf(err, errlen, "%s:%d: more than %d sentences", path, no, SENTENCES_MAX);
            rc = MHAVIZ_EINPUT;
        } else if ((rc = add(s, line, n, no)) != MHAVIZ_OK)
            snprintf(err, errlen, "%s: out of memory while reading", path);
    }
    if (rc == MHAVIZ_OK && ferror(f)) {
        snprintf(err, errlen, "%s: cannot read: %s", path, strerror(errno));
        rc = MHAVIZ_EIO;
    } else if (rc == MHAVIZ_OK && s->n == 0) {
        snprintf(err, errlen, "%s: no sentence (the file is empty; it holds one sentence a line)", path);
        rc = MHAVIZ_EINPUT;
    }
    free(line);
    fclose(f);
    return rc;
}

void sentences_free(Sentences *s)
{
    for (int i = 0; i < s->n; i++)
        free(s->text[i]);
    free(s->text);
    free(s->line);
    memset(s, 0, sizeof *s);
}
