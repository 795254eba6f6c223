/**
 * Start-up and throughput of the claims grid's processes (`floatscope eval --grid
 * findings/claims.grid.json`), per model: where a process's start-up goes, what the session cache
 * (src/runtime/session-cache.ts) changes, and how many questions a minute each model runs at.
 *
 *   npx tsx bench/startup.ts                 # every model of the claims grid present here; writes BENCHMARKS.md
 *   npx tsx bench/startup.ts --rounds 2      # fewer interleaved rounds
 *   npx tsx bench/startup.ts --quick         # tiny models only, one round, one question: a smoke test (no file written)
 *   npm run bench -- --section startup       # the same, spliced into the existing BENCHMARKS.md
 *   npx tsx bench/startup.ts --from a.jsonl,b.jsonl  # the tables from the raw reports of earlier runs (each run
 *                                            # leaves raw.jsonl in its temporary folder), measuring nothing
 *
 * Every measurement is a fresh process (bench/startup-worker.ts) doing what a grid process does for
 * one model: a one-model copy of the claims grid (same data, setting, measures, seed, batch size) is
 * written to a temporary folder, and all caches live in a fresh `FLOATSCOPE_CACHE_DIR` there, so
 * nothing in runs/ or findings/ is read or written besides the grid file itself.
 *
 * 1. First process per model on empty caches (the weight scan runs, a GGUF's blocks are decoded).
 * 2. `rounds` rounds; in each, every model runs once without the session cache ("off"), once
 *    writing its entry ("cold": the entry removed just before) and once loading it ("warm"), in an
 *    order that rotates per round (cold always before warm), so the machine's load falls on all
 *    three alike; the 135M models also run without graph optimisation and without weight prepacking,
 *    which tells the session's parts apart. Medians over rounds; the load average before and after
 *    every process is kept.
 * 3. Throughput: one process per model runs the first `questions` questions of its first unit;
 *    questions per minute = 60 s / the median question (wall), with its CPU seconds beside it.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readGrid } from "../src/grid/grid.js";
import { formatLoad, loadAverage, machineStamp, markdownTable, median, ROOT, writeBenchmarkSection, writesSection } from "./lib.js";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const ROUNDS = Number(flag("--rounds") ?? (quick ? 1 : 3));
/** Questions timed per model in the throughput part: the 135M models take minutes each on a loaded machine. */
const QUESTIONS = { tiny: Number(flag("--questions") ?? (quick ? 1 : 8)), real: Number(flag("--questions-real") ?? (quick ? 1 : 2)) };
const GRID_FILE = path.join(ROOT, "findings", "claims.grid.json");
const HEADING = "## Claims start-up and throughput";

interface Report {
  model: string;
  cache: string;
  importsMs: number;
  importsCpuMs: number;
  gridMs: number;
  fingerprintMs: number;
  filesMs: number;
  scanMs: number;
  scanRemembered: boolean;
  buildMs: number;
  sessionMs: number;
  buildCpuMs: number;
  sessionCpuMs: number;
  readyMs: number;
  readyCpuMs: number;
  firstStepMs: number;
  firstStepCpuMs: number;
  toFirstStepMs: number;
  toFirstStepCpuMs: number;
  questionMs: number[];
  steps: number;
  stepMs: number[];
  sessionCache: { state: string; dir?: string; bytes?: number };
  quantizedWeights: string;
  nodes: number;
  errors: string[];
  questionCpuMs?: number[];
  /** 1-minute load average before → after the process (added here). */
  load: [number, number];
  /** Which part of the bench the process belongs to (added here; inferred for older raw files). */
  phase?: Phase;
}
type Phase = "first" | "round" | "throughput";
/** Session variants the worker knows besides on/off: the cache off, one part of the session's work left out. */
const VARIANTS = ["no-optimisation", "no-prepacking"] as const;
const FROM = flag("--from")?.split(",").filter(Boolean);

