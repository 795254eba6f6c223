/**
 * Invariant over real traces: under a causal mask no region receives attention from an earlier
 * region. The tiny ARMs decode a batch of prompts of different lengths (left padding, an answer
 * span that reaches past the canvas until it is written), which is where a region map once leaked
 * mass from every document to "Answer".
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { regionRollout } from "../../src/analysis/rollout.js";
import { buildContext } from "../../src/qa/contexts.js";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { openModel } from "../../src/model/open.js";
import { buildQaPrompt, promptRegionsToTokens } from "../../src/qa/prompts.js";
import { generate } from "../../src/samplers/generate.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const DATA = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");

for (const name of ["tiny-llama", "tiny-qwen"]) {
  const dir = path.join(ROOT, "models", name);
  describe.skipIf(!fs.existsSync(path.join(dir, "config.json")))(`${name}: causal region maps`, () => {
    it("no region receives attention from an earlier region, in any layer, for a batch of unequal prompts (each twice)", async () => {
      const records = await loadQaJsonl(DATA, { limit: 6 });
      const probe = await openModel(dir, {});
      const { preset, tokenizer } = probe;
      await probe.dispose();
      const genLength = preset.sampler.genLength ?? 8;
      // Gold positions differ per prompt, so prompt lengths (and the left padding) differ too.
      const inputs = records.map((rec, i) => {
        const ctx = buildContext(rec, { kind: "distractors", k: 5, goldPosition: i % 6, source: "record" });
        const p = buildQaPrompt(
          preset.promptFormat,
          { question: rec.question, passages: ctx.passages, goldIndex: ctx.goldIndex },
          tokenizer,
        );
        const enc = tokenizer.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
        // Contiguous, non-overlapping regions in token order ("gold" duplicates a document's span).
        const regions = promptRegionsToTokens(p, enc.offsets, genLength).filter((r) => r.name !== "gold");
        return { text: p.text, regions, add: p.addSpecialTokens, length: enc.ids.length };
      });
      expect(new Set(inputs.map((x) => x.length)).size).toBeGreaterThan(1);
      // Each prompt twice in a row: equal lengths put the twin's first tokens (BOS, the sink) right after
      // the row before it in the flat batch axis, where an unclipped answer span would spill.
      const batch = inputs.flatMap((x) => [x, x]);
      const R = inputs[0].regions.length;
      expect(inputs.every((x) => x.regions.length === R)).toBe(true);
      const m = await openModel(dir, { probes: { regionSum: { regions: R } } });
      try {
        const results = await generate(
          m.engine,
          batch.map((x) => ({ text: x.text, regions: x.regions })),
          { ...preset.sampler, addSpecialTokens: batch[0].add, seed: 0 },
          { tokenizer: m.tokenizer, modelName: name },
        );
        let checked = 0;
        for (const res of results) {
          const t = res.trace;
          const rr = regionRollout([t]);
          const first = new Map(t.prompt.regions.map((g) => [g.name, g.tokens[0]]));
          const last = new Map(t.prompt.regions.map((g) => [g.name, Math.min(g.tokens[1], t.final.sequence.length) - 1]));
          for (const row of rr.layers.objects() as { layer: number; from: string; to: string; value: number }[]) {
            if (!first.has(row.from) || !first.has(row.to)) continue;
            if (first.get(row.to)! > last.get(row.from)!) {
              expect(row.value, `${name} layer ${row.layer}: ${row.from} → ${row.to}`).toBeLessThan(1e-6);
              checked++;
            }
          }
        }
        expect(checked).toBeGreaterThan(0);
      } finally {
        await m.dispose();
      }
    });
  });
}
