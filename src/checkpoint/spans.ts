/**
 * Character spans ↔ token spans, for regions (query, documents, gold passage): the paper's
 * rollout regions are defined on the prompt text and must be mapped to tokens through the
 * tokenizer's offsets, never by re-tokenising pieces (re-tokenising a piece can split it differently from the whole prompt).
 *
 * Both spans are half-open: [start, end).
 */
import type { CharSpan } from "./tokenizer-types.js";

/** [firstToken, lastToken + 1). */
export type TokenSpan = [number, number];

/**
 * Tokens whose text overlaps the character span. Tokens with an empty span (special tokens the
 * template added, offsets [0,0]) never belong to a text region.
 * @returns undefined for an empty span, or when no token overlaps (e.g. whitespace that the
 *   pre-tokenizer dropped).
 * @example charSpanToTokenSpan([[0,0],[0,5],[5,11]], [6, 11]) // [2, 3]
 */
export function charSpanToTokenSpan(offsets: readonly CharSpan[], span: CharSpan): TokenSpan | undefined {
  const [s, e] = span;
  if (!(e > s)) return undefined;
  let first = -1,
    last = -1;
  for (let i = 0; i < offsets.length; i++) {
    const [a, b] = offsets[i];
    if (b > a && a < e && b > s) {
      if (first < 0) first = i;
      last = i;
    }
  }
  return first < 0 ? undefined : [first, last + 1];
}

/**
 * The character span covered by tokens [t0, t1): from the first token's start to the last
 * token's end, skipping tokens with empty spans. undefined when every token in range is empty.
 */
export function tokenSpanToCharSpan(offsets: readonly CharSpan[], span: TokenSpan): CharSpan | undefined {
  let s = Infinity,
    e = -Infinity;
  for (let i = Math.max(0, span[0]); i < Math.min(offsets.length, span[1]); i++) {
    const [a, b] = offsets[i];
    if (b > a) {
      s = Math.min(s, a);
      e = Math.max(e, b);
    }
  }
  return s === Infinity ? undefined : [s, e];
}
