/* lesson_page.c — lesson.html: the page's files (assets/lesson/, built in
 * as C arrays) filled with one run's numbers.
 *
 *   the facts (cJSON: tokens, roles, sentences, pulls, costs) + the maps
 *   (float16, or thumbnails and top keys past the cap, in base64) -> the
 *   page template, with its stylesheet and scripts put in place. */
#include "report/lesson_page.h"
#include "core/kept.h"
#include "core/measures.h"
#include "core/pull.h"
#include "text/pull_caption.h"
#include "core/rival.h"
#include "core/status.h"
#include "io/outdir.h"
#include "pictures/labels.h"
#include "pictures/model_overview.h"
#include "report/report.h"
#include "report/report_parts.h"
#include "report/report_txt.h"
#include "text/contest.h"
#include "text/token_text.h"

#include "lesson_assets.h" /* made at build time by xxd -i from assets/lesson/ (the Makefile) */

#include <cJSON.h>
#include <errno.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Past the cap, the page keeps for each map a thumbnail of at most
 * thumb x thumb pixels and the top_k keys of each row: the first of these
 * that fits. */
static const struct {
    int thumb, top_k;
} SUMMARY_LEVELS[] = {{256, 8}, {128, 4}, {64, 2}, {32, 1}};
#define N_SUMMARY_LEVELS (int)(sizeof SUMMARY_LEVELS / sizeof SUMMARY_LEVELS[0])

/* A thumbnail pixel all of whose cells are masked. */
#define THUMB_MASKED 255

/* What the page embeds of the maps. */
typedef struct {
    int summary;      /* 0: every visible cell; 1: thumbnails and top keys */
    int thumb, top_k; /* the summary's sizes (thumb = min(T, level)) */
    size_t bytes;     /* the binary part, before base64 */
} Embedding;

/* ------------------------------------------------------------ encodings */

/* f as an IEEE half (float16), rounded to nearest even; past 65504 it is
 * infinite, as a float16 is. */
static uint16_t half_of(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    const uint32_t sign = (x >> 16) & 0x8000u, mant = x & 0x7FFFFFu;
    const int exp = (int)((x >> 23) & 0xFF) - 127 + 15; /* the half's biased exponent */
    if (((x >> 23) & 0xFF) == 0xFF)                     /* infinity or NaN */
        return (uint16_t)(sign | 0x7C00u | (mant ? 0x200u : 0));
    if (exp >= 31)
        return (uint16_t)(sign | 0x7C00u);
    if (exp <= 0) { /* a subnormal half (or zero) */
        if (exp < -10)
            return (uint16_t)sign;
        const uint32_t m = mant | 0x800000u;
        const int shift = 14 - exp;
        uint32_t h = m >> shift;
        const uint32_t rest = m & ((1u << shift) - 1), halfway = 1u << (shift - 1);
        if (rest > halfway || (rest == halfway && (h & 1)))
            h++;
        return (uint16_t)(sign | h);
    }
    uint32_t h = ((uint32_t)exp << 10) | (mant >> 13);
    const uint32_t rest = mant & 0x1FFFu;
    if (rest > 0x1000u || (rest == 0x1000u && (h & 1))) /* a carry may raise the exponent: still right */
        h++;
    return (uint16_t)(sign | h);
}

/* Weight w as a half that keeps w's side of one half, which the report
 * counts at (measures_weight_text): rounded to the nearest half, a weight
 * just off 0.5 becomes 0.5 itself (0.49992 does) and the page would read
 * it as "0.50"; it is stored one step away instead (0.49976 or 0.50049). */
static uint16_t half_of_weight(float w)
{
    const float at = (float)MEASURES_SHOWN_SHARE;
    const uint16_t h = half_of(w);
    if (w == at || h != half_of(at))
        return h;
    return (uint16_t)(w < at ? h - 1 : h + 1);
}

/* The maps' bytes, before base64: room for all of them is taken at once
 * (their size is known from the shape). */
typedef struct {
    unsigned char *p;
    size_t n;
} Bytes;

static void bytes_put(Bytes *b, unsigned char byte) { b->p[b->n++] = byte; }

static void bytes_put16(Bytes *b, uint16_t v)
{
    bytes_put(b, (unsigned char)(v & 0xFF)); /* little-endian */
    bytes_put(b, (unsigned char)(v >> 8));
}

