/**
 * In-graph probes against the same statistic computed in TS from the graph's own full attention
 * maps (so a reduction bug cannot hide behind a matching reference bug), plus padding: a
 * left-padded row must give the unpadded sequence's logits and probes on its real tokens.
 */
import { afterAll, describe, expect, it } from "vitest";
import { buildModelGraph } from "../../src/graph/model.js";
import { probeOutputs } from "../../src/graph/probes.js";
import { probesFromAttention } from "../../src/reference/forward.js";
import { createEngine } from "../../src/runtime/engine.js";
import { SettingsError } from "../../src/util/errors.js";
import { PROBE_AXES, parseProbeName, probeName, type ProbeRequest } from "../../src/util/probes.js";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint, type TinyEngineCheckpoint } from "../support/engine-tiny.js";

const made: TinyEngineCheckpoint[] = [];
afterAll(() => made.forEach((m) => m.cleanup()));
function tiny(o: Parameters<typeof makeTinyEngineCheckpoint>[0]) {
  const ck = makeTinyEngineCheckpoint(o);
  made.push(ck);
  return ck;
}

describe("probes equal the statistic computed from full attention maps", () => {
  it.each([
    ["causal, GQA 2:1", { causal: true, heads: 4, kvHeads: 2 }, 1],
    ["bidirectional, MHA", { causal: false, seed: 11 }, 1],
    ["causal, GQA 2:1, 4 query chunks", { causal: true, heads: 4, kvHeads: 2, seed: 12 }, 4],
  ])("%s", async (_, opts, queryChunks) => {
    const ck = tiny({ layers: 2, ...opts });
    const req: ProbeRequest = {
      received: true,
      receivedHeads: true,
      self: true,
      argmax: true,
      regionSum: { regions: 2 },
      patternMean: { layers: [0, 1] },
    };
    const engine = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      { probes: { ...req, pattern: { layers: [0, 1] } }, threads: 1, queryChunks },
    );
    const B = 2,
      T = 9;
    const ids = Int32Array.from({ length: B * T }, (_, i) => (i * 13 + 5) % ck.spec.vocabSize);
    const attentionMask = Uint8Array.from({ length: B * T }, (_, i) => (i >= T && i < T + 2 ? 0 : 1)); // row 1 left-padded by 2
    // arbitrary weights, zero on padded query rows (a fully masked causal row is uniform over all keys, as in HF)
    const queryWeight = Float32Array.from({ length: B * T }, (_, i) => (i % 3 === 0 || !attentionMask[i] ? 0 : 1 + (i % 4)));
    const regionOneHot = new Float32Array(B * T * 2);
    for (let i = 0; i < B * T; i++) regionOneHot[i * 2 + (i % T < 4 ? 0 : 1)] = 1;
    const out = await engine.forward({ ids, batch: B, seq: T, attentionMask, queryWeight, regionOneHot });
    const maps = [0, 1].map((l) => Float64Array.from(out.probes.get(probeName.pattern(l))!.data));
    const expected = probesFromAttention(ck.spec, maps, req, { batch: B, seq: T, attentionMask, queryWeight, regionOneHot });
    expect(expected.size).toBe(2 * 7); // 7 statistics × 2 layers
    for (const [name, p] of expected) {
      const got = out.probes.get(name)!;
      expect(got.dims, name).toEqual(p.dims);
      expect(got.axes, name).toEqual(PROBE_AXES[parseProbeName(name)!.kind]);
      if (name.endsWith("argmax_key")) {
        expect(got.data).toBeInstanceOf(Int32Array);
        expect(Array.from(got.data), name).toEqual(Array.from(p.data));
      } else {
        expectClose(got.data, p.data, 2e-6, name);
      }
    }
    // rows of every map are distributions; padded keys receive nothing
    const p0 = out.probes.get(probeName.pattern(0))!.data;
    for (let r = 0; r < B * ck.spec.numHeads * T; r++) {
      let s = 0;
      for (let k = 0; k < T; k++) s += p0[r * T + k];
      expect(Math.abs(s - 1)).toBeLessThan(1e-5);
    }
    const recv = out.probes.get(probeName.received(0))!.data;
    expect(recv[T]).toBe(0);
    expect(recv[T + 1]).toBe(0);
    await engine.dispose();
  });

  it("pattern can be restricted to chosen heads", async () => {
    const ck = tiny({ layers: 2, heads: 4, kvHeads: 2, seed: 21 });
    const engine = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      { probes: { pattern: { layers: [1], heads: [3, 0] } }, threads: 1 },
    );
    const full = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: { pattern: { layers: [1] } }, threads: 1 });
    const ids = Int32Array.from([1, 2, 3, 4, 5]);
    const a = (await engine.forward({ ids, batch: 1, seq: 5 })).probes;
    const b = (await full.forward({ ids, batch: 1, seq: 5 })).probes.get(probeName.pattern(1))!.data;
    expect([...a.keys()]).toEqual([probeName.pattern(1)]);
    const sel = a.get(probeName.pattern(1))!;
    expect(sel.dims).toEqual([1, 2, 5, 5]);
    expectClose(sel.data.subarray(0, 25), b.subarray(3 * 25, 4 * 25), 0, "head 3");
    expectClose(sel.data.subarray(25, 50), b.subarray(0, 25), 0, "head 0");
    await engine.dispose();
    await full.dispose();
  });

  it("rejects probe requests that do not fit the model", () => {
    const ck = tiny({ layers: 2 });
    expect(() => probeOutputs(ck.spec, {})).not.toThrow();
    return Promise.all([
      expect(createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: { pattern: { layers: [2] } } })).rejects.toThrow(
        /probes\.pattern\.layers/,
      ),
      expect(createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: { pattern: { layers: [0], heads: [9] } } })).rejects.toThrow(
        SettingsError,
      ),
      expect(createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: { recieved: true } as ProbeRequest })).rejects.toThrow(
        /probes\.recieved/,
      ),
    ]);
  });
});

