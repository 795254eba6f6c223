/**
 * In-graph attention probes: the statistics of util/probes.ts, computed inside the ONNX graph
 * from each layer's attention probabilities so that nothing [query × key]-sized leaves the
 * graph unless a full map was asked for.
 *
 * Every builder here receives P in the grouped 5-D layout the attention uses,
 * `[batch, kvHead, group, query, key]` with head h = kvHead·group + g (HF's consecutive GQA
 * mapping), and reduces one axis at a time (multi-axis ReduceMean is ~18× slower on ORT CPU).
 */
import { SettingsError } from "../util/errors.js";
import { PROBES, REQUEST_KEYS, probeName, probeNameOf, records, type Axis, type ProbeKind, type ProbeRequest } from "../util/probes.js";
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
  return PROBES.some((p) => p.cost !== "states" && records(req, p, layer));
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

/** One query chunk's probabilities: rows [start, end) of the layer's map (undefined: all rows). */
export interface QueryChunk {
  /** softmax output, float32 [batch, kvHead, group, queryChunk, key] */
  p5: string;
  /** int64 [1], already clamped to seq; undefined for the whole query axis. */
  start?: string;
  end?: string;
}

/** What one query chunk contributes to a layer's probes (undefined: that probe is off). */
export interface ChunkPartials {
  /** [B,KV,G,1,K] w·P summed over this chunk's queries */
  rh?: string;
  /** [B,KV,G,Qc] */
  diag?: string;
  am?: string;
  amp?: string;
  /** [B,R,K] Mᵀ·mean_h P over this chunk's queries */
  region?: string;
  /** [B,KV,G,Qc,K] */
  pattern?: string;
  /** [B,Qc,K] */
  mean?: string;
  /** Every value computed from the chunk's probabilities (to order the next chunk after them). */
  values: string[];
}

/**
 * Per-chunk half of a layer's probes: the statistics of rows [start, end) of the map. Chunked
 * attention keeps one chunk's [B, H, Tc, T] tensors alive at a time; `finishProbes` then sums
 * the query reductions and concatenates the per-query results.
 */
export function chunkProbes(g: GraphBuilder, ctx: ProbeContext, layer: number, c: QueryChunk): ChunkPartials {
  const { req } = ctx;
  const scalar = (x: string) => g.reshape(x, g.constI64([], [0]));
  const sliceQ = (x: string, axis: number) => (c.start ? g.node("Slice", [x, c.start, c.end!, g.constI64([axis])]) : x);
  const parts: ChunkPartials = { values: [] };
  const keep = (v: string) => {
    parts.values.push(v);
    return v;
  };
  // head-mean map [batch, queryChunk, key], shared by pattern_mean and region_sum. One MatMul,
  // (1/H)·1ᵀ [1, H] @ P viewed as [B, H, Qc·K] → [B, 1, Qc·K]: a single pass over P. The two
  // ReduceMeans it replaces (group axis, then kv-head axis: strided reductions on ORT CPU, the first
  // a full copy when G = 1) were 9 % of a forward at T 1024 (docs/engine.md, "Probe costs").
  let pm: string | undefined;
  const headMean = () => {
    if (pm) return pm;
    const H = ctx.spec.numHeads;
    const flat = g.reshape(c.p5, g.constI64([0, H, -1])); // [B,KV,G,Qc,K] → [B,H,Qc·K]: a view
    if (!ctx.headMeanWeights) throw new Error("internal: head-mean weights missing from the probe context");
    const mean = g.matmul(ctx.headMeanWeights, flat);
    return (pm = keep(g.reshape(mean, dims(g, [0, -1, ctx.seq]))));
  };
  if (req.received || req.receivedHeads) {
    // w·P over the query axis: [B,1,1,1,Qc] @ [B,KV,G,Qc,K] → [B,KV,G,1,K]
    parts.rh = keep(g.matmul(sliceQ(ctx.queryWeight5!, 4), c.p5));
  }
  if (req.self) {
    // Diagonal through a flat view: row i of the chunk is query start+i, whose own key sits at
    // i·(T+1) + start in the flattened [Qc·T] block.
    const T = scalar(ctx.seq);
    const flat = g.reshape(c.p5, dims(g, [0, 0, 0, -1]));
    const rows = c.start ? scalar(g.sub(c.end!, c.start)) : T;
    let idx = g.mul(g.range(g.constI64([0], []), rows, g.constI64([1], [])), g.add(T, g.constI64([1], [])));
    if (c.start) idx = g.add(idx, scalar(c.start));
    parts.diag = keep(g.gather(flat, idx, 3));
  }
  if (req.argmax) {
    parts.am = keep(g.argMax(c.p5, 4, false));
    parts.amp = keep(g.reduceMax(c.p5, 4, false));
  }
  // Mᵀ · mean_h P (· M after the sum over chunks): [B,R,Qc] @ [B,Qc,K] → [B,R,K]
  if (req.regionSum) parts.region = keep(g.matmul(sliceQ(ctx.regionT!, 2), headMean()));
  if (req.pattern?.layers.includes(layer)) parts.pattern = c.p5;
  if (req.patternMean?.layers.includes(layer)) parts.mean = headMean();
  return parts;
}

