/**
 * GGUF: dequantisation against the `gguf` package, the four architectures against the same
 * weights from safetensors, and typed errors for malformed files. Fixtures: test/fixtures/gguf,
 * made by make_gguf_fixtures.py with the `gguf` package (llama.cpp's reader/writer).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { readGgufHeader } from "../../src/checkpoint/gguf/reader.js";
import { decodeTensor, unpermuteRows } from "../../src/checkpoint/gguf/tensor.js";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import type { Checkpoint, SafetensorsDType, TensorInfo } from "../../src/checkpoint/types.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { createEngine } from "../../src/runtime/engine.js";
import { CheckpointError } from "../../src/util/errors.js";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const FIX = path.join(HERE, "..", "fixtures", "gguf");
const PARITY = path.join(HERE, "..", "fixtures", "parity");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-gguf-test-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("dequantisation equals the gguf package's", () => {
  const header = readGgufHeader(path.join(FIX, "dequant.gguf"));
  const ref = new Map(readSafetensorsHeader(path.join(FIX, "dequant-reference.safetensors")).tensors.map((t) => [t.name, t]));
  const types = header.tensors.map((t) => t.name);

  it("covers every type the reader decodes", () => {
    expect(types.sort()).toEqual(["BF16", "F16", "F32", "Q4_0", "Q4_1", "Q4_K", "Q5_0", "Q5_1", "Q5_K", "Q6_K", "Q8_0"]);
  });

  it.each(types)("%s: bit-identical", (name) => {
    const t = header.tensors.find((x) => x.name === name)!;
    const info: TensorInfo = {
      name,
      file: header.file,
      dtype: "F32" as SafetensorsDType,
      shape: [...t.dims].reverse(),
      byteOffset: t.byteOffset,
      byteLength: t.byteLength,
      encoding: { ggmlType: t.type.name },
    };
    const got = decodeTensor(info);
    const want = readTensorF32(ref.get(name)!);
    expect(got.length).toBe(want.length);
    const a = new Uint32Array(got.buffer),
      b = new Uint32Array(want.buffer);
    let mismatches = 0;
    for (let i = 0; i < a.length; i++) if (a[i] !== b[i]) mismatches++;
    expect(mismatches).toBe(0);
    // and the values are not trivially zero
    expect(want.some((v) => Math.abs(v) > 1e-3)).toBe(true);
  });
});

describe("undoing llama.cpp's rotary row order", () => {
  it("maps file row h·d + 2i + s to HF row h·d + s·d/2 + i (hand-made 2 heads × 4 rows)", () => {
    // HF rows r0..r7 (head 0: r0..r3, head 1: r4..r7); llama.cpp stores per head [r0, r2, r1, r3].
    const file = Uint8Array.from([0, 2, 1, 3, 4, 6, 5, 7]);
    expect([...unpermuteRows(file, 8, 1, 2)]).toEqual([0, 1, 2, 3, 4, 5, 6, 7]);
  });
});

interface Inputs {
  batch: number;
  seq: number;
  input_ids: number[][];
  attention_mask: number[][];
}

async function logitsOf(source: string | Checkpoint, inp: Inputs): Promise<Float32Array> {
  const engine = await createEngine(source, { threads: 1, probes: {} });
  try {
    const out = await engine.forward({
      ids: Int32Array.from(inp.input_ids.flat()),
      batch: inp.batch,
      seq: inp.seq,
      attentionMask: Uint8Array.from(inp.attention_mask.flat()),
    });
    return out.logits as Float32Array;
  } finally {
    await engine.dispose();
  }
}

function maxAbsDiff(a: Float32Array, b: Float32Array): number {
  expect(a.length).toBe(b.length);
  let m = 0;
  for (let i = 0; i < a.length; i++) m = Math.max(m, Math.abs(a[i] - b[i]));
  return m;
}

/** A copy of a parity folder's config and tokenizer with `weights` as its model.safetensors; `edit` changes config.json. */
function folderWith(family: string, weights: string | undefined, edit: (c: Record<string, unknown>) => void): string {
  const src = path.join(PARITY, family, "model");
  const dir = fs.mkdtempSync(path.join(tmp, `${family}-`));
  for (const f of fs.readdirSync(src)) {
    if (f.endsWith(".safetensors") && weights !== undefined) continue;
    fs.copyFileSync(path.join(src, f), path.join(dir, f));
  }
  if (weights !== undefined) fs.copyFileSync(weights, path.join(dir, "model.safetensors"));
  const cfg = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8"));
  edit(cfg);
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(cfg));
  return dir;
}

