/**
 * bench/gpu/table.py, the GPU check's one table: PyTorch's rows meet the engine's by model shape and T
 * ("LLaDA-8B" / "llada-tiny" ↔ the checkpoint folders "llada-8b" / "gpu-tiny-llada"), configurations that did
 * not finish read "—", and an engine that could not run reads "blocked" with its reason under the table.
 * Inputs are hand-made files in the formats anchor.py and engine-step.ts write.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const root = path.resolve(import.meta.dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-gpu-table-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const anchor = {
  info: { torch: "2.11.0", device: "cuda", dtype: "bfloat16", gpu: "NVIDIA H100 80GB HBM3", cuda: "13.0" },
  results: [
    {
      model: "LLaDA-8B",
      T: 256,
      plain_eager: { ms: 41.25 },
      plain_sdpa: { ms: 30.04 },
      output_attentions: { ms: 52.5 },
      paper: { ms: 1390.0 },
    },
    { model: "Dream-7B", T: 256, plain_eager: { ms: 38.0 }, output_attentions: { error: "failed: CUDA out of memory" } },
  ],
};
const engine = {
  node: "v20.20.2",
  onnxruntime: "1.30.0",
  device: "cuda",
  results: [
    { model: "llada-8b", probes: "none", T: 256, ms: 35.04 },
    { model: "llada-8b", probes: "default", T: 256, ms: 36.96 },
  ],
};

function table(files: Record<string, string>): string {
  const dir = fs.mkdtempSync(path.join(tmp, "out-"));
  for (const [name, text] of Object.entries(files)) fs.writeFileSync(path.join(dir, name), text);
  const r = spawnSync("python3", [path.join(root, "bench/gpu/table.py"), dir], { encoding: "utf8" });
  expect(r.status, r.stderr).toBe(0);
  return r.stdout;
}
const row = (out: string, model: string) =>
  out
    .split("\n")
    .find((l) => l.startsWith(`| ${model} |`))!
    .split("|")
    .map((c) => c.trim());

describe("bench/gpu/table.py", () => {
  it("puts the engine's medians beside PyTorch's for the same shape and T; unfinished cells read —", () => {
    const out = table({ "anchor.json": JSON.stringify(anchor), "engine-step.json": JSON.stringify(engine) });
    expect(out).toMatch(
      /^GPU step: PyTorch 2\.11\.0 \(bfloat16\) on NVIDIA H100 80GB HBM3 beside the floatscope engine \(onnxruntime-node 1\.30\.0 on cuda/,
    );
    // | model | T | SDPA | eager | output_attentions | paper | engine none | engine default | engine maps |
    expect(row(out, "LLaDA-8B").slice(1, 10)).toEqual(["LLaDA-8B", "256", "30.0", "41.2", "52.5", "1390.0", "35.0", "37.0", "—"]);
    expect(row(out, "Dream-7B").slice(1, 10)).toEqual(["Dream-7B", "256", "—", "38.0", "—", "—", "—", "—", "—"]);
    expect(out).not.toMatch(/Engine not run/);
  });

  it("an engine that could not run reads 'blocked', with the reason under the table", () => {
    const reason = "no Node.js on this machine, and no GPU bundle was carried";
    const out = table({ "anchor.json": JSON.stringify(anchor), "engine-blocked.txt": reason + "\n" });
    expect(row(out, "LLaDA-8B").slice(7, 10)).toEqual(["blocked", "blocked", "blocked"]);
    expect(out.trim().split("\n").at(-1)).toBe(`Engine not run: ${reason}`);
  });
});
