/* report_txt.c — report.txt: what each head does and what splitting into
 * heads bought, for a class. */
#include "report/report_parts.h"
#include "core/measures.h"
#include "core/status.h"
#include "text/format.h"
#include "text/utf8.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------- report.txt */

const char *txt_cell(char *buf, size_t n, const char *fmt, double x)
{
    if (measures_is_null(x))
        snprintf(buf, n, "-");
    else
        snprintf(buf, n, fmt, x);
    return buf;
}

void txt_tokens(FILE *f, char *const *tokens, int T, int col, int indent)
{
    for (int t = 0; t < T; t++) {
        const unsigned char *p = (const unsigned char *)tokens[t];
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
            int n = utf8_decode(p, SIZE_MAX, NULL);
            if (n == 0 || *p < 0x20 || *p == 0x7F) {
                fputc('?', f);
                p += n ? n : 1;
            } else {
                fwrite(p, 1, (size_t)n, f);
                p += n;
            }
            col++;
        }
        if (sep) {
            fputs(" |", f);
            col += sep;
        }
    }
    fputc('\n', f);
}

/* Columns text takes: UTF-8 code points. */
static int columns(const char *s, size_t n)
{
    int c = 0;
    for (size_t k = 0; k < n; k++)
        c += ((unsigned char)s[k] & 0xC0) != 0x80;
    return c;
}

void txt_wrapped(FILE *f, const char *indent, const char *text)
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
        const int w = columns(p, n);
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

/* Token t as the sentences quote it: 'text', control characters and
 * bytes that are not UTF-8 as '?', at most n - 1 bytes of it. */
static const char *quoted_token(char *buf, size_t n, const char *token)
{
    size_t k = 0;
    buf[k++] = '\'';
    for (const unsigned char *p = (const unsigned char *)token; *p && k + 6 < n;) {
        int len = utf8_decode(p, SIZE_MAX, NULL);
        if (len == 0 || *p < 0x20 || *p == 0x7F) {
            buf[k++] = '?';
            p += len ? len : 1;
        } else {
            memcpy(buf + k, p, (size_t)len);
            k += (size_t)len;
            p += len;
        }
    }
    buf[k++] = '\'';
    buf[k] = '\0';
    return buf;
}

/* Where pattern r of map m sends attention, in words: "the previous token",
 * "the first token, 'Mary'", ... tokens (T) name the keys. */
static const char *pattern_place(char *buf, size_t n, const MapMeasures *m, MeasuresRole r,
                                 char *const *tokens, int T)
{
    char q[96];
    switch (r) {
    case MEASURES_PREVIOUS_TOKEN: snprintf(buf, n, "the previous token"); break;
    case MEASURES_SELF: snprintf(buf, n, "its own token"); break;
    case MEASURES_NEXT_TOKEN: snprintf(buf, n, "the next token"); break;
    case MEASURES_DUPLICATE_TOKEN: snprintf(buf, n, "earlier copies of its token"); break;
    case MEASURES_INDUCTION:
        snprintf(buf, n, "the token after an earlier copy of its token (induction)");
        break;
    case MEASURES_FIRST_TOKEN: snprintf(buf, n, "the first token, %s", quoted_token(q, sizeof q, tokens[0])); break;
    case MEASURES_LAST_TOKEN:
        snprintf(buf, n, "the last token, %s", quoted_token(q, sizeof q, tokens[T - 1]));
        break;
    case MEASURES_FIXED_TOKEN:
        snprintf(buf, n, "one token, %s (token %d)", quoted_token(q, sizeof q, tokens[m->fixed_key]),
                 m->fixed_key);
        break;
    default: snprintf(buf, n, "?"); break;
    }
    return buf;
}

/* "in 3 of the 10 rows where it could": how often pattern r takes at least
 * half of a row. */