describe("a GGUF of each architecture gives the logits of the same weights from safetensors", () => {
  const noRopeScaling = (c: Record<string, unknown>) => void delete c.rope_scaling;
  const cases: [string, string, () => string][] = [
    ["llama (q/k permuted)", "llama", () => folderWith("llama", undefined, noRopeScaling)],
    ["qwen2 (biases, tied head)", "qwen2", () => path.join(PARITY, "qwen2", "model")],
    ["llada (OLMo names, q/k permuted)", "llada", () => path.join(PARITY, "llada", "model")],
    ["dream (BF16, logit shift)", "dream", () => path.join(PARITY, "dream", "model")],
  ];
  it.each(cases)("%s", async (_label, family, folder) => {
    const inp = JSON.parse(fs.readFileSync(path.join(PARITY, family, "inputs.json"), "utf8")) as Inputs;
    const gguf = openCheckpoint(path.join(FIX, `parity-${family}.gguf`));
    const ref = openCheckpoint(folder());
    const a = resolveModelSpec(gguf),
      b = resolveModelSpec(ref);
    // Same spec apart from where the weights come from (and BOS behaviour, which the GGUFs leave to the tokenizer they do not carry).
    for (const k of [
      "family",
      "vocabSize",
      "hiddenSize",
      "numLayers",
      "numHeads",
      "numKvHeads",
      "headDim",
      "intermediateSize",
      "rmsNormEps",
      "rope",
      "causal",
      "qkvBias",
      "logitShift",
      "maskTokenId",
      "bosTokenId",
    ] as const) {
      expect(a[k], k).toEqual(b[k]);
    }
    expect(a.weights.lmHead === a.weights.embed).toBe(b.weights.lmHead === b.weights.embed);
    const diff = maxAbsDiff(await logitsOf(gguf, inp), await logitsOf(ref, inp));
    expect(diff).toBeLessThanOrEqual(1e-6);
  });

  it("Q8_0 weights (permuted before quantising) give the logits of their gguf-dequantised copy", async () => {
    const inp = JSON.parse(fs.readFileSync(path.join(PARITY, "llama", "inputs.json"), "utf8")) as Inputs;
    const gguf = openCheckpoint(path.join(FIX, "parity-llama-q8.gguf"));
    expect([...gguf.tensors.values()].filter((t) => t.encoding?.ggmlType === "Q8_0").length).toBeGreaterThan(10);
    const ref = folderWith("llama", path.join(FIX, "parity-llama-q8-dequant.safetensors"), noRopeScaling);
    const q8 = await logitsOf(gguf, inp);
    expect(maxAbsDiff(q8, await logitsOf(ref, inp))).toBeLessThanOrEqual(1e-6);
    // and quantisation really changed something (the test would pass on unquantised weights otherwise)
    expect(maxAbsDiff(q8, await logitsOf(folderWith("llama", undefined, noRopeScaling), inp))).toBeGreaterThan(1e-4);
  });

  it("float GGUFs stay zero-copy: permuted q/k rows are reordered by a constant Gather, nothing is read into memory", async () => {
    const ck = openCheckpoint(path.join(FIX, "parity-llama.gguf"));
    const { buildModelGraph } = await import("../../src/graph/model.js");
    const built = buildModelGraph(resolveModelSpec(ck), ck.tensors, { probes: {} });
    expect(built.externalBuffers).toEqual([]);
    expect(built.externalFiles).toEqual([fs.realpathSync(path.join(FIX, "parity-llama.gguf"))]);
    const gathers = built.graph.node.filter((n) => n.opType === "Gather" && n.input[0].endsWith(".stored"));
    expect(gathers.length).toBe(4); // q and k of 2 layers
  });

  it("a GGUF is a Checkpoint of the same shape: HF tensor names, row-major shapes, config from metadata", () => {
    const ck = openCheckpoint(path.join(FIX, "parity-llada.gguf"));
    expect(ck.format).toBe("gguf");
    expect(ck.config.architectures).toEqual(["LLaDAModelLM"]);
    expect(ck.tensors.get("model.transformer.blocks.1.ff_out.weight")?.shape).toEqual([64, 80]);
    expect(ck.tensors.get("model.transformer.blocks.0.q_proj.weight")?.encoding).toEqual({ ggmlType: "F32", unpermuteHeads: 4 });
    // in-place tensors point into the file (zero copy)
    expect(ck.tensors.get("model.transformer.blocks.0.v_proj.weight")?.encoding).toBeUndefined();
    expect(ck.tensors.get("model.transformer.blocks.0.v_proj.weight")?.file).toBe(fs.realpathSync(path.join(FIX, "parity-llada.gguf")));
  });
});