const grid = readGrid(GRID_FILE);
const present = grid.models.filter((m) => fs.existsSync(m.path));
const missing = grid.models.filter((m) => !fs.existsSync(m.path));
const models = quick ? present.filter((m) => m.tier === "tiny").slice(0, 2) : present;
const isReal = (m: { tier: string }) => m.tier !== "tiny";

const work = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-startup-"));
const cacheDir = path.join(work, "cache");
const spec = JSON.parse(fs.readFileSync(GRID_FILE, "utf8")) as Record<string, unknown>;
/** A one-model copy of the claims grid, every path absolute. */
function oneModelGrid(m: (typeof models)[number]): string {
  const file = path.join(work, `grid-${m.name.replace(/[^A-Za-z0-9._-]/g, "_")}.json`);
  const d = grid.datasets[0];
  const copy = {
    ...spec,
    name: "startup",
    models: [{ name: m.name, path: m.path, tier: m.tier }],
    datasets: [{ name: d.name, path: d.path, skip: d.skip, ...(d.limit === null ? {} : { limit: d.limit }) }],
  };
  fs.writeFileSync(file, JSON.stringify(copy));
  return file;
}
const gridFiles = new Map(models.map((m) => [m.name, oneModelGrid(m)]));

const raw: Report[] = [];
function run(m: (typeof models)[number], cache: string, phase: Phase, questions = 0): Report {
  const before = loadAverage()[0];
  const p = spawnSync(
    process.execPath,
    ["--import", "tsx", path.join(ROOT, "bench", "startup-worker.ts"), gridFiles.get(m.name)!, cache, String(questions)],
    {
      cwd: ROOT,
      encoding: "utf8",
      env: { ...process.env, FLOATSCOPE_CACHE_DIR: cacheDir },
      maxBuffer: 64 * 2 ** 20,
    },
  );
  if (p.status !== 0)
    throw new Error(`bench/startup-worker.ts failed on ${m.name} (${p.status ?? p.signal}): ${(p.stderr ?? "").slice(-2000)}`);
  const r = JSON.parse(p.stdout.trim().split("\n").pop()!) as Report;
  r.load = [before, loadAverage()[0]];
  r.phase = phase;
  if (r.errors.length) throw new Error(`${m.name}: questions failed: ${r.errors.join("; ")}`);
  raw.push(r);
  fs.appendFileSync(path.join(work, "raw.jsonl"), JSON.stringify(r) + "\n");
  console.log(
    `startup: ${m.name} ${cache}${questions ? ` ${questions} q` : ""} (${r.sessionCache.state}): ready ${(r.readyMs / 1000).toFixed(1)} s, first step ${(r.toFirstStepMs / 1000).toFixed(1)} s, load ${r.load.map((x) => x.toFixed(1)).join(" → ")}`,
  );
  return r;
}

/** The compiled library's import time (what the `floatscope` command loads: src/dist), when it is built. */
function compiledImportMs(): number | undefined {
  const dist = path.join(ROOT, "src", "dist");
  const mods = ["grid/shard.js", "grid/measures.js", "model/open.js", "qa/runner.js"].map((f) => path.join(dist, f));
  if (!mods.every((f) => fs.existsSync(f))) return undefined;
  const code = `for (const f of ${JSON.stringify(mods)}) await import(f); console.log(performance.now());`;
  const p = spawnSync(process.execPath, ["--input-type=module", "-e", code], { cwd: ROOT, encoding: "utf8" });
  return p.status === 0 ? Number(p.stdout.trim()) : undefined;
}