static const char BASE64_DIGITS[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";

/* The n bytes at p into f as base64, '=' padding the last group. */
static void base64_write(FILE *f, const unsigned char *p, size_t n)
{
    for (size_t at = 0; at < n; at += 3) {
        const size_t k = n - at < 3 ? n - at : 3; /* the bytes of this group */
        const unsigned v = (unsigned)p[at] << 16 | (k > 1 ? (unsigned)p[at + 1] << 8 : 0) | (k > 2 ? p[at + 2] : 0);
        const char out[4] = {BASE64_DIGITS[v >> 18], BASE64_DIGITS[(v >> 12) & 63],
                             k > 1 ? BASE64_DIGITS[(v >> 6) & 63] : '=', k > 2 ? BASE64_DIGITS[v & 63] : '='};
        fwrite(out, 1, 4, f);
    }
}

static size_t base64_len(size_t bytes) { return (bytes + 2) / 3 * 4; }

/* JSON text as the page embeds it: '<', '>', '&', U+2028 and U+2029 (which
 * cJSON leaves as they are) as \u escapes. They can only occur inside
 * strings, so the text means the same to a JSON parser, and no token can
 * end the script element or begin a comment in it. Returns the bytes
 * written (or that would be, with f NULL). */
static size_t json_for_html(FILE *f, const char *s)
{
    size_t n = 0;
    for (const char *p = s; *p; p++) {
        const char *esc = NULL;
        if (*p == '<')
            esc = "\\u003c";
        else if (*p == '>')
            esc = "\\u003e";
        else if (*p == '&')
            esc = "\\u0026";
        else if ((unsigned char)p[0] == 0xE2 && (unsigned char)p[1] == 0x80 &&
                 ((unsigned char)p[2] == 0xA8 || (unsigned char)p[2] == 0xA9)) {
            esc = (unsigned char)p[2] == 0xA8 ? "\\u2028" : "\\u2029";
            p += 2;
        }
        if (esc) {
            n += 6;
            if (f)
                fputs(esc, f);
        } else {
            n++;
            if (f)
                fputc(*p, f);
        }
    }
    return n;
}

/* ------------------------------------------------------------ the maps */

/* Keys query i may see. */
static int visible(const MhaConfig *c, int i) { return mha_visible_keys(c->causal, i, c->T); }


/* Map p of variant v (p < n_heads: a head; p = n_heads: the wide head):
 * its softmax weights and scores, (T, T) each. */
static const float *map_att(const Variant *v, int p)
{
    const MhaConfig *c = &v->in.cfg;
    return p < c->n_heads ? v->multi.att + (size_t)p * c->T * c->T : v->single.att;
}

static const float *map_scores(const Variant *v, int p)
{
    const MhaConfig *c = &v->in.cfg;
    return p < c->n_heads ? v->multi.scores + (size_t)p * c->T * c->T : v->single.scores;
}

/* Every visible cell of every map of variant v, map by map (the heads,
 * then the wide head): the weights row by row, then the scores. */
static void write_full(Bytes *b, const Variant *v)
{
    const MhaConfig *c = &v->in.cfg;
    for (int p = 0; p <= c->n_heads; p++)
        for (int which = 0; which < 2; which++) {
            const float *m = which ? map_scores(v, p) : map_att(v, p); /* (T, T) */
            for (int i = 0; i < c->T; i++)
                for (int j = 0; j < visible(c, i); j++) {
                    const float x = m[(size_t)i * c->T + j];
                    bytes_put16(b, which ? half_of(x) : half_of_weight(x));
                }
        }
}

/* One map's summary: its thumbnail (thumb, thumb), each pixel the largest
 * weight among its cells times 254, THUMB_MASKED when they are all masked;
 * then for each row its top_k keys by weight (ties: the lower key), as
 * three arrays of top_k: the keys (uint16, 0xFFFF past the row's keys), their
 * weights and their scores (float16). */
static void write_summary_map(Bytes *b, const MhaConfig *c, const float *att, const float *scores, int thumb,
                              int top_k)
{
    const int T = c->T;
    for (int a = 0; a < thumb; a++)
        for (int bx = 0; bx < thumb; bx++) {
            const int i0 = (int)((long)a * T / thumb), i1 = (int)((long)(a + 1) * T / thumb);
            const int j0 = (int)((long)bx * T / thumb), j1 = (int)((long)(bx + 1) * T / thumb);
            float top = -1.0f;
            for (int i = i0; i < i1; i++)
                for (int j = j0; j < j1 && j < visible(c, i); j++)
                    if (att[(size_t)i * T + j] > top)
                        top = att[(size_t)i * T + j];
            bytes_put(b, top < 0.0f ? THUMB_MASKED : (unsigned char)lrintf(254.0f * top));
        }
    int keys[8]; /* the row's top_k keys so far, largest weight first (top_k <= 8: SUMMARY_LEVELS) */
    for (int i = 0; i < T; i++) {
        const float *row = att + (size_t)i * T;
        int got = 0;
        for (int j = 0; j < visible(c, i); j++) { /* insertion into the top_k so far */
            int at = got < top_k ? got++ : top_k;
            while (at > 0 && row[j] > row[keys[at - 1]]) {
                if (at < top_k)
                    keys[at] = keys[at - 1];
                at--;
            }
            if (at < top_k)
                keys[at] = j;
        }
        for (int r = 0; r < top_k; r++)
            bytes_put16(b, r < got ? (uint16_t)keys[r] : 0xFFFF);
        for (int r = 0; r < top_k; r++)
            bytes_put16(b, half_of_weight(r < got ? row[keys[r]] : 0.0f));
        for (int r = 0; r < top_k; r++)
            bytes_put16(b, half_of(r < got ? scores[(size_t)i * T + keys[r]] : 0.0f));
    }
}

/* The bytes of one variant's maps: every visible cell, or summaries. */
static size_t full_bytes(const MhaConfig *c)
{
    return ((size_t)c->n_heads + 1) * (size_t)mha_visible_pairs(c->causal, c->T) * 2 * sizeof(uint16_t);
}

static size_t summary_bytes(const MhaConfig *c, int thumb, int top_k)
{
    return ((size_t)c->n_heads + 1) * ((size_t)thumb * thumb + (size_t)c->T * top_k * 3 * sizeof(uint16_t));
}

/* ------------------------------------------------------------ the facts */

/* cJSON's adders leave an item out when memory runs out (and return NULL):
 * an object or array holding fewer items than were put in ran out. */
static int holds(const cJSON *o, int n) { return o && cJSON_GetArraySize(o) == n; }

/* o when it holds n items, else NULL, o freed. */
static cJSON *whole(cJSON *o, int n)
{
    if (holds(o, n))
        return o;
    cJSON_Delete(o);
    return NULL;
}

static cJSON *cost_row(const CostRow *r)
{
    cJSON *o = cJSON_CreateObject();
    int64_t v[COST_ROW_FIELDS];
    report_cost_row_values(r, v);
    for (int k = 0; k < COST_ROW_FIELDS; k++)
        cJSON_AddNumberToObject(o, report_cost_row_keys[k], (double)v[k]);
    return whole(o, COST_ROW_FIELDS);
}

/* Map m's facts as the report states them: role, sentence, each pattern's
 * share, even share and rows; and where the colours of its scores (T, T)
 * end, as the score PNGs' (render_scores_end). who names it in the sentence. */
static cJSON *map_facts(const MapMeasures *m, const char *who, char *const *tokens, int T, const float *scores,
                        int causal)
{
    char sentence[512];
    report_sentence(sentence, sizeof sentence, who, m, tokens, T);
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "role", measures_role_name(m->role));
    cJSON_AddStringToObject(o, "sentence", sentence);
    cJSON_AddNumberToObject(o, "entropy_norm", measures_is_null(m->entropy_norm) ? -1.0 : m->entropy_norm);
    cJSON *pats = cJSON_AddObjectToObject(o, "patterns");
    for (int r = 0; r < MEASURES_N_PATTERNS; r++) {
        /* [share, even share, rows that show it, rows where it could] */
        const double four[4] = {measures_is_null(m->pattern[r]) ? -1.0 : m->pattern[r],
                                measures_is_null(m->even[r]) ? -1.0 : m->even[r], m->shown[r], m->rows[r]};
        cJSON_AddItemToObject(pats, measures_role_name((MeasuresRole)r), cJSON_CreateDoubleArray(four, 4));
    }
    cJSON_AddNumberToObject(o, "fixed_key", m->fixed_key);
    int clipped;
    cJSON_AddNumberToObject(o, "scores_end", render_scores_end(scores, T, causal, &clipped));
    cJSON_AddBoolToObject(o, "scores_clipped", clipped);
    cJSON_AddItemToObject(o, "split", cJSON_CreateIntArray(m->split, 2)); /* split's two patterns, else -1 */
    return whole(o, holds(pats, MEASURES_N_PATTERNS) ? 8 : -1);
}