static const char *pattern_support(char *buf, size_t n, const MapMeasures *m, MeasuresRole r)
{
    snprintf(buf, n, "at least half of the row in %d of the %d row%s where it could", m->shown[r], m->rows[r],
             m->rows[r] == 1 ? "" : "s");
    return buf;
}

/* One plain sentence about map m, true for the numbers behind it; who is
 * "head 2" or "the wide head", tokens (T) name the keys. */
static void txt_sentence(FILE *f, const char *who, const MapMeasures *m, char *const *tokens, int T)
{
    char line[512], place[160], support[96];
    if (m->role < MEASURES_N_PATTERNS) {
        snprintf(line, sizeof line, "%s looks at %s: %.0f%% of its attention on average (even spreading "
                 "would give %.0f%%), %s.", who, pattern_place(place, sizeof place, m, m->role, tokens, T),
                 100.0 * m->pattern[m->role], 100.0 * m->even[m->role],
                 pattern_support(support, sizeof support, m, m->role));
    } else if (m->role == MEASURES_NONE) {
        snprintf(line, sizeof line, "with one token (T = 1), %s can only look at it: no pattern.", who);
    } else {
        int n = m->role == MEASURES_DIFFUSE
                    ? snprintf(line, sizeof line, "%s spreads its attention almost evenly (entropy %.0f%% of the "
                                                  "most possible)", who, 100.0 * m->entropy_norm)
                    : snprintf(line, sizeof line, "%s has no clear role", who);
        if (m->strongest >= 0)
            snprintf(line + n, sizeof line - (size_t)n,
                     "; strongest pattern: %.0f%% on %s (even spreading would give %.0f%%), %s.",
                     100.0 * m->pattern[m->strongest],
                     pattern_place(place, sizeof place, m, (MeasuresRole)m->strongest, tokens, T),
                     100.0 * m->even[m->strongest],
                     pattern_support(support, sizeof support, m, (MeasuresRole)m->strongest));
        else
            snprintf(line + n, sizeof line - (size_t)n, "; no pattern could show in more than one row.");
    }
    txt_wrapped(f, "  ", line);
}

/* A map's row of the first table: role, entropy, confidence, distance and,
 * for a head, how it differs from the wide head. */
static void txt_table_row(FILE *f, const char *label, const char *kv, const MapMeasures *m,
                          const MapComparison *cmp)
{
    char b[6][16];
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", label, kv, measures_role_name(m->role),
            txt_cell(b[0], 16, "%.2f", m->entropy_bits), txt_cell(b[1], 16, "%.2f", m->entropy_norm),
            txt_cell(b[2], 16, "%.2f", m->confidence), txt_cell(b[3], 16, "%.1f", m->mean_distance),
            cmp ? txt_cell(b[4], 16, "%.2f", cmp->js_to_single) : "-",
            cmp ? txt_cell(b[5], 16, "%.2f", cmp->top1_agreement) : "-");
}

/* The role rule's numbers in words, for its legend: k times ("twice"), a
 * fraction ("half", "a quarter"); figures past the words. */
static const char *times_word(char *buf, size_t n, int k)
{
    if (k == 2)
        snprintf(buf, n, "twice");
    else
        snprintf(buf, n, "%d times", k);
    return buf;
}

static const char *fraction_word(char *buf, size_t n, double x)
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

/* A map's row of the pattern table: each pattern's mean share. */
static void txt_pattern_row(FILE *f, const char *label, const MapMeasures *m)
{
    char b[16];
    fprintf(f, "%5s", label);
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", txt_cell(b, sizeof b, "%.2f", m->pattern[p]));
    fputc('\n', f);
}

