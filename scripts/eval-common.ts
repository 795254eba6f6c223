/**
 * What the two model-card evaluators (eval-tiny-models.ts, eval-real-models.ts) share: the repository
 * root, the held-out questions, the card's settings, how one setting is run, and the commit stamp, so
 * both cards are evaluated on the same settings under the same keys in the same way.
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import type { EvalSetting } from "../src/qa/contexts.js";
import type { QaRecord } from "../src/qa/datasets.js";
import type { OpenModel } from "../src/model/open.js";
import type { EvalPreset } from "../src/model/presets.js";
import { runEval, type EvalResult, type EvalRun } from "../src/qa/runner.js";

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

/** One model, one card setting: what `runCardSetting` needs besides the setting's key. */
export interface CardRun {
  /** The card's model name (the results rows' `model`). */
  name: string;
  records: QaRecord[];
  /** The model's decoder for its card: prompt format, sampler, answer extraction. */
  preset: EvalPreset;
  /** The QA file the records came from (stamped into the rows). */
  data: string;
  batchSize: number;
  /** Per-question rows, appended; a rerun skips the questions already there. */
  resultsFile: string;
}

/**
 * Run one card setting (a key of CARD_SETTINGS) on an open model. Returns the run, its wall time in seconds
 * and the progress line the evaluators print (questions run, resumed, failed; seconds).
 */
export async function runCardSetting(
  m: Pick<OpenModel, "engine" | "tokenizer">,
  key: string,
  o: CardRun,
): Promise<{ run: EvalRun; seconds: number; line: string }> {
  const t0 = Date.now();
  const run = await runEval({
    engine: m.engine,
    tokenizer: m.tokenizer,
    records: o.records,
    setting: CARD_SETTINGS[key],
    ...o.preset, // promptFormat, sampler, extraction
    modelName: o.name,
    dataFile: o.data,
    batchSize: o.batchSize,
    resultsFile: o.resultsFile,
  });
  const seconds = (Date.now() - t0) / 1000;
  const p = run.progress;
  return { run, seconds, line: `${o.name} ${key}: ${p.done} run, ${p.resumed} resumed, ${p.errors} errors, ${seconds.toFixed(1)} s` };
}
