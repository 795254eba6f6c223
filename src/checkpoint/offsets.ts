/**
 * Character offsets for `@huggingface/tokenizers`, which returns ids and token strings but no
 * offsets. We replay its own pipeline (added-token split → normalizer → pre-tokenizer → model),
 * calling the library's components, and keep track of where every piece came from:
 *
 *   text ──split on added tokens──▶ sections (spans known)
 *        ──normalizer, per cluster──▶ normalized chars, each mapped back to its source span
 *        ──pre-tokenizer──▶ words, located in the section (bytes for byte-level, chars otherwise)
 *        ──model──▶ tokens, which partition their word's bytes/chars
 *
 * The caller compares the replayed tokens with the library's own output and only trusts the
 * offsets when they agree (`exact`); otherwise it falls back to a coarser alignment.
 *
 * Offsets are [start, end) in JS string indices (UTF-16 code units), so `text.slice(s, e)` is the
 * token's source text. A token holding part of a multi-byte character gets that whole character
 * (Rust `tokenizers` does the same). Limits: normalizers that change text across cluster
 * boundaries (e.g. `Prepend`, `Replace` of multi-char patterns) make a whole section share one span;
 * byte-fallback tokens `<0xNN>` and unknown tokens share the gap they cover.
 */
import type { CharSpan } from "./tokenizer-types.js";

/** One content token with the span of text it came from. */
export interface Piece {
  token: string;
  span: CharSpan;
}

/** The parts of the library's Tokenizer we replay (public fields plus the added-token splitters). */
export interface TokenizerInternals {
  normalizer: ((s: string) => string) | null;
  pre_tokenizer: ((s: string, o?: { section_index?: number }) => string[]) | null;
  model: ((words: string[]) => string[]) & {
    tokens_to_ids: Map<string, number>;
    unk_token?: string;
    config?: { continuing_subword_prefix?: string | null; end_of_word_suffix?: string | null };
  };
  splitter_unnormalized: { split(s: string): string[] };
  splitter_normalized: { split(s: string): string[] };
  added_tokens_map: Map<string, { lstrip: boolean; rstrip: boolean }>;
  remove_space?: boolean;
  do_lowercase_and_remove_accent?: boolean;
}

export interface PipelineFlags {
  /** The pre-tokenizer chain contains ByteLevel: words and tokens are in the byte alphabet. */
  byteLevel: boolean;
  /** Metaspace replacement character when the chain has a Metaspace pre-tokenizer. */
  metaspace?: string;
  /** ByteLevel post-processor with trim_offsets: leading/trailing spaces leave the span. */
  trimOffsets: boolean;
}

/**
 * GPT-2's byte → printable-char table, [256]: the alphabet byte-level BPE vocabularies are written
 * in. Printable Latin-1 bytes stand for themselves; the others map to U+0100 onwards, in byte order.
 */
export function bytesToUnicode(): string[] {
  const bs: number[] = [];
  for (let b = 33; b <= 126; b++) bs.push(b);
  for (let b = 161; b <= 172; b++) bs.push(b);
  for (let b = 174; b <= 255; b++) bs.push(b);
  const cs = [...bs];
  let n = 0;
  for (let b = 0; b < 256; b++) {
    if (!bs.includes(b)) {
      bs.push(b);
      cs.push(256 + n++);
    }
  }
  const out: string[] = new Array(256);
  bs.forEach((b, i) => (out[b] = String.fromCharCode(cs[i])));
  return out;
}

/** The inverse table: printable char → byte. */
const UNICODE_TO_BYTE: Map<string, number> = new Map(bytesToUnicode().map((c, b) => [c, b]));

/** Units of a string: UTF-8 bytes (byte-level pipelines) or UTF-16 code units, each with its char span. */
interface Units {
  values: number[];
  /** [start, end) in the string, per unit. */
  start: number[];
  end: number[];
}

