/**
 * The scale section of BENCHMARKS.md: our engine against llama.cpp's own diffusion runner
 * (`llama-diffusion-cli`) on the same 8B-sized random Q4_0 GGUFs (the paper's LLaDA-8B and Dream-7B
 * shapes, bench/make_llada8b_q4.py), the same 2 threads and the same T: open time, peak RSS and the
 * wall time of one denoising step at T 256 and 512, processes interleaved (ours, llama.cpp at each T,
 * ours, …), medians, the ratio ours / llama.cpp and the load beside every row.
 *
 *   bash bench/setup-llamacpp.sh                       # once: builds llama.cpp into .cache/llamacpp (bench-only)
 *   npx tsx bench/scale.ts                             # ≈ 40–60 min on 2 loaded cores; writes the section
 *   npm run bench -- --section scale                   # the same through the harness, spliced into BENCHMARKS.md
 *   npx tsx bench/scale.ts --shapes llada-8b --rounds 3 --steps 3 --level4   # one shape, more repeats, level-4 rows too
 *   npx tsx bench/scale.ts --quick                     # a 2-layer LLaDA-shaped file, T 128/256, one round: a smoke test
 *
 * Without llama.cpp built, or on a machine with less than 20 GB of RAM, the section says so in one
 * line and nothing runs. Every 8B-sized process runs under `flock /tmp/fs-8b.lock` (one such process
 * on the machine at a time) and `ulimit -v`. The GGUFs (≈ 4.3–4.5 GB each) are written once into
 * $FLOATSCOPE_SCALE_DIR (default .cache/bench/scale, git-ignored), named after the generator's hash.
 */
import { spawnSync } from "node:child_process";
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import * as lib from "./lib.js";
import {
  openTable,
  parseGnuTime,
  parseLlamaDiffusionLog,
  stepDurations,
  stepRatio,
  stepTable,
  vendoredLlamaCommit,
  type OpenRow,
  type OpenSample,
  type StepRow,
  type StepSample,
} from "./scale-report.js";

const HEADING = "## Scale: 8B-sized 4-bit models vs llama.cpp";
const args = process.argv.slice(2);
const quick = args.includes("--quick");
const flag = (name: string): string | undefined => {
  const i = args.indexOf(name);
  return i >= 0 ? args[i + 1] : undefined;
};
const SHAPES = (flag("--shapes") ?? (quick ? "llada-8b" : "llada-8b,dream-7b")).split(",").filter(Boolean);
/** Interleaved rounds: each runs one engine process (every T) and one llama.cpp process per T. */
const ROUNDS = Number(flag("--rounds") ?? (quick ? 1 : 2));
// llama.cpp's runner wraps the prompt in a chat template (ChatML when the file has none; ≈ 70 byte
// tokens here), so T must leave room for it
const TS = quick ? [128, 256] : [256, 512];
/** Timed steps per process and T (one more runs first, untimed). */
const TIMED = Number(flag("--steps") ?? 2);
/** `--level4`: a third job per round, our engine with MatMulNBits accuracy level 4 (int8 activations). */
const LEVEL4 = args.includes("--level4");
const LAYERS = quick ? 2 : undefined;
const THREADS = 2;
const PROMPT = "The capital of France is";
const MIN_RAM = 20e9;
const LOCK = "/tmp/fs-8b.lock";
/** `ulimit -v` (KiB): the engine maps its weight cache and onnxruntime reserves address space; llama.cpp maps the file and repacks it. */
const OURS_VMEM_KB = 24_000_000;
const LLAMA_VMEM_KB = 20_000_000;
const PYTHON = process.env.FLOATSCOPE_BENCH_PYTHON ?? "/usr/bin/python3";
const LLAMA_DIR = path.join(lib.ROOT, ".cache", "llamacpp");
const LLAMA_CLI = path.join(LLAMA_DIR, "bin", "llama-diffusion-cli");
const LLAMA_PIN = "llama-cpp-python==0.3.36";
const SCALE_DIR = path.resolve(process.env.FLOATSCOPE_SCALE_DIR ?? path.join(lib.ROOT, ".cache", "bench", "scale"));
const GENERATOR = path.join(lib.ROOT, "bench", "make_llada8b_q4.py");
const ADD_MERGES = path.join(lib.ROOT, "bench", "gguf_add_merges.py");

const load1 = () => lib.loadAverage()[0];
const quote = (s: string) => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);
const commandLine = (argv: readonly string[]) => argv.map(quote).join(" ");