// --- malformed files -------------------------------------------------------------------------

/** A minimal GGUF writer for hand-made (and deliberately broken) headers. */
class Bytes {
  parts: Buffer[] = [];
  u32(v: number) {
    const b = Buffer.alloc(4);
    b.writeUInt32LE(v >>> 0);
    this.parts.push(b);
    return this;
  }
  u64(v: number | bigint) {
    const b = Buffer.alloc(8);
    b.writeBigUInt64LE(BigInt(v));
    this.parts.push(b);
    return this;
  }
  str(s: string, len?: number) {
    const t = Buffer.from(s, "utf8");
    this.u64(len ?? t.length);
    this.parts.push(t);
    return this;
  }
  raw(b: Buffer) {
    this.parts.push(b);
    return this;
  }
  pad(to: number) {
    const n = this.size % to;
    if (n) this.parts.push(Buffer.alloc(to - n));
    return this;
  }
  get size() {
    return this.parts.reduce((a, b) => a + b.length, 0);
  }
  bytes() {
    return Buffer.concat(this.parts);
  }
}

/** One F32 tensor "w" of dims [32, 2] (256 bytes) at `offset`, after `kv` metadata. */
function ggufBytes(
  o: {
    magic?: string;
    version?: number;
    tensorCount?: number | bigint;
    kvCount?: number | bigint;
    kv?: (b: Bytes) => void;
    dims?: number[];
    type?: number;
    offset?: number;
    extraTensor?: { name: string; offset: number };
    dataBytes?: number;
  } = {},
): Buffer {
  const b = new Bytes();
  b.raw(Buffer.from(o.magic ?? "GGUF", "latin1"))
    .u32(o.version ?? 3)
    .u64(o.tensorCount ?? (o.extraTensor ? 2 : 1))
    .u64(o.kvCount ?? 1);
  if (o.kv) o.kv(b);
  else b.str("general.architecture").u32(8).str("llama");
  const dims = o.dims ?? [32, 2];
  b.str("w").u32(dims.length);
  for (const d of dims) b.u64(d);
  b.u32(o.type ?? 0).u64(o.offset ?? 0);
  if (o.extraTensor) b.str(o.extraTensor.name).u32(1).u64(32).u32(0).u64(o.extraTensor.offset);
  b.pad(32);
  b.raw(Buffer.alloc(o.dataBytes ?? 256));
  return b.bytes();
}

function errorFor(bytes: Buffer, name = "bad.gguf"): CheckpointError {
  const file = path.join(tmp, name);
  fs.writeFileSync(file, bytes);
  try {
    readGgufHeader(file);
  } catch (e) {
    expect(e).toBeInstanceOf(CheckpointError);
    return e as CheckpointError;
  }
  throw new Error("expected a CheckpointError");
}

