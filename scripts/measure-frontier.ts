/**
 * The frontier numbers on the real-base pair (the Dream-style MDM and, where it applies, its causal twin):
 * held-out questions decoded at the paper's temporal setting under both unmasking orders and long answers
 * at 64 tokens, `received` recorded at every step; per sample the frontier analysis's sums
 * (src/analysis/frontier.ts), pooled per setting with 95 % bootstrap intervals over samples.
 *
 *   npx tsx scripts/measure-frontier.ts                               # a check: 2 samples per setting
 *   npx tsx scripts/measure-frontier.ts --n 100 --out findings/frontier.findings.json   # the large run
 *   npx tsx scripts/measure-frontier.ts --settings llada32,long64 --n 5
 *   npx tsx scripts/measure-frontier.ts --n 100 --families dream                  # the MDM's rows only
 *   npx tsx scripts/measure-frontier.ts --table findings/frontier.findings.json         # the README's table
 *
 * Settings (scripts/lib/frontier-measure.ts): `llada32` 32 new tokens in 32 steps, LLaDA low-confidence order;
 * `dream32` the same under Dream's entropy order (both on short questions with their gold passage, as notebook 01);
 * `long64` 64 in 64 steps on long answers (models/world/eval-heldout-long.jsonl.gz, every gold passage), fact
 * spans from `factSpans` for the anchor-follows-source measure, and each answer's fact recall and precision by the
 * cards' rule (`factScores`): the same decode as the cards' `long_oracle@64` (τ 0, every gold passage, Dream's
 * entropy order, 64 in 64), so this run also gives the long-answer recall per model. The twin decodes greedily (no order), so it runs
 * in `llada32` and `long64` only.
 *
 * Resumable: one row per decoded sample is appended to `--rows` (default .cache/measure-frontier/rows.jsonl);
 * a rerun skips the samples whose (setting, checkpoint fingerprint, question) is there, so a retrained model is
 * decoded again. `--out` writes a findings file `{ notebook, findings, provenance, report }` (read by
 * scripts/render-claims.ts; `report` is what `--table` renders). Progress goes to stdout; exit 2 on bad usage,
 * 1 on a bad input (the message names the file and field).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { anchorFrontier } from "../src/analysis/frontier.js";
import { collectFindings } from "../src/display/claims.js";
import { fingerprintModel } from "../src/grid/shard.js";
import { decodeQaWith, loadQaSet, notebookSettings, type Device } from "../src/notebook/notebook.js";
import { factSpans, type RecordFact } from "../src/qa/fact-spans.js";
import { factScores } from "../src/qa/metrics.js";
import { FloatscopeError } from "../src/util/errors.js";
import { provenanceOf, readClaimSource, ROOT, writeFindingsFile } from "./lib/findings-file.js";
import {
  FRONTIER_SETTINGS,
  frontierFindings,
  frontierTable,
  parseRows,
  poolRows,
  reportOf,
  rowKey,
  type FrontierRow,
} from "./lib/frontier-measure.js";

function usage(msg: string): never {
  console.error(
    `measure-frontier: ${msg}\nusage: npx tsx scripts/measure-frontier.ts [--n N] [--settings ${Object.keys(FRONTIER_SETTINGS).join(",")}] [--families dream,llama] [--out f.findings.json] [--rows rows.jsonl] [--chunk K] [--device cpu|cuda|auto]\n       npx tsx scripts/measure-frontier.ts --table f.findings.json`,
  );
  process.exit(2);
}

let args: Record<string, string | undefined>;
try {
  args = parseArgs({
    options: {
      n: { type: "string", default: "2" },
      settings: { type: "string", default: Object.keys(FRONTIER_SETTINGS).join(",") },
      out: { type: "string" },
      rows: { type: "string", default: path.join(ROOT, ".cache/measure-frontier/rows.jsonl") },
      chunk: { type: "string", default: "4" },
      device: { type: "string", default: "cpu" },
      table: { type: "string" },
      families: { type: "string", default: "dream,llama" },
    },
  }).values as Record<string, string | undefined>;
} catch (e) {
  usage((e as Error).message);
}

try {
  if (args.table !== undefined) {
    // The same reading and checks as scripts/render-claims.ts, then the report's table.
    const source = readClaimSource(args.table);
    collectFindings([source]);
    process.stdout.write(frontierTable(reportOf(source.json, args.table)) + "\n");
    process.exit(0);
  }
  await measure();
} catch (e) {
  if (e instanceof FloatscopeError) {
    console.error(`measure-frontier: ${e.message}`);
    process.exit(1);
  }
  throw e;
}

async function measure(): Promise<void> {
  const n = Number(args.n);
  const chunk = Number(args.chunk);
  for (const [flag, v] of [
    ["--n", n],
    ["--chunk", chunk],
  ] as const)
    if (!(Number.isInteger(v) && v >= 1)) usage(`${flag} needs an integer ≥ 1, got ${JSON.stringify(args[flag.slice(2)])}`);
  const names = args.settings!.split(",").map((s) => s.trim());
  for (const s of names)
    if (!(s in FRONTIER_SETTINGS)) usage(`unknown setting ${JSON.stringify(s)} (one of ${Object.keys(FRONTIER_SETTINGS).join(", ")})`);
  const chosen = Object.fromEntries(names.map((s) => [s, FRONTIER_SETTINGS[s]]));
  // `--families dream`: the MDM's rows only (e.g. while the twin is retrained); the findings then pool what the
  // rows file holds for the families asked
  const families = args.families!.split(",").map((f) => f.trim());
  for (const f of families) if (f !== "dream" && f !== "llama") usage(`--families is dream, llama or both, got ${JSON.stringify(f)}`);
  const device = args.device as Device;
  if (!["cpu", "cuda", "auto"].includes(device)) usage(`--device is cpu, cuda or auto, got ${JSON.stringify(device)}`);
  const rowsFile = args.rows!;
  fs.mkdirSync(path.dirname(rowsFile), { recursive: true });
  // The findings file's folder exists before hours of decoding, not after.
  if (args.out) fs.mkdirSync(path.dirname(path.resolve(args.out)), { recursive: true });
  const t0 = Date.now();
  const data = { short: "models/world/eval-heldout.jsonl.gz", long: "models/world/eval-heldout-long.jsonl.gz" };
  const wanted = new Set<string>();
  const fingerprints = new Map<string, string>();
  for (const [name, def] of Object.entries(chosen)) {
    const S = notebookSettings({
      families: (def.twin ? ["dream", "llama"] : ["dream"]).filter((f) => families.includes(f)),
      tier: "real-base",
      env: {
        FLOATSCOPE_REAL_MODELS: path.join(ROOT, ".cache/real-models"),
        FLOATSCOPE_DATA: path.join(ROOT, data[def.data]),
        FLOATSCOPE_REAL_SAMPLES: String(n),
        FLOATSCOPE_DEVICE: device,
      },
    });
    if (!S.runs) {
      console.log(`${name}: skipped — ${String(S.toMimeBundle()["text/plain"])}`);
      continue;
    }
    const qa = await loadQaSet(S, {});
    for (const family of Object.keys(S.names)) {
      const dir = S.dirOf(family);
      if (!fingerprints.has(dir)) fingerprints.set(dir, fingerprintModel(dir));
      const fingerprint = fingerprints.get(dir)!;
      const done = new Set(readRows(rowsFile).map(rowKey));
      const keyOf = (record: string) => rowKey({ setting: name, fingerprint, record });
      qa.records.forEach((r) => wanted.add(keyOf(r.id)));
      const todo = qa.records.filter((r) => !done.has(keyOf(r.id)));
      console.log(`${name} · ${S.names[family]}: ${qa.records.length - todo.length} of ${qa.records.length} sample(s) already measured`);
      for (let i = 0; i < todo.length; i += chunk) {
        const part = todo.slice(i, i + chunk);
        const run = await decodeQaWith(
          S,
          family,
          { ...qa, records: part },
          {
            probes: { received: true },
            context: def.data === "long" ? "all-golds" : "oracle",
            tokens: def.tokens,
            order: def.order,
            viewProbes: "none",
          },
        );
        run.traces.forEach((trace, j) => {
          const rec = part[j];
          let facts: FrontierRow["facts"];
          let spans;
          if (def.data === "long") {
            const given = rec.extra.facts;
            if (!Array.isArray(given))
              throw new FloatscopeError("long-answer record without facts", {
                file: data.long,
                field: `line ${rec.line}: facts`,
                expected: "an array of gold facts",
              });
            const fsr = factSpans(
              trace,
              rec.ctxs.map((c) => c.text),
              given as RecordFact[],
            );
            spans = [fsr.spans];
            const scores = factScores(trace.answer, given as RecordFact[]);
            facts = {
              total: given.length,
              stated: fsr.spans.filter((f) => f.answerTokens.length > 0).length,
              missing: fsr.missing.length,
              recall: scores.recall,
              precision: scores.precision,
            };
          }
          const stats = anchorFrontier(trace, { facts: spans }).perTrace[0];
          const row: FrontierRow & { seconds: number } = {
            setting: name,
            model: run.name,
            family,
            causal: run.causal,
            fingerprint,
            record: rec.id,
            answer: trace.answer,
            steps: trace.steps.length,
            promptLength: trace.prompt.promptLength,
            facts,
            stats,
            seconds: run.seconds / part.length,
          };
          fs.appendFileSync(rowsFile, JSON.stringify(row) + "\n");
        });
        const doneNow = qa.records.length - todo.length + i + part.length;
        console.log(
          `  ${doneNow}/${qa.records.length} · ${(run.seconds / part.length).toFixed(1)} s per sample · ${((Date.now() - t0) / 1000).toFixed(0)} s so far`,
        );
      }
    }
  }
  const rows = readRows(rowsFile).filter((r) => wanted.has(rowKey(r)));
  if (rows.length === 0)
    throw new FloatscopeError("nothing measured", {
      file: rowsFile,
      expected: "at least one real-base model (bash scripts/setup.sh merges them)",
    });
  const report = poolRows(rows, chosen);
  console.log(`\n${frontierTable(report)}\n`);
  const findings = frontierFindings(report, "real-base");
  const seconds = Object.fromEntries(
    report.groups.map((g) => {
      const own = rows.filter((r) => r.setting === g.setting && r.model === g.model) as (FrontierRow & { seconds?: number })[];
      return [`${g.setting} · ${g.model}`, own.reduce((a, r) => a + (r.seconds ?? 0), 0) / own.length];
    }),
  );
  for (const [k, v] of Object.entries(seconds)) console.log(`${k}: ${v.toFixed(1)} s per sample (decoding, as recorded in the rows)`);
  if (args.out) {
    const provenance = provenanceOf(
      "scripts/measure-frontier.ts",
      {
        n,
        settings: chosen,
        context: { short: "oracle (the gold passage)", long: "every gold passage of the record" },
        data,
        device,
        analysis: `anchorFrontier defaults: rule ${report.rule}, radius ${report.radius}, source layers the deepest third`,
        secondsPerSample: seconds,
      },
      t0,
    );
    writeFindingsFile(args.out, { notebook: "measure-frontier", findings, provenance, report });
    console.log(`wrote ${args.out}`);
  }
}

function readRows(file: string): FrontierRow[] {
  if (!fs.existsSync(file)) return [];
  const { rows, truncated } = parseRows(fs.readFileSync(file, "utf8"), file);
  if (truncated) {
    // Drop the cut line, so the next append starts a line of its own.
    const text = fs.readFileSync(file, "utf8");
    fs.truncateSync(file, Buffer.byteLength(text.slice(0, text.trimEnd().lastIndexOf("\n") + 1)));
    console.log(`note: the last line of ${file} was cut short (a run killed mid-write); that sample is decoded again`);
  }
  return rows;
}
