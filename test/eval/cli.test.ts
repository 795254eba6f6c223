import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { readResults } from "../../src/qa/runner.js";
import { readTraceHeader } from "../../src/trace/reader.js";
import { HELDOUT, PARITY } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-evalcli-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function io() {
  const out: string[] = [],
    err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
}

describe("floatscope eval", () => {
  it("runs a real checkpoint (parity llada fixture), writes rows, and resumes", async () => {
    const results = path.join(tmp, "r.jsonl");
    const args = [
      "eval",
      path.join(PARITY, "llada", "model"),
      "--data",
      HELDOUT,
      "--limit",
      "2",
      "--setting",
      "distractors",
      "--k",
      "2",
      "--gold-position",
      "1",
      "--gen-length",
      "4",
      "--steps",
      "4",
      "--batch-size",
      "2",
      "--out",
      results,
    ];
    const a = io();
    expect(await main(args, a.io)).toBe(0);
    expect(a.out.join("\n")).toMatch(/gold@1\/k2\t2\t0\t/);
    const rows = readResults(results);
    expect(rows.length).toBe(2);
    for (const r of rows) {
      expect(r.goldIndex).toBe(1);
      expect(r.passages).toBe(3);
      expect(r.error).toBeUndefined();
      expect(typeof r.response).toBe("string");
      expect(r.promptTokens).toBeGreaterThan(100); // the paper LLaDA prompt, templated
    }
    const b = io();
    expect(await main(args, b.io)).toBe(0);
    expect(b.err.join("\n")).toMatch(/2 resumed/);
    expect(readResults(results).length).toBe(2);
    // Batched (2 per forward) and one-by-one runs agree on the predictions of this deterministic sampler.
    const single = path.join(tmp, "s.jsonl");
    expect(await main([...args.slice(0, -4), "--batch-size", "1", "--out", single], io().io)).toBe(0);
    expect(readResults(single).map((r) => r.response)).toEqual(rows.map((r) => r.response));
  });
  it("--sampler / --alg / --block-length: a Dream-style model decoded semi-autoregressively by the LLaDA sampler", async () => {
    const dream = path.join(PARITY, "dream", "model");
    const base = ["eval", dream, "--data", HELDOUT, "--limit", "1", "--gen-length", "4", "--steps", "4"];
    const traces = path.join(tmp, "semi-ar");
    const a = io();
    expect(await main([...base, "--sampler", "llada", "--block-length", "2", "--traces", traces, "--mkdir"], a.io), a.err.join("\n")).toBe(
      0,
    );
    const files = (fs.readdirSync(traces, { recursive: true }) as string[]).filter((f) => f.endsWith(".fstrace")); // one folder per setting
    expect(files.length).toBe(1);
    const settings = readTraceHeader(path.join(traces, files[0])).settings;
    // the preset's Dream order (entropy) is dropped with its sampler: LLaDA's default order, 2 blocks of 2
    expect([settings.sampler, settings.alg, settings.genLength, settings.blockLength, settings.steps]).toEqual([
      "llada",
      "low_confidence",
      4,
      2,
      4,
    ]);
    // blocks are LLaDA's: the Dream sampler refuses them with the setting named, and an order must be the sampler's
    const b = io();
    expect(await main([...base, "--block-length", "2"], b.io)).not.toBe(0);
    expect(b.err.join("\n")).toMatch(/blockLength/);
    const c = io();
    expect(await main([...base, "--sampler", "llada", "--alg", "entropy"], c.io)).not.toBe(0);
    expect(c.err.join("\n")).toMatch(/low_confidence/);
    const d = io();
    expect(await main([...base, "--sampler", "mdm"], d.io)).toBe(2);
    expect(d.err.join("\n")).toMatch(/--sampler/);
  });
  it("usage errors", async () => {
    const saved = process.env.FLOATSCOPE_NQ;
    delete process.env.FLOATSCOPE_NQ;
    try {
      const a = io();
      expect(await main(["eval", path.join(PARITY, "llada", "model")], a.io)).toBe(2);
      expect(a.err.join("\n")).toMatch(/--data/);
      const b = io();
      expect(await main(["eval", path.join(PARITY, "llada", "model"), "--data", HELDOUT, "--setting", "sideways"], b.io)).not.toBe(0);
      expect(b.err.join("\n")).toMatch(/closed-book/);
    } finally {
      if (saved !== undefined) process.env.FLOATSCOPE_NQ = saved;
    }
  });
});
