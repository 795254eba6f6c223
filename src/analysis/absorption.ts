/**
 * Absorption rate per layer — paper §6 / Fig. 3 (`absorption_comparison.py`, README §2).
 *
 * Definition: the absorption rate of layer l is Σ_{j∈S} c_j, the share of head-mean attention that the
 * anchor set S receives, where c_j is the column mean over query rows (our `received` probe); per layer
 * we report the mean and population σ (ddof 0) over samples.
 *
 * Where our default differs from upstream: upstream uses S = {0} for ARMs and, for MDMs, an additive
 * ε = 3 threshold on probabilities that never fires, so S = top-1 column; it also divides by Σ_ij A_ij
 * (≈ T only up to bf16 noise). `rule: "upstream"` reproduces exactly that, including the division.
 * Our default rule is `mean+ksigma` (k = 3, population σ, no fallback), applied the same way to every
 * model, and we do not renormalise: c is already a probability mass.
 */
import type { Trace } from "../trace/types.js";
import type { AbsorptionSpec } from "./figure-data.js";
import { type AnchorOptions, describeRule, passAnchors, resolveRule } from "./anchors.js";
import { type PassRef, partialWarnings, resolveLayers } from "./probes-access.js";
import { longTable, sampleLabel, type Rows } from "./tables.js";

/**
 * Absorption of one (sample, layer).
 * @param received [key] column means.
 * @param anchors anchor positions S.
 * @param normalize "total" divides by Σ_j c_j (upstream); default "none".
 */
export function absorptionOf(received: ArrayLike<number>, anchors: ArrayLike<number>, normalize: "none" | "total" = "none"): number {
  let s = 0;
  for (let i = 0; i < anchors.length; i++) s += received[anchors[i]];
  if (normalize === "none") return s;
  let tot = 0;
  for (let j = 0; j < received.length; j++) tot += received[j];
  return tot > 0 ? s / tot : NaN;
}

/**
 * Mean and population σ over samples, per layer, skipping NaN (a sample without that layer).
 * @param values [sample, layer] row-major.
 */
export function summarizeOverSamples(
  values: ArrayLike<number>,
  numSamples: number,
  numLayers: number,
): { mean: Float64Array; std: Float64Array; n: Int32Array } {
  const mean = new Float64Array(numLayers);
  const std = new Float64Array(numLayers);
  const n = new Int32Array(numLayers);
  for (let l = 0; l < numLayers; l++) {
    let s = 0;
    let c = 0;
    for (let i = 0; i < numSamples; i++) {
      const v = values[i * numLayers + l];
      if (!Number.isNaN(v)) {
        s += v;
        c++;
      }
    }
    const m = c ? s / c : NaN;
    let v2 = 0;
    for (let i = 0; i < numSamples; i++) {
      const v = values[i * numLayers + l];
      if (!Number.isNaN(v)) v2 += (v - m) ** 2;
    }
    mean[l] = m;
    std[l] = c ? Math.sqrt(v2 / c) : NaN;
    n[l] = c;
  }
  return { mean, std, n };
}

export interface AbsorptionOptions extends AnchorOptions {
  /** Which pass: "final" (the paper's choice) or a step index. Default "final". */
  pass?: PassRef;
  /** Layers to report. Default: every layer with a `received` probe. */
  layers?: number[] | "all";
  /** Model label per trace (default `trace.model.name`); traces with the same label are pooled. */
  models?: string[];
  /** Sample label per trace (default `settings.sampleId`, `settings.id` or the index). */
  samples?: string[];
}

export interface AbsorptionResult {
  /** One row per (model, sample, layer): value (fraction), anchors (|S|), positions (S). */
  table: Rows<{ model: string; sample: string; rule: string; layer: number; value: number; anchors: number; positions: number[] }>;
  /** One row per (model, layer): mean, std (population), n, anchors (mean |S|). */
  summary: Rows<{ model: string; rule: string; layer: number; mean: number; std: number; n: number; anchors: number }>;
  spec: AbsorptionSpec;
}

/**
 * Absorption rate per layer for one or more traces.
 * @example
 * const { summary, spec } = absorptionRate([llada1, llada2, llama1], { rule: "upstream" });
 * summary.filter(d => d.layer > 20).print();
 */
