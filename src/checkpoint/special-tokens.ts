/**
 * Special tokens as the tokenizer files describe them: token string → id through tokenizer.json
 * (added_tokens, then the model vocab), the special-token strings of tokenizer_config.json, and
 * whether encoding plain text adds a BOS (read from the post-processor, which is what really
 * runs, not from the family's reputation).
 */
import type { TokenizerFiles } from "./types.js";

/** tokenizer_config.json stores a special token as a string or as {content: string, ...}. */
export function specialTokenString(config: Record<string, unknown>, key: string): string | undefined {
  const v = config[key];
  if (typeof v === "string") return v;
  if (v !== null && typeof v === "object" && typeof (v as { content?: unknown }).content === "string") {
    return (v as { content: string }).content;
  }
  return undefined;
}

/** Id of a token string in tokenizer.json (added tokens first, then the model vocab). */
export function tokenIdInFiles(files: TokenizerFiles, token: string): number | undefined {
  const added = files.json.added_tokens;
  if (Array.isArray(added)) {
    for (const t of added) {
      if (t && typeof t === "object" && (t as { content?: unknown }).content === token) {
        const id = (t as { id?: unknown }).id;
        if (Number.isSafeInteger(id)) return id as number;
      }
    }
  }
  const model = files.json.model as { vocab?: unknown } | undefined;
  const vocab = model?.vocab;
  if (vocab && typeof vocab === "object" && !Array.isArray(vocab)) {
    const id = (vocab as Record<string, unknown>)[token];
    if (Object.hasOwn(vocab, token) && Number.isSafeInteger(id)) return id as number;
  }
  if (Array.isArray(vocab)) {
    // Unigram: [[piece, score], ...], the id is the index.
    const i = vocab.findIndex((e) => Array.isArray(e) && e[0] === token);
    if (i >= 0) return i;
  }
  return undefined;
}

/** Id of tokenizer_config's `bos_token` / `eos_token` / `pad_token` / `unk_token`, if resolvable. */
export function configTokenId(files: TokenizerFiles, key: "bos_token" | "eos_token" | "pad_token" | "unk_token"): number | undefined {
  const s = specialTokenString(files.config, key);
  return s === undefined ? undefined : tokenIdInFiles(files, s);
}

/**
 * The special tokens the post-processor puts in front of a single sequence, e.g.
 * `["<|begin_of_text|>"]` for Llama-3's TemplateProcessing, `["[CLS]"]` for BERT; [] when none.
 */
export function templatePrefixTokens(json: Record<string, unknown>): string[] {
  return prefixOf(json.post_processor, 0);
}

function prefixOf(pp: unknown, depth: number): string[] {
  if (pp === null || typeof pp !== "object" || depth > 8) return [];
  const p = pp as Record<string, unknown>;
  switch (p.type) {
    case "TemplateProcessing": {
      const out: string[] = [];
      for (const piece of Array.isArray(p.single) ? p.single : []) {
        const sp = (piece as { SpecialToken?: { id?: unknown } } | null)?.SpecialToken;
        if (!sp || typeof sp.id !== "string") break;
        out.push(sp.id);
      }
      return out;
    }
    case "BertProcessing":
    case "RobertaProcessing": {
      const cls = p.cls;
      return Array.isArray(cls) && typeof cls[0] === "string" ? [cls[0]] : [];
    }
    case "Sequence": {
      const out: string[] = [];
      for (const sub of Array.isArray(p.processors) ? p.processors : []) out.push(...prefixOf(sub, depth + 1));
      return out;
    }
    default:
      return [];
  }
}

/**
 * Whether encoding plain text adds a BOS. Order of evidence: the post-processor of tokenizer.json
 * (what our tokenizer actually runs), then `add_bos_token` in tokenizer_config.json, then the
 * family default.
 */
export function addsBosFromFiles(files: TokenizerFiles | undefined, familyDefault: boolean): boolean {
  if (files) {
    if (files.json.post_processor !== undefined && files.json.post_processor !== null) {
      return templatePrefixTokens(files.json).length > 0;
    }
    if (typeof files.config.add_bos_token === "boolean") return files.config.add_bos_token;
    return false;
  }
  return familyDefault;
}
