/**
 * The engine's key/value-cached decoder against its own plain graph (`kvCache: false`, whose
 * forward is checked against HF transformers in parity.test.ts): on models/tiny-llama and
 * models/tiny-qwen, a prompt run once and then continued one token (or a few) at a time gives, at
 * every step, the logits the full forward over the whole prefix gives for those rows (1e-4); left
 * padded batches continue per row as each row alone; rows can leave the batch (`retain`).
 */
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createEngine, type OnnxEngine } from "../../src/runtime/engine.js";
import { KV_CACHE_COPIES } from "../../src/runtime/memory.js";
import type { KvDecoder } from "../../src/runtime/types.js";
import { SettingsError } from "../../src/util/errors.js";

const ROOT = path.resolve(import.meta.dirname, "..", "..");

function ids(n: number, seed: number, vocab: number): Int32Array {
  const out = new Int32Array(n);
  let s = seed;
  for (let i = 0; i < n; i++) {
    s = (s * 1103515245 + 12345) % 2 ** 31;
    out[i] = 3 + (s % (vocab - 3));
  }
  return out;
}

function maxDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let d = 0;
  for (let i = 0; i < a.length; i++) d = Math.max(d, Math.abs(a[i] - b[i]));
  return d;
}

for (const model of ["tiny-llama", "tiny-qwen"]) {
  describe(`key/value-cached decoding equals the full forward (models/${model})`, () => {
    let cached: OnnxEngine, plain: OnnxEngine;
    beforeAll(async () => {
      const dir = path.join(ROOT, "models", model);
      cached = await createEngine(dir, { threads: 1, probes: {} });
      plain = await createEngine(dir, { threads: 1, probes: {}, kvCache: false });
    }, 120_000);
    afterAll(async () => {
      await cached?.dispose();
      await plain?.dispose();
    });

    /** Row t of the plain forward over seq[0 … t]: what the full path computes for that step. */
    const fullRow = async (seq: Int32Array, t: number) => {
      const o = await plain.forward({ ids: seq.subarray(0, t + 1), batch: 1, seq: t + 1, logitRows: Int32Array.of(t) });
      return o.logits;
    };

    it("forward through the cached graph (nothing cached) equals the plain graph's", async () => {
      expect(cached.kvCache).toBe(true);
      expect(plain.kvCache).toBe(false);
      const x = ids(23, 7, cached.spec.vocabSize);
      const a = await cached.forward({ ids: x, batch: 1, seq: x.length });
      const b = await plain.forward({ ids: x, batch: 1, seq: x.length });
      expect(maxDiff(a.logits, b.logits)).toBeLessThan(1e-5);
    });

    it("a prompt, then 20 single tokens: every step's logits within 1e-4 of the full forward", async () => {
      for (const seed of [1, 2, 3]) {
        const x = ids(9 + seed * 5 + 20, seed, cached.spec.vocabSize);
        const P0 = x.length - 20;
        const dec = cached.decoder!();
        const first = await dec.step({ ids: x.subarray(0, P0), batch: 1, seq: P0, logitRows: Int32Array.of(P0 - 1) });
        expect(maxDiff(first.logits, await fullRow(x, P0 - 1))).toBeLessThan(1e-4);
        for (let t = P0; t < x.length; t++) {
          const o = await dec.step({ ids: x.subarray(t, t + 1), batch: 1, seq: 1, logitRows: Int32Array.of(0) });
          expect(maxDiff(o.logits, await fullRow(x, t)), `seed ${seed} position ${t}`).toBeLessThan(1e-4);
        }
        expect(dec.length).toBe(x.length);
      }
    });

    it("several new tokens per step: each new row sees the cached keys and the new ones before it", async () => {
      const x = ids(30, 11, cached.spec.vocabSize);
      const full = await plain.forward({ ids: x, batch: 1, seq: 30 });
      const V = full.vocabSize;
      const dec = cached.decoder!();
      let at = 0;
      for (const n of [10, 4, 1, 7, 8]) {
        const o = await dec.step({ ids: x.subarray(at, at + n), batch: 1, seq: n });
        expect(maxDiff(o.logits, full.logits.subarray(at * V, (at + n) * V)), `rows ${at}…${at + n - 1}`).toBeLessThan(1e-4);
        at += n;
      }
    });

    it("a left-padded batch continues each row as that row alone; a row can leave the batch", async () => {
      const V = cached.spec.vocabSize;
      const a = ids(8 + 12, 21, V),
        b = ids(15 + 12, 22, V);
      const la = 8,
        lb = 15;
      const seq = lb; // row a has 7 padding columns
      const prompt = new Int32Array(2 * seq);
      const mask = new Uint8Array(2 * seq);
      prompt.set(a.subarray(0, la), seq - la);
      mask.fill(1, seq - la, seq);
      prompt.set(b.subarray(0, lb), seq);
      mask.fill(1, seq, 2 * seq);
      const dec: KvDecoder = cached.decoder!();
      const o0 = await dec.step({ ids: prompt, batch: 2, seq, attentionMask: mask, logitRows: Int32Array.of(seq - 1, seq - 1) });
      expect(maxDiff(o0.logits.subarray(0, V), await fullRow(a, la - 1))).toBeLessThan(1e-4);
      expect(maxDiff(o0.logits.subarray(V), await fullRow(b, lb - 1))).toBeLessThan(1e-4);
      for (let k = 0; k < 12; k++) {
        if (k === 6) {
          dec.retain([1]); // row a stops
          expect(dec.batch).toBe(1);
        }
        const rows = k < 6 ? [a[la + k], b[lb + k]] : [b[lb + k]];
        const o = await dec.step({ ids: Int32Array.from(rows), batch: rows.length, seq: 1 });
        if (k < 6) expect(maxDiff(o.logits.subarray(0, V), await fullRow(a, la + k)), `a +${k}`).toBeLessThan(1e-4);
        expect(maxDiff(o.logits.subarray((rows.length - 1) * V), await fullRow(b, lb + k)), `b +${k}`).toBeLessThan(1e-4);
      }
      expect(dec.length).toBe(seq + 12);
    });

    it("a step of another batch size is a SettingsError; the memory estimate counts the cache", async () => {
      const dec = cached.decoder!();
      await dec.step({ ids: Int32Array.of(5, 6, 7), batch: 1, seq: 3 });
      const e = await dec.step({ ids: Int32Array.of(5, 6), batch: 2, seq: 1 }).catch((x: unknown) => x);
      expect(e).toBeInstanceOf(SettingsError);
      const s = cached.spec;
      // keys and values of every layer, [batch 2, seq 100, kv heads, head dim] float32, KV_CACHE_COPIES times
      expect(cached.estimateMemory(2, 100).kvCache).toBe(KV_CACHE_COPIES * 2 * s.numLayers * 2 * 100 * s.numKvHeads * s.headDim * 4);
      expect(plain.estimateMemory(2, 100).kvCache).toBe(0);
    });
  });
}