function write(body: string): void {
  console.log(body);
  if (lib.writesSection(quick)) {
    lib.writeBenchmarkSection(HEADING, body);
    console.log(`wrote ${lib.benchmarkFile()} (${HEADING})`);
  }
}

/** Run `argv` under the 8B lock and an address-space limit, with GNU time's peak RSS and wall appended to stderr. */
function run8b(argv: string[], vmemKb: number, env: NodeJS.ProcessEnv = process.env) {
  const script = 'ulimit -v "$1"; shift; exec /usr/bin/time -f "FSTIME %M %e" "$@"';
  const loadBefore = load1();
  // --quick's 2-layer file stays under 4 GB: no need to wait for the machine's 8B lock
  const locked = quick ? ["bash"] : ["flock", LOCK, "bash"];
  const p = spawnSync(locked[0], [...locked.slice(1), "-c", script, "run8b", String(vmemKb), ...argv], {
    encoding: "utf8",
    maxBuffer: 256 * 2 ** 20,
    env,
  });
  const loadAfter = load1();
  const time = parseGnuTime(p.stderr ?? "", "FSTIME");
  if (p.status !== 0 || !time) {
    throw new Error(`${commandLine(argv)} failed (${p.status ?? p.signal}): ${(p.stderr ?? "").slice(-3000)}`);
  }
  return { stdout: p.stdout, stderr: p.stderr, loadBefore, loadAfter, ...time };
}

/** The library built into a private folder: the worker is plain Node (tsx does not run under `ulimit -v`), and src/dist is others' to rebuild. */
function buildLibrary(): string {
  const out = path.join(lib.ROOT, ".cache", "bench", "scale-dist");
  const stamp = path.join(out, ".built");
  // up to date: built after the last change to any source file (a build takes minutes on a loaded machine)
  const newest = (dir: string): number =>
    Math.max(
      0,
      ...fs
        .readdirSync(dir, { withFileTypes: true })
        .map((e) =>
          e.isDirectory()
            ? e.name === "dist" || e.name === "node_modules"
              ? 0
              : newest(path.join(dir, e.name))
            : fs.statSync(path.join(dir, e.name)).mtimeMs,
        ),
    );
  if (fs.existsSync(stamp) && fs.statSync(stamp).mtimeMs > newest(path.join(lib.ROOT, "src"))) return out;
  fs.rmSync(out, { recursive: true, force: true });
  const tsc = path.join(lib.ROOT, "node_modules", "typescript", "bin", "tsc");
  const p = spawnSync(
    process.execPath,
    [tsc, "-p", path.join(lib.ROOT, "src", "tsconfig.build.json"), "--outDir", out, "--sourceMap", "false", "--declaration", "false"],
    {
      encoding: "utf8",
    },
  );
  if (p.status !== 0) throw new Error(`building the library into ${out} failed: ${p.stdout}${p.stderr}`);
  fs.writeFileSync(stamp, "");
  return out;
}

/**
 * The shape's GGUF, written once per version of the generator and of bench/gguf_add_merges.py (their
 * hashes in the name): the generator's file, then a copy with the one merge and pre-tokenizer name
 * llama.cpp needs to open it (the generator's own file is then removed).
 */
function gguf(shape: string): string {
  const hash = (f: string) => createHash("sha256").update(fs.readFileSync(f)).digest("hex").slice(0, 10);
  const base = path.join(SCALE_DIR, `${shape}-q4_0${LAYERS ? `-l${LAYERS}` : ""}-${hash(GENERATOR)}`);
  const file = `${base}-${hash(ADD_MERGES)}.gguf`;
  if (fs.existsSync(file)) return file;
  fs.mkdirSync(SCALE_DIR, { recursive: true });
  const env = { ...process.env, PYTHONPATH: path.join(lib.ROOT, ".cache", "oracle-py") };
  const raw = `${base}.gguf`;
  if (!fs.existsSync(raw)) {
    console.log(`scale: writing ${raw}…`);
    const tmp = `${raw}.tmp-${process.pid}`;
    const p = spawnSync(PYTHON, [GENERATOR, "--shape", shape, tmp, ...(LAYERS ? [String(LAYERS)] : [])], { encoding: "utf8", env });
    if (p.status !== 0) {
      fs.rmSync(tmp, { force: true });
      throw new Error(`${GENERATOR} --shape ${shape} failed: ${p.stderr}`);
    }
    fs.renameSync(tmp, raw);
  }
  console.log(`scale: writing ${file}…`);
  const tmp = `${file}.tmp-${process.pid}`;
  const p = spawnSync(PYTHON, [ADD_MERGES, raw, tmp], { encoding: "utf8", env });
  if (p.status !== 0) {
    fs.rmSync(tmp, { force: true });
    throw new Error(`${ADD_MERGES} ${raw} failed: ${p.stderr.slice(-2000)}`);
  }
  fs.renameSync(tmp, file);
  fs.rmSync(raw, { force: true });
  return file;
}

