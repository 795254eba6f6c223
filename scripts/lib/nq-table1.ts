/**
 * The paper's Table 1 on NQ-open, from per-question result rows (the runner's `EvalResult`, or a merged grid
 * table's rows): per model, accuracy and F1 closed-book and with retrieval, each with a 95 % interval, and the
 * RAG gain paired over the same questions — pure functions, so the arithmetic is tested by hand
 * (test/scripts/nq-table1.test.ts) and scripts/measure-nq.ts only runs models and writes files.
 *
 * Intervals:
 *   accuracy   a proportion of 0/1 scores: the Wilson score interval (z = 1.96), which stays inside [0, 100]
 *              and is not degenerate at 0 of n (a bootstrap of all-zero scores would give [0, 0]);
 *   F1         a mean of per-question scores in [0, 1]: the seeded percentile bootstrap over questions
 *              (`bootstrapCi`, 2000 resamples, as every notebook finding);
 *   RAG gain   per question, the score with retrieval minus the score closed-book (the same question in
 *              both), then the percentile bootstrap of those differences: resampling questions keeps each
 *              question's pair together, so what every question scores anyway cancels out of the interval.
 *              The claim's quantity is the mean of the accuracy and F1 gains per question, as notebook 06.
 *
 * Every number is over the *paired* questions: those with a successful row in both settings (a question
 * that failed in one setting is left out of both, and counted).
 */
import { paradigmOf } from "../../src/families/index.js";
import type { Finding } from "../../src/display/findings.js";
import { PAPER_TABLE1, type Table1Row } from "../../src/qa/paper-table1.js";
import { bootstrapCi, mean } from "../../src/util/stats.js";
import { ragGains, type PairedScores } from "../../src/analysis/rag-gain.js";

/** The two-sided 95 % normal quantile. */
export const Z95 = 1.959963984540054;

/** A value with its 95 % interval (null: fewer than 2 values to resample) and the questions behind it, in %. */
export interface Cell {
  value: number;
  ci95: [number, number] | null;
  n: number;
}

/**
 * Wilson score interval of `successes` of `n`, as proportions in [0, 1]:
 * centre (p + z²/2n) / (1 + z²/n), half-width z·√(p(1−p)/n + z²/4n²) / (1 + z²/n).
 */
export function wilsonInterval(successes: number, n: number, z = Z95): [number, number] {
  if (!(Number.isInteger(n) && n >= 1 && Number.isInteger(successes) && successes >= 0 && successes <= n))
    throw new RangeError(`wilsonInterval: need integers 0 ≤ successes ≤ n, n ≥ 1 (got ${successes} of ${n})`);
  const p = successes / n;
  const z2 = z * z;
  const denom = 1 + z2 / n;
  const centre = (p + z2 / (2 * n)) / denom;
  const half = (z * Math.sqrt((p * (1 - p)) / n + z2 / (4 * n * n))) / denom;
  // At p = 0 (p = 1) the lower (upper) end is exactly the bound; the formula lands there only up to rounding.
  return [successes === 0 ? 0 : Math.max(0, centre - half), successes === n ? 1 : Math.min(1, centre + half)];
}

/** Accuracy (0/1 scores) in %, with its Wilson interval. */
export function accuracyCell(scores: readonly number[]): Cell {
  for (const s of scores) if (s !== 0 && s !== 1) throw new RangeError(`accuracyCell: accuracy scores are 0 or 1, got ${s}`);
  const k = scores.reduce((a, b) => a + b, 0);
  const [lo, hi] = wilsonInterval(k, scores.length);
  return { value: (100 * k) / scores.length, ci95: [100 * lo, 100 * hi], n: scores.length };
}

/** Mean of per-question values already in the reported unit, with the percentile bootstrap interval. */
export function meanCell(values: readonly number[]): Cell {
  return { value: mean(values), ci95: bootstrapCi(values), n: values.length };
}

// Pairing by question and the per-question RAG gain are the claim's analysis (src/analysis/rag-gain.ts), which a
// grid's findings use too; re-exported here, where this table's callers and tests import them from.
export { pairScores, ragGains, type PairedScores, type ScoredRow } from "../../src/analysis/rag-gain.js";

/** The paper's model a family stands beside in the table (the paper's four: Llama, Qwen, Dream, LLaDA). */
const PAPER_MODEL: Record<string, Table1Row["model"]> = { llama: "Llama", qwen2: "Qwen", dream: "Dream", llada: "Llada" };

export interface PaperNq {
  model: Table1Row["model"];
  closedBook: { accuracy: number; f1: number };
  rag: { accuracy: number; f1: number };
  /** Mean of the accuracy gain and the F1 gain, points. */
  gain: number;
}

/** The paper's NQ cells (Table 1, src/qa/paper-table1.ts) for the paper's model of this family; null for another family. */
export function paperNq(family: string): PaperNq | null {
  const model = PAPER_MODEL[family];
  if (!model) return null;
  const row = (rag: boolean) => PAPER_TABLE1.find((r) => r.model === model && r.rag === rag)!.cells.NQ;
  const [a0, f0] = row(false);
  const [a1, f1] = row(true);
  return { model, closedBook: { accuracy: a0, f1: f0 }, rag: { accuracy: a1, f1: f1 }, gain: (a1 - a0 + (f1 - f0)) / 2 };
}

export interface NqTable1Row {
  model: string;
  family: string;
  /** The tier the model comes from (real, real-base). */
  tier: string;
  closedBook: { accuracy: Cell; f1: Cell };
  rag: { accuracy: Cell; f1: Cell };
  /** Paired over questions, points. */
  gain: { accuracy: Cell; f1: Cell; mean: Cell };
  unpaired: number;
  paper: PaperNq | null;
}

