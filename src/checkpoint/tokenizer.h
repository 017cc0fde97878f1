/* tokenizer.h — text to token ids as Hugging Face's tokenizers does it, from
 * a model folder's tokenizer.json (docs/tokenizers.md lists what is read).
 *
 * The steps run in the order the tokenizers library documents: added and
 * special tokens are cut out of the text first, then each remaining part is
 * normalized, pre-tokenized (split into words, bytes mapped for byte-level
 * BPE), cut into the model's pieces by BPE merges, and the post-processor
 * adds its special tokens (a BOS) around the whole. */
#ifndef MHAVIZ_TOKENIZER_H
#define MHAVIZ_TOKENIZER_H

#include <stddef.h>

typedef struct Tokenizer Tokenizer;

/* Read DIR/tokenizer.json (and DIR/tokenizer_config.json when present).
 * Returns NULL with a message naming the file and the JSON field on error
 * (unsupported normalizer / pre-tokenizer / model named in the message), or
 * the file with line:column when it is not JSON. Caller frees with
 * tokenizer_free. */
Tokenizer *tokenizer_load(const char *dir, char *err, size_t errlen);
void tokenizer_free(Tokenizer *tok);

/* The ids `tokenizer(text)` gives in Hugging Face tokenizers (post-processor's
 * special tokens such as BOS included). *ids is malloc'd (n_ids ints; caller
 * frees). 0 on success, a status of core/status.h with a message otherwise:
 * empty text, text that is not UTF-8 or gives no token is MHAVIZ_EINPUT. */
int tokenizer_encode(const Tokenizer *tok, const char *text, int **ids, int *n_ids,
                     char *err, size_t errlen);

/* A piece's text for display, malloc'd UTF-8 (caller frees): "ĠMary" -> " Mary",
 * "▁Mary" -> " Mary", "<0x0A>" -> "\n" (the byte itself); a byte that is not
 * valid UTF-8 on its own is U+FFFD, as text/token_text.h shows it. An id with
 * no piece gives "", an id outside 0..tokenizer_vocab_size()-1 NULL. */
char *tokenizer_piece_text(const Tokenizer *tok, int id);

/* One more than the largest id of the vocabulary and the added tokens. */
int tokenizer_vocab_size(const Tokenizer *tok);

/* How many ids the post-processor puts before the text's own (a BOS) and
 * after them: tokenizer_encode's first *n_prefix and last *n_suffix ids. */
void tokenizer_specials(const Tokenizer *tok, int *n_prefix, int *n_suffix);

#endif
