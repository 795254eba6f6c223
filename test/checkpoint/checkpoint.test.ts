import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { CheckpointError } from "../../src/util/errors.js";
import { writeTinyCheckpoint } from "../support/family-checkpoints.js";

const root = fs.mkdtempSync(path.join(os.tmpdir(), "fs-ckpt-"));
afterAll(() => fs.rmSync(root, { recursive: true, force: true }));
let n = 0;
const fresh = () => path.join(root, `c${n++}`);

function thrown(f: () => unknown): CheckpointError {
  try {
    f();
  } catch (e) {
    expect(e).toBeInstanceOf(CheckpointError);
    return e as CheckpointError;
  }
  throw new Error("expected a throw");
}

describe("openCheckpoint", () => {
  it("sharded and single-file checkpoints of the same weights read identically (f32, bf16, f16)", () => {
    for (const dtype of ["F32", "BF16", "F16"] as const) {
      const a = fresh(),
        b = fresh();
      writeTinyCheckpoint(a, "llada", { dtype, seed: 7 });
      writeTinyCheckpoint(b, "llada", { dtype, seed: 7, shards: 3 });
      const ca = openCheckpoint(a),
        cb = openCheckpoint(b);
      expect([...cb.tensors.keys()].sort()).toEqual([...ca.tensors.keys()].sort());
      const files = new Set([...cb.tensors.values()].map((t) => path.basename(t.file)));
      expect(files.size).toBe(3);
      for (const [name, t] of ca.tensors) {
        expect(t.dtype).toBe(dtype);
        expect(readTensorF32(cb.tensors.get(name)!)).toEqual(readTensorF32(t));
      }
    }
  });

  it("resolves HF cache symlinks (snapshots/<rev>/x → blobs/<sha>) to the real blob path", () => {
    const src = fresh();
    writeTinyCheckpoint(src, "qwen2", { shards: 2 });
    const cache = fresh();
    const blobs = path.join(cache, "blobs"),
      snap = path.join(cache, "snapshots", "abc123");
    fs.mkdirSync(blobs, { recursive: true });
    fs.mkdirSync(snap, { recursive: true });
    for (const f of fs.readdirSync(src)) {
      const blob = path.join(blobs, `sha-${f.length}-${f.replace(/\W/g, "")}`);
      fs.copyFileSync(path.join(src, f), blob);
      fs.symlinkSync(path.relative(snap, blob), path.join(snap, f));
    }
    const ck = openCheckpoint(snap);
    expect(ck.dir).toBe(path.resolve(snap));
    for (const t of ck.tensors.values()) {
      expect(path.dirname(t.file)).toBe(fs.realpathSync(blobs));
      expect(fs.lstatSync(t.file).isSymbolicLink()).toBe(false);
    }
    expect(resolveModelSpec(ck).family).toBe("qwen2");
  });

  it("reads generation_config.json and merges its EOS ids into the spec", () => {
    const d = fresh();
    writeTinyCheckpoint(d, "llama", { files: { "generation_config.json": { eos_token_id: [2, 9] } } });
    const ck = openCheckpoint(d);
    expect(ck.generationConfig).toEqual({ eos_token_id: [2, 9] });
    expect(resolveModelSpec(ck).eosTokenIds).toEqual([2, 9]);
  });

  it("chat template: chat_template.jinja wins over tokenizer_config.json; list form picks 'default'", () => {
    const tok = { model: { type: "WordLevel", vocab: { a: 0 }, unk_token: "a" }, added_tokens: [] };
    const d = fresh();
    writeTinyCheckpoint(d, "llama", {
      files: {
        "tokenizer.json": tok,
        "tokenizer_config.json": {
          chat_template: [
            { name: "tool_use", template: "T" },
            { name: "default", template: "D" },
          ],
        },
      },
    });
    expect(openCheckpoint(d).tokenizer?.chatTemplate).toBe("D");
    fs.writeFileSync(path.join(d, "chat_template.jinja"), "{{ bos_token }}J");
    expect(openCheckpoint(d).tokenizer?.chatTemplate).toBe("{{ bos_token }}J");
    const e = (() => {
      fs.writeFileSync(path.join(d, "tokenizer_config.json"), JSON.stringify({ chat_template: 5 }));
      return thrown(() => openCheckpoint(d));
    })();
    expect(e.field).toBe("chat_template");
  });

  it("no tokenizer.json → tokenizer undefined", () => {
    const d = fresh();
    writeTinyCheckpoint(d, "dream");
    expect(openCheckpoint(d).tokenizer).toBeUndefined();
  });
});

