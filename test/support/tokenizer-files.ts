/**
 * Hand-made tokenizer.json files for tokenizer tests, in the formats the families use:
 * - byte-level BPE (Llama-3 / Qwen2 style): Split(regex, Isolated) + ByteLevel(use_regex false),
 *   all 256 byte tokens plus merges trained here on a small corpus, added special tokens, and a
 *   TemplateProcessing BOS (Llama-3) or a plain ByteLevel post-processor (Qwen2, with NFC);
 * - WordLevel with Lowercase + Whitespace, [UNK]/[MASK] (the embedded tiny models' style).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { bytesToUnicode } from "../../src/checkpoint/offsets.js";

export const LLAMA3_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
export const QWEN2_REGEX =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

// GPT-2 bytes → printable chars: the library's own table. The tokenizer tests compare against the
// Rust HF tokenizers, which read these vocabularies with theirs, so a wrong table still fails there.
export { bytesToUnicode };

const CORPUS = [
  "The capital of France is Paris. Who wrote the book? She wrote it in 1999.",
  "hello world, hello there! the cat sat on the mat; the dog sat on the log.",
  "Question: what is the answer?\nAnswer: the answer is 42.\n\nPassages:\n[1] text",
  "héllo wörld naïve café — über straße 🤗 emoji",
];

/** Train `n` BPE merges on the corpus (greedy most-frequent pair), over byte-level words. */
function trainMerges(n: number): [string, string][] {
  const b2u = bytesToUnicode();
  const enc = new TextEncoder();
  const words = new Map<string, number>();
  for (const line of CORPUS) {
    for (const m of line.matchAll(/ ?\p{L}+| ?\p{N}| ?[^\s\p{L}\p{N}]+|\s+/gu)) {
      const w = [...enc.encode(m[0])].map((b) => b2u[b]).join("\u0001");
      words.set(w, (words.get(w) ?? 0) + 1);
    }
  }
  let seqs = [...words].map(([w, c]) => ({ syms: w.split("\u0001"), c }));
  const merges: [string, string][] = [];
  for (let k = 0; k < n; k++) {
    const counts = new Map<string, number>();
    for (const { syms, c } of seqs) {
      for (let i = 0; i + 1 < syms.length; i++) {
        const key = syms[i] + "\u0001" + syms[i + 1];
        counts.set(key, (counts.get(key) ?? 0) + c);
      }
    }
    let best = "",
      bc = 0;
    for (const [key, c] of counts)
      if (c > bc || (c === bc && key < best)) {
        best = key;
        bc = c;
      }
    if (bc < 2) break;
    const [a, b] = best.split("\u0001");
    merges.push([a, b]);
    seqs = seqs.map(({ syms, c }) => {
      const out: string[] = [];
      for (let i = 0; i < syms.length; i++) {
        if (i + 1 < syms.length && syms[i] === a && syms[i + 1] === b) {
          out.push(a + b);
          i++;
        } else out.push(syms[i]);
      }
      return { syms: out, c };
    });
  }
  return merges;
}

export interface ByteLevelOptions {
  style: "llama3" | "qwen2";
  specials: string[];
  /** Llama-3: TemplateProcessing with this BOS. */
  bos?: string;
  merges?: number;
  /** Merges written as "a b" strings (old format) instead of [a, b] pairs. */
  stringMerges?: boolean;
}

export function byteLevelBpe(o: ByteLevelOptions): Record<string, unknown> {
  const b2u = bytesToUnicode();
  const vocab: Record<string, number> = {};
  for (let b = 0; b < 256; b++) vocab[b2u[b]] = b;
  const merges = trainMerges(o.merges ?? 80);
  for (const [a, b] of merges) if (!(a + b in vocab)) vocab[a + b] = Object.keys(vocab).length;
  let next = Object.keys(vocab).length;
  const added = o.specials.map((content) => ({
    id: next++,
    content,
    single_word: false,
    lstrip: false,
    rstrip: false,
    normalized: false,
    special: true,
  }));
  const byteLevelPost = { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: false };
  const bosId = o.bos === undefined ? undefined : added.find((t) => t.content === o.bos)!.id;
  const post =
    o.bos === undefined
      ? byteLevelPost
      : {
          type: "Sequence",
          processors: [
            byteLevelPost,
            {
              type: "TemplateProcessing",
              single: [{ SpecialToken: { id: o.bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
              pair: [
                { SpecialToken: { id: o.bos, type_id: 0 } },
                { Sequence: { id: "A", type_id: 0 } },
                { SpecialToken: { id: o.bos, type_id: 1 } },
                { Sequence: { id: "B", type_id: 1 } },
              ],
              special_tokens: { [o.bos]: { id: o.bos, ids: [bosId], tokens: [o.bos] } },
            },
          ],
        };
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer: o.style === "qwen2" ? { type: "NFC" } : null,
    pre_tokenizer: {
      type: "Sequence",
      pretokenizers: [
        { type: "Split", pattern: { Regex: o.style === "qwen2" ? QWEN2_REGEX : LLAMA3_REGEX }, behavior: "Isolated", invert: false },
        { type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: false },
      ],
    },
    post_processor: post,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: o.style === "llama3",
      vocab,
      merges: o.stringMerges ? merges.map(([a, b]) => `${a} ${b}`) : merges,
    },
  };
}

export function wordLevel(words: string[]): Record<string, unknown> {
  const vocab: Record<string, number> = { "[UNK]": 0, "[MASK]": 1, "[BOS]": 2 };
  for (const w of words) if (!(w in vocab)) vocab[w] = Object.keys(vocab).length;
  return {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [
      { id: 0, content: "[UNK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 1, content: "[MASK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
      { id: 2, content: "[BOS]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true },
    ],
    normalizer: { type: "Lowercase" },
    pre_tokenizer: { type: "Whitespace" },
    post_processor: null,
    decoder: null,
    model: { type: "WordLevel", vocab, unk_token: "[UNK]" },
  };
}

/** Write tokenizer.json (+ tokenizer_config.json) into `dir`; returns the tokenizer.json path. */
export function writeTokenizerDir(dir: string, json: Record<string, unknown>, config: Record<string, unknown> = {}): string {
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, "tokenizer.json"), JSON.stringify(json));
  fs.writeFileSync(path.join(dir, "tokenizer_config.json"), JSON.stringify(config));
  return path.join(dir, "tokenizer.json");
}
