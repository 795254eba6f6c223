/**
 * GGUF tokenizer metadata → the `tokenizer.json` + `tokenizer_config.json` pair our tokenizer
 * loader reads (tokenizer.ts), so a GGUF model gets the same tokenizer object, offsets included.
 *
 * Read: `tokenizer.ggml.model` (only "gpt2", byte-level BPE, is supported), `.tokens`, `.merges`,
 * `.token_type` (3 = control → special added token, 4 = user-defined → plain added token),
 * the special ids, `.add_bos_token`, and `.pre`, the name llama.cpp gives a pre-tokenizer
 * (which regexes split the text before BPE). `.pre` is mapped to the Hugging Face pre-tokenizer
 * with the same splits:
 *   gpt2 / default      ByteLevel with GPT-2's regex
 *   smollm (and the starcoder-style names llama.cpp groups with it)
 *                       each digit alone, then ByteLevel with GPT-2's regex
 *   llama-bpe / llama3  Llama-3's Split regex (digits in runs of 1–3), then ByteLevel without regex
 *   qwen2 / dream       Qwen2's Split regex (single digits), then ByteLevel without regex; NFC first
 * Any other name is refused with the list, rather than tokenizing differently from llama.cpp.
 */
import { CheckpointError } from "../../util/errors.js";
import type { TokenizerFiles } from "../types.js";
import type { GgufMetadata } from "./metadata.js";

const TOKEN_CONTROL = 3;
const TOKEN_USER_DEFINED = 4;

const LLAMA3_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}{1,3}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";
const QWEN2_SPLIT =
  "(?i:'s|'t|'re|'ve|'m|'ll|'d)|[^\\r\\n\\p{L}\\p{N}]?\\p{L}+|\\p{N}| ?[^\\s\\p{L}\\p{N}]+[\\r\\n]*|\\s*[\\r\\n]+|\\s+(?!\\S)|\\s+";

const byteLevel = (useRegex: boolean) => ({ type: "ByteLevel", add_prefix_space: false, trim_offsets: true, use_regex: useRegex });
const split = (pattern: string) => ({ type: "Split", pattern: { Regex: pattern }, behavior: "Isolated", invert: false });

/** llama.cpp pre-tokenizer name → [normalizer, pre_tokenizer]. */
const PRE: Record<string, () => [unknown, unknown]> = {
  gpt2: () => [null, byteLevel(true)],
  default: () => [null, byteLevel(true)],
  smollm: () => [null, { type: "Sequence", pretokenizers: [{ type: "Digits", individual_digits: true }, byteLevel(true)] }],
  starcoder: () => PRE.smollm(),
  refact: () => PRE.smollm(),
  "llama-bpe": () => [null, { type: "Sequence", pretokenizers: [split(LLAMA3_SPLIT), byteLevel(false)] }],
  llama3: () => PRE["llama-bpe"](),
  qwen2: () => [{ type: "NFC" }, { type: "Sequence", pretokenizers: [split(QWEN2_SPLIT), byteLevel(false)] }],
};

export const SUPPORTED_PRE_TOKENIZERS = Object.keys(PRE);