const started = Date.now();
const load0 = loadAverage();
const compiled: number[] = [];
if (FROM) {
  for (const f of FROM)
    for (const line of fs.readFileSync(f, "utf8").split("\n")) if (line.trim().startsWith("{")) raw.push(JSON.parse(line) as Report);
} else {
  try {
    for (const m of models) run(m, "off", "first");
    const orders: ("off" | "cold" | "warm")[][] = [
      ["off", "cold", "warm"],
      ["cold", "warm", "off"],
      ["cold", "off", "warm"],
    ];
    for (let r = 0; r < ROUNDS; r++) {
      const c = compiledImportMs();
      if (c !== undefined) compiled.push(c);
      for (const m of models) {
        const kinds: string[] = [...orders[r % orders.length], ...(isReal(m) ? VARIANTS : [])];
        for (const kind of kinds) {
          // "cold" writes the entry: whatever an earlier round left is removed first
          if (kind === "cold") fs.rmSync(path.join(cacheDir, "sessions"), { recursive: true, force: true });
          const rep = run(m, kind === "cold" || kind === "warm" ? "on" : kind, "round");
          const want = kind === "cold" ? "written" : kind === "warm" ? "hit" : "off";
          if (rep.sessionCache.state !== want)
            throw new Error(`${m.name} ${kind}: session cache ${rep.sessionCache.state}, expected ${want}`);
        }
      }
    }
    for (const m of models) run(m, "on", "throughput", isReal(m) ? QUESTIONS.real : QUESTIONS.tiny);
  } finally {
    fs.rmSync(cacheDir, { recursive: true, force: true });
  }
}
const load1 = loadAverage();

// Each report's part of the bench: older raw files have no phase (a model's first report was its first process).
const seen = new Set<string>();
for (const r of raw) {
  r.phase ??= r.questionMs.length > 0 ? "throughput" : seen.has(r.model) ? "round" : "first";
  seen.add(r.model);
}
const reported = models.filter((m) => raw.some((r) => r.model === m.name));
const first = new Map(raw.filter((r) => r.phase === "first").map((r) => [r.model, r]));
const inRounds = (name: string, kind: string) =>
  raw.filter(
    (r) =>
      r.model === name &&
      r.phase === "round" &&
      (kind === "cold" ? r.sessionCache.state === "written" : kind === "warm" ? r.sessionCache.state === "hit" : r.cache === kind),
  );
const rounds = new Map(
  reported.map((m) => [m.name, { off: inRounds(m.name, "off"), cold: inRounds(m.name, "cold"), warm: inRounds(m.name, "warm") }]),
);
/** Each model's throughput processes pooled into one report (questions and steps together, the widest load range). */
const throughput = new Map<string, Report>();
for (const r of raw.filter((x) => x.phase === "throughput")) {
  const had = throughput.get(r.model);
  throughput.set(
    r.model,
    had
      ? {
          ...had,
          questionMs: [...had.questionMs, ...r.questionMs],
          questionCpuMs: [...(had.questionCpuMs ?? []), ...(r.questionCpuMs ?? [])],
          stepMs: [...had.stepMs, ...r.stepMs.slice(1)],
          steps: had.steps + r.steps,
          load: [Math.min(had.load[0], r.load[0]), Math.max(had.load[1], r.load[1])],
        }
      : r,
  );
}
const roundCount = Math.max(...[...rounds.values()].map((r) => r.off.length));
const allLoads = raw.flatMap((r) => r.load);

// ----------------------------------------------------------------------------- tables

const s1 = (ms: number) => (ms / 1000).toFixed(1);
const s2 = (ms: number) => (ms / 1000).toFixed(2);
const med = (rs: Report[], f: (r: Report) => number) => median(rs.map(f));
const loadRange = (rs: Report[]) => {
  const xs = rs.flatMap((r) => r.load);
  return `${Math.min(...xs).toFixed(1)}–${Math.max(...xs).toFixed(1)}`;
};
const mb = (b: number | undefined) => (b === undefined ? "—" : (b / 1e6).toFixed(0));
/** "12.3 (4.5)": median wall seconds, median CPU seconds in brackets. */
const wc = (rs: Report[], wall: (r: Report) => number, cpu: (r: Report) => number) => `${s1(med(rs, wall))} (${s1(med(rs, cpu))})`;

