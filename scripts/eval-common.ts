/**
 * What the two model-card evaluators (eval-tiny-models.ts, eval-real-models.ts) share: the repository
 * root, the held-out questions, the card's settings and the commit stamp, so both cards are evaluated
 * on the same settings under the same keys.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import type { EvalSetting } from "../src/qa/contexts.js";
import type { EvalResult } from "../src/qa/runner.js";

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
export const DATA_REL = "models/world/eval-heldout.jsonl.gz";

/** Card keys (make_cards.py SETTING_TEXT) → harness settings. */
export const CARD_SETTINGS: Record<string, EvalSetting> = {
  closed_book: { kind: "closed-book" },
  oracle: { kind: "oracle" },
  gold_4: { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" },
  gold_9: { kind: "distractors", k: 9, goldPosition: "cycle", source: "record" },
};

/** The checked-out commit, stamped into each card's results ("unknown" outside a git checkout). */
export function commit(): string {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, encoding: "utf8" }).trim();
  } catch {
    return "unknown";
  }
}

/** A card's scores for one setting: answered rows (errors left out) and the mean of each metric over them. */
export interface CardScores {
  n: number;
  errors: number;
  accuracy: number;
  f1: number;
  exact_match: number;
}

/** Scores of one setting's result rows, as both cards report them (means are 0 where no row succeeded). */
export function cardScores(rs: EvalResult[]): CardScores {
  const ok = rs.filter((r) => r.error === undefined);
  const mean = (f: (r: EvalResult) => number) => (ok.length ? ok.reduce((s, r) => s + f(r), 0) / ok.length : 0);
  return {
    n: ok.length,
    errors: rs.length - ok.length,
    accuracy: mean((r) => r.accuracy!),
    f1: mean((r) => r.f1!),
    exact_match: mean((r) => r.exactMatch!),
  };
}
