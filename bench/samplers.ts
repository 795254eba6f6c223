/**
 * Sampler and trace benchmark (not a test). Writes the "## Samplers and traces" section of
 * BENCHMARKS.md:
 *  1. per-position cost of the token choice at LLaDA's vocabulary size (126,464): every masked
 *     candidate pays it once per step, on top of the forward pass;
 *  2. a whole LLaDA / Dream / ARM run on the tiny parity checkpoints: time per step split into the
 *     engine's forward and everything else (sampler, probe slicing, trace streaming);
 *  3. trace file sizes with the default probes, measured with the real encoder.
 *
 *   npx tsx bench/samplers.ts            # writes the section
 *   npx tsx bench/samplers.ts --quick    # one repeat of each whole run, fewer token-choice calls; prints only
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { openModel } from "../src/model/open.js";
import type { Engine, ForwardInput } from "../src/runtime/types.js";
import { generate } from "../src/samplers/generate.js";
import { Rng } from "../src/util/rng.js";
import { armChoose, dreamSampleToken, lladaChoose } from "../src/samplers/sampling.js";
import { estimateTraceBytes } from "../src/trace/size.js";
import { DEFAULT_PROBES } from "../src/util/probes.js";
import { syntheticTraceBytes } from "../test/support/synthetic-trace.js";
import {
  loadAverage,
  loadSentence,
  machineStamp,
  markdownTable,
  median,
  ROOT as root,
  benchmarkFile,
  writeBenchmarkSection,
  writesSection,
} from "./lib.js";

const quick = process.argv.includes("--quick");

function tokenChoice(): string {
  const V = 126_464;
  const logits = new Float32Array(V);
  // A peaked distribution like a trained model's: a few strong tokens over a noisy floor.
  const noise = new Rng(1);
  for (let v = 0; v < V; v++) logits[v] = 4 * noise.uniform() - 2 + (v % 4093 === 7 ? 12 : 0);
  const rng = new Rng(2);
  const cases: [string, () => unknown][] = [
    ["LLaDA low_confidence, τ 0", () => lladaChoose(logits, 0, "low_confidence", rng)],
    ["LLaDA low_confidence, τ 1 (Gumbel, float64)", () => lladaChoose(logits, 1, "low_confidence", rng)],
    ["Dream entropy, τ 0.2, top-p 0.95", () => dreamSampleToken(logits, { temperature: 0.2, topP: 0.95 }, "entropy", rng)],
    ["Dream maskgit_plus, τ 0", () => dreamSampleToken(logits, { temperature: 0 }, "maskgit_plus", rng)],
    ["ARM greedy", () => armChoose(logits, null, rng)],
  ];
  const [repeats, calls] = quick ? [3, 5] : [7, 20];
  const rows: string[][] = [];
  for (const [name, f] of cases) {
    for (let i = 0; i < 5; i++) f();
    const times: number[] = [];
    for (let r = 0; r < repeats; r++) {
      const t0 = performance.now();
      for (let i = 0; i < calls; i++) f();
      times.push((performance.now() - t0) / calls);
    }
    rows.push([name, median(times).toFixed(2)]);
  }
  return markdownTable([`token choice, V = ${V}`, `ms per position (median of ${repeats} × ${calls} calls)`], rows);
}

/** Wraps an engine to time its forward passes. */
function timed(engine: Engine): { engine: Engine; ms: number[] } {
  const ms: number[] = [];
  const wrapped: Engine = {
    spec: engine.spec,
    probes: engine.probes,
    device: engine.device,
    dispose: () => engine.dispose(),
    async forward(input: ForwardInput) {
      const t0 = performance.now();
      const out = await engine.forward(input);
      ms.push(performance.now() - t0);
      return out;
    },
  };
  return { engine: wrapped, ms };
}

async function wholeRuns(): Promise<string> {
  const rows: (string | number)[][] = [];
  const runs: [string, string, Record<string, unknown>][] = [
    ["llada", "LLaDA G 32, B 8, S 32, τ 0", { genLength: 32, blockLength: 8, steps: 32 }],
    ["dream", "Dream G 32, S 32, entropy, τ 0.2, top-p 0.95", { genLength: 32, steps: 32 }],
    ["llama", "LLaMA greedy, 32 tokens", { genLength: 32, stopAtEos: false }],
  ];
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-samplers-"));
  for (const [family, label, settings] of runs) {
    const model = await openModel(path.join(root, "test/fixtures/parity", family, "model"), { threads: 1, probes: DEFAULT_PROBES });
    const { engine: inner, tokenizer } = model;
    const totals: number[] = [];
    const forwards: number[] = [];
    let steps = 0;
    for (let r = 0; r < (quick ? 1 : 5); r++) {
      const { engine, ms } = timed(inner);
      const t0 = performance.now();
      const res = await generate(engine, ["the cat sat on the mat.", "What is the capital of France?"], settings, {
        tokenizer,
        traceFiles: [path.join(dir, "a.fstrace"), path.join(dir, "b.fstrace")],
      });
      steps = res[0].trace.steps.length;
      totals.push((performance.now() - t0) / steps);
      forwards.push(ms.reduce((a, b) => a + b, 0) / steps);
    }
    await model.dispose();
    const t = median(totals);
    const f = median(forwards);
    rows.push([label, steps, t.toFixed(2), f.toFixed(2), (t - f).toFixed(2)]);
  }
  fs.rmSync(dir, { recursive: true, force: true });
  return markdownTable(
    ["run (tiny parity checkpoint, 2 prompts batched, trace streamed)", "steps", "ms per step: total", "forward", "sampler + trace"],
    rows,
  );
}

function traceSizes(): string {
  const rows: (string | number)[][] = [];
  for (const [T, L, S] of [
    [1024, 32, 64],
    [512, 32, 64],
    [1024, 16, 64],
    [1024, 32, 32],
    [256, 28, 32],
  ]) {
    const bytes = syntheticTraceBytes({ seq: T, layers: L, steps: S, prompt: T - 2 * S, transfersPerStep: 2 });
    const est = estimateTraceBytes(
      { received: true },
      { numLayers: L, numHeads: 32, numKvHeads: 32, headDim: 128, seq: T, steps: S, transfersPerStep: 2 },
    );
    rows.push([T, L, S, bytes, est, (bytes / (S * L * T)).toFixed(2)]);
  }
  return markdownTable(["T", "layers", "steps", "bytes (measured)", "bytes (estimate)", "bytes / (steps·layers·T)"], rows);
}

const load0 = loadAverage();
const choice = tokenChoice();
const whole = await wholeRuns();
const sizes = traceSizes();
const load1 = loadAverage();
const body = `## Samplers and traces

\`npx tsx bench/samplers.ts\` — ${machineStamp()}, Node ${process.version}.
${loadSentence(load0, load1)}

Token choice per masked position at a real vocabulary size (every candidate position pays this once per
step; full-vocabulary passes in float64):

${choice}

Whole runs on the tiny parity checkpoints (vocab 128, 2 layers; ONNX Runtime CPU, 1 thread), median of ${quick ? 1 : 5}:
time per step, of which the engine's forward pass, the rest being sampling, probe slicing and trace writing.

${whole}

Trace file size with the default probes (\`received\`), synthetic traces through the real encoder
(2 tokens unmasked per step): O(steps × layers × T), about 4.4 bytes per (step, layer, token).

${sizes}
`;
console.log(body);
if (writesSection(quick)) {
  writeBenchmarkSection("## Samplers and traces", body);
  console.log("wrote " + benchmarkFile() + " (## Samplers and traces)");
}
