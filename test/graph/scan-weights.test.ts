import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { streamTensorBytes, writeSafetensors } from "../../src/checkpoint/safetensors.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { describeCheckpoint } from "../../src/graph/describe.js";
import { countNonFinite, scanWeights, type ScanProgress } from "../../src/graph/scan-weights.js";
import { f32ToF16, writeTinyCheckpoint } from "../support/family-checkpoints.js";
import { byteLevelBpe } from "../support/tokenizer-files.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-scan-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));

/** Overwrite elements of one tensor in place with raw bit patterns. */
function poke(file: string, byteOffset: number, elemBytes: number, at: Record<number, number>) {
  const fd = fs.openSync(file, "r+");
  for (const [i, bits] of Object.entries(at)) {
    const b = Buffer.alloc(elemBytes);
    if (elemBytes === 4) b.writeUInt32LE(bits >>> 0);
    else b.writeUInt16LE(bits);
    fs.writeSync(fd, b, 0, elemBytes, byteOffset + Number(i) * elemBytes);
  }
  fs.closeSync(fd);
}

describe("scanWeights", () => {
  for (const [dtype, bytes, nanBits, infBits] of [
    ["F32", 4, 0x7fc00001, 0xff800000],
    ["F16", 2, 0x7e01, 0xfc00],
    ["BF16", 2, 0x7fc1, 0xff80],
  ] as const) {
    it(`${dtype}: counts NaN/Inf per tensor with the first flat index, across chunk boundaries`, () => {
      const dir = path.join(root, `scan-${dtype}`);
      writeTinyCheckpoint(dir, "llama", { dtype, layers: 2 });
      let ck = openCheckpoint(dir);
      const gate = ck.tensors.get("model.layers.1.mlp.gate_proj.weight")!; // [12, 8] = 96 elements
      poke(gate.file, gate.byteOffset, bytes, { 37: nanBits, 38: infBits, 95: nanBits });
      const norm = ck.tensors.get("model.norm.weight")!;
      poke(norm.file, norm.byteOffset, bytes, { 0: infBits });
      ck = openCheckpoint(dir);
      const spec = resolveModelSpec(ck);
      const progress: ScanProgress[] = [];
      // 10-byte chunks: not a multiple of 4, so elements must not be split across chunks.
      const r = scanWeights(ck, spec, { chunkBytes: 10, onProgress: (p) => progress.push(p) });
      expect(r.tensorsScanned).toBe(ck.tensors.size);
      expect(r.nonFinite).toEqual([
        expect.objectContaining({ tensor: gate.name, dtype, count: 3, nanCount: 2, infCount: 1, firstIndex: 37 }),
        expect.objectContaining({ tensor: norm.name, count: 1, nanCount: 0, infCount: 1, firstIndex: 0 }),
      ]);
      expect(progress[0]).toMatchObject({ index: 0, bytesDone: 0 });
      expect(progress.at(-1)).toMatchObject({ index: r.tensorsScanned, bytesDone: r.bytesScanned, bytesTotal: r.bytesScanned });
    });
  }

  it("clean weights report nothing; without a spec every float tensor is scanned", () => {
    const dir = path.join(root, "clean");
    writeTinyCheckpoint(dir, "dream");
    const ck = openCheckpoint(dir);
    const r = scanWeights(ck);
    expect(r.nonFinite).toEqual([]);
    expect(r.tensorsScanned).toBe(ck.tensors.size);
  });

  it("streamTensorBytes never hands out more than one chunk at a time", () => {
    const file = path.join(root, "big.safetensors");
    const n = 1 << 20; // 4 MiB of F32
    const x = new Float32Array(n).fill(1);
    x[n - 1] = NaN;
    writeSafetensors(file, { w: { dtype: "F32", shape: [n], data: x } });
    const info = { name: "w", file: fs.realpathSync(file), dtype: "F32" as const, shape: [n], byteOffset: 0, byteLength: n * 4 };
    info.byteOffset = fs.statSync(file).size - n * 4;
    let calls = 0,
      maxLen = 0,
      lastFirst = -1;
    streamTensorBytes(info, 65536, (b, first) => {
      calls++;
      maxLen = Math.max(maxLen, b.length);
      lastFirst = first;
      const c = countNonFinite(b, "F32");
      if (c.nan) expect(first + c.first).toBe(n - 1);
    });
    expect(calls).toBe(64);
    expect(maxLen).toBe(65536);
    expect(lastFirst).toBe(n - 16384);
  });

  it("countNonFinite decodes the half formats by bit pattern", () => {
    const h = Buffer.alloc(8);
    h.writeUInt16LE(f32ToF16(65504), 0); // max finite half
    h.writeUInt16LE(f32ToF16(Infinity), 2);
    h.writeUInt16LE(0x7e00, 4);
    h.writeUInt16LE(f32ToF16(-2), 6);
    expect(countNonFinite(h, "F16")).toEqual({ nan: 1, inf: 1, first: 1 });
    const b = Buffer.alloc(4);
    b.writeUInt16LE(0x7f7f, 0); // largest finite bf16
    b.writeUInt16LE(0x7f80, 2); // +inf
    expect(countNonFinite(b, "BF16")).toEqual({ nan: 0, inf: 1, first: 1 });
  });
});

