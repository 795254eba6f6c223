/**
 * `loadTokenizer(files)`: the checkpoint's own tokenizer.json run by `@huggingface/tokenizers`
 * (pure JS), with character offsets (offsets.ts) and the checkpoint's own Jinja chat template
 * rendered by `@huggingface/jinja`.
 *
 * Ids and token strings always come from the library. Offsets come from replaying its pipeline;
 * when the replay does not reproduce the library's tokens exactly, offsets fall back to a
 * decode-and-search alignment and the encoding says `offsetsExact: false`.
 *
 * Three library gaps are patched here, each checked against Rust `tokenizers` in the tests:
 * - WordLevel models go through the library's "Legacy" path, which takes the unknown token from
 *   tokenizer_config.json; we pass tokenizer.json's `model.unk_token` when the config has none,
 *   and report unknown words as the unk token string, as Rust does.
 * - The `Whitespace` pre-tokenizer uses JS `\w` (ASCII only); Rust's `\w` is Unicode, so
 *   "héllo" is one word there. We give it the Unicode class.
 * - The `Digits` pre-tokenizer splits on JS `\d` (ASCII); Rust splits on every Unicode number
 *   ("①", "١", "½": char::is_numeric). We give it `\p{N}` (SmolLM2's " ①" tokenized as Rust does).
 */
import { Template } from "@huggingface/jinja";
import { Tokenizer } from "@huggingface/tokenizers";
import type { ChatMessage, CharSpan, Encoding, TextTokenizer } from "./tokenizer-types.js";
import { CheckpointError, SettingsError } from "../util/errors.js";
import { piecesWithOffsets, type PipelineFlags, type Piece, type TokenizerInternals } from "./offsets.js";
import { specialTokenString } from "./special-tokens.js";
import type { TokenizerFiles } from "./types.js";

export interface TokenizerEncoding extends Encoding {
  /**
   * False when offsets are approximate: a normalizer that could not be aligned per character (a
   * whole section then shares one span), or the decode-and-search fallback (see module doc).
   */
  offsetsExact: boolean;
}

export interface LoadedTokenizer extends TextTokenizer {
  encode(text: string, options?: { addSpecialTokens?: boolean }): TokenizerEncoding;
  /** Special-token strings of tokenizer_config.json (bos, eos, pad, unk), when set. */
  readonly specialTokens: Readonly<Record<string, string>>;
  /** Ids of the added tokens marked special (BOS, EOS, mask, chat headers...). */
  readonly specialIds: ReadonlySet<number>;
  /** The Jinja chat template, when the checkpoint has one. */
  readonly chatTemplate: string | undefined;
  /** Largest token id + 1 (the model's logits may be wider: padded vocabularies). */
  readonly size: number;
}

/** Optional ids from the model config, used when tokenizer_config.json lacks the token strings. */
export interface TokenizerSpecHints {
  bosTokenId?: number;
  eosTokenIds?: number[];
}

const UNICODE_WORD = "\\p{Alphabetic}\\p{M}\\p{Nd}\\p{Pc}\\u200C\\u200D";
const WHITESPACE_RE = new RegExp(`[${UNICODE_WORD}]+|[^${UNICODE_WORD}\\s]+`, "gu");
// Rust's Digits splits on char::is_numeric (Unicode N: Nd, Nl, No — "①", "١", "½"); the library's on ASCII \d.
const DIGITS_ONE_RE = /[^\p{N}]+|\p{N}/gu;
const DIGITS_RUN_RE = /[^\p{N}]+|\p{N}+/gu;

/** Tokenizer model types of HF `tokenizers` (tokenizer.json `model.type`). */
export const TOKENIZER_MODEL_TYPES = ["BPE", "WordPiece", "WordLevel", "Unigram"] as const;

