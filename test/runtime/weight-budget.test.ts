/**
 * The memory budget of quantised checkpoints: the weights are counted as the engine will hold them
 * (4-bit codes + float32 block scales for MatMulNBits, float32 where expanded), and an engine that
 * cannot fit is refused before a single weight byte is read, with what would fit in the hint.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import type { TensorInfo } from "../../src/checkpoint/types.js";
import { createEngine } from "../../src/runtime/engine.js";
import { estimateMemory, weightBytes, weightFootprint } from "../../src/runtime/memory.js";
import { BudgetError } from "../../src/util/errors.js";
import { makeTinyEngineCheckpoint, type TinyEngineCheckpoint } from "../support/engine-tiny.js";

const made: TinyEngineCheckpoint[] = [];
afterAll(() => made.forEach((m) => m.cleanup()));

/**
 * A tiny spec (2 layers, hidden 32, 4 heads, MLP 64, vocab 64) whose 2-D weights claim to be stored
 * as `type` blocks in a file that does not exist: nothing may read them.
 */
function quantised(type: "Q4_0" | "Q4_1" | "Q8_0", tied = false): { spec: TinyEngineCheckpoint["spec"]; tensors: Map<string, TensorInfo> } {
  const ck = makeTinyEngineCheckpoint({ layers: 2, hidden: 32, heads: 4, ffn: 64, vocab: 64, tied });
  made.push(ck);
  const tensors = new Map<string, TensorInfo>();
  for (const [name, t] of ck.tensors) {
    const q = t.shape.length === 2;
    tensors.set(name, {
      ...t,
      file: path.join(os.tmpdir(), "floatscope-no-such-weights.gguf"),
      dtype: "F32",
      ...(q ? { encoding: { ggmlType: type } } : {}),
    });
  }
  return { spec: ck.spec, tensors };
}

// Element counts of that spec, by hand: per layer q, k, v, o 32×32 = 4096, gate, up 64×32 and
// down 32×64 = 6144, so 10240 per layer and 20480 in all; embedding and head 64×32 = 2048 each;
// norms 2×32 per layer + 32 final = 160 (float32 in every mode).
const LINEAR = 20480,
  TABLE = 2048,
  NORMS = 160;

describe("weightBytes: the weights as the engine holds them", () => {
  it("Q4_0 kept for MatMulNBits: half a byte per element + a 4-byte scale per 32; the mapped embedding costs nothing", () => {
    const { spec, tensors } = quantised("Q4_0");
    // (20480 + 2048 head) × (0.5 + 4/32) = 22528 × 0.625 = 14080; norms 640
    expect((LINEAR + TABLE) * 0.625).toBe(14080);
    expect(NORMS * 4).toBe(640);
    expect(weightBytes(spec, tensors, { mapped: true })).toBe(14080 + 640);
    // held in memory the embedding is its float32 table: + 2048 × 4
    expect(weightBytes(spec, tensors, { mapped: false })).toBe(14080 + 640 + 8192);
  });

  it("Q4_1 adds a 4-byte zero point per block; Q8_0 is one byte per element", () => {
    // Q4_1: 22528 × (0.5 + 8/32) = 16896
    expect(weightBytes(quantised("Q4_1").spec, quantised("Q4_1").tensors, { mapped: true })).toBe(16896 + 640);
    // Q8_0: 22528 × (1 + 4/32) = 25344
    expect(weightBytes(quantised("Q8_0").spec, quantised("Q8_0").tensors, { mapped: true })).toBe(25344 + 640);
  });

  it("dequantised (or f16 compute, which MatMulNBits cannot run): every element in the compute type", () => {
    const { spec, tensors } = quantised("Q4_0");
    // (20480 + 2048 + 2048 + 160) × 4 = 98944; the mapped embedding still costs nothing
    expect(weightBytes(spec, tensors, { quantizedWeights: "dequantize", mapped: false })).toBe(98944);
    expect(weightBytes(spec, tensors, { quantizedWeights: "dequantize", mapped: true })).toBe(98944 - 8192);
    // f16: 2 bytes each
    expect(weightBytes(spec, tensors, { computeDType: "f16", mapped: false })).toBe(98944 / 2);
  });

  it("a tied head is quantised for the head and, unless mapped, a float32 table for the Gather", () => {
    const { spec, tensors } = quantised("Q4_0", true);
    // 20480 × 0.625 = 12800; the table 2048 × 0.625 = 1280 (+ 8192 in memory); norms 640
    expect(weightBytes(spec, tensors, { mapped: true })).toBe(12800 + 1280 + 640);
    expect(weightBytes(spec, tensors, { mapped: false })).toBe(12800 + 1280 + 8192 + 640);
  });
});

