/**
 * Attention interventions in the graph (src/graph/interventions.ts) against an independent
 * plain-JS masked softmax (float64, written here from the rules' definition): for every layer the
 * engine's softmax output equals softmax(q·k/√d + bias) over the keys the rules leave, computed
 * from that layer's own q/k probes. The JS softmax is itself checked on a matrix worked by hand.
 * Also: neutral inputs give bit-identical outputs to a graph built without interventions, and a
 * causal model's mask is never loosened, whatever the policy (seeded random policies, with large
 * positive biases on future keys).
 */
import { afterAll, describe, expect, it } from "vitest";
import { createEngine, type OnnxEngine } from "../../src/runtime/engine.js";
import { estimateMemory } from "../../src/runtime/memory.js";
import type { AttentionIntervention } from "../../src/runtime/types.js";
import { probeName, type ProbeRequest } from "../../src/util/probes.js";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint, seeded, type TinyEngineCheckpoint, type TinyEngineOptions } from "../support/engine-tiny.js";

const made: TinyEngineCheckpoint[] = [];
const engines: OnnxEngine[] = [];
afterAll(async () => {
  for (const e of engines) await e.dispose();
  made.forEach((m) => m.cleanup());
});

/**
 * softmax over the keys k with allowed(k), of scores[k] + bias[k]; float64. A row with no allowed
 * key is not produced by the rules (a query keeps its own key) and is reported as NaN here.
 */
function maskedSoftmax(scores: number[], bias: number[], allowed: boolean[]): number[] {
  const s = scores.map((x, k) => x + bias[k]);
  const m = Math.max(...s.filter((_, k) => allowed[k]));
  const e = s.map((x, k) => (allowed[k] ? Math.exp(x - m) : 0));
  const z = e.reduce((a, b) => a + b, 0);
  return e.map((x) => x / z);
}

describe("the reference masked softmax", () => {
  it("matches a hand-computed row", () => {
    // scores [1, 2, 3], key 2 hidden: e¹/(e¹+e²) = 1/(1+e) = 0.2689414214, e/(1+e) = 0.7310585786
    const p = maskedSoftmax([1, 2, 3], [0, 0, 0], [true, true, false]);
    expectClose(p, [0.2689414213699951, 0.7310585786300049, 0], 1e-15, "masked row");
    // bias [0, ln 2, 0] on scores [0, 0, 0]: weights 1 : 2 : 1
    expectClose(maskedSoftmax([0, 0, 0], [0, Math.log(2), 0], [true, true, true]), [0.25, 0.5, 0.25], 1e-15, "biased row");
  });
});

interface Case {
  batch: number;
  seq: number;
  pads: number[];
  iv: AttentionIntervention;
}

function randomCase(spec: { numLayers: number; numHeads: number }, seed: number, batch: number, seq: number, strength = 3): Case {
  const r = seeded(seed);
  const { numLayers: L, numHeads: H } = spec;
  const keyHidden = Uint8Array.from({ length: batch * L * H * seq }, () => (r() < 0.3 ? 1 : 0));
  const keyBias = Float32Array.from({ length: batch * L * H * seq }, () => (r() < 0.5 ? 0 : (r() * 2 - 1) * strength));
  const selfOnly = Uint8Array.from({ length: batch * seq }, () => (r() < 0.2 ? 1 : 0));
  const pads = Array.from({ length: batch }, (_, b) => (b === 0 ? 0 : Math.floor(r() * 3)));
  return { batch, seq, pads, iv: { keyHidden, keyBias, selfOnly } };
}

function attentionMaskOf(c: Case): Uint8Array {
  const m = new Uint8Array(c.batch * c.seq);
  for (let b = 0; b < c.batch; b++) m.fill(1, b * c.seq + c.pads[b], (b + 1) * c.seq);
  return m;
}

async function engineFor(opts: TinyEngineOptions, extra: { queryChunks?: number; interventions?: boolean } = {}): Promise<OnnxEngine> {
  const ck = makeTinyEngineCheckpoint(opts);
  made.push(ck);
  const L = ck.spec.numLayers;
  const layers = Array.from({ length: L }, (_, l) => l);
  const probes: ProbeRequest = { received: true, pattern: { layers }, qk: { layers } };
  const e = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes, threads: 1, interventions: true, ...extra });
  engines.push(e);
  return e;
}

