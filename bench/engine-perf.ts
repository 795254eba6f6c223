/**
 * Measurements behind the engine's defaults (docs/engine.md, "Performance choices"); not a test, and
 * not part of `npm run bench`. A random LLaDA-shaped (bidirectional) model, d 512, 4 layers, 8 heads,
 * ffn 1376, vocab 4096, f32. Every comparison is interleaved in one process (A B A B …, medians),
 * with the load average printed, so ratios are from the same run:
 *
 *   npx tsx bench/engine-perf.ts time   # summaries on/off, padding (mask) on/off, fused vs decomposed attention
 *   ENGINE_PERF_OPTIONS=1 npx tsx bench/engine-perf.ts time   # … and 1 vs 2 threads, session options
 *   npx tsx bench/engine-perf.ts rss    # peak RSS above the weights, T 256…4096, queryChunks "auto" vs 1 (child processes)
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { readSafetensorsHeader, writeSafetensors, type TensorToWrite } from "../src/checkpoint/safetensors.js";
import type { TensorInfo } from "../src/checkpoint/types.js";
import type { ModelSpec } from "../src/graph/spec.js";
import { createEngine, type EngineOptions, type OnnxEngine } from "../src/runtime/engine.js";
import type { ForwardInput } from "../src/runtime/types.js";
import { benchLlamaSpec, median } from "./lib.js";

const L = 4,
  D = 512,
  H = 8,
  F = 1376,
  V = 4096;

function spec(): ModelSpec {
  return benchLlamaSpec(
    { layers: L, hidden: D, heads: H, ffn: F, vocab: V },
    { family: "llada", architecture: "LLaDAModelLM", causal: false, maxPositionEmbeddings: 8192 },
  );
}

function writeModel(dir: string, s: ModelSpec): Map<string, TensorInfo> {
  let seed = 7;
  const rand = () => ((seed = (seed * 1103515245 + 12345) % 2 ** 31) / 2 ** 31) * 2 - 1;
  const t: Record<string, TensorToWrite> = {};
  const put = (name: string, shape: number[], scale: number, offset = 0) => {
    t[name] = { dtype: "F32", shape, data: Float32Array.from({ length: shape.reduce((a, b) => a * b, 1) }, () => offset + scale * rand()) };
  };
  put(s.weights.embed, [V, D], 0.5);
  for (const b of s.weights.blocks) {
    put(b.attnNorm, [D], 0.1, 1);
    put(b.mlpNorm, [D], 0.1, 1);
    for (const w of [b.q, b.k, b.v, b.o]) put(w, [D, D], 0.05);
    put(b.gate, [F, D], 0.05);
    put(b.up, [F, D], 0.05);
    put(b.down, [D, F], 0.03);
  }
  put(s.weights.finalNorm, [D], 0.1, 1);
  put(s.weights.lmHead, [V, D], 0.05);
  const file = path.join(dir, "model.safetensors");
  writeSafetensors(file, t);
  return new Map(readSafetensorsHeader(file).tensors.map((x) => [x.name, x]));
}

const load = () =>
  os
    .loadavg()
    .map((x) => x.toFixed(2))
    .join(" ");

/** Interleaved medians: each round runs every variant once, in order. */
async function interleave(variants: [string, () => Promise<unknown>][], rounds: number): Promise<Map<string, number>> {
  const times = new Map<string, number[]>(variants.map(([n]) => [n, []]));
  for (const [, f] of variants) await f(); // warm-up
  for (let r = 0; r < rounds; r++) {
    for (const [n, f] of variants) {
      const t = performance.now();
      await f();
      times.get(n)!.push(performance.now() - t);
    }
  }
  return new Map([...times].map(([n, ts]) => [n, median(ts)]));
}

function report(title: string, m: Map<string, number>): void {
  const base = [...m.values()][0];
  console.log(`\n${title} (load ${load()})`);
  for (const [n, ms] of m) console.log(`  ${n.padEnd(44)} ${ms.toFixed(1).padStart(8)} ms  ${(ms / base).toFixed(3)}×`);
}

