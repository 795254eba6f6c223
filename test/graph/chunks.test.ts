/**
 * The "auto" chunking rule (src/graph/chunks.ts) at two shapes, with the numbers worked out by hand
 * from the rule as docs/engine.md states it (S = 32 MiB = 33 554 432 bytes per chunk):
 *   bench model (16 heads, ffn 2816, 8192 positions): attention S / (12·16) = 174 762 row·keys,
 *     r(256) = 682 → 672, r(1024) = 170 → 160, r(2048) = 85 → 80, r(4096) = 42 → 32, r(8192) = 21 → 16
 *     (multiples of 16); the attention Loop then balances its n = ceil(T / min(T, r)) chunks:
 *     T 256: r = 672 > T → one chunk of 256; T 512: r(512) = 341 → 336, n = 2, 256 rows each;
 *     T 1024: n = ceil(1024 / 160) = 7, ceil(1024 / 7) = 147 → 160; T 2048: n = 26, 79 → 80;
 *     T 4096: n = 128, 32; T 8192: n = 512, 16 (no slot limit: the Loop's trip count is per run).
 *     Fused attention stays unrolled: 8192 / 16 = 512 slots, capped at 16.
 *     MLP S / (12·2816) = 992.9 → 960 rows (multiple of 64), ceil(8192 / 960) = 9 slots.
 *   LLaDA-8B (32 heads, ffn 12288, 4096 positions): 87 381 row·keys, r(1024) = 85 → 80, n = 13,
 *     ceil(1024 / 13) = 79 → 80; r(4096) = 21 → 16, n = 256, 16 rows; MLP 227.5 → 192 rows,
 *     ceil(4096 / 192) = 22 slots, capped at 16 → ceil(4096 / 16) = 256 rows at T 4096.
 * The chunked graph itself is tested against the unchunked one and the f64 reference in model.test.ts.
 */
import { describe, expect, it } from "vitest";
import { chunkSlots, mlpRowsPerChunk, mlpSlots, rowsPerChunk } from "../../src/graph/chunks.js";
import type { ModelSpec } from "../../src/graph/spec.js";
import { estimateMemory } from "../../src/runtime/memory.js";

function shape(hidden: number, heads: number, ffn: number, layers: number, maxPositions: number): ModelSpec {
  const block = { attnNorm: "a", q: "q", k: "k", v: "v", o: "o", mlpNorm: "m", gate: "g", up: "u", down: "d" };
  return {
    family: "llada",
    architecture: "LLaDAModelLM",
    vocabSize: 4096,
    hiddenSize: hidden,
    numLayers: layers,
    numHeads: heads,
    numKvHeads: heads,
    headDim: hidden / heads,
    intermediateSize: ffn,
    rmsNormEps: 1e-5,
    rope: { theta: 500000 },
    maxPositionEmbeddings: maxPositions,
    causal: false,
    qkvBias: false,
    logitShift: 0,
    eosTokenIds: [],
    addsBos: false,
    weights: { embed: "e", finalNorm: "n", lmHead: "h", blocks: Array.from({ length: layers }, () => block) },
  } as unknown as ModelSpec;
}

const BENCH = shape(1024, 16, 2816, 8, 8192);
const LLADA_8B = shape(4096, 32, 12288, 32, 4096);

describe('queryChunks "auto"', () => {
  it("bench shape: attention rows shrink like 1/T down to the 16-row floor, MLP rows are fixed", () => {
    expect(chunkSlots(BENCH, "auto")).toBe(16);
    expect(mlpSlots(BENCH, "auto")).toBe(9);
    expect([256, 512, 1024, 2048, 4096, 8192].map((T) => rowsPerChunk(BENCH, T, "auto"))).toEqual([256, 256, 160, 80, 32, 16]);
    expect([256, 1024, 4096, 8192].map((N) => mlpRowsPerChunk(BENCH, N, "auto"))).toEqual([256, 960, 960, 960]);
    expect(mlpRowsPerChunk(BENCH, 4 * 8192, "auto")).toBe(Math.ceil((4 * 8192) / 9)); // beyond slots·rows: longer chunks
  });

  it("LLaDA-8B shape", () => {
    expect(chunkSlots(LLADA_8B, "auto")).toBe(16);
    expect(mlpSlots(LLADA_8B, "auto")).toBe(16);
    expect([1024, 4096].map((T) => rowsPerChunk(LLADA_8B, T, "auto"))).toEqual([80, 16]);
    expect(mlpRowsPerChunk(LLADA_8B, 4096, "auto")).toBe(256);
  });

  it("an integer n splits attention and MLP into n chunks; the budget is a parameter", () => {
    expect(rowsPerChunk(BENCH, 1000, 3)).toBe(334);
    expect(mlpRowsPerChunk(BENCH, 2000, 3)).toBe(667);
    // 4× the budget: 4× the attention rows (before rounding) and MLP rows
    expect(rowsPerChunk(BENCH, 1024, "auto", 128 * 2 ** 20)).toBe(512); // 699 050 / 1024 = 682 → 672: 2 chunks of 512
    expect(mlpRowsPerChunk(BENCH, 8192, "auto", 128 * 2 ** 20)).toBe(3968); // 3971.9 → 3968
  });

  it("estimateMemory follows the rule: attention 12·H·r·T, MLP intermediates for one chunk of rows", () => {
    const T = 4096;
    const est = estimateMemory(BENCH, { batch: 1, seq: T, queryChunks: "auto" });
    expect(est.attention).toBe(12 * 16 * 32 * T);
    const perTokenNonMlp = 4 * 1024 + 64 * (2 * 16 + 2 * 16); // residual, normed, q/k/v, context
    expect(est.activations).toBe(2 * 4 * (T * perTokenNonMlp + 960 * 3 * 2816));
    const one = estimateMemory(BENCH, { batch: 1, seq: T, queryChunks: 1 });
    expect(one.attention).toBe(12 * 16 * T * T);
    expect(one.activations).toBe(2 * 4 * T * (perTokenNonMlp + 3 * 2816));
  });
});