describe("malformed GGUF headers give typed errors naming the field", () => {
  it("the hand-made writer makes a valid file (so the cases below fail for their one defect)", () => {
    const file = path.join(tmp, "ok.gguf");
    fs.writeFileSync(file, ggufBytes());
    const h = readGgufHeader(file);
    expect(h.tensors[0]).toMatchObject({ name: "w", dims: [32, 2], byteLength: 256 });
    expect(h.metadata.get("general.architecture")?.value).toBe("llama");
  });

  const cases: [string, () => Buffer, string | RegExp][] = [
    ["too short", () => Buffer.from("GGUF"), "magic"],
    ["bad magic", () => ggufBytes({ magic: "GGML" }), "magic"],
    ["version 1", () => ggufBytes({ version: 1 }), "version"],
    ["big-endian version", () => ggufBytes({ version: 0x03000000 }), "version"],
    ["tensor count beyond the file", () => ggufBytes({ tensorCount: 2n ** 62n }), "tensor_count"],
    ["metadata count beyond the file", () => ggufBytes({ kvCount: 1_000_000 }), "metadata_kv_count"],
    [
      "string length beyond the file",
      () =>
        ggufBytes({
          kv: (b) =>
            b
              .str("general.architecture")
              .u32(8)
              .str("llama", 2 ** 40),
        }),
      "general.architecture (string length)",
    ],
    ["unknown value type", () => ggufBytes({ kv: (b) => b.str("general.architecture").u32(77) }), "general.architecture (value type)"],
    [
      "array length beyond the file",
      () =>
        ggufBytes({
          kv: (b) =>
            b
              .str("tokenizer.ggml.tokens")
              .u32(9)
              .u32(8)
              .u64(2n ** 50n),
        }),
      "tokenizer.ggml.tokens (array length)",
    ],
    ["duplicate key", () => ggufBytes({ kvCount: 2, kv: (b) => b.str("a").u32(4).u32(1).str("a").u32(4).u32(2) }), "a"],
    // llama.cpp looks keys up by name: an empty one can name nothing
    [
      "empty key",
      () => ggufBytes({ kvCount: 2, kv: (b) => b.str("general.architecture").u32(8).str("llama").str("").u32(4).u32(1) }),
      "metadata[1].key",
    ],
    ["bad alignment", () => ggufBytes({ kv: (b) => b.str("general.alignment").u32(4).u32(48) }), "general.alignment"],
    ["five dimensions", () => ggufBytes({ dims: [32, 1, 1, 1, 2] }), "w.n_dims"],
    ["zero dimension", () => ggufBytes({ dims: [32, 0] }), "w.dims[1]"],
    ["unsupported ggml type", () => ggufBytes({ type: 10 }), "w.type"],
    ["rows not whole blocks", () => ggufBytes({ type: 8, dims: [40, 2] }), "w.dims[0]"],
    ["misaligned data offset", () => ggufBytes({ offset: 8 }), "w.offset"],
    ["data beyond the end of the file", () => ggufBytes({ dataBytes: 100 }), "w.offset"],
    ["overlapping tensors", () => ggufBytes({ extraTensor: { name: "v", offset: 128 }, dataBytes: 512 }), "v.offset"],
    ["duplicate tensor name", () => ggufBytes({ extraTensor: { name: "w", offset: 256 }, dataBytes: 512 }), "w"],
    ["empty tensor name", () => ggufBytes({ extraTensor: { name: "", offset: 256 }, dataBytes: 512 }), "tensors[1].name"],
  ];
  it.each(cases)("%s", (_label, make, field) => {
    const e = errorFor(make());
    expect(e.field).toEqual(field);
    expect(e.file).toMatch(/bad\.gguf$/);
  });

  it("a truncated real GGUF names the tensor whose data is missing", () => {
    const full = fs.readFileSync(path.join(FIX, "parity-qwen2.gguf"));
    const e = errorFor(full.subarray(0, full.length - 1000), "bad.gguf");
    expect(e.field).toMatch(/\.offset$/);
    expect(e.message).toMatch(/beyond the end of the file/);
  });

  it("cut inside the tensor directory: names the field being read", () => {
    const file = path.join(FIX, "parity-qwen2.gguf");
    const { dataStart } = readGgufHeader(file);
    const e = errorFor(fs.readFileSync(file).subarray(0, dataStart - 40));
    expect(e.message).toMatch(/ends inside its header/);
    expect(e.field).toMatch(/^model|^blk\.|^output|^token_embd/);
  });

  it("an unsupported architecture is refused with the list", () => {
    const file = path.join(tmp, "gpt2.gguf");
    fs.writeFileSync(file, ggufBytes({ kv: (b) => b.str("general.architecture").u32(8).str("gpt2") }));
    expect(() => openCheckpoint(file)).toThrowError(
      /Unsupported GGUF architecture[\s\S]*general\.architecture[\s\S]*llama, qwen2, llada, dream/,
    );
  });
});

