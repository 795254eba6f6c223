/**
 * The probe vocabulary: which attention statistics the ONNX graph computes in-graph, and
 * the one string each goes by. The same dotted name is the ONNX output name, the key in a
 * trace file, the `probe` column of analysis tables, the CLI `--probes` value and the text
 * of "missing probe" errors — grep one name and find every producer and consumer.
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

/** Axes of each probe kind (the part of the name after `blocks.{l}.attn.`). */
export const PROBE_AXES: Record<string, Axis[]> = {
  received: ["batch", "key"],
  received_heads: ["batch", "head", "key"],
  self: ["batch", "key"],
  argmax_key: ["batch", "head", "query"],
  argmax_prob: ["batch", "head", "query"],
  region_sum: ["batch", "region", "regionKey"],
  pattern: ["batch", "head", "query", "key"],
  pattern_mean: ["batch", "query", "key"],
  q_rot: ["batch", "head", "query", "dHead"],
  k_rot: ["batch", "kvHead", "key", "dHead"],
  q: ["batch", "head", "query", "dHead"],
  k: ["batch", "kvHead", "key", "dHead"],
};

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