/* Bytes of a token as the sentences show it (token_text). */
#define PAGE_TOKEN_BYTES 256

/* The page holds every row's contests while they are at most this many
 * numbers (T x n_heads x n_heads at most, for each layer of a model's
 * page): a class's sentences hold a few thousand; a layer of 2 048 tokens
 * and 32 heads would add 2 M numbers, over the page's cap; 16 layers of 32
 * heads over 64 tokens 1 M, 6 MB of the page's facts. */
#define PAGE_CONTEST_NUMBERS 65536

/* Whether a page of `layers` layers (1 for one layer's K/V variants) shaped c shows them. */
static int contests_shown(const MhaConfig *c, int layers)
{
    return (size_t)layers * c->T * c->n_heads * c->n_heads <= PAGE_CONTEST_NUMBERS;
}

/* Row i's contests (pull.h) as [key, over, margin, tie, [each head's part]]
 * and their sentences (contest_text): which heads carried the wide head's
 * choice and which lost it. Empty for a head trained on its own. */
static int contest_facts(const Variant *v, int i, cJSON *row, int *keys, double *contrib, int contests)
{
    const PullLayer *p = &v->pulls;
    const MhaConfig *c = &v->in.cfg;
    cJSON *list = cJSON_AddArrayToObject(row, "contests");
    cJSON *texts = cJSON_AddArrayToObject(row, "contest_sentences");
    /* a page too large for them (report.json has them all): none, said by "contests_shown" */
    const int m = p->identity && contests ? pull_contested(p, i, keys) : 0;
    char sentence[1536], shown[2][PAGE_TOKEN_BYTES + 2], named[2][PAGE_TOKEN_BYTES + 16], tok[PAGE_TOKEN_BYTES];
    for (int k = 0; k < m; k++) {
        PullContest ct;
        pull_contest(c, v->multi.scores, v->single.scores, v->single.att, i, p->rows[i].wide_top, keys[k], contrib,
                     &ct);
        const int pair[2] = {ct.key, ct.other};
        for (int e = 0; e < 2; e++) {
            snprintf(shown[e], sizeof shown[e], "'%s'", token_text(tok, sizeof tok, v->in.tokens[pair[e]]));
            contest_key(named[e], sizeof named[e], shown[e], v->in.tokens, p->rows[i].n_keys, pair[e]);
        }
        cJSON *one = cJSON_CreateObject();
        cJSON_AddNumberToObject(one, "key", ct.key);
        cJSON_AddNumberToObject(one, "over", ct.other);
        cJSON_AddNumberToObject(one, "margin", ct.margin);
        cJSON_AddBoolToObject(one, "tie", ct.tie);
        cJSON_AddItemToObject(one, "contributions", cJSON_CreateDoubleArray(contrib, c->n_heads));
        cJSON_AddItemToArray(list, whole(one, 5));
        cJSON_AddItemToArray(texts, cJSON_CreateString(contest_text(sentence, sizeof sentence, &ct, c->n_heads,
                                                                    named[0], named[1])));
    }
    return holds(list, m) && holds(texts, m);
}

/* The heads' relations the wide head kept, halved and lost (kept.h), with
 * the thresholds, and the share lost against random layers as sharp as
 * the heads (chance.h): [lo, hi] and the side (-1, 0, 1), or null when
 * there is no fair baseline. */
static cJSON *kept_facts(const Variant *v)
{
    const KeptLayer k = v->summary.kept; /* a view: the summary owns its arrays */
    cJSON *o = cJSON_CreateObject();
    cJSON_AddNumberToObject(o, "kept_at_least", MEASURES_SHOWN_SHARE);
    cJSON_AddNumberToObject(o, "halved_at_least", KEPT_HALVED_AT_LEAST);
    cJSON_AddNumberToObject(o, "rows", k.rows);
    for (int e = 0; e < 3; e++)
        cJSON_AddNumberToObject(o, kept_verdict_name((KeptVerdict)e), k.verdict[e]);
    cJSON *rels = cJSON_AddArrayToObject(o, "relations");
    for (int r = 0; r < k.n_relations; r++) {
        const KeptRelation *kr = &k.relations[r];
        cJSON *one = cJSON_CreateObject();
        cJSON_AddStringToObject(one, "relation", measures_role_name((MeasuresRole)kr->relation));
        cJSON_AddNumberToObject(one, "fixed_key", kr->fixed_key);
        cJSON_AddBoolToObject(one, "is_role", kr->is_role);
        cJSON *heads = cJSON_AddArrayToObject(one, "heads");
        for (int h = 0; h < k.n_heads; h++)
            if (k.heads[h].of == r)
                cJSON_AddItemToArray(heads, cJSON_CreateNumber(h));
        cJSON_AddNumberToObject(one, "rows", kr->rows);
        for (int e = 0; e < 3; e++)
            cJSON_AddNumberToObject(one, kept_verdict_name((KeptVerdict)e), kr->verdict[e]);
        cJSON_AddNumberToObject(one, "mean_share", kr->rows ? kr->share_sum / kr->rows : -1.0);
        cJSON_AddItemToArray(rels, whole(one, 9));
    }
    const ChanceRange *rl = &v->chance.r[CHANCE_LOST_SHARE];
    if (v->chance.sharp_draws > 0 && rl->n >= CHANCE_MIN_DRAWS && k.rows > 0) {
        cJSON *ch = cJSON_AddObjectToObject(o, "lost_share_chance");
        const double here = (double)k.verdict[KEPT_LOST] / k.rows;
        cJSON_AddNumberToObject(ch, "draws", v->chance.sharp_draws);
        cJSON_AddNumberToObject(ch, "sharp_target_entropy_norm", v->chance.sharp_target);
        cJSON_AddNumberToObject(ch, "lo", rl->lo);
        cJSON_AddNumberToObject(ch, "hi", rl->hi);
        cJSON_AddNumberToObject(ch, "here", here);
        cJSON_AddNumberToObject(ch, "side", chance_side(rl, here));
    } else {
        cJSON_AddNullToObject(o, "lost_share_chance"); /* no fair baseline: no verdict */
    }
    return whole(o, holds(rels, k.n_relations) ? 8 : -1);
}