export function loadTokenizer(files: TokenizerFiles, spec: TokenizerSpecHints = {}): LoadedTokenizer {
  const model = (files.json.model ?? {}) as Record<string, unknown>;
  // The library guesses a model for a type it does not know (from the vocab's shape), which
  // tokenizes differently from the checkpoint's own tokenizer without a word: refuse instead.
  // An absent type is fine: Rust `tokenizers` and the library both infer it from the fields.
  if (model.type !== undefined && !(TOKENIZER_MODEL_TYPES as readonly unknown[]).includes(model.type)) {
    throw new CheckpointError("tokenizer.json has an unknown tokenizer model type", {
      file: files.path,
      field: "model.type",
      expected: TOKENIZER_MODEL_TYPES.map((t) => JSON.stringify(t)).join(", "),
      found: typeof model.type === "string" ? JSON.stringify(model.type.slice(0, 60)) : typeof model.type,
    });
  }
  const unkFromModel = typeof model.unk_token === "string" ? model.unk_token : undefined;
  const libConfig: Record<string, unknown> = { ...files.config };
  if (specialTokenString(libConfig, "unk_token") === undefined && unkFromModel !== undefined) libConfig.unk_token = unkFromModel;
  let lib: Tokenizer;
  try {
    lib = new Tokenizer(files.json, libConfig);
  } catch (e) {
    throw new CheckpointError("tokenizer.json cannot be loaded", {
      file: files.path,
      field: "model / pre_tokenizer / normalizer",
      found: (e as Error).message.slice(0, 200),
    });
  }
  const internals = lib as unknown as TokenizerInternals;
  patchWhitespace(internals.pre_tokenizer, files.json.pre_tokenizer);
  return new HfTokenizer(lib, internals, files, spec, pipelineFlags(files.json));
}

/**
 * Replace JS-ASCII `\w` with the Unicode class in every Whitespace pre-tokenizer, and ASCII `\d`
 * with Unicode numbers in every Digits pre-tokenizer (top level or in a Sequence).
 */
function patchWhitespace(instance: unknown, config: unknown): void {
  const c = config as { type?: string; pretokenizers?: unknown[] } | null;
  if (!c || !instance) return;
  if (c.type === "Whitespace") {
    (instance as { pre_tokenize_text: (t: string) => string[] }).pre_tokenize_text = (t: string) => t.match(WHITESPACE_RE) ?? [];
  } else if (c.type === "Digits") {
    const re = (c as { individual_digits?: boolean }).individual_digits ? DIGITS_ONE_RE : DIGITS_RUN_RE;
    (instance as { pre_tokenize_text: (t: string) => string[] }).pre_tokenize_text = (t: string) => t.match(re) ?? [];
  } else if (c.type === "Sequence" && Array.isArray(c.pretokenizers)) {
    const subs = (instance as { tokenizers?: unknown[] }).tokenizers ?? [];
    c.pretokenizers.forEach((sc, i) => patchWhitespace(subs[i], sc));
  }
}

function pipelineFlags(json: Record<string, unknown>): PipelineFlags {
  const flags: PipelineFlags = { byteLevel: false, trimOffsets: false };
  const walkPre = (c: unknown, depth: number): void => {
    const p = c as { type?: string; pretokenizers?: unknown[]; replacement?: string } | null;
    if (!p || depth > 8) return;
    if (p.type === "ByteLevel") flags.byteLevel = true;
    if (p.type === "Metaspace") flags.metaspace = p.replacement ?? "\u2581";
    if (p.type === "Sequence") for (const s of p.pretokenizers ?? []) walkPre(s, depth + 1);
  };
  const walkPost = (c: unknown, depth: number): void => {
    const p = c as { type?: string; processors?: unknown[]; trim_offsets?: boolean } | null;
    if (!p || depth > 8) return;
    if (p.type === "ByteLevel" && p.trim_offsets === true) flags.trimOffsets = true;
    if (p.type === "Sequence") for (const s of p.processors ?? []) walkPost(s, depth + 1);
  };
  walkPre(json.pre_tokenizer, 0);
  walkPost(json.post_processor, 0);
  return flags;
}

