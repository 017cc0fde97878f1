/* report_model.c — report.txt and report.json at the top of a run over
 * several layers of a model: the table of layers first, then the heads
 * worth a slide (core/model_summary.h says how they are chosen). Each
 * layer's own report is in its folder, layer_NN/. */
#include "core/status.h"
#include "io/json.h"
#include "io/outdir.h"
#include "report/report.h"
#include "report/report_parts.h"
#include "text/token_text.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Where each pattern's head looks, in report.txt's words. */
static const char *slide_where(MeasuresRole p)
{
    switch (p) {
    case MEASURES_PREVIOUS_TOKEN: return "on the token just before";
    case MEASURES_FIRST_TOKEN: return "on the first token";
    case MEASURES_DUPLICATE_TOKEN: return "on an earlier copy of their own token";
    default: return "on the token after the earlier copy";
    }
}

/* The heads the prediction leans on into shown (room for MODEL_TOP_K):
 * those whose switching off alone lowers the top token's log-probability
 * by more than MODEL_EFFECT_MATTERS, the most first (the lower head on
 * ties), at most MODEL_TOP_K; returns how many, *n_matter how many matter
 * in all. None without pred->effect. */
static int leans_on(const ModelPrediction *pred, int *shown, int *n_matter)
{
    const int n_eff = pred->effect ? pred->n_layers * pred->n_heads : 0;
    int n_shown = 0;
    *n_matter = 0;
    for (int k = 0; k < n_eff; k++)
        *n_matter += pred->effect[k] < -MODEL_EFFECT_MATTERS;
    for (; n_shown < MODEL_TOP_K && n_shown < *n_matter; n_shown++) {
        int best = -1;
        for (int k = 0; k < n_eff; k++) {
            int taken = 0;
            for (int j = 0; j < n_shown; j++)
                taken |= shown[j] == k;
            if (!taken && (best < 0 || pred->effect[k] < pred->effect[best]))
                best = k;
        }
        shown[n_shown] = best;
    }
    return n_shown;
}

/* report.txt's list of the top n tokens. */
static void top_list(FILE *f, int n, const int *ids, const double *logprob, char *const *text)
{
    for (int k = 0; k < n; k++) {
        char tok[64];
        fprintf(f, "  %d. %-16s %5.1f%%  (id %d, log-probability %.4f)\n", k + 1, token_text(tok, sizeof tok, text[k]),
                100.0 * exp(logprob[k]), ids[k], logprob[k]);
    }
}

/* What the prediction leans on (--head-effects) and what it becomes with
 * --ablate's heads off, in report.txt's words. */
