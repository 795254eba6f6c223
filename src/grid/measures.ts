/**
 * Per-sample attention measures of a grid: what a unit records, per question, beside its accuracy, so the
 * paper's attention claims can be spread over shards and merged like the accuracy claims.
 *
 * A grid names its measures (`"measures": ["sink"]`); its units then decode with the probes the measures
 * read, and each row keeps a few numbers per layer (never the trace). The numbers come from the same
 * analyses the notebooks run on traces, and `aggregateMeasures` pools the rows of all shards the way
 * those analyses pool traces, in an order fixed by the rows' own keys, so any sharding gives the same
 * aggregate as one unsharded run.
 *
 * - `sink` (claim `sink-fixed-arm`; src/analysis/first-token-sink.ts): per layer, over the decoding steps,
 *   the share of attention on position 0 (`onFirst`, rounded to 1e-6: its last bits depend on the batch a
 *   question ran in, far below any effect a claim reads) and, as counts of steps out of `steps`, how often
 *   the top-1 key is position 0 (`atFirst`) and how often it is the layer's most frequent top-1 key
 *   (`atModal`, that key being `modalTop1`), plus `distinct` top-1 keys and `switches` between steps.
 *   Counts rather than fractions: exact, and short in a row file.
 * - `absorption` (claim `absorption-arm-vs-mdm`; src/analysis/absorption.ts, as notebook 02): per layer, on
 *   the final pass, the share of attention the anchor set receives, under the paper's rule (`upstream`) and
 *   under ours (`mean+ksigma`, k = 3), rounded to 1e-6.
 * - `drift` (claim `anchors-float-mdm`; src/analysis/drift.ts, as notebook 01): per layer, over the decoding
 *   steps, with the paper's temporal rule (`mean+ksigma`, k = 3): how many distinct positions are anchors at
 *   some step (`distinct`), at how many steps the layer has an anchor (`withAnchor`), and the longest anchor
 *   track in steps (`longest`).
 * - `token-types` (claim `shallow-structural-deep-content`; src/analysis/token-types.ts, as notebook 07): per
 *   layer, on the final pass, with notebook 07's rule (`mean+ksigma`, k = 3, top-1 fallback): the anchors and
 *   how many of them are structural tokens (special, newline, whitespace, punctuation, mask).
 * - `qk` (claim `angle-vs-norm`, notebook 03) and `retrieval` (claim `retrieval-heads-deep`, notebook 04):
 *   measures-qk-retrieval.ts.
 */
