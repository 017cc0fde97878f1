/* report_json.c — report.json: every number of the run, the maps inline
 * or as .npy files beside it. */
#include "report/report_parts.h"
#include "core/measures.h"
#include "core/status.h"
#include "io/npy.h"
#include "io/outdir.h"

#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ report.json */

/* A (rows, cols) matrix, as an array of rows (one row per line, every
 * float as "%.9g": enough digits to read back to the same bits), or as the
 * name of the .npy file `name` written beside report.json. */
static void json_matrix(FILE *f, Matrices *mx, const float *m, int rows, int cols, const char *name,
                        const char *indent)
{
    if (mx->npy) {
        if (mx->rc == MHAVIZ_OK) { /* after a failure, only report.json's text goes on (and is discarded) */
            size_t n = strlen(mx->dir) + strlen(name) + 2;
            char *path = malloc(n);
            if (path) {
                snprintf(path, n, "%s/%s", mx->dir, name);
                mx->rc = npy_write_floats(path, rows, cols, m, mx->err, mx->errlen);
            } else {
                snprintf(mx->err, mx->errlen, "out of memory");
                mx->rc = MHAVIZ_ENOMEM;
            }
            free(path);
        }
        json_string(f, name);
        return;
    }
    fputs("[\n", f);
    for (int i = 0; i < rows; i++) {
        const float *m_i = m + (size_t)i * cols; // (cols) row i
        fprintf(f, "%s[", indent);
        for (int j = 0; j < cols; j++) {
            if (j > 0)
                fputc(',', f);
            json_number(f, m_i[j]);
        }
        fputs(i + 1 < rows ? "],\n" : "]\n", f);
    }
    fprintf(f, "%.*s]", (int)strlen(indent) - 2, indent);
}

/* The per-map measures as "key": value pairs, each line starting with indent. */
static void json_measures(FILE *f, const MapMeasures *m, const char *indent)
{
    fprintf(f, "%s\"role\": \"%s\",\n", indent, measures_role_name(m->role));
    fprintf(f, "%s\"entropy_bits\": ", indent);
    json_number(f, m->entropy_bits);
    fprintf(f, ",\n%s\"entropy_norm\": ", indent);
    json_number(f, m->entropy_norm);
    fprintf(f, ",\n%s\"confidence\": ", indent);
    json_number(f, m->confidence);
    fprintf(f, ",\n%s\"mean_distance\": ", indent);
    json_number(f, m->mean_distance);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++) {
        fprintf(f, ",\n%s\"%s\": ", indent, measures_pattern_field((MeasuresRole)r));
        json_number(f, m->pattern[r]);
    }
    /* for each pattern: [rows that show it, rows where it could show] */
    fprintf(f, ",\n%s\"pattern_rows\": {", indent);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++)
        fprintf(f, "%s\"%s\": [%d, %d]", r ? ", " : "", measures_pattern_field((MeasuresRole)r), m->shown[r],
                m->rows[r]);
    /* for each pattern: the share spreading evenly would give */
    fprintf(f, "},\n%s\"pattern_even\": {", indent);
    for (int r = 0; r < MEASURES_N_PATTERNS; r++) {
        fprintf(f, "%s\"%s\": ", r ? ", " : "", measures_pattern_field((MeasuresRole)r));
        json_number(f, m->even[r]);
    }
    fprintf(f, "},\n%s\"fixed_token_key\": ", indent);
    if (m->fixed_key >= 0)
        fprintf(f, "%d", m->fixed_key);
    else
        fputs("null", f);
    fprintf(f, ",\n%s\"strongest_pattern\": ", indent);
    if (m->strongest >= 0)
        fprintf(f, "\"%s\"", measures_pattern_field((MeasuresRole)m->strongest));
    else
        fputs("null", f);
    fprintf(f, ",\n%s\"split_patterns\": ", indent); /* role "split": its two patterns, the larger first */
    if (m->role == MEASURES_SPLIT)
        fprintf(f, "[\"%s\", \"%s\"]", measures_pattern_field((MeasuresRole)m->split[0]),
                measures_pattern_field((MeasuresRole)m->split[1]));
    else
        fputs("null", f);
    fputs(",\n", f);
}