/** Every real query row of every layer and head against maskedSoftmax of its own q/k. */
async function checkAgainstReference(engine: OnnxEngine, c: Case): Promise<void> {
  const { spec } = engine;
  const { batch: B, seq: T } = c;
  const H = spec.numHeads,
    KV = spec.numKvHeads,
    G = H / KV,
    d = spec.headDim,
    L = spec.numLayers;
  const attentionMask = attentionMaskOf(c);
  const ids = Int32Array.from({ length: B * T }, (_, i) => (i * 7 + 3) % spec.vocabSize);
  const out = await engine.forward({ ids, batch: B, seq: T, attentionMask, intervention: c.iv });
  const hidden = c.iv.keyHidden!,
    bias = c.iv.keyBias!,
    selfOnly = c.iv.selfOnly!;
  for (let l = 0; l < L; l++) {
    const P = out.probes.get(probeName.pattern(l))!.data;
    const q = out.probes.get(probeName.qRot(l))!.data;
    const k = out.probes.get(probeName.kRot(l))!.data;
    const got: number[] = [],
      want: number[] = [];
    for (let b = 0; b < B; b++) {
      for (let h = 0; h < H; h++) {
        const kv = Math.floor(h / G);
        for (let qi = c.pads[b]; qi < T; qi++) {
          const scores: number[] = [],
            bs: number[] = [],
            allowed: boolean[] = [];
          for (let ki = 0; ki < T; ki++) {
            let s = 0;
            for (let j = 0; j < d; j++) s += q[((b * H + h) * T + qi) * d + j] * k[((b * KV + kv) * T + ki) * d + j];
            scores.push(s / Math.sqrt(d));
            const at = ((b * L + l) * H + h) * T + ki;
            bs.push(bias[at]);
            const real = ki >= c.pads[b];
            const causalOk = !spec.causal || ki <= qi;
            const notHidden = !hidden[at] || ki === qi;
            const rowOk = !selfOnly[b * T + qi] || ki === qi;
            allowed.push(real && causalOk && notHidden && rowOk);
          }
          want.push(...maskedSoftmax(scores, bs, allowed));
          for (let ki = 0; ki < T; ki++) got.push(P[((b * H + h) * T + qi) * T + ki]);
        }
      }
    }
    expectClose(got, want, 2e-6, `layer ${l}`);
  }
}

describe("attention interventions vs a plain-JS masked softmax", () => {
  it("bidirectional (LLaDA-like), padded batch of 2", async () => {
    const e = await engineFor({ causal: false, family: "llada", seed: 11 });
    await checkAgainstReference(e, randomCase(e.spec, 1, 2, 7));
  });
  it("causal, GQA 4:2, qkv bias", async () => {
    const e = await engineFor({ causal: true, heads: 4, kvHeads: 2, qkvBias: true, seed: 12 });
    await checkAgainstReference(e, randomCase(e.spec, 2, 2, 6));
  });
  it("query-chunked attention (3 chunks), bidirectional GQA", async () => {
    const e = await engineFor({ causal: false, heads: 4, kvHeads: 2, family: "dream", logitShift: 1, seed: 13 }, { queryChunks: 3 });
    await checkAgainstReference(e, randomCase(e.spec, 3, 2, 7));
  });
  it("a hidden key is hidden only from the layer and head named", async () => {
    const e = await engineFor({ causal: false, family: "llada", seed: 14 });
    const { numLayers: L, numHeads: H } = e.spec;
    const T = 5;
    const keyHidden = new Uint8Array(L * H * T);
    keyHidden[(1 * H + 2) * T + 0] = 1; // layer 1, head 2, key 0
    const c: Case = { batch: 1, seq: T, pads: [0], iv: { keyHidden, keyBias: new Float32Array(L * H * T), selfOnly: new Uint8Array(T) } };
    await checkAgainstReference(e, c);
    const out = await e.forward({ ids: Int32Array.from([1, 2, 3, 4, 5]), batch: 1, seq: T, intervention: c.iv });
    const P1 = out.probes.get(probeName.pattern(1))!.data;
    for (let qi = 1; qi < T; qi++) expect(P1[((0 * H + 2) * T + qi) * T + 0]).toBe(0);
    expect(P1[((0 * H + 2) * T + 0) * T + 0]).toBeGreaterThan(0); // its own row keeps it
    expect(P1[((0 * H + 1) * T + 1) * T + 0]).toBeGreaterThan(0); // another head still sees it
  });
});