export function absorptionRate(traces: Trace | Trace[], opts: AbsorptionOptions = {}): AbsorptionResult {
  const list = Array.isArray(traces) ? traces : [traces];
  const pass = opts.pass ?? "final";
  const cols = {
    model: [] as string[],
    sample: [] as string[],
    rule: [] as string[],
    layer: [] as number[],
    value: [] as number[],
    anchors: [] as number[],
    positions: [] as number[][],
  };
  const warnings = new Set<string>();
  const ruleOf = new Map<string, string>();
  const causalOf = new Map<string, boolean>();
  const seen = new Set<string>();
  list.forEach((trace, i) => {
    const model = opts.models?.[i] ?? trace.model.name;
    let sample = sampleLabel(trace.settings, i, opts.samples);
    if (seen.has(`${model}\u0000${sample}`)) sample = `${sample}#${i}`; // two traces of one question stay two samples
    seen.add(`${model}\u0000${sample}`);
    causalOf.set(model, trace.model.causal);
    const rule = resolveRule(opts, "absorption", trace.model.causal);
    const ruleLabel = describeRule(rule); // "upstream" differs between ARMs and MDMs
    ruleOf.set(model, ruleLabel);
    if (rule.rule === "bos" && trace.model.bosTokenId === undefined)
      warnings.add(`${model} has no BOS token: rule "bos" gives empty anchor sets`);
    if (rule.label === "upstream" && trace.model.causal) {
      const first = trace.final.sequence[0];
      if (trace.model.bosTokenId === undefined || first !== trace.model.bosTokenId) {
        warnings.add(`${model}: position 0 is not a BOS token, so the upstream ARM value measures the first text token`);
      }
    }
    const normalize = rule.label === "upstream" ? "total" : "none";
    for (const layer of resolveLayers(trace, pass, "received", opts.layers, model)) {
      const { received, anchors } = passAnchors(trace, pass, layer, rule, model);
      cols.model.push(model);
      cols.sample.push(sample);
      cols.rule.push(ruleLabel);
      cols.layer.push(layer);
      cols.value.push(absorptionOf(received, anchors, normalize));
      cols.anchors.push(anchors.length);
      cols.positions.push(Array.from(anchors));
    }
  });
  const table = longTable({
    ...cols,
    layer: Int32Array.from(cols.layer),
    value: Float64Array.from(cols.value),
    anchors: Int32Array.from(cols.anchors),
  });

  // Summary per (model, layer), in first-seen model order.
  const models = [...new Set(cols.model)];
  const sum = {
    model: [] as string[],
    rule: [] as string[],
    layer: [] as number[],
    mean: [] as number[],
    std: [] as number[],
    n: [] as number[],
    anchors: [] as number[],
  };
  const series: AbsorptionSpec["series"] = [];
  for (const model of models) {
    const rows = cols.model.map((m, r) => (m === model ? r : -1)).filter((r) => r >= 0);
    const layers = [...new Set(rows.map((r) => cols.layer[r]))].sort((a, b) => a - b);
    const samples = [...new Set(rows.map((r) => cols.sample[r]))];
    const grid = new Float64Array(samples.length * layers.length).fill(NaN);
    const sizes = new Float64Array(samples.length * layers.length).fill(NaN);
    for (const r of rows) {
      const at = samples.indexOf(cols.sample[r]) * layers.length + layers.indexOf(cols.layer[r]);
      grid[at] = cols.value[r];
      sizes[at] = cols.anchors[r];
    }
    const s = summarizeOverSamples(grid, samples.length, layers.length);
    const a = summarizeOverSamples(sizes, samples.length, layers.length);
    layers.forEach((layer, li) => {
      sum.model.push(model);
      sum.rule.push(ruleOf.get(model)!);
      sum.layer.push(layer);
      sum.mean.push(s.mean[li]);
      sum.std.push(s.std[li]);
      sum.n.push(s.n[li]);
      sum.anchors.push(a.mean[li]);
    });
    const causal = causalOf.get(model);
    series.push({
      model,
      paradigm: causal ? "ARM" : "MDM",
      layers,
      mean: Array.from(s.mean, (v) => round(100 * v)),
      std: Array.from(s.std, (v) => round(100 * v)),
      samples: samples.length,
      anchors: Array.from(a.mean, (v) => round(v)),
    });
  }
  const summary = longTable({
    ...sum,
    layer: Int32Array.from(sum.layer),
    mean: Float64Array.from(sum.mean),
    std: Float64Array.from(sum.std),
    n: Int32Array.from(sum.n),
    anchors: Float64Array.from(sum.anchors),
  });
  const spec: AbsorptionSpec = {
    kind: "absorption",
    rule: [...new Set(ruleOf.values())].join("; "),
    series,
    warnings: [...partialWarnings(list), ...warnings],
  };
  return { table, summary, spec };
}

function round(v: number): number {
  return Number.isFinite(v) ? Math.round(v * 1e4) / 1e4 : NaN;
}