static void prediction_txt(FILE *f, const ModelPrediction *pred)
{
    char top_tok[64];
    token_text(top_tok, sizeof top_tok, pred->n ? pred->text[0] : "");
    if (pred->effect) {
        int shown[MODEL_TOP_K], n_matter;
        const int n_shown = leans_on(pred, shown, &n_matter);
        const int n_eff = pred->n_layers * pred->n_heads;
        int most = 0; /* the head whose switching off lowers it most */
        for (int k = 1; k < n_eff; k++)
            most = pred->effect[k] < pred->effect[most] ? k : most;
        fprintf(f, "\nThe heads the prediction leans on: each of the %d heads switched off alone (its output zeroed\n"
                   "before W_o, one forward each); the change in the log-probability of %s:\n", n_eff, top_tok);
        if (n_shown == 0)
            fprintf(f, "  none matters much: switched off alone, no head lowers it by more than %.2f (the most:\n"
                       "  L%dH%d %+.4f). Heads may still matter together, which one at a time cannot show\n"
                       "  (--ablate switches several off at once).\n",
                    MODEL_EFFECT_MATTERS, most / pred->n_heads, most % pred->n_heads, pred->effect[most]);
        for (int j = 0; j < n_shown; j++)
            fprintf(f, "  L%dH%d %+.4f (its probability x%.2f)\n", shown[j] / pred->n_heads, shown[j] % pred->n_heads,
                    pred->effect[shown[j]], exp(pred->effect[shown[j]]));
        if (n_matter > n_shown)
            fprintf(f, "  (%d heads lower it by more than %.2f; the %d that lower it most)\n", n_matter,
                    MODEL_EFFECT_MATTERS, n_shown);
        else if (n_shown > 0)
            fprintf(f, "  (the heads that lower it by more than %.2f; no other head lowers it as much)\n",
                    MODEL_EFFECT_MATTERS);
    }
    if (pred->off) {
        fprintf(f, "\nWith heads");
        for (int k = 0, first = 1; k < pred->n_layers * pred->n_heads; k++)
            if (pred->off[k]) {
                fprintf(f, "%s L%dH%d", first ? "" : ",", k / pred->n_heads, k % pred->n_heads);
                first = 0;
            }
        fprintf(f, " switched off together (--ablate: their outputs zeroed before W_o;\n"
                   "the maps are still those with every head on), the next token:\n");
        top_list(f, pred->off_n, pred->off_ids, pred->off_logprob, pred->off_text);
        fprintf(f, "  The log-probability of %s goes from %.4f to %.4f (%+.4f: its probability x%.2f).\n", top_tok,
                pred->logprob[0], pred->off_top, pred->off_top - pred->logprob[0], exp(pred->off_top - pred->logprob[0]));
    }
}

/* 1 when some layer has a head of role r: the table's columns. */
static int role_column(const ModelSummary *s, int r)
{
    for (int i = 0; i < s->n; i++)
        if (s->layers[i].roles[r] > 0)
            return 1;
    return 0;
}

/* x and, when r has a range, the range and where x falls against it:
 * "12 (0 to 9: above)". */
static void with_range(char *buf, size_t n, const char *fmt, double x, const ChanceRange *r)
{
    char v[24];
    snprintf(v, sizeof v, fmt, x);
    if (measures_is_null(x)) {
        snprintf(buf, n, "null");
        return;
    }
    if (r->n == 0) {
        snprintf(buf, n, "%s", v);
        return;
    }
    char lo[24], hi[24];
    snprintf(lo, sizeof lo, fmt, r->lo);
    snprintf(hi, sizeof hi, fmt, r->hi);
    const int side = chance_side(r, x);
    snprintf(buf, n, "%s (%s to %s%s)", v, lo, hi, side < 0 ? ": below" : side > 0 ? ": above" : "");
}

/* The width of role r's column: its name, at least 5. */
static int role_width(int r)
{
    const int n = (int)strlen(measures_role_name(r));
    return n > 5 ? n : 5;
}

/* A file's layers have no unembedding, so no next token: an empty
 * prediction stands in for the model's. */
static const ModelPrediction no_prediction = {0};

