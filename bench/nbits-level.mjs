// MatMulNBits accuracy level 4 (int8 activations) against level 0 (float compute), for
// docs/engine.md "MatMulNBits accuracy level". Plain Node on a built copy of the library (`npm run
// build`, or `cd src && npx tsc -p tsconfig.build.json --outDir <dist>`), so it runs under `ulimit -v`.
//
//   node bench/nbits-level.mjs logits <dist> <file.gguf> [T]
//        one forward at T (default 64; fixed pseudo-random ids, every row's logits) with the GGUF's
//        quantised layers dequantised to float32 (the reference), as MatMulNBits at level 0 and at
//        level 4; each MatMulNBits run against the reference: the largest absolute logit difference,
//        that over the reference's largest |logit|, the relative L2 error, and how many rows keep
//        the reference's top-1 token. Engines one after another (the f32 one is the largest).
//   node bench/nbits-level.mjs pair <dist> <file.gguf> <T> <reps>
//        one process, two engines on the same file (level 0 and level 4, default probes), forwards at T
//        with the logits of the last T − 8 rows (a step's masked rows) alternating 0, 4, 4, 0, …; wall
//        and CPU time of each forward; medians and level 4 / level 0. For a file small enough to hold
//        twice (e.g. the first layers of the 8B shape), where the processes of "speed" would be slow.
//   node bench/nbits-level.mjs speed <dist> <file.gguf> <T> <timed steps> <reps>
//        per-step wall time at T with the default probes (bench/scale-worker.mjs: `generate` as the
//        CLI runs it), level 0 and level 4 in alternating processes (ABBA per pair of reps), the
//        load before and after each process; median ms/step per level and level 4 / level 0.
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";

const [mode, distDir, file, ...rest] = process.argv.slice(2);
if (!["logits", "pair", "speed"].includes(mode) || !distDir || !file) {
  console.error("usage: node bench/nbits-level.mjs logits <dist> <file.gguf> [T] | speed <dist> <file.gguf> <T> <timed steps> <reps>");
  process.exit(2);
}
const load = () => fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const median = (xs) => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 ? s[(s.length - 1) / 2] : (s[s.length / 2 - 1] + s[s.length / 2]) / 2;
};
console.log(
  `${mode} ${path.basename(file)} (${(fs.statSync(file).size / 1e9).toFixed(2)} GB), ${new Date().toISOString()}, load ${load()}`,
);

