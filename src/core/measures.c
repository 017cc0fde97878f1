/* measures.c — per-map measures, head-vs-wide comparisons and the cost table.
 *
 * The measures follow the literature the report cites: attention entropy and
 * the Jensen-Shannon divergence between maps (Clark et al. 2019), confidence
 * (Voita et al. 2019), and the previous-token, duplicate-token and induction
 * patterns (Olsson et al. 2022). Definitions are in measures.h and docs/report.md.
 */
#include "core/measures.h"
#include "core/parallel.h"
#include "core/status.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int measures_is_null(double x) { return isnan(x); }

const char *measures_side_text(char *buf, size_t n, double x, int decimals, double at)
{
    char on_at[32];
    snprintf(on_at, sizeof on_at, "%.*f", decimals, at);
    snprintf(buf, n, "%.*f", decimals, x);
    if (x != at && strcmp(buf, on_at) == 0) { /* rounded onto the threshold: one more decimal, away from it */
        const double unit = pow(10.0, decimals + 1);
        snprintf(buf, n, "%.*f", decimals + 1, (x < at ? floor(x * unit) : ceil(x * unit)) / unit);
    }
    return buf;
}

const char *measures_weight_text(char *buf, size_t n, double w)
{
    return measures_side_text(buf, n, w, 2, MEASURES_SHOWN_SHARE);
}

const char *measures_role_name(MeasuresRole r)
{
    static const char *const names[] = {
        "previous-token", "self", "next-token", "duplicate-token", "induction", "first-token",
        "last-token", "fixed-token", "split", "diffuse", "mixed", "none",
    };
    return (unsigned)r < sizeof names / sizeof names[0] ? names[r] : "?";
}

const char *measures_pattern_field(MeasuresRole r)
{
    static const char *const names[MEASURES_N_PATTERNS] = {
        "previous_token", "self", "next_token", "duplicate_token", "induction", "first_token",
        "last_token", "fixed_token",
    };
    return (unsigned)r < MEASURES_N_PATTERNS ? names[r] : "?";
}

void measures_token_ids(char *const *tokens, int T, int *ids)
{
    for (int i = 0; i < T; i++) {
        ids[i] = i;
        for (int p = 0; p < i; p++)
            if (ids[p] == p && strcmp(tokens[p], tokens[i]) == 0) {
                ids[i] = p;
                break;
            }
    }
}

/* -sum_j p_j log2 p_j over the row's n cells; 0 log 0 = 0. */
static double row_entropy(const float *row, int n)
{
    double h = 0.0;
    for (int j = 0; j < n; j++)
        if (row[j] > 0.0f)
            h -= (double)row[j] * log2((double)row[j]);
    return h;
}

/* Mean of sum/count, or null when no row counted. */
static double mean_or_null(double sum, long count) { return count > 0 ? sum / (double)count : NAN; }

double measures_row_norm_entropy(const float *row, int n_i)
{
    return n_i >= 2 ? row_entropy(row, n_i) / log2((double)n_i) : NAN;
}

void measures_row_entropy_norm(const float *att, int T, int causal, double *out)
{
    for (int i = 0; i < T; i++) /* query i may see n_i keys */
        out[i] = measures_row_norm_entropy(att + (size_t)i * T, mha_visible_keys(causal, i, T));
}

int measures_argmax(const float *row, int n)
{
    int best = 0;
    float top = row[0]; /* row[best], kept at hand rather than read again each step */
    for (int j = 1; j < n; j++)
        if (row[j] > top) {
            top = row[j];
            best = j;
        }
    return best;
}

/* The pattern visible cell (i, j) counts towards: the first in the list
 * that names it (one cell, one pattern), or -1 for none. */