describe("key/value-cached decoding under every attention layout (models/tiny-llama)", () => {
  // unrolled query chunks (a single-row step leaves chunks empty), a Loop over 16-row chunks (the quantum), fused attention
  const layouts: [string, Parameters<typeof createEngine>[1]][] = [
    ["3 unrolled chunks", { queryChunks: 3 }],
    ["auto chunks, small budget", { queryChunks: "auto", chunkBudgetBytes: 4096 }],
    ["fused attention", { fusedAttention: true }],
  ];
  for (const [name, options] of layouts) {
    it(`${name}: prompt, then single tokens and a 3-token step, within 1e-4 of the plain graph`, async () => {
      const dir = path.join(ROOT, "models", "tiny-llama");
      const cached = await createEngine(dir, { threads: 1, probes: {}, ...options });
      const plain = await createEngine(dir, { threads: 1, probes: {}, kvCache: false });
      try {
        expect(cached.kvCache).toBe(true);
        const x = ids(40, 5, cached.spec.vocabSize);
        const full = await plain.forward({ ids: x, batch: 1, seq: 40 });
        const V = full.vocabSize;
        const dec = cached.decoder!();
        let at = 0;
        for (const n of [30, 1, 1, 3, 1, 1, 1, 1, 1]) {
          const o = await dec.step({ ids: x.subarray(at, at + n), batch: 1, seq: n });
          expect(maxDiff(o.logits, full.logits.subarray(at * V, (at + n) * V)), `${name}: rows ${at}…${at + n - 1}`).toBeLessThan(1e-4);
          at += n;
        }
      } finally {
        await cached.dispose();
        await plain.dispose();
      }
    });
  }
});
