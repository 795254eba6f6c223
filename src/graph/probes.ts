/**
 * In-graph attention probes: the statistics of util/probes.ts, computed inside the ONNX graph
 * from each layer's attention probabilities so that nothing [query × key]-sized leaves the
 * graph unless a full map was asked for.
 *
 * Every builder here receives P in the grouped 5-D layout the attention uses,
 * `[batch, kvHead, group, query, key]` with head h = kvHead·group + g (HF's consecutive GQA
 * mapping), and reduces one axis at a time (multi-axis ReduceMean is ~18× slower on ORT CPU).
 *
 * `GRAPH_PROBES` is the graph side of util/probes.ts's table: per probe kind, how its per-chunk
 * values combine across query chunks and the function that computes them. The attention Loop's
 * carried and stacked values, the unrolled chunks' sums and concatenations and the probe outputs
 * are derived from it (docs/engine.md, "Adding a probe").
 */
import { SettingsError } from "../util/errors.js";
import { PROBES, REQUEST_KEYS, probeNameOf, records, type Axis, type ProbeKind, type ProbeRequest } from "../util/probes.js";
import type { GraphBuilder } from "./onnx/builder.js";
import { DataType } from "./onnx/proto.js";
import type { ModelSpec } from "./spec.js";

/** One graph output a probe request produces. */
export interface ProbeOutput {
  name: string;
  layer: number;
  /** The part after `blocks.{l}.attn.` (a row of util/probes.ts's PROBES). */
  kind: ProbeKind;
  axes: Axis[];
  dtype: "float32" | "int32";
}

/** Names of the per-run inputs a probe request needs. */
export const PROBE_INPUTS = { queryWeight: "query_weight", regionOneHot: "region_onehot" } as const;

function checkLayers(spec: ModelSpec, layers: number[], field: string): void {
  for (const l of layers) {
    if (!Number.isInteger(l) || l < 0 || l >= spec.numLayers) {
      throw new SettingsError("Probe layer out of range", { field, expected: `integers in [0, ${spec.numLayers - 1}]`, found: String(l) });
    }
  }
}

/** Validate a probe request against a model; throws SettingsError naming the field. */
export function validateProbeRequest(spec: ModelSpec, req: ProbeRequest): void {
  const known = new Set<string>(REQUEST_KEYS);
  for (const k of Object.keys(req)) {
    if (!known.has(k)) throw new SettingsError("Unknown probe", { field: `probes.${k}`, expected: `one of ${[...known].join(", ")}` });
  }
  if (req.pattern) {
    checkLayers(spec, req.pattern.layers, "probes.pattern.layers");
    for (const h of req.pattern.heads ?? []) {
      if (!Number.isInteger(h) || h < 0 || h >= spec.numHeads) {
        throw new SettingsError("Probe head out of range", {
          field: "probes.pattern.heads",
          expected: `integers in [0, ${spec.numHeads - 1}]`,
          found: String(h),
        });
      }
    }
  }
  if (req.patternMean) checkLayers(spec, req.patternMean.layers, "probes.patternMean.layers");
  if (req.qk) checkLayers(spec, req.qk.layers, "probes.qk.layers");
  if (req.regionSum && !(Number.isInteger(req.regionSum.regions) && req.regionSum.regions >= 1)) {
    throw new SettingsError("Bad region count", {
      field: "probes.regionSum.regions",
      expected: "an integer ≥ 1",
      found: String(req.regionSum.regions),
    });
  }
}

/** Every output a request produces, in graph output order (layer by layer, the table's order within a layer). */
export function probeOutputs(spec: ModelSpec, req: ProbeRequest): ProbeOutput[] {
  const out: ProbeOutput[] = [];
  for (let l = 0; l < spec.numLayers; l++) {
    for (const p of PROBES)
      if (records(req, p, l)) out.push({ name: probeNameOf(p.kind, l), layer: l, kind: p.kind, axes: p.axes, dtype: p.dtype });
  }
  return out;
}

/** Whether layer `layer`'s probes read its attention probabilities: any probe but the q/k states. */
export function needsProbabilities(req: ProbeRequest, layer: number): boolean {
  return PROBES.some((p) => "chunk" in GRAPH_PROBES[p.kind] && records(req, p, layer));
}

/** Values shared by every layer's probes. */
export interface ProbeContext {
  spec: ModelSpec;
  req: ProbeRequest;
  /** int64 [1] tensors holding the dynamic batch and seq sizes. */
  batch: string;
  seq: string;
  /** [batch, 1, 1, 1, query] normalised query weights (sum 1 per row), when received* is on. */
  queryWeight5?: string;
  /** [batch, region, query] = transpose of the one-hot input, when regionSum is on. */
  regionT?: string;
  /** [batch, query, region], when regionSum is on. */
  region?: string;
  /**
   * [1, head] constant 1/H, shared by every layer and chunk; made by the graph builder in the outer
   * graph when regionSum or patternMean is on (a chunk's probes may be built inside a Loop body).
   */
  headMeanWeights?: string;
}