/* shown (T): the tokens as the captions show them (token_text). */
static cJSON *pull_facts(const Variant *v, char *const *shown, int contests)
{
    const PullLayer *p = &v->pulls;
    const MhaConfig *c = &v->in.cfg;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddBoolToObject(o, "identity", p->identity);
    cJSON_AddNumberToObject(o, "default_query", p->default_query);
    cJSON_AddNumberToObject(o, "query", v->query);
    cJSON_AddNumberToObject(o, "tie_weight_below", PULL_TIE_WEIGHT);
    cJSON_AddNumberToObject(o, "tie_margin_relative", PULL_TIE_REL);
    cJSON_AddBoolToObject(o, "contests_shown", p->identity && contests);
    cJSON *rows = cJSON_AddArrayToObject(o, "rows");
    char caption[2048];
    int *keys = malloc((size_t)c->n_heads * sizeof *keys);         /* (n_heads) a row's contested keys */
    double *contrib = malloc((size_t)c->n_heads * sizeof *contrib); /* (n_heads) one contest's parts */
    int all = keys && contrib;
    for (int i = 0; i < c->T && all; i++) {
        const PullRow *r = &p->rows[i];
        cJSON *row = cJSON_CreateObject();
        cJSON_AddStringToObject(row, "outcome", pull_outcome_name(r->outcome));
        cJSON_AddItemToObject(row, "head_top_keys", cJSON_CreateIntArray(p->top + (size_t)i * c->n_heads, c->n_heads));
        cJSON *pulls = cJSON_AddArrayToObject(row, "head_pulls"); /* a caption names only these heads */
        for (int h = 0; h < c->n_heads; h++)
            cJSON_AddItemToArray(pulls, cJSON_CreateBool(p->pulls[(size_t)i * c->n_heads + h]));
        all &= holds(pulls, c->n_heads);
        cJSON_AddNumberToObject(row, "wide_top_key", r->wide_top);
        cJSON_AddNumberToObject(row, "wide_top_weight", r->wide_top_att);
        cJSON_AddNumberToObject(row, "runner_up_key", r->runner_up);
        cJSON_AddNumberToObject(row, "runner_up_weight", r->runner_up_att);
        pull_caption(caption, sizeof caption, p, i, shown, v->single.att);
        cJSON_AddStringToObject(row, "caption", caption);
        all &= contest_facts(v, i, row, keys, contrib, contests);
        cJSON_AddItemToArray(rows, whole(row, 10));
    }
    free(keys), free(contrib);
    return whole(o, all && holds(rows, c->T) ? 7 : -1);
}

/* contests: whether the page shows each row's contests (contests_shown). */
static cJSON *variant_facts(const Variant *v, char *const *shown, int contests)
{
    const MhaConfig *c = &v->in.cfg;
    char name[32], who[32];
    cJSON *o = cJSON_CreateObject();
    variant_name(name, sizeof name, c->n_heads, c->n_kv_heads);
    cJSON_AddStringToObject(o, "name", name);
    cJSON_AddNumberToObject(o, "n_kv_heads", c->n_kv_heads);
    cJSON_AddStringToObject(o, "note", v->note);
    if (v->pooled_from) /* pooled from the input's K/V heads, before uptraining */
        cJSON_AddBoolToObject(o, "pooled", 1);
    cJSON *heads = cJSON_AddArrayToObject(o, "heads");
    for (int h = 0; h < c->n_heads; h++) {
        snprintf(who, sizeof who, "head %d", h);
        cJSON *head = map_facts(&v->measures[h], who, v->in.tokens, c->T, map_scores(v, h), c->causal);
        cJSON_AddNumberToObject(head, "kv_head", v->kv_of[h]);
        cJSON_AddItemToArray(heads, whole(head, 9));
    }
    cJSON *wide = map_facts(&v->measures[c->n_heads], rival_name(v->in.has_single)->the, v->in.tokens, c->T,
                            map_scores(v, c->n_heads), c->causal);
    cJSON_AddStringToObject(wide, "source", v->in.has_single ? "input" : "same projections");
    cJSON_AddItemToObject(o, "wide", whole(wide, 9));
    cJSON_AddItemToObject(o, "pulls", pull_facts(v, shown, contests));
    cJSON_AddItemToObject(o, "kept", kept_facts(v));

    const CostTable t = v->summary.cost;
    cJSON *cost = cJSON_AddObjectToObject(o, "cost");
    cJSON_AddNumberToObject(cost, "visible_pairs", (double)t.pairs);
    cJSON_AddBoolToObject(cost, "biases_counted", v->in.w.has_bias);
    cJSON_AddItemToObject(cost, "input", cost_row(&t.input));
    cJSON_AddItemToObject(cost, "mha", cost_row(&t.mha));
    cJSON_AddItemToObject(cost, "gqa", t.n_gqa ? cost_row(&t.gqa[0]) : cJSON_CreateNull()); /* the largest GQA */
    cJSON_AddItemToObject(cost, "mqa", cost_row(&t.mqa));
    cJSON_AddItemToObject(cost, "single_head", cost_row(&t.wide));
    return whole(o, holds(heads, c->n_heads) && holds(cost, 7) ? 8 + (v->pooled_from != 0) : -1);
}

/* The input's models trained by K/V heads (report_parts.h, report_trained_row):
 * name, K/V heads, K/V cache bytes per token (kv_bytes, LayerSummary's
 * trained_kv_bytes), mean held-out loss. */
