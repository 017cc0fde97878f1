/* quiz_file.h — the teacher's own quiz questions (--quiz FILE), read and
 * checked before anything is written; lesson.html adds them to its quiz.
 *
 * The file (docs/lesson.md, "Your own questions"):
 *
 *   {"questions": [
 *     {"question": "Why does one softmax row not serve two relations?",
 *      "options": [{"text": "Its weights add up to 1", "explanation": "Right: ..."},
 *                  {"text": "It averages the heads", "explanation": "Wrong: ..."}],
 *      "answer": 0}
 *   ]}
 *
 * "answer" is the index of the right option. Every key is required and no
 * other key is allowed; each string is non-empty UTF-8. A mistake is named
 * by its place: the file, line:column for a syntax error, else the key and
 * index ("questions[2].options[1].explanation"). */
#ifndef MHAVIZ_QUIZ_FILE_H
#define MHAVIZ_QUIZ_FILE_H

#include <stddef.h>

#define QUIZ_FILE_MAX_BYTES ((size_t)1 << 20) /* a file of questions, not of data */
#define QUIZ_FILE_MAX_QUESTIONS 50
#define QUIZ_FILE_MIN_OPTIONS 2
#define QUIZ_FILE_MAX_OPTIONS 8
#define QUIZ_FILE_MAX_TEXT 2000 /* bytes of one question, option or explanation */

typedef struct {
    char *text;        /* what the student chooses */
    char *explanation; /* why it is right or wrong, shown after the reveal */
} QuizOption;

typedef struct {
    char *question;
    QuizOption *options; /* (n_options) */
    int n_options;
    int answer; /* the right option: 0 .. n_options - 1 */
} QuizQuestion;

typedef struct {
    QuizQuestion *questions; /* (n) */
    int n;
} QuizFile;

/* Read and check the questions of file path into *q. Returns MHAVIZ_OK,
 * MHAVIZ_EINPUT (a mistake in the file; err names its place), MHAVIZ_EIO
 * (cannot read it) or MHAVIZ_ENOMEM. On success the caller owns *q and
 * frees it with quiz_file_free; on failure *q holds nothing. */
int quiz_file_load(const char *path, QuizFile *q, char *err, size_t errlen);

/* Free what quiz_file_load filled (a zeroed QuizFile too). */
void quiz_file_free(QuizFile *q);

#endif