const phaseRows = reported.flatMap((m) => {
  const row = (label: string, rs: Report[]) => [
    m.name,
    label,
    rs.length,
    `${s1(med(rs, (r) => r.importsMs))} (${s1(med(rs, (r) => r.importsCpuMs))})`,
    s2(med(rs, (r) => r.gridMs)),
    s2(med(rs, (r) => r.fingerprintMs)),
    s2(med(rs, (r) => r.filesMs)),
    `${s2(med(rs, (r) => r.scanMs))}${rs.every((r) => r.scanRemembered) ? " (remembered)" : ""}`,
    wc(
      rs,
      (r) => r.buildMs,
      (r) => r.buildCpuMs,
    ),
    wc(
      rs,
      (r) => r.sessionMs,
      (r) => r.sessionCpuMs,
    ),
    `**${wc(
      rs,
      (r) => r.readyMs,
      (r) => r.readyCpuMs,
    )}**`,
    wc(
      rs,
      (r) => r.firstStepMs,
      (r) => r.firstStepCpuMs,
    ),
    `**${wc(
      rs,
      (r) => r.toFirstStepMs,
      (r) => r.toFirstStepCpuMs,
    )}**`,
    loadRange(rs),
  ];
  const f = first.get(m.name);
  const off = rounds.get(m.name)!.off;
  return [...(f ? [row("first process, empty caches", [f])] : []), ...(off.length ? [row("next processes (cache off)", off)] : [])];
});

const cacheRows = reported.flatMap((m) => {
  const r = rounds.get(m.name)!;
  if (!r.off.length) return [];
  const base = med(r.off, (x) => x.toFirstStepMs);
  const baseCpu = med(r.off, (x) => x.toFirstStepCpuMs);
  return (["off", "cold", "warm"] as const)
    .filter((k) => r[k].length)
    .map((k) => {
      const rs = r[k];
      const t = med(rs, (x) => x.toFirstStepMs);
      const c = med(rs, (x) => x.toFirstStepCpuMs);
      return [
        m.name,
        k === "off" ? "off (baseline)" : k === "cold" ? "on, entry written" : "on, entry loaded",
        rs.length,
        wc(
          rs,
          (x) => x.sessionMs,
          (x) => x.sessionCpuMs,
        ),
        wc(
          rs,
          (x) => x.readyMs,
          (x) => x.readyCpuMs,
        ),
        `${s1(t)} (${s1(c)})`,
        rs.map((x) => s1(x.toFirstStepMs)).join(", "),
        k === "off" ? "—" : `${(t / base).toFixed(2)} (${(c / baseCpu).toFixed(2)})`,
        k === "off" ? "—" : mb(rs[0].sessionCache.bytes),
        loadRange(rs),
      ];
    });
});

/** The session's creation without one of its parts, beside the baseline (CPU seconds: the wall ones follow the load). */
const variantRows = reported.flatMap((m) => {
  const off = rounds.get(m.name)!.off;
  const kinds = [
    ["off (baseline)", off],
    ["on, entry loaded", rounds.get(m.name)!.warm],
    ...VARIANTS.map(
      (v) =>
        [
          v === "no-optimisation" ? 'no graph optimisation (`graphOptimizationLevel: "disabled"`)' : "no weight prepacking (`lowMemory`)",
          inRounds(m.name, v),
        ] as const,
    ),
  ] as const;
  if (!inRounds(m.name, VARIANTS[0]).length || !off.length) return [];
  const base = med(off, (x) => x.sessionCpuMs);
  return kinds
    .filter(([, rs]) => rs.length)
    .map(([label, rs]) => [
      m.name,
      label,
      rs.length,
      s1(med(rs, (x) => x.sessionCpuMs)),
      (med(rs, (x) => x.sessionCpuMs) / base).toFixed(2),
      s1(med(rs, (x) => x.firstStepCpuMs)),
      rs[0].nodes,
      loadRange(rs),
    ]);
});