static cJSON *trained_facts(const Training *t, const MhaConfig *c, const int64_t *kv_bytes)
{
    char name[16];
    cJSON *a = cJSON_CreateArray();
    for (int r = 0; r <= t->n_kv_losses; r++) {
        int kv;
        double mean;
        report_trained_row(t, c, r, name, sizeof name, &kv, &mean);
        cJSON *m = cJSON_CreateObject();
        cJSON_AddStringToObject(m, "name", name);
        cJSON_AddNumberToObject(m, "n_kv_heads", kv);
        cJSON_AddNumberToObject(m, "kv_cache_bytes_per_token", (double)kv_bytes[r]);
        cJSON_AddNumberToObject(m, "mean_loss", mean);
        cJSON_AddItemToArray(a, whole(m, 4));
    }
    return holds(a, t->n_kv_losses + 1) ? a : (cJSON_Delete(a), NULL);
}

/* The colour map as 256 "rrggbb" strings' worth of hex: 1536 digits. */
static cJSON *cmap_hex(DrawCmap cmap, int entries)
{
    char *hex = malloc((size_t)entries * 6 + 1);
    if (!hex)
        return NULL;
    for (int e = 0; e < entries; e++)
        snprintf(hex + e * 6, 7, "%02x%02x%02x", cmap[e][0], cmap[e][1], cmap[e][2]);
    cJSON *s = cJSON_CreateString(hex);
    free(hex);
    return s;
}

/* The map sides (CSS px) the page lays its maps out at, and the sides of
 * presenter mode's one map: for each, C plans the token labels by the
 * pictures' one rule (labels.h), at line heights up to the given px. The
 * page takes the largest side that is not larger than its map. */
static const int PAGE_MAP_SIDES[] = {64, 80, 96, 128, 160, 192, 224, 256, 288, 320, 352, 384, 448, 512};
static const int PRESENTER_SIDES[] = {360, 420, 480, 560, 640, 720, 800, 880, 960};
#define PAGE_LABEL_PX 16.0f      /* the maps' labels: from LABELS_MIN_PX (14) to this */
#define PRESENTER_LABEL_PX 28.0f /* presenter mode's, read from the back of the room */
#define N_SIDES(a) (int)(sizeof a / sizeof a[0])

/* For each side of sides (n): {side, px, note, shown: the tokens
 * labelled, at: each one's centre along the axis, px from its start}. */
static cJSON *label_plans(char *const *tokens, int T, const int *sides, int n, float max_px)
{
    unsigned char *shown = malloc((size_t)T); // (T) 0: no label, else 1 + its level
    float *centre = malloc((size_t)T * sizeof *centre); // (T) each label's centre, px along the axis
    int *index = malloc((size_t)T * sizeof *index);     // (T) the labelled tokens, in order
    double *at = malloc((size_t)T * sizeof *at);        // (T) their centres
    cJSON *plans = cJSON_CreateArray();
    if (!shown || !centre || !index || !at)
        n = -1; /* whole() below frees the array */
    for (int k = 0; k < n; k++) {
        const LabelsPlan p = labels_plan(T, tokens, -1, (float)sides[k] / (float)T, max_px, 1, shown, centre);
        char note[160];
        labels_note(&p, note, sizeof note);
        int m = 0;
        for (int t = 0; t < T; t++)
            if (shown[t]) {
                index[m] = t;
                at[m++] = round(10.0 * centre[t]) / 10.0;
            }
        cJSON *o = cJSON_CreateObject();
        cJSON_AddNumberToObject(o, "side", sides[k]);
        cJSON_AddNumberToObject(o, "px", p.px);
        cJSON_AddStringToObject(o, "note", note);
        cJSON_AddItemToObject(o, "shown", cJSON_CreateIntArray(index, m));
        cJSON_AddItemToObject(o, "at", cJSON_CreateDoubleArray(at, m));
        cJSON_AddItemToArray(plans, whole(o, 5));
    }
    free(shown);
    free(centre);
    free(index);
    free(at);
    return whole(plans, n);
}

/* The words and thresholds the page and its quiz speak with, from the one
 * place C keeps each: the comparison head's names and whether it is built
 * from the heads (then its scores are theirs added up), each role in words,
 * the share a row's key must hold, the clear margin. */
static cJSON *words_facts(int trained)
{
    const RivalName *r = rival_name(trained);
    cJSON *o = cJSON_CreateObject();
    cJSON *rival = cJSON_AddObjectToObject(o, "rival");
    cJSON_AddStringToObject(rival, "the", r->the);
    cJSON_AddStringToObject(rival, "title", r->title);
    cJSON_AddStringToObject(rival, "panel", r->panel);
    cJSON_AddStringToObject(rival, "top", r->top);
    cJSON_AddStringToObject(rival, "too", r->too);
    cJSON_AddBoolToObject(rival, "built_from_heads", !trained);
    cJSON *roles = cJSON_AddObjectToObject(o, "roles"), *patterns = cJSON_AddArrayToObject(o, "pattern_roles");
    for (int k = 0; k <= MEASURES_NONE; k++) {
        char words[96];
        cJSON_AddStringToObject(roles, measures_role_name((MeasuresRole)k),
                                report_role_words(words, sizeof words, (MeasuresRole)k));
        if (k < MEASURES_N_PATTERNS) /* a role that is a pattern of attention (the others: none found) */
            cJSON_AddItemToArray(patterns, cJSON_CreateString(measures_role_name((MeasuresRole)k)));
    }
    cJSON_AddNumberToObject(o, "shown_share", MEASURES_SHOWN_SHARE);
    cJSON_AddNumberToObject(o, "clear_margin", LESSON_PAGE_CLEAR_MARGIN);
    return whole(o, holds(rival, 6) && holds(roles, MEASURES_NONE + 1) && holds(patterns, MEASURES_N_PATTERNS) ? 5 : -1);
}

/* The input's training record (layer.h), or null. */
static cJSON *training_facts(const Training *t)
{
    if (t->n_seeds == 0)
        return cJSON_CreateNull();
    cJSON *o = cJSON_CreateObject();
    cJSON_AddItemToObject(o, "seeds", cJSON_CreateIntArray(t->seeds, t->n_seeds));
    cJSON_AddNumberToObject(o, "seed", t->seed);
    cJSON_AddNumberToObject(o, "steps", t->steps);
    cJSON_AddItemToObject(o, "loss_heads", cJSON_CreateDoubleArray(t->loss_heads, t->n_seeds));
    cJSON_AddItemToObject(o, "loss_single", cJSON_CreateDoubleArray(t->loss_single, t->n_seeds));
    return whole(o, 5);
}