/** One model's Table 1 row; null when no question is paired. */
export function table1Row(p: PairedScores, who: { model: string; family: string; tier: string }): NqTable1Row | null {
  if (p.ids.length === 0) return null;
  const pts = (xs: number[]) => xs.map((x) => 100 * x);
  const diff = (a: number[], b: number[]) => a.map((x, i) => 100 * (x - b[i]));
  const gAcc = diff(p.rag.accuracy, p.closed.accuracy);
  const gF1 = diff(p.rag.f1, p.closed.f1);
  return {
    ...who,
    closedBook: { accuracy: accuracyCell(p.closed.accuracy), f1: meanCell(pts(p.closed.f1)) },
    rag: { accuracy: accuracyCell(p.rag.accuracy), f1: meanCell(pts(p.rag.f1)) },
    gain: { accuracy: meanCell(gAcc), f1: meanCell(gF1), mean: meanCell(ragGains(p)) },
    unpaired: p.unpaired,
    paper: paperNq(who.family),
  };
}

/**
 * The tier a finding names: the model tier and the data, e.g. "real-base · NQ-open". Kept apart from notebook
 * 06's tiers (the synthetic world's questions), so the claims table never compares an NQ gain with a world gain.
 */
export function nqTier(tier: string): string {
  return `${tier} · NQ-open`;
}

/** The quantity the `rag-gain-mdm-vs-arm` rule reads (it matches /RAG gain/). */
export const NQ_GAIN_QUANTITY = "RAG gain on NQ-open, points (mean of Acc and F1 gains, paired over questions)";

/**
 * The findings of a table: per model the RAG gain (read by the claim's rule) and the four Table 1 cells,
 * listed beside it (their quantities do not match the rule), each naming the paper's number where there is one.
 * `rag` says what retrieval was here ("gold among 4 distractors").
 */
export function nqFindings(rows: readonly NqTable1Row[], rag: string): Finding[] {
  const out: Finding[] = [];
  for (const r of rows) {
    const base = { claim: "rag-gain-mdm-vs-arm" as const, model: r.model, family: r.family, tier: nqTier(r.tier) };
    const paper = (x: number | undefined) => (r.paper && x !== undefined ? `; paper's ${r.paper.model}: ${x}` : "");
    out.push({ ...base, quantity: NQ_GAIN_QUANTITY + paper(r.paper ? round2(r.paper.gain) : undefined), ...r.gain.mean });
    const cells: [string, Cell, number | undefined][] = [
      ["NQ-open accuracy closed-book, %", r.closedBook.accuracy, r.paper?.closedBook.accuracy],
      ["NQ-open F1 closed-book, %", r.closedBook.f1, r.paper?.closedBook.f1],
      [`NQ-open accuracy with ${rag}, %`, r.rag.accuracy, r.paper?.rag.accuracy],
      [`NQ-open F1 with ${rag}, %`, r.rag.f1, r.paper?.rag.f1],
    ];
    for (const [q, c, p] of cells) out.push({ ...base, quantity: q + paper(p), ...c });
  }
  return out;
}

function round2(x: number): number {
  return Math.round(x * 100) / 100;
}

/** "12.3 [8.1, 17.0]" (one decimal; "—" for no interval). */
export function cellText(c: Cell): string {
  return `${c.value.toFixed(1)} ${c.ci95 ? `[${c.ci95[0].toFixed(1)}, ${c.ci95[1].toFixed(1)}]` : "[—]"}`;
}

/** The table as plain-text lines (ours with intervals, the paper's number after a slash), for the console. */
export function table1Text(rows: readonly NqTable1Row[]): string[] {
  const head = ["model", "tier", "paradigm", "n", "closed Acc", "closed F1", "RAG Acc", "RAG F1", "gain (paired)", "paper"];
  const body = rows.map((r) => [
    r.model,
    r.tier,
    paradigmOf(r.family) ?? "?",
    String(r.gain.mean.n),
    cellText(r.closedBook.accuracy),
    cellText(r.closedBook.f1),
    cellText(r.rag.accuracy),
    cellText(r.rag.f1),
    `${r.gain.mean.value >= 0 ? "+" : ""}${cellText(r.gain.mean)}`,
    r.paper
      ? `${r.paper.model}: ${r.paper.closedBook.accuracy}/${r.paper.closedBook.f1} → ${r.paper.rag.accuracy}/${r.paper.rag.f1}, gain +${round2(r.paper.gain)}`
      : "—",
  ]);
  const width = head.map((h, i) => Math.max(h.length, ...body.map((b) => b[i].length)));
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(width[i]))
      .join("  ")
      .trimEnd();
  return [line(head), line(width.map((w) => "-".repeat(w))), ...body.map(line)];
}

/** Median of positive numbers (NaN for none). */
export function median(xs: readonly number[]): number {
  const s = xs.filter(Number.isFinite).sort((a, b) => a - b);
  if (s.length === 0) return NaN;
  const m = Math.floor(s.length / 2);
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/**
 * Wall time of a run of `n` questions per setting, from measured per-question medians (ms) and each model's
 * load time (s): Σ over models (load + Σ over settings median × n). Seconds.
 */
export function estimateSeconds(models: readonly { loadSeconds: number; msPerQuestion: Record<string, number> }[], n: number): number {
  return models.reduce((s, m) => s + m.loadSeconds + Object.values(m.msPerQuestion).reduce((a, ms) => a + (ms * n) / 1000, 0), 0);
}