static int cell_pattern(int i, int j, int T, int causal, const int *ids, int fixed_key)
{
    if (j == i - 1)
        return MEASURES_PREVIOUS_TOKEN;
    if (j == i)
        return MEASURES_SELF;
    if (j == i + 1)
        return MEASURES_NEXT_TOKEN;
    if (j < i && ids[j] == ids[i])
        return MEASURES_DUPLICATE_TOKEN;
    if (j >= 1 && j - 1 < i && ids[j - 1] == ids[i])
        return MEASURES_INDUCTION; /* j follows an earlier copy j - 1 */
    if (j == 0)
        return MEASURES_FIRST_TOKEN;
    if (!causal && j == T - 1)
        return MEASURES_LAST_TOKEN;
    if (j == fixed_key)
        return MEASURES_FIXED_TOKEN;
    return -1;
}

double measures_row_share(const float *row, int i, int T, int causal, const int *ids, int fixed_key,
                          MeasuresRole p)
{
    const int n_i = mha_visible_keys(causal, i, T);
    double share = 0.0;
    for (int j = 0; j < n_i; j++)
        if (cell_pattern(i, j, T, causal, ids, fixed_key) == (int)p)
            share += row[j];
    return share;
}

/* The key that is the top key (lowest index on ties), with at least half of
 * the row, of more than half the rows that see two keys; -1 for none, and
 * for token 0 and (without the mask) token T-1, which have patterns of their
 * own. Such a key is the majority of the rows' top keys, so Boyer and
 * Moore's vote finds the only candidate in one pass; a second pass counts it. */
static int fixed_key(const float *att, int T, int causal)
{
    if (T < 2)
        return -1;
    const int first = causal ? 1 : 0; /* rows from here on see two keys or more */
    int candidate = 0, votes = 0;
    for (int i = first; i < T; i++) {
        const int top = measures_argmax(att + (size_t)i * T, mha_visible_keys(causal, i, T));
        if (votes == 0)
            candidate = top;
        votes += top == candidate ? 1 : -1;
    }
    int held = 0;
    for (int i = first; i < T; i++) {
        const float *a_i = att + (size_t)i * T; /* (T) row i */
        held += measures_argmax(a_i, mha_visible_keys(causal, i, T)) == candidate && a_i[candidate] >= 0.5f;
    }
    if (2 * held <= T - first || candidate == 0 || (!causal && candidate == T - 1))
        return -1;
    return candidate;
}

void measures_map(const float *att, int T, int causal, const int *ids, MapMeasures *m)
{
    double entropy = 0.0, entropy_norm = 0.0, confidence = 0.0, distance = 0.0;
    double sum[MEASURES_N_PATTERNS] = {0}, even[MEASURES_N_PATTERNS] = {0};
    long norm_rows = 0;
    memset(m->rows, 0, sizeof m->rows);
    memset(m->shown, 0, sizeof m->shown);
    m->fixed_key = fixed_key(att, T, causal);

    for (int i = 0; i < T; i++) {
        const float *a_i = att + (size_t)i * T; /* (T) row i */
        const int n_i = mha_visible_keys(causal, i, T);     /* keys query i may see */

        const double h_i = row_entropy(a_i, n_i);
        entropy += h_i;
        float max = a_i[0];
        double dist_i = 0.0;
        for (int j = 0; j < n_i; j++) {
            if (a_i[j] > max)
                max = a_i[j];
            dist_i += (double)a_i[j] * (double)(i > j ? i - j : j - i);
        }
        confidence += max;
        distance += dist_i;
        if (n_i < 2)
            continue; /* one key: no choice, so no pattern */
        entropy_norm += h_i / log2((double)n_i);
        norm_rows++;

        /* The patterns: each visible cell's weight to the one pattern that
         * names it; a pattern that names a cell could show in this row. */
        double share[MEASURES_N_PATTERNS] = {0};
        int cells[MEASURES_N_PATTERNS] = {0};
        for (int j = 0; j < n_i; j++) {
            const int p = cell_pattern(i, j, T, causal, ids, m->fixed_key);
            if (p >= 0) {
                share[p] += a_i[j];
                cells[p]++;
            }
        }
        for (int p = 0; p < MEASURES_N_PATTERNS; p++)
            if (cells[p] > 0) {
                sum[p] += share[p];
                even[p] += (double)cells[p] / n_i;
                m->rows[p]++;
                m->shown[p] += share[p] >= MEASURES_SHOWN_SHARE;
            }
    }

    m->entropy_bits = mean_or_null(entropy, T);
    m->entropy_norm = mean_or_null(entropy_norm, norm_rows);
    m->confidence = mean_or_null(confidence, T);
    m->mean_distance = mean_or_null(distance, T);
    measures_role_from_sums(m, sum, even, norm_rows);
}

