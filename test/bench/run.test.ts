/**
 * `npm run bench -- --quick --only speed` on tiny shapes writes a BENCHMARKS-style file whose tables
 * have the structure the full run's have (timings are not checked: they mean nothing at these sizes),
 * and the PyTorch side of the comparison computes what the engine computes.
 * Needs Debian's python3-torch under /usr/bin/python3; without it the test is skipped and says why.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { median } from "../../bench/lib.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const PY = "/usr/bin/python3";
const HAS_TORCH = fs.existsSync(PY) && spawnSync(PY, ["-c", "import torch, numpy"], { timeout: 60_000 }).status === 0;
const reason = HAS_TORCH ? "" : " (skipped: /usr/bin/python3 cannot import torch — apt-get install python3-torch python3-numpy)";

/** The markdown table that follows the first line matching `header` in `text`: [header cells, ...rows]. */
function tableAfter(text: string, header: RegExp): string[][] {
  const lines = text.split("\n");
  const start = lines.findIndex((l) => header.test(l) && l.startsWith("|"));
  expect(start, `a table whose header matches ${header}`).toBeGreaterThanOrEqual(0);
  const rows: string[][] = [];
  for (let i = start; i < lines.length && lines[i].startsWith("|"); i++) {
    rows.push(
      lines[i]
        .slice(1, -1)
        .split("|")
        .map((c) => c.trim()),
    );
  }
  expect(rows[1].every((c) => c === "---")).toBe(true);
  for (const r of rows) expect(r.length).toBe(rows[0].length);
  return [rows[0], ...rows.slice(2)];
}

const number = /^\d+(\.\d+)?$/;
const load = /^\d+\.\d → \d+\.\d$/;

describe("bench/lib median", () => {
  it("is the middle element for odd counts and the mean of the two middle ones for even counts", () => {
    expect(median([5, 1, 3])).toBe(3);
    expect(median([4, 1, 3, 2])).toBe(2.5);
    expect(median([10, 20])).toBe(15);
  });
});

