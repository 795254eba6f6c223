/**
 * Token text as a reader sees it: ONE rule for every figure axis, hover text, table and the widget.
 *
 * Tokenizers store token strings in their own alphabets. Byte-level BPE (GPT-2, SmolLM2, Qwen2,
 * Llama-3) maps every byte to a printable character first, so " helpful" is stored as "Ġhelpful",
 * "\n" as "Ċ" and "\t" as "ĉ"; SentencePiece (Llama-2, Mistral, Gemma) writes a space as "▁" and
 * bytes it has no piece for as "<0x0A>". Shown raw, these markers make every SmolLM axis unreadable.
 *
 * What `displayToken` shows:
 * - the token's real text, decoded by its tokenizer's kind (below);
 * - whitespace made visible: space → "·", newline → "↵", tab → "→", carriage return → "␍", other
 *   control characters → their Unicode control pictures ("\x01" → "␁");
 * - bytes that are not a whole UTF-8 character (a character split across tokens) → "\xE2" per byte.
 *
 * Which decoding applies (the tokenizer kind):
 * - "byte-level": every character is mapped back through GPT-2's byte-to-unicode table and the bytes
 *   read as UTF-8. A token with a character outside that table (an added special token such as
 *   "<|im_start|>" is plain ASCII and inside it) is shown as it is.
 * - "sentencepiece": "▁" is a space and a whole "<0xNN>" token is that byte.
 * - "plain" (word-level, char-level, anything else): nothing is decoded, so a literal "Ġ" or "▁" in
 *   such a vocabulary stays as it is; only whitespace is made visible.
 * When the kind is not known (traces do not record it), `inferTokenizerKind` decides from the
 * sequence's own tokens: byte-level when some token made only of byte-alphabet characters carries a
 * byte-level whitespace marker (Ġ Ċ ĉ č) and no token contains a raw space or newline (a byte-level
 * vocabulary cannot store a raw space; a char-level one with a "Ġ" token has one);
 * "sentencepiece" when some token contains "▁" and none a raw space; otherwise "plain". Where the
 * text each token came from is known (a trace's offsets), a token whose source text is literally
 * the token ("Ġ" read from "Ġ") decides "plain" whatever the markers. The one ambiguous case left
 * (a whitespace-split word vocabulary whose words contain "Ġ", no source text) is settled by passing
 * the kind.
 */

export type TokenizerKind = "byte-level" | "sentencepiece" | "plain";

/** GPT-2's bytes_to_unicode: printable Latin-1 bytes map to themselves, the other 68 to U+0100… in byte order. */
const BYTE_OF_CHAR: ReadonlyMap<number, number> = (() => {
  const m = new Map<number, number>();
  const printable = (b: number) => (b >= 0x21 && b <= 0x7e) || (b >= 0xa1 && b <= 0xac) || (b >= 0xae && b <= 0xff);
  let extra = 0;
  for (let b = 0; b < 256; b++) {
    if (printable(b)) m.set(b, b);
    else m.set(0x100 + extra++, b);
  }
  return m;
})();

/** Byte-level characters that stand for whitespace bytes: Ġ (space), Ċ (newline), ĉ (tab), č (CR). */
const BYTE_LEVEL_WHITESPACE = /[\u0120\u010a\u0109\u010d]/;

const SPACE_MARK = "·";
const NEWLINE_MARK = "↵";
const TAB_MARK = "→";

/** Whitespace and control characters of real text as visible marks (every kind ends here). */
export function visibleWhitespace(s: string): string {
  let out = "";
  for (const ch of s) {
    const c = ch.codePointAt(0)!;
    if (ch === " ") out += SPACE_MARK;
    else if (ch === "\n") out += NEWLINE_MARK;
    else if (ch === "\t") out += TAB_MARK;
    else if (c < 0x20) out += String.fromCharCode(0x2400 + c);
    else if (c === 0x7f) out += "␡";
    else out += ch;
  }
  return out;
}

const hexByte = (b: number) => `\\x${b.toString(16).toUpperCase().padStart(2, "0")}`;

/** UTF-8 bytes → text; a byte that does not start or continue a valid character becomes "\xNN". */
function decodeUtf8Lenient(bytes: number[]): string {
  let out = "";
  let i = 0;
  while (i < bytes.length) {
    const b = bytes[i];
    const len = b < 0x80 ? 1 : b >= 0xc2 && b <= 0xdf ? 2 : b >= 0xe0 && b <= 0xef ? 3 : b >= 0xf0 && b <= 0xf4 ? 4 : 0;
    const seq = bytes.slice(i, i + len);
    if (len > 0 && seq.length === len && seq.slice(1).every((x) => x >= 0x80 && x <= 0xbf)) {
      try {
        out += new TextDecoder("utf-8", { fatal: true }).decode(Uint8Array.from(seq));
        i += len;
        continue;
      } catch {
        // overlong or surrogate encodings: shown byte by byte below
      }
    }
    out += hexByte(b);
    i++;
  }
  return out;
}

