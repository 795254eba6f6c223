/**
 * Logits-row selection and in-graph summaries (graph/logits.ts), on the HF parity fixtures of all
 * four families (padded batches; Dream's shift included):
 *  - selected rows equal the plain head's full logits at those positions (and HF's own logits);
 *  - the default (no logitRows) still returns every row, equal to the plain head;
 *  - the summaries equal the same statistics computed in float64 from the full logits.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import * as ort from "onnxruntime-node";
import { buildModelGraph } from "../../src/graph/model.js";
import { LOGIT_ROWS_INPUT, SUMMARIES_INPUT, SUMMARY_OUTPUTS } from "../../src/graph/logits.js";
import { referenceForward } from "../../src/reference/forward.js";
import { createEngine, type OnnxEngine } from "../../src/runtime/engine.js";
import { createSession } from "../../src/runtime/session.js";
import type { ForwardInput } from "../../src/runtime/types.js";
import { BudgetError, SettingsError } from "../../src/util/errors.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "parity");
const variants = fs.existsSync(ROOT)
  ? fs
      .readdirSync(ROOT)
      .filter((d) => fs.existsSync(path.join(ROOT, d, "inputs.json")))
      .sort()
  : [];

interface Inputs {
  batch: number;
  seq: number;
  input_ids: number[][];
  attention_mask: number[][];
  logits_rows: number[][];
}

/** Float64 statistics of one logits row, written from their definitions. */
function stats(l: Float32Array) {
  let arg = 0;
  for (let v = 1; v < l.length; v++) if (l[v] > l[arg]) arg = v;
  const m = l[arg];
  let z = 0;
  for (const x of l) z += Math.exp(x - m);
  const p = Array.from(l, (x) => Math.exp(x - m) / z);
  const sorted = [...p].sort((a, b) => b - a);
  return {
    argmax: arg,
    maxProb: sorted[0],
    logSumExp: m + Math.log(z),
    negEntropy: p.reduce((s, q) => s + q * Math.log(q + 1e-10), 0),
    margin: sorted[0] - sorted[1],
  };
}

describe.skipIf(variants.length === 0)("logits row selection and summaries", () => {
  describe.each(variants)("%s", (variant) => {
    const dir = path.join(ROOT, variant);
    const inp = JSON.parse(fs.readFileSync(path.join(dir, "inputs.json"), "utf8")) as Inputs;
    const B = inp.batch,
      T = inp.seq;
    const input: ForwardInput = {
      ids: Int32Array.from(inp.input_ids.flat()),
      batch: B,
      seq: T,
      attentionMask: Uint8Array.from(inp.attention_mask.flat()),
    };
    let plain: OnnxEngine, sel: OnnxEngine;
    let full: Float32Array;
    let V = 0;
    beforeAll(async () => {
      plain = await createEngine(path.join(dir, "model"), { threads: 1, probes: {}, logitRows: false });
      sel = await createEngine(path.join(dir, "model"), { threads: 1, probes: {} });
      V = plain.spec.vocabSize;
      full = (await plain.forward(input)).logits;
    });
    afterAll(async () => {
      await plain?.dispose();
      await sel?.dispose();
    });
    const rowOf = (data: Float32Array, i: number) => data.subarray(i * V, (i + 1) * V);
    // per batch row: position 0 (Dream's repeated row), the last, a middle one, and a repeat
    const positions = () => Int32Array.from({ length: B * 4 }, (_, k) => [0, T - 1, Math.floor(T / 2), T - 1][k % 4]);

    it("the default returns every row, equal to the plain head", async () => {
      const out = await sel.forward(input);
      expect(out.logitRows).toBeUndefined();
      expect(out.logits.length).toBe(B * T * V);
      let max = 0;
      for (let i = 0; i < full.length; i++) max = Math.max(max, Math.abs(out.logits[i] - full[i]));
      expect(max).toBeLessThanOrEqual(1e-6);
    });

    it("selected rows equal the full logits at those positions (and HF's)", async () => {
      const rows = positions();
      const out = await sel.forward({ ...input, logitRows: rows });
      expect(Array.from(out.logitRows!)).toEqual(Array.from(rows));
      expect(out.logits.length).toBe(rows.length * V);
      const hfT = readSafetensorsHeader(path.join(dir, "reference.safetensors")).tensors.find((t) => t.name === "logits")!;
      const hf = readTensorF32(hfT);
      for (let b = 0; b < B; b++)
        for (let r = 0; r < 4; r++) {
          const got = rowOf(out.logits, b * 4 + r);
          const pos = rows[b * 4 + r];
          const want = rowOf(full, b * T + pos);
          let max = 0;
          for (let v = 0; v < V; v++) max = Math.max(max, Math.abs(got[v] - want[v]));
          expect(max, `batch ${b} position ${pos}`).toBeLessThanOrEqual(1e-6);
          if (inp.logits_rows[b][pos] === 1) {
            const ref = rowOf(hf, b * T + pos);
            let d = 0;
            for (let v = 0; v < V; v++) d = Math.max(d, Math.abs(got[v] - ref[v]));
            expect(d, `HF, batch ${b} position ${pos}`).toBeLessThan(1e-4);
          }
        }
    });

    it("summaries equal float64 statistics of the full rows; logits can be skipped", async () => {
      const rows = Int32Array.from({ length: B * T }, (_, k) => (k * 7) % T); // every position, shuffled
      const out = await sel.forward({ ...input, logitRows: rows, summaries: true, returnLogits: false });
      expect(out.logits.length).toBe(0);
      const s = out.summary!;
      for (let i = 0; i < rows.length; i++) {
        const b = Math.floor(i / T);
        const want = stats(rowOf(full, b * T + rows[i]));
        expect(s.argmax[i]).toBe(want.argmax);
        expect(Math.abs(s.maxProb[i] - want.maxProb)).toBeLessThan(1e-5);
        expect(Math.abs(s.logSumExp[i] - want.logSumExp)).toBeLessThan(1e-5);
        expect(Math.abs(s.negEntropy[i] - want.negEntropy)).toBeLessThan(1e-5);
        expect(Math.abs(s.margin[i] - want.margin)).toBeLessThan(1e-5);
      }
    });

    it("bad row requests are refused with a typed error", async () => {
      await expect(sel.forward({ ...input, logitRows: new Int32Array(0) })).rejects.toThrow(SettingsError);
      await expect(sel.forward({ ...input, logitRows: new Int32Array(B).fill(T) })).rejects.toThrow(/logitRows\[0\]/);
      await expect(sel.forward({ ...input, returnLogits: false })).rejects.toThrow(/returnLogits/);
    });
  });
});

