/**
 * The probe vocabulary: which attention statistics the ONNX graph computes in-graph, and
 * the one string each goes by. The same dotted name is the ONNX output name, the key in a
 * trace file, the `probe` column of analysis tables, the CLI `--probes` value and the text
 * of "missing probe" errors — grep one name and find every producer and consumer.
 *
 * `PROBES` below is the one table of them; every layer derives its list from it.
 *
 * This module is a leaf (no imports) so that both the compute side (graph, runtime,
 * samplers) and the data side (trace, analysis) can share it.
 *
 * Notation: P = softmax(QKᵀ/√d + mask) of one layer, shape [batch, head, query, key];
 * w = query weights [batch, query] (default: the padding mask, 1 for real tokens).
 */

/** Axis words used in every shape annotation, trace schema and table column. */
export type Axis = "batch" | "step" | "layer" | "head" | "kvHead" | "query" | "key" | "dHead" | "region" | "regionKey" | "vocab";

export interface ProbeRequest {
  /**
   * `blocks.{l}.attn.received` [batch, key] for every layer:
   * Σ_q w_q · mean_h P[h,q,k] / Σ_q w_q — head-mean attention received by each key,
   * averaged over (weighted) query rows. This is the column mean the paper's absorption
   * and temporal analyses use. Default: on.
   */
  received?: boolean;
  /** `blocks.{l}.attn.received_heads` [batch, head, key]: as `received`, per head. */
  receivedHeads?: boolean;
  /** `blocks.{l}.attn.self` [batch, key]: mean_h P[h,k,k], so analyses can drop the diagonal. */
  self?: boolean;
  /**
   * `blocks.{l}.attn.argmax_key` [batch, head, query] (int32) and
   * `blocks.{l}.attn.argmax_prob` [batch, head, query]: per head and query row, the key it
   * attends to most and that probability (retrieval heads).
   */
  argmax?: boolean;
  /**
   * `blocks.{l}.attn.region_sum` [batch, region, regionKey]: Σ over query tokens of region r
   * and key tokens of region s of mean_h P. Regions come at run time as a one-hot
   * [batch, seq, region] input, so one graph serves every prompt layout (rollout).
   */
  regionSum?: { regions: number };
  /** `blocks.{l}.attn.pattern` [batch, head, query, key] for the chosen layers (and heads). */
  pattern?: { layers: number[]; heads?: number[] };
  /** `blocks.{l}.attn.pattern_mean` [batch, query, key]: mean_h P for the chosen layers. */
  patternMean?: { layers: number[] };
  /**
   * Post-RoPE `blocks.{l}.attn.q_rot` [batch, head, query, dHead] / `k_rot` [batch, kvHead, key, dHead]
   * and, with `preRope`, pre-RoPE `blocks.{l}.attn.q` / `k`, for the chosen layers.
   */
  qk?: { layers: number[]; preRope?: boolean; postRope?: boolean };
}

export const DEFAULT_PROBES: ProbeRequest = { received: true };

/** The part of a probe name after `blocks.{l}.attn.`: the word traces, tables and errors use. */
export type ProbeKind =
  | "received"
  | "received_heads"
  | "self"
  | "argmax_key"
  | "argmax_prob"
  | "region_sum"
  | "pattern"
  | "pattern_mean"
  | "q_rot"
  | "k_rot"
  | "q"
  | "k";

/** A ProbeRequest field (camelCase: the library's option name). */
export type RequestKey = keyof ProbeRequest;

/**
 * How a probe's size grows, per layer and forward pass over T tokens (H heads, R regions, d = head size):
 * `vector` O(T), `heads` O(H·T), `regions` O(R²), `map` O(T²), `heads-map` O(H·T²), `states` O(H·T·d).
 * Only `map`, `heads-map` and `states` are recorded for chosen layers.
 */
export type CostClass = "vector" | "heads" | "regions" | "map" | "heads-map" | "states";