/** The text a byte-level token stands for, or undefined when a character is outside the byte alphabet. */
function decodeByteLevel(token: string): string | undefined {
  const bytes: number[] = [];
  for (const ch of token) {
    const b = BYTE_OF_CHAR.get(ch.codePointAt(0)!);
    if (b === undefined) return undefined;
    bytes.push(b);
  }
  return decodeUtf8Lenient(bytes);
}

/** Raw text of a token in the given kind's alphabet, before whitespace is made visible. */
export function decodeToken(token: string, kind: TokenizerKind): string {
  if (kind === "byte-level") return decodeByteLevel(token) ?? token;
  if (kind === "sentencepiece") {
    const m = /^<0x([0-9A-Fa-f]{2})>$/.exec(token);
    if (m) return decodeUtf8Lenient([parseInt(m[1], 16)]);
    return token.replace(/\u2581/g, " ");
  }
  return token;
}

/**
 * A token as shown on an axis, in a hover text, a table cell or the head view (module doc has the
 * rule). `kind` omitted: the token alone decides (`inferTokenizerKind([token])`); pass the kind of
 * the whole sequence (`inferTokenizerKind(tokens)`, or `displayTokens`) when you have it.
 */
export function displayToken(token: string, kind?: TokenizerKind): string {
  const k = kind ?? inferTokenizerKind([String(token)]);
  return visibleWhitespace(decodeToken(String(token), k));
}

/** Every token of one sequence shown with the kind inferred from the whole sequence. */
export function displayTokens(tokens: readonly string[], kind?: TokenizerKind, sources?: readonly (string | undefined)[]): string[] {
  const k = kind ?? inferTokenizerKind(tokens, sources);
  return tokens.map((t) => visibleWhitespace(decodeToken(String(t), k)));
}

/**
 * The tokenizer kind of a sequence judged from its tokens (module doc has the rule). `sources[i]`,
 * when given, is the text token i was read from (e.g. from a trace's character offsets); an empty
 * or absent source says nothing.
 */
export function inferTokenizerKind(tokens: readonly string[], sources?: readonly (string | undefined)[]): TokenizerKind {
  let byteMarker = false;
  let rawSpace = false;
  let metaspace = false;
  let literal = false;
  tokens.forEach((raw, i) => {
    const t = String(raw);
    if (/[ \n]/.test(t)) rawSpace = true;
    if (t.includes("\u2581")) metaspace = true;
    // A marker counts only in a token wholly inside the byte alphabet (added tokens may be anything).
    if (BYTE_LEVEL_WHITESPACE.test(t) && [...t].every((ch) => BYTE_OF_CHAR.has(ch.codePointAt(0)!))) byteMarker = true;
    const src = sources?.[i];
    if (src && src === t && (BYTE_LEVEL_WHITESPACE.test(t) || t.includes("\u2581"))) literal = true;
  });
  if (literal || rawSpace) return "plain";
  if (byteMarker) return "byte-level";
  if (metaspace) return "sentencepiece";
  return "plain";
}

/**
 * The kind a tokenizer.json declares: a ByteLevel pre-tokenizer or decoder → "byte-level"; a
 * Metaspace one (or a SentencePiece-style "▁" Replace decoder) → "sentencepiece"; otherwise "plain".
 */
export function tokenizerKindOf(tokenizerJson: unknown): TokenizerKind {
  const seen = new Set<string>();
  const walk = (c: unknown, depth: number): void => {
    if (depth > 8 || c === null || typeof c !== "object") return;
    const o = c as Record<string, unknown>;
    if (typeof o.type === "string") seen.add(o.type);
    if (o.type === "Replace" && JSON.stringify(o.pattern ?? "").includes("\u2581")) seen.add("Metaspace");
    for (const key of ["pretokenizers", "decoders", "normalizers"]) {
      const list = o[key];
      if (Array.isArray(list)) for (const s of list) walk(s, depth + 1);
    }
  };
  const j = (tokenizerJson ?? {}) as Record<string, unknown>;
  walk(j.pre_tokenizer, 0);
  walk(j.decoder, 0);
  walk(j.normalizer, 0);
  if (seen.has("ByteLevel")) return "byte-level";
  if (seen.has("Metaspace")) return "sentencepiece";
  return "plain";
}

/**
 * Labels that may or may not be tokens (a user's heatmap axis, a table column): decoded and marked
 * like `displayTokens` only when they read as a byte-level or SentencePiece sequence; anything else
 * (layer names, "doc 3", model names) is returned unchanged.
 */
export function displayLabels(labels: readonly string[]): string[] {
  const kind = inferTokenizerKind(labels);
  return kind === "plain" ? [...labels] : displayTokens(labels, kind);
}