static void model_txt(FILE *f, const ModelSummary *s, const MhaInput *in, const char *name, const ModelPrediction *pred)
{
    const ModelSource *m = in->model;
    if (m)
        fprintf(f, "mhaviz: %s (%s), %d of its %d layers, %d heads each, %d tokens\n", name, m->type, s->n,
                m->n_layers, in->cfg.n_heads, in->cfg.T);
    else
        fprintf(f, "mhaviz: %s, %d of its %d layers, %d heads each, %d tokens\n", name, s->n, in->n_layers,
                in->cfg.n_heads, in->cfg.T);
    fprintf(f, "Tokens:");
    for (int t = 0; t < in->cfg.T; t++) {
        char tok[64];
        fprintf(f, "%s%s", t ? " |" : " ", token_text(tok, sizeof tok, in->tokens[t]));
    }
    fprintf(f, "\n");
    if (pred) {
        fprintf(f, "\nThe model's next token after the text (its top %d, the probability it gives each):\n", pred->n);
        top_list(f, pred->n, pred->ids, pred->logprob, pred->text);
        prediction_txt(f, pred);
    }
    if (s->sentences > 1)
        fprintf(f, "\nOver %d sentences (--text-file): each head's role and the heads worth a slide rest on its\n"
                   "rows of every sentence, pooled, by the rule one map's role follows. The tokens above, the\n"
                   "prediction, the maps (model_overview.png, layer_NN/), kept, lost and blur are the first\n"
                   "sentence's, and layer_NN/report.txt gives the roles in it alone.\n", s->sentences);
    fprintf(f, "\nLayers (each layer's pictures and report: layer_NN/)\n");
    fprintf(f, "  roles: how many heads have each role; kept: the heads' relation rows the wide head\n"
               "  built from the layer kept, of all; lost: those it gave less than a quarter of its row\n"
               "  (the rows between it halved: layer_NN/report.txt); blur: the wide head's normalised\n"
               "  entropy less the heads' mean. In brackets: the middle 95%% of random layers of the\n"
               "  same shape and sentence, and \"above\" or \"below\" when the layer falls outside it.\n\n");
    fprintf(f, "%5s", "layer");
    for (int r = 0; r <= MEASURES_NONE; r++)
        if (role_column(s, r))
            fprintf(f, " %*s", role_width(r), measures_role_name(r));
    fprintf(f, " %5s  %-20s %-20s %s\n", "rows", "kept", "lost", "blur");
    for (int i = 0; i < s->n; i++) {
        const LayerRow *l = &s->layers[i];
        fprintf(f, "%5d", l->layer);
        for (int r = 0; r <= MEASURES_NONE; r++)
            if (role_column(s, r))
                fprintf(f, " %*d", role_width(r), l->roles[r]);
        char kept[96], lost[96], blur[96];
        with_range(kept, sizeof kept, "%.0f", l->kept, &l->kept_r);
        with_range(lost, sizeof lost, "%.0f", l->lost, &l->lost_r);
        with_range(blur, sizeof blur, "%.3f", l->blur, &l->blur_r);
        fprintf(f, " %5d  %-20s %-20s %s\n", l->rows, kept, lost, blur);
    }
    fprintf(f, "\nHeads worth a slide (LxHy: layer x, head y; support: the rows where the pattern holds at\n"
               "least half of the row's attention, of the rows where it could)\n");
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++) {
        const SlideHead *b = &s->best[k];
        const MeasuresRole p = model_summary_slides[k];
        if (b->layer < 0)
            fprintf(f, "  %s: no head holds it in %d rows or more (%d rows could show it)\n", measures_role_name(p),
                    MEASURES_MIN_ROLE_ROWS, b->rows);
        else if (s->sentences > 1)
            fprintf(f, "  L%dH%d %s: %d of %d rows over %d sentences %s (mean share %.2f%s)\n", b->layer,
                    b->head, measures_role_name(p), b->shown, b->rows, s->sentences, slide_where(p), b->share,
                    b->is_role ? "; its role" : "; not its role");
        else
            fprintf(f, "  L%dH%d %s: %d of %d rows %s (mean share %.2f%s)\n", b->layer, b->head,
                    measures_role_name(p), b->shown, b->rows, slide_where(p), b->share,
                    b->is_role ? "; its role" : "; not its role");
    }
    fprintf(f, "Each one's map: layer_NN/head_NN.png; every head of a layer together: its overview.png\n"
               "(every head's own map too with --head-maps).\n");
}

static void model_range(FILE *f, const char *name, const ChanceRange *r)
{
    fprintf(f, ", \"%s\": ", name);
    if (r->n == 0) {
        fprintf(f, "null");
        return;
    }
    fprintf(f, "[");
    json_number(f, r->lo);
    fprintf(f, ", ");
    json_number(f, r->hi);
    fprintf(f, "]");
}

/* report.json's list of the top n tokens. */
static void prediction_json(FILE *f, int n, const int *ids, const double *logprob, char *const *text)
{
    fprintf(f, "[");
    for (int k = 0; k < n; k++) {
        fprintf(f, "%s{\"id\": %d, \"token\": ", k ? ", " : "", ids[k]);
        json_string(f, text[k]);
        fprintf(f, ", \"logprob\": ");
        json_number(f, logprob[k]);
        fprintf(f, "}");
    }
    fprintf(f, "]");
}