void measures_role_from_sums(MapMeasures *m, const double *sum, const double *even, long norm_rows)
{
    m->strongest = -1;
    int best = -1;
    for (int p = 0; p < MEASURES_N_PATTERNS; p++) {
        m->pattern[p] = mean_or_null(sum[p], m->rows[p]);
        m->even[p] = mean_or_null(even[p], m->rows[p]);
        if (m->rows[p] >= MEASURES_MIN_ROLE_ROWS &&
            (m->strongest < 0 || m->pattern[p] > m->pattern[m->strongest]))
            m->strongest = p;
        /* support: a habit, not a coincidence of one row or a few, and
         * at least twice what spreading evenly would give (one repeated
         * word: most keys are earlier copies, even attention's share) */
        const int supported = m->shown[p] >= MEASURES_MIN_ROLE_ROWS &&
                              MEASURES_ROLE_ROWS_PART * m->shown[p] >= m->rows[p];
        if (supported && m->pattern[p] >= MEASURES_ROLE_SHARE &&
            m->pattern[p] >= MEASURES_ROLE_EVEN_TIMES * m->even[p] &&
            (best < 0 || m->pattern[p] > m->pattern[best]))
            best = p;
    }
    /* the second largest share beside the strongest, for split */
    int second = -1;
    for (int p = 0; p < MEASURES_N_PATTERNS; p++)
        if (p != m->strongest && m->rows[p] >= MEASURES_MIN_ROLE_ROWS &&
            (second < 0 || m->pattern[p] > m->pattern[second]))
            second = p;
    m->split[0] = m->split[1] = -1;
    /* A role must win: a pattern whose share ties the best one's makes
     * the map split between the two (the larger first), never the one
     * list order puts first. */
    const int rival = best >= 0 ? measures_tied_with(m, best) : -1;
    if (best >= 0 && rival >= 0) {
        const int rival_first = m->pattern[rival] > m->pattern[best] ||
                                (m->pattern[rival] == m->pattern[best] && rival < best);
        m->role = MEASURES_SPLIT;
        m->split[0] = rival_first ? rival : best;
        m->split[1] = rival_first ? best : rival;
    } else if (best >= 0)
        m->role = (MeasuresRole)best;
    else if (norm_rows == 0)
        m->role = MEASURES_NONE;
    else if (second >= 0 && measures_is_split(m->pattern[m->strongest], m->even[m->strongest], m->pattern[second],
                                              m->even[second])) {
        m->role = MEASURES_SPLIT;
        m->split[0] = m->strongest;
        m->split[1] = second;
    } else if (m->entropy_norm >= MEASURES_DIFFUSE_NORM)
        m->role = MEASURES_DIFFUSE;
    else
        m->role = MEASURES_MIXED;
}

/* 1 when two mean shares a and b can be one softmax's: together at most
 * 1 (within the tie tolerance). More than 1 comes from different rows (a
 * head on token 0, its copy in some rows and the first token in others). */
static int shares_of_one_softmax(double a, double b)
{
    return a + b <= 1 + MEASURES_TIE_SHARE;
}

int measures_tied_with(const MapMeasures *m, int p)
{
    int tied = -1;
    for (int q = 0; q < MEASURES_N_PATTERNS; q++)
        if (q != p && m->rows[q] >= MEASURES_MIN_ROLE_ROWS && fabs(m->pattern[q] - m->pattern[p]) < MEASURES_TIE_SHARE &&
            shares_of_one_softmax(m->pattern[q], m->pattern[p]) && (tied < 0 || m->pattern[q] > m->pattern[tied]))
            tied = q;
    return tied;
}