describe('quantised layers as MatMulNBits (quantizedWeights: "matmulnbits")', () => {
  const inp = JSON.parse(fs.readFileSync(path.join(PARITY, "llama", "inputs.json"), "utf8")) as Inputs;
  const run = async (file: string, quantizedWeights: "dequantize" | "matmulnbits") => {
    const engine = await createEngine(openCheckpoint(file), { threads: 1, probes: {}, quantizedWeights });
    try {
      const out = await engine.forward({
        ids: Int32Array.from(inp.input_ids.flat()),
        batch: inp.batch,
        seq: inp.seq,
        attentionMask: Uint8Array.from(inp.attention_mask.flat()),
      });
      return { logits: out.logits as Float32Array, nodes: engine.nodeCount };
    } finally {
      await engine.dispose();
    }
  };

  it.each([
    ["Q4_1 attention, Q4_0 MLP, Q8_0 head", "parity-llama-q4.gguf"],
    ["Q8_0", "parity-llama-q8.gguf"],
  ])("%s: logits within 1e-3 of the dequantised graph", async (_label, file) => {
    const f = path.join(FIX, file);
    const ck = openCheckpoint(f);
    const spec = resolveModelSpec(ck);
    const { buildModelGraph } = await import("../../src/graph/model.js");
    const graph = buildModelGraph(spec, ck.tensors, { probes: {}, quantizedWeights: "matmulnbits" }).graph;
    // 2 layers × 6 matrices + the untied head (down_proj has 80 inputs, not whole 32-blocks: kept F32)
    expect(graph.node.filter((n) => n.opType === "MatMulNBits" && n.domain === "com.microsoft").length).toBe(13);
    const a = await run(f, "dequantize"),
      b = await run(f, "matmulnbits");
    expect(maxAbsDiff(a.logits, b.logits)).toBeLessThanOrEqual(1e-3);
  });
});

describe("commands take a .gguf where they take a folder", () => {
  const run = async (...argv: string[]) => {
    const { main } = await import("../../src/cli/main.js");
    let out = "",
      err = "";
    const code = await main(argv, { out: (t: string) => (out += t + "\n"), err: (t: string) => (err += t + "\n") });
    return { code, out, err };
  };
  it("inspect names the family and the stored ggml types", async () => {
    const r = await run("inspect", path.join(FIX, "parity-llama-q4.gguf"));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/llama \(LlamaForCausalLM\)/);
    expect(r.out).toMatch(/Q4_1/);
    expect(r.out).toMatch(/Q4_0/);
  });
  it("forward on a .gguf prints the top ids the safetensors folder gives", async () => {
    const ids = [100, 5, 103, 103];
    const r = await run("forward", path.join(FIX, "parity-dream.gguf"), "--ids", ids.join(","));
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/^dream DreamModel, 4 tokens/);
    const top = Number(/top ids for the last position: (\d+)/.exec(r.out)?.[1]);
    const logits = await logitsOf(path.join(PARITY, "dream", "model"), {
      batch: 1,
      seq: 4,
      input_ids: [ids],
      attention_mask: [[1, 1, 1, 1]],
    });
    const last = logits.subarray(3 * 128, 4 * 128);
    expect(top).toBe(last.indexOf(Math.max(...last)));
  });
});

describe("notebook model discovery takes a .gguf", () => {
  it("findModels counts a .gguf file as present and says how to get a missing one", async () => {
    const { findModels, REAL_MODEL_NAMES } = await import("../../src/notebook/models.js");
    const found = findModels(FIX, ["llama", "qwen2"], { llama: "parity-llama.gguf", qwen2: "absent.gguf" });
    expect(found.names).toEqual({ llama: "parity-llama.gguf" });
    expect(found.missing[0].reason).toMatch(/no such file.*setup\.sh/);
    expect(REAL_MODEL_NAMES.llama).toBe("SmolLM2-135M-Instruct.Q4_1.gguf");
  });
  it("openModel opens a .gguf (tokenizer optional here: the parity GGUFs carry none)", async () => {
    const { openModel } = await import("../../src/model/open.js");
    const m = await openModel(path.join(FIX, "parity-qwen2.gguf"), { tokenizer: "optional", threads: 1 });
    try {
      expect(m.family).toBe("qwen2");
      expect(m.name).toBe("parity-qwen2.gguf");
      expect(m.tokenizer).toBeUndefined();
    } finally {
      await m.dispose();
    }
  });
});