async function time(dir: string, tensors: Map<string, TensorInfo>): Promise<void> {
  const s = spec();
  const mk = (o: EngineOptions) => createEngine({ spec: s, tensors }, { scanWeights: false, memoryBudgetBytes: 16 * 2 ** 30, ...o });
  for (const T of [256, 1024]) {
    const ids = Int32Array.from({ length: T }, (_, i) => (i * 7919) % V);
    const rows = Int32Array.from({ length: 32 }, (_, i) => T - 32 + i);
    const only = process.env.ENGINE_PERF_ONLY; // "fused": only the attention comparison
    const e = await mk({ probes: { received: true }, threads: 1 });
    const padded = new Uint8Array(T).fill(1);
    padded[0] = 0;
    const f = (x: Partial<ForwardInput>) => () => e.forward({ ids, batch: 1, seq: T, logitRows: rows, ...x });
    if (only !== "fused")
      report(
        `T ${T}, 1 thread, received, 32 logit rows`,
        await interleave(
          [
            ["summaries on (sampler step)", f({ summaries: true, returnLogits: false })],
            ["summaries off (If skips them)", f({})],
            ["summaries off, one padding key (mask Where runs)", f({ attentionMask: padded })],
          ],
          T === 256 ? 15 : 7,
        ),
      );
    await e.dispose();
    const fused = await mk({ probes: {}, threads: 1, fusedAttention: true });
    const decomposed = await mk({ probes: {}, threads: 1 });
    const g = (en: OnnxEngine) => () => en.forward({ ids, batch: 1, seq: T, logitRows: rows, summaries: true, returnLogits: false });
    report(
      `T ${T}, 1 thread, no probes (scoring runs), 32 logit rows + summaries`,
      await interleave(
        [
          ["decomposed attention", g(decomposed)],
          ["fused attention (MultiHeadAttention)", g(fused)],
        ],
        (T === 256 ? 15 : 7) * (only === "fused" ? 2 : 1),
      ),
    );
    await fused.dispose();
    await decomposed.dispose();
    if (process.env.ENGINE_PERF_OPTIONS !== "1") continue;
    const engines: [string, OnnxEngine][] = [
      ["1 thread (default options)", await mk({ probes: { received: true }, threads: 1 })],
      ["2 threads", await mk({ probes: { received: true }, threads: 2 })],
      [
        "2 threads, parallel execution, 2 inter-op",
        await mk({ probes: { received: true }, threads: 2, executionMode: "parallel", interOpThreads: 2 }),
      ],
      ["1 thread, optimisation level basic", await mk({ probes: { received: true }, threads: 1, graphOptimizationLevel: "basic" })],
      ["1 thread, optimisation level extended", await mk({ probes: { received: true }, threads: 1, graphOptimizationLevel: "extended" })],
      ["1 thread, no memory arena", await mk({ probes: { received: true }, threads: 1, cpuMemArena: false })],
      ['1 thread, queryChunks 1 (not "auto")', await mk({ probes: { received: true }, threads: 1, queryChunks: 1 })],
    ];
    report(
      `T ${T}, received, 32 logit rows + summaries: session options`,
      await interleave(
        engines.map(([n, en]) => [n, () => en.forward({ ids, batch: 1, seq: T, logitRows: rows, summaries: true, returnLogits: false })]),
        T === 256 ? 11 : 5,
      ),
    );
    for (const [, en] of engines) await en.dispose();
  }
}

async function rssChild(dir: string, T: number, chunks: string): Promise<void> {
  const s = spec();
  const tensors = new Map(readSafetensorsHeader(path.join(dir, "model.safetensors")).tensors.map((x) => [x.name, x]));
  const e = await createEngine(
    { spec: s, tensors },
    {
      scanWeights: false,
      probes: { received: true },
      threads: 1,
      memoryBudgetBytes: 16 * 2 ** 30,
      queryChunks: chunks === "auto" ? "auto" : Number(chunks),
    },
  );
  const ids = Int32Array.from({ length: T }, (_, i) => (i * 7919) % V);
  const before = process.resourceUsage().maxRSS / 1024;
  await e.forward({ ids, batch: 1, seq: T, logitRows: Int32Array.from({ length: 32 }, (_, i) => i), summaries: true, returnLogits: false });
  process.stdout.write(JSON.stringify({ before, peak: process.resourceUsage().maxRSS / 1024 }) + "\n");
}

async function rss(dir: string): Promise<void> {
  const script = fileURLToPath(import.meta.url);
  const weightsMB = (fs.statSync(path.join(dir, "model.safetensors")).size / 2 ** 20).toFixed(0);
  console.log(`peak RSS above the weights (${weightsMB} MB file), received + 32 logit rows, 1 thread (load ${load()})`);
  console.log("  T      auto MB   ×/doubling   1 chunk MB   ×/doubling");
  const prev: Record<string, number> = {};
  for (const T of [256, 512, 1024, 2048, 4096]) {
    const cells: string[] = [];
    for (const chunks of ["auto", "1"]) {
      const p = spawnSync(process.execPath, [...process.execArgv, script, "rss-child", dir, String(T), chunks], { encoding: "utf8" });
      if (p.status !== 0) throw new Error(p.stderr);
      const r = JSON.parse(p.stdout.trim().split("\n").pop()!) as { before: number; peak: number };
      // "above the weights": the peak minus the file's size (f32 weights, prepacked once)
      const above = r.peak - Number(weightsMB);
      cells.push(above.toFixed(0).padStart(9), (prev[chunks] ? (above / prev[chunks]).toFixed(2) : "").padStart(12));
      prev[chunks] = above;
    }
    console.log(`  ${String(T).padEnd(5)}${cells.join(" ")}`);
  }
}

const [mode, ...rest] = process.argv.slice(2);
if (mode === "rss-child") await rssChild(rest[0], Number(rest[1]), rest[2]);
else {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-engine-perf-"));
  try {
    const tensors = writeModel(dir, spec());
    console.log(`${os.cpus().length} CPUs, node ${process.version}, load ${load()}`);
    if (mode === "rss") await rss(dir);
    else await time(dir, tensors);
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
}