/* The teacher's questions (--quiz), or an empty array. */
static cJSON *quiz_facts(const QuizFile *q)
{
    cJSON *list = cJSON_CreateArray();
    for (int i = 0; q && i < q->n; i++) {
        const QuizQuestion *x = &q->questions[i];
        cJSON *o = cJSON_CreateObject();
        cJSON_AddStringToObject(o, "question", x->question);
        cJSON *options = cJSON_AddArrayToObject(o, "options");
        cJSON_AddNumberToObject(o, "answer", x->answer);
        for (int m = 0; m < x->n_options; m++) {
            cJSON *opt = cJSON_CreateObject();
            cJSON_AddStringToObject(opt, "text", x->options[m].text);
            cJSON_AddStringToObject(opt, "explanation", x->options[m].explanation);
            cJSON_AddItemToArray(options, whole(opt, 2));
        }
        cJSON_AddItemToArray(list, whole(o, holds(options, x->n_options) ? 3 : -1));
    }
    return whole(list, q ? q->n : 0);
}

/* Each of the T tokens as the pictures and report.txt show it
 * (token_text): T pointers into one block, freed with free(); NULL when
 * memory runs out. */
static char **shown_tokens(char *const *tokens, int T)
{
    char **shown = malloc((size_t)T * (sizeof *shown + REPORT_TOKEN_BYTES)); // (T) pointers, then (T, REPORT_TOKEN_BYTES) texts
    if (!shown)
        return NULL;
    char *text = (char *)(shown + T);
    for (int t = 0; t < T; t++)
        shown[t] = token_text(text + (size_t)t * REPORT_TOKEN_BYTES, REPORT_TOKEN_BYTES, tokens[t]);
    return shown;
}

/* How many keys each query may see (mha_visible_keys). */
static cJSON *visible_keys(const MhaConfig *c)
{
    cJSON *a = cJSON_CreateArray();
    for (int i = 0; i < c->T; i++)
        cJSON_AddItemToArray(a, cJSON_CreateNumber(visible(c, i)));
    return whole(a, c->T);
}

/* The facts every variant (or layer) of the page shares, from the first
 * one, v: "maps" is filled when the page is written (maps_facts),
 * "variants" as they are added. */
static cJSON *page_facts(const Variant *v, const RenderColours *colours, const QuizFile *quiz)
{
    const MhaInput *in = &v->in;
    const MhaConfig *c = &in->cfg;
    char **shown = shown_tokens(in->tokens, c->T); // (T) the tokens as shown
    if (!shown)
        return NULL;
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "format", "mhaviz-lesson");
    cJSON_AddNumberToObject(o, "version", 1);
    cJSON_AddStringToObject(o, "title", in->title ? in->title : "");
    cJSON_AddItemToObject(o, "tokens", cJSON_CreateStringArray((const char *const *)in->tokens, c->T));
    cJSON_AddItemToObject(o, "token_labels", cJSON_CreateStringArray((const char *const *)shown, c->T));
    cJSON_AddItemToObject(o, "visible_keys", visible_keys(c));
    cJSON_AddItemToObject(o, "words", words_facts(in->has_single));
    cJSON *labels = cJSON_AddObjectToObject(o, "labels");
    cJSON_AddItemToObject(labels, "maps", label_plans(in->tokens, c->T, PAGE_MAP_SIDES, N_SIDES(PAGE_MAP_SIDES),
                                                      PAGE_LABEL_PX));
    cJSON_AddItemToObject(labels, "presenter", label_plans(in->tokens, c->T, PRESENTER_SIDES,
                                                           N_SIDES(PRESENTER_SIDES), PRESENTER_LABEL_PX));
    cJSON_AddItemToObject(o, "training", training_facts(&in->training));
    cJSON_AddItemToObject(o, "teacher_questions", quiz_facts(quiz));
    cJSON_AddNumberToObject(o, "T", c->T);
    cJSON_AddNumberToObject(o, "d_model", c->d_model);
    cJSON_AddNumberToObject(o, "n_heads", c->n_heads);
    cJSON_AddNumberToObject(o, "head_dim", c->head_dim);
    cJSON_AddBoolToObject(o, "causal", c->causal);
    cJSON_AddBoolToObject(o, "has_bias", in->w.has_bias);
    cJSON *cols = cJSON_AddObjectToObject(o, "colours");
    cJSON_AddStringToObject(cols, "name", colours->name);
    cJSON_AddItemToObject(cols, "weights", cmap_hex(colours->cmap, 256));
    cJSON_AddItemToObject(cols, "scores", cmap_hex(draw_cmap("rdbu"), 128)); /* the blue half, as the PNGs */
    const int mask[3] = {colours->mask.r, colours->mask.g, colours->mask.b};
    const int scores_mask[3] = {colours->scores_mask.r, colours->scores_mask.g, colours->scores_mask.b};
    cJSON_AddItemToObject(cols, "mask", cJSON_CreateIntArray(mask, 3));
    cJSON_AddItemToObject(cols, "scores_mask", cJSON_CreateIntArray(scores_mask, 3));
    const int clipped[3] = {colours->scores_clipped.r, colours->scores_clipped.g, colours->scores_clipped.b};
    cJSON_AddItemToObject(cols, "scores_clipped", cJSON_CreateIntArray(clipped, 3));
    cJSON_AddObjectToObject(o, "maps");
    cJSON_AddArrayToObject(o, "variants");
    free(shown);
    return whole(o, holds(cols, 6) && holds(labels, 2) ? 19 : -1);
}

/* The facts' "maps": what the page embeds of them (e). */
static int maps_facts(cJSON *facts, const Embedding *e)
{
    cJSON *maps = cJSON_CreateObject();
    cJSON_AddStringToObject(maps, "mode", e->summary ? "summary" : "full");
    cJSON_AddNumberToObject(maps, "thumb", e->thumb);
    cJSON_AddNumberToObject(maps, "top_k", e->top_k);
    cJSON_AddNumberToObject(maps, "cap_bytes", (double)LESSON_PAGE_CAP_BYTES);
    return (maps = whole(maps, 4)) && cJSON_ReplaceItemInObjectCaseSensitive(facts, "maps", maps);
}