/** Combine the chunks' partials into the layer's probe outputs (canonical names). */
export function finishProbes(g: GraphBuilder, ctx: ProbeContext, layer: number, chunks: ChunkPartials[]): void {
  const { spec, req } = ctx;
  const H = spec.numHeads;
  const out = (v: string, name: string, type: number = DataType.FLOAT) => g.output(v, name, type);
  const all = (k: keyof Omit<ChunkPartials, "values">) => chunks.map((c) => c[k]!);
  const sum = (xs: string[]) => xs.reduce((a, b) => g.add(a, b));
  const cat = (xs: string[], axis: number) => (xs.length === 1 ? xs[0] : g.concat(xs, axis));
  const perHead = (x: string) => g.reshape(x, dims(g, [-1, H, ctx.seq]));
  if (req.received || req.receivedHeads) {
    const rh = perHead(sum(all("rh")));
    if (req.received) out(g.reduceMean(rh, 1, false), probeName.received(layer));
    if (req.receivedHeads) out(rh, probeName.receivedHeads(layer));
  }
  if (req.self) out(g.reduceMean(g.reduceMean(cat(all("diag"), 3), 2, false), 1, false), probeName.self(layer));
  if (req.argmax) {
    out(g.cast(perHead(cat(all("am"), 3)), DataType.INT32), probeName.argmaxKey(layer), DataType.INT32);
    out(perHead(cat(all("amp"), 3)), probeName.argmaxProb(layer));
  }
  if (req.regionSum) out(g.matmul(sum(all("region")), ctx.region!), probeName.regionSum(layer));
  if (req.pattern?.layers.includes(layer)) {
    // The full map is exposed as the 5-D softmax output itself (the engine merges kvHead × group
    // into head when it reads it): a Reshape feeding a graph output would copy a [B, H, T, T] buffer.
    const full = cat(all("pattern"), 3);
    const heads = req.pattern.heads;
    out(heads ? g.gather(g.reshape(full, dims(g, [-1, H, ctx.seq, ctx.seq])), g.constI64(heads), 1) : full, probeName.pattern(layer));
  }
  if (req.patternMean?.layers.includes(layer)) out(cat(all("mean"), 1), probeName.patternMean(layer));
}

/**
 * Emit q/k probes for one layer.
 * @param q pre-RoPE [batch, query, head, dHead]; @param qRot post-RoPE, same layout
 * @param k pre-RoPE [batch, key, kvHead, dHead]; @param kRot post-RoPE, same layout
 */
export function emitQkProbes(
  g: GraphBuilder,
  req: ProbeRequest,
  layer: number,
  v: { q: string; k: string; qRot: string; kRot: string },
  toF32: (x: string) => string,
): void {
  if (!req.qk?.layers.includes(layer)) return;
  const bhtd = (x: string) => toF32(g.transpose(x, [0, 2, 1, 3]));
  if (req.qk.postRope !== false) {
    g.output(bhtd(v.qRot), probeName.qRot(layer), DataType.FLOAT);
    g.output(bhtd(v.kRot), probeName.kRot(layer), DataType.FLOAT);
  }
  if (req.qk.preRope) {
    g.output(bhtd(v.q), probeName.q(layer), DataType.FLOAT);
    g.output(bhtd(v.k), probeName.k(layer), DataType.FLOAT);
  }
}
