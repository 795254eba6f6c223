/**
 * From numbers to the prose a figure notebook ends with: build findings (value, bootstrap interval,
 * n), compare groups of them, and write the "What we see" paragraph — so a notebook computes its
 * numbers once and the text can never disagree with them.
 */
import { paradigmOf } from "../families/index.js";
import { bootstrapCi, mean } from "../util/stats.js";
import { escapeMarkdown } from "./escape.js";
import type { Finding } from "./findings.js";
import type { Displayable } from "./mime.js";

/** What a finding is about, without its number. */
export type FindingBase = Omit<Finding, "value" | "ci95" | "n">;

/** A number the text reports; a Finding is one that is also evidence for a claim of the paper. */
export type Measurement = Omit<Finding, "claim" | "tier">;

/**
 * The finding whose value is the mean over samples, with a seeded percentile-bootstrap 95 % interval
 * (samples that are not finite numbers are left out). A list: empty when no sample is left, so a model
 * that produced nothing measurable adds no row instead of a NaN.
 */
export function meanFinding(base: FindingBase, samples: ArrayLike<number>): Finding[] {
  const xs = Array.from(samples).filter(Number.isFinite);
  return xs.length ? [{ ...base, value: mean(xs), ci95: bootstrapCi(xs), n: xs.length }] : [];
}

/** The finding that is a count or a single measurement (no interval); empty when the value is not finite. */
export function valueFinding(base: FindingBase, value: number, n: number): Finding[] {
  return Number.isFinite(value) && n >= 1 ? [{ ...base, value, ci95: null, n }] : [];
}

/** Markdown text as a displayable (for `show`). */
export function markdown(text: string): Displayable {
  return { toMimeBundle: () => ({ "text/markdown": text, "text/plain": markdownAsPlainText(text) }) };
}

/**
 * What a Markdown text reads as where it is not rendered (text/plain: terminals, nbconvert to text,
 * output summaries): emphasis and code marks dropped, and heading marks too, so a summary line reads
 * "Claims of the paper, …", not "# Claims of the paper, …".
 */