describe("memory estimate with row selection", () => {
  it("counts only the selected rows, so a forward refused for its full logits runs with few rows", async () => {
    const ck = makeTinyEngineCheckpoint({ vocab: 4096, hidden: 32, layers: 1, seed: 3 });
    const T = 300;
    const probe = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: {}, threads: 1 });
    const full = probe.estimateMemory(1, T),
      few = probe.estimateMemory(1, T, 4);
    await probe.dispose();
    expect(full.logits).toBe(2 * T * 4096 * 4);
    expect(few.logits).toBeLessThan(full.logits / 10);
    const engine = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      { probes: {}, threads: 1, memoryBudgetBytes: (full.total + few.total) / 2 },
    );
    try {
      const input: ForwardInput = { ids: Int32Array.from({ length: T }, (_, i) => i % 4096), batch: 1, seq: T };
      const err = await engine.forward(input).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(BudgetError);
      expect(String((err as Error).message)).toMatch(/logits/);
      const out = await engine.forward({ ...input, logitRows: Int32Array.of(0, 1, 2, T - 1) });
      expect(out.logits.length).toBe(4 * 4096);
    } finally {
      await engine.dispose();
      ck.cleanup();
    }
  });
});

describe("row selection in the f16 compute graph (CUDA's; checked on CPU)", () => {
  it("selected rows match the f64 reference (Dream shift), summaries match the rows returned", async () => {
    const ck = makeTinyEngineCheckpoint({ dtype: "F16", vocab: 97, logitShift: 1, causal: false, seed: 8 });
    try {
      const built = buildModelGraph(ck.spec, ck.tensors, { computeDType: "f16", logitRows: true, probes: {} });
      const { session } = await createSession(built.bytes, built.externalFiles, { threads: 1 });
      const T = 8,
        V = 97;
      const ids = Int32Array.from({ length: T }, (_, i) => (i * 13 + 5) % V);
      const rows = [0, 3, 7]; // output positions; hidden rows max(i − 1, 0)
      const feeds = (summaries: boolean) => ({
        input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, T]),
        position_ids: new ort.Tensor(
          "int64",
          BigInt64Array.from({ length: T }, (_, i) => BigInt(i)),
          [1, T],
        ),
        attention_mask: new ort.Tensor("bool", new Uint8Array(T).fill(1), [1, T]),
        [LOGIT_ROWS_INPUT]: new ort.Tensor(
          "int64",
          BigInt64Array.from(rows, (r) => BigInt(Math.max(r - 1, 0))),
          [1, 3],
        ),
        [SUMMARIES_INPUT]: new ort.Tensor("bool", Uint8Array.of(summaries ? 1 : 0), [1]),
      });
      const res = await session.run(feeds(true));
      // Without the flag the If skips the summaries: they come out empty, the logits unchanged.
      const off = await session.run(feeds(false));
      for (const name of Object.values(SUMMARY_OUTPUTS)) expect(off[name].data.length, name).toBe(0);
      expect(off.logits.data).toEqual(res.logits.data);
      const got = res.logits.data as Float32Array;
      const ref = referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: T }).logits; // already shifted
      rows.forEach((pos, r) => {
        let max = 0;
        for (let v = 0; v < V; v++) max = Math.max(max, Math.abs(got[r * V + v] - ref[pos * V + v]));
        expect(max, `position ${pos}`).toBeLessThan(0.05);
        const want = stats(got.subarray(r * V, (r + 1) * V));
        expect((res[SUMMARY_OUTPUTS.argmax].data as Int32Array)[r]).toBe(want.argmax);
        expect(Math.abs((res[SUMMARY_OUTPUTS.negEntropy].data as Float64Array)[r] - want.negEntropy)).toBeLessThan(1e-9);
        expect(Math.abs((res[SUMMARY_OUTPUTS.margin].data as Float64Array)[r] - want.margin)).toBeLessThan(1e-9);
      });
      await session.release();
    } finally {
      ck.cleanup();
    }
  });
});