const tputRows = reported.flatMap((m) => {
  const r = throughput.get(m.name);
  if (!r) return [];
  const q = median(r.questionMs);
  // CPU seconds only where every question of the model has them (older reports lack them)
  const qc = r.questionCpuMs?.length === r.questionMs.length ? median(r.questionCpuMs) : NaN;
  return [
    [
      m.name,
      m.tier,
      r.nodes,
      r.questionMs.length,
      (r.steps / r.questionMs.length).toFixed(1),
      s2(q),
      Number.isNaN(qc) ? "—" : s2(qc),
      (60_000 / q).toFixed(q > 6000 ? 2 : 0),
      median(r.stepMs.slice(1)).toFixed(0),
      `${Math.min(...r.load).toFixed(1)}–${Math.max(...r.load).toFixed(1)}`,
    ],
  ];
});

/** The cache's effect in words, from the medians. */
const verdicts = reported
  .filter((m) => rounds.get(m.name)!.warm.length && rounds.get(m.name)!.off.length)
  .map((m) => {
    const r = rounds.get(m.name)!;
    const t = med(r.warm, (x) => x.toFirstStepMs) / med(r.off, (x) => x.toFirstStepMs);
    const c = med(r.warm, (x) => x.toFirstStepCpuMs) / med(r.off, (x) => x.toFirstStepCpuMs);
    const sc = med(r.warm, (x) => x.sessionCpuMs) / med(r.off, (x) => x.sessionCpuMs);
    return `${m.name} ${t.toFixed(2)}× wall, ${c.toFixed(2)}× CPU (its session ${sc.toFixed(2)}× CPU)`;
  });

/** The 135M models' CPU ratios in one line: what a loaded entry saves, what writing one costs, and its size. */
const realCache = reported.filter(
  (m) => isReal(m) && rounds.get(m.name)!.warm.length && rounds.get(m.name)!.cold.length && rounds.get(m.name)!.off.length,
);
const cpuRatio = (name: string, k: "cold" | "warm") =>
  med(rounds.get(name)![k], (x) => x.toFirstStepCpuMs) / med(rounds.get(name)!.off, (x) => x.toFirstStepCpuMs);
const span = (xs: number[]) => `${Math.min(...xs).toFixed(2)}–${Math.max(...xs).toFixed(2)}×`;
const realSummary = realCache.length
  ? `On the ${realCache.length} larger models the loaded entry takes the CPU to the first step to ${span(realCache.map((m) => cpuRatio(m.name, "warm")))} of the baseline's, ` +
    `writing it to ${span(realCache.map((m) => cpuRatio(m.name, "cold")))}, and an entry holds ${realCache.map((m) => mb(rounds.get(m.name)!.warm[0].sessionCache.bytes)).join(" / ")} MB.`
  : "";
const minutes = (Date.now() - started) / 60_000;
const tputCounts = [
  ...new Set(reported.filter((m) => throughput.has(m.name)).map((m) => `${throughput.get(m.name)!.questionMs.length} for ${m.name}`)),
];
const stampLine = FROM
  ? `\`npx tsx bench/startup.ts --from ${FROM.join(",")}\`: ${raw.length} process reports of \`npx tsx bench/startup.ts\` runs${
      raw.some((r) => VARIANTS.includes(r.cache as (typeof VARIANTS)[number]))
        ? " and of `bench/startup-worker.ts GRID no-optimisation | no-prepacking` runs beside them"
        : ""
    }, rendered ${machineStamp()}, Node ${process.version}; the 1-minute load average over those processes ranged ${Math.min(...allLoads).toFixed(1)}–${Math.max(...allLoads).toFixed(1)}.`
  : `\`npx tsx bench/startup.ts\` — ${machineStamp()}, Node ${process.version}; load average ${formatLoad(load0)} before and ${formatLoad(load1)} after (1/5/15 min), ${minutes.toFixed(0)} min.`;