describe("padding mask", () => {
  it.each([
    ["causal Llama", { causal: true }, 1],
    ["bidirectional GQA", { causal: false, heads: 4, kvHeads: 2, qkvBias: true, seed: 31 }, 1],
    ["causal Llama, 3 query chunks", { causal: true, seed: 32 }, 3],
  ])("%s: a left-padded row matches the sequence alone on its real tokens", async (_, opts, queryChunks) => {
    const ck = tiny({ layers: 2, ...opts });
    const V = ck.spec.vocabSize,
      H = ck.spec.numHeads;
    const req: ProbeRequest = { received: true, self: true, argmax: true, pattern: { layers: [1] } };
    const engine = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: req, threads: 1, queryChunks });
    const real = [5, 9, 2, 33, 17];
    const pad = 3,
      T = real.length + pad;
    // row 0: [pad pad pad | real], row 1: an unrelated full row, to check rows do not leak into each other
    const ids = Int32Array.from([...Array(pad).fill(0), ...real, 1, 2, 3, 4, 5, 6, 7, 8]);
    const attentionMask = Uint8Array.from([...Array(pad).fill(0), ...real.map(() => 1), ...Array(T).fill(1)]);
    const padded = await engine.forward({ ids, batch: 2, seq: T, attentionMask });
    const alone = await engine.forward({ ids: Int32Array.from(real), batch: 1, seq: real.length });
    const n = real.length;
    expectClose(padded.logits.subarray(pad * V, T * V), alone.logits, 1e-4, "logits on real tokens");
    for (let l = 0; l < 2; l++) {
      expectClose(
        padded.probes.get(probeName.received(l))!.data.subarray(pad, T),
        alone.probes.get(probeName.received(l))!.data,
        1e-6,
        `received ${l}`,
      );
      expectClose(
        padded.probes.get(probeName.self(l))!.data.subarray(pad, T),
        alone.probes.get(probeName.self(l))!.data,
        1e-6,
        `self ${l}`,
      );
      const ak = padded.probes.get(probeName.argmaxKey(l))!.data;
      const bk = alone.probes.get(probeName.argmaxKey(l))!.data;
      for (let h = 0; h < H; h++) for (let q = 0; q < n; q++) expect(ak[h * T + pad + q] - pad).toBe(bk[h * n + q]);
    }
    const pp = padded.probes.get(probeName.pattern(1))!.data,
      pa = alone.probes.get(probeName.pattern(1))!.data;
    for (let h = 0; h < H; h++)
      for (let q = 0; q < n; q++) {
        for (let k = 0; k < pad; k++) expect(pp[(h * T + pad + q) * T + k]).toBe(0);
        expectClose(
          pp.subarray((h * T + pad + q) * T + pad, (h * T + pad + q + 1) * T),
          pa.subarray((h * n + q) * n, (h * n + q + 1) * n),
          1e-6,
          `pattern h${h} q${q}`,
        );
      }
    await engine.dispose();
  });
});

