/* report_words.c — how report.txt writes its words, for every section of
 * it: table cells, token lists, wrapped paragraphs, quoted tokens, fractions,
 * lists of heads, the blur's figure. */
#include "report/report_parts.h"
#include "core/measures.h"
#include "text/token_text.h"
#include "text/utf8.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>

const char *report_cell(char *buf, size_t n, const char *fmt, double x)
{
    if (measures_is_null(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, x);
    return buf;
}

void report_tokens(FILE *f, char *const *tokens, int T, int col, int indent)
{
    char shown[REPORT_TOKEN_BYTES];
    for (int t = 0; t < T; t++) {
        const unsigned char *p = (const unsigned char *)token_text(shown, sizeof shown, tokens[t]);
        int w = 0; /* the token's columns, one per code point */
        for (const unsigned char *q = p; *q; q++)
            w += (*q & 0xC0) != 0x80;
        const int sep = t + 1 < T ? 2 : 0; /* " |" after it */
        if (t > 0) {
            if (col + 1 + w + sep > REPORT_WIDTH && col > indent) {
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            } else {
                fputc(' ', f);
                col++;
            }
        }
        while (*p) {
            if (col >= REPORT_WIDTH - sep) { /* a token longer than a line */
                fprintf(f, "\n%*s", indent, "");
                col = indent;
            }
            const int n = utf8_decode(p, SIZE_MAX, NULL); /* token_text's output is UTF-8 */
            fwrite(p, 1, (size_t)n, f);
            p += n;
            col++;
        }
        if (sep) {
            fputs(" |", f);
            col += sep;
        }
    }
    fputc('\n', f);
}

int report_columns(const char *s, size_t n)
{
    int c = 0;
    for (size_t k = 0; k < n; k++)
        c += ((unsigned char)s[k] & 0xC0) != 0x80;
    return c;
}

void report_wrapped(FILE *f, const char *indent, const char *text)
{
    const int ind = (int)strlen(indent);
    int col = 0;
    const char *p = text;
    while (*p) {
        while (*p == ' ')
            p++;
        size_t n = strcspn(p, " ");
        if (n == 0)
            break;
        const int w = report_columns(p, n);
        if (col == 0) {
            col = fprintf(f, "%s", indent);
        } else if (col + 1 + w > REPORT_WIDTH) {
            fprintf(f, "\n%s  ", indent);
            col = ind + 2;
        } else {
            fputc(' ', f);
            col++;
        }
        fwrite(p, 1, n, f);
        col += w;
        p += n;
    }
    fputc('\n', f);
}

/* A token as the sentences quote it: 'text', as token_text shows it (the
 * empty token '""'), at most n - 1 bytes of it. */
const char *report_quoted_token(char *buf, size_t n, const char *token)
{
    char shown[REPORT_TOKEN_BYTES];
    snprintf(buf, n, "'%s'", token_text(shown, sizeof shown, token));
    return buf;
}

const char *report_fraction_word(char *buf, size_t n, double x)
{
    static const char *const words[] = {NULL, "all", "half", "a third", "a quarter", "a fifth"};
    for (int k = 1; k <= 5; k++)
        if (x == 1.0 / k) {
            snprintf(buf, n, "%s", words[k]);
            return buf;
        }
    snprintf(buf, n, "%.2f", x);
    return buf;
}

int report_head_list(char *buf, size_t len, const int *pick, int n_heads, int k)
{
    int used = snprintf(buf, len, k == 1 ? "head" : "heads"), seen = 0;
    for (int h = 0; h < n_heads && used < (int)len; h++)
        if (pick[h]) {
            seen++;
            used += snprintf(buf + used, len - (size_t)used, "%s%d",
                             seen == 1 ? " " : seen == k ? " and " : ", ", h);
        }
    return used;
}

const char *report_blur_text(char *buf, size_t n, double blur, const ChanceRange *r, int side)
{
    if (fabs(blur) < 0.005 && side == 0) {
        snprintf(buf, n, "0.00"); /* not "-0.00" */
        return buf;
    }
    const double end = side > 0 ? r->hi : side < 0 ? r->lo : NAN;
    char num[16], at_end[16];
    measures_side_text(num, sizeof num, blur, 2, blur >= 0 ? BLUR_NOTICEABLE : -BLUR_NOTICEABLE);
    if (side != 0 && strcmp(num, measures_side_text(at_end, sizeof at_end, end, 2, end)) == 0)
        measures_side_text(num, sizeof num, blur, 2, end);
    snprintf(buf, n, "%s%s", blur > 0 ? "+" : "", num); /* the sign, as "%+.2f" gives it */
    return buf;
}
