/**
 * The ONNX graph (run by onnxruntime) against the plain TS reference forward (Float64), for
 * every architectural variant we emit. Tolerances: logits 2e-4 abs (|logits| up to ~10, f32
 * accumulation over d ≤ 64), probabilities and probe statistics 1e-5, q/k 1e-4.
 */
import { afterAll, describe, expect, it } from "vitest";
import { mlpRowsPerChunk, rowsPerChunk } from "../../src/graph/chunks.js";
import { buildModelGraph } from "../../src/graph/model.js";
import { probesFromAttention, referenceForward } from "../../src/reference/forward.js";
import { createEngine } from "../../src/runtime/engine.js";
import type { ForwardOutput } from "../../src/runtime/types.js";
import type { ProbeRequest } from "../../src/util/probes.js";
import { probeName } from "../../src/util/probes.js";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint, seeded, type TinyEngineCheckpoint, type TinyEngineOptions } from "../support/engine-tiny.js";

const made: TinyEngineCheckpoint[] = [];
afterAll(() => made.forEach((m) => m.cleanup()));

function randomIds(n: number, vocab: number, seed: number): Int32Array {
  const r = seeded(seed);
  return Int32Array.from({ length: n }, () => Math.floor(r() * vocab));
}

const ALL_LAYERS_QK = (layers: number): ProbeRequest => ({
  received: true,
  receivedHeads: true,
  self: true,
  argmax: true,
  regionSum: { regions: 3 },
  pattern: { layers: Array.from({ length: layers }, (_, l) => l) },
  patternMean: { layers: [layers - 1] },
  qk: { layers: [0, layers - 1], preRope: true },
});

/** Build, run and compare logits, every layer's pattern, q/k and all probe statistics. */
async function checkAgainstReference(opts: TinyEngineOptions, batch = 2, seq = 7, queryChunks = 1): Promise<void> {
  const ck = makeTinyEngineCheckpoint(opts);
  made.push(ck);
  const { spec } = ck;
  const probes = ALL_LAYERS_QK(spec.numLayers);
  const engine = await createEngine({ spec, tensors: ck.tensors }, { probes, threads: 1, queryChunks });
  try {
    const ids = randomIds(batch * seq, spec.vocabSize, 7);
    const regionOneHot = new Float32Array(batch * seq * 3);
    for (let i = 0; i < batch * seq; i++) regionOneHot[i * 3 + (i % seq < 2 ? 0 : i % seq < 5 ? 1 : 2)] = 1;
    const out = await engine.forward({ ids, batch, seq, regionOneHot });
    const ref = referenceForward(spec, ck.weights, { ids, batch, seq });
    expect(out.vocabSize).toBe(spec.vocabSize);
    expectClose(out.logits, ref.logits, 2e-4, "logits");
    const refProbes = probesFromAttention(spec, ref.attention, probes, { batch, seq, regionOneHot });
    for (let l = 0; l < spec.numLayers; l++) {
      expectClose(out.probes.get(probeName.pattern(l))!.data, ref.attention[l], 1e-5, `pattern layer ${l}`);
    }
    for (const [name, p] of refProbes) {
      const got = out.probes.get(name);
      expect(got, name).toBeDefined();
      expect(got!.dims, `${name} dims`).toEqual(p.dims);
      if (name.endsWith("argmax_key")) expect(Array.from(got!.data), name).toEqual(Array.from(p.data));
      else expectClose(got!.data, p.data, 1e-5, name);
    }
    for (const l of probes.qk!.layers) {
      expectClose(out.probes.get(probeName.qRot(l))!.data, ref.qRot[l], 1e-4, `q_rot ${l}`);
      expectClose(out.probes.get(probeName.kRot(l))!.data, ref.kRot[l], 1e-4, `k_rot ${l}`);
      expectClose(out.probes.get(probeName.q(l))!.data, ref.q[l], 1e-4, `q ${l}`);
      expectClose(out.probes.get(probeName.k(l))!.data, ref.k[l], 1e-4, `k ${l}`);
    }
    // every probe the graph returned was checked above, and nothing extra came back
    expect(out.probes.size).toBe(refProbes.size + 4 * new Set(probes.qk!.layers).size);
  } finally {
    await engine.dispose();
  }
}