void report_json_range(FILE *f, const ChanceRange *r)
{
    if (r->n == 0) {
        fputs("null", f);
        return;
    }
    fprintf(f, "{\"n\": %d, \"lo\": ", r->n);
    json_number(f, r->lo);
    fputs(", \"hi\": ", f);
    json_number(f, r->hi);
    fputc('}', f);
}

const char *const report_cost_row_keys[COST_ROW_FIELDS] = {
    "n_heads", "n_kv_heads", "head_dim", "params", "mac_projections", "mac_scores", "mac_value_mix", "mac_total",
    "kv_cache_bytes_per_token"};

void report_cost_row_values(const CostRow *r, int64_t v[COST_ROW_FIELDS])
{
    const int64_t x[COST_ROW_FIELDS] = {r->n_heads,  r->n_kv_heads,    r->head_dim,  r->params,        r->mac_projections,
                                        r->mac_scores, r->mac_value_mix, r->mac_total, r->kv_cache_bytes};
    memcpy(v, x, sizeof x);
}

void report_json_cost_row(FILE *f, const char *key, const CostRow *r, int valid, int last)
{
    if (key)
        fprintf(f, "    \"%s\": ", key);
    else
        fputs("    ", f);
    if (!valid)
        fputs("null", f);
    else {
        int64_t v[COST_ROW_FIELDS];
        report_cost_row_values(r, v);
        for (int k = 0; k < COST_ROW_FIELDS; k++)
            fprintf(f, "%s\"%s\": %" PRId64, k ? ", " : "{", report_cost_row_keys[k], v[k]);
        fputc('}', f);
    }
    fputs(last ? "\n" : ",\n", f);
}

/* Row i's contests (pull.h): the wide head's margin between its top key
 * and each pulling head's favourite, split into the heads' parts; null
 * for a head trained on its own, which has no such split. */
static void json_contests(FILE *f, const ReportData *d, const PullLayer *p, int i)
{
    const MhaConfig *c = &d->in->cfg;
    const int H = p->n_heads;
    int *keys = malloc((size_t)H * sizeof *keys);         /* (n_heads) the contested keys */
    double *contrib = malloc((size_t)H * sizeof *contrib); /* (n_heads) one contest's parts */
    if (!p->identity || !keys || !contrib) { /* out of memory: no contests written, as for no split */
        fputs("null", f);
        free(keys), free(contrib);
        return;
    }
    const int m = pull_contested(p, i, keys);
    fputc('[', f);
    for (int k = 0; k < m; k++) {
        PullContest ct;
        pull_contest(c, d->multi->scores, d->single->scores, d->single->att, i, p->rows[i].wide_top, keys[k], contrib,
                     &ct);
        fprintf(f, "%s{\"key\": %d, \"over\": %d, \"margin\": ", k ? ", " : "", ct.key, ct.other);
        json_number(f, ct.margin);
        fprintf(f, ", \"tie\": %s, \"contributions\": [", ct.tie ? "true" : "false");
        for (int h = 0; h < H; h++) {
            fputs(h ? ", " : "", f);
            json_number(f, contrib[h]);
        }
        fputs("]}", f);
    }
    fputc(']', f);
    free(keys), free(contrib);
}