class HfTokenizer implements LoadedTokenizer {
  readonly specialTokens: Readonly<Record<string, string>>;
  readonly specialIds: ReadonlySet<number>;
  readonly chatTemplate: string | undefined;
  readonly size: number;
  private template: Template | undefined;
  private readonly unkId: number | undefined;
  private readonly unkToken: string | undefined;

  constructor(
    private readonly lib: Tokenizer,
    private readonly internals: TokenizerInternals,
    private readonly files: TokenizerFiles,
    spec: TokenizerSpecHints,
    private readonly flags: PipelineFlags,
  ) {
    const specials: Record<string, string> = {};
    for (const key of ["bos_token", "eos_token", "pad_token", "unk_token", "mask_token", "sep_token", "cls_token"]) {
      const s = specialTokenString(files.config, key);
      if (s !== undefined) specials[key] = s;
    }
    // Only when the key is absent: an explicit null (Qwen2's bos_token) means "none", as in HF.
    if (!("bos_token" in files.config) && spec.bosTokenId !== undefined) {
      const t = lib.id_to_token(spec.bosTokenId);
      if (t !== undefined) specials.bos_token = t;
    }
    if (!("eos_token" in files.config) && spec.eosTokenIds?.length) {
      const t = lib.id_to_token(spec.eosTokenIds[0]);
      if (t !== undefined) specials.eos_token = t;
    }
    this.specialTokens = specials;
    const decoder = lib.get_added_tokens_decoder();
    this.specialIds = new Set([...decoder].filter(([, t]) => t.special).map(([id]) => id));
    this.chatTemplate = files.chatTemplate;
    let max = -1;
    for (const id of lib.get_vocab(true).values()) max = Math.max(max, id);
    this.size = max + 1;
    const model = (files.json.model ?? {}) as { unk_token?: unknown };
    this.unkToken = typeof model.unk_token === "string" ? model.unk_token : specials.unk_token;
    this.unkId = this.unkToken !== undefined ? lib.token_to_id(this.unkToken) : undefined;
  }

  encode(text: string, options: { addSpecialTokens?: boolean } = {}): TokenizerEncoding {
    if (typeof text !== "string") {
      throw new SettingsError("Text to encode is not a string", { field: "text", expected: "a string", found: typeof text });
    }
    const addSpecialTokens = options.addSpecialTokens ?? true;
    const r = this.lib.encode(text, { add_special_tokens: addSpecialTokens });
    const rawTokens = r.tokens;
    const replayed = this.replayedOffsets(text, rawTokens);
    const offsetsExact = replayed !== undefined && !replayed.coarse;
    const offsets = replayed?.offsets ?? this.fallbackOffsets(text, rawTokens);
    const ids: number[] = [],
      tokens: string[] = [],
      spans: CharSpan[] = [],
      unknown: string[] = [];
    for (let i = 0; i < rawTokens.length; i++) {
      let id: number | undefined = r.ids[i];
      let token = rawTokens[i];
      if (id === undefined || id === null) {
        if (this.unkId === undefined) continue; // no unknown token: Rust drops the piece too
        id = this.unkId;
      }
      // WordLevel's unknown words come back as the raw word; Rust reports the unk token. Either way the
      // text it stood for is recorded, so callers can say which words the model never saw.
      if (id === this.unkId && this.unkToken !== undefined) {
        const wasRaw = this.lib.token_to_id(token) === undefined;
        if (wasRaw || !text.includes(this.unkToken)) {
          const [a, b] = offsets[i] ?? [0, 0];
          unknown.push(b > a ? text.slice(a, b) : token);
        }
        if (wasRaw) token = this.unkToken;
      }
      ids.push(id);
      tokens.push(token);
      spans.push(offsets[i]);
    }
    return { ids, tokens, offsets: spans, offsetsExact, unknown };
  }