/* The cost table, columns as wide as their widest number. */
static void txt_cost(FILE *f, const ReportData *d, const Summary *s)
{
    const CostTable *t = &s->cost;
    const MhaConfig *c = s->c;
    char input_label[48];
    snprintf(input_label, sizeof input_label, "this input (%s)", measures_layout_name(c->n_heads, c->n_kv_heads));
    const char *labels[5] = {input_label, LAYOUT_MHA, LAYOUT_GQA, LAYOUT_MQA, "one wide head"};
    const CostRow *rows[5] = {&t->input, &t->mha, &t->gqa, &t->mqa, &t->wide};
    const int valid[5] = {1, 1, t->gqa_valid, 1, 1};
    const char *heads[8] = {"heads", "K/V", "params", "MAC proj", "MAC scores", "MAC mix", "MAC total",
                            "K/V B/token"};
    char num[5][8][32];
    int w[8];
    for (int k = 0; k < 8; k++)
        w[k] = (int)strlen(heads[k]);
    for (int r = 0; r < 5; r++) {
        if (!valid[r])
            continue;
        const CostRow *x = rows[r];
        const int64_t v[8] = {x->n_heads, x->n_kv_heads, x->params, x->mac_projections, x->mac_scores,
                              x->mac_value_mix, x->mac_projections + x->mac_scores + x->mac_value_mix,
                              x->kv_cache_bytes};
        for (int k = 0; k < 8; k++) {
            format_grouped(num[r][k], v[k]);
            if ((int)strlen(num[r][k]) > w[k])
                w[k] = (int)strlen(num[r][k]);
        }
    }
    /* Drop the total column when the table would not fit. */
    int total = 17;
    for (int k = 0; k < 8; k++)
        total += w[k] + 2;
    const int show_total = total <= REPORT_WIDTH;

    fprintf(f, "%-17s", "layout");
    for (int k = 0; k < 8; k++)
        if (k != 6 || show_total)
            fprintf(f, "  %*s", w[k], heads[k]);
    fputc('\n', f);
    for (int r = 0; r < 5; r++) {
        if (!valid[r])
            continue;
        fprintf(f, "%-17s", labels[r]);
        for (int k = 0; k < 8; k++)
            if (k != 6 || show_total)
                fprintf(f, "  %*s", w[k], num[r][k]);
        fputc('\n', f);
    }
    if (!t->gqa_valid)
        fprintf(f, "(no GQA row: %d heads do not split into n_heads/4 >= 2 K/V groups)\n", c->n_heads);

    char a[32], b[32];
    fprintf(f,
            "params = 2 d^2 + 2 d kv%s; MAC proj = T (2 d^2 + 2 d kv); MAC scores = MAC mix = P d;\n"
            "kv = K/V heads x head_dim; P = %s = %s (masked cells are\n"
            "not computed, so not counted).  MAC: multiply-adds.  K/V B/token: bytes of K/V cache per\n"
            "token per layer = 2 (K and V) x kv x 2 bytes (fp16).\n",
            d->in->w.has_bias ? " + 2 d + 2 kv (biases)" : "",
            c->causal ? "T(T+1)/2 visible (query, key) pairs" : "T^2 (query, key) pairs", format_grouped(a, t->pairs));
    char line[256];
    if (c->n_heads == 1) {
        fputs("With one head, the multi-head layer is itself one wide head: the same counts.\n", f);
    } else if (t->mha.params == t->wide.params && t->mha.mac_projections == t->wide.mac_projections &&
               t->mha.mac_scores == t->wide.mac_scores) {
        snprintf(line, sizeof line,
                 "%d heads of width %d have the same parameters and multiply-adds as one head of width %d; "
                 "they add %d softmaxes and %d T x T attention maps where the wide head has one of each.",
                 c->n_heads, c->head_dim, c->d_model, c->n_heads, c->n_heads);
        txt_wrapped(f, "", line);
    }
    if (c->n_heads == 1)
        return; /* one head: nothing to share */
    char c1[32];
    int n = snprintf(line, sizeof line,
                     "Sharing K/V heads shrinks the K/V cache from %s bytes per token per layer (MHA)",
                     format_grouped(a, t->mha.kv_cache_bytes));
    if (t->gqa_valid)
        n += snprintf(line + n, sizeof line - (size_t)n, " to %s (GQA, %d K/V heads)",
                      format_grouped(b, t->gqa.kv_cache_bytes), t->gqa.n_kv_heads);
    snprintf(line + n, sizeof line - (size_t)n, "%s %s (MQA).", t->gqa_valid ? " and" : " to",
             format_grouped(c1, t->mqa.kv_cache_bytes));
    txt_wrapped(f, "", line);
}

