/**
 * The first-token sink across denoising steps — the paper's ARM picture (Fig. 1: one fixed sink column,
 * the first token, in every layer) measured on attention, beside the MDMs' floating anchors.
 *
 * Definition, per (sample, layer), over the recorded steps s = 1…S of one run (an ARM's decoding steps,
 * an MDM's denoising steps), with c^s the `received` vector of that step (head-mean attention each key
 * receives, averaged over query rows, as every anchor analysis reads it):
 * - `onFirst` = (1/S) Σ_s c^s_0 — the share of attention on position 0, mean over steps;
 * - `top1^s` = argmax_j c^s_j (ties to the lower position, as the anchor detector breaks them);
 * - `top1AtFirst` = #{s : top1^s = 0} / S — how often position 0 is the most-attended key;
 * - `modalTop1` = the most frequent top1^s (ties to the lower position);
 * - `top1Stability` = #{s : top1^s = modalTop1} / S — 1 when one key stays the sink at every step;
 * - `distinctTop1` = |{top1^s}|, `switches` = #{s > 1 : top1^s ≠ top1^(s−1)}.
 * A fixed first-token sink is `top1AtFirst = top1Stability = 1`; a floating anchor has a lower stability
 * or a modal key away from 0. Per sample the layers are pooled (`samples`: means over layers; every layer
 * has the same S, so the mean of `top1AtFirst` is the share of (step, layer) cells whose top-1 key is 0);
 * per layer the samples are pooled (`layers`: means over samples).
 *
 * Upstream has no such measurement (the paper shows the ARM sink as a picture). Nothing is excluded: in a
 * causal model query row 0 sees only key 0 and adds 1/T to c_0, as it does in the paper's absorption rule.
 */
import type { Trace } from "../trace/types.js";
import { getProbe, partialWarnings, requireSteps, resolveLayers } from "./probes-access.js";
import { type Rows, longTable, sampleLabel } from "./tables.js";

/** The sink statistics of one layer over one run's steps. */
export interface SinkStats {
  onFirst: number;
  top1AtFirst: number;
  top1Stability: number;
  modalTop1: number;
  distinctTop1: number;
  switches: number;
  steps: number;
}

/** Position of the largest value (ties to the lower position); -1 for an empty or all-NaN vector. */
export function argmaxKey(c: ArrayLike<number>): number {
  let best = -1;
  for (let j = 0; j < c.length; j++) if (!Number.isNaN(c[j]) && (best < 0 || c[j] > c[best])) best = j;
  return best;
}

/**
 * The sink statistics of one layer from its `received` vector at each step (the pure core).
 * @param rows one [key] vector per step (an ARM's rows grow by one key per step).
 */
export function sinkOverSteps(rows: readonly ArrayLike<number>[]): SinkStats {
  const S = rows.length;
  if (S === 0) return { onFirst: NaN, top1AtFirst: NaN, top1Stability: NaN, modalTop1: -1, distinctTop1: 0, switches: 0, steps: 0 };
  const top = rows.map(argmaxKey);
  const modal = mode(top);
  const at = (k: number) => top.filter((t) => t === k).length;
  let onFirst = 0;
  for (const r of rows) onFirst += r.length > 0 ? r[0] : NaN;
  let switches = 0;
  for (let s = 1; s < S; s++) if (top[s] !== top[s - 1]) switches++;
  return {
    onFirst: onFirst / S,
    top1AtFirst: at(0) / S,
    top1Stability: at(modal) / S,
    modalTop1: modal,
    distinctTop1: new Set(top).size,
    switches,
    steps: S,
  };
}

export interface SinkOptions {
  /** Layers to report. Default: every layer with a `received` probe at step 0. */
  layers?: number[] | "all";
  /** Model label per trace (default `trace.model.name`); traces with the same label are pooled. */
  models?: string[];
  /** Sample label per trace (default `settings.sampleId`, `settings.id` or the index). */
  samples?: string[];
}

/** What identifies a row: the model (label, family, "ARM" or "MDM"). */
interface ModelCols {
  model: string;
  family: string;
  paradigm: string;
}
/** The three fractions every row carries (per cell, or means over the pooled rows). */
type SinkShares = Pick<SinkStats, "onFirst" | "top1AtFirst" | "top1Stability">;

export interface SinkResult {
  /** One row per (model, sample, layer): family, paradigm and the SinkStats fields (fractions). */
  table: Rows<ModelCols & SinkStats & { sample: string; layer: number }>;
  /**
   * One row per (model, layer): family, paradigm, onFirst, top1AtFirst, top1Stability (means over samples),
   * modalTop1 (the modal top-1 key most samples have at this layer), n.
   */
  layers: Rows<ModelCols & SinkShares & { layer: number; modalTop1: number; n: number }>;
  /** One row per (model, sample): family, paradigm, onFirst, top1AtFirst, top1Stability (means over layers), layers. */
  samples: Rows<ModelCols & SinkShares & { sample: string; layers: number }>;
  warnings: string[];
}

/**
 * Per layer, the share of attention on position 0 and how fixed the top-1 key is across the steps, for
 * every trace (each needs `received` at every step: a sampler run, not a lone forward pass).
 * @example
 * const { layers } = firstTokenSink([...armTraces, ...mdmTraces]);
 * layers.filter((d) => d.paradigm === "ARM").print();
 */