describe("openCheckpoint errors", () => {
  it("missing folder, missing config, no weights, only .bin", () => {
    expect(thrown(() => openCheckpoint(path.join(root, "nope"))).message).toContain("not found");
    const d = fresh();
    fs.mkdirSync(d);
    expect(thrown(() => openCheckpoint(d)).file).toBe(path.join(d, "config.json"));
    fs.writeFileSync(path.join(d, "config.json"), "{}");
    expect(thrown(() => openCheckpoint(d)).field).toBe("weights");
    fs.writeFileSync(path.join(d, "pytorch_model.bin"), "x");
    expect(thrown(() => openCheckpoint(d)).hint).toContain("safetensors");
  });

  function sharded(): string {
    const d = fresh();
    writeTinyCheckpoint(d, "llama", { shards: 2 });
    return d;
  }
  const indexOf = (d: string) => JSON.parse(fs.readFileSync(path.join(d, "model.safetensors.index.json"), "utf8"));
  const writeIndex = (d: string, v: unknown) => fs.writeFileSync(path.join(d, "model.safetensors.index.json"), JSON.stringify(v));

  it("index pointing at a missing shard", () => {
    const d = sharded();
    fs.rmSync(path.join(d, "model-00002-of-00002.safetensors"));
    const e = thrown(() => openCheckpoint(d));
    expect(e.file).toMatch(/model\.safetensors\.index\.json$/);
    expect(e.expected).toContain("model-00002-of-00002.safetensors");
  });

  it("index naming the wrong shard for a tensor", () => {
    const d = sharded();
    const idx = indexOf(d);
    idx.weight_map["model.norm.weight"] = "model-00001-of-00002.safetensors";
    writeIndex(d, idx);
    const e = thrown(() => openCheckpoint(d));
    expect(e.field).toBe("weight_map.model.norm.weight");
  });

  it("tensor listed in the index but absent from every shard", () => {
    const d = sharded();
    const idx = indexOf(d);
    idx.weight_map["model.extra.weight"] = "model-00001-of-00002.safetensors";
    writeIndex(d, idx);
    expect(thrown(() => openCheckpoint(d)).field).toBe("model.extra.weight");
  });

  it("tensor present in two shards", () => {
    const d = sharded();
    // Copy shard 1 over shard 2: every tensor of shard 1 is now in both.
    fs.copyFileSync(path.join(d, "model-00001-of-00002.safetensors"), path.join(d, "model-00002-of-00002.safetensors"));
    const e = thrown(() => openCheckpoint(d));
    expect(e.message).toMatch(/two shards|does not list|not in the shard/);
  });

  it("path traversal, wrong types and absurd total_size in the index", () => {
    const d = sharded();
    const idx = indexOf(d);
    writeIndex(d, { ...idx, weight_map: { ...idx.weight_map, "model.norm.weight": "../x.safetensors" } });
    expect(thrown(() => openCheckpoint(d)).field).toBe("weight_map.model.norm.weight");
    writeIndex(d, { ...idx, weight_map: [] });
    expect(thrown(() => openCheckpoint(d)).field).toBe("weight_map");
    writeIndex(d, { ...idx, metadata: { total_size: 1e15 } });
    expect(thrown(() => openCheckpoint(d)).field).toBe("metadata.total_size");
    writeIndex(d, { ...idx, metadata: { total_size: -3 } });
    expect(thrown(() => openCheckpoint(d)).field).toBe("metadata.total_size");
    writeIndex(d, { ...idx, metadata: { total_size: String(idx.metadata.total_size) } });
    expect(openCheckpoint(d).tensors.size).toBeGreaterThan(0);
  });

  it("config.json that is not an object or not JSON", () => {
    const d = fresh();
    writeTinyCheckpoint(d, "llama");
    fs.writeFileSync(path.join(d, "config.json"), "[1,2]");
    expect(thrown(() => openCheckpoint(d)).found).toBe("an array");
    fs.writeFileSync(path.join(d, "config.json"), '{"a":');
    expect(thrown(() => openCheckpoint(d)).message).toContain("not valid JSON");
  });
});
