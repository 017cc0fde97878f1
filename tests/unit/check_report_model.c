/* check_report_model.c — the prediction's part of the report at the top of
 * a run over several layers (report/report_model.c), from a hand-made
 * summary and prediction: the heads the prediction leans on are those
 * whose switching off lowers the top token's log-probability by more than
 * MODEL_EFFECT_MATTERS (0.1), the most first, and when none does the
 * report says so instead of naming the least harmless ones. */
#include "checkpoint/model.h"
#include "core/model_summary.h"
#include "core/status.h"
#include "report/report.h"
#include "support.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* report_write_model into a scratch folder for one layer of two heads
 * (both mixed), two tokens, the top token " x" and the heads' effects
 * (2 layers x 2 heads); *txt and *json: the files' text (malloc'd). */
static void write_report(const double *effect, char **txt, cJSON **json)
{
    ModelSummary s;
    ck_assert_int_eq(model_summary_init(&s, 1, 2, 2), MHAVIZ_OK);
    s.n = 1;
    s.layers[0].n_heads = 2;
    s.layers[0].head_role = calloc(2, sizeof *s.layers[0].head_role);
    s.layers[0].head_role[0] = s.layers[0].head_role[1] = MEASURES_MIXED;
    s.layers[0].roles[MEASURES_MIXED] = 2;
    char *tokens[2] = {"a", " b"};
    int ids[2] = {7, 8};
    ModelSource src = {.name = "m", .type = "gpt2", .n_layers = 2, .dtype = "F32", .token_ids = ids};
    MhaInput in = {.cfg = {.T = 2, .n_heads = 2}, .tokens = tokens, .model = &src};
    double eff[4];
    memcpy(eff, effect, sizeof eff);
    ModelPrediction pred = {.n = 1, .ids = {9}, .logprob = {-0.5}, .text = {" x"}, .n_layers = 2, .n_heads = 2,
                            .effect = eff};
    char *dir = scratch("report_model"), err[MHAVIZ_ERRLEN], path[1200];
    ck_assert_msg(report_write_model(dir, &s, &in, "m", &pred, err, sizeof err) == MHAVIZ_OK, "%s", err);
    snprintf(path, sizeof path, "%s/report.txt", dir);
    *txt = slurp(path, NULL);
    snprintf(path, sizeof path, "%s/report.json", dir);
    char *text = slurp(path, NULL);
    *json = cJSON_Parse(text);
    ck_assert_msg(*json != NULL, "report.json: not JSON");
    free(text);
    remove_tree(dir);
    free(dir);
    model_summary_free(&s);
}

/* Two heads past 0.1 (-1.5 at L1H0, -0.3 at L0H1), one at -0.1 exactly
 * (not past it), one raising it. */
START_TEST(names_the_heads_past_the_threshold)
{
    const double effect[4] = {-0.1, -0.3, -1.5, 0.2};
    char *txt;
    cJSON *json;
    write_report(effect, &txt, &json);
    ck_assert_msg(strstr(txt, "  L1H0 -1.5000 (its probability x0.22)\n  L0H1 -0.3000 (its probability x0.74)\n"
                              "  (the heads that lower it by more than 0.10;"), "%s", txt);
    ck_assert_ptr_null(strstr(txt, "L0H0 -0.1000"));
    const cJSON *leans = cJSON_GetObjectItemCaseSensitive(json, "leans_on");
    ck_assert_int_eq(cJSON_GetArraySize(leans), 2);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(leans, 0), "layer")->valuedouble, 1);
    ck_assert_int_eq((int)cJSON_GetObjectItemCaseSensitive(cJSON_GetArrayItem(leans, 1), "head")->valuedouble, 1);
    ck_assert(cJSON_GetObjectItemCaseSensitive(json, "effect_matters")->valuedouble == MODEL_EFFECT_MATTERS);
    ck_assert(cJSON_IsNull(cJSON_GetObjectItemCaseSensitive(json, "ablated")));
    free(txt);
    cJSON_Delete(json);
}
END_TEST

/* No head past 0.1: said so, with the largest change (-0.08 at L0H1), and none listed. */
START_TEST(says_when_no_head_matters)
{
    const double effect[4] = {0.01, -0.08, -0.02, 0.05};
    char *txt;
    cJSON *json;
    write_report(effect, &txt, &json);
    ck_assert_msg(strstr(txt, "none matters much: switched off alone, no head lowers it by more than 0.10 (the most:\n"
                              "  L0H1 -0.0800)"), "%s", txt);
    ck_assert_int_eq(cJSON_GetArraySize(cJSON_GetObjectItemCaseSensitive(json, "leans_on")), 0);
    free(txt);
    cJSON_Delete(json);
}
END_TEST

Suite *report_model_suite(void)
{
    Suite *s = suite_create("report_model");
    TCase *tc = tcase_create("prediction");
    tcase_add_test(tc, names_the_heads_past_the_threshold);
    tcase_add_test(tc, says_when_no_head_matters);
    suite_add_tcase(s, tc);
    return s;
}