function unitsOf(s: string, bytes: boolean): Units {
  const values: number[] = [],
    start: number[] = [],
    end: number[] = [];
  for (let i = 0; i < s.length;) {
    let cp = s.codePointAt(i)!;
    const w = cp > 0xffff ? 2 : 1;
    if (bytes) {
      if (cp >= 0xd800 && cp <= 0xdfff) cp = 0xfffd; // lone surrogate: TextEncoder writes U+FFFD
      // UTF-8 by hand: a TextEncoder call per code point costs more than the whole tokenizer.
      const n = cp < 0x80 ? 1 : cp < 0x800 ? 2 : cp < 0x10000 ? 3 : 4;
      if (n === 1) values.push(cp);
      else if (n === 2) values.push(0xc0 | (cp >> 6), 0x80 | (cp & 63));
      else if (n === 3) values.push(0xe0 | (cp >> 12), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
      else values.push(0xf0 | (cp >> 18), 0x80 | ((cp >> 12) & 63), 0x80 | ((cp >> 6) & 63), 0x80 | (cp & 63));
      for (let k = 0; k < n; k++) {
        start.push(i);
        end.push(i + w);
      }
    } else {
      for (let k = 0; k < w; k++) {
        values.push(s.charCodeAt(i + k));
        start.push(i);
        end.push(i + w);
      }
    }
    i += w;
  }
  return { values, start, end };
}

/** Units a word or token string stands for in the source text (undoing ByteLevel / Metaspace). */
function surfaceUnits(s: string, f: PipelineFlags): number[] | undefined {
  if (f.byteLevel) {
    const out: number[] = [];
    for (const ch of s) {
      const b = UNICODE_TO_BYTE.get(ch);
      if (b === undefined) return undefined;
      out.push(b);
    }
    return out;
  }
  const t = f.metaspace ? s.split(f.metaspace).join(" ") : s;
  const out: number[] = [];
  for (let i = 0; i < t.length; i++) out.push(t.charCodeAt(i));
  return out;
}

function indexOfSeq(hay: number[], needle: number[], from: number): number {
  if (needle.length === 0) return from <= hay.length ? from : -1;
  outer: for (let i = from; i + needle.length <= hay.length; i++) {
    for (let j = 0; j < needle.length; j++) if (hay[i + j] !== needle[j]) continue outer;
    return i;
  }
  return -1;
}

/**
 * Normalize `t` cluster by cluster (a code point plus its combining marks), so each normalized
 * char knows its source span. Falls back to one span for the whole section when per-cluster
 * normalization does not reproduce the whole-string result.
 */
function normalizeAligned(
  t: string,
  base: number,
  normalizer: ((s: string) => string) | null,
): { text: string; start: number[]; end: number[]; coarse?: true } {
  if (!normalizer) {
    const start: number[] = [],
      end: number[] = [];
    for (let i = 0; i < t.length; i++) {
      start.push(base + i);
      end.push(base + i + 1);
    }
    // Surrogate pairs: both halves cover the whole code point.
    for (let i = 0; i + 1 < t.length; i++) {
      const c = t.charCodeAt(i);
      if (c >= 0xd800 && c < 0xdc00) {
        end[i] = base + i + 2;
        start[i + 1] = base + i;
      }
    }
    return { text: t, start, end };
  }
  const whole = normalizer(t);
  const start: number[] = [],
    end: number[] = [];
  let rebuilt = "";
  for (const m of t.matchAll(/\P{M}\p{M}*|\p{M}+/gsu)) {
    const s = base + m.index!,
      e = s + m[0].length;
    const n = normalizer(m[0]);
    rebuilt += n;
    for (let k = 0; k < n.length; k++) {
      start.push(s);
      end.push(e);
    }
  }
  if (rebuilt === whole) return { text: whole, start, end };
  return { text: whole, start: Array(whole.length).fill(base), end: Array(whole.length).fill(base + t.length), coarse: true };
}

/**
 * Split with the library's splitter, then apply lstrip/rstrip of added tokens. Returns each piece
 * with its start; an added token's [from, to) also covers the whitespace it stripped from its
 * neighbours (Rust reports that span too).
 */
function splitAdded(
  tok: TokenizerInternals,
  splitter: { split(s: string): string[] },
  text: string,
): { s: string; at: number; from: number; to: number }[] {
  const parts = splitter.split(text);
  const out: { s: string; at: number; from: number; to: number }[] = [];
  let at = 0;
  for (const p of parts) {
    out.push({ s: p, at, from: at, to: at + p.length });
    at += p.length;
  }
  out.forEach((p, i) => {
    const added = tok.added_tokens_map.get(p.s);
    if (!added) return;
    if (added.lstrip && i > 0) {
      const prev = out[i - 1];
      const trimmed = prev.s.trimEnd();
      p.from -= prev.s.length - trimmed.length;
      prev.s = trimmed;
    }
    if (added.rstrip && i < out.length - 1) {
      const n = out[i + 1];
      const trimmed = n.s.trimStart();
      p.to += n.s.length - trimmed.length;
      n.at += n.s.length - trimmed.length;
      n.s = trimmed;
    }
  });
  return out;
}

/**
 * Replay the library's `encode_text` and return the content tokens with spans, or undefined when
 * a step cannot be replayed (options that rewrite text before normalization). `coarse` is set
 * when a normalizer could not be aligned per character and a whole section shares one span.
 */
export function piecesWithOffsets(
  tok: TokenizerInternals,
  text: string,
  flags: PipelineFlags,
): { pieces: Piece[]; coarse: boolean } | undefined {
  if (tok.remove_space === true || tok.do_lowercase_and_remove_accent) return undefined;
  const pieces: Piece[] = [];
  let coarse = false;
  const sections = splitAdded(tok, tok.splitter_unnormalized, text);
  for (let si = 0; si < sections.length; si++) {
    const { s: section, at, from, to } = sections[si];
    if (section.length === 0) continue;
    if (tok.added_tokens_map.has(section)) {
      pieces.push({ token: section, span: [from, to] });
      continue;
    }
    const norm = normalizeAligned(section, at, tok.normalizer);
    if (norm.coarse) coarse = true;
    if (norm.text.length === 0) continue;
    const normSpan = (a: number, b: number): CharSpan => {
      if (a >= b) {
        const p = a < norm.start.length ? norm.start[a] : (norm.end[norm.end.length - 1] ?? at);
        return [p, p];
      }
      let s = Infinity,
        e = -Infinity;
      for (let i = a; i < b; i++) {
        s = Math.min(s, norm.start[i]);
        e = Math.max(e, norm.end[i]);
      }
      return [s, e];
    };
    for (const sub of splitAdded(tok, tok.splitter_normalized, norm.text)) {
      if (sub.s.length === 0) continue;
      if (tok.added_tokens_map.has(sub.s)) {
        pieces.push({ token: sub.s, span: normSpan(sub.from, sub.to) });
        continue;
      }
      const words = tok.pre_tokenizer ? tok.pre_tokenizer(sub.s, { section_index: si }) : [sub.s];
      // Per word, to know which tokens came from which word. (If fuse_unk merged unknowns across
      // words, the result differs from the library's tokens and the caller falls back.)
      const perWord = words.map((w) => tok.model([w]));
      const units = unitsOf(sub.s, flags.byteLevel);
      let cursor = 0;
      for (let wi = 0; wi < words.length; wi++) {
        const wu = surfaceUnits(words[wi], flags);
        if (!wu) return undefined;
        let pos = indexOfSeq(units.values, wu, cursor);
        let virtual = 0;
        if (pos < 0 && wu[0] === 0x20) {
          // A prefix space the pre-tokenizer added (add_prefix_space, Metaspace prepend): not in the text.
          pos = indexOfSeq(units.values, wu.slice(1), cursor);
          virtual = 1;
        }
        if (pos < 0) return undefined;
        const spans = tokenUnitSpans(perWord[wi], wu, tok, flags);
        for (let ti = 0; ti < perWord[wi].length; ti++) {
          const [a, b] = spans[ti];
          // Word-relative units → subsection units (minus the virtual prefix) → normalized chars → source.
          const ua = Math.max(pos, pos + a - virtual),
            ub = Math.max(pos, pos + b - virtual);
          const na = ua < units.start.length ? units.start[ua] : sub.s.length;
          const nb = ub > ua ? units.end[ub - 1] : na;
          let span = normSpan(sub.at + na, sub.at + nb);
          if (flags.trimOffsets) span = trim(perWord[wi][ti], span, flags);
          pieces.push({ token: perWord[wi][ti], span });
        }
        cursor = pos + wu.length - virtual;
      }
    }
  }
  return { pieces, coarse };
}

/**
 * Word-relative [start, end) unit ranges of each token of one word. Tokens are searched left to
 * right; unknown / byte-fallback tokens, whose text we cannot read, share the gap up to the next
 * token we can place.
 */
function tokenUnitSpans(tokens: string[], word: number[], tok: TokenizerInternals, f: PipelineFlags): [number, number][] {
  const prefix = tok.model.config?.continuing_subword_prefix ?? undefined;
  const suffix = tok.model.config?.end_of_word_suffix ?? undefined;
  const surfaces = tokens.map((t, i) => {
    if (t === tok.model.unk_token || /^<0x[0-9A-Fa-f]{2}>$/.test(t)) return undefined;
    let s = t;
    if (prefix && i > 0 && s.startsWith(prefix)) s = s.slice(prefix.length);
    if (suffix && s.endsWith(suffix)) s = s.slice(0, -suffix.length);
    return surfaceUnits(s, f);
  });
  const spans: [number, number][] = [];
  let cursor = 0;
  for (let i = 0; i < tokens.length; i++) {
    const su = surfaces[i];
    if (su !== undefined) {
      const p = indexOfSeq(word, su, cursor);
      if (p >= 0) {
        spans.push([p, p + su.length]);
        cursor = p + su.length;
        continue;
      }
    }
    // Unknown text: extend to where the next readable token starts (or the word's end).
    let next = word.length;
    for (let j = i + 1; j < tokens.length; j++) {
      const sj = surfaces[j];
      if (sj === undefined) continue;
      const p = indexOfSeq(word, sj, cursor);
      if (p >= 0) next = p;
      break;
    }
    spans.push([cursor, Math.max(cursor, next)]);
    if (!(i + 1 < tokens.length && surfaces[i + 1] === undefined)) cursor = Math.max(cursor, next);
  }
  return spans;
}

/** Rust `process_offsets` of the ByteLevel post-processor: spaces at a token's edges leave its span. */
function trim(token: string, span: CharSpan, f: PipelineFlags): CharSpan {
  const isSpace = (c: string) => c === "\u0120" || (!f.byteLevel && /\s/u.test(c));
  const chars = [...token];
  let lead = 0,
    trail = 0;
  while (lead < chars.length && isSpace(chars[lead])) lead++;
  while (trail < chars.length - lead && isSpace(chars[chars.length - 1 - trail])) trail++;
  let [s, e] = span;
  if (lead > 0) s = Math.min(s + lead, e);
  if (trail > 0 && e >= trail) e = Math.max(e - trail, s);
  return [s, e];
}
