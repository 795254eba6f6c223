/**
 * The session cache (src/runtime/session-cache.ts): the first engine on a graph saves onnxruntime's
 * optimized model with its prepacked weights, the next one loads it ("hit", reported by the engine,
 * not inferred from timing), and the logits are bit-identical with and without the cache. A broken
 * entry (truncated data, a damaged model file, a missing manifest) is rebuilt with one warning line
 * and no stack trace; a changed setting or checkpoint file misses.
 *
 * Models: models/tiny-llada (safetensors f32, bidirectional: Gemm weights, attention Loop) and the
 * Q4 GGUF fixture (Q4_0 / Q4_1 layers as MatMulNBits, where the MLP row chunks are a Loop too); a
 * small chunk budget makes a 150-token run take several chunks of both Loops, the last one padded.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { createEngine, type EngineOptions } from "../../src/runtime/engine.js";
import { evict } from "../../src/runtime/session-cache.js";

const ROOT = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const TINY = path.join(ROOT, "models", "tiny-llada");
const Q4 = path.join(ROOT, "test", "fixtures", "gguf", "parity-llama-q4.gguf");
const T = 150;

let tmp = "";
beforeAll(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-session-cache-"));
});
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

interface Opened {
  logits: Float32Array;
  received: Float32Array;
  state: string;
  dir?: string;
  bytes?: number;
  warnings: string[];
}

async function open(source: string, weightCache: string, extra: Partial<EngineOptions> = {}): Promise<Opened> {
  const warnings: string[] = [];
  const engine = await createEngine(openCheckpoint(source), {
    probes: { received: true },
    threads: 1,
    queryChunks: "auto",
    chunkBudgetBytes: 64 * 960, // Q4 fixture (ffn 80): 64-row MLP chunks; both models: 16-row attention chunks at T 150
    logitRows: false,
    weightCache,
    warn: (m) => warnings.push(m),
    ...extra,
  });
  try {
    const vocab = engine.spec.vocabSize;
    const ids = Int32Array.from({ length: T }, (_, i) => (i * 37 + 11) % Math.min(vocab, 100));
    const out = await engine.forward({ ids, batch: 1, seq: T });
    const received = ([...out.probes.values()][0]?.data ?? new Float32Array(0)) as Float32Array; // the received probe, when on
    const { state, dir, bytes } = engine.sessionCache;
    return { logits: Float32Array.from(out.logits), received: Float32Array.from(received), state, dir, bytes, warnings };
  } finally {
    await engine.dispose();
  }
}

const sameBits = (a: Float32Array, b: Float32Array) =>
  a.length === b.length && Buffer.from(a.buffer, a.byteOffset, a.byteLength).equals(Buffer.from(b.buffer, b.byteOffset, b.byteLength));

describe.each([
  { name: "tiny-llada (f32 Gemm)", source: TINY, extra: { sessionCache: true } as Partial<EngineOptions> },
  { name: "Q4 GGUF (MatMulNBits)", source: Q4, extra: { quantizedWeights: "matmulnbits", sessionCache: true } as Partial<EngineOptions> },
])("session cache: $name", ({ source, extra }) => {
  let cache = "";
  let plain: Opened;
  let first: Opened;
  beforeAll(async () => {
    cache = fs.mkdtempSync(path.join(tmp, "cache-"));
    plain = await open(source, cache, { ...extra, sessionCache: false });
    first = await open(source, cache, extra);
  });

  it("the first open writes an entry, the second loads it, and the numbers are bit-identical to a session built without the cache", async () => {
    expect(plain.state).toBe("off");
    expect(first.state).toBe("written");
    expect(first.bytes).toBeGreaterThan(0);
    expect(fs.existsSync(path.join(first.dir!, "model.onnx"))).toBe(true);
    const second = await open(source, cache, extra);
    expect(second.state).toBe("hit");
    expect(second.dir).toBe(first.dir);
    expect(second.bytes).toBe(first.bytes);
    expect(second.warnings).toEqual([]);
    expect(plain.logits.some((v) => v !== 0)).toBe(true);
    expect(sameBits(first.logits, plain.logits)).toBe(true);
    expect(sameBits(second.logits, plain.logits)).toBe(true);
    expect(plain.received.length).toBeGreaterThan(0);
    expect(sameBits(second.received, plain.received)).toBe(true);
  });

  it.each([
    ["the data file truncated", (dir: string) => fs.truncateSync(path.join(dir, "model.data"), 100)],
    [
      "the model file damaged (same size)",
      (dir: string) => {
        const f = path.join(dir, "model.onnx");
        const b = fs.readFileSync(f);
        b.fill(0x5a, 0, Math.min(64, b.length));
        fs.writeFileSync(f, b);
      },
    ],
    ["the manifest missing (a half-written entry)", (dir: string) => fs.rmSync(path.join(dir, "entry.json"))],
  ])("an entry with %s is rebuilt with one warning line, and the numbers stay the same", async (_what, damage) => {
    damage(first.dir!);
    const r = await open(source, cache, extra);
    expect(r.state).toBe("rebuilt");
    expect(r.warnings).toHaveLength(1);
    expect(r.warnings[0]).toMatch(/^floatscope: the cached session .* rebuilding it\.$/);
    expect(r.warnings[0]).not.toMatch(/\n|\s+at /);
    expect(sameBits(r.logits, plain.logits)).toBe(true);
    const again = await open(source, cache, extra);
    expect(again.state).toBe("hit");
  });

  it("a different setting (probe set) is a different entry", async () => {
    const r = await open(source, cache, { ...extra, probes: {} });
    expect(r.state).toBe("written");
    expect(r.dir).not.toBe(first.dir);
  });
});

describe("session cache: keys and eviction", () => {
  it("a rewritten checkpoint file misses (its identity is in the key)", async () => {
    const cache = fs.mkdtempSync(path.join(tmp, "cache-"));
    const copy = path.join(tmp, "copy-q4.gguf");
    fs.copyFileSync(Q4, copy);
    const a = await open(copy, cache, { quantizedWeights: "matmulnbits", sessionCache: true });
    expect(a.state).toBe("written");
    const later = new Date(Date.now() + 5000);
    fs.utimesSync(copy, later, later);
    const b = await open(copy, cache, { quantizedWeights: "matmulnbits", sessionCache: true });
    expect(b.state).toBe("written");
    expect(b.dir).not.toBe(a.dir);
    expect(sameBits(a.logits, b.logits)).toBe(true);
  });

  it("off by default, and off without the weight cache (weights handed over from memory)", async () => {
    const cache = fs.mkdtempSync(path.join(tmp, "cache-"));
    expect((await open(Q4, cache, { quantizedWeights: "matmulnbits" })).state).toBe("off");
    expect(fs.existsSync(path.join(cache, "sessions"))).toBe(false);
    const engine = await createEngine(openCheckpoint(Q4), {
      quantizedWeights: "matmulnbits",
      weightCache: false,
      threads: 1,
      sessionCache: true,
    });
    try {
      expect(engine.sessionCache.state).toBe("off");
    } finally {
      await engine.dispose();
    }
  });

  it("eviction removes the least recently used entries beyond the size cap, never the one just written", () => {
    const dir = fs.mkdtempSync(path.join(tmp, "evict-"));
    const make = (name: string, bytes: number, age: number) => {
      fs.mkdirSync(path.join(dir, name));
      fs.writeFileSync(path.join(dir, name, "model.data"), Buffer.alloc(bytes));
      fs.writeFileSync(path.join(dir, name, "entry.json"), "{}");
      const t = new Date(Date.now() - age * 1000);
      fs.utimesSync(path.join(dir, name, "entry.json"), t, t);
    };
    make("old", 1000, 30);
    make("mid", 1000, 20);
    make("new", 1000, 10);
    make("current", 1000, 40); // oldest by use, but just written
    evict(dir, 2100, path.join(dir, "current"));
    expect(fs.readdirSync(dir).sort()).toEqual(["current", "new"]);
  });
});