/** One row of the probe table. */
export interface ProbeInfo {
  kind: ProbeKind;
  /** The ProbeRequest field that records it. */
  request: RequestKey;
  axes: Axis[];
  dtype: "float32" | "int32";
  /** The `--probes` word that records it (argmax_key and argmax_prob share `argmax`). */
  cli: string;
  cost: CostClass;
  /** Recorded for every layer, or only for the request's `layers`. */
  layers: "all" | "chosen";
  /** The request that records it at `layer` (the text after "record it with" in a missing-probe error). */
  hint: (layer: number) => string;
}

const flag = (key: RequestKey) => () => `probes: { ${key}: true }`;
const chosen =
  (key: RequestKey, extra = "") =>
  (l: number) =>
    `probes: { ${key}: { layers: [${l}]${extra} } }`;

/**
 * THE probe table: every other list of probes (graph outputs, request validation, CLI words,
 * trace dtypes, size and memory estimates, missing-probe hints) is derived from it, so a new
 * probe is one row here plus its row in graph/probes.ts `GRAPH_PROBES` (how it reduces across query
 * chunks, and its graph function) and its reference in reference/forward.ts `REFERENCE_PROBES`
 * (docs/engine.md, "Adding a probe").
 * Order is the graph's output order within a layer.
 */
export const PROBES: readonly ProbeInfo[] = [
  {
    kind: "received",
    request: "received",
    axes: ["batch", "key"],
    dtype: "float32",
    cli: "received",
    cost: "vector",
    layers: "all",
    hint: flag("received"),
  },
  {
    kind: "received_heads",
    request: "receivedHeads",
    axes: ["batch", "head", "key"],
    dtype: "float32",
    cli: "received_heads",
    cost: "heads",
    layers: "all",
    hint: flag("receivedHeads"),
  },
  {
    kind: "self",
    request: "self",
    axes: ["batch", "key"],
    dtype: "float32",
    cli: "self",
    cost: "vector",
    layers: "all",
    hint: flag("self"),
  },
  {
    kind: "argmax_key",
    request: "argmax",
    axes: ["batch", "head", "query"],
    dtype: "int32",
    cli: "argmax",
    cost: "heads",
    layers: "all",
    hint: flag("argmax"),
  },
  {
    kind: "argmax_prob",
    request: "argmax",
    axes: ["batch", "head", "query"],
    dtype: "float32",
    cli: "argmax",
    cost: "heads",
    layers: "all",
    hint: flag("argmax"),
  },
  {
    kind: "region_sum",
    request: "regionSum",
    axes: ["batch", "region", "regionKey"],
    dtype: "float32",
    cli: "region_sum",
    cost: "regions",
    layers: "all",
    hint: () => "probes: { regionSum: { regions: <number of prompt regions> } }",
  },
  {
    kind: "pattern",
    request: "pattern",
    axes: ["batch", "head", "query", "key"],
    dtype: "float32",
    cli: "pattern",
    cost: "heads-map",
    layers: "chosen",
    hint: chosen("pattern"),
  },
  {
    kind: "pattern_mean",
    request: "patternMean",
    axes: ["batch", "query", "key"],
    dtype: "float32",
    cli: "pattern_mean",
    cost: "map",
    layers: "chosen",
    hint: chosen("patternMean"),
  },
  {
    kind: "q_rot",
    request: "qk",
    axes: ["batch", "head", "query", "dHead"],
    dtype: "float32",
    cli: "q_rot",
    cost: "states",
    layers: "chosen",
    hint: chosen("qk"),
  },
  {
    kind: "k_rot",
    request: "qk",
    axes: ["batch", "kvHead", "key", "dHead"],
    dtype: "float32",
    cli: "k_rot",
    cost: "states",
    layers: "chosen",
    hint: chosen("qk"),
  },
  {
    kind: "q",
    request: "qk",
    axes: ["batch", "head", "query", "dHead"],
    dtype: "float32",
    cli: "q",
    cost: "states",
    layers: "chosen",
    hint: chosen("qk", ", preRope: true"),
  },
  {
    kind: "k",
    request: "qk",
    axes: ["batch", "kvHead", "key", "dHead"],
    dtype: "float32",
    cli: "k",
    cost: "states",
    layers: "chosen",
    hint: chosen("qk", ", preRope: true"),
  },
];

