// The engine's side of the scale benchmark (bench/scale.ts drives it): one process opens an 8B-sized
// GGUF as `floatscope generate` does (src/cli/generate.ts: index + tokenizer, the remembered weight
// scan, startEngine with the default probes and the planned run's length), then samples at each T
// with the library's `generate` and prints one JSON line: the open's wall and CPU time, the peak RSS
// after the open and at the end, and each step's wall time at each T.
//
// Plain Node on a built copy of the library (the driver builds src/ into a private folder), so it
// runs under `ulimit -v` (tsx does not).
//
//   node bench/scale-worker.mjs <dist> <file.gguf> <T,T,…> <timed steps> [nbitsAccuracyLevel]
//
// A step's time is the wall time between two consecutive `onStep` calls of `generate`: one forward
// at T with the default probes, the sampler's choice of transfers and the trace's record of the
// step. `generate` runs timed steps + 1 steps at each T; the first (its time also holds the prompt's
// encoding and the first forward at this T, when onnxruntime sizes its buffers) is left out.
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";

const [distDir, file, tsArg, stepsArg, levelArg] = process.argv.slice(2);
if (!distDir || !file || !tsArg || !stepsArg) {
  console.error("usage: node bench/scale-worker.mjs <dist> <file.gguf> <T,T,…> <timed steps> [nbitsAccuracyLevel]");
  process.exit(2);
}
const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);
const { openModelFiles, startEngine } = await dist("model/open.js");
const { assertFiniteWeights } = await dist("graph/scan-weights.js");
const { defaultWeightCacheDir } = await dist("graph/build/weight-cache.js");
const { generate, prepareRun } = await dist("samplers/generate.js");
const { DEFAULT_PROBES } = await dist("util/probes.js");

const Ts = tsArg.split(",").map(Number);
const timed = Number(stepsArg);
const PROMPT = "The capital of France is";
const vmHwm = () => Number(/^VmHWM:\s+(\d+) kB/m.exec(fs.readFileSync("/proc/self/status", "utf8"))?.[1] ?? NaN) * 1024;

const t0 = performance.now();
const cpu0 = process.cpuUsage();
const model = openModelFiles(file, { tokenizer: "optional", scanWeights: false });
if (!model.tokenizer) throw new Error(`${file}: no tokenizer in the GGUF`);
assertFiniteWeights(model.checkpoint, model.spec, { verdictCache: defaultWeightCacheDir() });
const engineOptions = { probes: DEFAULT_PROBES, threads: 2, plannedRun: { batch: 1, seq: Math.max(...Ts) } };
if (levelArg !== undefined) engineOptions.nbitsAccuracyLevel = Number(levelArg);
const { engine } = await startEngine(model, engineOptions);
const cpu = process.cpuUsage(cpu0);
const open = { openS: (performance.now() - t0) / 1000, openCpuS: (cpu.user + cpu.system) / 1e6, openPeakBytes: vmHwm() };

const perT = {};
for (const T of Ts) {
  const promptTokens = prepareRun(model.spec, [PROMPT], { genLength: 1, steps: 1 }, model.tokenizer, () => undefined).encoded[0].ids.length;
  const genLength = T - promptTokens;
  // One block over the whole answer (LLaDA) so that any step count divides it; Dream has no blocks.
  const settings = { genLength, steps: timed + 1, ...(model.spec.family === "llada" ? { blockLength: genLength } : {}) };
  const stamps = [];
  await generate(engine, [PROMPT], settings, {
    tokenizer: model.tokenizer,
    keepSteps: false,
    stopOnInterrupt: false,
    warn: () => undefined,
    onStep: () => stamps.push(performance.now()),
  });
  perT[T] = { promptTokens, stepsMs: stamps.slice(1).map((s, i) => s - stamps[i]) };
}
console.log(JSON.stringify({ ...open, peakBytes: vmHwm(), family: model.spec.family, perT }));
await engine.dispose();
process.exit(0);
