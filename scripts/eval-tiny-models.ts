/**
 * Evaluate the embedded tiny models with floatscope's engine and samplers on the synthetic world's
 * held-out set, for their model cards (training/make_cards.py renders `eval-engine.json`).
 *
 *   npx tsx scripts/eval-tiny-models.ts [--models tiny-qwen,tiny-llada] [--limit 300] [--batch-size 8]
 *        [--models-dir models] [--results-dir .cache/eval-tiny] [--out-name eval-engine.json] [--threads 1]
 *
 * Settings (as the cards and training/evaluate.py): closed-book, oracle passage, gold among 4 and
 * among 9 distractors (the record's own distractors, gold at position i mod (k+1) for question i).
 * Decoders (src/model/presets.ts `tinyPreset`): ARM greedy (≤ 6 tokens, stop at <eos>); LLaDA
 * low-confidence remasking, 4 masks / 4 steps / one block, τ 0; Dream entropy order, 4 masks / 4 steps,
 * τ 0 — all deterministic. Answers are cut at the first <eos>.
 *
 * Writes `<models-dir>/<name>/eval-engine.json` = {model, data, evaluator, decoder, results: {closed_book |
 * oracle | gold_4 | gold_9: {n, errors, accuracy, f1, exact_match}} (fractions in [0, 1]), settings, commit,
 * date, seconds, weights_sha256}; per-question rows go to `<results-dir>/<name>-<weights hash>.jsonl` (resumable: rerun
 * to continue; a retrained model gets a new file).
 * A model folder is evaluated only when it has config.json, model.safetensors and tokenizer.json.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { loadQaJsonl } from "../src/qa/datasets.js";
import { openModel } from "../src/model/open.js";
import { tinyPreset } from "../src/model/presets.js";
import { readResults } from "../src/qa/runner.js";
import { CARD_SETTINGS, DATA_REL, ROOT, cardScores, commit, runCardSetting, type CardScores } from "./eval-common.js";

const DECODER: Record<string, string> = {
  arm: "floatscope ARM sampler: greedy, at most 6 new tokens, stop at <eos>",
  llada: "floatscope LLaDA sampler: low-confidence remasking, 4 masks, 4 steps, one block, temperature 0; answer cut at the first <eos>",
  dream: "floatscope Dream sampler: entropy order, shifted logits, 4 masks, 4 steps, temperature 0; answer cut at the first <eos>",
};

async function main(): Promise<void> {
  const { values: v } = parseArgs({
    options: {
      models: { type: "string" },
      limit: { type: "string" },
      "batch-size": { type: "string" },
      "models-dir": { type: "string" },
      "results-dir": { type: "string" },
      "out-name": { type: "string" },
      threads: { type: "string" },
      settings: { type: "string" },
    },
  });
  const modelsDir = path.resolve(v["models-dir"] ?? path.join(ROOT, "models"));
  const resultsDir = path.resolve(v["results-dir"] ?? path.join(ROOT, ".cache", "eval-tiny"));
  const outName = v["out-name"] ?? "eval-engine.json";
  const limit = v.limit !== undefined ? Number(v.limit) : undefined;
  const batchSize = Number(v["batch-size"] ?? 8);
  const threads = v.threads !== undefined ? Number(v.threads) : 1;
  const settingKeys = v.settings ? v.settings.split(",") : Object.keys(CARD_SETTINGS);
  for (const s of settingKeys)
    if (!CARD_SETTINGS[s]) throw new Error(`--settings: unknown "${s}" (one of ${Object.keys(CARD_SETTINGS).join(", ")})`);
  const wanted = v.models
    ? v.models.split(",")
    : fs
        .readdirSync(modelsDir)
        .filter((n) => n.startsWith("tiny-"))
        .sort();
  const ready = wanted.filter((n) =>
    ["config.json", "model.safetensors", "tokenizer.json"].every((f) => fs.existsSync(path.join(modelsDir, n, f))),
  );
  for (const n of wanted) if (!ready.includes(n)) console.error(`skip ${n}: no complete checkpoint in ${path.join(modelsDir, n)}`);
  const data = path.join(ROOT, DATA_REL);
  const records = await loadQaJsonl(data, { limit });
  fs.mkdirSync(resultsDir, { recursive: true });

  for (const name of ready) {
    const t0 = Date.now();
    const m = await openModel(path.join(modelsDir, name), { threads });
    const preset = tinyPreset(m.spec);
    // Per-question rows are resumable, so they must belong to these weights: a retrained model under the
    // same name gets a fresh results file instead of silently reusing the old model's answers.
    const weights = createHash("sha256")
      .update(fs.readFileSync(path.join(modelsDir, name, "model.safetensors")))
      .digest("hex");
    const resultsFile = path.join(resultsDir, `${name}-${weights.slice(0, 16)}.jsonl`);
    try {
      for (const key of settingKeys)
        console.error((await runCardSetting(m, key, { name, records, preset, data, batchSize, resultsFile })).line);
    } finally {
      await m.engine.dispose();
    }
    const ids = new Set(records.map((r) => r.id));
    const rows = readResults(resultsFile).filter((r) => r.model === name && ids.has(r.id));
    const results: Record<string, CardScores> = {};
    for (const key of settingKeys) {
      const label = rows.find((r) => r.setting === labelOf(key))?.setting ?? labelOf(key);
      const rs = rows.filter((r) => r.setting === label);
      results[key] = cardScores(rs);
    }
    const out = {
      model: name,
      weights_sha256: weights,
      data: DATA_REL,
      evaluator: "floatscope TypeScript engine (onnxruntime-node, CPU) + samplers, scripts/eval-tiny-models.ts",
      decoder: DECODER[preset.sampler.sampler ?? "arm"],
      prompt: "tiny-world (training/README.md)",
      results,
      settings: Object.fromEntries(settingKeys.map((k) => [k, CARD_SETTINGS[k]])),
      sampler: preset.sampler,
      extraction: preset.extraction,
      limit: limit ?? null,
      commit: commit(),
      date: new Date().toISOString(),
      seconds: Math.round((Date.now() - t0) / 100) / 10,
    };
    const file = path.join(modelsDir, name, outName);
    fs.writeFileSync(file + ".tmp", JSON.stringify(out, null, 1) + "\n");
    fs.renameSync(file + ".tmp", file);
    console.log(`${file}: ${JSON.stringify(results)}`);
  }
}

function labelOf(key: string): string {
  const s = CARD_SETTINGS[key];
  return s.kind === "distractors" ? `gold@cycle/k${s.k}` : s.kind;
}

main().catch((e) => {
  console.error(e);
  process.exitCode = 1;
});