/* The rows with outcome o as "'gave' (1), 'the' (2)", wrapped after label. */
static void txt_pull_rows(FILE *f, const PullLayer *p, char *const *tokens, PullOutcome o, const char *label)
{
    size_t n = strlen(label) + 1;
    for (int i = 0; i < p->T; i++)
        n += strlen(tokens[i]) + 24;
    char *line = malloc(n), *end = line;
    if (!line)
        return;
    end += sprintf(end, "%s", label);
    int any = 0;
    for (int i = 0; i < p->T; i++)
        if (p->rows[i].outcome == o) {
            end += sprintf(end, "%s '%s' (%d)", any ? "," : "", tokens[i], i);
            any = 1;
        }
    if (any)
        txt_wrapped(f, "  ", line);
    free(line);
}

/* How the wide head combines the heads' scores, in sentences (pull.h). */
static void txt_pulls(FILE *f, const PullLayer *p, char *const *tokens)
{
    char line[1024];
    const int H = p->n_heads;
    fputs("\nHow the wide head combines the heads (query_NN.png)\n", f);
    char dev[64];
    if (p->identity_max_dev == 0)
        snprintf(dev, sizeof dev, "they agree exactly");
    else
        snprintf(dev, sizeof dev, "the largest difference is %.2g, float rounding", p->identity_max_dev);
    if (p->identity)
        snprintf(line, sizeof line, "Its score is the heads' scores added up: wide(i, j) = (1/sqrt(%d)) x "
                 "sum over the %d heads of score_h(i, j), since its query and key are theirs side by side; "
                 "mhaviz computes it so (its tests compare it with q.k/sqrt(d_model) computed directly). "
                 "Summed again in double precision on every visible cell: %s (the scores reach %.3g). "
                 "So its softmax weight on a "
                 "key is in proportion to the product over the heads of exp(score_h / sqrt(%d)).", H, H, dev,
                 p->max_abs_score, H);
    else
        snprintf(line, sizeof line, "The wide head has weights of its own (\"single_head\"), so its scores "
                 "are not the heads' scores added up: that identity holds only for a wide head built "
                 "from the heads' projections. Its top keys are compared with the heads' all the same.");
    txt_wrapped(f, "  ", line);
    const int choosing = p->T - p->count[PULL_NO_CHOICE];
    if (choosing == 0) {
        txt_wrapped(f, "  ", "No token has more than one key to choose from.");
        return;
    }
    const int agreed_blur = p->n_blur - p->count[PULL_SPLIT]; /* rows that blur though all agree */
    char also[96] = "";
    if (agreed_blur > 0)
        snprintf(also, sizeof also, ", though %d of them blur", agreed_blur);
    snprintf(line, sizeof line, "Of the %d tokens with more than one key to choose from: in %d every head's "
             "top key is the wide head's (nothing lost%s); in %d %s (no key gets more than %.0f%% of the "
             "wide head's attention); in %d %s; in %d it chose a key that is no head's top key.",
             choosing, p->count[PULL_AGREED], also, p->count[PULL_SPLIT],
             p->identity ? "the pulls split and the row blurs" : "the row blurs", 100 * PULL_BLUR_AT_MOST,
             p->count[PULL_FOLLOWED],
             p->identity ? "the wide head followed the top key of some heads over the others"
                         : "the wide head's top key is the top key of some heads, not of the others",
             p->count[PULL_OWN]);
    txt_wrapped(f, "  ", line);
    txt_pull_rows(f, p, tokens, PULL_AGREED, "nothing lost:");
    txt_pull_rows(f, p, tokens, PULL_SPLIT, "split:");
    txt_pull_rows(f, p, tokens, PULL_FOLLOWED, p->identity ? "followed:" : "a head's top key:");
    txt_pull_rows(f, p, tokens, PULL_OWN, "a choice no head made:");
    const int q = p->default_query;
    snprintf(line, sizeof line, "query_NN.png draws one token's pulls: by default '%s' (%d), where the "
             "heads' top keys differ most (%d different keys); --query picks another.", tokens[q], q,
             p->rows[q].n_top_keys);
    txt_wrapped(f, "  ", line);
}

