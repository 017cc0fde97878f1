/* quiz_file.c — the teacher's quiz questions: read, parse (cJSON), check
 * every key, copy the strings out. */
#include "io/quiz_file.h"
#include "core/status.h"
#include "io/syntax.h"
#include "text/utf8.h"

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* The checks' state: the file's name for every message. */
typedef struct {
    const char *path;
    char *err;
    size_t errlen;
} Checker;

static int fail(const Checker *k, const char *fmt, ...)
{
    char msg[MHAVIZ_ERRLEN];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    snprintf(k->err, k->errlen, "%s: %s", k->path, msg);
    return MHAVIZ_EINPUT;
}

/* The file's text, NUL-terminated, into *text (*len bytes before the NUL). */
static int read_text(const Checker *k, char **text, size_t *len)
{
    struct stat st;
    FILE *f = fopen(k->path, "rb");
    if (!f) {
        snprintf(k->err, k->errlen, "%s: cannot open: %s", k->path, strerror(errno));
        return MHAVIZ_EIO;
    }
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        fclose(f);
        snprintf(k->err, k->errlen, "%s: is a folder; give the quiz JSON file", k->path);
        return MHAVIZ_EIO;
    }
    char *buf = malloc(QUIZ_FILE_MAX_BYTES + 2); // (at most the limit + 1) the text, a NUL
    if (!buf) {
        fclose(f);
        return MHAVIZ_ENOMEM;
    }
    const size_t n = fread(buf, 1, QUIZ_FILE_MAX_BYTES + 1, f);
    const int failed = ferror(f);
    fclose(f);
    if (failed) {
        free(buf);
        snprintf(k->err, k->errlen, "%s: cannot read: %s", k->path, strerror(errno));
        return MHAVIZ_EIO;
    }
    if (n > QUIZ_FILE_MAX_BYTES) {
        free(buf);
        return fail(k, "the file is over the limit of %zu KB for a quiz", QUIZ_FILE_MAX_BYTES >> 10);
    }
    buf[n] = '\0';
    *text = buf;
    *len = n;
    return MHAVIZ_OK;
}

/* Only the keys listed (NULL-ended) in object o, named where. */
static int only_keys(const Checker *k, const cJSON *o, const char *where, const char *const *keys,
                     const char *listed)
{
    const cJSON *item;
    cJSON_ArrayForEach(item, o) {
        int known = 0;
        for (const char *const *key = keys; *key; key++)
            known |= strcmp(item->string, *key) == 0;
        if (!known)
            return fail(k, "%s: unknown key \"%s\" (the keys are %s)", where, item->string, listed);
    }
    return MHAVIZ_OK;
}

/* where.key as a non-empty UTF-8 string of at most QUIZ_FILE_MAX_TEXT bytes, copied into *out. */
static int read_string(const Checker *k, const cJSON *o, const char *where, const char *key, char **out)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(o, key);
    if (!s)
        return fail(k, "%s: \"%s\" is missing", where, key);
    if (!cJSON_IsString(s))
        return fail(k, "%s.%s: wanted a string", where, key);
    const size_t n = strlen(s->valuestring);
    if (n == 0)
        return fail(k, "%s.%s: is empty", where, key);
    if (n > QUIZ_FILE_MAX_TEXT)
        return fail(k, "%s.%s: %zu bytes, over the limit of %d", where, key, n, QUIZ_FILE_MAX_TEXT);
    for (size_t i = 0; i < n;) {
        const int len = utf8_decode((const unsigned char *)s->valuestring + i, n - i, NULL);
        if (len == 0)
            return fail(k, "%s.%s: not UTF-8 at byte %zu", where, key, i);
        i += (size_t)len;
    }
    if (!(*out = strdup(s->valuestring)))
        return MHAVIZ_ENOMEM;
    return MHAVIZ_OK;
}

