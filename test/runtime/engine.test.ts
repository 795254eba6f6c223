/**
 * The session layer: loading from a checkpoint folder (incl. HF-cache symlinks and shards in
 * different folders), device fallback, f16 compute, low-memory mode, input validation and the
 * memory budget.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader } from "../../src/checkpoint/safetensors.js";
import type { TensorInfo } from "../../src/checkpoint/types.js";
import { buildModelGraph } from "../../src/graph/model.js";
import { referenceForward } from "../../src/reference/forward.js";
import { createEngine } from "../../src/runtime/engine.js";
import { estimateMemory, PROBE_FACTOR, RUNTIME_BYTES } from "../../src/runtime/memory.js";
import { createSession, cudaProviderInstalled } from "../../src/runtime/session.js";
import { BudgetError, SettingsError } from "../../src/util/errors.js";
import { probeName } from "../../src/util/probes.js";
import * as ort from "onnxruntime-node";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint, type TinyEngineCheckpoint } from "../support/engine-tiny.js";

const cleanups: (() => void)[] = [];
afterAll(() => cleanups.forEach((c) => c()));
function tiny(o: Parameters<typeof makeTinyEngineCheckpoint>[0] = {}): TinyEngineCheckpoint {
  const ck = makeTinyEngineCheckpoint(o);
  cleanups.push(ck.cleanup);
  return ck;
}
function tmp(): string {
  const d = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-rt-"));
  cleanups.push(() => fs.rmSync(d, { recursive: true, force: true }));
  return d;
}
const ids = Int32Array.from([3, 1, 4, 1, 5, 9, 2, 6]);

describe("createEngine", () => {
  it("opens a checkpoint folder (config.json → family adapter) and matches the reference", async () => {
    const ck = tiny({ kvHeads: 2, seed: 41 });
    const engine = await createEngine(ck.dir, { threads: 1 });
    expect(engine.device).toBe("cpu");
    expect(engine.spec.numKvHeads).toBe(2);
    expect(engine.probes).toEqual({ received: true });
    const out = await engine.forward({ ids, batch: 1, seq: 8 });
    expectClose(out.logits, referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 8 }).logits, 2e-4, "logits");
    expect([...out.probes.keys()]).toEqual([probeName.received(0), probeName.received(1)]);
    await engine.dispose();
  });

  it("follows HF-cache symlinks: snapshots/<rev>/model.safetensors → blobs/<sha>", async () => {
    const ck = tiny({ seed: 42 });
    const root = tmp();
    fs.mkdirSync(path.join(root, "blobs"));
    fs.mkdirSync(path.join(root, "snapshots", "rev"), { recursive: true });
    fs.copyFileSync(path.join(ck.dir, "model.safetensors"), path.join(root, "blobs", "abc123"));
    fs.symlinkSync("../../blobs/abc123", path.join(root, "snapshots", "rev", "model.safetensors"));
    fs.copyFileSync(path.join(ck.dir, "config.json"), path.join(root, "snapshots", "rev", "config.json"));
    const engine = await createEngine(path.join(root, "snapshots", "rev"), { threads: 1 });
    const out = await engine.forward({ ids, batch: 1, seq: 8 });
    expectClose(out.logits, referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 8 }).logits, 2e-4, "logits");
    await engine.dispose();
  });

  it("resolves symlinked weight paths in a hand-made tensor index", async () => {
    const ck = tiny({ seed: 49 });
    const links = tmp();
    fs.symlinkSync(path.join(ck.dir, "model.safetensors"), path.join(links, "link.safetensors"));
    const tensors = new Map([...ck.tensors].map(([n, t]) => [n, { ...t, file: path.join(links, "link.safetensors") }]));
    const engine = await createEngine({ spec: ck.spec, tensors }, { threads: 1 });
    const out = await engine.forward({ ids, batch: 1, seq: 8 });
    expectClose(out.logits, referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 8 }).logits, 2e-4, "logits");
    await engine.dispose();
  });

  it("handles shards that live in different real folders (hard-linked into one)", async () => {
    const ck = tiny({ shards: 2, seed: 43 });
    const a = tmp(),
      b = tmp();
    const tensors = new Map<string, TensorInfo>();
    for (const [i, dir] of [
      [1, a],
      [2, b],
    ] as const) {
      const name = `model-0000${i}-of-00002.safetensors`;
      fs.copyFileSync(path.join(ck.dir, name), path.join(dir, name));
      for (const t of readSafetensorsHeader(path.join(dir, name)).tensors) tensors.set(t.name, t);
    }
    const engine = await createEngine({ spec: ck.spec, tensors }, { threads: 1, lowMemory: true });
    const out = await engine.forward({ ids, batch: 1, seq: 8 });
    expectClose(out.logits, referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 8 }).logits, 2e-4, "logits");
    await engine.dispose();
  });

  it.skipIf(cudaProviderInstalled())("asks for CUDA, warns how to install it, and falls back to CPU", async () => {
    const ck = tiny({ seed: 44 });
    const warnings: string[] = [];
    const engine = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { device: "cuda", warn: (m) => warnings.push(m) });
    expect(engine.device).toBe("cpu");
    expect(warnings.join("\n")).toMatch(/CUDA execution provider is not installed \(install it with `bash scripts\/setup-cuda\.sh`\)/);
    expect((await engine.forward({ ids, batch: 1, seq: 8 })).logits.length).toBe(8 * ck.spec.vocabSize);
    await engine.dispose();
    // "auto" picks CPU silently when the provider is not installed
    const quiet: string[] = [];
    const auto = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { device: "auto", warn: (m) => quiet.push(m) });
    expect(auto.device).toBe("cpu");
    expect(quiet).toEqual([]);
    await auto.dispose();
  });

  it("refuses f16 compute on CPU, and rebuilds in f32 when CUDA falls back", async () => {
    const ck = tiny({ seed: 45 });
    await expect(createEngine({ spec: ck.spec, tensors: ck.tensors }, { computeDType: "f16" })).rejects.toThrow(SettingsError);
    await expect(createEngine({ spec: ck.spec, tensors: ck.tensors }, { device: "gpu" as "cuda" })).rejects.toThrow(/device/);
    if (cudaProviderInstalled()) return;
    const warnings: string[] = [];
    const e = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      { device: "cuda", computeDType: "f16", warn: (m) => warnings.push(m) },
    );
    expect(e.computeDType).toBe("f32");
    expect(warnings.some((w) => /f16 compute needs CUDA/.test(w))).toBe(true);
    await e.dispose();
  });

  it("f16 compute graph (norms and softmax in f32) stays close to the f64 reference", async () => {
    // Checked on CPU, where ORT runs half ops through inserted casts; on CUDA the same graph runs natively.
    const ck = tiny({ dtype: "F16", seed: 46 });
    const built = buildModelGraph(ck.spec, ck.tensors, { computeDType: "f16", probes: { pattern: { layers: [1] } } });
    const { session } = await createSession(built.bytes, built.externalFiles, { threads: 1 });
    const pos = BigInt64Array.from({ length: 8 }, (_, i) => BigInt(i));
    const res = await session.run({
      input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, BigInt), [1, 8]),
      position_ids: new ort.Tensor("int64", pos, [1, 8]),
      attention_mask: new ort.Tensor("bool", new Uint8Array(8).fill(1), [1, 8]),
    });
    const ref = referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 8 });
    expect(res.logits.type).toBe("float32");
    expectClose(res.logits.data as Float32Array, ref.logits, 0.05, "f16 logits");
    expectClose(res[probeName.pattern(1)].data as Float32Array, ref.attention[1], 0.01, "f16 pattern");
    await session.release();
  });
});

describe("forward input validation", () => {
  it("names the bad field", async () => {
    const ck = tiny({ seed: 47 });
    const engine = await createEngine({ spec: ck.spec, tensors: ck.tensors }, { probes: { regionSum: { regions: 2 } } });
    const V = ck.spec.vocabSize;
    await expect(engine.forward({ ids, batch: 1, seq: 7 })).rejects.toThrow(/ids[\s\S]*8 ids|7 ids/);
    await expect(engine.forward({ ids: Int32Array.from([1, V]), batch: 1, seq: 2, regionOneHot: new Float32Array(4) })).rejects.toThrow(
      /ids\[1\][\s\S]*\[0, 60\]/,
    );
    await expect(engine.forward({ ids, batch: 1, seq: 8 })).rejects.toThrow(/regionOneHot/);
    await expect(
      engine.forward({ ids, batch: 1, seq: 8, regionOneHot: new Float32Array(16), attentionMask: new Uint8Array(3) }),
    ).rejects.toThrow(/attentionMask/);
    await engine.dispose();
  });
});

describe("memory budget", () => {
  it("estimates the attention term as 3 f32 [batch, head, query, key] tensors and probes by size (ORT buffer + JS copy)", () => {
    const ck = tiny({ layers: 4 });
    const s = ck.spec;
    const est = estimateMemory(s, { batch: 2, seq: 100, probes: { received: true, pattern: { layers: [0, 1, 2, 3] } } });
    expect(est.attention).toBe(3 * 4 * 2 * s.numHeads * 100 * 100);
    expect(est.probeBytes.get(probeName.pattern(1))).toBe(4 * 2 * s.numHeads * 100 * 100);
    expect(est.probeBytes.get(probeName.received(0))).toBe(4 * 2 * 100);
    expect(est.probes).toBe(PROBE_FACTOR * [...est.probeBytes.values()].reduce((a, b) => a + b, 0));
    expect(est.arena).toBe(0.5 * (est.weights + est.attention + est.activations + est.logits));
    expect(est.total).toBe(est.weights + est.attention + est.activations + est.logits + est.probes + est.arena + RUNTIME_BYTES);
    expect(est.dominant).toBe("blocks.*.attn.pattern");
    // the quadratic terms take over as the sequence grows; query chunks divide the attention term
    expect(estimateMemory(s, { batch: 1, seq: 4000 }).dominant).toBe("attention");
    expect(estimateMemory(s, { batch: 2, seq: 100, queryChunks: 4 }).attention).toBe(3 * 4 * 2 * s.numHeads * 25 * 100);
  });

  it("refuses a forward above the budget, naming the dominant probe", async () => {
    const ck = tiny({ seed: 48, layers: 4 });
    const engine = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      {
        probes: { received: true, pattern: { layers: [0, 1, 2, 3] } },
        memoryBudgetBytes: RUNTIME_BYTES + 1_500_000,
      },
    );
    const T = 120;
    const err = await engine.forward({ ids: new Int32Array(T), batch: 1, seq: T }).catch((e) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect(err.message).toMatch(/blocks\.\*\.attn\.pattern/);
    expect(err.message).toMatch(/at most 97\.4 MiB/);
    // a short sequence fits
    expect((await engine.forward({ ids, batch: 1, seq: 8 })).probes.size).toBe(8);
    await engine.dispose();
  });

  it("suggests query chunks when the attention term is what does not fit, and chunking then fits", async () => {
    const ck = tiny({ seed: 50, layers: 1, heads: 8, hidden: 32 });
    const T = 600;
    const spec = { ...ck.spec, maxPositionEmbeddings: 1024 }; // T is past the fixture's 512 positions; the budget is what is tested
    const budget = RUNTIME_BYTES + 40e6;
    const engine = await createEngine(
      { spec, tensors: ck.tensors },
      { probes: { received: true }, memoryBudgetBytes: budget, threads: 1, queryChunks: 1 },
    );
    const err = await engine.forward({ ids: new Int32Array(T), batch: 1, seq: T }).catch((e) => e);
    expect(err).toBeInstanceOf(BudgetError);
    expect(err.message).toMatch(/field: attention/);
    const m = /create the engine with (\d+)× more queryChunks/.exec(err.message);
    expect(m).not.toBeNull();
    await engine.dispose();
    const chunked = await createEngine(
      { spec, tensors: ck.tensors },
      { probes: { received: true }, memoryBudgetBytes: budget, threads: 1, queryChunks: Number(m![1]) },
    );
    const out = await chunked.forward({ ids: new Int32Array(T), batch: 1, seq: T });
    expect(out.probes.get(probeName.received(0))!.dims).toEqual([1, T]);
    await chunked.dispose();
  });
});
