/**
 * The ONNX engine's denoising step on CUDA at LLaDA-8B / Dream-7B shapes: forward time per probe set
 * (none, the default received vectors, head-mean full maps of every layer) and memory, for checkpoints
 * that bench/gpu/run.sh builds with bench/make_model.py (random bf16 weights).
 *
 *   npx tsx bench/gpu/engine-step.ts --out engine.json [--device cuda] [--T 256,1024] [--reps 3] DIR...
 *   npx tsx bench/gpu/engine-step.ts --device cpu --T 16,32 --out x.json .cache/bench/tiny   # CPU smoke test
 *
 * On CUDA it asks for f16 compute (`computeDType: "f16"`, the engine's half-precision path) and needs
 * onnxruntime-node's CUDA provider libraries (docs/benchmarks.md says what blocks that on the lent GPU
 * machine). GPU memory is read with nvidia-smi (used memory before and after each configuration's
 * runs); host memory is the process's peak RSS.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import { createRequire } from "node:module";
import * as path from "node:path";
import { openModel } from "../../src/model/open.js";
import { DEFAULT_PROBES, type ProbeRequest } from "../../src/util/probes.js";
import { median } from "../lib.js";

const args = process.argv.slice(2);
const opt = (name: string, dflt: string) => {
  const i = args.indexOf(name);
  return i >= 0 ? args.splice(i, 2)[1] : dflt;
};
const out = opt("--out", "engine-step.json");
const device = opt("--device", "cuda") as "cuda" | "cpu";
const Ts = opt("--T", "256,1024").split(",").map(Number);
const reps = Number(opt("--reps", "3"));
const dirs = args;

function gpuUsedMiB(): number | null {
  const r = spawnSync("nvidia-smi", ["--query-gpu=memory.used", "--format=csv,noheader,nounits"], { encoding: "utf8" });
  return r.status === 0 ? Number(r.stdout.trim().split("\n")[0]) : null;
}

const results: Record<string, unknown>[] = [];
const ortVersion = (
  JSON.parse(fs.readFileSync(createRequire(import.meta.url).resolve("onnxruntime-node/package.json"), "utf8")) as { version: string }
).version;
const save = () => fs.writeFileSync(out, JSON.stringify({ node: process.version, onnxruntime: ortVersion, device, results }, null, 1));
save();
for (const dir of dirs) {
  const layers = JSON.parse(fs.readFileSync(path.join(dir, "config.json"), "utf8")) as { n_layers?: number; num_hidden_layers?: number };
  const L = layers.n_layers ?? layers.num_hidden_layers ?? 0;
  const sets: [string, ProbeRequest][] = [
    ["none", {}],
    ["default", DEFAULT_PROBES],
    ["head-mean maps, every layer", { patternMean: { layers: Array.from({ length: L }, (_, l) => l) } }],
  ];
  for (const [name, probes] of sets) {
    const gpu0 = gpuUsedMiB();
    const t0 = performance.now();
    const m = await openModel(dir, {
      tokenizer: "optional",
      scanWeights: false,
      device,
      computeDType: device === "cuda" ? "f16" : "f32",
      probes,
      memoryBudgetBytes: 2 ** 40,
    });
    const createMs = performance.now() - t0;
    if (m.engine.device !== device) {
      await m.dispose();
      throw new Error(`asked for ${device}, the engine runs on ${m.engine.device} (see the warning above): not timing an 8B model there`);
    }
    try {
      for (const T of Ts) {
        const ids = Int32Array.from({ length: T }, (_, i) => (i * 7919) % (m.spec.vocabSize - 1));
        await m.engine.forward({ ids, batch: 1, seq: T });
        const ms: number[] = [];
        for (let r = 0; r < reps; r++) {
          const a = performance.now();
          await m.engine.forward({ ids, batch: 1, seq: T });
          ms.push(performance.now() - a);
        }
        const row = {
          model: path.basename(dir),
          probes: name,
          T,
          device: m.engine.device,
          ms: median(ms),
          allMs: ms,
          createMs,
          gpuUsedBeforeMiB: gpu0,
          gpuUsedAfterMiB: gpuUsedMiB(),
          peakRssMiB: process.resourceUsage().maxRSS / 1024,
        };
        results.push(row);
        console.log(JSON.stringify(row));
        // Written after every row: run.sh stops this script at its time share, and what finished must survive.
        save();
      }
    } finally {
      await m.dispose();
    }
  }
}
save();