/** Shape vector Concat([dims...]) where a dim is a constant or a dynamic int64 [1] value. */
function dims(g: GraphBuilder, parts: (number | string)[]): string {
  return g.concat(
    parts.map((p) => (typeof p === "number" ? g.constI64([p]) : p)),
    0,
  );
}

/** The probe inputs and shared constants of a graph (made in the outer graph: a layer's probes may be built in a Loop body). */
export function probeContext(
  g: GraphBuilder,
  spec: ModelSpec,
  req: ProbeRequest,
  batch: string,
  seq: string,
): { ctx: ProbeContext; inputs: string[] } {
  const ctx: ProbeContext = { spec, req, batch, seq };
  const inputs: string[] = [];
  if (req.regionSum || req.patternMean)
    ctx.headMeanWeights = g.constF32(new Array<number>(spec.numHeads).fill(1 / spec.numHeads), [1, spec.numHeads], "head_mean_w");
  if (req.received || req.receivedHeads) {
    const qw = g.input(PROBE_INPUTS.queryWeight, DataType.FLOAT, ["batch", "seq"]);
    inputs.push(qw);
    ctx.queryWeight5 = g.unsqueeze(qw, [1, 2, 3]);
  }
  if (req.regionSum) {
    const m = g.input(PROBE_INPUTS.regionOneHot, DataType.FLOAT, ["batch", "seq", req.regionSum.regions]);
    inputs.push(m);
    ctx.region = m;
    ctx.regionT = g.transpose(m, [0, 2, 1]);
  }
  return { ctx, inputs };
}

// ---- the graph side of the probe table ----
// Attention may run over query chunks (rows [start, end) of P at a time; chunks.ts), so every probe
// computed from P says how its per-chunk values make the layer's value. The attention Loop's carried
// and stacked values, the unrolled chunks' sums and concatenations, and which layers must run as one
// chunk are all derived from these declarations.

/** How a probe's per-chunk values make the layer's value. */
export type AcrossChunks =
  /** A sum over query rows: chunks are added in order (0 + c₀ + c₁ + …); a Loop carries the running sum, from zeros of shape `zeros`. */
  | { reduce: "sum"; zeros: (ctx: ProbeContext) => (number | string)[] }
  /** One value per query row, the query axis last (rank `rank`): concatenated; a Loop stacks them. */
  | { reduce: "rows"; rank: number; dtype: number }
  /** The [query × key] map itself, query axis `axis`: concatenated; a layer recording one runs as one chunk. */
  | { reduce: "map"; axis: number };

/** What a probe's chunk function sees: one query chunk of layer `layer`'s probabilities. */
export interface ChunkView {
  /** Where to emit (the graph, or a Loop body). */
  g: GraphBuilder;
  ctx: ProbeContext;
  layer: number;
  /** softmax output, float32 [batch, kvHead, group, queryChunk, key] */
  p5: string;
  /** int64 [1], already clamped to seq; undefined for the whole query axis. */
  start?: string;
  end?: string;
  /** Rows [start, end) of a per-query tensor along `axis` (the tensor itself for the whole axis). */
  sliceQ(x: string, axis: number): string;
  /** mean_h P [batch, queryChunk, key], made once per chunk (pattern_mean and region_sum share it). */
  headMean(): string;
}

/** What a probe's finish function sees. */
export interface FinishView {
  g: GraphBuilder;
  ctx: ProbeContext;
  layer: number;
  /** [B,KV,G,…] → [B, head, seq] (made once per value). */
  perHead(x: string): string;
}

/** A probe computed from the attention probabilities, one query chunk at a time. */
export interface ChunkedProbe {
  across: AcrossChunks;
  /** The chunk's value. Probes naming the same function share its value (received and received_heads). */
  chunk: (c: ChunkView) => string;
  /** The layer's output from the value combined over the chunks. */
  finish: (f: FinishView, combined: string) => string;
}

/** A probe that exposes one of the layer's q/k tensors (pre-/post-RoPE; emitted before attention, no chunks). */
export interface StateProbe {
  state: "q" | "k" | "qRot" | "kRot";
}

/** w·P over the query axis: [B,1,1,1,Qc] @ [B,KV,G,Qc,K] → [B,KV,G,1,K]. */
const weightedSum = (c: ChunkView) => c.g.matmul(c.sliceQ(c.ctx.queryWeight5!, 4), c.p5);
const WEIGHTED: AcrossChunks = { reduce: "sum", zeros: (x) => [x.batch, x.spec.numKvHeads, x.spec.numHeads / x.spec.numKvHeads, 1, x.seq] };

