/**
 * The harness reproduces the training framework's evaluation (training/evaluate.py) prediction by
 * prediction: same prompt layout and ids, same decoders (ARM greedy, LLaDA low-confidence remasking,
 * Dream entropy order with shifted logits), same answer cut at <eos>. Random tiny models in the four
 * real formats make every prediction different, so an off-by-one anywhere shows (fixture:
 * fixtures/make_random_world.py, generated with torch).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { openModel } from "../../src/model/open.js";
import { isTinyWorldTokenizer, tinyPreset } from "../../src/model/presets.js";
import { runEval } from "../../src/qa/runner.js";
import type { EvalSetting } from "../../src/qa/contexts.js";
import { FIXTURES, HELDOUT } from "./helpers.js";

const DIR = path.join(FIXTURES, "random-world");
const torch = JSON.parse(fs.readFileSync(path.join(DIR, "torch-predictions.json"), "utf8")) as Record<string, string>;
const SETTINGS: Record<string, EvalSetting> = {
  closed_book: { kind: "closed-book" },
  oracle: { kind: "oracle" },
  gold_4: { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" },
  gold_9: { kind: "distractors", k: 9, goldPosition: "cycle", source: "record" },
};
const words = (s: string) => s.trim().split(/\s+/).filter(Boolean).join(" ");

describe("tiny models: engine + samplers = training/evaluate.py", () => {
  for (const name of ["tiny-qwen", "tiny-llama", "tiny-llada", "tiny-dream"]) {
    it(name, async () => {
      const records = await loadQaJsonl(HELDOUT, { limit: 12 });
      const m = await openModel(path.join(DIR, name));
      try {
        expect(isTinyWorldTokenizer(m.tokenizer)).toBe(true);
        const preset = tinyPreset(m.spec);
        const distinct = new Set<string>();
        for (const [key, setting] of Object.entries(SETTINGS)) {
          const run = await runEval({
            engine: m.engine,
            tokenizer: m.tokenizer,
            records,
            setting,
            ...preset, // promptFormat, sampler, extraction
            batchSize: 4,
          });
          expect(run.progress.errors).toBe(0);
          for (const r of run.results) {
            expect(words(r.prediction!), `${name} ${key} row ${r.row}`).toBe(words(torch[`${name}|${key}|${r.row}`]));
            distinct.add(r.prediction!);
          }
        }
        expect(distinct.size).toBeGreaterThan(20); // the check is not satisfied by trivially empty answers
      } finally {
        await m.engine.dispose();
      }
    });
  }
});
