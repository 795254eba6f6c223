/**
 * What llama.cpp's loader refuses, refused here too, each naming the fields that disagree. Rules from llama.cpp (src/llama-model.cpp `load_hparams` and the per-architecture tensor
 * creation; convert_hf_to_gguf.py for tensor types):
 * - `<arch>.context_length`, `.embedding_length`, `.block_count` are read for every architecture and
 *   `<arch>.attention.layer_norm_rms_epsilon` for llama, qwen2, llada and dream, all without a
 *   default; we also need `.attention.head_count` and `.feed_forward_length` (llama.cpp reads them as
 *   optional, but a transformer without them cannot be built);
 * - every tensor is created with its expected shape (`wrong shape` otherwise) and a file with tensors
 *   the model did not create is refused (`wrong number of tensors`): a block index ≥ block_count or an
 *   unknown name is a stray tensor;
 * - the vocabulary sizes the embedding: token_embd is [n_embd, n_vocab] with n_vocab the token count;
 * - the converter stores 1-D tensors and norms as F32 ("most of the codebase that takes in 1D tensors or
 *   norms only handles F32 tensors"); 2-D weights keep their float type or are quantised.
 *
 * Cases edit a parsed fixture header in memory (the bytes were checked by readGgufHeader already) and
 * go through checkpointFromHeader, the path openCheckpoint takes.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { checkpointFromHeader } from "../../src/checkpoint/gguf/open.js";
import { readGgufHeader, type GgufEntry, type GgufHeader } from "../../src/checkpoint/gguf/reader.js";
import { tokenizerFromGguf } from "../../src/checkpoint/gguf/tokenizer-json.js";
import { GgufMetadata } from "../../src/checkpoint/gguf/metadata.js";
import { CheckpointError } from "../../src/util/errors.js";

const HERE = path.dirname(new URL(import.meta.url).pathname);
const FIX = path.join(HERE, "..", "fixtures", "gguf");
const ARCHS = ["llama", "qwen2", "llada", "dream"] as const;

/** A fresh copy of a fixture's parsed header (metadata and tensor list are copied; entries are shared). */
function header(arch: string): GgufHeader {
  const h = readGgufHeader(path.join(FIX, `parity-${arch}.gguf`));
  return { ...h, metadata: new Map(h.metadata), tensors: [...h.tensors] };
}

function refusal(h: GgufHeader): CheckpointError {
  try {
    checkpointFromHeader(h);
  } catch (e) {
    expect(e).toBeInstanceOf(CheckpointError);
    return e as CheckpointError;
  }
  throw new Error("expected a CheckpointError, the checkpoint opened");
}

const u32 = (value: number): GgufEntry => ({ type: 4, value });

describe("every fixture opens unedited (so each case below fails for its one defect)", () => {
  it.each(ARCHS)("%s", (arch) => {
    expect(checkpointFromHeader(header(arch)).format).toBe("gguf");
  });
});

describe("keys llama.cpp requires are required", () => {
  const keys = [
    "attention.layer_norm_rms_epsilon",
    "context_length",
    "embedding_length",
    "block_count",
    "attention.head_count",
    "feed_forward_length",
  ];
  it.each(ARCHS.flatMap((a) => keys.map((k) => [a, k] as const)))("%s without .%s: refused naming the key", (arch, key) => {
    const h = header(arch);
    h.metadata.delete(`${arch}.${key}`);
    const e = refusal(h);
    expect(e.field).toBe(`${arch}.${key}`);
    expect(e.found).toBe("missing");
  });
});

describe("stray tensors are refused naming the tensor", () => {
  it("a block index ≥ block_count (2)", () => {
    const h = header("qwen2");
    const q = h.tensors.find((t) => t.name === "blk.0.attn_q.weight")!;
    h.tensors.push({ ...q, name: "blk.2.attn_q.weight" });
    const e = refusal(h);
    expect(e.field).toBe("blk.2.attn_q.weight");
    expect(e.expected).toMatch(/qwen2\.block_count = 2/);
  });
  it.each(["blk.0.attn_qkv.weight", "blk.0.attn_norm.bias", "lm_head.weight", "blk.x.attn_q.weight"])("an unknown name: %s", (name) => {
    const h = header("llama");
    const q = h.tensors.find((t) => t.name === "blk.0.attn_norm.weight")!;
    h.tensors.push({ ...q, name });
    const e = refusal(h);
    expect(e.field).toBe(name);
    expect(e.message).toMatch(/not part of a llama model/);
  });
});