  /** Replayed pieces, placed inside the library's post-processed token list. */
  private replayedOffsets(text: string, tokens: string[]): { offsets: CharSpan[]; coarse: boolean } | undefined {
    let replay: { pieces: Piece[]; coarse: boolean } | undefined;
    try {
      replay = piecesWithOffsets(this.internals, text, this.flags);
    } catch {
      return undefined;
    }
    if (!replay) return undefined;
    const pieces = replay.pieces;
    const n = pieces.length;
    for (let k = 0; k + n <= tokens.length; k++) {
      let ok = true;
      for (let j = 0; j < n && ok; j++) ok = tokens[k + j] === pieces[j].token;
      if (!ok) continue;
      const out: CharSpan[] = tokens.map(() => [0, 0] as CharSpan);
      for (let j = 0; j < n; j++) out[k + j] = pieces[j].span;
      return { offsets: out, coarse: replay.coarse };
    }
    return undefined;
  }

  /** Coarse alignment: search each token's decoded text from a cursor; specials not found get [0,0]. */
  private fallbackOffsets(text: string, tokens: string[]): CharSpan[] {
    let cursor = 0;
    return tokens.map((t) => {
      const id = this.lib.token_to_id(t);
      const surface =
        this.internals.added_tokens_map.has(t) || id === undefined
          ? t
          : this.lib.decode([id], { skip_special_tokens: false, clean_up_tokenization_spaces: false });
      const probe = surface.trim() || surface;
      const at = probe.length ? text.indexOf(probe, cursor) : -1;
      if (at < 0) return [0, 0] as CharSpan;
      cursor = at + probe.length;
      return [at, at + probe.length] as CharSpan;
    });
  }

  decode(ids: number[], options: { skipSpecialTokens?: boolean } = {}): string {
    if (ids.length === 0) return "";
    for (const [i, id] of ids.entries()) {
      if (!Number.isInteger(id) || id < 0 || this.lib.id_to_token(id) === undefined) {
        throw new SettingsError("Token id is not in the tokenizer's vocabulary", {
          file: this.files.path,
          field: `ids[${i}]`,
          expected: `an id in [0, ${this.size})`,
          found: String(id),
        });
      }
    }
    return this.lib.decode(ids, { skip_special_tokens: options.skipSpecialTokens ?? false });
  }

  /**
   * Render the checkpoint's own chat template, as HF `apply_chat_template(..., tokenize=False)`:
   * the template sees `messages`, `add_generation_prompt` and the special-token strings
   * (`bos_token`, `eos_token`, ...). Encode the result with `addSpecialTokens: false` when the
   * template already writes the BOS (Llama-3, LLaDA), or the BOS is doubled.
   */
  applyChatTemplate(messages: ChatMessage[], options: { addGenerationPrompt?: boolean } = {}): string {
    if (this.chatTemplate === undefined) {
      throw new CheckpointError("Checkpoint has no chat template", {
        file: this.files.path.replace(/tokenizer\.json$/, "tokenizer_config.json"),
        field: "chat_template",
        expected: "a Jinja template (tokenizer_config.json chat_template or chat_template.jinja)",
        hint: "use plain prompts (encode) for base models",
      });
    }
    try {
      this.template ??= new Template(this.chatTemplate);
      return this.template.render({
        ...this.specialTokens,
        messages,
        add_generation_prompt: options.addGenerationPrompt ?? false,
      });
    } catch (e) {
      throw new CheckpointError("Chat template failed to render", {
        file: this.files.path.replace(/tokenizer\.json$/, "tokenizer_config.json"),
        field: "chat_template",
        found: (e as Error).message.slice(0, 200),
      });
    }
  }

  idToToken(id: number): string | undefined {
    return this.lib.id_to_token(id);
  }

  tokenToId(token: string): number | undefined {
    return this.lib.token_to_id(token);
  }
}
