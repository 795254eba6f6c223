/**
 * Engine benchmark (not a test): time per forward pass and peak memory of the ONNX engine on a
 * random tiny Llama (4 layers, d 256, 8 heads, ffn 688, vocab 4096, f32) at T = 256 / 1024 /
 * 2048, with no probes (also in low-memory mode), with the default reduction (`received`), with every cheap reduction
 * (received, received_heads, self, argmax), and with full attention maps for every layer.
 *
 * Each configuration runs in its own child process so that its peak RSS (getrusage maxrss) is
 * its own; the time is the median over repeats after one warm-up run. Ratios are against the
 * no-probe baseline measured in the same run. Writes the "## Engine" section of BENCHMARKS.md.
 *
 *   npx tsx bench/engine.ts            # full run (a few minutes on 2 cores)
 *   npx tsx bench/engine.ts --quick    # T = 256 only, no file written
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { readSafetensorsHeader, writeSafetensors, type TensorToWrite } from "../src/checkpoint/safetensors.js";
import type { TensorInfo } from "../src/checkpoint/types.js";
import type { ModelSpec } from "../src/graph/spec.js";
import { createEngine } from "../src/runtime/engine.js";
import { estimateMemory, formatBytes } from "../src/runtime/memory.js";
import type { ProbeRequest } from "../src/util/probes.js";
import {
  formatLoad,
  benchLlamaSpec,
  loadAverage,
  machineStamp,
  markdownTable,
  median,
  percentile,
  ratio,
  benchmarkFile,
  writeBenchmarkSection,
  writesSection,
} from "./lib.js";

const L = 4,
  D = 256,
  H = 8,
  F = 688,
  V = 4096;
const THREADS = 2;
const CONFIGS: Record<string, { probes: ProbeRequest; lowMemory?: boolean; queryChunks?: number }> = {
  "no probes": { probes: {} },
  "no probes, lowMemory": { probes: {}, lowMemory: true },
  "received (default)": { probes: { received: true } },
  "received, 8 query chunks": { probes: { received: true }, queryChunks: 8 },
  "all reductions": { probes: { received: true, receivedHeads: true, self: true, argmax: true } },
  "full maps, all layers": { probes: { pattern: { layers: [0, 1, 2, 3] } } },
};
const REPEATS: Record<number, number> = { 256: 15, 1024: 7, 2048: 5 };

function specFor(): ModelSpec {
  return benchLlamaSpec(
    { layers: L, hidden: D, heads: H, ffn: F, vocab: V },
    { family: "llama", architecture: "LlamaForCausalLM", causal: true, maxPositionEmbeddings: 4096 },
  );
}

function writeModel(dir: string, spec: ModelSpec): void {
  let s = 12345;
  const rand = () => ((s = (s * 1103515245 + 12345) >>> 0) / 2 ** 32) * 2 - 1;
  const t: Record<string, TensorToWrite> = {};
  const put = (name: string, shape: number[], scale: number, offset = 0) => {
    const n = shape.reduce((a, b) => a * b, 1);
    t[name] = { dtype: "F32", shape, data: Float32Array.from({ length: n }, () => offset + rand() * scale) };
  };
  put(spec.weights.embed, [V, D], 1);
  for (const b of spec.weights.blocks) {
    put(b.attnNorm, [D], 0.1, 1);
    put(b.q, [D, D], 0.1);
    put(b.k, [D, D], 0.1);
    put(b.v, [D, D], 0.06);
    put(b.o, [D, D], 0.06);
    put(b.mlpNorm, [D], 0.1, 1);
    put(b.gate, [F, D], 0.06);
    put(b.up, [F, D], 0.06);
    put(b.down, [D, F], 0.04);
  }
  put(spec.weights.finalNorm, [D], 0.1, 1);
  put(spec.weights.lmHead, [V, D], 0.06);
  writeSafetensors(path.join(dir, "model.safetensors"), t);
}

interface ChildResult {
  medianMs: number;
  p90Ms: number;
  cpuMs: number;
  createMs: number;
  maxRssMB: number;
  estimateMB: number;
  outputsMB: number;
}

async function child(dir: string, config: string, T: number): Promise<void> {
  const spec = specFor();
  const tensors = new Map<string, TensorInfo>(readSafetensorsHeader(path.join(dir, "model.safetensors")).tensors.map((x) => [x.name, x]));
  const { probes, lowMemory, queryChunks } = CONFIGS[config];
  const t0 = performance.now();
  const engine = await createEngine(
    { spec, tensors },
    {
      probes,
      lowMemory,
      queryChunks,
      threads: THREADS,
      memoryBudgetBytes: 16 * 2 ** 30,
      cpuMemArena: process.env.FLOATSCOPE_BENCH_ARENA !== "0",
    },
  );
  const createMs = performance.now() - t0;
  const ids = Int32Array.from({ length: T }, (_, i) => (i * 7919) % V);
  let outputs = 0;
  const times: number[] = [];
  let cpu = 0;
  for (let r = 0; r <= REPEATS[T]; r++) {
    const a = performance.now();
    const c0 = process.cpuUsage();
    const out = await engine.forward({ ids, batch: 1, seq: T });
    const ms = performance.now() - a;
    const c1 = process.cpuUsage(c0);
    if (r > 0) {
      times.push(ms); // run 0 is the warm-up
      cpu += (c1.user + c1.system) / 1000;
    }
    outputs = out.logits.byteLength + [...out.probes.values()].reduce((n, p) => n + p.data.byteLength, 0);
  }
  await engine.dispose();
  const res: ChildResult = {
    medianMs: median(times),
    p90Ms: percentile(times, 0.9),
    cpuMs: cpu / times.length,
    createMs,
    maxRssMB: process.resourceUsage().maxRSS / 1024,
    estimateMB: estimateMemory(spec, { batch: 1, seq: T, probes, queryChunks }).total / 2 ** 20,
    outputsMB: outputs / 2 ** 20,
  };
  process.stdout.write(JSON.stringify(res) + "\n");
}

async function orchestrate(quick: boolean): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-bench-"));
  const spec = specFor();
  writeModel(dir, spec);
  const script = fileURLToPath(import.meta.url);
  const seqs = quick ? [256] : [256, 1024, 2048];
  const load0 = loadAverage();
  const started = Date.now();
  const rows: { T: number; config: string; r: ChildResult }[] = [];
  try {
    for (const T of seqs) {
      for (const config of Object.keys(CONFIGS)) {
        const p = spawnSync(process.execPath, [...process.execArgv, script, "--child", dir, config, String(T)], {
          encoding: "utf8",
          timeout: 600_000,
        });
        if (p.status !== 0) throw new Error(`child ${config} T=${T} failed: ${p.stderr}`);
        const r = JSON.parse(p.stdout.trim().split("\n").pop()!) as ChildResult;
        rows.push({ T, config, r });
        console.log(
          `T=${T} ${config}: ${r.medianMs.toFixed(1)} ms (p90 ${r.p90Ms.toFixed(1)}, CPU ${r.cpuMs.toFixed(1)}), peak RSS ${r.maxRssMB.toFixed(0)} MB, estimate ${r.estimateMB.toFixed(0)} MB`,
        );
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  const load1 = loadAverage();
  const minutes = (Date.now() - started) / 60000;
  const base = new Map(rows.filter((x) => x.config === "no probes").map((x) => [x.T, x.r]));
  const table = markdownTable(
    [
      "T",
      "probes",
      "median ms",
      "p90 ms",
      "× no-probe time",
      "CPU ms / forward",
      "× no-probe CPU",
      "peak RSS MB",
      "× no-probe RSS",
      "estimate MB",
      "outputs MB",
      "session create ms",
    ],
    rows.map(({ T, config, r }) => {
      const b = base.get(T)!;
      return [
        T,
        config,
        r.medianMs.toFixed(1),
        r.p90Ms.toFixed(1),
        ratio(r.medianMs, b.medianMs),
        r.cpuMs.toFixed(1),
        ratio(r.cpuMs, b.cpuMs),
        r.maxRssMB.toFixed(0),
        ratio(r.maxRssMB, b.maxRssMB),
        r.estimateMB.toFixed(0),
        r.outputsMB.toFixed(1),
        r.createMs.toFixed(0),
      ];
    }),
  );
  const body = `## Engine

\`npx tsx bench/engine.ts\` — ${machineStamp()}, ${formatBytes(os.totalmem())} RAM, Node ${process.version}, onnxruntime-node CPU, ${THREADS} intra-op threads.
Model: random tiny Llama, ${L} layers, d ${D}, ${H} heads (MHA), ffn ${F}, vocab ${V}, f32 weights (external data), causal, batch 1.
Median over ${Object.entries(REPEATS)
    .filter(([t]) => seqs.includes(Number(t)))
    .map(([t, n]) => `${n} (T=${t})`)
    .join(", ")} runs after one warm-up; each row is its own process, so peak RSS
(getrusage maxrss of the whole Node process, incl. ~90 MB of Node + tsx + ORT baseline) is that configuration's own.
"lowMemory" = \`session.disable_prepacking\` (weights stay memory-mapped). "8 query chunks" = \`queryChunks: 8\` (attention computed for T/8 query rows at a time). "all reductions" = received, received_heads, self, argmax (argmax_key + argmax_prob). "full maps" = \`blocks.{l}.attn.pattern\` [1, 8, T, T] for all 4 layers.
Estimate = \`estimateMemory()\` total, which the engine compares against its budget (it includes a fixed 96 MiB for Node + ORT; tsx adds ~20 MB here).
CPU ms / forward = process CPU time (user + system, all threads) per forward, mean over the timed runs: less sensitive to other processes than wall time, but it includes ORT's thread-pool spinning.
Load: the machine is shared with other work (other helpers' tests and a training job); load average ${formatLoad(load0)} before and ${formatLoad(load1)} after (1/5/15 min); ${minutes.toFixed(1)} min in total. Treat small differences (< 10 %) as noise.

${table}
`;
  if (!writesSection(quick)) {
    console.log(body);
  } else {
    writeBenchmarkSection("## Engine", body);
    console.log("wrote " + benchmarkFile() + " (## Engine)");
  }
}

const args = process.argv.slice(2);
if (args[0] === "--write-model") writeModel(args[1], specFor());
else if (args[0] === "--child") await child(args[1], args[2], Number(args[3]));
else await orchestrate(args.includes("--quick"));
