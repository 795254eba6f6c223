/**
 * QA metrics of the paper's evaluation (its appendix; docs/qa-harness.md), plus exact match.
 *
 * `normalizeAnswer` is SQuAD's normalisation, reproduced with Python's semantics rather than JS's:
 *   1. lowercase (`str.lower`),
 *   2. delete every character of `string.punctuation` (the 32 ASCII ones; Unicode punctuation stays),
 *   3. replace the whole words a / an / the with a space, where "whole word" is Python's Unicode `\b`
 *      (a word character is a letter, digit or underscore in any script — JS's `\b` is ASCII-only, so
 *      "éthe" would lose its "the" in JS but not in Python),
 *   4. split on runs of Python whitespace (`str.split()`: includes \x1c–\x1f and \x85, excludes
 *      U+FEFF and U+200B, unlike JS `\s`) and join with single spaces.
 *
 * Scores of one prediction against one gold answer, all in {0, 1} except F1:
 *   accuracy  — the paper's lenient rule: normalised gold is non-empty and a CHARACTER substring of the
 *               normalised prediction (gold "1" matches "1889"; gold "a" normalises to "" and never matches),
 *   f1        — SQuAD token F1 over the normalised tokens (both empty → 1, one empty → 0),
 *   exactMatch — normalised strings are equal (the paper computed no EM; SQuAD's definition).
 * Per item each metric is the max over the gold answers; an item without answers scores 0 everywhere.
 */
import type { AnswerExtraction } from "../model/presets.js";

/** Python's `string.punctuation`. */
export const ASCII_PUNCTUATION = "!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~";

const PUNCT = new Set(ASCII_PUNCTUATION);
/** Python str.split() separators: Unicode White_Space plus the ASCII file/group/record/unit separators. */
const PY_WHITESPACE = /[\t\n\v\f\r\x1c-\x1f \x85\xa0\u1680\u2000-\u200a\u2028\u2029\u202f\u205f\u3000]+/u;
/** `\b(a|an|the)\b` with Python's Unicode word characters (letters, numbers, underscore). */
const ARTICLES = /(?<![\p{L}\p{N}_])(?:a|an|the)(?![\p{L}\p{N}_])/gu;

/** Python `" ".join(s.split())`. */
export function pySplit(s: string): string[] {
  return s.split(PY_WHITESPACE).filter((t) => t !== "");
}

/** SQuAD normalisation (see the module comment for each step). */
export function normalizeAnswer(s: string): string {
  let out = "";
  for (const ch of s.toLowerCase()) if (!PUNCT.has(ch)) out += ch;
  out = out.replace(ARTICLES, " ");
  return pySplit(out).join(" ");
}

/** The paper's "Acc" for one gold: normalised gold is a non-empty substring of the normalised prediction. */
export function substringAccuracy(prediction: string, gold: string): number {
  const g = normalizeAnswer(gold);
  return g !== "" && normalizeAnswer(prediction).includes(g) ? 1 : 0;
}

/** SQuAD token F1 for one gold. */
export function tokenF1(prediction: string, gold: string): number {
  const p = pySplit(normalizeAnswer(prediction));
  const g = pySplit(normalizeAnswer(gold));
  if (p.length === 0 || g.length === 0) return p.length === g.length ? 1 : 0;
  const counts = new Map<string, number>();
  for (const t of g) counts.set(t, (counts.get(t) ?? 0) + 1);
  let common = 0;
  for (const t of p) {
    const c = counts.get(t) ?? 0;
    if (c > 0) {
      common++;
      counts.set(t, c - 1);
    }
  }
  if (common === 0) return 0;
  const precision = common / p.length;
  const recall = common / g.length;
  return (2 * precision * recall) / (precision + recall);
}

/** SQuAD exact match for one gold. */
export function exactMatch(prediction: string, gold: string): number {
  return normalizeAnswer(prediction) === normalizeAnswer(gold) ? 1 : 0;
}

export interface QaScores {
  /** Paper "Acc": substring rule. */
  accuracy: number;
  f1: number;
  exactMatch: number;
}

/**
 * Max over gold answers of each metric (independently, as upstream does). Golds that are not
 * strings or are blank are dropped first; no gold left → all 0 (the item still counts in means).
 */
