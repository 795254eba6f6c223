/**
 * Intervention benchmark (not a test). Writes the "## Interventions" section of BENCHMARKS.md:
 *  1. the per-step cost of each policy in whole runs on the embedded tiny models (an MDM and an ARM,
 *     4 QA-length prompts batched): ms per step and forward passes per step, relative to the plain
 *     run on an engine without intervention inputs, measured in the same run, policies interleaved
 *     (one run of each per round, median over rounds);
 *  2. the graph's own overhead: one forward pass at longer sequences with the intervention inputs
 *     neutral, and with keys hidden, against the graph without them (interleaved, medians).
 *
 *   npx tsx bench/interventions.ts            # writes the section
 *   npx tsx bench/interventions.ts --quick    # fewer rounds; prints only
 */
import * as path from "node:path";
import { openCheckpoint } from "../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../src/checkpoint/tokenizer.js";
import { createEngine, type OnnxEngine } from "../src/runtime/engine.js";
import type { Engine, ForwardInput } from "../src/runtime/types.js";
import { generate } from "../src/samplers/generate.js";
import {
  loadAverage,
  loadSentence,
  machineStamp,
  markdownTable,
  median,
  ratio,
  ROOT,
  benchmarkFile,
  writeBenchmarkSection,
  writesSection,
} from "./lib.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 7;
const POLICIES = ["none", "anchors", "anchors:first-pass", "random", "first", "sink"];

/** Counts forward passes. */
function counted(engine: OnnxEngine): { engine: Engine; calls: () => number } {
  let n = 0;
  return {
    calls: () => n,
    engine: {
      spec: engine.spec,
      probes: engine.probes,
      device: engine.device,
      logitRows: engine.logitRows,
      interventions: engine.interventions,
      dispose: () => engine.dispose(),
      forward: (input: ForwardInput) => {
        n++;
        return engine.forward(input);
      },
    },
  };
}

/** A QA-length prompt for the tiny-world tokenizer (≈ 80 tokens). */
const PROMPTS = [0, 1, 2, 3].map(
  (i) =>
    `Passage: Mimosis is a green animal that lives in Bifo ${i}. Renedi was born in Fipovu and likes the colour blue. ` +
    `Zubuve lives in Dekipos. Guvuvo was born in Punudu.\nQuestion: what colour is Mimosis ${i}?\nAnswer:`,
);

async function policies(model: string): Promise<string[][]> {
  const ckpt = openCheckpoint(path.join(ROOT, "models", model));
  const probes = { received: true };
  const plain = await createEngine(ckpt, { threads: 1, probes });
  const iv = await createEngine(ckpt, { threads: 1, probes, interventions: true });
  const tokenizer = loadTokenizer(ckpt.tokenizer!, { bosTokenId: plain.spec.bosTokenId, eosTokenIds: plain.spec.eosTokenIds });
  const settings = plain.spec.causal
    ? { genLength: 16, stopAtEos: false }
    : { genLength: 16, steps: 16, temperature: 0, ...(plain.spec.family === "dream" ? { topP: null } : {}) };
  const variants: [string, OnnxEngine, string | undefined][] = [
    ["plain engine", plain, undefined],
    ...POLICIES.map((p): [string, OnnxEngine, string] => [p, iv, p]),
  ];
  const perStep = new Map<string, number[]>(variants.map(([k]) => [k, []]));
  const cpuPerStep = new Map<string, number[]>(variants.map(([k]) => [k, []]));
  const forwards = new Map<string, number>();
  let T = 0;
  for (let r = 0; r < ROUNDS + 1; r++) {
    for (const [key, engine, intervention] of variants) {
      const c = counted(engine);
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      const res = await generate(c.engine, PROMPTS, settings, { tokenizer, intervention, stopOnInterrupt: false });
      const cpu = process.cpuUsage(c0);
      const steps = res[0].trace.steps.length;
      if (r > 0) {
        // round 0 warms up
        perStep.get(key)!.push((performance.now() - t0) / steps);
        cpuPerStep.get(key)!.push((cpu.user + cpu.system) / 1000 / steps);
      }
      forwards.set(key, c.calls() / steps);
      T = res[0].trace.final.sequence.length;
    }
  }
  await plain.dispose();
  await iv.dispose();
  const base = median(cpuPerStep.get("plain engine")!);
  const baseWall = median(perStep.get("plain engine")!);
  return variants.map(([key]) => {
    const cpu = median(cpuPerStep.get(key)!);
    const ms = median(perStep.get(key)!);
    return [
      `${model} (T ≤ ${T}, batch 4)`,
      key === "plain engine" ? "— (no intervention inputs)" : `\`${key}\``,
      cpu.toFixed(2),
      ratio(cpu, base),
      ms.toFixed(2),
      ratio(ms, baseWall),
      forwards.get(key)!.toFixed(2),
    ];
  });
}