describe("neutral interventions change nothing", () => {
  it("outputs are bit-identical to the graph built without intervention inputs", async () => {
    for (const causal of [true, false]) {
      const ck = makeTinyEngineCheckpoint({ causal, seed: 21, heads: 4, kvHeads: 2 });
      made.push(ck);
      const probes: ProbeRequest = { received: true, self: true, pattern: { layers: [0, 1] } };
      const plain = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes, threads: 1 });
      const withIv = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes, threads: 1, interventions: true });
      engines.push(plain, withIv);
      const ids = Int32Array.from({ length: 12 }, (_, i) => (i * 5 + 1) % ck.spec.vocabSize);
      const attentionMask = Uint8Array.from([1, 1, 1, 1, 1, 1, 0, 0, 1, 1, 1, 1]);
      const a = await plain.forward({ ids, batch: 2, seq: 6, attentionMask });
      const b = await withIv.forward({ ids, batch: 2, seq: 6, attentionMask }); // nothing given: neutral
      const c = await withIv.forward({ ids, batch: 2, seq: 6, attentionMask, intervention: { keyBias: new Float32Array(2 * 2 * 4 * 6) } });
      for (const o of [b, c]) {
        expect(Buffer.from(o.logits.buffer).equals(Buffer.from(a.logits.buffer))).toBe(true);
        for (const [name, p] of a.probes)
          expect(Buffer.from(o.probes.get(name)!.data.buffer).equals(Buffer.from(p.data.buffer)), name).toBe(true);
      }
    }
  });
  it("an engine without intervention inputs refuses an intervention (typed error)", async () => {
    const ck = makeTinyEngineCheckpoint({ seed: 22 });
    made.push(ck);
    const e = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { threads: 1 });
    engines.push(e);
    await expect(
      e.forward({ ids: Int32Array.from([1, 2]), batch: 1, seq: 2, intervention: { selfOnly: Uint8Array.from([1, 0]) } }),
    ).rejects.toMatchObject({ name: "SettingsError" });
  });
  it("bad sizes and non-finite biases are refused", async () => {
    const e = await engineFor({ seed: 23 });
    const n = e.spec.numLayers * e.spec.numHeads * 3;
    const ids = Int32Array.from([1, 2, 3]);
    await expect(e.forward({ ids, batch: 1, seq: 3, intervention: { keyHidden: new Uint8Array(n - 1) } })).rejects.toThrow(/keyHidden/);
    const bias = new Float32Array(n);
    bias[4] = Infinity;
    await expect(e.forward({ ids, batch: 1, seq: 3, intervention: { keyBias: bias } })).rejects.toThrow(/keyBias\[4\]/);
  });
});

describe("a causal model's mask is never loosened", () => {
  it("no real query row gives weight to a later key or a padding key, under 40 random policies", async () => {
    const e = await engineFor({ causal: true, heads: 4, kvHeads: 2, seed: 31 }, { queryChunks: 2 });
    const { numHeads: H, numLayers: L } = e.spec;
    for (let trial = 0; trial < 40; trial++) {
      const T = 3 + (trial % 6);
      // strong positive biases (up to ±1e4) wherever, including on every future key
      const c = randomCase(e.spec, 100 + trial, 2, T, 1e4);
      const ids = Int32Array.from({ length: 2 * T }, (_, i) => (i * 3 + trial) % e.spec.vocabSize);
      const out = await e.forward({ ids, batch: 2, seq: T, attentionMask: attentionMaskOf(c), intervention: c.iv });
      for (let l = 0; l < L; l++) {
        const P = out.probes.get(probeName.pattern(l))!.data;
        for (let b = 0; b < 2; b++)
          for (let h = 0; h < H; h++)
            for (let qi = c.pads[b]; qi < T; qi++) {
              let total = 0;
              for (let ki = 0; ki < T; ki++) {
                const p = P[((b * H + h) * T + qi) * T + ki];
                total += p;
                if (ki > qi || ki < c.pads[b]) expect(p, `trial ${trial} layer ${l} b ${b} h ${h} q ${qi} k ${ki}`).toBe(0);
              }
              expect(Math.abs(total - 1)).toBeLessThan(1e-5);
            }
      }
    }
  });
});

describe("memory estimate", () => {
  it("counts the masks: B·T² booleans once, and two B·H·rows·T booleans per query chunk", () => {
    const { spec } = makeTinyEngineCheckpoint({ seed: 41 });
    const B = 2,
      T = 1000,
      H = spec.numHeads;
    for (const chunks of [1, 8]) {
      const rows = Math.ceil(T / chunks);
      const a = estimateMemory(spec, { batch: B, seq: T, queryChunks: chunks });
      const b = estimateMemory(spec, { batch: B, seq: T, queryChunks: chunks, interventions: true });
      expect(b.attention - a.attention).toBe(B * T * T + 2 * B * H * rows * T);
    }
  });
});