/* "pulls": how the wide head combines the heads' scores, row by row (pull.h). */
static void json_pulls(FILE *f, const ReportData *d, const PullLayer *p)
{
    fprintf(f, "  \"pulls\": {\n    \"identity\": %s,\n    \"identity_max_deviation\": ",
            p->identity ? "true" : "false");
    json_number(f, p->identity_max_dev);
    fputs(",\n    \"max_abs_wide_score\": ", f);
    json_number(f, p->max_abs_score);
    fprintf(f, ",\n    \"blur_at_most\": %g,\n    \"tie_weight_below\": %g,\n    \"tie_margin_relative\": %g,\n"
               "    \"default_query\": %d,\n    \"counts\": {", PULL_BLUR_AT_MOST, PULL_TIE_WEIGHT, PULL_TIE_REL,
            p->default_query);
    for (int o = 0; o < PULL_N_OUTCOMES; o++)
        fprintf(f, "\"%s\": %d, ", pull_outcome_name((PullOutcome)o), p->count[o]);
    fprintf(f, "\"blurs\": %d},\n    \"rows\": [\n", p->n_blur);
    for (int i = 0; i < p->T; i++) {
        const PullRow *r = &p->rows[i];
        fprintf(f, "      {\"query\": %d, \"outcome\": \"%s\", \"head_top_keys\": [", i,
                pull_outcome_name(r->outcome));
        for (int h = 0; h < p->n_heads; h++)
            fprintf(f, h ? ", %d" : "%d", p->top[(size_t)i * p->n_heads + h]);
        fputs("], \"head_pulls\": [", f);
        for (int h = 0; h < p->n_heads; h++)
            fprintf(f, "%s%s", h ? ", " : "", p->pulls[(size_t)i * p->n_heads + h] ? "true" : "false");
        fprintf(f, "], \"wide_top_key\": %d, \"wide_top_weight\": ", r->wide_top);
        json_number(f, r->wide_top_att);
        fprintf(f, ", \"runner_up_key\": %d, \"runner_up_weight\": ", r->runner_up);
        json_number(f, r->runner_up_att);
        fprintf(f, ", \"blurs\": %s, \"contests\": ", r->blurs ? "true" : "false");
        json_contests(f, d, p, i);
        fprintf(f, "}%s\n", i + 1 < p->T ? "," : "");
    }
    fputs("    ]\n  },\n", f);
}

/* losses (n) as a JSON array. */
static void json_losses(FILE *f, const double *losses, int n)
{
    fputc('[', f);
    for (int k = 0; k < n; k++) {
        fputs(k ? ", " : "", f);
        json_number(f, losses[k]);
    }
    fputc(']', f);
}

/* "training": the input's own, as given (each readout's under "by_readout"), and in how many seeds the one head
 * trained on its own ended with the larger held-out loss; pooled_from > 0:
 * the layer reported pooled the trained K/V heads, so the losses are the
 * model's before pooling ("losses_before_pooling": true). */
static void json_training(FILE *f, const Training *t, int pooled_from)
{
    int worse = 0;
    fputs("  \"training\": {\n    \"seeds\": [", f);
    for (int k = 0; k < t->n_seeds; k++) {
        fprintf(f, "%s%d", k ? ", " : "", t->seeds[k]);
        worse += t->loss_single[k] > t->loss_heads[k];
    }
    fprintf(f, "],\n    \"seed\": %d,\n    \"steps\": %d,\n    \"held_out_loss\": {\n      \"heads\": ",
            t->seed, t->steps);
    json_losses(f, t->loss_heads, t->n_seeds);
    fputs(",\n      \"single_head\": ", f);
    json_losses(f, t->loss_single, t->n_seeds);
    fputs("\n    },\n", f);
    if (t->n_readouts) {
        fputs("    \"by_readout\": {", f);
        for (int r = 0; r < t->n_readouts; r++) {
            fprintf(f, "%s\n      \"%s\": {\"heads\": ", r ? "," : "", t->readout_name[r]); /* plain ASCII */
            json_losses(f, t->readout[r].heads, t->n_seeds);
            fputs(", \"single_head\": ", f);
            json_losses(f, t->readout[r].single, t->n_seeds);
            fputs("}", f);
        }
        fputs("\n    },\n", f);
    }
    fprintf(f, "    \"seeds_single_head_worse\": %d,\n    \"losses_before_pooling\": %s\n  },\n",
            worse, pooled_from ? "true" : "false");
}