/** Build the tokenizer files from GGUF metadata, or undefined when the file has no vocabulary. */
export function tokenizerFromGguf(meta: GgufMetadata): TokenizerFiles | undefined {
  const model = meta.string("tokenizer.ggml.model");
  const tokens = meta.stringArray("tokenizer.ggml.tokens");
  if (model === undefined && tokens === undefined) return undefined;
  if (model !== "gpt2") {
    throw new CheckpointError("Unsupported GGUF tokenizer model", {
      file: meta.file,
      field: "tokenizer.ggml.model",
      expected: '"gpt2" (byte-level BPE)',
      found: JSON.stringify(model ?? null),
      hint: 'SentencePiece ("llama") vocabularies are not converted yet; use the model\'s Hugging Face tokenizer.json',
    });
  }
  if (tokens === undefined || tokens.length === 0) {
    throw new CheckpointError("GGUF tokenizer has no tokens", {
      file: meta.file,
      field: "tokenizer.ggml.tokens",
      expected: "an array of strings",
      found: "missing",
    });
  }
  // A vocabulary whose every token is "" can encode nothing; refused here, as a checkpoint error,
  // before an encode fails on whatever text the user gave.
  if (tokens.every((t) => t === "")) {
    throw new CheckpointError("GGUF vocabulary has no token text", {
      file: meta.file,
      field: "tokenizer.ggml.tokens",
      expected: "token strings (byte-level BPE pieces)",
      found: `${tokens.length} empty strings`,
    });
  }
  const merges = meta.stringArray("tokenizer.ggml.merges") ?? [];
  const types = meta.intArray("tokenizer.ggml.token_type");
  if (types !== undefined && types.length !== tokens.length) {
    throw new CheckpointError("GGUF token types do not match the tokens", {
      file: meta.file,
      field: "tokenizer.ggml.token_type",
      expected: `${tokens.length} entries (one per token)`,
      found: `${types.length}`,
    });
  }
  const preName = meta.string("tokenizer.ggml.pre") ?? "default";
  const pre = PRE[preName];
  if (pre === undefined) {
    throw new CheckpointError("Unsupported GGUF pre-tokenizer", {
      file: meta.file,
      field: "tokenizer.ggml.pre",
      expected: `one of ${SUPPORTED_PRE_TOKENIZERS.join(", ")}`,
      found: JSON.stringify(preName),
    });
  }
  const [normalizer, preTokenizer] = pre();

  const vocab: Record<string, number> = Object.create(null);
  const added: Record<string, unknown>[] = [];
  tokens.forEach((t, id) => {
    // The first id wins for a duplicated string, as in the Rust BPE builder's vocab map.
    if (!(t in vocab)) vocab[t] = id;
    const type = types?.[id];
    if (type === TOKEN_CONTROL || type === TOKEN_USER_DEFINED) {
      added.push({
        id,
        content: t,
        single_word: false,
        lstrip: false,
        rstrip: false,
        normalized: type === TOKEN_USER_DEFINED,
        special: type === TOKEN_CONTROL,
      });
    }
  });
  const n = tokens.length;
  const special = (key: string) => {
    const id = meta.int(`tokenizer.ggml.${key}`, { min: 0, max: n - 1 });
    return id === undefined ? undefined : tokens[id];
  };
  const bos = special("bos_token_id");
  const addBos = meta.bool("tokenizer.ggml.add_bos_token") ?? (preName === "llama-bpe" || preName === "llama3");
  if (addBos && bos === undefined) {
    throw new CheckpointError("GGUF tokenizer adds a BOS token it does not name", {
      file: meta.file,
      field: "tokenizer.ggml.bos_token_id",
      expected: "a token id",
      found: "missing",
    });
  }
  const postProcessor = addBos
    ? {
        type: "TemplateProcessing",
        single: [{ SpecialToken: { id: bos, type_id: 0 } }, { Sequence: { id: "A", type_id: 0 } }],
        pair: [
          { SpecialToken: { id: bos, type_id: 0 } },
          { Sequence: { id: "A", type_id: 0 } },
          { SpecialToken: { id: bos, type_id: 1 } },
          { Sequence: { id: "B", type_id: 1 } },
        ],
        special_tokens: { [bos!]: { id: bos, ids: [meta.int("tokenizer.ggml.bos_token_id")], tokens: [bos] } },
      }
    : { type: "ByteLevel", add_prefix_space: false, trim_offsets: false, use_regex: true };
  const json: Record<string, unknown> = {
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: added,
    normalizer,
    pre_tokenizer: preTokenizer,
    post_processor: postProcessor,
    decoder: { type: "ByteLevel", add_prefix_space: true, trim_offsets: true, use_regex: true },
    model: {
      type: "BPE",
      dropout: null,
      unk_token: null,
      continuing_subword_prefix: null,
      end_of_word_suffix: null,
      fuse_unk: false,
      byte_fallback: false,
      ignore_merges: false,
      vocab,
      merges,
    },
  };
  const config: Record<string, unknown> = { add_bos_token: addBos, add_eos_token: meta.bool("tokenizer.ggml.add_eos_token") ?? false };
  for (const [key, name] of [
    ["bos_token", "bos_token_id"],
    ["eos_token", "eos_token_id"],
    ["pad_token", "padding_token_id"],
    ["unk_token", "unknown_token_id"],
    ["mask_token", "mask_token_id"],
  ] as const) {
    const s = special(name);
    if (s !== undefined) config[key] = s;
  }
  const chatTemplate = meta.string("tokenizer.chat_template");
  return { path: meta.file, json, config, chatTemplate };
}
