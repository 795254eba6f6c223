/**
 * One claims-grid process, timed phase by phase (bench/startup.ts starts one per measurement):
 *
 *   npx tsx bench/startup-worker.ts <grid.json> <session cache: on|off> [questions]
 *
 * The second argument may also be no-optimisation, basic-optimisation or no-prepacking (the cache off): what the
 * session's creation spends on graph optimisation and on prepacking the weights.
 *
 * With questions 0 (the default) it stops the first question after its first step: start-up only.
 *
 * It does what `floatscope eval --grid` does for the grid's first (only) model, in the same order
 * and through the same functions, with a clock between the steps: read the grid and its data,
 * fingerprint the model (runShard does so for every model of the grid), read the checkpoint and
 * tokenizer, scan the weights (or find the remembered verdict), build the graph and the onnxruntime
 * session (`startEngine` with the grid's probes; the two told apart by timing
 * `InferenceSession.create`), then run the first unit's questions through `runEval` as runShard
 * does, timing the first denoising step (the engine's first forward) and each question.
 * Prints one JSON line. Times are ms from the process's start (`performance.now()`).
 */
import * as ort from "onnxruntime-node";
import { readGrid } from "../src/grid/grid.js";
import { measureProbes, measureTrace } from "../src/grid/measures.js";
import { fingerprintModel, prepareGrid } from "../src/grid/shard.js";
import { defaultWeightCacheDir } from "../src/graph/build/weight-cache.js";
import { assertFiniteWeights } from "../src/graph/scan-weights.js";
import { openModelFiles, startEngine } from "../src/model/open.js";
import { runEval } from "../src/qa/runner.js";
import type { EngineOptions } from "../src/runtime/engine.js";
import type { Engine } from "../src/runtime/types.js";
import type { Trace } from "../src/trace/types.js";

const imported = performance.now();
/** CPU ms (user + system, every thread) since the process started. */
const cpuNow = () => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};
const importedCpu = cpuNow();
const [gridFile, cacheArg, questionsArg] = process.argv.slice(2);
const questions = Number(questionsArg ?? 0);
/** Start-up only: the first question is stopped once its first step has run. */
const stop = new AbortController();

// The session's creation, timed where the engine calls it (createEngine builds the graph just before).
let createMs = 0;
let createCpuMs = 0;
const create = ort.InferenceSession.create.bind(ort.InferenceSession) as (...a: unknown[]) => Promise<ort.InferenceSession>;
(ort.InferenceSession as unknown as { create: typeof create }).create = async (...a: unknown[]) => {
  const t = performance.now();
  const c = cpuNow();
  try {
    return await create(...a);
  } finally {
    createMs += performance.now() - t;
    createCpuMs += cpuNow() - c;
  }
};

const clock = { last: imported };
const lap = () => {
  const now = performance.now();
  const d = now - clock.last;
  clock.last = now;
  return d;
};

const grid = readGrid(gridFile);
const pg = await prepareGrid(grid);
const gridMs = lap();
const model = grid.models[0];
fingerprintModel(model.path);
const fingerprintMs = lap();
const files = openModelFiles(model.path, { scanWeights: false });
const filesMs = lap();
const scan = assertFiniteWeights(files.checkpoint, files.spec, { verdictCache: defaultWeightCacheDir() });
const scanMs = lap();
const engineCpu0 = cpuNow();
/** Besides on/off, variants that tell the session's parts apart: no graph optimisation, no weight prepacking. */
const variants: Record<string, Pick<EngineOptions, "sessionCache" | "graphOptimizationLevel" | "lowMemory">> = {
  on: { sessionCache: true },
  off: {},
  "no-optimisation": { graphOptimizationLevel: "disabled" },
  "basic-optimisation": { graphOptimizationLevel: "basic" },
  "no-prepacking": { lowMemory: true },
};
const variant = variants[cacheArg];
if (!variant) throw new Error(`session cache: expected on, off, no-optimisation, basic-optimisation or no-prepacking, got ${cacheArg}`);
const m = await startEngine(files, { device: "cpu", probes: measureProbes(grid.measures), ...variant });
const engineMs = lap();
const ready = performance.now();
const readyCpu = cpuNow();
const engineCpuMs = readyCpu - engineCpu0;

// The engine as runEval sees it, with its forwards timed.
const forwards: { start: number; end: number; cpu: number }[] = [];
const timed: Engine = new Proxy(m.engine, {
  get(target, prop, receiver) {
    if (prop === "forward")
      return async (input: Parameters<Engine["forward"]>[0]) => {
        const start = performance.now();
        const c = cpuNow();
        const out = await target.forward(input);
        forwards.push({ start, end: performance.now(), cpu: cpuNow() - c });
        if (questions === 0) stop.abort();
        return out;
      };
    const v = Reflect.get(target, prop, receiver);
    return typeof v === "function" ? v.bind(target) : v;
  },
});

const unit = pg.units[0];
const records = pg.selected.get(unit.dataset)!.slice(unit.start, Math.min(unit.end, unit.start + Math.max(questions, 1)));
const questionMs: number[] = [];
const questionCpuMs: number[] = [];
let firstStep = NaN;
let firstStepMs = NaN;
let firstStepCpuMs = NaN;
let toFirstStepCpuMs = NaN;
const errors: string[] = [];
for (const record of records) {
  const t = performance.now();
  const tc = cpuNow();
  const run = await runEval({
    engine: timed,
    tokenizer: m.tokenizer,
    records: [record],
    setting: unit.evalSetting,
    promptFormat: files.preset.promptFormat,
    sampler: { ...files.preset.sampler, seed: unit.seed },
    extraction: files.preset.extraction,
    modelName: model.name,
    dataFile: grid.datasets[0].path,
    batchSize: grid.batchSize,
    signal: stop.signal,
    measure: grid.measures.length ? (tr: Trace) => measureTrace(tr, grid.measures) as Record<string, unknown> : undefined,
  });
  if (questions > 0) {
    questionMs.push(performance.now() - t);
    questionCpuMs.push(cpuNow() - tc);
  }
  for (const r of run.results) if (r.error !== undefined && questions > 0) errors.push(r.error.slice(0, 300));
  if (Number.isNaN(firstStep) && forwards.length) {
    firstStep = forwards[0].end;
    firstStepMs = forwards[0].end - forwards[0].start;
    firstStepCpuMs = forwards[0].cpu;
    toFirstStepCpuMs = questions === 0 ? cpuNow() : readyCpu + forwards[0].cpu; // after a whole question, only the forward's share is known
  }
}
const steps = forwards.length;
await m.dispose();
console.log(
  JSON.stringify({
    model: model.name,
    cache: cacheArg,
    importsMs: imported,
    importsCpuMs: importedCpu,
    gridMs,
    fingerprintMs,
    filesMs,
    scanMs,
    scanRemembered: scan.cached === true,
    buildMs: engineMs - createMs,
    sessionMs: createMs,
    buildCpuMs: engineCpuMs - createCpuMs,
    sessionCpuMs: createCpuMs,
    readyMs: ready,
    readyCpuMs: readyCpu,
    firstStepMs,
    firstStepCpuMs,
    toFirstStepMs: firstStep,
    toFirstStepCpuMs,
    questionMs,
    questionCpuMs,
    steps,
    stepMs: forwards.map((f) => f.end - f.start),
    sessionCache: m.engine.sessionCache,
    quantizedWeights: m.engine.quantizedWeights,
    nodes: m.engine.nodeCount,
    errors,
  }),
);