describe("describeCheckpoint", () => {
  it("summarises sizes, dtypes, special ids and tokens, BOS behaviour and the chat template", () => {
    const dir = path.join(root, "describe");
    const tokJson = byteLevelBpe({ style: "llama3", specials: ["<|startoftext|>", "<|endoftext|>", "<|mdm_mask|>"] });
    const added = tokJson.added_tokens as { id: number; content: string }[];
    const maskId = added.find((t) => t.content === "<|mdm_mask|>")!.id;
    const vocab = added.at(-1)!.id + 5;
    writeTinyCheckpoint(dir, "llada", {
      vocab,
      embeddingSize: vocab + 3,
      shards: 2,
      dtype: "BF16",
      config: { mask_token_id: maskId, bos_token_id: added[0].id },
      files: {
        "tokenizer.json": tokJson,
        "tokenizer_config.json": { bos_token: "<|startoftext|>", chat_template: "{{ bos_token }}{{ messages[0]['content'] }}" },
      },
    });
    const ck = openCheckpoint(dir);
    const d = describeCheckpoint(ck, resolveModelSpec(ck));
    expect(d).toMatchObject({
      family: "llada",
      architecture: "LLaDAModelLM",
      sizes: { vocab: vocab + 3, hidden: 8, layers: 2, heads: 2, kvHeads: 1, headDim: 4, intermediate: 12, maxPositions: 64 },
      attention: { causal: false, gqaGroup: 2, qkvBias: false, logitShift: 0 },
      rope: { theta: 500000, scaling: null },
      tiedEmbeddings: false,
      specialIds: { bos: added[0].id, mask: maskId, eos: [2], pad: 2 },
      specialTokens: { bos: "<|startoftext|>", mask: "<|mdm_mask|>" },
      bos: { addedByTokenizer: false, prefix: [] },
      chatTemplate: true,
    });
    const nTensors = ck.tensors.size;
    const bytes = [...ck.tensors.values()].reduce((a, t) => a + t.byteLength, 0);
    expect(d.dtypes).toEqual({ BF16: { tensors: nTensors, bytes } });
    expect(d.parameters).toBe(bytes / 2);
    expect(d.weightFiles).toHaveLength(2);
    expect(JSON.parse(JSON.stringify(d))).toEqual(d);
  });

  const llamaFixture = path.join(__dirname, "..", "fixtures", "parity", "llama", "model");
  it.runIf(fs.existsSync(path.join(llamaFixture, "tokenizer.json")))("Llama-3-style fixture: BOS prepended by the post-processor", () => {
    const ck = openCheckpoint(llamaFixture);
    const d = describeCheckpoint(ck, resolveModelSpec(ck));
    expect(d.bos).toEqual({ addedByTokenizer: true, prefix: ["<|begin_of_text|>"] });
    expect(d.rope.scaling).toBe("llama3");
  });
});