/* "kept": the heads' relations the wide head kept, halved and lost, row by row (kept.h). */
static void json_kept(FILE *f, const KeptLayer *k)
{
    fprintf(f, "  \"kept\": {\n    \"kept_at_least\": %g,\n    \"halved_at_least\": %g,\n    \"rows\": %d,\n",
            MEASURES_SHOWN_SHARE, KEPT_HALVED_AT_LEAST, k->rows);
    for (int v = 0; v < 3; v++)
        fprintf(f, "    \"%s\": %d,\n", kept_verdict_name((KeptVerdict)v), k->verdict[v]);
    fputs("    \"relations\": [", f);
    for (int r = 0; r < k->n_relations; r++) {
        const KeptRelation *kr = &k->relations[r];
        fprintf(f, "%s\n      {\"relation\": \"%s\", \"fixed_key\": %d, \"is_role\": %s, \"heads\": [", r ? "," : "",
                measures_pattern_field((MeasuresRole)kr->relation), kr->fixed_key, kr->is_role ? "true" : "false");
        int first = 1;
        for (int h = 0; h < k->n_heads; h++)
            if (k->heads[h].of == r) {
                fprintf(f, first ? "%d" : ", %d", h);
                first = 0;
            }
        fprintf(f, "], \"rows\": %d", kr->rows);
        for (int v = 0; v < 3; v++)
            fprintf(f, ", \"%s\": %d", kept_verdict_name((KeptVerdict)v), kr->verdict[v]);
        fputs(", \"mean_share\": ", f);
        json_number(f, kr->rows ? kr->share_sum / kr->rows : NAN);
        fputc('}', f);
    }
    fputs("\n    ],\n    \"heads\": [", f);
    for (int h = 0; h < k->n_heads; h++) {
        const KeptHead *kh = &k->heads[h];
        fprintf(f, "%s\n      {\"index\": %d, \"relation\": ", h ? "," : "", h);
        if (kh->relation >= 0)
            fprintf(f, "\"%s\"", measures_pattern_field((MeasuresRole)kh->relation));
        else
            fputs("null", f);
        fprintf(f, ", \"is_role\": %s, \"rows\": %d, \"kept\": %d}", kh->is_role ? "true" : "false", kh->rows,
                kh->kept);
    }
    fputs("\n    ]\n  },\n", f);
}

/* "chance": what random layers of this shape and sentence give (chance.h),
 * and where this layer's numbers fall. */
static void json_chance(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const Chance *ch = d->chance;
    const PullLayer *p = d->pulls;
    fprintf(f, "  \"chance\": {\n    \"draws\": %d,\n    \"budget_draws\": %d,\n    \"min_draws\": %d,\n"
               "    \"seeds\": [1, %d],\n    \"rival_seed_offset\": %s,\n    \"sharp_draws\": %d,\n"
               "    \"sharp_target_entropy_norm\": ",
            ch->draws, ch->budget_draws, CHANCE_MIN_DRAWS, ch->draws,
            d->single_given ? "1000000" : "null", ch->sharp_draws);
    json_number(f, ch->sharp_draws ? ch->sharp_target : NAN);
    fprintf(f, ",\n    \"sharp_tolerance\": %g,\n    \"ranges\": {", CHANCE_SHARP_TOL);
    for (int k = 0; k < CHANCE_N; k++) {
        fprintf(f, "%s\n      \"%s\": ", k ? "," : "", chance_stat_name((ChanceStat)k));
        report_json_range(f, &ch->r[k]);
    }
    /* this layer's numbers against the ranges: -1 below, 0 within, 1 above */
    const KeptLayer *k = &s->kept;
    double here[CHANCE_HEAD_JS] = {s->blur, k->verdict[KEPT_KEPT], k->verdict[KEPT_LOST], NAN, NAN, NAN, NAN, NAN,
                                   k->rows ? (double)k->verdict[KEPT_KEPT] / k->rows : NAN,
                                   k->rows ? (double)k->verdict[KEPT_LOST] / k->rows : NAN};
    if (p) {
        here[CHANCE_AGREED] = p->count[PULL_AGREED];
        here[CHANCE_SPLIT] = p->count[PULL_SPLIT];
        here[CHANCE_FOLLOWED] = p->count[PULL_FOLLOWED];
        here[CHANCE_OWN] = p->count[PULL_OWN];
        here[CHANCE_NO_PULL] = p->count[PULL_NO_PULL];
    }
    fputs("\n    },\n    \"side\": {", f);
    for (int k = 0; k < CHANCE_HEAD_JS; k++)
        fprintf(f, "%s\"%s\": %d", k ? ", " : "", chance_stat_name((ChanceStat)k), chance_side(&ch->r[k], here[k]));
    for (int k = CHANCE_HEAD_JS; k <= CHANCE_HEAD_TOP1; k++) {
        fprintf(f, ", \"%s\": [", chance_stat_name((ChanceStat)k));
        for (int h = 0; h < s->c->n_heads; h++)
            fprintf(f, h ? ", %d" : "%d", chance_side(&ch->r[k], k == CHANCE_HEAD_JS ? s->cmp[h].js_to_single
                                                                                   : s->cmp[h].top1_agreement));
        fputc(']', f);
    }
    fputs("}\n  },\n", f);
}