describe(`npm run bench -- --quick${reason}`, () => {
  it.skipIf(!HAS_TORCH)(
    "writes the goals and the speed-and-memory tables, one row per configuration, load in every row",
    () => {
      const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-quick-")), "BENCH.md");
      const r = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", "--quick", "--only", "speed", "--out", out], {
        cwd: ROOT,
        encoding: "utf8",
        timeout: 580_000,
      });
      expect(r.status, (r.stderr ?? "").slice(-3000)).toBe(0);
      const md = fs.readFileSync(out, "utf8");
      for (const h of [
        "## Goals",
        "## Per denoising step vs the paper's method and eager output_attentions",
        "## Plain forward vs PyTorch, FLOP/s and threads",
        "## Capture overhead per probe set",
        "## Peak memory and trace bytes over T",
      ]) {
        expect(md).toContain(`\n${h}\n`);
      }
      expect(md).not.toContain("## Engine\n"); // --only speed leaves out the per-module sections

      const [gh, ...goals] = tableAfter(md, /^\| goal \| target/);
      expect(gh).toEqual(["goal", "target", "measured (this run)", "status"]);
      // Two step goals per T (vs output_attentions, vs the paper), GEMM share, vs PyTorch, head-mean maps, memory.
      expect(goals.length).toBe(2 * 2 + 2 + 1 + 1);
      for (const g of goals) expect(["met", "**not met**", "—"]).toContain(g[3]);

      const [, ...steps] = tableAfter(md, /^\| T \| engine ms \| output_attentions ms/);
      expect(steps.map((s) => s[0])).toEqual(["64", "128"]);
      for (const s of steps) {
        for (const c of s.slice(1, 6)) expect(c).toMatch(number);
        expect(s[7]).toMatch(load);
      }

      const [fh, ...fwd] = tableAfter(md, /^\| T \| threads \| engine ms \| PyTorch ms/);
      expect(fwd.map((f) => `${f[0]}/${f[1]}`)).toEqual(["64/1", "64/2", "128/1", "128/2"]);
      expect(fwd.every((f) => load.test(f[fh.indexOf("load")]))).toBe(true);
      expect(fwd[0][fh.indexOf("engine / GEMM peak")]).toMatch(/^\d+ %$/);

      // The same weights on both sides: the section quotes the logit difference, which must be float32-small.
      const diff = /max \|logit difference\| over the first 4 rows at T 32 = (\d\.\de[+-]\d+)/.exec(md);
      expect(diff).not.toBeNull();
      expect(Number(diff![1])).toBeLessThan(1e-4);
      expect(md).toMatch(/OpenBLAS core type \(PyTorch side\): OpenBLAS detected \w+/);

      const [, ...cap] = tableAfter(md, /^\| probes \| ms \/ forward/);
      expect(cap.map((c) => c[0].split(" ")[0])).toEqual(["none", "received", "all", "head-mean", "per-head"]);
      expect(cap[0][2]).toBe("1.00");

      const [mh, ...mem] = tableAfter(md, /^\| T \| forward \| query chunks \| graph nodes \| RSS before MiB/);
      // Two rows per T: the denoising step (the goal row) and the plain all-rows forward.
      expect(mem.map((m) => m[0])).toEqual(["64", "64", "128", "128", "256", "256"]);
      expect(mem.map((m) => m[1].split(" ")[0])).toEqual(["denoising", "plain", "denoising", "plain", "denoising", "plain"]);
      // "above weights" is the peak less the weight bytes the model description states; "above RSS before" the peak less the RSS before
      const weightsMiB = Number(/f32 \((\d+) MiB of weights\)/.exec(md.slice(md.indexOf("## Peak memory")))![1]);
      for (const m of mem) {
        const [before, peak] = [Number(m[mh.indexOf("RSS before MiB")]), Number(m[mh.indexOf("peak RSS MiB")])];
        expect(peak).toBeGreaterThanOrEqual(before);
        expect(Math.abs(peak - Number(m[mh.indexOf("above weights MiB")]) - weightsMiB)).toBeLessThan(1);
        // the step rows are the median of several fresh processes (each one's peak listed), the plain forward one process
        const each = m[mh.indexOf("each process's peak MiB")].split(", ").map(Number);
        expect(each.length).toBe(m[1].startsWith("denoising") ? 2 : 1);
        expect(Math.abs(median(each) - peak)).toBeLessThan(0.15);
        if (each.length === 1) expect(Math.abs(peak - Number(m[mh.indexOf("above RSS before MiB")]) - before)).toBeLessThan(0.15);
      }
    },
    600_000,
  );

  it.skipIf(!HAS_TORCH)("the paper's per-layer re-forward and output_attentions give the same head-mean maps", () => {
    const code = `
import sys, torch
sys.path.insert(0, "bench")
from torch_model import Shape, EagerMDM, random_weights
s = Shape(layers=3, width=32, heads=4, kv_heads=2, ffn=48, vocab=64, qkv_bias=True)
w = random_weights(s, 1)
for k in w:
    if k.endswith("_bias"): w[k] = torch.randn_like(w[k]) * 0.1
m = EagerMDM(s, w)
ids = torch.randint(0, 64, (1, 12))
l1, maps = m.step_paper(ids)
l2, rec, probs = m.step_output_attentions(ids)
assert torch.allclose(l1, l2, atol=1e-6)
for l in range(3):
    assert torch.allclose(maps[l], probs[l].mean(1), atol=1e-6), l
    assert torch.allclose(rec[l], probs[l].mean(dim=(1, 2)), atol=1e-6)
    assert torch.allclose(probs[l].sum(-1), torch.ones(1, 4, 12), atol=1e-5)
print("ok")
`;
    const r = spawnSync(PY, ["-c", code], { cwd: ROOT, encoding: "utf8", timeout: 120_000 });
    expect(r.status, r.stderr).toBe(0);
    expect(r.stdout.trim()).toBe("ok");
  });
});
