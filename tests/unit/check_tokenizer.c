/* check_tokenizer.c — src/checkpoint/tokenizer.c on small tokenizer.json
 * files written here: each feature with ids derived by hand in a comment,
 * and bad files, which must fail naming the file and the JSON field.
 * (check_tokenizer_ref.c compares real tokenizers with Hugging Face's code.) */
#include "checkpoint/tokenizer.h"
#include "core/status.h"
#include "support.h"

#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* A SentencePiece-style vocabulary (Llama 2): "▁" stands for a space. */
#define SPM_VOCAB                                                                                         \
    "\"vocab\": {\"<unk>\": 0, \"▁\": 1, \"a\": 2, \"<0xC3>\": 3, \"<0xA9>\": 4, \"▁a\": 5, \"b\": 6, " \
    "\"▁b\": 7, \"<0x0A>\": 8}, \"merges\": [\"▁ a\", \"▁ b\"]"
#define SPM_NORMALIZER                                                                                    \
    "\"normalizer\": {\"type\": \"Sequence\", \"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"▁\"}, " \
    "{\"type\": \"Replace\", \"pattern\": {\"String\": \" \"}, \"content\": \"▁\"}]}"
#define BOS_TEMPLATE                                                                                      \
    "\"post_processor\": {\"type\": \"TemplateProcessing\", \"single\": [{\"SpecialToken\": {\"id\": "      \
    "\"<s>\", \"type_id\": 0}}, {\"Sequence\": {\"id\": \"A\", \"type_id\": 0}}], \"special_tokens\": "      \
    "{\"<s>\": {\"id\": \"<s>\", \"ids\": [9], \"tokens\": [\"<s>\"]}}}"
#define ADDED_S                                                                                           \
    "\"added_tokens\": [{\"id\": 9, \"content\": \"<s>\", \"special\": true, \"normalized\": false}, "      \
    "{\"id\": 10, \"content\": \"</s>\", \"special\": true, \"normalized\": false}, "                     \
    "{\"id\": 11, \"content\": \"<m>\", \"special\": true, \"normalized\": false, \"lstrip\": true}]"

/* Write DIR/tokenizer.json (and tokenizer_config.json when config is not
 * NULL) into a scratch folder and load it; err gets the message. */
static Tokenizer *load(const char *json, const char *config, char *err, size_t errlen, char **dir_out)
{
    char *dir = scratch("tokenizer");
    char path[512];
    snprintf(path, sizeof path, "%s/tokenizer.json", dir);
    FILE *f = fopen(path, "w");
    ck_assert_ptr_nonnull(f);
    fputs(json, f);
    fclose(f);
    if (config) {
        snprintf(path, sizeof path, "%s/tokenizer_config.json", dir);
        f = fopen(path, "w");
        ck_assert_ptr_nonnull(f);
        fputs(config, f);
        fclose(f);
    }
    Tokenizer *tok = tokenizer_load(dir, err, errlen);
    if (dir_out)
        *dir_out = dir;
    else {
        remove_tree(dir);
        free(dir);
    }
    return tok;
}

static Tokenizer *load_ok(const char *json, const char *config)
{
    char err[MHAVIZ_ERRLEN];
    Tokenizer *tok = load(json, config, err, sizeof err, NULL);
    ck_assert_msg(tok != NULL, "%s", err);
    return tok;
}

static void expect_ids(const Tokenizer *tok, const char *text, const int *want, int n_want)
{
    int *ids, n;
    char err[MHAVIZ_ERRLEN];
    int rc = tokenizer_encode(tok, text, &ids, &n, err, sizeof err);
    ck_assert_msg(rc == MHAVIZ_OK, "\"%s\": %s", text, err);
    char got[256] = "";
    for (int i = 0; i < n; i++)
        snprintf(got + strlen(got), sizeof got - strlen(got), " %d", ids[i]);
    ck_assert_msg(n == n_want, "\"%s\": %d ids (%s), want %d", text, n, got, n_want);
    for (int i = 0; i < n; i++)
        ck_assert_msg(ids[i] == want[i], "\"%s\": ids%s, id %d is %d, want %d", text, got, i, ids[i], want[i]);
    free(ids);
}

