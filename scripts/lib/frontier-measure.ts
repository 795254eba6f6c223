/**
 * The frontier measurement's pure parts (scripts/measure-frontier.ts): its settings, the per-sample row
 * it appends to its resumable .jsonl, the pooling of rows into numbers with 95 % intervals
 * (`poolFrontier`, a percentile bootstrap over samples), the findings CLAIMS.md reads, and the
 * Markdown table the README's model-tier section shows.
 *
 * Definitions are the frontier analysis's (src/analysis/frontier.ts, docs/analyses.md "The frontier"):
 * per step and layer the top-1 anchor, the masked/unmasked boundary, an exact chance baseline, and on
 * long answers the fact being written vs the steps shuffled.
 */
import type { FrontierResult } from "../../src/analysis/frontier.js";
import { poolFrontier } from "../../src/analysis/frontier.js";
import { bootstrapMean } from "../../src/analysis/robustness.js";
import { formatClaimNumber } from "../../src/display/claims.js";
import { escapeMarkdown } from "../../src/display/escape.js";
import type { Finding } from "../../src/display/findings.js";
import { PAPER_ORDERS, PAPER_TOKENS } from "../../src/notebook/paper-setting.js";
import { FloatscopeError } from "../../src/util/errors.js";
import type { BootstrapOptions } from "../../src/util/stats.js";

export type FrontierTraceStats = FrontierResult["perTrace"][number];

/** One decoding setting of the measurement. */
export interface FrontierSetting {
  /** In words, for tables and findings. */
  label: string;
  /** New tokens, decoded in as many steps, one block. */
  tokens: number;
  /** The MDM's unmasking order (the causal twin decodes greedily, left to right, whatever this says). */
  order: { sampler: "llada" | "dream"; alg: string };
  /** Short held-out questions (gold passage only) or long answers (every gold passage). */
  data: "short" | "long";
  /** Decode the causal twin too: only where its run differs (greedy decoding has no order to vary). */
  twin: boolean;
}

/**
 * The paper's temporal setting under both orders, and long answers (docs/analyses.md, "The frontier"): the same
 * orders and token counts as the figure notebooks' paper-setting sections (src/notebook/paper-setting.ts).
 */
export const FRONTIER_SETTINGS: Record<string, FrontierSetting> = {
  llada32: {
    label: "32 tokens in 32 steps, LLaDA low-confidence order",
    tokens: PAPER_TOKENS.short,
    order: PAPER_ORDERS["LLaDA low-confidence order"],
    data: "short",
    twin: true,
  },
  dream32: {
    label: "32 tokens in 32 steps, Dream entropy order",
    tokens: PAPER_TOKENS.short,
    order: PAPER_ORDERS["Dream entropy order"],
    data: "short",
    twin: false,
  },
  long64: {
    label: "64 tokens in 64 steps, long answers, Dream entropy order",
    tokens: PAPER_TOKENS.long,
    order: PAPER_ORDERS["Dream entropy order"],
    data: "long",
    twin: true,
  },
};

/** One decoded sample: what the pooling needs, and enough to know when it is stale. */
export interface FrontierRow {
  setting: string;
  model: string;
  family: string;
  causal: boolean;
  /** The checkpoint's fingerprint: a retrained model's rows are not reused. */
  fingerprint: string;
  /** The QA record's id (row and content hash). */
  record: string;
  answer: string;
  steps: number;
  promptLength: number;
  /**
   * Long answers: gold facts, those the answer states (with answer tokens), and those not placed in the prompt;
   * `recall` / `precision`: the answer's fact scores by the cards' rule (`factScores`, src/qa/metrics.ts), so
   * this run's decodes also give the long-answer recall (rows written before these fields leave them out).
   */
  facts?: { total: number; stated: number; missing: number; recall?: number; precision?: number };
  stats: FrontierTraceStats;
}

/** The key a rerun skips on: setting, model version, record. */
export function rowKey(r: Pick<FrontierRow, "setting" | "fingerprint" | "record">): string {
  return `${r.setting}\t${r.fingerprint}\t${r.record}`;
}

/**
 * The rows of a .jsonl file's text. A last line that does not parse is a run killed mid-write: left out
 * and reported in `truncated`; any other bad line is a typed error naming the file and the line.
 */