/* Long on purpose: report.txt's sections in the order they are printed. */
void write_txt(FILE *f, const ReportData *d, const Summary *s)
{
    const MhaConfig *c = s->c;
    const char *layout = measures_layout_name(c->n_heads, c->n_kv_heads);
    const char *layout_long = c->n_kv_heads == c->n_heads ? "multi-head: each head has its own keys and values"
                            : c->n_kv_heads == 1          ? "multi-query: all heads share one key/value head"
                                                          : "grouped-query: heads share key/value heads in groups";
    const int kv_mul = c->n_heads / c->n_kv_heads;

    fputs("mhaviz report: multi-head attention against one wide head\n\n", f);
    txt_tokens(f, d->in->tokens, c->T, fprintf(f, "tokens     T = %d: ", c->T), 11);
    fprintf(f, "d_model    %d\n", c->d_model);
    fprintf(f, "heads      %d x head_dim %d\n", c->n_heads, c->head_dim);
    fprintf(f, "K/V heads  %d: %s (%s", c->n_kv_heads, layout, layout_long);
    if (kv_mul > 1 && c->n_kv_heads > 1)
        fprintf(f, ", %d per group", kv_mul);
    fputs(")\n", f);
    fprintf(f, "causal     %s\n", c->causal ? "yes: each token sees itself and earlier tokens"
                                             : "no: each token sees every token");
    fprintf(f, "wide head  1 head of width %d, %s\n", c->d_model,
            d->single_given ? "with its own weights from the input (\"single_head\")"
                            : "built from the same projections");
    if (d->notes) {
        /* as given, line by line; a line too wide for the report is wrapped */
        fputs("\nNotes\n", f);
        for (const char *p = d->notes; *p;) {
            size_t n = strcspn(p, "\n");
            char *line = columns(p, n) > REPORT_WIDTH ? strndup(p, n) : NULL;
            if (line)
                txt_wrapped(f, "", line);
            else
                fprintf(f, "%.*s\n", (int)n, p);
            free(line);
            p += n + (p[n] == '\n');
        }
    }

    fputs("\nWhat each head does (rows: the heads, then the single wide head)\n", f);
    fprintf(f, "%5s %4s  %-15s %6s %5s %5s %6s %5s %5s\n", "head", "K/V", "role", "bits", "norm", "conf",
            "dist", "JS", "top1");
    for (int h = 0; h < c->n_heads; h++) {
        char label[16], kv[16];
        snprintf(label, sizeof label, "%d", h);
        snprintf(kv, sizeof kv, "%d", h / kv_mul);
        txt_table_row(f, label, kv, &s->heads[h], &s->cmp[h]);
    }
    txt_table_row(f, "wide", "-", &s->wide, NULL);
    fputs("bits: mean row entropy (0 = one key).  norm: entropy / the most possible (1 = uniform).\n"
          "conf: mean largest weight.  dist: mean distance to the keys looked at, in tokens.\n"
          "JS: Jensen-Shannon divergence from the wide head (0 = same, 1 = disjoint).\n"
          "top1: share of rows whose top key is the wide head's.  - : not defined for this input.\n",
          f);

    fputs("\nWhere the attention goes: each pattern's share of a row, on average over the rows where\n"
          "it could show\n",
          f);
    fprintf(f, "%5s", "head");
    static const char *const short_names[MEASURES_N_PATTERNS] = {"prev", "self", "next", "dup",
                                                                 "ind",  "first", "last", "fixed"};
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        fprintf(f, " %5s", short_names[p]);
    /* rows where each could show: the same for every map but fixed's, whose key is each map's own */
    fprintf(f, "\n%5s", "rows");
    for (int p = 0; p < MEASURES_FIXED_TOKEN; p++)
        fprintf(f, " %5d", s->wide.rows[p]);
    fputc('\n', f);
    for (int h = 0; h < c->n_heads; h++) {
        char label[16];
        snprintf(label, sizeof label, "%d", h);
        txt_pattern_row(f, label, &s->heads[h]);
    }
    txt_pattern_row(f, "wide", &s->wide);
    fputs("prev, self, next: the token before, itself, the token after.  dup: earlier copies of its\n"
          "token.  ind: the token after an earlier copy (induction).  first, last: token 0, token T-1.\n"
          "fixed: the one key most rows look at, named below.  rows: rows where each could show\n"
          "(for fixed, each map's own key: not one count for all).\n"
          "Each cell counts for one pattern, the first of this list that names it; a row with one\n"
          "visible key counts for none.\n",
          f);
    /* The role rule's legend, from the thresholds the rule uses (measures.h). */
    char times[24], shown[24], part[24];
    fprintf(f,
            "A role needs a share of at least %.2f and %s what spreading evenly would give, and at\n"
            "least %s of the row in %d rows or more and in %s of the rows where it could.\n"
            "- : no row where it could.\n",
            MEASURES_ROLE_SHARE, times_word(times, sizeof times, MEASURES_ROLE_EVEN_TIMES),
            fraction_word(shown, sizeof shown, MEASURES_SHOWN_SHARE), MEASURES_MIN_ROLE_ROWS,
            fraction_word(part, sizeof part, 1.0 / MEASURES_ROLE_ROWS_PART));

    fputs("\nIn words\n", f);
    for (int h = 0; h < c->n_heads; h++) {
        char who[32];
        snprintf(who, sizeof who, "head %d", h);
        txt_sentence(f, who, &s->heads[h], d->in->tokens, c->T);
    }
    txt_sentence(f, "the wide head", &s->wide, d->in->tokens, c->T);

    fputs("\nMany heads against one wide head\n", f);
    char b1[16], b2[16];
    fprintf(f, "mean row entropy: %.2f bits per head on average, %.2f bits for the wide head\n",
            s->heads_bits_mean, s->wide.entropy_bits);
    if (measures_is_null(s->blur)) {
        fputs("blur: not defined (no row can see two or more tokens)\n", f);
    } else {
        char blur[16];
        if (fabs(s->blur) < 0.005)
            strcpy(blur, "0.00"); /* not "-0.00" */
        else
            snprintf(blur, sizeof blur, "%+.2f", s->blur);
        fprintf(f, "blur = %s: the wide head's normalised entropy is %.2f, the heads' mean %.2f:\n"
                   "  one distribution per token came out %s the heads' own.\n",
                blur, s->wide.entropy_norm, s->heads_norm_mean,
                s->blur >= BLUR_NOTICEABLE ? "blurrier than" :
                s->blur <= -BLUR_NOTICEABLE ? "sharper than" : "about as sharp as");
    }
    fprintf(f, "outputs: ||O_multi - O_single|| / ||O_multi|| = %s, mean cosine %s\n",
            txt_cell(b1, sizeof b1, "%.4f", s->rel_diff), txt_cell(b2, sizeof b2, "%.4f", s->cosine));

    if (d->pulls)
        txt_pulls(f, d->pulls, d->in->tokens);

    fprintf(f, "\nCost at T = %d, d = d_model = %d\n", c->T, c->d_model);
    txt_cost(f, d, s);
}