/* A bad file: NULL, and a message holding each of the given parts. */
static void expect_error(const char *json, const char *config, const char *part1, const char *part2)
{
    char err[MHAVIZ_ERRLEN] = "", *dir;
    Tokenizer *tok = load(json, config, err, sizeof err, &dir);
    ck_assert_msg(tok == NULL, "loaded; want an error with \"%s\"", part2);
    char file[600];
    snprintf(file, sizeof file, "%s/%s", dir, part1);
    ck_assert_msg(strstr(err, file) != NULL, "message \"%s\" does not name %s", err, file);
    ck_assert_msg(strstr(err, part2) != NULL, "message \"%s\" does not say \"%s\"", err, part2);
    remove_tree(dir);
    free(dir);
}

/* ------------------------------------------------------------------------ */

/* vocab a b c, bc, ab; merges "b c" (rank 0) before "a b" (rank 1): in
 * "abc" the pairs are (a,b) rank 1 and (b,c) rank 0, so b+c merges first
 * and leaves a, bc: [0, 3], not [4, 2]. */
START_TEST(lower_rank_merges_first)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"c\": 2, \"bc\": 3, "
                             "\"ab\": 4}, \"merges\": [\"b c\", [\"a\", \"b\"]]}}", NULL);
    expect_ids(tok, "abc", (int[]){0, 3}, 2);
    expect_ids(tok, "ab", (int[]){4}, 1);
    ck_assert_int_eq(tokenizer_vocab_size(tok), 5);
    tokenizer_free(tok);
}
END_TEST

/* Llama 2's way: "a é" -> normalized "▁a▁é"; é is not in the vocabulary, so
 * byte_fallback gives its UTF-8 bytes C3 A9 as <0xC3> <0xA9>; "▁ a" merges;
 * the template puts <s> (9) first: [9, ▁a 5, ▁ 1, 3, 4]. */
START_TEST(byte_fallback_and_bos)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, \"unk_token\": \"<unk>\", "
                             SPM_VOCAB "}, " SPM_NORMALIZER ", " BOS_TEMPLATE ", " ADDED_S "}", NULL);
    expect_ids(tok, "a é", (int[]){9, 5, 1, 3, 4}, 5);
    /* "<s>" in the text is the token itself, cut out before normalizing; the
     * parts around it are normalized alone: "b" -> "▁b", "a" -> "▁a". */
    expect_ids(tok, "b<s>a", (int[]){9, 7, 9, 5}, 4);
    /* "<m>" takes the spaces on its left (lstrip): "a  <m>" -> "a", "<m>". */
    expect_ids(tok, "a  <m>", (int[]){9, 5, 11}, 3);
    tokenizer_free(tok);
}
END_TEST

/* Without byte_fallback an unknown character is <unk> (0); with fuse_unk
 * two in a row give one: "a éé" -> ▁a ▁ <unk> (fused) = [5, 1, 0]. */
START_TEST(fuse_unk)
{
    Tokenizer *fused = load_ok("{\"model\": {\"type\": \"BPE\", \"fuse_unk\": true, \"unk_token\": \"<unk>\", "
                               SPM_VOCAB "}, " SPM_NORMALIZER "}", NULL);
    Tokenizer *apart = load_ok("{\"model\": {\"type\": \"BPE\", \"unk_token\": \"<unk>\", " SPM_VOCAB "}, "
                               SPM_NORMALIZER "}", NULL);
    expect_ids(fused, "a éé", (int[]){5, 1, 0}, 3);
    expect_ids(apart, "a éé", (int[]){5, 1, 0, 0}, 4);
    tokenizer_free(fused);
    tokenizer_free(apart);
}
END_TEST

/* Metaspace, prepend_scheme "first", split: "a a" -> "▁a▁a" -> "▁a" "▁a";
 * after "<s>" the text does not begin the input, so no "▁" goes in front:
 * "<s>a" -> <s>, "a" = [9, 2]. */
START_TEST(metaspace_first)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, " ADDED_S ", \"pre_tokenizer\": "
                             "{\"type\": \"Metaspace\", \"replacement\": \"▁\", \"prepend_scheme\": \"first\", "
                             "\"split\": true}}", NULL);
    expect_ids(tok, "a a", (int[]){5, 5}, 2);
    expect_ids(tok, "<s>a", (int[]){9, 2}, 2);
    tokenizer_free(tok);
}
END_TEST

/* Split on "-" with each behavior, where the merges "a -" and "- b" show
 * which pieces stayed together: "a-b" is a - b when the three are apart,
 * "a-" b when '-' goes with the previous piece, a "-b" with the next. */