const body = `${HEADING}

${stampLine}
The machine is shared and was loaded throughout: wall times here are several times the CPU times; the CPU times (in brackets: user + system of every thread of the process) are the steadier measure.

What a process of \`floatscope eval --grid findings/claims.grid.json\` spends before its first unit's first denoising step, per model of the grid
(${reported.length} of its ${grid.models.length} models${missing.length ? `; not present here: ${missing.map((m) => m.name).join(", ")}` : ""}). Each measurement is a fresh process (bench/startup-worker.ts) that runs the grid's
steps for one model through the same functions, with a clock between them: read the grid and its data; fingerprint the model (runShard does this for every model of the grid,
once per process); read the checkpoint and tokenizer (the preset); the NaN/Inf weight scan (its clean verdict is remembered in the cache folder, so only a process on an empty
cache reads the weights); build the graph in TS (a GGUF's blocks are decoded into the weight cache the first time, mapped afterwards); create the onnxruntime session
(graph optimisation, weight prepacking); then the first question of the first unit at the grid's settings (distractors k 4, the four measures' probes, batch 1) until its first step.
"imports" runs through tsx, which compiles the TypeScript on the fly${compiled.length ? `; the compiled library (src/dist, what the \`floatscope\` command loads) imports the same modules in ${s1(median(compiled))} s (median of ${compiled.length})` : ""}.
All caches live in a fresh \`FLOATSCOPE_CACHE_DIR\` of the run. Seconds, medians; CPU seconds in brackets.

${markdownTable(
  [
    "model",
    "process",
    "n",
    "imports (CPU)",
    "grid + data",
    "fingerprint",
    "checkpoint + tokenizer",
    "weight scan",
    "graph build (CPU)",
    "session (CPU)",
    "engine ready (CPU)",
    "first step (CPU)",
    "to first step (CPU)",
    "load",
  ],
  phaseRows,
)}

**Session cache** (\`sessionCache: true\`: onnxruntime's optimized model with its prepacked weights, saved on the first open and loaded on the next). ${roundCount} interleaved rounds per
model, each running the process without the cache, writing the entry (removed just before) and loading it, in a rotating order; the weight cache and the scan verdict are
warm in all three. "× off" is the median time to the first step over the baseline's in the same rounds (CPU ratio in brackets).

${markdownTable(["model", "session cache", "n", "session s (CPU)", "engine ready s (CPU)", "to first step s (CPU)", "each run's s", "× off", "entry MB", "load"], cacheRows)}

Loaded entry against no cache, to the first step: ${verdicts.join("; ")}. ${realSummary}
${
  variantRows.length
    ? `
**What the session's creation spends** on the 135M models: the same process without graph optimisation, and without weight prepacking (both with the cache off), beside the
baseline and the loaded entry. CPU seconds of \`InferenceSession.create\`, medians; the first step's CPU shows what leaving a part out costs later.

${markdownTable(["model", "session", "n", "session CPU s", "× off", "first step CPU s", "graph nodes", "load"], variantRows)}
`
    : ""
}
**Questions per minute** at the claims grid's settings: processes running the first questions of each model's first unit (${tputCounts.join(", ")}; a model's processes
pooled); a question is a whole decode with the four measures' probes, its measures computed. "questions / min" is 60 s over the median wall time of a question on this
loaded machine; the CPU seconds per question say what the same decode costs in work. "ms / step" is the median forward after the first.

${markdownTable(["model", "tier", "graph nodes", "questions", "steps / question", "s / question", "CPU s / question", "questions / min", "ms / step", "load"], tputRows)}
`;

if (!FROM) fs.writeFileSync(path.join(work, "section.md"), body);
console.log(body);
if (writesSection(quick)) writeBenchmarkSection(HEADING, body);
if (!FROM) console.log(`startup: raw reports in ${path.join(work, "raw.jsonl")}`);
fs.rmSync(FROM ? work : path.join(work, "none"), { recursive: true, force: true });