/* The values of "ablated" (the heads turned off, as [layer, head], and the prediction without them;
 * null when none) and "head_effects" (n_layers, n_heads; null when not measured); the caller closes
 * the outer bracket. */
static void model_json_ablated(FILE *f, const ModelPrediction *pred)
{
    if (!pred->off)
        fprintf(f, "null");
    else {
        fprintf(f, "{\"heads\": [");
        for (int k = 0, first = 1; k < pred->n_layers * pred->n_heads; k++)
            if (pred->off[k]) {
                fprintf(f, "%s[%d, %d]", first ? "" : ", ", k / pred->n_heads, k % pred->n_heads);
                first = 0;
            }
        fprintf(f, "], \"prediction\": ");
        prediction_json(f, pred->off_n, pred->off_ids, pred->off_logprob, pred->off_text);
        fprintf(f, ", \"top_logprob\": ");
        json_number(f, pred->off_top);
        fprintf(f, ", \"top_change\": ");
        json_number(f, pred->off_top - pred->logprob[0]);
        fprintf(f, "}");
    }
    fprintf(f, ",\n  \"head_effects\": %s", pred->effect ? "[" : "null");
    for (int l = 0; pred->effect && l < pred->n_layers; l++) {
        fprintf(f, "%s[", l ? ", " : "");
        for (int h = 0; h < pred->n_heads; h++) {
            fprintf(f, h ? ", " : "");
            json_number(f, pred->effect[(size_t)l * pred->n_heads + h]);
        }
        fprintf(f, "]");
    }
}

/* "layers": one line per layer run: its folder, roles counted, each head's role, rows kept and lost,
 * the blur and chance's ranges. */
static void model_json_layers(FILE *f, const ModelSummary *s)
{
    for (int i = 0; i < s->n; i++) {
        const LayerRow *l = &s->layers[i];
        char folder[32];
        outdir_layer_folder(folder, sizeof folder, l->layer);
        fprintf(f, "    {\"layer\": %d, \"folder\": \"%s\", \"roles\": {", l->layer, folder);
        for (int r = 0, first = 1; r <= MEASURES_NONE; r++)
            if (l->roles[r] > 0) {
                fprintf(f, "%s\"%s\": %d", first ? "" : ", ", measures_role_name(r), l->roles[r]);
                first = 0;
            }
        fprintf(f, "}, \"head_roles\": [");
        for (int h = 0; h < l->n_heads; h++)
            fprintf(f, "%s\"%s\"", h ? ", " : "", measures_role_name(l->head_role[h]));
        fprintf(f, "], \"rows\": %d, \"kept\": %d, \"lost\": %d, \"blur\": ", l->rows, l->kept, l->lost);
        json_number(f, l->blur);
        fprintf(f, ", \"chance\": {\"draws\": %d", l->draws);
        model_range(f, "blur", &l->blur_r);
        model_range(f, "kept", &l->kept_r);
        model_range(f, "lost", &l->lost_r);
        fprintf(f, "}}%s\n", i + 1 < s->n ? "," : "");
    }
}

/* "heads_worth_a_slide": for each pattern with a slide, the head that shows it best (or nulls). */
static void model_json_slides(FILE *f, const ModelSummary *s)
{
    for (int k = 0; k < MODEL_SUMMARY_N_SLIDES; k++) {
        const SlideHead *b = &s->best[k];
        fprintf(f, "    {\"pattern\": \"%s\", ", measures_role_name(model_summary_slides[k]));
        if (b->layer < 0)
            fprintf(f, "\"layer\": null, \"head\": null, \"shown\": 0, \"rows\": %d}", b->rows);
        else {
            fprintf(f, "\"layer\": %d, \"head\": %d, \"shown\": %d, \"rows\": %d, \"share\": ", b->layer, b->head,
                    b->shown, b->rows);
            json_number(f, b->share);
            fprintf(f, ", \"is_role\": %s}", b->is_role ? "true" : "false");
        }
        fprintf(f, "%s\n", k + 1 < MODEL_SUMMARY_N_SLIDES ? "," : "");
    }
}