/* report.json's opening keys: format and version, the tokens (T), the checkpoint's token ids and
 * model (when from one), the layer's shape and the input's notes. */
static void json_header(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const MhaConfig *c = s->c;
    const int T = c->T;
    fputs("{\n  \"format\": \"mhaviz-report\",\n  \"version\": 2,\n  \"tokens\": [", f);
    for (int t = 0; t < T; t++) {
        if (t > 0)
            fputs(", ", f);
        json_string(f, d->in->tokens[t]);
    }
    fputs("],\n", f);
    const ModelSource *m = d->in->model;
    if (m) { /* a layer of a checkpoint: the ids it read, and which model and layer */
        fputs("  \"token_ids\": [", f);
        for (int t = 0; t < T; t++)
            fprintf(f, "%s%d", t > 0 ? ", " : "", m->token_ids[t]);
        fputs("],\n  \"model\": {\"name\": ", f);
        json_string(f, m->name);
        fputs(", \"type\": ", f);
        json_string(f, m->type);
        fprintf(f, ", \"layer\": %d, \"n_layers\": %d, \"dtype\": ", m->layer, m->n_layers);
        json_string(f, m->dtype);
        fprintf(f, ", \"parameters\": %lld},\n", m->parameters);
    }
    fprintf(f, "  \"d_model\": %d,\n  \"n_heads\": %d,\n  \"n_kv_heads\": %d,\n  \"head_dim\": %d,\n"
               "  \"causal\": %s,\n",
            c->d_model, c->n_heads, c->n_kv_heads, c->head_dim, c->causal ? "true" : "false");
    if (d->notes) {
        fputs("  \"notes\": ", f);
        json_string(f, d->notes);
        fputs(",\n", f);
    }
}

/* "heads" and "single_head": each head's place, measures, difference from the one head and its
 * map (T, T) (and scores (T, T) when asked), then the one head's measures and map. */
static void json_heads(FILE *f, const ReportData *d, const LayerSummary *s, Matrices *mx)
{
    const MhaConfig *c = s->c;
    const int T = c->T;
    const size_t map = (size_t)T * T;

    /* Each head: where it sits, what it does, how it differs, its map. */
    char head[32], name[64];
    fputs("  \"heads\": [\n", f);
    for (int h = 0; h < c->n_heads; h++) {
        fprintf(f, "    {\n      \"index\": %d,\n      \"kv_head\": %d,\n", h, layer_summary_kv_head(s, h));
        json_measures(f, &s->heads[h], "      ");
        fputs("      \"js_to_single\": ", f);
        json_number(f, s->cmp[h].js_to_single);
        fputs(",\n      \"top1_agreement\": ", f);
        json_number(f, s->cmp[h].top1_agreement);
        fputs(",\n      \"attention\": ", f);
        outdir_head_name(head, sizeof head, h, c->n_heads);
        snprintf(name, sizeof name, "%s" OUTDIR_ATTENTION_NPY, head);
        json_matrix(f, mx, d->multi->att + (size_t)h * map, T, T, name, "        ");
        if (d->scores && d->multi->scores) {
            fputs(",\n      \"scores\": ", f);
            snprintf(name, sizeof name, "%s" OUTDIR_SCORES_NPY, head);
            json_matrix(f, mx, d->multi->scores + (size_t)h * map, T, T, name, "        ");
        }
        fputs(h + 1 < c->n_heads ? "\n    },\n" : "\n    }\n", f);
    }
    fputs("  ],\n", f);

    fprintf(f, "  \"single_head\": {\n      \"source\": \"%s\",\n",
            d->single_given ? "input" : "same projections");
    json_measures(f, &s->wide, "      ");
    fputs("      \"attention\": ", f);
    json_matrix(f, mx, s->wide_att, T, T, OUTDIR_SINGLE_HEAD OUTDIR_ATTENTION_NPY, "        ");
    if (d->scores && d->single->scores) {
        fputs(",\n      \"scores\": ", f);
        json_matrix(f, mx, d->single->scores, T, T, OUTDIR_SINGLE_HEAD OUTDIR_SCORES_NPY, "        ");
    }
    fputs("\n  },\n", f);
}