/* The facts of a run over several layers of a model (model.name; pred: its
 * prediction) for the page's grid: each role's colour and letter as
 * model_overview.png draws them, and when pred holds them each head's
 * effect on the prediction (layers: the model's layer of each of the n
 * layers of the page), with the colours they are shown in. */
static cJSON *model_facts(const LessonModel *model, const int *layers, int n, int n_heads)
{
    cJSON *o = cJSON_CreateObject();
    cJSON_AddStringToObject(o, "name", model->name);
    cJSON *roles = cJSON_AddObjectToObject(o, "roles");
    for (int k = 0; k <= MEASURES_NONE; k++) {
        DrawRgb col;
        const char *letter = model_overview_role((MeasuresRole)k, &col);
        cJSON *r = cJSON_CreateObject();
        cJSON_AddStringToObject(r, "letter", letter);
        const int rgb[3] = {col.r, col.g, col.b};
        cJSON_AddItemToObject(r, "colour", cJSON_CreateIntArray(rgb, 3));
        cJSON_AddItemToObject(roles, measures_role_name((MeasuresRole)k), whole(r, 2));
    }
    const ModelPrediction *pred = model->pred;
    if (!pred || !pred->effect || pred->n == 0) {
        cJSON_AddNullToObject(o, "effects");
        return whole(o, holds(roles, MEASURES_NONE + 1) ? 3 : -1);
    }
    /* the change in the top token's log-probability with the head off:
     * below 0, the prediction leans on the head */
    cJSON *eff = cJSON_AddObjectToObject(o, "effects");
    char tok[PAGE_TOKEN_BYTES];
    cJSON_AddStringToObject(eff, "top_token", token_text(tok, sizeof tok, pred->text[0]));
    cJSON *heads = cJSON_AddArrayToObject(eff, "heads"); /* (n, n_heads), in the page's layers' order */
    double end = 0.0;
    for (int k = 0; k < n; k++) {
        const double *e = pred->effect + (size_t)layers[k] * pred->n_heads; /* (n_heads) */
        for (int h = 0; h < n_heads; h++)
            end = fabs(e[h]) > end ? fabs(e[h]) : end;
        cJSON_AddItemToArray(heads, cJSON_CreateDoubleArray(e, n_heads));
    }
    cJSON_AddNumberToObject(eff, "end", end); /* the colour scale's ends: -end and end */
    cJSON_AddItemToObject(eff, "colours", cmap_hex(draw_cmap("rdbu"), 256)); /* -end (blue) .. end (red) */
    return whole(o, holds(roles, MEASURES_NONE + 1) && holds(heads, n) && holds(eff, 4) ? 3 : -1);
}

/* ------------------------------------------------------------ the page */

/* The first s in [at, end), or NULL (the built-in files end with no NUL). */
static const char *find(const char *at, const char *end, const char *s)
{
    const size_t n = strlen(s);
    for (; at + n <= end; at++)
        if (memcmp(at, s, n) == 0)
            return at;
    return NULL;
}

/* The template's text from *at up to the marker "<!-- mhaviz:NAME -->"
 * into f; *at moves past the marker. A missing marker writes the rest. */
static void copy_to_marker(FILE *f, const char **at, const char *end, const char *name)
{
    char marker[64];
    snprintf(marker, sizeof marker, "<!-- mhaviz:%s -->", name);
    const char *m = find(*at, end, marker);
    const char *stop = m ? m : end;
    fwrite(*at, 1, (size_t)(stop - *at), f);
    *at = m ? m + strlen(marker) : end;
}

/* The maps at each embedding the page may choose: every visible cell, then
 * each of SUMMARY_LEVELS. */
#define N_EMBEDDINGS (1 + N_SUMMARY_LEVELS)

struct LessonPage {
    int n, added;                /* the variants (or layers) the page holds; those added so far */
    RenderColours colours;
    const QuizFile *quiz;
    cJSON *facts;                /* page_facts, its "variants" filled as they are added */
    cJSON *trained;              /* the input's models trained by K/V heads (a run of several variants), or NULL */
    int *layers;                 /* (n) the model's layer of each one added, -1: a variant of one layer */
    int n_heads, T;              /* every variant's */
    Embedding e[N_EMBEDDINGS];   /* each embedding's sizes, bytes for all n */
    Bytes maps[N_EMBEDDINGS];    /* each one's bytes so far; p NULL: over the cap on its own, never chosen */
};

LessonPage *lesson_page_begin(int n, const RenderColours *colours, const QuizFile *quiz)
{
    LessonPage *pg = calloc(1, sizeof *pg);
    if (!pg || !(pg->layers = malloc((size_t)n * sizeof *pg->layers))) {
        free(pg);
        return NULL;
    }
    pg->n = n;
    pg->colours = *colours;
    pg->quiz = quiz;
    return pg;
}

/* The first variant v sets the page's shape, its shared facts and the room
 * for the maps of every embedding that could fit under the cap (the last,
 * smallest, always: it is chosen when none fits). */
static int page_start(LessonPage *pg, const Variant *v)
{
    const MhaConfig *c = &v->in.cfg;
    pg->n_heads = c->n_heads;
    pg->T = c->T;
    if (!(pg->facts = page_facts(v, &pg->colours, pg->quiz)))
        return MHAVIZ_ENOMEM;
    if (pg->n > 1 && v->in.training.n_kv_losses > 0 &&
        !(pg->trained = trained_facts(&v->in.training, c, v->summary.trained_kv_bytes)))
        return MHAVIZ_ENOMEM; /* beside the pooled variants */
    for (int k = 0; k < N_EMBEDDINGS; k++) {
        Embedding *e = &pg->e[k];
        if (k == 0) {
            *e = (Embedding){0, 0, 0, (size_t)pg->n * full_bytes(c)};
        } else {
            const int thumb = SUMMARY_LEVELS[k - 1].thumb, top_k = SUMMARY_LEVELS[k - 1].top_k;
            *e = (Embedding){1, c->T < thumb ? c->T : thumb, top_k, 0};
            e->bytes = (size_t)pg->n * summary_bytes(c, e->thumb, top_k);
        }
        if ((base64_len(e->bytes) <= LESSON_PAGE_CAP_BYTES || k == N_EMBEDDINGS - 1) &&
            !(pg->maps[k].p = malloc(e->bytes ? e->bytes : 1)))
            return MHAVIZ_ENOMEM;
    }
    return MHAVIZ_OK;
}