describe("ONNX graph vs TS reference forward", () => {
  it("causal Llama, MHA, separate LM head", () => checkAgainstReference({ causal: true }));
  it("bidirectional LLaDA-like, θ 500000", () => checkAgainstReference({ causal: false, rope: { theta: 500000 }, family: "llada" }));
  it("Dream-like: bidirectional, GQA 2:1, qkv bias, logit shift", () =>
    checkAgainstReference({ causal: false, heads: 4, kvHeads: 2, qkvBias: true, logitShift: 1, family: "dream", rope: { theta: 1e6 } }));
  it("GQA 7:1 (Dream-7B's ratio), causal, head dim ≠ hidden/heads", () =>
    checkAgainstReference({ heads: 7, kvHeads: 1, hidden: 48, headDim: 8, seed: 3 }));
  it("tied embeddings", () => checkAgainstReference({ tied: true, layers: 1, seed: 4 }));
  it("bf16 weights (cast to f32 in-graph)", () => checkAgainstReference({ dtype: "BF16", heads: 4, kvHeads: 2, seed: 5 }));
  it("f16 weights, sharded over 3 files", () => checkAgainstReference({ dtype: "F16", shards: 3, seed: 6 }));
  it("query-chunked attention (3 chunks of a 7-token row), causal GQA", () =>
    checkAgainstReference({ heads: 4, kvHeads: 2, seed: 9 }, 2, 7, 3));
  it("query-chunked attention, bidirectional with bias and logit shift", () =>
    checkAgainstReference({ causal: false, heads: 4, kvHeads: 2, qkvBias: true, logitShift: 1, seed: 10 }, 1, 10, 4));
  it("more query chunks than tokens (empty chunks)", () => checkAgainstReference({ seed: 12 }, 2, 3, 5));
  it("Llama-3 rope scaling", () =>
    checkAgainstReference(
      { rope: { theta: 500000, llama3: { factor: 8, lowFreqFactor: 1, highFreqFactor: 4, originalMaxPositionEmbeddings: 16 } }, seed: 8 },
      1,
      12,
    ));
});

/** Chunked and one-chunk forwards agree: logits to 1e-5, the same probes, argmax keys exactly, the rest to 1e-6. */
function expectSameForward(a: ForwardOutput, b: ForwardOutput): void {
  expectClose(a.logits, b.logits, 1e-5, "logits");
  expect([...a.probes.keys()].sort()).toEqual([...b.probes.keys()].sort());
  for (const [name, p] of b.probes) {
    if (name.endsWith("argmax_key")) expect(Array.from(a.probes.get(name)!.data), name).toEqual(Array.from(p.data));
    else expectClose(a.probes.get(name)!.data, p.data, 1e-6, name);
  }
}