export function parseRows(text: string, file: string): { rows: FrontierRow[]; truncated: boolean } {
  const lines = text.split("\n");
  const rows: FrontierRow[] = [];
  let truncated = false;
  lines.forEach((line, i) => {
    if (line.trim() === "") return;
    const last = lines.slice(i + 1).every((l) => l.trim() === "");
    let row: FrontierRow;
    try {
      row = JSON.parse(line) as FrontierRow;
    } catch (e) {
      if (last) return void (truncated = true);
      throw new FloatscopeError("not JSON", {
        file,
        field: `line ${i + 1}`,
        expected: "one frontier row per line",
        found: (e as Error).message,
      });
    }
    const ok =
      typeof row?.setting === "string" &&
      typeof row.model === "string" &&
      typeof row.record === "string" &&
      typeof row.fingerprint === "string" &&
      Array.isArray(row.stats?.layers);
    if (!ok)
      throw new FloatscopeError("malformed frontier row", {
        file,
        field: `line ${i + 1}`,
        expected: "{ setting, model, record, fingerprint, stats: { layers: [...] } }",
        found: line.slice(0, 120),
      });
    rows.push(row);
  });
  return { rows, truncated };
}

/** The numbers reported per (setting, model): the analysis's statistic, its unit and baseline. */
export const MEASURES = [
  {
    key: "distinct",
    statistic: "distinct anchors per layer",
    quantity: "distinct top-1 anchor positions per layer over the steps",
    percent: false,
    baseline: null,
  },
  {
    key: "moves",
    statistic: "share of layers whose top-1 moves",
    quantity: "layers whose top-1 anchor moves at least once (%)",
    percent: true,
    baseline: null,
  },
  {
    key: "frontierWithin",
    statistic: "share of anchors within radius of the frontier",
    quantity: "top-1 anchors within {r} positions of the frontier (%)",
    percent: true,
    baseline: "chance",
  },
  {
    key: "frontierDistance",
    statistic: "anchor-to-frontier distance",
    quantity: "top-1 anchor's distance to the frontier (positions)",
    percent: false,
    baseline: "chance",
  },
  {
    key: "unmaskedWithin",
    statistic: "share of anchors within radius of the unmasked tokens",
    quantity: "top-1 anchors within {r} positions of the tokens unmasked at that step (%)",
    percent: true,
    baseline: "chance",
  },
  {
    key: "source",
    statistic: "deep anchor in the written fact's source",
    quantity: "deep-layer top-1 anchors inside the passage span of the fact written at that step (%)",
    percent: true,
    baseline: "steps shuffled",
  },
] as const;
export type MeasureKey = (typeof MEASURES)[number]["key"];

/** Samples that count for a measure: those with a non-zero denominator (anchors at a frontier, steps that write a fact). */
const COUNTS: Record<MeasureKey, (s: FrontierTraceStats) => number> = {
  distinct: (s) => s.layers.length,
  moves: (s) => s.layers.length,
  frontierWithin: (s) => s.layers.reduce((a, l) => a + l.anchors, 0),
  frontierDistance: (s) => s.layers.reduce((a, l) => a + l.anchors, 0),
  unmaskedWithin: (s) => s.layers.reduce((a, l) => a + l.unmaskedAnchors, 0),
  source: (s) => s.layers.reduce((a, l) => a + l.sourceSteps, 0),
};

export interface Pooled {
  value: number;
  lo: number;
  hi: number;
  /** Chance or shuffled baseline with its interval (null where the measure has none). */
  baseline: [number, number, number] | null;
  /** Observed − baseline, paired over the same resamples. */
  difference: [number, number, number] | null;
  /** Samples with a non-zero denominator. */
  n: number;
}

export interface FrontierGroup {
  setting: string;
  label: string;
  model: string;
  family: string;
  causal: boolean;
  samples: number;
  /** Per measure; null where it does not apply (no frontier in a causal model, no fact written). */
  measures: Record<MeasureKey, Pooled | null>;
  /** Per layer (pooled over samples): the share within the radius of the frontier and its chance, distinct anchors, share moved. */
  layers: { layer: number[]; within: number[]; chance: number[]; distinct: number[]; moved: number[] };
  /** Long answers: mean fact recall and precision over the samples that carry them (bootstrap 95 %); else absent. */
  answers?: { recall: Pooled; precision: Pooled };
}

export interface FrontierReport {
  radius: number;
  rule: string;
  groups: FrontierGroup[];
}