if (mode === "logits") {
  const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);
  const { openModelFiles, startEngine } = await dist("model/open.js");
  const T = Number(rest[0] ?? 64);
  const model = openModelFiles(file, { tokenizer: "optional", scanWeights: false });
  const V = model.spec.vocabSize;
  const ids = Int32Array.from({ length: T }, (_, i) => 300 + ((i * 7919) % Math.min(100000, V - 300)));
  const run = async (options) => {
    const t0 = performance.now();
    const { engine } = await startEngine(model, { threads: 2, plannedRun: { batch: 1, seq: T }, ...options });
    const out = await engine.forward({ ids, batch: 1, seq: T });
    const logits = Float32Array.from(out.logits);
    await engine.dispose();
    return { logits, s: (performance.now() - t0) / 1000, mode: engine.quantizedWeights };
  };
  const ref = await run({ quantizedWeights: "dequantize" });
  if (ref.mode !== "dequantize") throw new Error("the reference did not dequantise");
  const argmax = (a, r) => {
    let best = 0;
    for (let j = 1; j < V; j++) if (a[r * V + j] > a[r * V + best]) best = j;
    return best;
  };
  const refTop = Array.from({ length: T }, (_, r) => argmax(ref.logits, r));
  let refMax = 0;
  let refSq = 0;
  for (const x of ref.logits) {
    refMax = Math.max(refMax, Math.abs(x));
    refSq += x * x;
  }
  console.log(
    `reference: float32 (dequantised), ${model.spec.family}, T ${T}, vocabulary ${V}, max |logit| ${refMax.toPrecision(4)}, ${ref.s.toFixed(1)} s`,
  );
  console.log("| run | max abs diff | / max abs logit | relative L2 | top-1 agreement | s |\n|---|---|---|---|---|---|");
  for (const level of [0, 4]) {
    const r = await run({ quantizedWeights: "matmulnbits", nbitsAccuracyLevel: level });
    if (r.mode !== "matmulnbits") throw new Error("MatMulNBits was not used");
    let maxAbs = 0;
    let sq = 0;
    for (let i = 0; i < r.logits.length; i++) {
      const d = r.logits[i] - ref.logits[i];
      maxAbs = Math.max(maxAbs, Math.abs(d));
      sq += d * d;
    }
    const agree = refTop.filter((t, row) => argmax(r.logits, row) === t).length;
    console.log(
      `| MatMulNBits level ${level} | ${maxAbs.toPrecision(3)} | ${(maxAbs / refMax).toPrecision(3)} | ${Math.sqrt(sq / refSq).toPrecision(3)} | ${agree}/${T} | ${r.s.toFixed(1)} |`,
    );
  }
} else if (mode === "pair") {
  const dist = (p) => import(pathToFileURL(path.join(distDir, p)).href);
  const { openModelFiles, startEngine } = await dist("model/open.js");
  const { DEFAULT_PROBES } = await dist("util/probes.js");
  const [T, reps] = rest.map(Number);
  const model = openModelFiles(file, { tokenizer: "optional", scanWeights: false });
  const V = model.spec.vocabSize;
  const ids = Int32Array.from({ length: T }, (_, i) => 300 + ((i * 7919) % Math.min(100000, V - 300)));
  const logitRows = Int32Array.from({ length: T - 8 }, (_, i) => 8 + i);
  const engines = {};
  for (const level of [0, 4]) {
    const options = {
      probes: DEFAULT_PROBES,
      threads: 2,
      plannedRun: { batch: 1, seq: T },
      quantizedWeights: "matmulnbits",
      nbitsAccuracyLevel: level,
    };
    engines[level] = (await startEngine(model, options)).engine;
    await engines[level].forward({ ids, batch: 1, seq: T, logitRows }); // warm-up: onnxruntime sizes its buffers
  }
  const wall = { 0: [], 4: [] };
  const cpu = { 0: [], 4: [] };
  console.log("| forward | level | wall ms | CPU ms | load |\n|---|---|---|---|---|");
  let n = 0;
  for (let r = 0; r < reps; r++) {
    for (const level of r % 2 === 0 ? [0, 4] : [4, 0]) {
      const t0 = performance.now();
      const c0 = process.cpuUsage();
      await engines[level].forward({ ids, batch: 1, seq: T, logitRows });
      const c = process.cpuUsage(c0);
      wall[level].push(performance.now() - t0);
      cpu[level].push((c.user + c.system) / 1000);
      console.log(`| ${++n} | ${level} | ${wall[level].at(-1).toFixed(0)} | ${cpu[level].at(-1).toFixed(0)} | ${load()} |`);
    }
  }
  const f = (xs) => median(xs).toFixed(0);
  console.log(
    `\nT ${T}, ${model.spec.numLayers} layers: level 0 ${f(wall[0])} ms wall / ${f(cpu[0])} ms CPU, level 4 ${f(wall[4])} / ${f(cpu[4])} (medians of ${reps}); level 4 / level 0 = ${(median(wall[4]) / median(wall[0])).toFixed(3)} wall, ${(median(cpu[4]) / median(cpu[0])).toFixed(3)} CPU`,
  );
  for (const e of Object.values(engines)) await e.dispose();
} else {
  const [T, steps, reps] = rest.map(Number);
  const worker = fileURLToPath(new URL("./scale-worker.mjs", import.meta.url));
  const times = { 0: [], 4: [] };
  console.log(
    "| process | level | ms/step (median of its steps) | open s | peak RSS GB | load before | load after |\n|---|---|---|---|---|---|---|",
  );
  let n = 0;
  for (let r = 0; r < reps; r++) {
    for (const level of r % 2 === 0 ? [0, 4] : [4, 0]) {
      const before = load();
      const p = spawnSync(process.execPath, [worker, distDir, file, String(T), String(steps), String(level)], {
        encoding: "utf8",
        stdio: ["ignore", "pipe", "inherit"],
      });
      if (p.status !== 0) throw new Error(`worker failed (${p.status}): ${p.stdout.slice(-2000)}`);
      const res = JSON.parse(p.stdout.trim().split("\n").pop());
      const ms = res.perT[T].stepsMs;
      times[level].push(...ms);
      console.log(
        `| ${++n} | ${level} | ${median(ms).toFixed(0)} (${ms.map((x) => x.toFixed(0)).join(", ")}) | ${res.openS.toFixed(1)} | ${(res.peakBytes / 1e9).toFixed(2)} | ${before} | ${load()} |`,
      );
    }
  }
  const m0 = median(times[0]);
  const m4 = median(times[4]);
  console.log(
    `\nT ${T}: level 0 ${m0.toFixed(0)} ms/step, level 4 ${m4.toFixed(0)} ms/step (medians of ${times[0].length} and ${times[4].length} steps); level 4 / level 0 = ${(m4 / m0).toFixed(3)}`,
  );
}