/* "comparison": the blur, the mean normalised entropies and how far the outputs are apart. */
static void json_comparison(FILE *f, const LayerSummary *s)
{
    fputs("  \"comparison\": {\n    \"blur\": ", f);
    json_number(f, s->blur);
    fputs(",\n    \"heads_mean_entropy_norm\": ", f);
    json_number(f, s->heads_norm_mean);
    fputs(",\n    \"single_head_entropy_norm\": ", f);
    json_number(f, s->wide.entropy_norm);
    fputs(",\n    \"output_rel_diff\": ", f);
    json_number(f, s->rel_diff);
    fputs(",\n    \"output_cosine\": ", f);
    json_number(f, s->cosine);
    fputs("\n  },\n", f);
}

/* "cost": the pairs counted, then the cost table's rows: this input, MHA, every GQA-g, MQA, the one head. */
static void json_cost(FILE *f, const ReportData *d, const LayerSummary *s)
{
    const int T = s->c->T;
    const CostTable *t = &s->cost;
    fprintf(f, "  \"cost\": {\n    \"T\": %d,\n    \"visible_pairs\": %" PRId64 ",\n"
               "    \"masked_cells_counted\": false,\n    \"biases_counted\": %s,\n",
            T, t->pairs, d->in->w.has_bias ? "true" : "false");
    report_json_cost_row(f, "input", &t->input, 1, 0);
    report_json_cost_row(f, "mha", &t->mha, 1, 0);
    fputs("    \"gqa\": [", f); /* every GQA-g, most K/V heads first */
    for (int g = 0; g < t->n_gqa; g++) {
        fputs(g ? ",\n  " : "\n  ", f);
        report_json_cost_row(f, NULL, &t->gqa[g], 1, 1);
    }
    fputs(t->n_gqa ? "    ],\n" : "],\n", f);
    report_json_cost_row(f, "mqa", &t->mqa, 1, 0);
    report_json_cost_row(f, "single_head", &t->wide, 1, 1);
    fputs("  },\n", f);
}

/* report.json's keys in the order they are written; "output" last: both outputs (T, d_model). */
void report_write_json(FILE *f, const ReportData *d, const LayerSummary *s, Matrices *mx)
{
    const MhaConfig *c = s->c;
    const int T = c->T;

    json_header(f, d, s);
    json_heads(f, d, s, mx);
    if (d->in->training.n_seeds)
        json_training(f, &d->in->training, d->pooled_from);
    json_comparison(f, s);
    json_kept(f, &s->kept);
    if (d->pulls)
        json_pulls(f, d, d->pulls);
    if (d->chance)
        json_chance(f, d, s);
    json_cost(f, d, s);

    fputs("  \"output\": {\n    \"multi_head\": ", f);
    json_matrix(f, mx, d->multi->out, T, c->d_model, OUTDIR_OUTPUT_MULTI_NPY, "      ");
    fputs(",\n    \"single_head\": ", f);
    json_matrix(f, mx, d->single->out, T, c->d_model, OUTDIR_OUTPUT_SINGLE_NPY, "      ");
    fputs("\n  }\n}\n", f);
}