/* No bound at a role's share: split is asked only when no pattern made a
 * role, and a bound there would flip 0.5 / 0.5 (mixed) against 0.4999 /
 * 0.4999 (split) on a tie. */
int measures_is_split(double a, double even_a, double b, double even_b)
{
    return a >= MEASURES_SPLIT_EACH && b >= MEASURES_SPLIT_EACH && shares_of_one_softmax(a, b) &&
           a > even_a && b > even_b &&
           a + b >= MEASURES_ROLE_SHARE && a + b >= MEASURES_SPLIT_EVEN_TIMES * (even_a + even_b);
}

int measures_layer(const float *att, int n_heads, const float *wide, int T, int causal,
                   char *const *tokens, MapMeasures *m)
{
    int *ids = malloc((size_t)T * sizeof *ids); /* (T) first index of each token */
    if (!ids)
        return MHAVIZ_ENOMEM;
    measures_token_ids(tokens, T, ids);
    const size_t cells = ((size_t)n_heads + 1) * (size_t)T * (size_t)T;
    (void)cells; /* read only by the OpenMP pragma */
#pragma omp parallel for schedule(dynamic) if (cells >= PARALLEL_MIN_CELLS)
    for (int p = 0; p <= n_heads; p++) /* each map's sums in its own order: any thread count */
        measures_map(p < n_heads ? att + (size_t)p * T * T : wide, T, causal, ids, &m[p]);
    free(ids);
    return MHAVIZ_OK;
}

double measures_blur(const MapMeasures *m, int n_heads, double *heads_norm_mean)
{
    double norm_sum = 0.0;
    for (int h = 0; h < n_heads; h++) /* in head order: the same sum for any thread count */
        norm_sum += m[h].entropy_norm;
    *heads_norm_mean = norm_sum / n_heads;
    return m[n_heads].entropy_norm - *heads_norm_mean;
}

/* JS(P, Q) = 1/2 KL(P||M) + 1/2 KL(Q||M), M = (P + Q)/2, base 2, in [0, 1]. */
static double js_divergence(const float *p, const float *q, int n)
{
    double js = 0.0;
    for (int j = 0; j < n; j++) {
        const double pj = p[j], qj = q[j], mj = 0.5 * (pj + qj);
        if (pj > 0.0)
            js += 0.5 * pj * log2(pj / mj);
        if (qj > 0.0)
            js += 0.5 * qj * log2(qj / mj);
    }
    /* rounding can leave it a hair outside [0, 1] */
    return js < 0.0 ? 0.0 : js > 1.0 ? 1.0 : js;
}

/* 1 when rows a and b (n keys each) share a top key. A row's top keys are
 * those within PULL_TIE_WEIGHT of its largest weight: a tie gives it more
 * than one, and which of them the argmax returns is float noise. */
static int share_top_key(const float *a, const float *b, int n)
{
    const float top_a = a[measures_argmax(a, n)], top_b = b[measures_argmax(b, n)];
    for (int j = 0; j < n; j++)
        if (top_a - a[j] < PULL_TIE_WEIGHT && top_b - b[j] < PULL_TIE_WEIGHT)
            return 1;
    return 0;
}

void measures_compare(const float *att, const float *wide, int T, int causal, MapComparison *c)
{
    double js = 0.0;
    long agree = 0, rows = 0;
    for (int i = 0; i < T; i++) {
        const float *a_i = att + (size_t)i * T, *w_i = wide + (size_t)i * T; /* (T) rows */
        const int n_i = mha_visible_keys(causal, i, T);
        if (n_i < 2)
            continue; /* one key: no choice, both maps put everything on it */
        js += js_divergence(a_i, w_i, n_i);
        agree += share_top_key(a_i, w_i, n_i);
        rows++;
    }
    c->js_to_single = mean_or_null(js, rows);
    c->top1_agreement = mean_or_null((double)agree, rows);
}