static void split_case(const char *behavior, const char *text, const int *want, int n)
{
    char json[1024];
    snprintf(json, sizeof json,
             "{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1, \"-\": 2, \"a-\": 3, \"-b\": 4, "
             "\"--\": 5, \"a-b\": 6}, \"merges\": [\"a -\", \"- b\", \"- -\", \"a- b\"]}, \"pre_tokenizer\": "
             "{\"type\": \"Split\", \"pattern\": {\"String\": \"-\"}, \"behavior\": \"%s\", \"invert\": false}}",
             behavior);
    Tokenizer *tok = load_ok(json, NULL);
    expect_ids(tok, text, want, n);
    tokenizer_free(tok);
}

START_TEST(split_behaviors)
{
    split_case("Removed", "a-b", (int[]){0, 1}, 2);
    split_case("Isolated", "a-b", (int[]){0, 2, 1}, 3);
    split_case("MergedWithPrevious", "a-b", (int[]){3, 1}, 2);
    split_case("MergedWithNext", "a-b", (int[]){0, 4}, 2);
    split_case("Contiguous", "a--b", (int[]){0, 5, 1}, 3); /* the two '-' stay one piece */
    split_case("Isolated", "a--b", (int[]){0, 2, 2, 1}, 4);
}
END_TEST

/* transformers' Llama tokenizer puts BOS and EOS as tokenizer_config.json's
 * add_bos_token / add_eos_token say, whatever the post-processor: [9, 5, 10]. */
START_TEST(llama_config_eos)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, " SPM_NORMALIZER ", " BOS_TEMPLATE
                             ", " ADDED_S "}",
                             "{\"tokenizer_class\": \"LlamaTokenizer\", \"add_eos_token\": true, "
                             "\"bos_token\": \"<s>\", \"eos_token\": {\"content\": \"</s>\"}}");
    expect_ids(tok, "a", (int[]){9, 5, 10}, 3);
    tokenizer_free(tok);
}
END_TEST

/* A piece as text: the byte alphabet's Ġ (U+0120) is the space byte, Ċ the
 * newline; "▁" a space; <0x0A> the newline byte; <0xC3> alone is not UTF-8:
 * U+FFFD. */
START_TEST(piece_text)
{
    Tokenizer *bl = load_ok("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"ĠMary\": 0, \"Ċ\": 1, \"Ã\": 2}, "
                            "\"merges\": []}, \"pre_tokenizer\": {\"type\": \"ByteLevel\"}}", NULL);
    Tokenizer *spm = load_ok("{\"model\": {\"type\": \"BPE\", \"byte_fallback\": true, " SPM_VOCAB "}, " ADDED_S
                             "}", NULL);
    const struct {
        const Tokenizer *tok;
        int id;
        const char *want;
    } cases[] = {{bl, 0, " Mary"}, {bl, 1, "\n"}, {bl, 2, "\xef\xbf\xbd"}, /* Ã is byte C3 */
                 {spm, 5, " a"}, {spm, 8, "\n"}, {spm, 3, "\xef\xbf\xbd"}, {spm, 9, "<s>"}};
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char *text = tokenizer_piece_text(cases[i].tok, cases[i].id);
        ck_assert_str_eq(text, cases[i].want);
        free(text);
    }
    ck_assert_ptr_null(tokenizer_piece_text(spm, 12));
    ck_assert_ptr_null(tokenizer_piece_text(spm, -1));
    tokenizer_free(bl);
    tokenizer_free(spm);
}
END_TEST

/* GPT-2's byte-level BPE: " Mary" -> prefix-less ByteLevel maps the space
 * to Ġ: "ĠMary" is one piece (with ignore_merges, found whole). */
START_TEST(byte_level_whole_word)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", \"ignore_merges\": true, \"vocab\": {\"ĠMary\": 0, "
                             "\"Ġ\": 1, \"M\": 2, \"a\": 3, \"r\": 4, \"y\": 5}, \"merges\": []}, \"pre_tokenizer\": "
                             "{\"type\": \"ByteLevel\", \"add_prefix_space\": false, \"use_regex\": true}}", NULL);
    expect_ids(tok, " Mary", (int[]){0}, 1);
    expect_ids(tok, "Mary", (int[]){2, 3, 4, 5}, 4);
    tokenizer_free(tok);
}
END_TEST

