// Opening a large quantised GGUF, step by step, as `floatscope generate` does it (docs/engine.md,
// "Opening a large quantised model"). Plain Node on the built library (src/dist; `npm run build`
// first), so it runs under `ulimit -v` (tsx does not).
//
//   node bench/open-large.mjs open <file.gguf> [T]   index + tokenizer → weight scan (clean verdict
//        remembered) → engine (default options, received probe) → one forward at T (default 64,
//        32 logit rows); wall and CPU time, RSS of each step, the estimate beside the peak RSS.
//   node bench/open-large.mjs session <file.gguf> [reps]   the onnxruntime session alone, built from
//        the graph (weight cache hit) and loaded from the session cache, interleaved (default 2
//        reps each; the first "cache" run writes the entry when there is none). On a commit before
//        the session cache (and the MLP Loop) both lines build: that is the "before" row.
//
// Every line carries /proc/loadavg: on a shared machine wall time follows the load, CPU time less so.
// The file: bench/make_llada8b_q4.py.
import * as fs from "node:fs";
import * as path from "node:path";

const dist = (p) => import(new URL(`../src/dist/${p}`, import.meta.url).href);
const [mode, file, arg] = process.argv.slice(2);
if (!["open", "session"].includes(mode) || !file) {
  console.error("usage: node bench/open-large.mjs open|session <file.gguf> [T|reps]");
  process.exit(2);
}
const gb = (b) => (b / 1e9).toFixed(2);
const load = () => fs.readFileSync("/proc/loadavg", "utf8").split(" ").slice(0, 3).join(" ");
const maxRss = () => process.resourceUsage().maxRSS * 1024;

function stepper() {
  let wall = performance.now();
  let cpu = process.cpuUsage();
  return (what) => {
    const now = performance.now();
    const c = process.cpuUsage(cpu);
    console.log(
      `| ${what} | ${((now - wall) / 1000).toFixed(1)} | ${((c.user + c.system) / 1e6).toFixed(1)} | ${gb(process.memoryUsage().rss)} | ${gb(maxRss())} | ${load()} |`,
    );
    wall = now;
    cpu = process.cpuUsage();
  };
}

console.log(`${mode} ${path.basename(file)} (${gb(fs.statSync(file).size)} GB), ${new Date().toISOString()}`);
console.log("| step | wall s | CPU s | RSS GB | peak RSS GB | load |\n|---|---|---|---|---|---|");

if (mode === "open") {
  const { openModelFiles, startEngine } = await dist("model/open.js");
  const { assertFiniteWeights } = await dist("graph/scan-weights.js");
  const { defaultWeightCacheDir } = await dist("graph/build/weight-cache.js");
  const T = Number(arg ?? 64);
  const t0 = performance.now();
  const step = stepper();
  const model = openModelFiles(file, { tokenizer: "optional", scanWeights: false });
  step("index + tokenizer");
  const scan = assertFiniteWeights(model.checkpoint, model.spec, { verdictCache: defaultWeightCacheDir() });
  step(scan.cached ? "weight scan (clean verdict remembered)" : "weight scan");
  const { engine } = await startEngine(model, { probes: { received: true }, threads: 2, plannedRun: { batch: 1, seq: T } });
  step(`engine (session cache ${engine.sessionCache.state})`);
  const open = (performance.now() - t0) / 1000;
  const rows = Math.min(32, T);
  const ids = Int32Array.from({ length: T }, (_, i) => 300 + ((i * 7919) % 100000));
  await engine.forward({ ids, batch: 1, seq: T, logitRows: Int32Array.from({ length: rows }, (_, i) => T - rows + i) });
  step(`forward T ${T} (${rows} logit rows)`);
  const est = engine.estimateMemory(1, T, rows).total;
  console.log(
    `\nopen ${open.toFixed(1)} s; estimate ${gb(est)} GB vs peak RSS ${gb(maxRss())} GB (${((est / maxRss() - 1) * 100).toFixed(1)} %)`,
  );
  await engine.dispose();
} else {
  const { openCheckpoint } = await dist("checkpoint/checkpoint.js");
  const { resolveModelSpec } = await dist("graph/adapters/index.js");
  const { buildModelGraph } = await dist("graph/model.js");
  const { defaultWeightCacheDir } = await dist("graph/build/weight-cache.js");
  const { createSession } = await dist("runtime/session.js");
  const ck = openCheckpoint(file);
  const spec = resolveModelSpec(ck);
  const dir = defaultWeightCacheDir();
  // the engine's graph for the default run (createEngine's build options)
  const built = buildModelGraph(spec, ck.tensors, {
    probes: { received: true },
    computeDType: "f32",
    queryChunks: "auto",
    logitRows: true,
    quantizedWeights: "matmulnbits",
    interventions: false,
    weightCacheDir: dir,
  });
  for (let r = 0; r < Number(arg ?? 2); r++) {
    for (const cached of [false, true]) {
      const step = stepper();
      const s = await createSession(built.bytes, built.externalFiles, {
        threads: 2,
        ...(cached ? { sessionCacheDir: path.join(dir, "sessions") } : {}),
      });
      // a build without the session cache (an older commit) builds both times and says so
      const via = s.sessionCache ? `${s.sessionCache.state}, ${gb(s.sessionCache.bytes ?? 0)} GB` : "no session cache in this build";
      step(`session ${cached ? `from the session cache (${via})` : "built"}`);
      await s.session.release();
    }
  }
}