describe("estimateMemory with quantised blocks", () => {
  it("counts the blocks once: they are prepacked when the session is made, so they get no arena share", () => {
    const { spec, tensors } = quantised("Q4_0");
    const w = weightFootprint(spec, tensors, { mapped: true });
    // every linear weight and the head are Q4_0 blocks: 22528 × 0.625 = 14080; the norms are not
    expect(w).toEqual({ bytes: 14080 + 640, quantised: 14080 });
    const run = { batch: 1, seq: 8, probes: {} };
    const withBlocks = estimateMemory(spec, { ...run, weights: w });
    const asDense = estimateMemory(spec, { ...run, weights: { bytes: w.bytes, quantised: 0 } });
    expect(withBlocks.weights).toBe(14720);
    expect(asDense.arena - withBlocks.arena).toBe(0.5 * 14080);
    expect(asDense.total - withBlocks.total).toBe(0.5 * 14080);
  });
});

describe("createEngine checks the budget before reading a weight", () => {
  it("refuses with a BudgetError (not a missing-file error) and says that keeping the blocks quantised fits", async () => {
    const src = quantised("Q4_0");
    const err = await createEngine(src, {
      probes: {},
      quantizedWeights: "dequantize",
      weightCache: false,
      scanWeights: false,
      // the weights alone: 98944 B dequantised, 22528 quantised; plus the fixed runtime term
      memoryBudgetBytes: 96 * 2 ** 20 + 60_000,
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    const e = err as BudgetError;
    expect(e.message).toMatch(/memory budget/);
    expect(e.hint).toMatch(/keeping the GGUF blocks quantised fits/);
    expect(e.hint).toMatch(/matmulnbits/);
  });

  it("names the longest sequence that fits when the planned run does not", async () => {
    const src = quantised("Q4_0");
    const budget = 96 * 2 ** 20 + 2 * 2 ** 20;
    const err = await createEngine(src, {
      probes: {},
      weightCache: false,
      scanWeights: false,
      memoryBudgetBytes: budget,
      plannedRun: { batch: 1, seq: 4096 },
    }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(BudgetError);
    const n = Number(/at most (\d+) tokens per row fit/.exec((err as BudgetError).hint ?? "")?.[1]);
    expect(n).toBeGreaterThan(1);
    expect(n).toBeLessThan(4096);
    // and that length really is accepted: the engine then fails only on the missing file
    const next = await createEngine(src, {
      probes: {},
      weightCache: false,
      scanWeights: false,
      memoryBudgetBytes: budget,
      plannedRun: { batch: 1, seq: n },
    }).catch((e: unknown) => e);
    expect(next).not.toBeInstanceOf(BudgetError);
    expect(fs.existsSync(path.join(os.tmpdir(), "floatscope-no-such-weights.gguf"))).toBe(false);
  });
});

describe("auto keeps a large quantised checkpoint quantised, decided before any read", () => {
  it("a 3 GiB-as-float32 tensor index passes a budget only its quantised form fits; dequantize is refused", async () => {
    const src = quantised("Q4_0");
    // Inflate every 2-D weight's rows 2^15-fold in the index (the spec is unchanged, nothing is read
    // before the budget check): (20480 + 2 × 2048) × 32768 = 805 306 368 elements, 3.0 GiB as float32
    // (auto: ≥ 2 GiB, so quantised); quantised (20480 + 2048) × 32768 × 0.625 B + the 2048 × 32768
    // float32 table = 0.68 GiB. With the arena's half on top: ≈ 1.1 GiB vs ≈ 4.5 GiB expanded.
    const big = new Map(
      [...src.tensors].map(([n, t]) => [n, t.shape.length === 2 ? { ...t, shape: [t.shape[0] * 32768, t.shape[1]] } : t]),
    );
    const budget = 2 * 2 ** 30;
    const refused = await createEngine(
      { spec: src.spec, tensors: big },
      { probes: {}, quantizedWeights: "dequantize", scanWeights: false, weightCache: false, memoryBudgetBytes: budget },
    ).catch((e: unknown) => e);
    expect(refused).toBeInstanceOf(BudgetError);
    // auto: within budget, so the engine goes on and fails only where it first touches the (inflated) tensors
    const auto = await createEngine(
      { spec: src.spec, tensors: big },
      { probes: {}, scanWeights: false, weightCache: false, memoryBudgetBytes: budget },
    ).catch((e: unknown) => e);
    expect(auto).toBeInstanceOf(Error);
    expect(auto).not.toBeInstanceOf(BudgetError);
  });
});
