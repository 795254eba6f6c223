/**
 * Analyses on traces the real pipeline records: a tiny random Dream-like MDM (bidirectional,
 * GQA 4:2, logit shift) through the ONNX engine and the sampler. The checks are independent of our
 * analysis code: the engine's own attention probabilities (`pattern`, `pattern_mean`) are the oracle.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { absorptionRate } from "../../src/analysis/absorption.js";
import { adjustReceived } from "../../src/analysis/anchors.js";
import { temporalDrift } from "../../src/analysis/drift.js";
import { qkDecomposition } from "../../src/analysis/qk-decomposition.js";
import { retrievalHeads } from "../../src/analysis/retrieval-heads.js";
import { regionRollout } from "../../src/analysis/rollout.js";
import { createEngine } from "../../src/runtime/engine.js";
import { generate } from "../../src/samplers/generate.js";
import type { Trace } from "../../src/trace/types.js";
import { FakeTokenizer } from "../support/fake-engine.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

const ck = makeTinyEngineCheckpoint({
  family: "dream",
  layers: 2,
  heads: 4,
  kvHeads: 2,
  headDim: 8,
  hidden: 32,
  causal: false,
  logitShift: 1,
  qkvBias: true,
  seed: 7,
});
ck.spec.maskTokenId = 31;
const probes = {
  received: true,
  self: true,
  argmax: true,
  pattern: { layers: [0, 1] },
  patternMean: { layers: [0, 1] },
  qk: { layers: [0, 1] },
};
const text = "t5 t6 t7 t8 t9 t10 t11 t12";
let trace: Trace;
// A causal LLaMA-like ARM on the same prompt.
const arm = makeTinyEngineCheckpoint({ layers: 2, heads: 4, kvHeads: 1, headDim: 8, hidden: 32, causal: true, seed: 11 });
let armTrace: Trace;

beforeAll(async () => {
  const engine = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { threads: 1, probes });
  const regions = [
    { name: "query", tokens: [0, 3] as [number, number], chars: [0, 8] as [number, number] },
    { name: "doc 1", tokens: [3, 8] as [number, number], chars: [9, 26] as [number, number] },
  ];
  const [r] = await generate(
    engine,
    [{ text, regions }],
    { sampler: "dream", genLength: 4, steps: 4, temperature: 0, seed: 3, probes },
    { tokenizer: new FakeTokenizer(), modelName: "tiny-dream" },
  );
  trace = r.trace;
  await engine.dispose();
  const armEngine = await createEngine({ spec: arm.spec, tensors: arm.tensors }, { threads: 1, probes });
  const [a] = await generate(
    armEngine,
    [text],
    { sampler: "arm", genLength: 3, probes, stopAtEos: false },
    { tokenizer: new FakeTokenizer(), modelName: "tiny-llama" },
  );
  armTrace = a.trace;
  await armEngine.dispose();
}, 120_000);
afterAll(() => {
  ck.cleanup();
  arm.cleanup();
});

const T = 12;

describe("analyses on an engine-recorded trace", () => {
  it("received is the column mean of the engine's head-mean map; absorption (top-1) is its max column", () => {
    const pm = trace.final.probes.get("blocks.1.attn.pattern_mean")!.data;
    const col = Array.from({ length: T }, (_, j) => Array.from({ length: T }, (_, i) => pm[i * T + j]).reduce((a, b) => a + b) / T);
    const { table } = absorptionRate(trace, { rule: "top-k" });
    expect(table.get("value", 1)).toBeCloseTo(Math.max(...col), 5);
  });
  it("excluding the diagonal matches column means of the map with its diagonal removed", () => {
    const pm = trace.final.probes.get("blocks.0.attn.pattern_mean")!.data;
    const rec = trace.final.probes.get("blocks.0.attn.received")!.data;
    const self = trace.final.probes.get("blocks.0.attn.self")!.data;
    const adj = adjustReceived(rec, { diagonal: true, self });
    for (let j = 0; j < T; j++) {
      let s = 0;
      for (let i = 0; i < T; i++) if (i !== j) s += pm[i * T + j];
      expect(adj[j]).toBeCloseTo(s / (T - 1), 5);
    }
  });
  it("softmax of the per-head QK score rows reproduces the engine's attention for every head (correct GQA mapping, 1/√d)", () => {
    const pat = trace.final.probes.get("blocks.1.attn.pattern")!.data; // [head, query, key]
    for (let h = 0; h < 4; h++) {
      const score = qkDecomposition(trace, { layers: [1], heads: h }).table.array("score") as ArrayLike<number>;
      let maxErr = 0;
      for (let i = 0; i < T; i++) {
        const row = Array.from(score).slice(i * T, (i + 1) * T);
        const m = Math.max(...row);
        const e = row.map((v) => Math.exp(v - m));
        const z = e.reduce((a, b) => a + b);
        for (let j = 0; j < T; j++) maxErr = Math.max(maxErr, Math.abs(e[j] / z - pat[h * T * T + i * T + j]));
      }
      expect(maxErr, `head ${h}`).toBeLessThan(1e-4);
    }
  });
  it("upstream's h mod H_kv mapping does NOT reproduce head 1's attention (it reads KV head 1 instead of 0)", () => {
    const pat = trace.final.probes.get("blocks.1.attn.pattern")!.data;
    const score = qkDecomposition(trace, { layers: [1], heads: 1, upstream: true, scaled: true, window: [0, T] }).table.array(
      "score",
    ) as ArrayLike<number>;
    // upstream also masks Dream as causal: compare only row T−1, which sees every key
    const row = Array.from(score).slice((T - 1) * T, T * T);
    const m = Math.max(...row);
    const e = row.map((v) => Math.exp(v - m));
    const z = e.reduce((a, b) => a + b);
    const err = Math.max(...e.map((v, j) => Math.abs(v / z - pat[1 * T * T + (T - 1) * T + j])));
    expect(err).toBeGreaterThan(1e-3);
  });
  it("drift rows are the per-step received vectors; retrieval events satisfy the copy criterion; rollout rows are distributions", () => {
    const { heat } = temporalDrift(trace, { layers: [0] });
    const v = heat.filter((d: { step: number; position: number }) => d.step === 2 && d.position === 5).get("value", 0);
    expect(v).toBeCloseTo(trace.steps[2].probes.get("blocks.0.attn.received")!.data[5], 6);
    const { events } = retrievalHeads(trace, { evidence: { region: "doc 1" }, filter: "none" });
    for (const e of events.objects() as { key: number; token: number; step: number }[]) {
      expect(e.key >= 3 && e.key < 8).toBe(true);
      expect(trace.prompt.ids[e.key]).toBe(e.token);
    }
    const { spec } = regionRollout(trace);
    expect(spec.regions).toEqual(["query", "doc 1", "answer"]);
    expect(spec.stationary.reduce((a, b) => a + b)).toBeCloseTo(1, 9);
  });
  it("ARM (causal, 4 heads on 1 KV head): masked QK scores reproduce the causal attention; upstream absorption = column 0", () => {
    const Ta = armTrace.final.sequence.length;
    const pat = armTrace.final.probes.get("blocks.0.attn.pattern")!.data;
    for (const h of [0, 3]) {
      const score = Array.from(qkDecomposition(armTrace, { layers: [0], heads: h }).table.array("score") as ArrayLike<number>);
      for (let i = 0; i < Ta; i++) {
        const row = score.slice(i * Ta, i * Ta + i + 1); // visible keys only; the rest is NaN
        expect(score.slice(i * Ta + i + 1, (i + 1) * Ta).every(Number.isNaN)).toBe(true);
        const m = Math.max(...row);
        const z = row.reduce((acc, v) => acc + Math.exp(v - m), 0);
        row.forEach((v, j) => expect(Math.exp(v - m) / z).toBeCloseTo(pat[h * Ta * Ta + i * Ta + j], 4));
      }
    }
    const rec = armTrace.final.probes.get("blocks.0.attn.received")!.data;
    const sum = Array.from(rec).reduce((a, b) => a + b);
    expect(absorptionRate(armTrace, { rule: "upstream" }).table.get("value", 0)).toBeCloseTo(rec[0] / sum, 6);
  });
  it("ARM drift: the canvas grows one token per step, shorter rows are NaN-padded", () => {
    const { heat } = temporalDrift(armTrace, { layers: [0], rule: "top-k" });
    const P = armTrace.prompt.promptLength;
    const row0 = heat.filter((d: { step: number }) => d.step === 0).array("value") as ArrayLike<number>;
    expect(Array.from(row0).filter(Number.isNaN).length).toBe(2); // step 0 saw P tokens of P + 2 columns
    expect(armTrace.steps.map((st) => st.canvas.length)).toEqual([P, P + 1, P + 2]);
    expect(Array.from(armTrace.steps[1].producingRow)).toEqual([P]);
  });
});