export function scoreAnswer(prediction: string, golds: readonly unknown[]): QaScores {
  const ok = golds.filter((g): g is string => typeof g === "string" && g.trim() !== "");
  const s: QaScores = { accuracy: 0, f1: 0, exactMatch: 0 };
  for (const g of ok) {
    s.accuracy = Math.max(s.accuracy, substringAccuracy(prediction, g));
    s.f1 = Math.max(s.f1, tokenF1(prediction, g));
    s.exactMatch = Math.max(s.exactMatch, exactMatch(prediction, g));
  }
  return s;
}

/**
 * Cut the scored text from the generated text (the modes: model/presets.ts `AnswerExtraction`). The
 * paper scores the whole response ("none").
 */
export function extractAnswer(response: string, mode: AnswerExtraction): string {
  if (mode === "first-line") {
    const t = response.replace(/^\s+/u, "");
    const nl = t.search(/\r\n|\r|\n/);
    return (nl < 0 ? t : t.slice(0, nl)).trim();
  }
  return response;
}

/**
 * One gold fact of a long-answer record (models/world/eval-heldout-long.jsonl.gz, `facts`): its object
 * and the relation's two statement templates with `{s}` (subject) and `{v}` (object) slots.
 */
export interface LongFact {
  object: string;
  templates: readonly string[];
}

export interface FactScores {
  /** Gold facts stated by at least one claim / gold facts. */
  recall: number;
  /** Claims that state a gold fact no earlier claim stated / claims (0 when there are no claims). */
  precision: number;
  f1: number;
  /** 1 when recall and precision are both 1. */
  complete: number;
  claims: number;
  /** Indices of the recalled gold facts, ascending. */
  stated: number[];
}

/**
 * Claims of a long answer: cut at each of `. , ; : ! ?` and newline, each piece normalised
 * (`normalizeAnswer`) and cut again at every whole token "and"; empty claims dropped.
 */
export function splitClaims(prediction: string): string[] {
  const out: string[] = [];
  for (const piece of prediction.split(/[.,;:!?\n]/)) {
    let run: string[] = [];
    for (const t of [...pySplit(normalizeAnswer(piece)), "and"]) {
      if (t === "and") {
        if (run.length > 0) out.push(run.join(" "));
        run = [];
      } else run.push(t);
    }
  }
  return out;
}

/** The fixed parts of a statement template (text around `{s}` / `{v}`), normalised, empty ones dropped. */
export function templateParts(template: string): string[] {
  return template
    .split(/\{s\}|\{v\}/)
    .map(normalizeAnswer)
    .filter((p) => p !== "");
}

/** A claim states a fact: it holds the normalised object and every fixed part of one template, as whole-token runs. */
export function claimStates(claim: string, fact: LongFact): boolean {
  const c = ` ${claim} `;
  const obj = normalizeAnswer(fact.object);
  if (obj === "" || !c.includes(` ${obj} `)) return false;
  return fact.templates.some((t) => templateParts(t).every((p) => c.includes(` ${p} `)));
}

/**
 * Fact recall and precision of a long answer — the rule of training/qa_metrics.py `fact_scores` (its
 * comment is the documentation), pinned for both by test/training/long-answer-vectors.json. The subject's
 * name is not required in a claim; a repeated fact counts once, so repetition lowers precision.
 */
export function factScores(prediction: string, facts: readonly LongFact[]): FactScores {
  const cs = splitClaims(prediction);
  const seen = new Set<number>();
  let supported = 0;
  for (const c of cs) {
    let fresh = false;
    facts.forEach((f, i) => {
      if (claimStates(c, f)) {
        if (!seen.has(i)) fresh = true;
        seen.add(i);
      }
    });
    if (fresh) supported++;
  }
  const recall = facts.length > 0 ? seen.size / facts.length : 0;
  const precision = cs.length > 0 ? supported / cs.length : 0;
  const f1 = precision + recall > 0 ? (2 * precision * recall) / (precision + recall) : 0;
  return {
    recall,
    precision,
    f1,
    complete: recall === 1 && precision === 1 ? 1 : 0,
    claims: cs.length,
    stated: [...seen].sort((a, b) => a - b),
  };
}
