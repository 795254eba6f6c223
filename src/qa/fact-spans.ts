/**
 * Fact spans of a long answer: for each gold fact, where the prompt holds it and which generated
 * tokens state it — the input of the frontier analysis's "anchor follows its source" test
 * (`anchorFrontier`'s `facts`, docs/analyses.md).
 *
 * Both halves use rules the project already documents, so the spans agree with the scores a reader
 * sees:
 * - key span: the fact's `statement` (the sentence the world generator wrote into the passage, e.g.
 *   "Sina Nipu is a carpenter .") located inside the prompt passage that holds the record's context
 *   `ctx`, mapped to tokens through the tokenizer's offsets (never by re-tokenising a piece);
 * - answer tokens: the answer is cut into claims by the fact scorer's rule (`splitClaims`: at
 *   `. , ; : ! ?`, newline and every whole word "and"), a claim states a fact by `claimStates`, and
 *   the fact's answer tokens are the generated positions whose text overlaps a claim that states it.
 * A fact the answer never states gets no answer tokens (and so contributes no step); a fact whose
 * passage or statement is not in the prompt (a closed-book prompt, a distractor-only sample) is left
 * out, and `missing` names it.
 */
import type { FactSpan } from "../analysis/frontier.js";
import { charSpanToTokenSpan } from "../checkpoint/spans.js";
import type { CharSpan } from "../checkpoint/tokenizer-types.js";
import { type LongFact, claimStates, normalizeAnswer } from "./metrics.js";

/** A gold fact as the long-answer records store it (`facts[]`). */
export interface RecordFact extends LongFact {
  relation: string;
  /** Index into the record's `ctxs` of the passage that states the fact. */
  ctx: number;
  /** The sentence stating the fact, verbatim as written into that passage. */
  statement: string;
}

/** What `factSpans` reads of a trace (a `Trace` has all of it). */
export interface FactSpanSource {
  prompt: { text: string; promptLength: number; regions: readonly { name: string; chars: CharSpan }[] };
  /** Char offsets of the final sequence; generated tokens index into `prompt.text + completion`. */
  offsets: readonly CharSpan[];
  /** Generated text with special tokens kept (what the generated offsets index). */
  completion: string;
}

export interface FactSpanResult {
  spans: FactSpan[];
  /** Facts left out, with why ("passage not in the prompt", "statement not in its passage"). */
  missing: { factId: string; why: string }[];
}

/** A claim with the character range of the answer text it was cut from. */
export interface PlacedClaim {
  claim: string;
  chars: CharSpan;
}

/**
 * `splitClaims` with positions: the same claims in the same order, each with the [start, end) range
 * of `text` from its first to its last word. Words are normalised one at a time, which gives the
 * words `normalizeAnswer` gives the whole piece (it lowercases, drops punctuation characters and the
 * articles a/an/the, and splits at whitespace).
 * @example placeClaims("born in 1995 and a pilot.") // [{claim:"born in 1995", chars:[0,12]}, {claim:"pilot", chars:[19,24]}]
 */
export function placeClaims(text: string, offset = 0): PlacedClaim[] {
  const out: PlacedClaim[] = [];
  let words: string[] = [];
  let start = -1;
  let end = -1;
  const flush = () => {
    if (words.length > 0) out.push({ claim: words.join(" "), chars: [offset + start, offset + end] });
    words = [];
    start = -1;
  };
  const piece = /[^.,;:!?\n]+/g;
  for (let m = piece.exec(text); m; m = piece.exec(text)) {
    // Words as Python's str.split() cuts them (the scorer's pySplit), not JS's \s.
    const word = /[^\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/gu;
    for (let w = word.exec(m[0]); w; w = word.exec(m[0])) {
      const norm = normalizeAnswer(w[0]);
      if (norm === "and") {
        flush();
        continue;
      }
      for (const part of norm.split(" ").filter((p) => p !== "")) {
        if (start < 0) start = m.index + w.index;
        end = m.index + w.index + w[0].length;
        words.push(part);
      }
    }
    flush();
  }
  return out;
}

/**
 * The fact spans of one long-answer sample.
 * @param source the trace (prompt text, regions "doc 1"…, offsets, completion)
 * @param passages the record's `ctxs[].text`, in the record's order (what `fact.ctx` indexes)
 * @param facts the record's `facts`
 */
export function factSpans(source: FactSpanSource, passages: readonly string[], facts: readonly RecordFact[]): FactSpanResult {
  const { prompt, offsets, completion } = source;
  const docs = prompt.regions.filter((r) => /^doc \d+$/.test(r.name));
  const claims = placeClaims(completion, prompt.text.length);
  const generated = offsets.slice(prompt.promptLength);
  const spans: FactSpan[] = [];
  const missing: FactSpanResult["missing"] = [];
  facts.forEach((fact, i) => {
    const factId = `${i}:${fact.relation}`;
    const passage = passages[fact.ctx];
    // The passage region that holds this context (prompts may reorder or drop passages).
    const doc = passage === undefined ? undefined : docs.find((d) => prompt.text.slice(d.chars[0], d.chars[1]).includes(passage));
    if (!doc) return void missing.push({ factId, why: "passage not in the prompt" });
    const at = prompt.text.slice(doc.chars[0], doc.chars[1]).indexOf(fact.statement);
    const keySpan =
      at < 0
        ? undefined
        : charSpanToTokenSpan(offsets.slice(0, prompt.promptLength), [doc.chars[0] + at, doc.chars[0] + at + fact.statement.length]);
    if (!keySpan) return void missing.push({ factId, why: "statement not in its passage" });
    const answerTokens: number[] = [];
    for (const c of claims) {
      if (!claimStates(c.claim, fact)) continue;
      generated.forEach(([a, b], j) => {
        const pos = prompt.promptLength + j;
        if (b > a && a < c.chars[1] && b > c.chars[0] && !answerTokens.includes(pos)) answerTokens.push(pos);
      });
    }
    spans.push({ factId, keySpan, answerTokens: answerTokens.sort((x, y) => x - y) });
  });
  return { spans, missing };
}
