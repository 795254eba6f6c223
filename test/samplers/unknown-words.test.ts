import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openModel } from "../../src/eval/open.js";
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
});
