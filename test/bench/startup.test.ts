/**
 * bench/startup.ts renders its tables from process reports (`--from`): hand-made reports of one
 * model in, the medians, ratios against the cache-off baseline and questions per minute worked out
 * by hand out.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { expect, it } from "vitest";

const ROOT = path.resolve(import.meta.dirname, "../..");

/** One process report as bench/startup-worker.ts prints it; every phase 0 unless given. */
function report(over: Record<string, unknown>): Record<string, unknown> {
  return {
    model: "tiny-llama",
    cache: "off",
    importsMs: 0,
    importsCpuMs: 0,
    gridMs: 0,
    fingerprintMs: 0,
    filesMs: 0,
    scanMs: 0,
    scanRemembered: true,
    buildMs: 0,
    sessionMs: 0,
    buildCpuMs: 0,
    sessionCpuMs: 0,
    readyMs: 0,
    readyCpuMs: 0,
    firstStepMs: 0,
    firstStepCpuMs: 0,
    toFirstStepMs: 0,
    toFirstStepCpuMs: 0,
    questionMs: [],
    steps: 1,
    stepMs: [0],
    sessionCache: { state: "off" },
    quantizedWeights: "dequantize",
    nodes: 388,
    errors: [],
    load: [1, 2],
    ...over,
  };
}

it("renders medians, × off (CPU ratio) and questions per minute from the reports", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "bench-startup-"));
  const entry = { bytes: 11e6 };
  const reports = [
    report({ phase: "first", scanRemembered: false, scanMs: 700 }),
    ...[4000, 6000, 5000].map((t, i) => report({ phase: "round", toFirstStepMs: t, toFirstStepCpuMs: [1000, 1200, 1100][i] })),
    ...[8000, 7000, 9000].map((t) =>
      report({ phase: "round", cache: "on", toFirstStepMs: t, toFirstStepCpuMs: 1650, sessionCache: { state: "written", ...entry } }),
    ),
    ...[3000, 2000, 10000].map((t, i) =>
      report({
        phase: "round",
        cache: "on",
        toFirstStepMs: t,
        toFirstStepCpuMs: [900, 1000, 800][i],
        sessionCache: { state: "hit", ...entry },
      }),
    ),
    report({
      phase: "throughput",
      questionMs: [1000, 3000, 2000],
      questionCpuMs: [500, 700, 600],
      steps: 9,
      stepMs: [99, 10, 30, 20, 40, 50, 60, 70, 80],
    }),
  ];
  const from = path.join(dir, "reports.jsonl");
  fs.writeFileSync(from, reports.map((r) => JSON.stringify(r)).join("\n") + "\n");
  const out = path.join(dir, "BENCH.md");
  const r = spawnSync(process.execPath, ["--import", "tsx", "bench/startup.ts", "--from", from], {
    cwd: ROOT,
    encoding: "utf8",
    env: { ...process.env, FLOATSCOPE_BENCH_OUT: out },
    timeout: 120_000,
  });
  expect(r.status, r.stderr).toBe(0);
  const md = fs.readFileSync(out, "utf8");
  const row = (first: string, second: string) => {
    const line = md.split("\n").find((l) => l.startsWith(`| ${first} | ${second} |`));
    expect(line, `a row "${first} | ${second}"`).toBeDefined();
    return line!
      .split("|")
      .map((c) => c.trim())
      .slice(1, -1);
  };
  // baseline: medians 5.0 s wall, 1.1 s CPU to the first step
  expect(row("tiny-llama", "off (baseline)").slice(2, 8)).toEqual(["3", "0.0 (0.0)", "0.0 (0.0)", "5.0 (1.1)", "4.0, 6.0, 5.0", "—"]);
  // written: 8.0 / 5.0 = 1.60, CPU 1.65 / 1.1 = 1.50; entry 11 MB
  expect(row("tiny-llama", "on, entry written").slice(5, 9)).toEqual(["8.0 (1.6)", "8.0, 7.0, 9.0", "1.60 (1.50)", "11"]);
  // loaded: 3.0 / 5.0 = 0.60, CPU 0.9 / 1.1 = 0.818…
  expect(row("tiny-llama", "on, entry loaded").slice(5, 9)).toEqual(["3.0 (0.9)", "3.0, 2.0, 10.0", "0.60 (0.82)", "11"]);
  // the first process scanned the weights; the next ones found the verdict
  expect(row("tiny-llama", "first process, empty caches")[7]).toBe("0.70");
  expect(row("tiny-llama", "next processes (cache off)")[7]).toBe("0.00 (remembered)");
  // 3 questions, 9 steps; median question 2 s → 30 a minute; CPU 0.6 s; steps after the first: median of 10…80 = 45 ms
  expect(row("tiny-llama", "tiny").slice(3)).toEqual(["3", "3.0", "2.00", "0.60", "30", "45", "1.0–2.0"]);
  fs.rmSync(dir, { recursive: true, force: true });
});