static int read_question(const Checker *k, const cJSON *o, int index, QuizQuestion *q)
{
    static const char *const keys[] = {"question", "options", "answer", NULL};
    static const char *const option_keys[] = {"text", "explanation", NULL};
    char where[64], at[96];
    int rc;
    snprintf(where, sizeof where, "questions[%d]", index);
    if (!cJSON_IsObject(o))
        return fail(k, "%s: wanted an object with \"question\", \"options\" and \"answer\"", where);
    if ((rc = only_keys(k, o, where, keys, "question, options, answer")) != MHAVIZ_OK ||
        (rc = read_string(k, o, where, "question", &q->question)) != MHAVIZ_OK)
        return rc;

    const cJSON *options = cJSON_GetObjectItemCaseSensitive(o, "options");
    if (!options)
        return fail(k, "%s: \"options\" is missing", where);
    const int n = cJSON_IsArray(options) ? cJSON_GetArraySize(options) : -1;
    if (n < QUIZ_FILE_MIN_OPTIONS || n > QUIZ_FILE_MAX_OPTIONS)
        return fail(k, "%s.options: wanted an array of %d to %d options, each {\"text\", \"explanation\"}", where,
                    QUIZ_FILE_MIN_OPTIONS, QUIZ_FILE_MAX_OPTIONS);
    if (!(q->options = calloc((size_t)n, sizeof *q->options)))
        return MHAVIZ_ENOMEM;
    const cJSON *opt;
    cJSON_ArrayForEach(opt, options) {
        QuizOption *to = &q->options[q->n_options];
        snprintf(at, sizeof at, "%s.options[%d]", where, q->n_options++);
        if (!cJSON_IsObject(opt))
            return fail(k, "%s: wanted an object {\"text\", \"explanation\"}", at);
        if ((rc = only_keys(k, opt, at, option_keys, "text, explanation")) != MHAVIZ_OK ||
            (rc = read_string(k, opt, at, "text", &to->text)) != MHAVIZ_OK ||
            (rc = read_string(k, opt, at, "explanation", &to->explanation)) != MHAVIZ_OK)
            return rc;
        for (int m = 0; m < q->n_options - 1; m++)
            if (strcmp(q->options[m].text, to->text) == 0)
                return fail(k, "%s.text: the same as options[%d]'s", at, m);
    }

    const cJSON *answer = cJSON_GetObjectItemCaseSensitive(o, "answer");
    if (!answer)
        return fail(k, "%s: \"answer\" is missing (the index of the right option, from 0)", where);
    if (!cJSON_IsNumber(answer) || !(answer->valuedouble >= 0 && answer->valuedouble < n) ||
        answer->valuedouble != floor(answer->valuedouble)) /* range first: then the cast below is defined */
        return fail(k, "%s.answer: wanted the index of the right option, a whole number from 0 to %d", where, n - 1);
    q->answer = (int)answer->valuedouble;
    return MHAVIZ_OK;
}

static int read_questions(const Checker *k, const cJSON *root, QuizFile *q)
{
    static const char *const keys[] = {"questions", NULL};
    int rc;
    if (!cJSON_IsObject(root))
        return fail(k, "wanted an object {\"questions\": [...]}");
    if ((rc = only_keys(k, root, "the top level", keys, "questions")) != MHAVIZ_OK)
        return rc;
    const cJSON *list = cJSON_GetObjectItemCaseSensitive(root, "questions");
    if (!list)
        return fail(k, "\"questions\" is missing");
    const int n = cJSON_IsArray(list) ? cJSON_GetArraySize(list) : -1;
    if (n < 1 || n > QUIZ_FILE_MAX_QUESTIONS)
        return fail(k, "questions: wanted an array of 1 to %d questions", QUIZ_FILE_MAX_QUESTIONS);
    if (!(q->questions = calloc((size_t)n, sizeof *q->questions)))
        return MHAVIZ_ENOMEM;
    const cJSON *item;
    cJSON_ArrayForEach(item, list) {
        if ((rc = read_question(k, item, q->n, &q->questions[q->n])) != MHAVIZ_OK) {
            q->n++; /* freed with the rest */
            return rc;
        }
        q->n++;
    }
    return MHAVIZ_OK;
}

int quiz_file_load(const char *path, QuizFile *q, char *err, size_t errlen)
{
    const Checker k = {path, err, errlen};
    char *text = NULL;
    size_t len = 0;
    cJSON *root = NULL;
    memset(q, 0, sizeof *q);
    int rc = read_text(&k, &text, &len);
    if (rc != MHAVIZ_OK)
        goto cleanup;
    const char *end = NULL;
    if (!(root = cJSON_ParseWithLengthOpts(text, len + 1, &end, 1))) {
        char msg[320];
        int line, col;
        const size_t at = syntax_explain(text, len, end ? (size_t)(end - text) : 0, msg, sizeof msg);
        syntax_line_col(text, len, at, &line, &col);
        snprintf(err, errlen, "%s:%d:%d: %s", path, line, col, msg);
        rc = MHAVIZ_EINPUT;
        goto cleanup;
    }
    rc = read_questions(&k, root, q);
cleanup:
    if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "%s: out of memory", path);
    if (rc != MHAVIZ_OK)
        quiz_file_free(q);
    cJSON_Delete(root);
    free(text);
    return rc;
}

void quiz_file_free(QuizFile *q)
{
    for (int i = 0; i < q->n; i++) {
        QuizQuestion *x = &q->questions[i];
        for (int m = 0; m < x->n_options; m++) {
            free(x->options[m].text);
            free(x->options[m].explanation);
        }
        free(x->options);
        free(x->question);
    }
    free(q->questions);
    memset(q, 0, sizeof *q);
}