export function firstTokenSink(traces: Trace | Trace[], opts: SinkOptions = {}): SinkResult {
  const list = Array.isArray(traces) ? traces : [traces];
  const cols: Cols = {
    model: [] as string[],
    family: [] as string[],
    paradigm: [] as string[],
    sample: [] as string[],
    layer: [] as number[],
    onFirst: [] as number[],
    top1AtFirst: [] as number[],
    top1Stability: [] as number[],
    modalTop1: [] as number[],
    distinctTop1: [] as number[],
    switches: [] as number[],
    steps: [] as number[],
  };
  const seen = new Set<string>();
  list.forEach((trace, i) => {
    const model = opts.models?.[i] ?? trace.model.name;
    const label = trace.source?.file ?? model;
    requireSteps(trace, label, "received", "record the run with a sampler (every step is written with the requested probes)");
    let sample = sampleLabel(trace.settings, i, opts.samples);
    if (seen.has(`${model}\u0000${sample}`)) sample = `${sample}#${i}`; // two traces of one question stay two samples
    seen.add(`${model}\u0000${sample}`);
    for (const layer of resolveLayers(trace, 0, "received", opts.layers, label)) {
      const rows = trace.steps.map((_, s) => getProbe(trace, s, "received", layer, label).data);
      const st = sinkOverSteps(rows);
      cols.model.push(model);
      cols.family.push(trace.model.family);
      cols.paradigm.push(trace.model.causal ? "ARM" : "MDM");
      cols.sample.push(sample);
      cols.layer.push(layer);
      for (const k of Object.keys(st) as (keyof SinkStats)[]) cols[k].push(st[k]);
    }
  });
  return { table: longTable(cols), ...pooled(cols), warnings: partialWarnings(list) };
}

/** One (model, sample, layer) row of `SinkResult.table`. */
export type SinkCell = ModelCols & SinkStats & { sample: string; layer: number };

/**
 * The `layers` and `samples` tables from (model, sample, layer) cells computed apart — e.g. recorded per
 * question by grid units on several machines and merged — pooled exactly as `firstTokenSink` pools its own.
 */
export function poolSinkCells(cells: readonly SinkCell[]): Pick<SinkResult, "layers" | "samples"> {
  const cols = Object.fromEntries(CELL_KEYS.map((k) => [k, cells.map((c) => c[k])])) as Cols;
  return pooled(cols);
}

function pooled(cols: Cols): Pick<SinkResult, "layers" | "samples"> {
  return { layers: pooledLayers(cols), samples: pooledSamples(cols) };
}

/** The most frequent value (ties to the lower one); -1 for none. */
function mode(xs: readonly number[]): number {
  const counts = new Map<number, number>();
  for (const x of xs) counts.set(x, (counts.get(x) ?? 0) + 1);
  let best = -1;
  for (const [k, n] of counts) if (best < 0 || n > counts.get(best)! || (n === counts.get(best)! && k < best)) best = k;
  return best;
}

type Cols = { [K in keyof SinkCell]: SinkCell[K][] };
const CELL_KEYS: readonly (keyof SinkCell)[] = [
  "model",
  "family",
  "paradigm",
  "sample",
  "layer",
  "onFirst",
  "top1AtFirst",
  "top1Stability",
  "modalTop1",
  "distinctTop1",
  "switches",
  "steps",
];

/** Row indices grouped by (model, `by`), in first-seen order. */
function groups(cols: Cols, by: "layer" | "sample"): number[][] {
  const g = new Map<string, number[]>();
  cols.model.forEach((m, i) => {
    const key = `${m}\u0000${cols[by][i]}`;
    const rows = g.get(key);
    if (rows) rows.push(i);
    else g.set(key, [i]);
  });
  return [...g.values()];
}

/** The model columns and the means of the three fractions over each group's rows. */
function pooledShares(cols: Cols, gs: number[][]) {
  const mean = (k: keyof SinkShares) => gs.map((rows) => rows.reduce((s, i) => s + cols[k][i], 0) / rows.length);
  return {
    model: gs.map((r) => cols.model[r[0]]),
    family: gs.map((r) => cols.family[r[0]]),
    paradigm: gs.map((r) => cols.paradigm[r[0]]),
    onFirst: mean("onFirst"),
    top1AtFirst: mean("top1AtFirst"),
    top1Stability: mean("top1Stability"),
  };
}

/** Per (model, layer): the fractions' means over samples, the modal key most samples share, and n. */
function pooledLayers(cols: Cols): SinkResult["layers"] {
  const gs = groups(cols, "layer");
  return longTable({
    ...pooledShares(cols, gs),
    layer: gs.map((r) => cols.layer[r[0]]),
    modalTop1: gs.map((r) => mode(r.map((i) => cols.modalTop1[i]))),
    n: gs.map((r) => r.length),
  });
}

/** Per (model, sample): the fractions' means over layers and the number of layers. */
function pooledSamples(cols: Cols): SinkResult["samples"] {
  const gs = groups(cols, "sample");
  return longTable({ ...pooledShares(cols, gs), sample: gs.map((r) => cols.sample[r[0]]), layers: gs.map((r) => r.length) });
}