async function graphOverhead(): Promise<string[][]> {
  const ckpt = openCheckpoint(path.join(ROOT, "models", "tiny-llada"));
  const plain = await createEngine(ckpt, { threads: 1, probes: { received: true } });
  const iv = await createEngine(ckpt, { threads: 1, probes: { received: true }, interventions: true });
  const { numLayers: L, numHeads: H, vocabSize: V } = plain.spec;
  const rows: string[][] = [];
  for (const T of [128, 500]) {
    const ids = Int32Array.from({ length: T }, (_, i) => 5 + ((i * 7) % (V - 10)));
    const hidden = new Uint8Array(L * H * T);
    for (let l = 0; l < L; l++) for (let h = 0; h < H; h++) for (const k of [0, 3, 9]) hidden[(l * H + h) * T + k] = 1;
    const cases: [string, () => Promise<unknown>][] = [
      ["graph without intervention inputs", () => plain.forward({ ids, batch: 1, seq: T, logitRows: Int32Array.from([T - 1]) })],
      ["intervention inputs, neutral", () => iv.forward({ ids, batch: 1, seq: T, logitRows: Int32Array.from([T - 1]) })],
      [
        "intervention inputs, 3 keys hidden per layer",
        () => iv.forward({ ids, batch: 1, seq: T, logitRows: Int32Array.from([T - 1]), intervention: { keyHidden: hidden } }),
      ],
    ];
    const times = cases.map((): number[] => []);
    const cpus = cases.map((): number[] => []);
    for (let r = 0; r < (quick ? 3 : 15) + 1; r++) {
      for (let c = 0; c < cases.length; c++) {
        const t0 = performance.now();
        const c0 = process.cpuUsage();
        await cases[c][1]();
        const cpu = process.cpuUsage(c0);
        if (r > 0) {
          times[c].push(performance.now() - t0);
          cpus[c].push((cpu.user + cpu.system) / 1000);
        }
      }
    }
    const base = median(cpus[0]);
    cases.forEach(([label], c) =>
      rows.push([String(T), label, median(cpus[c]).toFixed(2), ratio(median(cpus[c]), base), median(times[c]).toFixed(2)]),
    );
  }
  await plain.dispose();
  await iv.dispose();
  return rows;
}

const load0 = loadAverage();
const policyRows = [...(await policies("tiny-llada")), ...(await policies("tiny-llama"))];
const graphRows = await graphOverhead();
const load1 = loadAverage();
const body = `## Interventions

\`npx tsx bench/interventions.ts\` — ${machineStamp()}, Node ${process.version}.
${loadSentence(load0, load1)}

Per-step cost of each attention-intervention policy (docs/samplers.md, "Attention interventions") in
whole runs on the embedded tiny models: 4 QA-length prompts batched, 16 new tokens (LLaDA: 16 steps, τ 0;
LLaMA: greedy), \`received\` probe only, ONNX Runtime CPU, 1 thread. Median over ${ROUNDS} rounds, every
variant run once per round in turn (interleaved); ratios against the plain run on an engine built
without intervention inputs, measured in the same rounds. CPU time (user + system of the process) is
the figure to read on a loaded machine; wall time is shown beside it. "forwards / step" counts engine
calls, including the final probe pass (hence the 1/16 above 1 and 2).

${markdownTable(["model", "policy", "CPU ms per step (median)", "× plain", "wall ms per step", "wall × plain", "forwards / step"], policyRows)}

The graph's own overhead, one forward pass (tiny-llada, batch 1, one logits row, median of ${quick ? 3 : 15}
interleaved): the hidden-key mask is combined per layer into a [batch, head, query, key] boolean, so its
cost grows with T² like the scores it masks.

${markdownTable(["T", "graph", "CPU ms per forward (median)", "× without", "wall ms"], graphRows)}
`;
console.log(body);
if (writesSection(quick)) {
  writeBenchmarkSection("## Interventions", body);
  console.log("wrote " + benchmarkFile() + " (## Interventions)");
}
