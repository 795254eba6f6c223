/**
 * What every benchmark script shares: medians of repeats, ratios against a baseline, the machine
 * and load-average lines of a report, markdown tables, and the atomic rewrite of one
 * `## Section` of BENCHMARKS.md (each script owns one section and leaves the others as they are;
 * `npm run bench`, bench/run.ts, runs them all and writes the whole file).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { ADAPTERS, type BlockNames } from "../src/graph/adapters/index.js";
import type { ModelSpec } from "../src/graph/spec.js";

/** The repository root (this file lives in `bench/`). */
export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");

/** The median: the middle element of the sorted copy, or the mean of the two middle ones for an even count. */
export function median(xs: readonly number[]): number {
  if (xs.length === 0) return NaN;
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** Element min(n−1, ⌊n·p⌋) of the sorted copy (p 0.5 → the upper median, 0.9 → p90). */
export function percentile(xs: readonly number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor(s.length * p))];
}

/** [median, min] ms over `repeats` runs after one warm-up (min shows the cost without contention). */
export function timeRepeats(f: () => void, repeats: number): [number, number] {
  f();
  const ts: number[] = [];
  for (let i = 0; i < repeats; i++) {
    const t = performance.now();
    f();
    ts.push(performance.now() - t);
  }
  return [median(ts), Math.min(...ts)];
}

/** `value / baseline` with two decimals, as the "× baseline" columns print it. */
export function ratio(value: number, baseline: number): string {
  return (value / baseline).toFixed(2);
}

/** The 1/5/15-minute load averages now. */
export const loadAverage = (): number[] => os.loadavg();

/** "0.52 / 0.61 / 0.70". */
export function formatLoad(load: readonly number[]): string {
  return load.map((x) => x.toFixed(2)).join(" / ");
}

/** The shared-machine caveat every section carries: load before and after the run. */
export function loadSentence(before: readonly number[], after: readonly number[]): string {
  return `Load average ${formatLoad(before)} before and ${formatLoad(after)} after (1/5/15 min): the machine is shared; treat small differences as noise.`;
}

/** "2026-11-30T05:01Z, 2 cores (CPU model)": when and where a section was measured. */
export function machineStamp(): string {
  return `${new Date().toISOString().slice(0, 16)}Z, ${os.cpus().length} cores (${os.cpus()[0]?.model.trim()})`;
}

/** A GitHub markdown table: header row, `|---|` separator, one line per row. */
export function markdownTable(header: readonly string[], rows: readonly (readonly (string | number)[])[]): string {
  const line = (cells: readonly (string | number)[]) => `| ${cells.join(" | ")} |`;
  return [line(header), `|${header.map(() => "---").join("|")}|`, ...rows.map(line)].join("\n");
}

/**
 * Replace the section that starts at the line `heading` (e.g. "## Engine") with `body` (which
 * starts with that heading line itself), up to the next "## " heading; append it when the file has
 * no such section yet. Written to a temporary file and renamed, so a killed run leaves the old file.
 */
export function replaceSection(file: string, heading: string, body: string): void {
  const old = fs.existsSync(file) ? fs.readFileSync(file, "utf8") : "# Benchmarks\n";
  const start = old.indexOf(`\n${heading}\n`);
  let next: string;
  if (start < 0) {
    next = old.trimEnd() + "\n\n" + body;
  } else {
    const rest = old.slice(start + 1 + heading.length + 1);
    const m = /\n## /.exec(rest);
    const after = m ? rest.slice(m.index + 1) : "";
    next = old.slice(0, start + 1) + body + (after ? "\n" + after : "");
  }
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, next.trimEnd() + "\n");
  fs.renameSync(tmp, file);
}

/**
 * Where a script's section goes: `FLOATSCOPE_BENCH_OUT` when set (`npm run bench` collects every
 * script's section in one file that way, also in --quick mode), else the repository's BENCHMARKS.md.
 */
export const benchmarkFile = (): string => process.env.FLOATSCOPE_BENCH_OUT ?? path.join(ROOT, "BENCHMARKS.md");

/** Whether a script writes its section: always under `npm run bench`; alone, only when not --quick. */
export const writesSection = (quick: boolean): boolean => !quick || process.env.FLOATSCOPE_BENCH_OUT !== undefined;

/** `replaceSection` on `benchmarkFile()`. */
export function writeBenchmarkSection(heading: string, body: string): void {
  replaceSection(benchmarkFile(), heading, body);
}

/**
 * A random-weights LLaMA-layout model spec of the given sizes, as the engine benches build it: only
 * the family, architecture, masking and context length differ between them.
 */
export function benchLlamaSpec(
  dims: { layers: number; hidden: number; heads: number; ffn: number; vocab: number },
  kind: Pick<ModelSpec, "family" | "architecture" | "causal" | "maxPositionEmbeddings">,
): ModelSpec {
  const { layers, hidden, heads, ffn, vocab } = dims;
  return {
    ...kind,
    logitShift: 0,
    hiddenSize: hidden,
    numLayers: layers,
    numHeads: heads,
    numKvHeads: heads,
    headDim: hidden / heads,
    intermediateSize: ffn,
    vocabSize: vocab,
    rmsNormEps: 1e-5,
    rope: { theta: 10000 },
    qkvBias: false,
    eosTokenIds: [0],
    addsBos: false,
    weights: {
      embed: "model.embed_tokens.weight",
      finalNorm: "model.norm.weight",
      lmHead: "lm_head.weight",
      blocks: Array.from({ length: layers }, (_, l) => llamaBlockNames(l)),
    },
  };
}

/** Layer `l`'s tensor names in the HF LLaMA layout, from the llama adapter's name table (the one place they are written). */
export function llamaBlockNames(l: number): BlockNames {
  const t = ADAPTERS.llama.names.block;
  return Object.fromEntries(Object.entries(t).map(([k, v]) => [k, v.replaceAll("{l}", String(l))])) as BlockNames;
}
