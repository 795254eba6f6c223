import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { openModel } from "../../src/model/open.js";
import { runEval } from "../../src/qa/runner.js";
import { generate, unknownWordsWarning } from "../../src/samplers/generate.js";

const DIR = path.resolve(import.meta.dirname, "../../models/tiny-llada");

describe("prompts with words outside the vocabulary", () => {
  it("the tokenizer reports which pieces became the unknown token, and generate says how many and which", async () => {
    const m = await openModel(DIR, {});
    try {
      const known = m.tokenizer.encode("Where does", { addSpecialTokens: false });
      expect(known.unknown).toEqual([]);
      // "Zanzibar" and "xylophone" are not among the tiny vocabulary's 776 words ("Where" is; the vocabulary is case-sensitive).
      const enc = m.tokenizer.encode("Where does Zanzibar keep the xylophone ? Zanzibar", { addSpecialTokens: false });
      expect(enc.unknown).toEqual(["Zanzibar", "xylophone", "Zanzibar"]);
      const unkId = enc.ids[2];
      expect(enc.ids.filter((id) => id === unkId).length).toBe(3);

      const warnings: string[] = [];
      await generate(
        m.engine,
        ["Where does Zanzibar keep the xylophone ? Zanzibar"],
        { ...m.preset.sampler, genLength: 2, blockLength: 2, steps: 2 },
        { tokenizer: m.tokenizer, warn: (w) => warnings.push(w) },
      );
      expect(warnings).toEqual([unknownWordsWarning(0, ["Zanzibar", "xylophone", "Zanzibar"])]);
      expect(warnings[0]).toMatch(/prompt 0: 3 piece\(s\).*"Zanzibar" ×2, "xylophone"/);
    } finally {
      await m.dispose();
    }
  });

  it("the evaluator reports how many questions had unknown words and names the first by its id", async () => {
    const { records, warnings } = await evalQuestions(["Where does Sela Doru live ?", "Where does Zanzibar live ?"], 2);
    expect(warnings).toHaveLength(1);
    expect(warnings[0]).toContain("1 of 2 prompts had text outside the model's vocabulary");
    // The question's id, not the index inside one generate() batch ("prompt 1: …" before).
    expect(warnings[0]).toContain(`first, question ${records[1].id}: 1 piece(s) of the text are not in the model's vocabulary`);
    expect(warnings[0]).toContain('"Zanzibar"');
  });

  it("a batch that fails and is rerun one question at a time counts each question's unknown words once", async () => {
    // The third question is longer than the model's context, so the batch of three fails and the
    // evaluator finds the culprit by running them one at a time.
    const long = "Where does Sela Doru live ? ".repeat(200);
    const { records, results, warnings } = await evalQuestions(["Where does Zanzibar live ?", "Where does Sela Doru live ?", long], 3);
    expect(results.filter((r) => r.error).map((r) => r.id)).toEqual([records[2].id]);
    const unk = warnings.filter((w) => w.includes("outside the model's vocabulary"));
    expect(unk).toHaveLength(1);
    expect(unk[0]).toContain("1 of 3 prompts had text outside the model's vocabulary");
  });
});

/** The questions (gold passage "Sela Doru lives in Rimove .") through the evaluator on tiny-llada: records, rows, warnings. */
async function evalQuestions(questions: string[], batchSize: number) {
  const m = await openModel(DIR, {});
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-unk-"));
  try {
    const file = path.join(dir, "qa.jsonl");
    const line = (q: string) =>
      JSON.stringify({ question: q, answers: ["Rimove"], ctxs: [{ text: "Sela Doru lives in Rimove .", isgold: true }] });
    fs.writeFileSync(file, questions.map(line).join("\n") + "\n");
    const records = await loadQaJsonl(file);
    const warnings: string[] = [];
    const run = await runEval({
      engine: m.engine,
      tokenizer: m.tokenizer,
      records,
      setting: { kind: "oracle" },
      promptFormat: m.preset.promptFormat,
      sampler: { ...m.preset.sampler, genLength: 2, blockLength: 2, steps: 1 },
      batchSize,
      warn: (w) => warnings.push(w),
    });
    return { records, results: run.results, warnings };
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
    await m.dispose();
  }
}