describe("consistency errors name the fields that disagree", () => {
  it("head_count 3 (does not divide embedding_length 64): names both, not partial rotary", () => {
    const h = header("qwen2");
    h.metadata.set("qwen2.attention.head_count", u32(3));
    h.metadata.set("qwen2.attention.head_count_kv", u32(3));
    const e = refusal(h);
    expect(e.message).not.toMatch(/Partial rotary/);
    expect(`${e.field} ${e.expected}`).toMatch(/qwen2\.attention\.head_count/);
    expect(`${e.field} ${e.expected}`).toMatch(/embedding_length/);
  });
  it("head_count 8 (head size 64 / 8 = 8): the k weight's shape disagrees with head_count_kv × head size", () => {
    // k is [64, 2·16] in the file; head_count_kv 2 × head size 8 = 16 rows.
    const h = header("qwen2");
    h.metadata.set("qwen2.attention.head_count", u32(8));
    const e = refusal(h);
    expect(e.message).not.toMatch(/Partial rotary/);
    expect(e.field).toBe("blk.0.attn_k.weight");
    expect(e.expected).toMatch(/head_count_kv 2 × head size 8/);
    expect(e.found).toMatch(/\[64, 32\]/);
  });
  it("head_count 8 on a model without GQA: the rotary count disagrees with the head size it implies, both named", () => {
    const h = header("llama");
    h.metadata.set("llama.attention.head_count", u32(8));
    h.metadata.delete("llama.attention.head_count_kv");
    // llama's kv heads are 2 in the file: k then has 16 rows where 8 × 8 = 64 are expected.
    const e = refusal(h);
    expect(e.message).not.toMatch(/Partial rotary/);
    expect(`${e.field} ${e.expected}`).toMatch(/head_count/);
  });
  it("embedding_length 65 vs token_embd.weight [64, 128]", () => {
    const h = header("dream");
    h.metadata.set("dream.embedding_length", u32(65));
    const e = refusal(h);
    expect(e.message).not.toMatch(/Partial rotary/);
    expect(e.field).toBe("dream.embedding_length");
    expect(e.found).toMatch(/token_embd\.weight/);
  });
  it("vocab_size 200 vs token_embd.weight [64, 128]", () => {
    const h = header("llada");
    h.metadata.set("llada.vocab_size", u32(200));
    const e = refusal(h);
    expect(e.field).toBe("llada.vocab_size");
    expect(e.expected).toMatch(/128.*token_embd\.weight/);
  });
  it("feed_forward_length 96 vs ffn_up [64, 80]", () => {
    const h = header("llama");
    h.metadata.set("llama.feed_forward_length", u32(96));
    const e = refusal(h);
    expect(e.field).toMatch(/^blk\.0\.ffn_(down|gate|up)\.weight$/);
    expect(e.expected).toMatch(/feed_forward_length 96/);
  });
});

describe("the vocabulary", () => {
  const withTokens = (tokens: string[]) => {
    const h = header("qwen2");
    h.metadata.set("tokenizer.ggml.model", { type: 8, value: "gpt2" });
    h.metadata.set("tokenizer.ggml.tokens", { type: 9, itemType: 8, value: tokens });
    return h;
  };
  it("more tokens (129) than embedding rows (128): refused naming tokenizer.ggml.tokens and token_embd.weight", () => {
    const e = refusal(withTokens(Array.from({ length: 129 }, (_, i) => `t${i}`)));
    expect(e.field).toBe("tokenizer.ggml.tokens");
    expect(e.expected).toMatch(/≤ 128.*token_embd\.weight/);
    expect(e.found).toMatch(/129/);
  });
  it("as many tokens as rows opens", () => {
    expect(checkpointFromHeader(withTokens(Array.from({ length: 128 }, (_, i) => `t${i}`))).tokenizer).toBeDefined();
  });
  it("a vocabulary of empty strings is a checkpoint error naming tokenizer.ggml.tokens (not --text)", () => {
    const meta = new GgufMetadata(
      "t.gguf",
      new Map<string, GgufEntry>([
        ["tokenizer.ggml.model", { type: 8, value: "gpt2" }],
        ["tokenizer.ggml.tokens", { type: 9, itemType: 8, value: ["", "", ""] }],
      ]),
    );
    let err: unknown;
    try {
      tokenizerFromGguf(meta);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(CheckpointError);
    expect((err as CheckpointError).field).toBe("tokenizer.ggml.tokens");
    expect((err as CheckpointError).message).not.toMatch(/--text/);
  });
});

describe("the fixtures are stored as llama.cpp's converter stores them", () => {
  const QUANT = ["Q4_0", "Q4_1", "Q5_0", "Q5_1", "Q8_0", "Q4_K", "Q5_K", "Q6_K"];
  const files = [...ARCHS.map((a) => `parity-${a}.gguf`), "parity-llama-q8.gguf", "parity-llama-q4.gguf"];
  it.each(files)("%s: 1-D tensors and norms F32; 2-D weights F32, F16, BF16 or quantised", (file) => {
    const h = readGgufHeader(path.join(FIX, file));
    const roles: Record<string, string[]> = {};
    for (const t of h.tensors) {
      const oneD = t.dims.length === 1 || t.name.endsWith("_norm.weight");
      const ok = oneD ? t.type.name === "F32" : ["F32", "F16", "BF16", ...QUANT].includes(t.type.name);
      if (!ok) (roles[`${t.name.replace(/^blk\.\d+\./, "blk.N.")} (${t.dims.length}-D)`] ??= []).push(t.type.name);
    }
    expect(roles).toEqual({});
    expect(() => openCheckpoint(path.join(FIX, file))).not.toThrow();
  });
});
