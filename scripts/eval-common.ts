/**
 * What the two model-card evaluators (eval-tiny-models.ts, eval-real-models.ts) share: the repository
 * root, the held-out questions, the card's settings, how one setting is run, and the commit stamp, so
 * both cards are evaluated on the same settings under the same keys in the same way.
 *
 * Card settings beyond the four (`parseCardSetting`), named as training/real/eval_qa.py names them:
 *   `<setting>@G`        a canvas of G slots: a masked-diffusion sampler decodes G masks in G steps, an ARM
 *                        greedy one at most max(its preset's limit, G) new tokens (so `oracle@32` is the
 *                        paper's 32 tokens in 32 steps for the MDM, and nothing new for a greedy model);
 *   `long_oracle@G`      the long-answer questions of models/world/eval-heldout-long.jsonl.gz with every
 *                        gold passage, in file order (decode.py `long_passages(…, "oracle")`);
 *   `long_full@G`        the same with every stored ctx (golds first, then the distractors);
 * long answers are scored by fact recall / precision (src/qa/metrics.ts `factScores`, the rule of
 * training/qa_metrics.py `fact_scores`) and need their G.
 *
 * Intervals (95 %): accuracy (0/1 per question) by Wilson's score interval; mean fact recall and
 * precision (in [0, 1], skewed to 1) by the percentile bootstrap over questions (src/util/stats.ts
 * `bootstrapCi`: 2000 resamples, seed 0).
 */
import { execFileSync } from "node:child_process";
import * as path from "node:path";
import { settingLabel, type EvalSetting } from "../src/qa/contexts.js";
import type { QaRecord } from "../src/qa/datasets.js";
import type { Engine, TextTokenizer } from "../src/runtime/types.js";
import type { EvalPreset } from "../src/model/presets.js";
import { runEval, type EvalResult, type EvalRun } from "../src/qa/runner.js";
import type { RunConfig } from "../src/samplers/config.js";
import { SettingsError } from "../src/util/errors.js";
import { bootstrapCi } from "../src/util/stats.js";

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "..");
export const DATA_REL = "models/world/eval-heldout.jsonl.gz";
/** The long-answer held-out questions (test people; 3–5 facts over 1–3 gold passages each). */
export const LONG_DATA_REL = "models/world/eval-heldout-long.jsonl.gz";