int lesson_page_add(LessonPage *pg, const Variant *v, int layer, char *err, size_t errlen)
{
    const MhaConfig *c = &v->in.cfg;
    int rc = MHAVIZ_OK;
    if (pg->added == 0)
        rc = page_start(pg, v);
    else if (c->n_heads != pg->n_heads || c->T != pg->T) {
        snprintf(err, errlen, OUTDIR_LESSON_PAGE ": a variant of %d heads over %d tokens beside %d heads over %d tokens",
                 c->n_heads, c->T, pg->n_heads, pg->T);
        return MHAVIZ_EINPUT;
    }
    if (rc == MHAVIZ_OK && pg->added == pg->n) {
        snprintf(err, errlen, OUTDIR_LESSON_PAGE ": more than the %d variants it was begun for", pg->n);
        return MHAVIZ_EINPUT;
    }
    char **shown = rc == MHAVIZ_OK ? shown_tokens(v->in.tokens, c->T) : NULL; // (T) the tokens as shown
    cJSON *vars = cJSON_GetObjectItemCaseSensitive(pg->facts, "variants");
    cJSON *facts = shown ? variant_facts(v, shown, contests_shown(c, layer >= 0 ? pg->n : 1)) : NULL;
    free(shown);
    if (facts && layer >= 0 && !cJSON_AddNumberToObject(facts, "layer", layer)) {
        cJSON_Delete(facts);
        facts = NULL;
    }
    if (!facts || !cJSON_AddItemToArray(vars, facts)) {
        cJSON_Delete(facts);
        snprintf(err, errlen, "out of memory");
        return MHAVIZ_ENOMEM;
    }
    pg->layers[pg->added++] = layer;
    for (int k = 0; k < N_EMBEDDINGS; k++) {
        if (!pg->maps[k].p)
            continue;
        if (!pg->e[k].summary)
            write_full(&pg->maps[k], v);
        else
            for (int p = 0; p <= c->n_heads; p++)
                write_summary_map(&pg->maps[k], c, map_att(v, p), map_scores(v, p), pg->e[k].thumb, pg->e[k].top_k);
    }
    return MHAVIZ_OK;
}

int lesson_page_finish(LessonPage *pg, const char *path, const LessonModel *model, char *err, size_t errlen)
{
    int rc = MHAVIZ_ENOMEM;
    char *facts = NULL;
    FILE *f = NULL;
    const size_t code = assets_lesson_lesson_html_len + assets_lesson_lesson_css_len +
                        assets_lesson_lesson_js_len + assets_lesson_quiz_js_len;
    if (pg->added != pg->n) {
        snprintf(err, errlen, OUTDIR_LESSON_PAGE ": %d of its %d variants added", pg->added, pg->n);
        return MHAVIZ_EINPUT;
    }
    if (pg->trained) {
        cJSON_AddItemToObject(pg->facts, "trained", pg->trained);
        pg->trained = NULL; /* the facts own it */
    }
    if (model) {
        cJSON *m = model_facts(model, pg->layers, pg->n, pg->n_heads);
        if (!m || !cJSON_AddItemToObject(pg->facts, "model", m) ||
            !cJSON_ReplaceItemInObjectCaseSensitive(pg->facts, "title", cJSON_CreateString(model->name)))
            goto cleanup;
    }

    /* Every visible cell when the page stays under the cap, else the
     * largest summary that does (the smallest when none does). */
    int k = 0;
    for (; k < N_EMBEDDINGS; k++) {
        if (!pg->maps[k].p)
            continue;
        free(facts);
        if (!maps_facts(pg->facts, &pg->e[k]) || !(facts = cJSON_PrintUnformatted(pg->facts)))
            goto cleanup;
        if (code + json_for_html(NULL, facts) + base64_len(pg->e[k].bytes) <= LESSON_PAGE_CAP_BYTES ||
            k == N_EMBEDDINGS - 1)
            break;
    }

    if (!(f = fopen(path, "wb"))) {
        snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
        rc = MHAVIZ_EIO;
        goto cleanup;
    }
    const char *at = (const char *)assets_lesson_lesson_html;
    const char *end = at + assets_lesson_lesson_html_len;
    copy_to_marker(f, &at, end, "style");
    fwrite(assets_lesson_lesson_css, 1, assets_lesson_lesson_css_len, f);
    copy_to_marker(f, &at, end, "facts");
    json_for_html(f, facts);
    copy_to_marker(f, &at, end, "maps");
    base64_write(f, pg->maps[k].p, pg->maps[k].n);
    copy_to_marker(f, &at, end, "script");
    fwrite(assets_lesson_lesson_js, 1, assets_lesson_lesson_js_len, f);
    fwrite(assets_lesson_quiz_js, 1, assets_lesson_quiz_js_len, f);
    fwrite(at, 1, (size_t)(end - at), f); /* the rest of the template */
    rc = MHAVIZ_OK;
cleanup:
    if (f) {
        const int failed = ferror(f);
        if ((fclose(f) != 0 || failed) && rc == MHAVIZ_OK) {
            snprintf(err, errlen, "%s: cannot write: %s", path, strerror(errno));
            rc = MHAVIZ_EIO;
        }
    }
    if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "out of memory");
    free(facts);
    return rc;
}

void lesson_page_free(LessonPage *pg)
{
    if (!pg)
        return;
    cJSON_Delete(pg->facts);
    cJSON_Delete(pg->trained);
    for (int k = 0; k < N_EMBEDDINGS; k++)
        free(pg->maps[k].p);
    free(pg->layers);
    free(pg);
}

int lesson_page_write(const char *path, const Variant *v, int n, const RenderColours *colours,
                      const QuizFile *quiz, char *err, size_t errlen)
{
    LessonPage *pg = lesson_page_begin(n, colours, quiz);
    int rc = pg ? MHAVIZ_OK : MHAVIZ_ENOMEM;
    for (int k = 0; k < n && rc == MHAVIZ_OK; k++)
        rc = lesson_page_add(pg, &v[k], -1, err, errlen);
    if (rc == MHAVIZ_OK)
        rc = lesson_page_finish(pg, path, NULL, err, errlen);
    else if (rc == MHAVIZ_ENOMEM)
        snprintf(err, errlen, "out of memory");
    lesson_page_free(pg);
    return rc;
}
