/**
 * The paper's Table 1 on real questions: NQ-open with gold passages (the Lost-in-the-Middle oracle file, which
 * the user points at; it is never copied into the repository), closed-book vs the gold passage among k
 * distractors, for the real ARM (SmolLM2-135M-Instruct, tier `real`) and the real-base pair (SmolLM2-135M
 * adapted into a Dream-style MDM beside its causal twin, tier `real-base`). Per model: accuracy and F1 in both
 * settings with 95 % intervals (accuracy: Wilson; F1: bootstrap over questions) and the RAG gain paired over
 * the same questions (bootstrap of the per-question differences) — scripts/lib/nq-table1.ts — with the
 * paper's NQ numbers (src/qa/paper-table1.ts) beside ours; the findings decide `rag-gain-mdm-vs-arm` on the
 * tier "real-base · NQ-open" (the claims rule, src/display/claims.ts, docs/claims.md).
 *
 *   npx tsx scripts/measure-nq.ts --path nq-open-oracle.jsonl.gz               # 5 questions per setting (a check)
 *   FLOATSCOPE_NQ=nq-open-oracle.jsonl.gz npx tsx scripts/measure-nq.ts --n 20 --tiers real-base
 *   npx tsx scripts/measure-nq.ts --n 300 --out findings/nq-table1.findings.json   # the committed large run
 *   npx tsx scripts/measure-nq.ts --merged runs/nq/merged.jsonl --out …          # the same table from a grid run
 *
 * The large run (n = 300 per setting, both tiers) was about 26 h of CPU — 13–26 h on 2 idle cores; the real-base
 * pair alone (which decides the claim) 2.3–4.5 h, the real ARM the rest, when each of its up to 32 tokens was a
 * full forward over a 1000-token prompt. The ARM now decodes through the engine's key/value cache (one prompt
 * forward, then one single-row forward per token; BENCHMARKS.md "ARM key/value cache"), so its share is far
 * smaller. docs/claims.md (`rag-gain-mdm-vs-arm`) has the measured per-question times behind the old estimate;
 * the script prints an estimate from its own run.
 *
 *   (ulimit -v 64000000; nice npx tsx scripts/measure-nq.ts --n 300 --threads 2 \
 *      --path "$FLOATSCOPE_NQ" --out findings/nq-table1.findings.json) > nq-300.log 2>&1
 *
 * Resumable: every question's row is appended to `.cache/nq-table1/<data hash>/<model>-<model hash>.jsonl` as it
 * finishes (the runner's results file); a rerun skips what is done, so an interrupted run continues and a
 * larger --n only runs the new questions. Distractors are other questions' gold passages drawn from the whole
 * file (seeded by question id), so a question's prompt does not depend on --n — and is the prompt the
 * evaluation grid builds for it.
 *
 * (Under `ulimit -v 20000000` tsx's WebAssembly cannot reserve its memory and the process does not start.)
 *
 * The same through the grid (`floatscope eval --grid`, shardable with --shard i/n and `floatscope slurm`):
 * findings/nq-table1.grid.json (the three checkpoints with their tiers, dataset `${FLOATSCOPE_NQ}` limited to 300,
 * closed-book and `distractors` k 4, gold position `cycle`, source `pool`) gives the same rows:
 *
 *   npx floatscope eval --grid findings/nq-table1.grid.json --shard 1/4 --out runs/nq      # … 4/4, or floatscope slurm
 *   npx floatscope merge runs/nq --out runs/nq/merged.jsonl
 *   npx tsx scripts/measure-nq.ts --merged runs/nq/merged.jsonl --out findings/nq-table1.findings.json
 *
 * What the real-base pair measures here: both were trained (LoRA on SmolLM2-135M) only on the synthetic
 * world's questions, in that world's prompt layout, and decode at most 8 (MDM) or 10 (twin) tokens. On NQ
 * they read real passages with the base model's knowledge of English: their RAG gain measures how well each
 * objective's adaptation of the same base reads a passage, not what the synthetic world taught them. The real
 * ARM is decoded with the paper's protocol (its chat prompt, greedy, at most 32 tokens, the whole response scored).
 *
 * Bad input — no data path, a missing or malformed file, a record without a gold passage, a bad flag — is one
 * message naming the file and the field (exit 1; 2 for usage), never a stack trace.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { judgeClaims } from "../src/display/claims.js";
import { paradigmOf } from "../src/families/index.js";
import { openModel } from "../src/model/open.js";
import { notebookSettings, type NotebookSettings } from "../src/notebook/notebook.js";
import { REAL_BASE_MODEL_NAMES, REAL_MODEL_NAMES } from "../src/notebook/models.js";
import { buildContext, DistractorPool, settingLabel, type EvalSetting } from "../src/qa/contexts.js";
import { DatasetError, loadQaJsonl, NQ_ENV } from "../src/qa/datasets.js";
import { readResults, runEval, type EvalResult } from "../src/qa/runner.js";
import { FloatscopeError, SettingsError } from "../src/util/errors.js";
import {
  estimateSeconds,
  median,
  nqFindings,
  pairScores,
  table1Row,
  table1Text,
  type NqTable1Row,
  type ScoredRow,
} from "./lib/nq-table1.js";
import { provenanceOf, ROOT, writeFindingsFile } from "./lib/findings-file.js";

const NAME = "measure-nq";

function usage(msg: string): never {
  console.error(
    `${NAME}: ${msg}\nusage: npx tsx scripts/measure-nq.ts [--path <nq-open-oracle.jsonl.gz>] [--n 5] [--k 4] [--tiers real,real-base] [--threads t] [--batch-size b] [--out f.findings.json] [--merged grid.jsonl]`,
  );
  process.exit(2);
}

function positiveInt(flag: string, v: string | undefined, dflt: number, min = 1): number {
  if (v === undefined) return dflt;
  const x = Number(v);
  if (!(Number.isInteger(x) && x >= min)) usage(`${flag} needs an integer ≥ ${min}, got ${JSON.stringify(v)}`);
  return x;
}

let parsed;
try {
  parsed = parseArgs({
    options: {
      path: { type: "string" },
      n: { type: "string" },
      k: { type: "string" },
      tiers: { type: "string", default: "real,real-base" },
      threads: { type: "string" },
      "batch-size": { type: "string" },
      out: { type: "string" },
      merged: { type: "string" },
      cache: { type: "string" },
    },
  });
} catch (e) {
  usage((e as Error).message);
}
const args = parsed.values;
const n = positiveInt("--n", args.n, 5);
const k = positiveInt("--k", args.k, 4);
const threads = args.threads === undefined ? undefined : positiveInt("--threads", args.threads, 0);
const batchSize = positiveInt("--batch-size", args["batch-size"], 1);
const tiers = args.tiers!.split(",").map((t) => t.trim());
for (const t of tiers) if (t !== "real" && t !== "real-base") usage(`--tiers takes real and/or real-base, got ${JSON.stringify(t)}`);
const dataPath = args.path ?? (process.env[NQ_ENV] || undefined);
if (!args.merged && !dataPath) usage(`no NQ-open file: give --path <nq-open-oracle.jsonl.gz> or set ${NQ_ENV}`);
const cacheRoot = path.resolve(args.cache ?? path.join(ROOT, ".cache", "nq-table1"));

const SETTINGS: Record<"closed" | "rag", EvalSetting> = {
  closed: { kind: "closed-book" },
  rag: { kind: "distractors", k, goldPosition: "cycle", source: "pool", seed: 0 },
};
const RAG_TEXT = `gold among ${k} distractors`;

/** Which tier and family a model folder name is (the real tiers' names, src/notebook/models.ts). */
const KNOWN: Record<string, { tier: "real" | "real-base"; family: string }> = {};
for (const [family, name] of Object.entries(REAL_MODEL_NAMES)) KNOWN[name] = { tier: "real", family };
for (const [family, name] of Object.entries(REAL_BASE_MODEL_NAMES)) KNOWN[name] = { tier: "real-base", family };

