/**
 * The GPU set-up seen from a machine without one: `--device cuda` where onnxruntime-node's CUDA
 * provider library is absent runs on the CPU and says so in one line (what happened and how to get
 * the provider), with no stack trace; `--device auto` then runs on the CPU silently. Skipped where
 * the provider is installed (the device tier, test/runtime/cuda.test.ts, covers that case).
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { cudaProviderInstalled } from "../../src/runtime/session.js";

const root = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "..");
const tinyLlama = path.join(root, "models/tiny-llama");
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|native\))$/m;

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

describe.skipIf(cudaProviderInstalled())("--device cuda without onnxruntime's CUDA provider", () => {
  it("forward runs on the CPU and says so in one line, naming the set-up step, without a stack trace", async () => {
    const r = await run("forward", tinyLlama, "--ids", "1,2,3", "--device", "cuda", "--threads", "1");
    expect(r.code).toBe(0);
    const lines = r.err.trim().split("\n");
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatch(/CUDA execution provider/);
    expect(lines[0]).toMatch(/running on CPU instead/);
    expect(lines[0]).toMatch(/bash scripts\/setup-cuda\.sh/);
    expect(r.err).not.toMatch(STACK_LINE);
  });

  it("--device auto falls back to the CPU without a word", async () => {
    const r = await run("forward", tinyLlama, "--ids", "1,2,3", "--device", "auto", "--threads", "1");
    expect(r.code).toBe(0);
    expect(r.err.trim()).toBe("");
  });
});
