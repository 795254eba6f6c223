/**
 * Row chunking: how many rows of a layer's attention (query rows) and of its MLP are computed at a time.
 *
 * The decomposed attention holds scores, masked scores and probabilities, [batch, head, rows, key]
 * f32 each, for one chunk of query rows at a time: 12·H·r·T bytes per batch row for r rows, 12·H·T²
 * for all T at once (what made a forward's peak grow ×3.9 per doubling of T). The MLP holds gate,
 * up and their product, [rows, ffn] f32 each: 12·ffn bytes per row.
 *
 * `"auto"` (the engine's default) gives each chunk the same scratch budget S (`AUTO_CHUNKS.scratchBytes`,
 * 32 MiB per batch row unless `chunkBudgetBytes` says otherwise):
 *   attention: r(T) = S / (12·H·T) query rows, rounded down to a multiple of 16, at least 16;
 *   MLP:       m = S / (12·ffn) rows of the [batch·T, d] residual stream, rounded down to a multiple
 *              of 64, at least 64;
 * so both scratches stay at S whatever T is, and what grows with T is only what an exact forward
 * must hold anyway (residual stream, K, V, the layer's [T, d] projections; docs/engine.md "Memory floor").
 * A decomposed layer's attention runs its chunks as an ONNX Loop (build/attention-loop.ts), so their
 * number is not fixed by the graph: n = ceil(T / min(T, r(T))) chunks of r' = min(T, ceil(T / n)
 * rounded up to the quantum) rows (≤ r(T); the last chunk is padded to r' rows for the Loop's stacked
 * outputs, and the padding is cut off). The MLP and fused attention are unrolled into a fixed number
 * of chunk slots (MLP: ceil(maxPositions / m); fused: ceil(maxPositions / r(maxPositions))), each at
 * most `maxSlots` = 16: more unrolled slots made session creation much slower on 30-layer models
 * (docs/engine.md). A run uses max(ceil(N / slots), min(N, m)) of the N = batch·T MLP rows per
 * chunk, so short inputs run as one chunk (the other slots are empty and cost a few node launches)
 * and inputs beyond slots·m rows get longer chunks (more scratch) rather than failing.
 * Fused layers (build/attention-fused.ts: MultiHeadAttention, one [B, H, rows, T] buffer instead of three) use
 * 3·r rows per chunk under "auto": the same memory, and fewer calls that each re-lay K and V out.
 * Layers whose probes expose the full map (`pattern`, `patternMean`) run their attention as one
 * chunk: their [B, H, T, T] output exists anyway, and chunking would add a concatenation copy of it.
 * An integer n instead splits both the attention and the MLP into n chunks of ceil(rows / n).
 */
import type { ModelSpec } from "./spec.js";

export type QueryChunks = number | "auto";

export const AUTO_CHUNKS = {
  /** Scratch per chunk and batch row (bytes), for the attention and for the MLP. */
  scratchBytes: 32 * 2 ** 20,
  /** Attention chunk rows: a multiple of this, at least this. */
  attentionQuantum: 16,
  /** MLP chunk rows: a multiple of this, at least this. */
  mlpQuantum: 64,
  /** Chunk slots per layer and kind, at most. */
  maxSlots: 16,
} as const;

/** f32 values per token a layer's activations hold (residual, normed, q/k/v, context, MLP). */
export function activationsPerToken(spec: ModelSpec): number {
  return 4 * spec.hiddenSize + spec.headDim * (2 * spec.numHeads + 2 * spec.numKvHeads) + 3 * spec.intermediateSize;
}

/** The part of `activationsPerToken` that the MLP holds (gate, up, their product), chunked under "auto". */
export function mlpPerToken(spec: ModelSpec): number {
  return 3 * spec.intermediateSize;
}

const budget = (b?: number) => b ?? AUTO_CHUNKS.scratchBytes;
const roundDown = (x: number, q: number) => Math.max(q, Math.floor(x / q) * q);

/** Attention scratch budget in "query rows × keys": floor(S / (12·H)); r(T) = this / T (rounded). */
export function attentionRowKeys(spec: ModelSpec, budgetBytes?: number): number {
  return Math.floor(budget(budgetBytes) / (12 * spec.numHeads));
}

/** Query rows per chunk under "auto" at sequence length T, before the slot limit (see the module comment). */
export function autoChunkRows(spec: ModelSpec, T: number, budgetBytes?: number): number {
  return roundDown(Math.floor(attentionRowKeys(spec, budgetBytes) / Math.max(1, T)), AUTO_CHUNKS.attentionQuantum);
}

/** MLP rows per chunk under "auto", before the slot limit. */
export function autoMlpRows(spec: ModelSpec, budgetBytes?: number): number {
  return roundDown(Math.floor(budget(budgetBytes) / (4 * mlpPerToken(spec))), AUTO_CHUNKS.mlpQuantum);
}

const slotsFor = (rows: number, maxPositions: number) => Math.max(1, Math.min(AUTO_CHUNKS.maxSlots, Math.ceil(maxPositions / rows)));

/** Fused-attention chunk slots the graph is built with (decomposed layers loop instead; see the module comment). */
export function chunkSlots(spec: ModelSpec, chunks: QueryChunks, budgetBytes?: number): number {
  if (chunks !== "auto") return chunks;
  return slotsFor(autoChunkRows(spec, spec.maxPositionEmbeddings, budgetBytes), spec.maxPositionEmbeddings);
}

/** MLP chunk slots the graph is built with. */
export function mlpSlots(spec: ModelSpec, chunks: QueryChunks, budgetBytes?: number): number {
  if (chunks !== "auto") return chunks;
  return slotsFor(autoMlpRows(spec, budgetBytes), spec.maxPositionEmbeddings);
}

/**
 * Query rows per attention chunk of a decomposed layer in a run of length T (the largest chunk):
 * ceil(T / n) for n chunks; under "auto" the Loop's r' = min(T, ceil(T / n) rounded up to the
 * quantum) with n = ceil(T / min(T, r(T))).
 */
export function rowsPerChunk(spec: ModelSpec, T: number, chunks: QueryChunks, budgetBytes?: number): number {
  if (chunks !== "auto") return Math.ceil(T / Math.max(1, chunks));
  const q = AUTO_CHUNKS.attentionQuantum;
  const n = Math.ceil(T / Math.min(T, autoChunkRows(spec, T, budgetBytes)));
  return Math.min(T, Math.ceil(Math.ceil(T / n) / q) * q);
}

/** Rows per MLP chunk when the residual stream has N = batch·T rows (the largest chunk). */
export function mlpRowsPerChunk(spec: ModelSpec, N: number, chunks: QueryChunks, budgetBytes?: number): number {
  const even = Math.ceil(N / Math.max(1, mlpSlots(spec, chunks, budgetBytes)));
  if (chunks !== "auto") return even;
  return Math.max(even, Math.min(N, autoMlpRows(spec, budgetBytes)));
}
