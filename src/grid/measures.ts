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
 *   the share of attention on position 0 (`onFirst`, rounded to 1e-6: its last bits depend on float
 *   summation order, far below any effect a claim reads) and, as counts of steps out of `steps`, how often
 *   the top-1 key is position 0 (`atFirst`) and how often it is the layer's most frequent top-1 key
 *   (`atModal`, that key being `modalTop1`), plus `distinct` top-1 keys and `switches` between steps.
 *   Counts rather than fractions: exact, and short in a row file.
 */
import { firstTokenSink, poolSinkCells, type SinkCell, type SinkResult } from "../analysis/first-token-sink.js";
import type { Trace } from "../trace/types.js";
import { GridError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";

export const MEASURES = ["sink"] as const;
export type MeasureName = (typeof MEASURES)[number];

/** The probes each measure reads (the union is what a unit's engine computes). */
const PROBES: Record<MeasureName, ProbeRequest> = { sink: { received: true } };

export function measureProbes(names: readonly MeasureName[]): ProbeRequest {
  return Object.assign({}, ...names.map((n) => PROBES[n])) as ProbeRequest;
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

/** What a row records: one entry per measure the grid names. */
export interface SampleMeasures {
  sink?: SinkMeasure;
}

const round6 = (x: number) => Math.round(x * 1e6) / 1e6;

/** The sink numbers of one decode (its trace must hold `received` at every step, for every layer). */
export function sinkMeasure(trace: Trace): SinkMeasure {
  const cells = firstTokenSink(trace).table.objects();
  cells.forEach((c, i) => {
    // The arrays are indexed by layer: every layer must be there, in order (the engine records them all).
    if (c.layer !== i)
      throw new GridError("Sink measure needs every layer's received probe", {
        field: `layer ${i}`,
        expected: "a received probe at every layer, in order",
        found: `layer ${c.layer}`,
      });
  });
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

/** The measures `names` of one decode. */
export function measureTrace(trace: Trace, names: readonly MeasureName[]): SampleMeasures {
  const out: SampleMeasures = {};
  if (names.includes("sink")) out.sink = sinkMeasure(trace);
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
  return out;
}