/* ------------------------------------------------------------------------ */
/* Bad input                                                                 */

START_TEST(not_json)
{
    /* the trailing comma before "}" is at line 2, column 16 */
    expect_error("{\"model\":\n {\"type\": \"BPE\",}}", NULL, "tokenizer.json:2:16", "not JSON");
    expect_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {}, \"merges\": []}}", "{'a': 1}",
                 "tokenizer_config.json:1:2", "not JSON");
}
END_TEST

START_TEST(unsupported_parts)
{
    expect_error("{\"model\": {\"type\": \"WordPiece\", \"vocab\": {}}}", NULL, "tokenizer.json",
                 "model.type \"WordPiece\" is not supported");
    expect_error("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, \"normalizer\": {\"type\": \"Sequence\", "
                 "\"normalizers\": [{\"type\": \"Prepend\", \"prepend\": \"x\"}, {\"type\": \"Lowercase\"}]}}",
                 NULL, "tokenizer.json", "normalizer.normalizers[1].type \"Lowercase\" is not supported");
    expect_error("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, \"pre_tokenizer\": {\"type\": \"Sequence\", "
                 "\"pretokenizers\": [{\"type\": \"Whitespace\"}]}}",
                 NULL, "tokenizer.json", "pre_tokenizer.pretokenizers[0].type \"Whitespace\" is not supported");
    expect_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0, \"b\": 1}, \"merges\": [\"a b\"]}}", NULL,
                 "tokenizer.json", "model.merges[0]: \"ab\" is not in model.vocab");
    expect_error("{\"model\": {\"type\": \"BPE\", \"vocab\": {\"a\": 0.5}, \"merges\": []}}", NULL,
                 "tokenizer.json", "model.vocab[\"a\"] must be a token id");
    expect_error("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, \"pre_tokenizer\": {\"type\": \"Split\", "
                 "\"pattern\": {\"Regex\": \"(a\"}, \"behavior\": \"Isolated\"}}",
                 NULL, "tokenizer.json", "pre_tokenizer.pattern: the regex does not compile");
    /* the template's <s> is id 9, but no added_tokens: the ids end at 8 (found by fuzzing) */
    expect_error("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}, " BOS_TEMPLATE "}", NULL, "tokenizer.json",
                 "post_processor: special token id 9 is not in the vocabulary or added_tokens");
}
END_TEST

START_TEST(missing_folder)
{
    char err[MHAVIZ_ERRLEN];
    ck_assert_ptr_null(tokenizer_load("/nonexistent-mhaviz-folder", err, sizeof err));
    ck_assert_str_eq(err, "/nonexistent-mhaviz-folder/tokenizer.json: cannot read: No such file or directory");
}
END_TEST

START_TEST(empty_text)
{
    Tokenizer *tok = load_ok("{\"model\": {\"type\": \"BPE\", " SPM_VOCAB "}}", NULL);
    int *ids = (int *)1, n = 7;
    char err[MHAVIZ_ERRLEN];
    ck_assert_int_eq(tokenizer_encode(tok, "", &ids, &n, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_ptr_null(ids);
    ck_assert_int_eq(n, 0);
    ck_assert_str_eq(err, "the text is empty: a model needs at least one token");
    ck_assert_int_eq(tokenizer_encode(tok, "a\xff", &ids, &n, err, sizeof err), MHAVIZ_EINPUT);
    ck_assert_str_eq(err, "the text is not UTF-8 at byte 1");
    tokenizer_free(tok);
}
END_TEST

Suite *tokenizer_suite(void)
{
    Suite *s = suite_create("tokenizer");
    TCase *tc = tcase_create("features");
    tcase_add_test(tc, lower_rank_merges_first);
    tcase_add_test(tc, byte_fallback_and_bos);
    tcase_add_test(tc, fuse_unk);
    tcase_add_test(tc, metaspace_first);
    tcase_add_test(tc, split_behaviors);
    tcase_add_test(tc, llama_config_eos);
    tcase_add_test(tc, piece_text);
    tcase_add_test(tc, byte_level_whole_word);
    suite_add_tcase(s, tc);
    TCase *bad = tcase_create("bad");
    tcase_add_test(bad, not_json);
    tcase_add_test(bad, unsupported_parts);
    tcase_add_test(bad, missing_folder);
    tcase_add_test(bad, empty_text);
    suite_add_tcase(s, bad);
    return s;
}