export function markdownAsPlainText(text: string): string {
  return text.replace(/^#{1,6}[ \t]+/gm, "").replace(/[*_`]/g, "");
}

/** A number as prose: integers as they are; else ≥ 100 no decimals, ≥ 10 one, else three (exact values stay in the findings output). */
export function formatNumber(x: number): string {
  if (Number.isInteger(x)) return String(x);
  const a = Math.abs(x);
  return a >= 100 ? x.toFixed(0) : a >= 10 ? x.toFixed(1) : x.toFixed(3);
}

function withCi(f: Measurement): string {
  return `${formatNumber(f.value)}${f.ci95 ? ` [${formatNumber(f.ci95[0])}, ${formatNumber(f.ci95[1])}]` : ""}`;
}

/**
 * One sentence comparing the mean value of two groups of findings, and whether it goes the way the
 * paper reports: `expected = [higher, lower]`. Says so when a group is absent instead of comparing
 * with nothing. A row whose group is undefined (e.g. a family word `paradigmOf` does not know) is in neither.
 * @example compareGroups(rows, (f) => paradigmOf(f.family), ["ARM", "MDM"]) // "ARM 61.2 vs MDM 23.0: ARM higher, as in the paper"
 */
export function compareGroups<F extends Measurement>(rows: F[], groupOf: (f: F) => string | undefined, expected: [string, string]): string {
  const avg = (g: string) => mean(rows.filter((f) => groupOf(f) === g).map((f) => f.value));
  const [hi, lo] = expected.map(avg);
  const absent = expected.filter((_, i) => Number.isNaN([hi, lo][i]));
  if (absent.length > 0) {
    const present = expected.filter((g) => !absent.includes(g));
    return present.length
      ? `only ${present[0]} present (${formatNumber(avg(present[0]))}): no ${absent[0]} to compare with`
      : "nothing to compare";
  }
  const verdict = hi > lo ? `${expected[0]} higher, as in the paper` : `${expected[1]} as high or higher, unlike the paper`;
  return `${expected[0]} ${formatNumber(hi)} vs ${expected[1]} ${formatNumber(lo)}: ${verdict}`;
}

export interface FindingsTextOptions {
  /** The bold first sentence (e.g. a `compareGroups` result). */
  headline?: string;
  /** What the paper reports, for the reader to compare. */
  paper?: string;
  /** Names of the models the notebook could not find (the text then says it covers only the others). */
  missing?: string[];
}

/**
 * The "What we see" paragraph: headline, one line per model with each of its numbers, the paper's numbers, what is missing.
 * Every string in it (model names, quantities, headline, paper, missing names) is user text: escaped for
 * Markdown (escape.ts), so a model called `<script>…` is shown, never run. text/plain is built from the
 * same parts unescaped.
 */
export function findingsText(rows: Measurement[], o: FindingsTextOptions = {}): Displayable {
  const build = (t: (s: string) => string, bold: (s: string) => string, em: (s: string) => string) => {
    const models = [...new Set(rows.map((f) => f.model))];
    const lines = models.map((m) => {
      const fs = rows.filter((f) => f.model === m);
      const kind = paradigmOf(fs[0].family);
      return `- ${bold(t(m))}${kind ? ` (${kind})` : ""}: ${fs.map((f) => `${t(f.quantity)} ${withCi(f)} (n = ${f.n})`).join("; ")}`;
    });
    const parts = [
      o.headline ? bold(`${t(o.headline)}.`) : "",
      lines.length ? lines.join("\n") : em("No numbers: none of this notebook's models ran."),
      rows.some((f) => f.ci95) ? "Brackets: 95 % bootstrap interval over the samples." : "",
      o.paper ? `Paper: ${t(o.paper)}` : "",
      o.missing?.length ? em(`Not in this run (missing): ${o.missing.map(t).join(", ")} — the text covers only the models above.`) : "",
    ];
    return parts.filter(Boolean).join("\n\n");
  };
  const same = (s: string) => s;
  const md = build(
    escapeMarkdown,
    (s) => `**${s}**`,
    (s) => `_${s}_`,
  );
  const text = build(String, same, same);
  return { toMimeBundle: () => ({ "text/markdown": md, "text/plain": text }) };
}

/**
 * The sink claim's quantities, in the words CLAIMS.md lists them under (the claims rule reads the first:
 * docs/claims.md, "sink-fixed-arm"). Each is a percent, mean over samples with a bootstrap interval.
 */
export const SINK_QUANTITIES = {
  top1AtFirst: "top-1 key at position 0, % of (step, layer) cells",
  onFirst: "attention on position 0, % (mean over steps and layers)",
  top1Stability: "top-1 key stability, % of steps at the layer's most frequent top-1 key (mean over layers)",
} as const;

/** One sample's sink numbers (fractions), as the first-token sink analysis's `samples` table has them. */
export interface SinkSample {
  model: string;
  family: string;
  onFirst: number;
  top1AtFirst: number;
  top1Stability: number;
}

/** One layer's sink numbers (fractions, means over `n` samples), as the analysis's `layers` table has them. */
export interface SinkLayer {
  model: string;
  layer: number;
  onFirst: number;
  top1AtFirst: number;
  top1Stability: number;
  /** The position most samples have as their most frequent top-1 key at this layer. */
  modalTop1?: number;
  n: number;
}

/**
 * The findings of the sink claim (`sink-fixed-arm`) on one tier: per model (ARMs, and the MDMs beside
 * them: the rule reads only the ARMs), each SINK_QUANTITIES number in percent, mean over the samples.
 */
export function sinkFindings(samples: readonly SinkSample[], tier: string): Finding[] {
  const models = [...new Set(samples.map((s) => s.model))];
  return models.flatMap((model) => {
    const rows = samples.filter((s) => s.model === model);
    const base = { claim: "sink-fixed-arm" as const, model, family: rows[0].family, tier };
    return (Object.keys(SINK_QUANTITIES) as (keyof typeof SINK_QUANTITIES)[]).flatMap((k) =>
      meanFinding(
        { ...base, quantity: SINK_QUANTITIES[k] },
        rows.map((r) => 100 * r[k]),
      ),
    );
  });
}

/**
 * The per-layer sink table: one row per layer, four columns per model — % of attention on position 0,
 * % of steps whose top-1 key is position 0, the layer's modal top-1 key (a position) and % of steps at the
 * layer's most frequent top-1 key (the percentages means over the samples) — under one sentence saying so.
 * A layer whose sink is fixed but not on the first token shows 0 % at 0, its key, and 100 % stability.
 * Model names are user text: escaped in Markdown.
 */
export function sinkLayerTable(layers: readonly SinkLayer[], o: { title?: string } = {}): Displayable {
  const models = [...new Set(layers.map((r) => r.model))];
  const ids = [...new Set(layers.map((r) => r.layer))].sort((a, b) => a - b);
  // One decimal in every cell, so the columns line up (the exact values are in the analysis's tables).
  const pct = (x: number | undefined) => (x === undefined || Number.isNaN(x) ? "—" : (100 * x).toFixed(1));
  const ns = [...new Set(layers.map((r) => r.n))].sort((a, b) => a - b);
  const build = (t: (s: string) => string, bold: (s: string) => string) => {
    const head = [
      "layer",
      ...models.flatMap((m) => [
        `${t(m)}: % on position 0`,
        `${t(m)}: % steps top-1 at 0`,
        `${t(m)}: modal top-1 key`,
        `${t(m)}: % steps at it`,
      ]),
    ];
    const rows = ids.map((l) => [
      String(l),
      ...models.flatMap((m) => {
        const r = layers.find((x) => x.model === m && x.layer === l);
        const key = r?.modalTop1 === undefined || r.modalTop1 < 0 ? "—" : String(r.modalTop1);
        return [pct(r?.onFirst), pct(r?.top1AtFirst), key, pct(r?.top1Stability)];
      }),
    ]);
    const lead =
      (o.title ? bold(`${t(o.title)}.`) + " " : "") +
      `Per layer: the share of attention on position 0, the share of steps whose most-attended key is position 0, the layer's most frequent top-1 key (a position) and the share of steps at it — means over ${ns.length === 1 ? `n = ${ns[0]}` : `n = ${ns[0]}–${ns[ns.length - 1]}`} sample(s).`;
    return [lead, "", `| ${head.join(" | ")} |`, `|${head.map(() => "---").join("|")}|`, ...rows.map((r) => `| ${r.join(" | ")} |`)].join(
      "\n",
    );
  };
  if (layers.length === 0) {
    const none = "No sink numbers: no trace with per-step attention was given.";
    return { toMimeBundle: () => ({ "text/markdown": `_${none}_`, "text/plain": none }) };
  }
  const md = build(escapeMarkdown, (s) => `**${s}**`);
  const text = build(String, (s) => s);
  return { toMimeBundle: () => ({ "text/markdown": md, "text/plain": text }) };
}
