import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { buildContext, type EvalSetting } from "../../src/qa/contexts.js";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { PROMPT_FORMATS } from "../../src/model/presets.js";
import { CHAT_EXAMPLES, buildQaPrompt, promptRegionsToTokens } from "../../src/qa/prompts.js";
import { FIXTURES, HELDOUT, parityTokenizer, worldTokenizer } from "./helpers.js";

const world = JSON.parse(fs.readFileSync(path.join(FIXTURES, "world-prompts.json"), "utf8")) as {
  prompts: { row: number; setting: string; text: string; ids: number[] }[];
};
const SETTINGS: Record<string, EvalSetting> = {
  closed_book: { kind: "closed-book" },
  oracle: { kind: "oracle" },
  gold_4: { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" },
  gold_9: { kind: "distractors", k: 9, goldPosition: "cycle", source: "record" },
};

describe("tiny-world prompts = what training/evaluate.py builds", () => {
  it("text and ids match the training code for 12 records × 4 settings", async () => {
    const tok = worldTokenizer();
    const recs = await loadQaJsonl(HELDOUT, { limit: 12 });
    expect(world.prompts.length).toBe(48);
    for (const ref of world.prompts) {
      const ctx = buildContext(recs[ref.row], SETTINGS[ref.setting]);
      const p = buildQaPrompt("tiny-world", { question: recs[ref.row].question, ...ctx }, tok);
      const enc = tok.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
      expect(enc.ids, `${ref.row} ${ref.setting}`).toEqual(ref.ids);
      // Word-level: spacing differs from the hand-rendered Python string only in cosmetic whitespace.
      expect(p.text.replace(/\s+/g, " ")).toBe(ref.text.replace(/\s+/g, " "));
    }
  });
  it("regions cover the right text and map to tokens", async () => {
    const tok = worldTokenizer();
    const [r] = await loadQaJsonl(HELDOUT, { limit: 1 });
    const ctx = buildContext(r, { kind: "distractors", k: 4, goldPosition: 2, source: "record" });
    const p = buildQaPrompt("tiny-world", { question: r.question, ...ctx }, tok);
    const span = (n: string) => {
      const g = p.regions.find((x) => x.name === n)!;
      return p.text.slice(g.chars[0], g.chars[1]);
    };
    expect(span("gold")).toBe(`Passage 3 : ${r.ctxs[0].text}`);
    expect(span("doc 3")).toBe(span("gold"));
    expect(span("doc 1")).toBe(`Passage 1 : ${r.ctxs[1].text}`);
    expect(span("question")).toBe(`Question : ${r.question}`);
    const enc = tok.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
    const regions = promptRegionsToTokens(p, enc.offsets, 4);
    const q = regions.find((x) => x.name === "question")!;
    expect(enc.tokens.slice(q.tokens[0], q.tokens[1]).join(" ")).toBe(`Question : ${r.question}`);
    expect(regions.find((x) => x.name === "answer")!.tokens).toEqual([enc.ids.length, enc.ids.length + 4]);
    expect(enc.tokens[q.tokens[1]]).toBe("<|end|>"); // template tokens are outside every region
  });
});

const passages = [
  { title: "A", text: "Paris is the capital of France." },
  { title: "B", text: "Berlin is in Germany." },
];
const question = "what is the capital of france";

describe("paper prompts: exact strings (upstream's evaluate_*.py)", () => {
  const { tok } = parityTokenizer("llada");
  it("LLaDA", () => {
    const p = buildQaPrompt("paper-llada", { question, passages, goldIndex: 0 }, tok, { chatTemplate: false });
    expect(p.text).toBe(
      "Use the following passages as context if they are helpful, \nbut provide a SHORT and DIRECT answer.\n\nRULES:\n" +
        "- First, check the context passages for the answer\n- If the context contains the answer, use it\n" +
        "- If not, use your general knowledge\n- Answer must be 1-10 words maximum\n" +
        "- Do NOT include any explanations or extra text\n- Do NOT repeat or summarize the passages\n\n" +
        "Context:\nPassage 1:\nParis is the capital of France.\n\nPassage 2:\nBerlin is in Germany.\n\n" +
        "Question: what is the capital of france\n\nShort Answer:",
    );
  });
  it("Dream / Llama / Qwen: header + context + \\n + examples + \\nQuestion + \\nAnswer:", () => {
    const p = buildQaPrompt("paper-chat", { question, passages: passages.slice(0, 1), goldIndex: 0 }, tok, { chatTemplate: false });
    expect(p.text.startsWith("You are a helpful assistant that answers questions. \n\nINSTRUCTIONS:\n1. First, check")).toBe(true);
    expect(p.text).toContain(
      '6. Never say "no answer found" - always attempt to answer using available information\n\nContext:\nPassage 1:\nParis is the capital of France.\n\nHere are examples',
    );
    expect(p.text.endsWith("same concise format:\n\nQuestion: what is the capital of france\nAnswer:")).toBe(true);
    expect(CHAT_EXAMPLES.startsWith("\n") && CHAT_EXAMPLES.endsWith("format:\n")).toBe(true);
    expect(CHAT_EXAMPLES).toContain(
      "Passage 1: The Eiffel Tower is located in Paris, France. It was completed in 1889.\n\nQuestion: Where",
    );
  });
  it("closed-book keeps the template with the dummy passage", () => {
    const p = buildQaPrompt("paper-llada", { question, passages: [], goldIndex: null }, tok, { chatTemplate: false });
    expect(p.text).toContain("Context:\nPassage 1:\nNo relevant context available.\n\nQuestion:");
    expect(p.regions.some((r) => r.name === "gold")).toBe(false);
  });
});

describe("chat templates: regions survive templating, never a double BOS", () => {
  for (const variant of ["llama", "qwen2", "llada", "dream"]) {
    for (const format of PROMPT_FORMATS) {
      it(`${variant} / ${format}`, () => {
        const { tok, bos } = parityTokenizer(variant);
        const p = buildQaPrompt(format, { question, passages, goldIndex: 1 }, tok);
        expect(p.text).toContain(p.user.trim());
        const gold = p.regions.find((r) => r.name === "gold")!;
        expect(p.text.slice(gold.chars[0], gold.chars[1])).toMatch(/Passage 2 ?:[\n ]Berlin is in Germany\.$/);
        const ids = tok.encode(p.text, { addSpecialTokens: p.addSpecialTokens }).ids;
        if (bos !== undefined) expect(ids.filter((x, i) => x === bos && i < 3).length).toBeLessThanOrEqual(1);
        if (bos !== undefined && ids[0] === bos) expect(ids[1]).not.toBe(bos);
      });
    }
  }
  it("llama: the upstream double BOS is reproducible on request, and avoided by default", () => {
    const { tok, bos } = parityTokenizer("llama");
    const good = buildQaPrompt("paper-chat", { question, passages, goldIndex: 0 }, tok);
    const bad = buildQaPrompt("paper-chat", { question, passages, goldIndex: 0 }, tok, { reproduceDoubleBos: true });
    expect(good.addSpecialTokens).toBe(false);
    expect(tok.encode(bad.text, { addSpecialTokens: bad.addSpecialTokens }).ids.slice(0, 2)).toEqual([bos, bos]);
    expect(tok.encode(good.text, { addSpecialTokens: good.addSpecialTokens }).ids.slice(0, 2)).not.toEqual([bos, bos]);
  });
});
