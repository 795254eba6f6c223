/**
 * What the two model-card evaluators (eval-tiny-models.ts, eval-real-models.ts) share: the repository
 * root, the held-out questions, the card's settings and the commit stamp, so both cards are evaluated
 * on the same settings under the same keys.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import type { EvalSetting } from "../src/qa/contexts.js";

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