/** P[q, q] for the chunk's rows, [B,KV,G,Qc]. */
function diagonal(c: ChunkView): string {
  const { g } = c;
  // Through a flat view: row i of the chunk is query start+i, whose own key sits at i·(T+1) + start
  // in the flattened [Qc·T] block.
  const scalar = (x: string) => g.reshape(x, g.constI64([], [0]));
  const T = scalar(c.ctx.seq);
  const flat = g.reshape(c.p5, dims(g, [0, 0, 0, -1]));
  const rows = c.start ? scalar(g.sub(c.end!, c.start)) : T;
  let idx = g.mul(g.range(g.constI64([0], []), rows, g.constI64([1], [])), g.add(T, g.constI64([1], [])));
  if (c.start) idx = g.add(idx, scalar(c.start));
  return g.gather(flat, idx, 3);
}
const argmaxKey = (c: ChunkView) => c.g.argMax(c.p5, 4, false);
const argmaxProb = (c: ChunkView) => c.g.reduceMax(c.p5, 4, false);
/** Mᵀ · mean_h P (· M after the sum over chunks): [B,R,Qc] @ [B,Qc,K] → [B,R,K]. */
const regionPartial = (c: ChunkView) => c.g.matmul(c.sliceQ(c.ctx.regionT!, 2), c.headMean());
const probabilities = (c: ChunkView) => c.p5;
const headMean = (c: ChunkView) => c.headMean();

/**
 * Per probe kind of util/probes.ts's PROBES, how the graph computes it (the compiler asks for a row
 * per kind). A new probe: its row in PROBES, its row here, its reference in reference/forward.ts.
 */
export const GRAPH_PROBES: { readonly [K in ProbeKind]: ChunkedProbe | StateProbe } = {
  received: { across: WEIGHTED, chunk: weightedSum, finish: (f, v) => f.g.reduceMean(f.perHead(v), 1, false) },
  received_heads: { across: WEIGHTED, chunk: weightedSum, finish: (f, v) => f.perHead(v) },
  self: {
    across: { reduce: "rows", rank: 4, dtype: DataType.FLOAT },
    chunk: diagonal,
    finish: (f, v) => f.g.reduceMean(f.g.reduceMean(v, 2, false), 1, false),
  },
  argmax_key: {
    across: { reduce: "rows", rank: 4, dtype: DataType.INT64 },
    chunk: argmaxKey,
    finish: (f, v) => f.g.cast(f.perHead(v), DataType.INT32),
  },
  argmax_prob: { across: { reduce: "rows", rank: 4, dtype: DataType.FLOAT }, chunk: argmaxProb, finish: (f, v) => f.perHead(v) },
  region_sum: {
    across: { reduce: "sum", zeros: (x) => [x.batch, x.req.regionSum!.regions, x.seq] },
    chunk: regionPartial,
    finish: (f, v) => f.g.matmul(v, f.ctx.region!),
  },
  pattern: {
    across: { reduce: "map", axis: 3 },
    chunk: probabilities,
    // The full map is exposed as the 5-D softmax output itself (the engine merges kvHead × group
    // into head when it reads it): a Reshape feeding a graph output would copy a [B, H, T, T] buffer.
    finish: (f, v) => {
      const heads = f.ctx.req.pattern!.heads;
      if (!heads) return v;
      return f.g.gather(f.g.reshape(v, dims(f.g, [-1, f.ctx.spec.numHeads, f.ctx.seq, f.ctx.seq])), f.g.constI64(heads), 1);
    },
  },
  pattern_mean: { across: { reduce: "map", axis: 1 }, chunk: headMean, finish: (_f, v) => v },
  q_rot: { state: "qRot" },
  k_rot: { state: "kRot" },
  q: { state: "q" },
  k: { state: "k" },
};

/** One value per chunk that layer `layer`'s probes read: a chunk function and how it combines over chunks. */
export interface LayerPartial {
  chunk: ChunkedProbe["chunk"];
  across: AcrossChunks;
}

/** The chunked probes layer `layer` records, one entry per distinct chunk function, in table order. */
export function layerPartials(req: ProbeRequest, layer: number): LayerPartial[] {
  const out: LayerPartial[] = [];
  for (const p of PROBES) {
    const row = GRAPH_PROBES[p.kind];
    if ("chunk" in row && records(req, p, layer) && !out.some((o) => o.chunk === row.chunk))
      out.push({ chunk: row.chunk, across: row.across });
  }
  return out;
}