interface OursRun {
  open: OpenSample;
  steps: Map<number, StepSample>;
  promptTokens: number;
}

function ours(dist: string, file: string, ts: number[], timed: number, level?: number): OursRun {
  const argv = [
    process.execPath,
    path.join(lib.ROOT, "bench", "scale-worker.mjs"),
    dist,
    file,
    ts.join(","),
    String(timed),
    ...(level === undefined ? [] : [String(level)]),
  ];
  const r = run8b(argv, OURS_VMEM_KB);
  const out = JSON.parse(r.stdout.trim().split("\n").pop() ?? "{}") as {
    openS: number;
    openCpuS: number;
    peakBytes: number;
    perT: Record<string, { promptTokens: number; stepsMs: number[] }>;
  };
  const load = { loadBefore: r.loadBefore, loadAfter: r.loadAfter };
  const steps = new Map<number, StepSample>(ts.map((T) => [T, { stepsMs: out.perT[T].stepsMs, ...load }]));
  return {
    open: { openS: out.openS, openCpuS: out.openCpuS, peakBytes: r.peakBytes, ...load },
    steps,
    promptTokens: out.perT[ts[0]].promptTokens,
  };
}

function llamaArgv(file: string, shape: string, T: number): string[] {
  const schedule = shape.startsWith("dream") ? ["--diffusion-eps", "0.001"] : ["--diffusion-block-length", String(T)];
  return [
    LLAMA_CLI,
    ...["-m", file, "-p", PROMPT, "-t", String(THREADS), "-tb", String(THREADS)],
    ...["-c", String(T), "-b", String(T), "-ub", String(T), "--diffusion-steps", String(TIMED + 1), ...schedule],
    ...["--temp", "0", "--seed", "1", "--log-prefix", "--log-timestamps", "--log-colors", "off"],
  ];
}

function theirs(file: string, shape: string, T: number): { open: OpenSample; step: StepSample; samplingMs: number } {
  const r = run8b(llamaArgv(file, shape, T), LLAMA_VMEM_KB);
  const log = parseLlamaDiffusionLog(r.stdout + r.stderr);
  const load = { loadBefore: r.loadBefore, loadAfter: r.loadAfter };
  return {
    open: { openS: log.stepStartsMs[0] / 1000, peakBytes: r.peakBytes, ...load },
    step: { stepsMs: stepDurations(log), ...load },
    samplingMs: log.samplingPerStepMs,
  };
}