const round = (x: number) => (Number.isFinite(x) ? Number(x.toPrecision(5)) : null);

/**
 * Pool rows per (setting, model), in the order of `settings` then first appearance: every measure a
 * ratio of sums over samples and layers with a percentile-bootstrap 95 % interval over samples.
 */
export function poolRows(
  rows: readonly FrontierRow[],
  settings: Record<string, FrontierSetting>,
  o: BootstrapOptions = {},
): FrontierReport {
  const groups: FrontierGroup[] = [];
  const radius = rows[0]?.stats.radius ?? 2;
  const rule = rows[0]?.stats.rule ?? "top-k (k = 1)";
  for (const r of rows)
    if (r.stats.radius !== radius || r.stats.rule !== rule)
      throw new FloatscopeError("rows measured differently", {
        field: `${r.setting} ${r.model} ${r.record}`,
        expected: `radius ${radius}, rule ${rule}`,
        found: `radius ${r.stats.radius}, rule ${r.stats.rule}`,
      });
  for (const [setting, def] of Object.entries(settings)) {
    const mine = rows.filter((r) => r.setting === setting);
    for (const model of [...new Set(mine.map((r) => r.model))]) {
      const own = mine.filter((r) => r.model === model);
      const { summary, layers } = poolFrontier(
        own.map((r) => r.stats),
        o,
      );
      const srows = summary.objects() as Record<string, number>[];
      const measures = Object.fromEntries(
        MEASURES.map((m) => {
          const s = srows.find((x) => (x.statistic as unknown as string) === m.statistic);
          if (!s) throw new Error(`poolFrontier has no statistic ${JSON.stringify(m.statistic)}`);
          const n = own.filter((r) => COUNTS[m.key](r.stats) > 0).length;
          if (n === 0 || !Number.isFinite(s.value)) return [m.key, null];
          const triple = (a: string, b: string, c: string): [number, number, number] | null =>
            Number.isFinite(s[a]) ? [s[a], s[b], s[c]] : null;
          const p: Pooled = {
            value: s.value,
            lo: s.lo,
            hi: s.hi,
            baseline: m.baseline ? triple("baseline", "baselineLo", "baselineHi") : null,
            difference: m.baseline ? triple("difference", "differenceLo", "differenceHi") : null,
            n,
          };
          return [m.key, p];
        }),
      ) as Record<MeasureKey, Pooled | null>;
      const lrows = layers.objects() as Record<string, number>[];
      const col = (k: string) => lrows.map((x) => round(x[k]) as number);
      const scored = own.filter((r) => typeof r.facts?.recall === "number" && typeof r.facts?.precision === "number");
      const meanOf = (xs: number[]): Pooled => {
        const b = bootstrapMean(xs, o);
        return { value: b.mean, lo: b.lo, hi: b.hi, baseline: null, difference: null, n: xs.length };
      };
      const answers =
        scored.length > 0
          ? { recall: meanOf(scored.map((r) => r.facts!.recall!)), precision: meanOf(scored.map((r) => r.facts!.precision!)) }
          : undefined;
      groups.push({
        setting,
        // The twin decodes greedily whatever the setting's order: its rows say so.
        label: own[0].causal ? `${def.tokens} new tokens, greedy left to right${def.data === "long" ? ", long answers" : ""}` : def.label,
        model,
        family: own[0].family,
        causal: own[0].causal,
        samples: own.length,
        measures,
        layers: { layer: col("layer"), within: col("within"), chance: col("chance"), distinct: col("distinct"), moved: col("moved") },
        ...(answers ? { answers } : {}),
      });
    }
  }
  return { radius, rule, groups };
}

/**
 * The findings CLAIMS.md reads (claim `anchors-float-mdm`; none of them is the quantity its rule reads,
 * so they are listed beside the notebooks' numbers): per group and measure the value, its baseline and
 * the difference, each with its interval; shares in percent.
 */
