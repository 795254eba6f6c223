/**
 * The `floatscope` CLI through `main(argv, io)`: command table, help, usage errors, `inspect`
 * and `forward` (including the safetensors it writes).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { COMMANDS } from "../../src/cli/commands.js";
import { main } from "../../src/cli/main.js";
import { referenceForward, probesFromAttention } from "../../src/reference/forward.js";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint } from "../support/engine-tiny.js";

const ck = makeTinyEngineCheckpoint({ layers: 2, kvHeads: 2, seed: 51 });
// a WordLevel tokenizer: "w0".."w59" → 0..59, [UNK] → 60
const vocab: Record<string, number> = Object.fromEntries(Array.from({ length: 60 }, (_, i) => [`w${i}`, i]));
vocab["[UNK]"] = 60;
fs.writeFileSync(
  path.join(ck.dir, "tokenizer.json"),
  JSON.stringify({
    version: "1.0",
    truncation: null,
    padding: null,
    added_tokens: [{ id: 60, content: "[UNK]", single_word: false, lstrip: false, rstrip: false, normalized: false, special: true }],
    normalizer: null,
    pre_tokenizer: { type: "Whitespace" },
    post_processor: null,
    decoder: null,
    model: { type: "WordLevel", vocab, unk_token: "[UNK]" },
  }),
);
fs.writeFileSync(path.join(ck.dir, "tokenizer_config.json"), JSON.stringify({ unk_token: "[UNK]" }));
const outDir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-cli-"));
afterAll(() => {
  ck.cleanup();
  fs.rmSync(outDir, { recursive: true, force: true });
});

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

describe("floatscope CLI", () => {
  it("lists its commands and has a node shebang", async () => {
    const r = await run("--help");
    expect(r.code).toBe(0);
    for (const name of Object.keys(COMMANDS)) expect(r.out).toContain(name);
    expect(fs.readFileSync(new URL("../../src/cli/main.ts", import.meta.url), "utf8").startsWith("#!/usr/bin/env node\n")).toBe(true);
  });

  it("rejects unknown commands and flags with exit code 2", async () => {
    const a = await run("frobnicate");
    expect(a.code).toBe(2);
    expect(a.err).toMatch(/unknown command "frobnicate"/);
    const b = await run("forward", ck.dir, "--ids", "1,2", "--probs", "received");
    expect(b.code).toBe(2);
    expect(b.err).toMatch(/--probs/);
    expect(b.err).toMatch(/floatscope forward --help/);
    const c = await run("forward", ck.dir, "--ids", "1,2", "--probes", "recieved");
    expect(c.code).toBe(2);
    expect(c.err).toMatch(/"recieved"[\s\S]*|received/);
    const d = await run("forward", ck.dir, "--ids", "1,x");
    expect(d.code).toBe(2);
    expect(d.err).toMatch(/--ids/);
  });

  it.each(Object.keys(COMMANDS))("%s --help prints usage", async (name) => {
    const r = await run(name, "--help");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(new RegExp(`^Usage: floatscope ${name}`));
  });

  it("inspect describes the checkpoint and its memory", async () => {
    const r = await run("inspect", ck.dir, "--seq", "64,4096");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/family\s+llama/);
    expect(r.out).toMatch(/4 heads \/ 2 kv heads \(GQA 2:1\)/);
    expect(r.out).toMatch(/\n {2}64 /);
    expect(r.out).toMatch(/\n {2}4096 .*attention/);
    const j = JSON.parse((await run("inspect", ck.dir, "--json")).out);
    expect(j.sizes.layers).toBe(2);
    expect(j.dtypes.F32.tensors).toBe(ck.tensors.size);
    expect(j.memory.map((m: { seq: number }) => m.seq)).toEqual([256, 1024, 4096]);
    const bad = await run("inspect", path.join(outDir, "nope"));
    expect(bad.code).toBe(1);
    expect(bad.err).toMatch(/CheckpointError/);
  });

  it("forward --ids writes probes and logits to safetensors with metadata", async () => {
    const file = path.join(outDir, "probes.safetensors");
    const ids = [4, 8, 15, 16, 23, 42];
    const r = await run(
      "forward",
      ck.dir,
      "--ids",
      ids.join(","),
      "--probes",
      "received,argmax,pattern",
      "--layers",
      "1",
      "--out",
      file,
      "--logits",
      "--threads",
      "1",
      "--query-chunks",
      "2",
    );
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/blocks\.0\.attn\.received {2}top keys: /);
    const h = readSafetensorsHeader(file);
    const byName = new Map(h.tensors.map((t) => [t.name, t]));
    expect([...byName.keys()].sort()).toEqual([
      "blocks.0.attn.argmax_key",
      "blocks.0.attn.argmax_prob",
      "blocks.0.attn.received",
      "blocks.1.attn.argmax_key",
      "blocks.1.attn.argmax_prob",
      "blocks.1.attn.pattern",
      "blocks.1.attn.received",
      "logits",
    ]);
    expect(byName.get("blocks.1.attn.argmax_key")!.dtype).toBe("I32");
    expect(byName.get("blocks.1.attn.pattern")!.shape).toEqual([1, 4, 6, 6]);
    const meta = JSON.parse(h.metadata.floatscope);
    expect(meta).toMatchObject({ format: "floatscope-forward", version: 1, ids, family: "llama" });
    expect(meta.axes["blocks.0.attn.received"]).toEqual(["batch", "key"]);
    const ref = referenceForward(ck.spec, ck.weights, { ids, batch: 1, seq: 6 });
    expectClose(readTensorF32(byName.get("logits")!), ref.logits, 2e-4, "logits");
    expectClose(readTensorF32(byName.get("blocks.1.attn.pattern")!), ref.attention[1], 1e-5, "pattern");
    const recv = probesFromAttention(ck.spec, ref.attention, { received: true }, { batch: 1, seq: 6 });
    expectClose(readTensorF32(byName.get("blocks.0.attn.received")!), recv.get("blocks.0.attn.received")!.data, 1e-5, "received");
  });

  it("forward --text tokenises with the checkpoint's tokenizer; region_sum takes --regions", async () => {
    const file = path.join(outDir, "text.safetensors");
    const r = await run("forward", ck.dir, "--text", "w3 w1 w4 w1 w5", "--probes", "region_sum", "--regions", "0-2,2-5", "--out", file);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/5 tokens/);
    const h = readSafetensorsHeader(file);
    expect(JSON.parse(h.metadata.floatscope).ids).toEqual([3, 1, 4, 1, 5]);
    const rs = h.tensors.find((t) => t.name === "blocks.1.attn.region_sum")!;
    expect(rs.shape).toEqual([1, 2, 2]);
    const v = readTensorF32(rs);
    // causal: region 0 queries never see region 1 keys; every query row sums to 1, so the total is 5
    expect(v[1]).toBe(0);
    expect(v[0] + v[1] + v[2] + v[3]).toBeCloseTo(5, 5);
    const bad = await run("forward", ck.dir, "--ids", "1,2,3", "--probes", "region_sum", "--regions", "0-9");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/--regions/);
  });
});
