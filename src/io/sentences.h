/* sentences.h — a text file of sentences, one a line (--text-file). */
#ifndef MHAVIZ_SENTENCES_H
#define MHAVIZ_SENTENCES_H

#include <stddef.h>

/* At most this many sentences in one file. */
#define SENTENCES_MAX 1000

typedef struct {
    char **text; /* (n) each sentence without its line end (malloc'd) */
    int *line;   /* (n) its line in the file, from 1 */
    int n;
} Sentences;

/* Read path: each line a sentence ("\n" or "\r\n" ends a line; the last
 * may lack one). Returns MHAVIZ_OK; MHAVIZ_EIO when it cannot be read (err
 * names the file and why); MHAVIZ_EINPUT for an empty file, an empty (or
 * blank) line (err "path:LINE: ...") or more than SENTENCES_MAX
 * sentences; MHAVIZ_ENOMEM. Free with sentences_free (also after an error). */
int sentences_load(const char *path, Sentences *s, char *err, size_t errlen);

void sentences_free(Sentences *s);

#endif