/** Card keys (make_cards.py SETTING_TEXT) → harness settings. */
export const CARD_SETTINGS: Record<string, EvalSetting> = {
  closed_book: { kind: "closed-book" },
  oracle: { kind: "oracle" },
  gold_4: { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" },
  gold_9: { kind: "distractors", k: 9, goldPosition: "cycle", source: "record" },
};

/** Long-answer card settings (eval_qa.py's `long_*`) → harness settings. */
export const LONG_SETTINGS: Record<string, EvalSetting> = {
  long_oracle: { kind: "all-golds" },
  long_full: { kind: "all-ctxs" },
};

/** A card setting as parsed from its key: what runs, on which file, at which canvas, under which row label. */
export interface CardSetting {
  /** As written: "oracle", "oracle@32", "long_oracle@64". */
  key: string;
  /** The key without its canvas: a key of CARD_SETTINGS or LONG_SETTINGS. */
  base: string;
  setting: EvalSetting;
  /** Canvas slots G from `@G`; undefined = the model's preset decoder as it is. */
  canvas?: number;
  /** A long-answer setting: LONG_DATA_REL, scored by fact recall / precision. */
  long: boolean;
  /** The rows' `setting` in the results file: the harness label, plus "@G" when a canvas is named. */
  label: string;
}

/** Largest canvas accepted: the longest long answer is ≈ 63 tokens; 512 keeps a typo from asking for hours. */
export const MAX_CANVAS = 512;

/**
 * Parse a card setting key. Unknown settings, a bad canvas, and a long setting without its canvas are
 * `SettingsError`s naming `field` (the option they came from).
 * @example parseCardSetting("long_oracle@64") // {base: "long_oracle", canvas: 64, long: true, label: "all-golds@64", …}
 */
export function parseCardSetting(key: string, field = "--n"): CardSetting {
  const [base, g, ...rest] = key.split("@");
  const known = [...Object.keys(CARD_SETTINGS), ...Object.keys(LONG_SETTINGS).map((k) => `${k}@G`)].join(", ");
  const long = base in LONG_SETTINGS;
  if (rest.length > 0 || !(base in CARD_SETTINGS || long))
    throw new SettingsError("Unknown card setting", {
      field,
      expected: `one of ${known} (a short one may add @G)`,
      found: JSON.stringify(key),
    });
  let canvas: number | undefined;
  if (g !== undefined) {
    canvas = Number(g);
    if (!/^[0-9]+$/.test(g) || !Number.isInteger(canvas) || canvas < 1 || canvas > MAX_CANVAS)
      throw new SettingsError("Bad canvas size", {
        field,
        expected: `setting@G with G an integer in [1, ${MAX_CANVAS}]`,
        found: JSON.stringify(key),
      });
  } else if (long) {
    throw new SettingsError("A long-answer setting needs its canvas", {
      field,
      expected: `${base}@G (e.g. ${base}@64)`,
      found: JSON.stringify(key),
    });
  }
  const setting = long ? LONG_SETTINGS[base] : CARD_SETTINGS[base];
  const label = settingLabel(setting) + (canvas === undefined ? "" : `@${canvas}`);
  return { key, base, setting, canvas, long, label };
}

/**
 * The preset's sampler at a canvas of G slots, as training/real/decode.py `generate` decodes: a
 * masked-diffusion sampler G masks in G steps (LLaDA in one block of G); a greedy ARM sampler up to
 * max(its limit, G) new tokens (its own length; it stops at its end of turn).
 */
export function samplerAtCanvas(sampler: Partial<RunConfig>, canvas: number | undefined): Partial<RunConfig> {
  if (canvas === undefined) return sampler;
  if (sampler.sampler === "arm") return { ...sampler, genLength: Math.max(sampler.genLength ?? 0, canvas) };
  if (sampler.sampler === "llada") return { ...sampler, genLength: canvas, steps: canvas, blockLength: canvas };
  return { ...sampler, genLength: canvas, steps: canvas };
}

/**
 * Whether a canvas changes what a model's decoder does on short answers: not for a greedy ARM decoder,
 * which writes its answer and stops at its end of turn whatever room it is given (its `oracle@32` would
 * be its `oracle` again, so the cards say that instead of running it).
 */
export function canvasMatters(sampler: Partial<RunConfig>, cs: CardSetting): boolean {
  return cs.canvas === undefined || cs.long || sampler.sampler !== "arm";
}

/** z of a two-sided 95 % normal interval (Φ⁻¹(0.975)). */
export const Z95 = 1.959963984540054;

/**
 * Wilson's score interval for a proportion: successes k of n, (p̂ + z²/2n ± z √(p̂(1−p̂)/n + z²/4n²)) / (1 + z²/n).
 * Null for n = 0.
 */
export function wilsonInterval(k: number, n: number, z = Z95): [number, number] | null {
  if (n <= 0) return null;
  const p = k / n;
  const d = 1 + (z * z) / n;
  const centre = (p + (z * z) / (2 * n)) / d;
  const half = (z * Math.sqrt((p * (1 - p)) / n + (z * z) / (4 * n * n))) / d;
  return [Math.max(0, centre - half), Math.min(1, centre + half)];
}

/** How the card evaluators' intervals are made (stamped into the results, quoted on the cards). */
export const INTERVALS = {
  accuracy: "Wilson score interval, 95 %",
  mean: "percentile bootstrap over questions, 95 %, 2000 resamples, seed 0 (src/util/stats.ts bootstrapCi)",
};

/** Percentile bootstrap 95 % interval of a mean over questions (INTERVALS.mean); null below 2 values. */
export function meanInterval(values: readonly number[]): [number, number] | null {
  return bootstrapCi(Float64Array.from(values), { resamples: 2000, seed: 0, level: 0.95 });
}

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

/** Compute seconds of answered rows: the sum of each row's share of its batch's wall time (resumed rows included). */
function rowSeconds(ok: EvalResult[]): number {
  return Math.round(ok.reduce((s, r) => s + (r.ms ?? 0), 0) / 100) / 10;
}

/** A short setting's card scores with the accuracy's Wilson interval and the compute time. */
export interface ShortCardScores extends CardScores {
  accuracy_ci: [number, number] | null;
  /** Sum of the rows' compute seconds (see rowSeconds) and its mean per answered question. */
  seconds: number;
  seconds_per_question: number;
}

/** `cardScores` plus the Wilson interval of the accuracy (per question 0 or 1) and the seconds. */
export function shortCardScores(rs: EvalResult[]): ShortCardScores {
  const c = cardScores(rs);
  const ok = rs.filter((r) => r.error === undefined);
  const hits = ok.reduce((s, r) => s + (r.accuracy === 1 ? 1 : 0), 0);
  const seconds = rowSeconds(ok);
  return { ...c, accuracy_ci: wilsonInterval(hits, c.n), seconds, seconds_per_question: c.n ? Math.round((10 * seconds) / c.n) / 10 : 0 };
}

/** A long setting's card scores: mean fact recall, precision, F1 and complete share, with the means' intervals. */
export interface LongCardScores {
  n: number;
  errors: number;
  recall: number;
  recall_ci: [number, number] | null;
  precision: number;
  precision_ci: [number, number] | null;
  f1: number;
  /** Share of answers with every fact and nothing else (recall and precision 1). */
  complete: number;
  seconds: number;
  seconds_per_question: number;
}

/** Long-answer scores of one setting's rows (errors left out; means 0 where no row succeeded). */
export function longCardScores(rs: EvalResult[]): LongCardScores {
  const ok = rs.filter((r) => r.error === undefined);
  const col = (f: (r: EvalResult) => number | undefined) => ok.map((r) => f(r) ?? 0);
  const avg = (xs: number[]) => (xs.length ? xs.reduce((a, b) => a + b, 0) / xs.length : 0);
  const recall = col((r) => r.recall);
  const precision = col((r) => r.precision);
  const seconds = rowSeconds(ok);
  return {
    n: ok.length,
    errors: rs.length - ok.length,
    recall: avg(recall),
    recall_ci: meanInterval(recall),
    precision: avg(precision),
    precision_ci: meanInterval(precision),
    f1: avg(col((r) => r.factF1)),
    complete: avg(col((r) => r.complete)),
    seconds,
    seconds_per_question: ok.length ? Math.round((10 * seconds) / ok.length) / 10 : 0,
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
 * Run one card setting (a key of CARD_SETTINGS, or a parsed `CardSetting`: its canvas, row label and long-answer
 * scoring) on an open model. Returns the run, its wall time in seconds and the progress line the evaluators
 * print (questions run, resumed, failed; seconds).
 */
export async function runCardSetting(
  m: { engine: Engine; tokenizer: TextTokenizer },
  key: string | CardSetting,
  o: CardRun,
): Promise<{ run: EvalRun; seconds: number; line: string }> {
  const t0 = Date.now();
  const cs = typeof key === "string" ? undefined : key;
  const run = await runEval({
    engine: m.engine,
    tokenizer: m.tokenizer,
    records: o.records,
    setting: cs ? cs.setting : CARD_SETTINGS[key as string],
    ...o.preset, // promptFormat, sampler, extraction
    ...(cs
      ? { sampler: samplerAtCanvas(o.preset.sampler, cs.canvas), label: cs.label, scoring: cs.long ? ("facts" as const) : undefined }
      : {}),
    modelName: o.name,
    dataFile: o.data,
    batchSize: o.batchSize,
    resultsFile: o.resultsFile,
  });
  const seconds = (Date.now() - t0) / 1000;
  const p = run.progress;
  return {
    run,
    seconds,
    line: `${o.name} ${cs ? cs.key : key}: ${p.done} run, ${p.resumed} resumed, ${p.errors} errors, ${seconds.toFixed(1)} s`,
  };
}
