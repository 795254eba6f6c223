/**
 * The embedded tiny models can read: measured here with floatscope's own engine, samplers and QA harness
 * (not the training framework) on held-out people, against the bars the tiny models were trained to clear (training/README.md) — with the oracle passage
 * the causal models answer ≥ 90 %, tiny-dream ≥ 80 %, tiny-llada ≥ 40 % and ≥ 10× its closed-book score;
 * closed-book stays near chance for all. All 300 held-out questions, as the cards (scripts/eval-tiny-models.ts)
 * — seconds per model. Deterministic decoders, so a pass is repeatable.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { openModel } from "../../src/model/open.js";
import { tinyPreset } from "../../src/model/presets.js";
import { runEval } from "../../src/qa/runner.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DATA = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");
const N = 300;

/** The bars on the oracle accuracy. */
const ORACLE_BAR: Record<string, number> = { "tiny-llama": 0.9, "tiny-qwen": 0.9, "tiny-dream": 0.8, "tiny-llada": 0.4 };
/** "Near chance": the most frequent value of a relation's pool is ≈ 1/12 (colours); allow that much. */
const CLOSED_BOOK_MAX = 0.1;

const present = (name: string) => fs.existsSync(path.join(ROOT, "models", name, "model.safetensors"));

describe.each(Object.keys(ORACLE_BAR))("%s reads the passage (engine + samplers, held-out people)", (name) => {
  it.skipIf(!present(name))(
    `oracle ≥ ${ORACLE_BAR[name] * 100} %, closed-book ≤ ${CLOSED_BOOK_MAX * 100} %, oracle ≥ 10× closed-book`,
    async () => {
      const records = await loadQaJsonl(DATA);
      expect(records).toHaveLength(N);
      const m = await openModel(path.join(ROOT, "models", name), { threads: 1 });
      try {
        const preset = tinyPreset(m.spec);
        const acc = async (kind: "oracle" | "closed-book") => {
          const run = await runEval({
            engine: m.engine,
            tokenizer: m.tokenizer,
            records,
            setting: { kind },
            ...preset, // promptFormat, sampler, extraction
            modelName: name,
            dataFile: DATA,
            batchSize: 8,
          });
          expect(run.progress.errors).toBe(0);
          return run.results.reduce((s, r) => s + (r.accuracy ?? 0), 0) / run.results.length;
        };
        const oracle = await acc("oracle");
        const closed = await acc("closed-book");
        expect(oracle).toBeGreaterThanOrEqual(ORACLE_BAR[name]);
        expect(closed).toBeLessThanOrEqual(CLOSED_BOOK_MAX);
        expect(oracle).toBeGreaterThanOrEqual(10 * Math.max(closed, 1 / N));
      } finally {
        await m.engine.dispose();
      }
    },
    180_000,
  );
});