/* A file's layers: "model" null, "input" its name and size, no token ids
 * and no prediction ("prediction", "ablated" and "head_effects" null). */
static void model_json(FILE *f, const ModelSummary *s, const MhaInput *in, const char *name, const ModelPrediction *pred)
{
    const ModelSource *m = in->model;
    if (m) {
        fprintf(f, "{\n  \"model\": {\"name\": ");
        json_string(f, name);
        fprintf(f, ", \"type\": ");
        json_string(f, m->type);
        fprintf(f, ", \"n_layers\": %d, \"n_heads\": %d, \"parameters\": %lld},\n", m->n_layers, in->cfg.n_heads,
                m->parameters);
    } else {
        fprintf(f, "{\n  \"model\": null,\n  \"input\": {\"name\": ");
        json_string(f, name);
        fprintf(f, ", \"n_layers\": %d, \"n_heads\": %d},\n", in->n_layers, in->cfg.n_heads);
    }
    fprintf(f, "  \"tokens\": [");
    for (int t = 0; t < in->cfg.T; t++) {
        fprintf(f, t ? ", " : "");
        json_string(f, in->tokens[t]);
    }
    fprintf(f, "],\n  \"sentences\": %d,\n", s->sentences);
    if (m) {
        fprintf(f, "  \"token_ids\": [");
        for (int t = 0; t < in->cfg.T; t++)
            fprintf(f, "%s%d", t ? ", " : "", m->token_ids[t]);
        fprintf(f, "],\n");
    }
    fprintf(f, "  \"prediction\": ");
    if (pred)
        prediction_json(f, pred->n, pred->ids, pred->logprob, pred->text);
    else {
        pred = &no_prediction;
        fprintf(f, "null");
    }
    fprintf(f, ",\n  \"effect_matters\": ");
    json_number(f, MODEL_EFFECT_MATTERS);
    fprintf(f, ",\n  \"leans_on\": [");
    int shown[MODEL_TOP_K], n_matter;
    const int n_shown = leans_on(pred, shown, &n_matter);
    for (int j = 0; j < n_shown; j++) {
        fprintf(f, "%s{\"layer\": %d, \"head\": %d, \"effect\": ", j ? ", " : "", shown[j] / pred->n_heads,
                shown[j] % pred->n_heads);
        json_number(f, pred->effect[shown[j]]);
        fprintf(f, "}");
    }
    fprintf(f, "],\n  \"ablated\": ");
    model_json_ablated(f, pred);
    fprintf(f, "%s,\n  \"layers\": [\n", pred->effect ? "]" : "");
    model_json_layers(f, s);
    fprintf(f, "  ],\n  \"heads_worth_a_slide\": [\n");
    model_json_slides(f, s);
    fprintf(f, "  ]\n}\n");
}

int report_write_model(const char *dir, const ModelSummary *s, const MhaInput *in, const char *name,
                       const ModelPrediction *pred, char *err, size_t errlen)
{
    int rc = MHAVIZ_OK;
    char *path = NULL;
    FILE *f = report_open_out(dir, OUTDIR_REPORT_TXT, &path, err, errlen, &rc);
    if (f) {
        model_txt(f, s, in, name, pred);
        rc = report_close_out(f, path, err, errlen);
    }
    free(path);
    path = NULL;
    if (rc == MHAVIZ_OK && (f = report_open_out(dir, OUTDIR_REPORT_JSON, &path, err, errlen, &rc))) {
        model_json(f, s, in, name, pred);
        rc = report_close_out(f, path, err, errlen);
    }
    free(path);
    return rc;
}
