/**
 * Quantised GGUF checkpoints stay quantised by default: the CLI and the library run Q4_0 / Q4_1 /
 * Q8_0 layers as MatMulNBits unless `--quantized-weights dequantize` / `quantizedWeights:
 * "dequantize"` says otherwise, and the decoded blocks go through the weight cache (decoded once,
 * then read back by the next engine). Fixture: parity-llama-q4.gguf (Q4_1 attention, Q4_0 MLP,
 * Q8_0 head; written by the gguf package, make_gguf_fixtures.py).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { weightCacheKey } from "../../src/graph/build/weight-cache.js";
import { buildModelGraph } from "../../src/graph/model.js";
import { chooseQuantizedWeights, createEngine } from "../../src/runtime/engine.js";

const FIX = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "gguf");
const Q4 = path.join(FIX, "parity-llama-q4.gguf");
const IDS = [3, 17, 42, 99, 5, 64];

let tmp = "";
let savedCacheEnv: string | undefined;
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-qdefault-"));
  savedCacheEnv = process.env.FLOATSCOPE_CACHE_DIR;
  process.env.FLOATSCOPE_CACHE_DIR = path.join(tmp, "cache");
});
afterAll(() => {
  if (savedCacheEnv === undefined) delete process.env.FLOATSCOPE_CACHE_DIR;
  else process.env.FLOATSCOPE_CACHE_DIR = savedCacheEnv;
  fs.rmSync(tmp, { recursive: true, force: true });
});

async function cli(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  const { main } = await import("../../src/cli/main.js");
  let out = "",
    err = "";
  const code = await main(argv, { out: (t: string) => (out += t + "\n"), err: (t: string) => (err += t + "\n") });
  return { code, out, err };
}

async function engineLogits(mode: "matmulnbits" | "dequantize" | undefined, weightCache?: string | false): Promise<Float32Array> {
  const engine = await createEngine(openCheckpoint(Q4), {
    probes: {},
    threads: 1,
    scanWeights: false,
    logitRows: false,
    weightCache,
    ...(mode ? { quantizedWeights: mode } : {}),
  });
  try {
    return Float32Array.from((await engine.forward({ ids: Int32Array.from(IDS), batch: 1, seq: IDS.length })).logits);
  } finally {
    await engine.dispose();
  }
}

async function cliLogits(...extra: string[]): Promise<Float32Array> {
  const out = path.join(tmp, `logits-${extra.join("-") || "default"}.safetensors`);
  const r = await cli("forward", Q4, "--ids", IDS.join(","), "--probes", "none", "--out", out, "--logits", "--threads", "1", ...extra);
  expect(r.code, r.err).toBe(0);
  const t = readSafetensorsHeader(out).tensors.find((x) => x.name === "logits")!;
  return readTensorF32(t);
}

const maxDiff = (a: Float32Array, b: Float32Array) => a.reduce((m, v, i) => Math.max(m, Math.abs(v - b[i])), 0);

describe("quantised GGUF layers: auto by default, a flag chooses", () => {
  it("auto keeps them quantised from 2 GiB of float32 weights (where MatMulNBits measured as fast), expands smaller ones", () => {
    expect(chooseQuantizedWeights("auto", 2 * 2 ** 30)).toBe("matmulnbits");
    expect(chooseQuantizedWeights("auto", 2 * 2 ** 30 - 1)).toBe("dequantize");
    // an LLaDA-8B-shaped checkpoint: ≈ 8.0e9 parameters, 32 GB as float32
    expect(chooseQuantizedWeights("auto", 8.0e9 * 4)).toBe("matmulnbits");
    expect(chooseQuantizedWeights("dequantize", 8.0e9 * 4)).toBe("dequantize");
    expect(chooseQuantizedWeights("matmulnbits", 1000)).toBe("matmulnbits");
  });

  it("library: the graph builder's default has the MatMulNBits nodes; the engine's auto expands this tiny model", async () => {
    const ck = openCheckpoint(Q4);
    const g = buildModelGraph(resolveModelSpec(ck), ck.tensors, { probes: {} }).graph;
    expect(g.node.filter((n) => n.opType === "MatMulNBits").length).toBe(13);
    const [def, nbits, deq] = [await engineLogits(undefined), await engineLogits("matmulnbits"), await engineLogits("dequantize")];
    expect(maxDiff(def, deq)).toBe(0);
    // Q4_1's float zero points round differently from the expanded q·d + m: the two graphs differ, a little
    expect(maxDiff(nbits, deq)).toBeGreaterThan(0);
    expect(maxDiff(nbits, deq)).toBeLessThan(1e-3);
  });

  it("CLI forward: --quantized-weights picks the graph (auto = expanded for this tiny model)", async () => {
    const [nbits, deq] = [await engineLogits("matmulnbits"), await engineLogits("dequantize")];
    expect(maxDiff(await cliLogits(), deq)).toBe(0);
    expect(maxDiff(await cliLogits("--quantized-weights", "matmulnbits"), nbits)).toBe(0);
    expect(maxDiff(await cliLogits("--quantized-weights", "dequantize"), deq)).toBe(0);
  });

  it("CLI: an unknown --quantized-weights value is a usage error naming the choices", async () => {
    const r = await cli("forward", Q4, "--ids", "1,2", "--quantized-weights", "int3");
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/--quantized-weights/);
    expect(r.err).toMatch(/auto \| matmulnbits \| dequantize/);
    expect(r.err).not.toMatch(/\n\s+at /);
  });
});

describe("the weight cache", () => {
  it("decodes once into <key>.bin / <key>.json, and the next build reads it back with the same logits", async () => {
    const dir = path.join(tmp, "wc");
    const ck = openCheckpoint(Q4);
    const spec = resolveModelSpec(ck);
    const first = buildModelGraph(spec, ck.tensors, { probes: {}, weightCacheDir: dir });
    expect(first.weightCache).toBe("written");
    expect(first.externalBuffers).toEqual([]);
    const files = fs.readdirSync(dir).sort();
    expect(files.filter((f) => f.endsWith(".tmp"))).toEqual([]);
    expect(files.map((f) => path.extname(f))).toEqual([".bin", ".json"]);
    const second = buildModelGraph(spec, ck.tensors, { probes: {}, weightCacheDir: dir });
    expect(second.weightCache).toBe("hit");
    expect(Buffer.from(second.bytes).equals(Buffer.from(first.bytes))).toBe(true);
    const [fromMemory, viaCache, cachedAgain] = [
      await engineLogits(undefined, false),
      await engineLogits(undefined, dir),
      await engineLogits(undefined, dir),
    ];
    expect(maxDiff(viaCache, fromMemory)).toBe(0);
    expect(maxDiff(cachedAgain, fromMemory)).toBe(0);
    // the dequantised graph is another entry, not a reuse of the quantised one
    buildModelGraph(spec, ck.tensors, { probes: {}, weightCacheDir: dir, quantizedWeights: "dequantize" });
    expect(fs.readdirSync(dir).filter((f) => f.endsWith(".bin")).length).toBe(2);
  });

  it("a changed checkpoint file gets a new key", () => {
    const copy = path.join(tmp, "copy.gguf");
    fs.copyFileSync(Q4, copy);
    const k1 = weightCacheKey([copy], { quantizedWeights: "matmulnbits" });
    expect(weightCacheKey([copy], { quantizedWeights: "matmulnbits" })).toBe(k1);
    expect(weightCacheKey([copy], { quantizedWeights: "dequantize" })).not.toBe(k1);
    const later = new Date(fs.statSync(copy).mtimeMs + 5000);
    fs.utimesSync(copy, later, later);
    expect(weightCacheKey([copy], { quantizedWeights: "matmulnbits" })).not.toBe(k1);
  });
});
