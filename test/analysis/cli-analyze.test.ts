/**
 * `floatscope analyze` end to end: traces written with the real trace writer, read back by the
 * validating reader, analysed, printed as JSON.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { writeTrace } from "../../src/trace/writer.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-analyze-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}

function file(name: string, l1: number[]): string {
  const f = path.join(dir, name);
  const fin = probeMap(probe(0, "received", [5], [0.1, 0.1, 0.1, 0.6, 0.1]), probe(1, "received", [5], l1));
  writeTrace(f, makeTrace({ sequence: [1, 10, 11, 12, 2], promptLength: 3, finalProbes: fin, steps: [step(0, [1, 10, 11, 99, 99], fin)] }));
  return f;
}
const a = file("a.fstrace", [0.5, 0.12, 0.12, 0.12, 0.12]);
const b = file("b.fstrace", [0.3, 0.2, 0.2, 0.15, 0.15]);

describe("floatscope analyze", () => {
  it("absorption --rule upstream --json: top-1 over Σc per layer, mean ± population σ over the two traces", async () => {
    const r = await run("analyze", "absorption", a, b, "--rule", "upstream", "--json");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    // layer 0: 0.6 in both → mean 0.6, σ 0; layer 1: 0.5/0.98 and 0.3/1.0 → mean 0.40510, σ 0.10510
    expect(j.summary[0].mean).toBeCloseTo(0.6, 6);
    expect(j.summary[0].std).toBeCloseTo(0, 6);
    const m = (0.5 / 0.98 + 0.3) / 2;
    expect(j.summary[1].mean).toBeCloseTo(m, 6);
    expect(j.summary[1].std).toBeCloseTo(Math.abs(0.5 / 0.98 - m), 6);
    expect(j.rule).toMatch(/^upstream/);
  });
  it("text output prints a markdown table; unknown analyses and rules are usage errors", async () => {
    const r = await run("analyze", "absorption", a, "--rule", "top-k");
    expect(r.code).toBe(0);
    expect(r.out).toContain("|model|rule|layer|mean|std|n|anchors|");
    expect((await run("analyze", "absorb", a)).code).toBe(2);
    const bad = await run("analyze", "absorption", a, "--rule", "top1");
    expect(bad.code).toBe(2);
    expect(bad.err).toMatch(/mean\+ksigma/);
    expect((await run("analyze", "absorption")).code).toBe(2);
  });
  it("a missing probe exits 1 with the probe name and how to record it", async () => {
    const r = await run("analyze", "qk", a, "--json");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/blocks\.0\.attn\.q_rot/);
    expect(r.err).toMatch(/record it with probes: \{ qk: \{ layers: \[0\] \} \}/);
  });
  it("drift reads the per-step records", async () => {
    const r = await run("analyze", "drift", a, "--rule", "top-k", "--layers", "0", "--json");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.anchors.map((x: { position: number }) => x.position)).toEqual([3]);
    expect(j.tracks).toHaveLength(1);
  });
});