describe('queryChunks "auto" and the unmasked path', () => {
  const REDUCTIONS: ProbeRequest = { received: true, receivedHeads: true, self: true, argmax: true };
  it("auto chunks (attention 16 rows, MLP 64 rows here) give the probes and logits of one chunk, padded or not", async () => {
    const ck = makeTinyEngineCheckpoint({ causal: false, family: "llada", seed: 14 });
    made.push(ck);
    const spec = { ...ck.spec, maxPositionEmbeddings: 512 };
    // a budget of 64 MLP rows (12·ffn bytes each, ffn 48); the attention's r(T) = S/(12·H·T) is then
    // below its floor of 16 rows
    const chunkBudgetBytes = 12 * 48 * 64;
    const T = 150; // attention: 9 chunks of 16 and one of 6; MLP over 2·150 rows: 4 of 64 and one of 44
    expect(rowsPerChunk(spec, T, "auto", chunkBudgetBytes)).toBe(16);
    expect(mlpRowsPerChunk(spec, 2 * T, "auto", chunkBudgetBytes)).toBe(64);
    const auto = await createEngine({ spec, tensors: ck.tensors }, { probes: REDUCTIONS, threads: 1, chunkBudgetBytes });
    const one = await createEngine({ spec, tensors: ck.tensors }, { probes: REDUCTIONS, threads: 1, queryChunks: 1 });
    try {
      expect(auto.queryChunks).toBe("auto");
      expect(auto.nodeCount).toBeGreaterThan(one.nodeCount);
      const ids = randomIds(2 * T, spec.vocabSize, 3);
      const padded = new Uint8Array(2 * T).fill(1);
      padded.fill(0, T, T + 5); // row 1 left-padded by 5
      for (const attentionMask of [undefined, padded]) {
        expectSameForward(
          await auto.forward({ ids, batch: 2, seq: T, attentionMask }),
          await one.forward({ ids, batch: 2, seq: T, attentionMask }),
        );
      }
    } finally {
      await auto.dispose();
      await one.dispose();
    }
  });

  it("the Loop over query chunks: causal GQA with region sums and interventions equals one chunk", async () => {
    const ck = makeTinyEngineCheckpoint({ causal: true, heads: 4, kvHeads: 2, seed: 16 });
    made.push(ck);
    const spec = { ...ck.spec, maxPositionEmbeddings: 512 };
    const chunkBudgetBytes = 12 * 48 * 64; // attention chunks of 16 rows (the floor), as above
    const T = 37; // ceil(37 / 16) = 3 loop iterations of 16 rows; the last has 5 rows and 11 rows of padding
    expect(rowsPerChunk(spec, T, "auto", chunkBudgetBytes)).toBe(16);
    const probes: ProbeRequest = { ...REDUCTIONS, regionSum: { regions: 3 } };
    const opts = { probes, threads: 1, interventions: true } as const;
    const auto = await createEngine({ spec, tensors: ck.tensors }, { ...opts, chunkBudgetBytes });
    const one = await createEngine({ spec, tensors: ck.tensors }, { ...opts, queryChunks: 1 });
    try {
      const graph = buildModelGraph(spec, ck.tensors, { probes, queryChunks: "auto", chunkBudgetBytes, interventions: true }).graph;
      expect(graph.node.filter((n) => n.opType === "Loop").length).toBe(spec.numLayers); // one Loop per layer, whatever T is
      const B = 2;
      const ids = randomIds(B * T, spec.vocabSize, 5);
      const r = seeded(6);
      const regionOneHot = new Float32Array(B * T * 3);
      for (let i = 0; i < B * T; i++) regionOneHot[i * 3 + Math.floor(r() * 3)] = 1;
      const n = B * spec.numLayers * spec.numHeads * T;
      const keyHidden = Uint8Array.from({ length: n }, () => (r() < 0.2 ? 1 : 0));
      const keyBias = Float32Array.from({ length: n }, () => r() - 0.5);
      const selfOnly = Uint8Array.from({ length: B * T }, () => (r() < 0.1 ? 1 : 0));
      const input = { ids, batch: B, seq: T, regionOneHot, intervention: { keyHidden, keyBias, selfOnly } };
      expectSameForward(await auto.forward(input), await one.forward(input));
    } finally {
      await auto.dispose();
      await one.dispose();
    }
  });

  it("a bidirectional graph masks only behind If(any padding); a causal one always masks", () => {
    const where = (g: { node: { opType: string; attribute: { g?: unknown }[] }[] }) => g.node.filter((n) => n.opType === "Where").length;
    const bi = makeTinyEngineCheckpoint({ causal: false, family: "llada", seed: 15, layers: 2 });
    const causal = makeTinyEngineCheckpoint({ causal: true, seed: 15, layers: 2 });
    made.push(bi, causal);
    const gb = buildModelGraph(bi.spec, bi.tensors, { probes: { received: true } }).graph;
    const ifs = gb.node.filter((n) => n.opType === "If");
    expect(ifs.length).toBe(2); // one per layer (one chunk)
    expect(where(gb)).toBe(0);
    for (const n of ifs) {
      const [then, otherwise] = n.attribute.map((a) => a.g!);
      expect(where(then)).toBe(1);
      expect(where(otherwise)).toBe(0);
      expect(otherwise.node.map((x) => x.opType)).toEqual(["Softmax"]);
    }
    const gc = buildModelGraph(causal.spec, causal.tensors, { probes: { received: true } }).graph;
    expect(gc.node.filter((n) => n.opType === "If").length).toBe(0);
    expect(where(gc)).toBe(2);
  });
});