/** The table row of a kind (undefined for a word that is not a probe kind). */
export function probeInfo(kind: string): ProbeInfo | undefined {
  return PROBES.find((p) => p.kind === kind);
}

/** Every ProbeRequest field, in table order (what request validation accepts). */
export const REQUEST_KEYS: readonly RequestKey[] = [...new Set(PROBES.map((p) => p.request))];

/** Whether `req` records probe `kind` at `layer` (the rule the graph builder and every estimate follow). */
export function records(req: ProbeRequest, info: ProbeInfo, layer: number): boolean {
  const r = req[info.request];
  if (!r) return false;
  if (info.layers === "chosen" && !(r as { layers: number[] }).layers.includes(layer)) return false;
  if (info.request === "qk") {
    const qk = r as NonNullable<ProbeRequest["qk"]>;
    return info.kind === "q" || info.kind === "k" ? qk.preRope === true : qk.postRope !== false;
  }
  return true;
}

/** Canonical probe names. */
export const probeName = {
  received: (l: number) => `blocks.${l}.attn.received`,
  receivedHeads: (l: number) => `blocks.${l}.attn.received_heads`,
  self: (l: number) => `blocks.${l}.attn.self`,
  argmaxKey: (l: number) => `blocks.${l}.attn.argmax_key`,
  argmaxProb: (l: number) => `blocks.${l}.attn.argmax_prob`,
  regionSum: (l: number) => `blocks.${l}.attn.region_sum`,
  pattern: (l: number) => `blocks.${l}.attn.pattern`,
  patternMean: (l: number) => `blocks.${l}.attn.pattern_mean`,
  qRot: (l: number) => `blocks.${l}.attn.q_rot`,
  kRot: (l: number) => `blocks.${l}.attn.k_rot`,
  q: (l: number) => `blocks.${l}.attn.q`,
  k: (l: number) => `blocks.${l}.attn.k`,
} as const;

/** The name of probe `kind` at layer `l`. */
export const probeNameOf = (kind: ProbeKind, l: number) => `blocks.${l}.attn.${kind}`;

/** Axes of each probe kind (derived from PROBES). */
export const PROBE_AXES: Record<string, Axis[]> = Object.fromEntries(PROBES.map((p) => [p.kind, p.axes]));

/** Sizes of the axes of one forward pass, to count a probe's elements. */
export interface ProbeSizes {
  batch: number;
  seq: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
}

/** Elements of one layer's probe tensor of `info` for `req` (pattern may keep a subset of heads; regions from regionSum). */
export function probeElementsOf(info: ProbeInfo, req: ProbeRequest, s: ProbeSizes): number {
  const size: Record<Axis, number> = {
    batch: s.batch,
    step: 1,
    layer: 1,
    query: s.seq,
    key: s.seq,
    dHead: s.headDim,
    kvHead: s.numKvHeads,
    vocab: 1,
    head: info.kind === "pattern" ? (req.pattern?.heads?.length ?? s.numHeads) : s.numHeads,
    region: req.regionSum?.regions ?? 0,
    regionKey: req.regionSum?.regions ?? 0,
  };
  return info.axes.reduce((n, a) => n * size[a], 1);
}

/** Split `blocks.3.attn.received` into {layer: 3, kind: "received"}; undefined if not a probe name. */
export function parseProbeName(name: string): { layer: number; kind: string } | undefined {
  const m = /^blocks\.(\d+)\.attn\.([a-z_]+)$/.exec(name);
  if (!m || !(m[2] in PROBE_AXES)) return undefined;
  return { layer: Number(m[1]), kind: m[2] };
}

/** One probe's values. `data` is row-major over `dims`. */
export interface ProbeTensor {
  name: string;
  axes: Axis[];
  dims: number[];
  data: Float32Array | Int32Array;
}