import { absorptionRate, summarizeOverSamples } from "../analysis/absorption.js";
import type { AnchorOptions } from "../analysis/anchors.js";
import { temporalDrift } from "../analysis/drift.js";
import { firstTokenSink, poolSinkCells, type SinkCell, type SinkResult } from "../analysis/first-token-sink.js";
import { layerBands, tokenTypes } from "../analysis/token-types.js";
import type { Trace } from "../trace/types.js";
import { GridError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";
import {
  poolQk,
  poolRetrieval,
  qkMeasure,
  qkProbes,
  retrievalMeasure,
  RETRIEVAL_PROBES,
  type QkAggregate,
  type QkMeasure,
  type RetrievalAggregate,
  type RetrievalMeasure,
} from "./measures-qk-retrieval.js";

export const MEASURES = ["sink", "absorption", "drift", "token-types", "qk", "retrieval"] as const;
export type MeasureName = (typeof MEASURES)[number];
/** The measures that read only the final pass of a decode (the others read every step's probes). */
export const FINAL_PASS_MEASURES: readonly MeasureName[] = ["absorption", "token-types", "qk"];

/** The probes each measure reads in a model of `numLayers` layers (the union is what a unit's engine computes). */
const PROBES: Record<MeasureName, (numLayers: number) => ProbeRequest> = {
  sink: () => ({ received: true }),
  absorption: () => ({ received: true }),
  drift: () => ({ received: true }),
  "token-types": () => ({ received: true }),
  qk: qkProbes,
  retrieval: () => RETRIEVAL_PROBES,
};

/** The anchor rule of the drift measure: the paper's temporal rule (notebook 01's). */
export const DRIFT_RULE = { rule: "mean+ksigma", k: 3 } as const satisfies AnchorOptions;

/** The anchor rule whose anchors are typed (notebook 07's), and the layer bands compared (shallow = first, deep = last). */
export const TYPES_RULE = { rule: "mean+ksigma", k: 3, fallback: "top-1" } as const satisfies AnchorOptions;
export const TYPES_BANDS = 3;

/** The anchor rules absorption is measured under (notebook 02's): the paper's, and ours. */
export const ABSORPTION_RULES = { upstream: { rule: "upstream" }, "mean+ksigma": { rule: "mean+ksigma", k: 3 } } as const satisfies Record<
  string,
  AnchorOptions
>;
export type AbsorptionRule = keyof typeof ABSORPTION_RULES;

/**
 * The probes `names` read, for a model of `numLayers` layers: the qk measure's layers depend on the depth, so
 * it needs `numLayers` (the others do not).
 */
export function measureProbes(names: readonly MeasureName[], numLayers?: number): ProbeRequest {
  if (names.includes("qk") && numLayers === undefined)
    throw new GridError("The qk measure's probes depend on the model's depth", {
      field: "numLayers",
      expected: "the model's layer count",
      found: "none",
    });
  return Object.assign({}, ...names.map((n) => PROBES[n](numLayers ?? 0))) as ProbeRequest;
}

/** One question's sink numbers: one entry per layer (index = layer) in each array. */
export interface SinkMeasure {
  /** Decoding steps S (the same for every layer). */
  steps: number;
  onFirst: number[];
  atFirst: number[];
  atModal: number[];
  modalTop1: number[];
  distinct: number[];
  switches: number[];
}

/** One question's absorption per layer (index = layer), under each rule of ABSORPTION_RULES. */
export type AbsorptionMeasure = Record<AbsorptionRule, number[]>;

/** One question's anchor drift: one entry per layer (index = layer) in each array. */
export interface DriftMeasure {
  steps: number;
  distinct: number[];
  withAnchor: number[];
  longest: number[];
}

/** One question's anchors on the final pass and how many are structural: one entry per layer (index = layer). */
export interface TokenTypesMeasure {
  anchors: number[];
  structural: number[];
}

/** What a row records: one entry per measure the grid names. */
export interface SampleMeasures {
  sink?: SinkMeasure;
  absorption?: AbsorptionMeasure;
  drift?: DriftMeasure;
  "token-types"?: TokenTypesMeasure;
  qk?: QkMeasure;
  /** Absent for a prompt without a gold passage. */
  retrieval?: RetrievalMeasure;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** A row's arrays are indexed by layer: every layer must be there, in order (the engine records them all). */
function layerInOrder(layer: number, i: number, what: string): void {
  if (layer !== i)
    throw new GridError(`${what} measure needs every layer's received probe`, {
      field: `layer ${i}`,
      expected: "a received probe at every layer, in order",
      found: `layer ${layer}`,
    });
}

/** The sink numbers of one decode (its trace must hold `received` at every step, for every layer). */
export function sinkMeasure(trace: Trace): SinkMeasure {
  const cells = firstTokenSink(trace).table.objects();
  cells.forEach((c, i) => layerInOrder(c.layer, i, "Sink"));
  const steps = cells[0]?.steps ?? 0;
  return {
    steps,
    onFirst: cells.map((c) => round6(c.onFirst)),
    atFirst: cells.map((c) => Math.round(c.top1AtFirst * steps)),
    atModal: cells.map((c) => Math.round(c.top1Stability * steps)),
    modalTop1: cells.map((c) => c.modalTop1),
    distinct: cells.map((c) => c.distinctTop1),
    switches: cells.map((c) => c.switches),
  };
}

/** The absorption of one decode's final pass, per layer, under each rule (its trace needs `received` there). */
export function absorptionMeasure(trace: Trace): AbsorptionMeasure {
  const perRule = (rule: AbsorptionRule) => {
    const cells = absorptionRate(trace, ABSORPTION_RULES[rule]).table.objects();
    cells.forEach((c, i) => layerInOrder(c.layer, i, "Absorption"));
    return cells.map((c) => round6(c.value));
  };
  return { upstream: perRule("upstream"), "mean+ksigma": perRule("mean+ksigma") };
}

/** The anchor drift of one decode, per layer (its trace needs `received` at every step). */
export function driftMeasure(trace: Trace): DriftMeasure {
  const out: DriftMeasure = { steps: trace.steps.length, distinct: [], withAnchor: [], longest: [] };
  for (let layer = 0; layer < trace.model.numLayers; layer++) {
    const d = temporalDrift(trace, { ...DRIFT_RULE, layers: [layer] });
    const anchors = d.heat.objects().filter((r) => r.anchor);
    out.distinct.push(new Set(anchors.map((r) => r.position)).size);
    out.withAnchor.push(new Set(anchors.map((r) => r.step)).size);
    out.longest.push(Math.max(0, ...d.tracks.objects().map((r) => r.lifetime)));
  }
  return out;
}

/** The anchors of one decode's final pass per layer, and how many are structural tokens. */
export function tokenTypesMeasure(trace: Trace): TokenTypesMeasure {
  const L = trace.model.numLayers;
  const out: TokenTypesMeasure = { anchors: new Array<number>(L).fill(0), structural: new Array<number>(L).fill(0) };
  for (const a of tokenTypes(trace, { ...TYPES_RULE, pass: "final" }).table.objects()) {
    out.anchors[a.layer]++;
    if (a.structural) out.structural[a.layer]++;
  }
  return out;
}

/** The measures `names` of one decode; `answers` are the question's gold answers (the retrieval measure's evidence). */
export function measureTrace(trace: Trace, names: readonly MeasureName[], answers: readonly string[] = []): SampleMeasures {
  const out: SampleMeasures = {};
  if (names.includes("sink")) out.sink = sinkMeasure(trace);
  if (names.includes("absorption")) out.absorption = absorptionMeasure(trace);
  if (names.includes("drift")) out.drift = driftMeasure(trace);
  if (names.includes("token-types")) out["token-types"] = tokenTypesMeasure(trace);
  if (names.includes("qk")) out.qk = qkMeasure(trace);
  if (names.includes("retrieval")) {
    const r = retrievalMeasure(trace, answers);
    if (r) out.retrieval = r;
  }
  return out;
}

/** A model as the aggregate labels it (from the grid's manifest). */
export interface MeasuredModel {
  name: string;
  family: string;
  paradigm: "ARM" | "MDM";
  /** The tier its findings are filed under ("tiny", "real", "real-base", "user", …). */
  tier: string;
}

/** One row's measures with what identifies it: `sample` is unique in the grid (`unit|question id`). */
export interface MeasuredSample {
  model: string;
  sample: string;
  measures: SampleMeasures;
}

/** The pooled numbers of every measure, per model (plain objects, so they compare and serialise as data). */
export interface MeasureAggregate {
  sink?: {
    /** Per (model, layer): onFirst, top1AtFirst, top1Stability (means over samples), modalTop1, n. */
    layers: ReturnType<SinkResult["layers"]["objects"]>;
    /** Per (model, sample): the three fractions, means over layers. */
    samples: ReturnType<SinkResult["samples"]["objects"]>;
  };
  absorption?: {
    /** Per (model, rule, layer): mean and population σ over samples, n (as `absorptionRate`'s summary). */
    layers: { model: string; rule: AbsorptionRule; layer: number; mean: number; std: number; n: number }[];
    /** Per (model, rule, sample): the absorption averaged over layers. */
    samples: { model: string; rule: AbsorptionRule; sample: string; value: number }[];
  };
  drift?: {
    /** Per (model, layer): each count's mean over samples, and n. */
    layers: { model: string; layer: number; distinct: number; withAnchor: number; longest: number; steps: number; n: number }[];
    /** Per (model, sample): `distinct` and `longest` at the shallow (0) and the deep (last) layer, which the claim reads. */
    samples: {
      model: string;
      sample: string;
      deepLayer: number;
      distinct: [number, number];
      longest: [number, number];
      steps: number;
    }[];
  };
  "token-types"?: {
    /** Per (model, layer): anchors and structural anchors summed over samples, and n. */
    layers: { model: string; layer: number; band: string; anchors: number; structural: number; n: number }[];
    /** Per (model, sample, band), for the shallow and the deep band: anchors and structural anchors in it. */
    samples: { model: string; sample: string; depth: "shallow" | "deep"; band: string; anchors: number; structural: number }[];
  };
  qk?: QkAggregate;
  retrieval?: RetrievalAggregate;
}

/**
 * Pool the rows' measures per model. Rows are taken in (model as listed, sample id) order whatever order
 * they come in, so the float sums, and the aggregate, do not depend on sharding.
 */
export function aggregateMeasures(rows: readonly MeasuredSample[], models: readonly MeasuredModel[]): MeasureAggregate {
  const rank = new Map(models.map((m, i) => [m.name, i]));
  const sorted = rows
    .filter((r) => rank.has(r.model))
    .sort((a, b) => rank.get(a.model)! - rank.get(b.model)! || (a.sample < b.sample ? -1 : a.sample > b.sample ? 1 : 0));
  const out: MeasureAggregate = {};
  const withSink = sorted.filter((r) => r.measures.sink);
  if (withSink.length > 0) {
    const byName = new Map(models.map((m) => [m.name, m]));
    const cells: SinkCell[] = withSink.flatMap((r) => {
      const m = byName.get(r.model)!;
      const s = r.measures.sink!;
      return s.onFirst.map((onFirst, layer) => ({
        model: m.name,
        family: m.family,
        paradigm: m.paradigm,
        sample: r.sample,
        layer,
        onFirst,
        top1AtFirst: s.atFirst[layer] / s.steps,
        top1Stability: s.atModal[layer] / s.steps,
        modalTop1: s.modalTop1[layer],
        distinctTop1: s.distinct[layer],
        switches: s.switches[layer],
        steps: s.steps,
      }));
    });
    const pooled = poolSinkCells(cells);
    out.sink = { layers: pooled.layers.objects(), samples: pooled.samples.objects() };
  }
  const withAbsorption = sorted.filter((r) => r.measures.absorption);
  if (withAbsorption.length > 0) out.absorption = poolAbsorption(withAbsorption, models);
  const withDrift = sorted.filter((r) => r.measures.drift);
  if (withDrift.length > 0) out.drift = poolDrift(withDrift, models);
  const withTypes = sorted.filter((r) => r.measures["token-types"]);
  if (withTypes.length > 0) out["token-types"] = poolTokenTypes(withTypes, models);
  const names = models.map((m) => m.name);
  const withQk = sorted.flatMap((r) => (r.measures.qk ? [{ model: r.model, sample: r.sample, m: r.measures.qk }] : []));
  if (withQk.length > 0) out.qk = poolQk(withQk, names);
  const withRetrieval = sorted.flatMap((r) =>
    r.measures.retrieval ? [{ model: r.model, sample: r.sample, m: r.measures.retrieval }] : [],
  );
  if (withRetrieval.length > 0) out.retrieval = poolRetrieval(withRetrieval, names);
  return out;
}

/** Token types per model: per layer the counts summed over samples; per sample the counts in the shallow and deep band. */
function poolTokenTypes(rows: readonly MeasuredSample[], models: readonly MeasuredModel[]): NonNullable<MeasureAggregate["token-types"]> {
  const out: NonNullable<MeasureAggregate["token-types"]> = { layers: [], samples: [] };
  const sum = (xs: number[], [a, b]: [number, number]) => xs.slice(a, b + 1).reduce((x, y) => x + y, 0);
  for (const m of models) {
    const mine = rows.filter((r) => r.model === m.name).map((r) => ({ sample: r.sample, t: r.measures["token-types"]! }));
    if (mine.length === 0) continue;
    const L = mine[0].t.anchors.length;
    const bands = layerBands(L, Math.min(TYPES_BANDS, L));
    for (let layer = 0; layer < L; layer++)
      out.layers.push({
        model: m.name,
        layer,
        band: bands.find((b) => b.layers[0] <= layer && layer <= b.layers[1])!.name,
        anchors: mine.reduce((a, x) => a + x.t.anchors[layer], 0),
        structural: mine.reduce((a, x) => a + x.t.structural[layer], 0),
        n: mine.length,
      });
    for (const { sample, t } of mine)
      for (const [depth, band] of [
        ["shallow", bands[0]],
        ["deep", bands[bands.length - 1]],
      ] as const)
        out.samples.push({
          model: m.name,
          sample,
          depth,
          band: band.name,
          anchors: sum(t.anchors, band.layers),
          structural: sum(t.structural, band.layers),
        });
  }
  return out;
}

/** Drift per model: each count per layer averaged over samples; per sample the shallow and deep layers' counts. */
function poolDrift(rows: readonly MeasuredSample[], models: readonly MeasuredModel[]): NonNullable<MeasureAggregate["drift"]> {
  const out: NonNullable<MeasureAggregate["drift"]> = { layers: [], samples: [] };
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  for (const m of models) {
    const mine = rows.filter((r) => r.model === m.name).map((r) => ({ sample: r.sample, d: r.measures.drift! }));
    if (mine.length === 0) continue;
    const numLayers = mine[0].d.distinct.length;
    for (let layer = 0; layer < numLayers; layer++)
      out.layers.push({
        model: m.name,
        layer,
        distinct: mean(mine.map((x) => x.d.distinct[layer])),
        withAnchor: mean(mine.map((x) => x.d.withAnchor[layer])),
        longest: mean(mine.map((x) => x.d.longest[layer])),
        steps: mean(mine.map((x) => x.d.steps)),
        n: mine.length,
      });
    for (const { sample, d } of mine) {
      const deep = d.distinct.length - 1;
      out.samples.push({
        model: m.name,
        sample,
        deepLayer: deep,
        distinct: [d.distinct[0], d.distinct[deep]],
        longest: [d.longest[0], d.longest[deep]],
        steps: d.steps,
      });
    }
  }
  return out;
}

/** Absorption per (model, rule): per layer over samples (`summarizeOverSamples`), per sample over layers. */
function poolAbsorption(rows: readonly MeasuredSample[], models: readonly MeasuredModel[]): NonNullable<MeasureAggregate["absorption"]> {
  const out: NonNullable<MeasureAggregate["absorption"]> = { layers: [], samples: [] };
  for (const m of models) {
    const mine = rows.filter((r) => r.model === m.name);
    if (mine.length === 0) continue;
    for (const rule of Object.keys(ABSORPTION_RULES) as AbsorptionRule[]) {
      const values = mine.map((r) => r.measures.absorption![rule]);
      const numLayers = Math.max(...values.map((v) => v.length));
      const grid = new Float64Array(mine.length * numLayers).fill(NaN);
      values.forEach((v, i) => grid.set(v, i * numLayers));
      const s = summarizeOverSamples(grid, mine.length, numLayers);
      for (let layer = 0; layer < numLayers; layer++)
        out.layers.push({ model: m.name, rule, layer, mean: s.mean[layer], std: s.std[layer], n: s.n[layer] });
      mine.forEach((r, i) =>
        out.samples.push({ model: m.name, rule, sample: r.sample, value: values[i].reduce((a, b) => a + b, 0) / values[i].length }),
      );
    }
  }
  return out;
}