function llamaVersion(): string {
  const changelog = path.join(LLAMA_DIR, "src", "CHANGELOG.md");
  const commit = fs.existsSync(changelog) ? vendoredLlamaCommit(fs.readFileSync(changelog, "utf8"), LLAMA_PIN.split("==")[1]) : undefined;
  const v = spawnSync(LLAMA_CLI, ["--version"], { encoding: "utf8" });
  const build = /version: .*/.exec(`${v.stdout}${v.stderr}`)?.[0] ?? "version unknown";
  return `${LLAMA_PIN}'s vendored llama.cpp${commit ? ` (ggml-org/llama.cpp@${commit}, from the package's CHANGELOG)` : ""}; the binary says "${build}"`;
}

/** What the rounds have measured so far (the section is rewritten after every shape, so a stopped run keeps the finished ones). */
interface Measured {
  stepRows: StepRow[];
  stepRowsL4: StepRow[];
  openRows: OpenRow[];
  warmups: string[];
  prompts: string[];
  failed: string[];
  pending: string[];
}

function section(head: string, loadStart: readonly number[], started: number, m: Measured): string {
  const minutes = (Date.now() - started) / 60_000;
  const exampleFile = path.join("$FLOATSCOPE_SCALE_DIR", `${SHAPES[0]}-q4_0-<hash>.gguf`);
  const example = commandLine(llamaArgv("FILE", SHAPES[0], TS[0]))
    .replace(LLAMA_CLI, ".cache/llamacpp/bin/llama-diffusion-cli")
    .replace("FILE", exampleFile);
  const ratios = m.stepRows.map(stepRatio);
  const notes = [
    ...m.failed.map((f) => `- **Not measured**: ${f}`),
    ...m.pending.map((p) => `- **Not measured yet** (the run was still going when this was written): ${p}`),
  ];
  return `${head}
${lib.loadSentence(loadStart, lib.loadAverage())} ${minutes.toFixed(1)} min.
${quick ? "\n**Quick mode: a 2-layer file of the same widths, T 128/256, one round: a smoke test of the harness; these numbers mean nothing.**\n" : ""}
Random Q4_0 GGUFs shaped like the paper's models, written by \`bench/make_llada8b_q4.py --shape …\`${LAYERS ? ` (first ${LAYERS} layers)` : ""}: LLaDA-8B (d 4096, 32 layers,
32 heads, MLP 12288, vocabulary 126464) and Dream-7B (Qwen2 body: d 3584, 28 layers, 28/4 heads, q/k/v biases, MLP 18944,
vocabulary 152064), then copied by \`bench/gguf_add_merges.py\` with one BPE merge ("Ġ Ġ", which the prompt never uses) and the
pre-tokenizer named "default" instead of "gpt2": llama.cpp refuses the generator's file without them. Both sides read that same file with ${THREADS} threads. Each round runs, one after the other: one process of
**our engine** (opened as \`floatscope generate\` opens a GGUF: index and tokenizer, the remembered weight scan, \`startEngine\`
with the default probes \`${JSON.stringify({ received: true })}\`, blocks kept quantised; then the library's \`generate\` at each T), then
**llama.cpp**'s \`llama-diffusion-cli\`, one process per T; ${ROUNDS} round${ROUNDS === 1 ? "" : "s"}, so the machine's load falls on both alike. Each process runs
${TIMED + 1} denoising steps at each T with the prompt "${PROMPT}" (${m.prompts.join(", ") || "—"}) and the rest of the T positions masked;
the first step of each (it also sizes the buffers for this T) is left out, the other ${TIMED} are timed; the tables give the median
over every timed step of every process, and each process's own median.

- **One step** is one forward over all T positions plus the sampler's choice of tokens. Ours: the wall time between
  consecutive \`onStep\` calls of \`generate\` (the forward with the default probes recorded, the sampler, the trace's record of
  the step; bench/scale-worker.mjs), LLaDA with one block over the answer, Dream with its default schedule. llama.cpp: the
  runner's step callback logs "diffusion step: k/N" at the start of every step; with \`--log-timestamps\` consecutive
  starts bound one step, the last one ends at its "total time" line (parsed by bench/scale-report.ts). llama.cpp computes
  logits for all T rows at every step; its own "sampling time per step" is listed. Its runner always wraps the prompt in a
  chat template (ChatML when the file has none: ≈ 70 byte tokens instead of ours), so fewer of its T positions are
  masked; the forward's size is T on both sides.
- **Open**: ours from the process's first line to the engine ready (wall and CPU, the weight cache and the scan verdict
  already present: a warm-up process per shape wrote them first, ${m.warmups.join("; ") || "—"}); llama.cpp from its start to its
  first step (log clock: loading and repacking the weights, the context, tokenising).
- **Peak RSS**: GNU time's maximum resident set of each whole process (ours: open and every T).
- llama.cpp: ${llamaVersion()}, built by \`bash bench/setup-llamacpp.sh\` (CPU, Release, the CPU's instruction sets without AMX). Its command, per T:

      ${example}

  (LLaDA: one block of T, as ours; Dream: \`--diffusion-eps 0.001\` instead of the block length.) Every process of both
  sides runs under ${quick ? "" : `\`flock ${LOCK}\` and `}\`ulimit -v\` (ours ${OURS_VMEM_KB} KiB, llama.cpp ${LLAMA_VMEM_KB} KiB).
${notes.length ? `\n${notes.join("\n")}\n` : ""}
### Per denoising step

${m.stepRows.length ? stepTable(m.stepRows) : "(no shape measured)"}
${
  LEVEL4 && m.stepRowsL4.length
    ? `
Our engine with MatMulNBits \`accuracy_level\` 4 (\`nbitsAccuracyLevel: 4\`: int8 activations, not the default; same rounds, a third
process each):

${stepTable(m.stepRowsL4)}
`
    : ""
}
### Open and memory

