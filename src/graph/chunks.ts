/**
 * Query chunking: how many query rows of a layer's attention are computed at a time.
 *
 * The decomposed attention holds scores, masked scores and probabilities, [batch, head, rows, key]
 * f32 each, for one chunk of query rows at a time. Computed for all T rows at once that is 12·H·T²
 * bytes per batch row, which is what made a forward's peak memory grow ×3.9 per doubling of T.
 *
 * `"auto"` (the engine's default) sizes chunks from the memory estimate's own terms: a chunk of r
 * rows costs 12·H·r·T bytes, the layer's activations 8·T·perToken (memory.ts), so with
 *   r = 8·perToken / (12·H), rounded down to a multiple of 64, clamped to [64, 1024],
 * the attention never costs more than the activations and both grow linearly in T. The graph has
 * `slots` = ceil(maxPositions / r) chunk slots (at most 32); a run uses max(ceil(T / slots), min(T, r))
 * rows per chunk, so short inputs run as one chunk (the other slots are empty and cost a few
 * node launches) and inputs beyond slots·r rows get longer chunks rather than failing.
 * Fused layers (model.ts: MultiHeadAttention, one [B, H, rows, T] buffer instead of three) use
 * 3·r rows per chunk under "auto": the same memory, and fewer calls that each re-lay K and V out.
 * Layers whose probes expose the full map (`pattern`, `patternMean`) run as one chunk: their
 * [B, H, T, T] output exists anyway, and chunking would add a concatenation copy of it.
 */
import type { ModelSpec } from "./spec.js";

export type QueryChunks = number | "auto";

export const AUTO_CHUNKS = { minRows: 64, maxRows: 1024, maxSlots: 32 } as const;

/** f32 values per token a layer's activations hold (residual, normed, q/k/v, context, MLP). */
export function activationsPerToken(spec: ModelSpec): number {
  return 4 * spec.hiddenSize + spec.headDim * (2 * spec.numHeads + 2 * spec.numKvHeads) + 3 * spec.intermediateSize;
}

/** Query rows per chunk under "auto" (see the module comment). */
export function autoChunkRows(spec: ModelSpec): number {
  const r = Math.floor((8 * activationsPerToken(spec)) / (12 * spec.numHeads) / 64) * 64;
  return Math.min(AUTO_CHUNKS.maxRows, Math.max(AUTO_CHUNKS.minRows, r));
}

/** Chunk slots the graph is built with. */
export function chunkSlots(spec: ModelSpec, chunks: QueryChunks): number {
  if (chunks !== "auto") return chunks;
  return Math.max(1, Math.min(AUTO_CHUNKS.maxSlots, Math.ceil(spec.maxPositionEmbeddings / autoChunkRows(spec))));
}

/** Query rows per chunk in a run of length T (the largest chunk). */
export function rowsPerChunk(spec: ModelSpec, T: number, chunks: QueryChunks): number {
  if (chunks !== "auto") return Math.ceil(T / Math.max(1, chunks));
  return Math.max(Math.ceil(T / chunkSlots(spec, "auto")), Math.min(T, autoChunkRows(spec)));
}