describe("seeded header mutations never escape as untyped errors", () => {
  it("300 byte flips and 40 truncations of a real header: a valid checkpoint or a FloatscopeError", async () => {
    const { FloatscopeError } = await import("../../src/util/errors.js");
    const { checkpointFromHeader } = await import("../../src/checkpoint/gguf/open.js");
    const src = path.join(FIX, "parity-qwen2.gguf");
    const full = fs.readFileSync(src);
    const { dataStart } = readGgufHeader(src);
    let seed = 20261201;
    const rand = (n: number) => (seed = (seed * 1103515245 + 12345) >>> 0) % n;
    const file = path.join(tmp, "mutated.gguf");
    const outcomes = { ok: 0, typed: 0 };
    const tryOpen = (bytes: Buffer) => {
      fs.writeFileSync(file, bytes);
      try {
        const ck = checkpointFromHeader(readGgufHeader(file));
        resolveModelSpec(ck);
        outcomes.ok++;
      } catch (e) {
        if (!(e instanceof FloatscopeError)) throw new Error(`untyped ${(e as Error).name}: ${(e as Error).message}`, { cause: e });
        outcomes.typed++;
      }
    };
    for (let i = 0; i < 300; i++) {
      const b = Buffer.from(full);
      for (let k = 0, n = 1 + rand(3); k < n; k++) b[rand(dataStart)] = rand(256);
      tryOpen(b);
    }
    for (let i = 0; i < 40; i++) tryOpen(full.subarray(0, rand(full.length)));
    expect(outcomes.ok + outcomes.typed).toBe(340);
    expect(outcomes.typed).toBeGreaterThan(100);
  });
});

describe("tokenizer from GGUF metadata", () => {
  const entries = async (over: Record<string, { type: number; itemType?: number; value: unknown }> = {}) => {
    const { GgufMetadata } = await import("../../src/checkpoint/gguf/metadata.js");
    const tokens = ["<s>", "a", "b", "ab", "Ġ", "Ġab"];
    const base: Record<string, { type: number; itemType?: number; value: unknown }> = {
      "tokenizer.ggml.model": { type: 8, value: "gpt2" },
      "tokenizer.ggml.pre": { type: 8, value: "llama-bpe" },
      "tokenizer.ggml.tokens": { type: 9, itemType: 8, value: tokens },
      "tokenizer.ggml.token_type": { type: 9, itemType: 5, value: [3, 1, 1, 1, 1, 1] },
      "tokenizer.ggml.merges": { type: 9, itemType: 8, value: ["a b", "Ġ ab"] },
      "tokenizer.ggml.bos_token_id": { type: 4, value: 0 },
      "tokenizer.chat_template": { type: 8, value: "{{ bos_token }}{% for m in messages %}{{ m.content }}{% endfor %}" },
    };
    return new GgufMetadata("t.gguf", new Map(Object.entries({ ...base, ...over })) as never);
  };

  it("control tokens are special, add_bos_token becomes a BOS the tokenizer adds, merges apply", async () => {
    const { tokenizerFromGguf } = await import("../../src/checkpoint/gguf/tokenizer-json.js");
    const { loadTokenizer } = await import("../../src/checkpoint/tokenizer.js");
    const { addsBosFromFiles } = await import("../../src/checkpoint/special-tokens.js");
    const files = tokenizerFromGguf(await entries({ "tokenizer.ggml.add_bos_token": { type: 7, value: true } }))!;
    expect(addsBosFromFiles(files, false)).toBe(true);
    const tok = loadTokenizer(files);
    expect(tok.encode("ab ab").ids).toEqual([0, 3, 5]);
    expect(tok.specialIds.has(0)).toBe(true);
    expect(tok.applyChatTemplate([{ role: "user", content: "ab" }])).toBe("<s>ab");
  });

  it.each([
    ["an unknown pre-tokenizer", { "tokenizer.ggml.pre": { type: 8, value: "jais" } }, "tokenizer.ggml.pre"],
    ["a SentencePiece vocabulary", { "tokenizer.ggml.model": { type: 8, value: "llama" } }, "tokenizer.ggml.model"],
    ["token types of the wrong length", { "tokenizer.ggml.token_type": { type: 9, itemType: 5, value: [1] } }, "tokenizer.ggml.token_type"],
    ["tokens that are not strings", { "tokenizer.ggml.tokens": { type: 9, itemType: 4, value: [1, 2] } }, "tokenizer.ggml.tokens"],
    ["a BOS id outside the vocabulary", { "tokenizer.ggml.bos_token_id": { type: 4, value: 99 } }, "tokenizer.ggml.bos_token_id"],
  ])("%s is refused naming the key", async (_label, over, field) => {
    const { tokenizerFromGguf } = await import("../../src/checkpoint/gguf/tokenizer-json.js");
    const meta = await entries(over as never);
    let err: unknown;
    try {
      tokenizerFromGguf(meta);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as CheckpointError).field).toBe(field);
  });
});