describe("probe scheduling", () => {
  it("each layer's output projection depends on that layer's probes (so P is freed before the next layer)", () => {
    const ck = tiny({ layers: 3 });
    const built = buildModelGraph(ck.spec, ck.tensors, { probes: { received: true, argmax: true, pattern: { layers: [1] } } });
    const producer = new Map<string, (typeof built.graph.node)[number]>();
    for (const n of built.graph.node) for (const o of n.output) producer.set(o, n);
    const ancestors = (value: string): Set<string> => {
      const seen = new Set<string>();
      const stack = [value];
      while (stack.length) {
        const v = stack.pop()!;
        if (seen.has(v)) continue;
        seen.add(v);
        for (const i of producer.get(v)?.input ?? []) stack.push(i);
      }
      return seen;
    };
    for (let l = 0; l < 3; l++) {
      const oProj = built.graph.node.find((n) => n.opType === "Gemm" && n.input[1] === ck.spec.weights.blocks[l].o)!;
      const deps = ancestors(oProj.output[0]);
      const layerProbes = built.probes.filter((p) => p.layer === l).map((p) => p.name);
      expect(layerProbes.length).toBe(l === 1 ? 4 : 3);
      for (const name of layerProbes) expect(deps.has(name), `${name} before o_proj ${l}`).toBe(true);
      // and not on a later layer's probes
      expect(deps.has(probeName.received(l + 1))).toBe(false);
    }
  });

  it("query chunks run one after another: each chunk's scores wait for the previous chunk's results", () => {
    const ck = tiny({ layers: 1 });
    const built = buildModelGraph(ck.spec, ck.tensors, { probes: { received: true }, queryChunks: 3 });
    const producer = new Map<string, (typeof built.graph.node)[number]>();
    for (const n of built.graph.node) for (const o of n.output) producer.set(o, n);
    const ancestorNodes = (value: string) => {
      const seen = new Set<(typeof built.graph.node)[number]>();
      const stack = [value];
      while (stack.length) {
        const n = producer.get(stack.pop()!);
        if (!n || seen.has(n)) continue;
        seen.add(n);
        stack.push(...n.input);
      }
      return seen;
    };
    const softmaxes = built.graph.node.filter((n) => n.opType === "Softmax");
    expect(softmaxes).toHaveLength(3);
    for (let c = 1; c < 3; c++) {
      const before = ancestorNodes(softmaxes[c].output[0]);
      expect(before.has(softmaxes[c - 1])).toBe(true);
      // including the previous chunk's probe partial (w·P) and its P·V
      const prevConsumers = built.graph.node.filter((n) => n.opType === "MatMul" && n.input.includes(softmaxes[c - 1].output[0]));
      expect(prevConsumers).toHaveLength(2);
      for (const m of prevConsumers) expect(before.has(m)).toBe(true);
    }
  });
});