double measures_output_rel_diff(const float *a, const float *b, int rows, int cols)
{
    double diff = 0.0, norm = 0.0;
    const size_t n = (size_t)rows * cols;
    for (size_t k = 0; k < n; k++) {
        const double d = (double)a[k] - (double)b[k];
        diff += d * d;
        norm += (double)a[k] * (double)a[k];
    }
    return norm > 0.0 ? sqrt(diff) / sqrt(norm) : NAN;
}

double measures_output_cosine(const float *a, const float *b, int rows, int cols)
{
    double sum = 0.0;
    long counted = 0;
    for (int r = 0; r < rows; r++) {
        const float *a_r = a + (size_t)r * cols, *b_r = b + (size_t)r * cols; /* (cols) */
        double dot = 0.0, aa = 0.0, bb = 0.0;
        for (int k = 0; k < cols; k++) {
            dot += (double)a_r[k] * b_r[k];
            aa += (double)a_r[k] * a_r[k];
            bb += (double)b_r[k] * b_r[k];
        }
        if (aa > 0.0 && bb > 0.0) {
            sum += dot / (sqrt(aa) * sqrt(bb));
            counted++;
        }
    }
    return mean_or_null(sum, counted);
}

/* The cost of one layout of width d with n_heads query heads and n_kv K/V heads. */
static CostRow cost_row(int64_t T, int64_t pairs, int64_t d, int n_heads, int n_kv, int64_t head_dim,
                        int with_bias)
{
    CostRow r;
    const int64_t kv_dim = n_kv * head_dim;
    r.n_heads = n_heads;
    r.n_kv_heads = n_kv;
    r.head_dim = (int)head_dim;
    /* W_q (d, d), W_k and W_v (d, kv_dim), W_o (d, d); biases d, kv_dim, kv_dim, d */
    r.params = d * d + 2 * d * kv_dim + d * d + (with_bias ? d + 2 * kv_dim + d : 0);
    /* each token's row times each matrix: d*d + 2*d*kv_dim + d*d per token */
    r.mac_projections = T * (d * d + 2 * d * kv_dim + d * d);
    /* each head: a head_dim dot product per visible pair, then a head_dim-wide
     * weighted sum per visible pair; n_heads * head_dim = d */
    r.mac_scores = pairs * n_heads * head_dim;
    r.mac_value_mix = pairs * n_heads * head_dim;
    r.mac_total = r.mac_projections + r.mac_scores + r.mac_value_mix;
    r.kv_cache_bytes = 2 * kv_dim * 2;
    return r;
}

void measures_cost(const MhaConfig *c, int with_bias, int wide_bias, CostTable *t)
{
    const int64_t T = c->T, d = c->d_model, hd = c->head_dim;
    const int h = c->n_heads;
    t->pairs = mha_visible_pairs(c->causal, c->T);
    t->input = cost_row(T, t->pairs, d, h, c->n_kv_heads, hd, with_bias);
    t->mha = cost_row(T, t->pairs, d, h, h, hd, with_bias);
    t->mqa = cost_row(T, t->pairs, d, h, 1, hd, with_bias);
    /* GQA: every count of K/V heads between that divides the heads */
    t->n_gqa = 0;
    for (int g = h - 1; g > 1 && t->n_gqa < MEASURES_MAX_GQA; g--)
        if (h % g == 0)
            t->gqa[t->n_gqa++] = cost_row(T, t->pairs, d, h, g, hd, with_bias);
    t->wide = cost_row(T, t->pairs, d, 1, 1, d, wide_bias);
}

const char *measures_layout_name(int n_heads, int n_kv_heads)
{
    if (n_kv_heads == n_heads)
        return LAYOUT_MHA;
    return n_kv_heads == 1 ? LAYOUT_MQA : LAYOUT_GQA;
}