/** A short hash of what a model's answers depend on: its small files' contents and every file's size. */
function modelHash(p: string): string {
  const h = createHash("sha256");
  const files = fs.statSync(p).isDirectory()
    ? fs
        .readdirSync(p)
        .sort()
        .map((f) => path.join(p, f))
    : [p];
  for (const f of files) {
    const size = fs.statSync(f).size;
    h.update(`${path.basename(f)}\0${size}\0`);
    if (f.endsWith(".json")) h.update(fs.readFileSync(f));
  }
  return h.digest("hex").slice(0, 12);
}

interface ModelReport {
  model: string;
  family: string;
  tier: string;
  decoder: unknown;
  resultsFile: string;
  loadSeconds: number;
  /** Median wall time per question (ms) per setting label, over the selected questions' rows. */
  msPerQuestion: Record<string, number>;
  /**
   * This process's CPU time (user + system) per question run in this call, ms, per setting: with the wall
   * time it says how much of the machine the run got (other processes on a shared machine stretch the wall
   * time, not the CPU time), so a run on a loaded machine still gives an estimate for idle cores.
   */
  cpuMsPerQuestion: Record<string, number>;
  /** Median prompt tokens per setting. */
  promptTokens: Record<string, number>;
  /** 1-minute load average when each setting started and ended. */
  load: Record<string, [number, number]>;
  ran: number;
  resumed: number;
  errors: number;
}