describe("fused attention (MultiHeadAttention) for layers whose probes need no probabilities", () => {
  it.each([
    ["causal, GQA 4:2, left-padded batch", { causal: true, heads: 4, kvHeads: 2, seed: 21 }, true, 1 as const],
    ["bidirectional, padded batch", { causal: false, family: "llada" as const, seed: 22 }, true, 1 as const],
    ["bidirectional, unpadded, 3 query chunks", { causal: false, family: "llada" as const, seed: 23 }, false, 3],
  ])("%s: logits and the decomposed layer's map match the f64 reference", async (_, opts, pad, queryChunks) => {
    const ck = makeTinyEngineCheckpoint({ layers: 2, ...opts });
    made.push(ck);
    const { spec } = ck;
    const probes: ProbeRequest = { qk: { layers: [0] }, pattern: { layers: [1] } }; // layer 0 fused, layer 1 decomposed
    const built = buildModelGraph(spec, ck.tensors, { probes, queryChunks, fusedAttention: true });
    expect(built.graph.node.filter((n) => n.opType === "MultiHeadAttention" || n.opType === "If").length).toBeGreaterThan(0);
    const mhaIn = (g: typeof built.graph): number =>
      g.node.reduce(
        (n, x) => n + (x.opType === "MultiHeadAttention" ? 1 : 0) + x.attribute.reduce((m, a) => m + (a.g ? mhaIn(a.g) : 0), 0),
        0,
      );
    expect(mhaIn(built.graph)).toBe(spec.causal ? queryChunks : 2 * queryChunks); // bidirectional: both If branches
    const engine = await createEngine({ spec, tensors: ck.tensors }, { probes, threads: 1, queryChunks, fusedAttention: true });
    try {
      const B = 2,
        T = 9;
      const ids = randomIds(B * T, spec.vocabSize, 5);
      const attentionMask = new Uint8Array(B * T).fill(1);
      if (pad) attentionMask.fill(0, T, T + 3);
      const out = await engine.forward({ ids, batch: B, seq: T, attentionMask });
      const ref = referenceForward(spec, ck.weights, { ids, batch: B, seq: T, attentionMask });
      // padded query rows of a causal model see no key (uniform in both); compare real rows only
      const V = spec.vocabSize;
      const rowsOf = (a: ArrayLike<number>, width: number) =>
        Float32Array.from({ length: B * T * width }, (_, i) => (attentionMask[Math.floor(i / width)] ? a[i] : 0));
      expectClose(rowsOf(out.logits, V), rowsOf(ref.logits, V), 2e-4, "logits");
      expectClose(out.probes.get(probeName.qRot(0))!.data, ref.qRot[0], 1e-4, "q_rot 0");
      const H = spec.numHeads;
      const maskMap = (a: ArrayLike<number>) =>
        Float32Array.from(a, (v, i) => (attentionMask[Math.floor(i / (H * T * T)) * T + (Math.floor(i / T) % T)] ? v : 0));
      expectClose(maskMap(out.probes.get(probeName.pattern(1))!.data), maskMap(ref.attention[1]), 1e-5, "pattern 1");
    } finally {
      await engine.dispose();
    }
  });
});