export function frontierFindings(report: FrontierReport, tier: string): Finding[] {
  const out: Finding[] = [];
  for (const g of report.groups) {
    for (const m of MEASURES) {
      const p = g.measures[m.key];
      if (!p) continue;
      const k = m.percent ? 100 : 1;
      const quantity = `frontier, ${g.label}: ${m.quantity.replace("{r}", String(report.radius))}`;
      const base = { claim: "anchors-float-mdm" as const, model: g.model, family: g.family, tier, n: p.n };
      out.push({ ...base, quantity, value: p.value * k, ci95: [p.lo * k, p.hi * k] });
      if (p.baseline)
        out.push({
          ...base,
          quantity: `${quantity}, ${m.baseline}`,
          value: p.baseline[0] * k,
          ci95: [p.baseline[1] * k, p.baseline[2] * k],
        });
      if (p.difference)
        out.push({
          ...base,
          quantity: `${quantity}, minus ${m.baseline}${m.percent ? " (points)" : ""}`,
          value: p.difference[0] * k,
          ci95: [p.difference[1] * k, p.difference[2] * k],
        });
    }
    for (const [key, p] of Object.entries(g.answers ?? {}))
      out.push({
        claim: "anchors-float-mdm" as const,
        model: g.model,
        family: g.family,
        tier,
        n: p.n,
        quantity: `frontier, ${g.label}: long-answer fact ${key} (%), factScores`,
        value: p.value * 100,
        ci95: [p.lo * 100, p.hi * 100],
      });
  }
  return out;
}

/** "12.3 [10.1, 14.6]" in the claims table's number format. */
function interval(v: number, lo: number, hi: number, k: number): string {
  return `${formatClaimNumber(v * k)} [${formatClaimNumber(lo * k)}, ${formatClaimNumber(hi * k)}]`;
}

/** One table cell: value [interval], then the baseline and the difference where the measure has them. */
function cellOf(p: Pooled | null, percent: boolean, baselineName: string | null, samples: number): string {
  if (!p) return "—";
  const k = percent ? 100 : 1;
  let s = interval(p.value, p.lo, p.hi, k);
  if (p.baseline) s += `; ${baselineName} ${interval(...p.baseline, k)}`;
  if (p.difference) s += `; difference ${interval(...p.difference, k)}`;
  if (p.n !== samples) s += ` (n = ${p.n})`;
  return s;
}

/** The table's columns: the measures the README reports (the just-unmasked share stays in the findings). */
const TABLE: MeasureKey[] = ["distinct", "moves", "frontierWithin", "frontierDistance", "source"];

/**
 * The README's numbers table: one row per (setting, model), one column per measure, each value with its
 * 95 % interval and, where it has one, its baseline and the difference. Model names are escaped.
 */
export function frontierTable(report: FrontierReport): string {
  const head = TABLE.map((key) => {
    const m = MEASURES.find((x) => x.key === key)!;
    return m.quantity.replace("{r}", String(report.radius)) + (m.baseline ? ` vs ${m.baseline}` : "");
  });
  const lines = [
    `| setting | model | n | ${head.join(" | ")} | long-answer fact recall / precision (%) |`,
    `|${"---|".repeat(4 + TABLE.length)}`,
  ];
  for (const g of report.groups) {
    const cells = TABLE.map((key) => {
      const m = MEASURES.find((x) => x.key === key)!;
      return cellOf(g.measures[key], m.percent, m.baseline, g.samples);
    });
    cells.push(
      g.answers ? `${cellOf(g.answers.recall, true, null, g.samples)} / ${cellOf(g.answers.precision, true, null, g.samples)}` : "—",
    );
    const model = `${escapeMarkdown(g.model)} (${g.causal ? "causal twin, greedy" : "MDM"})`;
    lines.push(`| ${g.label} | ${model} | ${g.samples} | ${cells.join(" | ")} |`);
  }
  return lines.join("\n");
}

/** A findings file's report, checked enough to render (a typed error naming the file otherwise). */
export function reportOf(json: unknown, file: string): FrontierReport {
  const r = (json as { report?: FrontierReport } | null)?.report;
  if (!r || !Array.isArray(r.groups) || typeof r.radius !== "number")
    throw new FloatscopeError("not a frontier findings file", {
      file,
      field: "report",
      expected: "{ radius, rule, groups[] } as scripts/measure-frontier.ts --out writes it",
    });
  return r;
}

/** Where the large run's findings file is committed (the README's table and notebook 01 read it). */
export const FRONTIER_FINDINGS = "findings/frontier.findings.json";

/** What the README's table block says until the large run's findings file is committed. */
export const FRONTIER_PENDING = `_Not measured at n ≥ 100 yet: the large run writes \`${FRONTIER_FINDINGS}\` and \`--table\` prints the table that goes here._`;