/** Whether layer `layer` records a full map (then its attention runs as one chunk: chunks.ts). */
export function recordsMap(req: ProbeRequest, layer: number): boolean {
  return layerPartials(req, layer).some((p) => p.across.reduce === "map");
}

/** Whether layer `layer` records a q/k state (then its queries are projected for all rows at once). */
export function recordsStates(req: ProbeRequest, layer: number): boolean {
  return PROBES.some((p) => "state" in GRAPH_PROBES[p.kind] && records(req, p, layer));
}

/** What one query chunk contributes to a layer's probes. */
export interface ChunkPartials {
  /** One value per entry of `layerPartials(req, layer)`, in that order. */
  parts: string[];
  /** Every value computed from the chunk's probabilities (to order the next chunk after them). */
  values: string[];
}

/**
 * Per-chunk half of a layer's probes: the statistics of rows [start, end) of the map (all rows when
 * not given). Chunked attention keeps one chunk's [B, H, Tc, T] tensors alive at a time;
 * `finishProbes` then combines the chunks as each probe's row says.
 */
export function chunkProbes(
  g: GraphBuilder,
  ctx: ProbeContext,
  layer: number,
  c: { p5: string; start?: string; end?: string },
): ChunkPartials {
  const values: string[] = [];
  const keep = (v: string) => {
    if (v !== c.p5 && !values.includes(v)) values.push(v);
    return v;
  };
  let pm: string | undefined;
  const view: ChunkView = {
    g,
    ctx,
    layer,
    ...c,
    sliceQ: (x, axis) => (c.start ? g.node("Slice", [x, c.start, c.end!, g.constI64([axis])]) : x),
    // One MatMul, (1/H)·1ᵀ [1, H] @ P viewed as [B, H, Qc·K] → [B, 1, Qc·K]: a single pass over P.
    // The two ReduceMeans it replaced (group axis, then kv-head axis: strided reductions on ORT CPU,
    // the first a full copy when G = 1) were 9 % of a forward at T 1024 (docs/engine.md, "Probe costs").
    headMean: () => {
      if (pm) return pm;
      const flat = g.reshape(c.p5, g.constI64([0, ctx.spec.numHeads, -1])); // [B,KV,G,Qc,K] → [B,H,Qc·K]: a view
      if (!ctx.headMeanWeights) throw new Error("internal: head-mean weights missing from the probe context");
      return (pm = keep(g.reshape(g.matmul(ctx.headMeanWeights, flat), dims(g, [0, -1, ctx.seq]))));
    },
  };
  return { parts: layerPartials(ctx.req, layer).map((p) => keep(p.chunk(view))), values };
}

/** Combine the chunks' partials into the layer's probe outputs (canonical names, table order). */
export function finishProbes(g: GraphBuilder, ctx: ProbeContext, layer: number, chunks: ChunkPartials[]): void {
  const partials = layerPartials(ctx.req, layer);
  const combined = partials.map(({ across }, i) => {
    const xs = chunks.map((c) => c.parts[i]);
    if (across.reduce === "sum") return xs.reduce((a, b) => g.add(a, b));
    if (xs.length === 1) return xs[0];
    return g.concat(xs, across.reduce === "rows" ? across.rank - 1 : across.axis);
  });
  const heads = new Map<string, string>();
  const view: FinishView = {
    g,
    ctx,
    layer,
    perHead: (x) => heads.get(x) ?? heads.set(x, g.reshape(x, dims(g, [-1, ctx.spec.numHeads, ctx.seq]))).get(x)!,
  };
  for (const p of PROBES) {
    const row = GRAPH_PROBES[p.kind];
    if (!("chunk" in row) || !records(ctx.req, p, layer)) continue;
    const value = combined[partials.findIndex((q) => q.chunk === row.chunk)];
    g.output(row.finish(view, value), probeNameOf(p.kind, layer), p.dtype === "int32" ? DataType.INT32 : DataType.FLOAT);
  }
}

/**
 * Emit the q/k probes of one layer (the StateProbe rows, in table order).
 * @param v.q pre-RoPE [batch, query, head, dHead]; v.qRot post-RoPE, same layout;
 *   v.k pre-RoPE [batch, key, kvHead, dHead]; v.kRot post-RoPE, same layout
 */
export function emitQkProbes(
  g: GraphBuilder,
  req: ProbeRequest,
  layer: number,
  v: { q: string; k: string; qRot: string; kRot: string },
  toF32: (x: string) => string,
): void {
  for (const p of PROBES) {
    const row = GRAPH_PROBES[p.kind];
    if ("state" in row && records(req, p, layer))
      g.output(toF32(g.transpose(v[row.state], [0, 2, 1, 3])), probeNameOf(p.kind, layer), DataType.FLOAT);
  }
}