function progressLine(model: string, label: string) {
  let last = 0;
  const t0 = Date.now();
  return (p: { done: number; total: number; errors: number; resumed: number }) => {
    const now = Date.now();
    if (p.done < p.total && now - last < 10_000) return;
    last = now;
    const per = p.done ? (now - t0) / 1000 / p.done : NaN;
    const left = Number.isFinite(per) ? `, ~${Math.ceil((per * (p.total - p.done)) / 60)} min left` : "";
    console.error(
      `  ${model} ${label}: ${p.done}/${p.total} run, ${p.resumed} resumed, ${p.errors} errors${Number.isFinite(per) ? `, ${per.toFixed(1)} s/question` : ""}${left}`,
    );
  };
}

async function run(): Promise<void> {
  const t0 = Date.now();
  const labels = { closed: settingLabel(SETTINGS.closed), rag: settingLabel(SETTINGS.rag) };
  let rows: ScoredRow[] = [];
  const who: { model: string; family: string; tier: string }[] = [];
  const models: ModelReport[] = [];
  let data: Record<string, unknown>;

  if (args.merged) {
    // A merged grid table (JSON lines): its rows carry model, setting, id, accuracy, f1, error.
    const file = args.merged;
    if (!fs.existsSync(file) || !fs.statSync(file).isFile())
      throw new FloatscopeError("Merged grid table not found", { file, expected: "a merged table from `floatscope merge --out x.jsonl`" });
    rows = fs
      .readFileSync(file, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l, i) => {
        let r: ScoredRow;
        try {
          r = JSON.parse(l) as ScoredRow;
        } catch {
          throw new FloatscopeError("Merged grid table has a line that is not JSON", {
            file,
            field: `line ${i + 1}`,
            expected: "JSON lines",
          });
        }
        if (typeof r?.model !== "string" || typeof r.setting !== "string" || typeof r.id !== "string")
          throw new FloatscopeError("Merged grid table has a row without model, setting and id", {
            file,
            field: `line ${i + 1}`,
            expected: "{model, setting, id, accuracy, f1, …} as `floatscope merge` writes",
          });
        return r;
      });
    // In the order a run here gives (real, then real-base: MDM, twin), whatever the order of the rows.
    const present = new Set(rows.map((r) => r.model));
    for (const [m, known] of Object.entries(KNOWN)) if (present.has(m) && tiers.includes(known.tier)) who.push({ model: m, ...known });
    for (const m of present) {
      if (!(m in KNOWN))
        console.log(`note: ${m} in ${file} is not one of the real tiers' models (${Object.keys(KNOWN).join(", ")}); left out`);
    }
    data = { merged: file };
  } else {
    const file = dataPath!;
    const all = await loadQaJsonl(file);
    if (all.length === 0)
      throw new DatasetError("QA data file has no records", { file, expected: "NQ-open records, one JSON object per line" });
    if (n > all.length)
      throw new SettingsError("More questions asked than the file has", {
        file,
        field: "--n",
        expected: `at most ${all.length}`,
        found: String(n),
      });
    const records = all.slice(0, n);
    const pool = new DistractorPool(all);
    // Every selected question's contexts are built before any model opens: a record without a gold passage,
    // or a pool too small for k, fails here naming its line, not as one error row per question later.
    for (const r of records) for (const s of Object.values(SETTINGS)) buildContext(r, s, { file, pool });
    const dataHash = createHash("sha256").update(fs.readFileSync(file)).digest("hex").slice(0, 12);
    data = { file: path.basename(file), sha256: dataHash, records: all.length, evaluated: records.length };
    const wanted = new Set(records.map((r) => r.id));

    const env = { ...process.env, FLOATSCOPE_REAL_MODELS: path.join(ROOT, ".cache", "real-models") };
    const tierSettings: NotebookSettings[] = [];
    if (tiers.includes("real")) tierSettings.push(notebookSettings({ families: ["llama"], tier: "real", env }));
    if (tiers.includes("real-base")) tierSettings.push(notebookSettings({ families: ["dream", "llama"], tier: "real-base", env }));
    for (const S of tierSettings) {
      if (!S.runs) {
        console.log(`tier ${S.tier}: skipped (${String(S.toMimeBundle()["text/plain"])})`);
        continue;
      }
      for (const family of Object.keys(S.names)) {
        const dir = S.dirOf(family);
        const model = path.basename(dir); // the grid's default model name: rows of both compare by name
        const resultsFile = path.join(cacheRoot, dataHash, `${model}-${modelHash(dir)}.jsonl`);
        const tl = Date.now();
        const m = await openModel(dir, { threads });
        const loadSeconds = (Date.now() - tl) / 1000;
        const rep: ModelReport = {
          model,
          family,
          tier: S.tier,
          decoder: m.preset,
          resultsFile: path.relative(ROOT, resultsFile),
          loadSeconds,
          msPerQuestion: {},
          cpuMsPerQuestion: {},
          promptTokens: {},
          load: {},
          ran: 0,
          resumed: 0,
          errors: 0,
        };
        console.error(`${model} (${S.tier}, ${paradigmOf(family)}): opened in ${loadSeconds.toFixed(1)} s`);
        try {
          for (const s of Object.values(SETTINGS)) {
            const label = settingLabel(s);
            const load0 = os.loadavg()[0];
            const cpu0 = process.cpuUsage();
            const r = await runEval({
              engine: m.engine,
              tokenizer: m.tokenizer,
              records,
              setting: s,
              promptFormat: m.preset.promptFormat,
              sampler: { ...m.preset.sampler, seed: 0 },
              extraction: m.preset.extraction,
              modelName: model,
              dataFile: file,
              pool,
              batchSize,
              resultsFile,
              onProgress: progressLine(model, label),
            });
            const cpu = process.cpuUsage(cpu0);
            if (r.progress.done > 0) rep.cpuMsPerQuestion[label] = (cpu.user + cpu.system) / 1000 / r.progress.done;
            rep.load[label] = [load0, os.loadavg()[0]];
            rep.ran += r.progress.done;
            rep.resumed += r.progress.resumed;
            rep.errors += r.progress.errors;
          }
        } finally {
          await m.dispose();
        }
        const mine = readResults(resultsFile).filter((r: EvalResult) => wanted.has(r.id));
        for (const label of Object.values(labels)) {
          const done = mine.filter((r) => r.setting === label && r.error === undefined);
          rep.msPerQuestion[label] = median(done.map((r) => r.ms ?? NaN));
          rep.promptTokens[label] = median(done.map((r) => r.promptTokens ?? NaN));
        }
        rows.push(...mine);
        models.push(rep);
        who.push({ model, family, tier: S.tier });
      }
    }
  }

  const table: NqTable1Row[] = [];
  for (const w of who) {
    const row = table1Row(pairScores(rows, w.model, labels.closed, labels.rag), w);
    if (row) table.push(row);
    else console.log(`note: ${w.model} has no question with a result in both settings`);
  }
  const found = nqFindings(table, RAG_TEXT);
  console.log(`\n## NQ-open, Table 1 analog (closed-book vs ${RAG_TEXT}; %, 95 % intervals; gain paired over questions)\n`);
  for (const l of table1Text(table)) console.log(l);
  console.log(
    "\npaper: RAG = the top-5 retrieved passages on the paper's 7–8B models; here the gold passage among distractors on 135M models.",
  );
  for (const r of table)
    if (r.unpaired) console.log(`note: ${r.model}: ${r.unpaired} question(s) failed or missing in one setting, left out of both`);
  const claim = judgeClaims(found.map((f) => ({ ...f, source: NAME }))).find((c) => c.claim === "rag-gain-mdm-vs-arm")!;
  console.log("\n## rag-gain-mdm-vs-arm");
  for (const v of claim.verdicts)
    console.log(`${v.tier}: ${v.verdict}${v.n ? ` (n = ${v.n[0] === v.n[1] ? v.n[0] : `${v.n[0]}–${v.n[1]}`})` : ""} — ${v.why}`);
  if (models.length) {
    console.log("\n## time per question: wall (median over the rows) and this process's CPU (this call), s; prompt tokens; load");
    for (const m of models)
      console.log(
        `${m.model}: opened in ${m.loadSeconds.toFixed(1)} s; ${Object.entries(m.msPerQuestion)
          .map(
            ([l, ms]) =>
              `${l}: wall ${(ms / 1000).toFixed(1)}, CPU ${m.cpuMsPerQuestion[l] === undefined ? "—" : (m.cpuMsPerQuestion[l] / 1000).toFixed(1)}, ${m.promptTokens[l]} tokens, load ${m.load[l]?.map((x) => x.toFixed(1)).join("→") ?? "—"}`,
          )
          .join("; ")}; ${m.ran} run, ${m.resumed} resumed, ${m.errors} errors`,
      );
    const wall = estimateSeconds(models, 300);
    // On idle cores the wall time per question lies between CPU/threads (perfect use of every core) and the CPU time.
    const cpuOnly = models.map((m) => ({ loadSeconds: m.loadSeconds, msPerQuestion: m.cpuMsPerQuestion }));
    const cores = threads ?? os.cpus().length;
    // CPU time is measured only for questions this call ran: a setting whose questions were all resumed has none.
    const cpuMeasured = models.every((m) => Object.keys(m.msPerQuestion).every((l) => m.cpuMsPerQuestion[l] !== undefined));
    console.log(
      `--n 300 at these wall times: about ${(wall / 3600).toFixed(1)} h (load ${os.loadavg()[0].toFixed(1)} now); ` +
        (cpuMeasured
          ? `from the CPU time on ${cores} idle core(s): ${(estimateSeconds(cpuOnly, 300 / cores) / 3600).toFixed(1)}–${(estimateSeconds(cpuOnly, 300) / 3600).toFixed(1)} h`
          : "no CPU-time estimate: some settings were only resumed here (their CPU time is in the run that made them)"),
    );
  }

  if (args.out) {
    const provenance = provenanceOf(
      "scripts/measure-nq.ts",
      { n, k, tiers, threads: threads ?? "ORT default (all cores)", batchSize, closedBook: labels.closed, rag: labels.rag, data },
      t0,
    );
    // The user's path to the data file stays out of a committed file (the settings name the file and its hash).
    if (dataPath) provenance.command = provenance.command.split(dataPath).join("<nq-open-oracle.jsonl.gz>");
    const report = {
      table,
      models,
      paperNote: "the paper's RAG is the top-5 retrieved passages (7–8B models); ours, the gold passage among k distractors",
    };
    fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
    writeFindingsFile(args.out, { notebook: NAME, findings: found, provenance, report, verdicts: claim.verdicts });
    console.log(`\nwrote ${args.out}`);
  }
}

try {
  await run();
} catch (e) {
  if (e instanceof FloatscopeError) {
    console.error(`${NAME}: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