${m.openRows.length ? openTable(m.openRows) : "(no shape measured)"}
${ratios.length ? `\nWorst ratio ours / llama.cpp per step: **${Math.max(...ratios).toFixed(2)}×** (≤ 1.00 means at least llama.cpp's speed).\n` : ""}`;
}

/** Warm-up, then ROUNDS interleaved rounds on one shape; the rows go into `m`. */
function measureShape(dist: string, shape: string, m: Measured): void {
  const file = gguf(shape);
  // The first open of a file decodes its blocks into the weight cache and scans it; later opens map both.
  console.log(`scale: ${shape}: warm-up (weight cache, scan verdict)…`);
  const w = ours(dist, file, [64], 1);
  const rows = new Map(TS.map((T) => [T, { shape, T, ours: [], theirs: [], theirSamplingMs: [] } as StepRow]));
  const label4 = `${shape}, ours at accuracy level 4`;
  const rowsL4 = new Map(TS.map((T) => [T, { shape: label4, T, ours: [], theirs: [], theirSamplingMs: [] } as StepRow]));
  const open: OpenRow = { shape, fileBytes: fs.statSync(file).size, ours: [], theirs: [] };
  const openL4: OpenRow = { shape: label4, fileBytes: open.fileBytes, ours: [], theirs: [] };
  let promptTokens = 0;
  for (let r = 0; r < ROUNDS; r++) {
    console.log(`scale: ${shape}: round ${r + 1}/${ROUNDS}: ours…`);
    const o = ours(dist, file, TS, TIMED);
    open.ours.push(o.open);
    for (const T of TS) rows.get(T)!.ours.push(o.steps.get(T)!);
    promptTokens = o.promptTokens;
    for (const T of TS) {
      console.log(`scale: ${shape}: round ${r + 1}/${ROUNDS}: llama.cpp T ${T}…`);
      const t = theirs(file, shape, T);
      open.theirs.push(t.open);
      openL4.theirs.push(t.open);
      for (const row of [rows.get(T)!, rowsL4.get(T)!]) {
        row.theirs.push(t.step);
        row.theirSamplingMs.push(t.samplingMs);
      }
    }
    if (LEVEL4) {
      console.log(`scale: ${shape}: round ${r + 1}/${ROUNDS}: ours, accuracy level 4…`);
      const o4 = ours(dist, file, TS, TIMED, 4);
      openL4.ours.push(o4.open);
      for (const T of TS) rowsL4.get(T)!.ours.push(o4.steps.get(T)!);
    }
  }
  m.warmups.push(`${shape} ${w.open.openS.toFixed(1)} s (load ${w.open.loadBefore.toFixed(1)})`);
  m.prompts.push(`${shape}: ${promptTokens} prompt tokens in ours`);
  m.stepRows.push(...rows.values());
  m.openRows.push(open);
  if (LEVEL4) {
    m.stepRowsL4.push(...rowsL4.values());
    m.openRows.push(openL4);
  }
}

async function main(): Promise<void> {
  const started = Date.now();
  const loadStart = lib.loadAverage();
  const head = `${HEADING}\n\n\`npx tsx bench/scale.ts${args.length ? ` ${args.join(" ")}` : ""}\` — ${lib.machineStamp()}, ${(os.totalmem() / 2 ** 30).toFixed(1)} GiB RAM, Node ${process.version}.`;
  if (!fs.existsSync(LLAMA_CLI)) {
    write(`${head}\n\nNot run: llama.cpp is not built here (\`bash bench/setup-llamacpp.sh\` builds it into .cache/llamacpp/).\n`);
    return;
  }
  if (!quick && os.totalmem() < MIN_RAM) {
    write(
      `${head}\n\nNot run: this machine has ${(os.totalmem() / 1e9).toFixed(1)} GB of RAM; the 8B-sized runs need ${MIN_RAM / 1e9} GB.\n`,
    );
    return;
  }
  console.log("scale: building the library…");
  const dist = buildLibrary();
  const m: Measured = { stepRows: [], stepRowsL4: [], openRows: [], warmups: [], prompts: [], failed: [], pending: [...SHAPES] };
  for (const shape of SHAPES) {
    try {
      measureShape(dist, shape, m);
    } catch (e) {
      const msg = (e instanceof Error ? e.message : String(e)).split("\n").slice(0, 3).join(" ").slice(0, 400);
      m.failed.push(`${shape}: ${msg}`);
      console.error(`scale: ${shape} failed: ${e instanceof Error ? e.message : String(e)}`);
    }
    m.pending.shift();
    write(section(head, loadStart, started, m));
  }
  if (m.failed.length === SHAPES.length) process.exitCode = 1;
}

await main();
