/**
 * The committed embedded tiny models (models/tiny-*) and their synthetic world, checked from the
 * TypeScript side: the files load as real checkpoints of their family, the tokenizer encodes exactly
 * as the Python training code did (and as Rust tokenizers does), the chat template renders the
 * training prompt, the held-out set is really held out, and the parity fixtures match the models.
 * Models that have not been trained yet are skipped by name.
 */
import * as oracle from "@anush008/tokenizers";
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { describe, expect, it } from "vitest";
import { openCheckpoint, readTokenizerFiles } from "../../src/checkpoint/checkpoint.js";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { loadTokenizer } from "../../src/checkpoint/tokenizer.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import type { ChatMessage } from "../../src/checkpoint/tokenizer-types.js";

const ROOT = path.resolve(import.meta.dirname, "../..");
const MODELS = path.join(ROOT, "models");
const FIXTURES = path.join(ROOT, "test/fixtures/tiny-models");

interface Expect {
  family: string;
  causal: boolean;
  qkvBias: boolean;
  logitShift: 0 | 1;
  mask: boolean;
}
const EXPECTED: Record<string, Expect> = {
  "tiny-llama": { family: "llama", causal: true, qkvBias: false, logitShift: 0, mask: false },
  "tiny-qwen": { family: "qwen2", causal: true, qkvBias: true, logitShift: 0, mask: false },
  "tiny-llada": { family: "llada", causal: false, qkvBias: false, logitShift: 0, mask: true },
  "tiny-dream": { family: "dream", causal: false, qkvBias: true, logitShift: 1, mask: true },
};
const present = (name: string) => fs.existsSync(path.join(MODELS, name, "model.safetensors"));

interface FixturePrompt {
  name: string;
  text: string;
  ids: number[];
  logits_rows: [number, number];
  messages: ChatMessage[] | null;
  add_generation_prompt: boolean;
}

function readJsonl(file: string): Record<string, unknown>[] {
  const text = zlib.gunzipSync(fs.readFileSync(file)).toString("utf8");
  return text
    .split("\n")
    .filter((l) => l.trim())
    .map((l) => JSON.parse(l));
}

describe("synthetic world (models/world)", () => {
  const records = readJsonl(path.join(MODELS, "world/eval-heldout.jsonl.gz")) as {
    question: string;
    answers: string[];
    subject: string;
    ctxs: { text: string; isgold: boolean; hasanswer: boolean }[];
  }[];
  const split = JSON.parse(zlib.gunzipSync(fs.readFileSync(path.join(MODELS, "world/split.json.gz"))).toString()) as Record<
    "train" | "val" | "test",
    string[]
  >;

  it("held-out questions are about test people only, never training people", () => {
    const train = new Set(split.train);
    const test = new Set(split.test);
    expect(records.length).toBeGreaterThanOrEqual(200);
    for (const r of records) {
      expect(train.has(r.subject), r.subject).toBe(false);
      expect(test.has(r.subject), r.subject).toBe(true);
    }
    expect(split.train.filter((p) => test.has(p))).toEqual([]);
  });

  it("Lost-in-the-Middle schema: ctxs[0] is the gold passage and states the answer; 9 distractors", () => {
    for (const r of records) {
      expect(r.ctxs).toHaveLength(10);
      expect(r.ctxs.map((c) => c.isgold)).toEqual([true, ...Array(9).fill(false)]);
      expect(` ${r.ctxs[0].text} `).toContain(` ${r.answers[0]} `);
      expect(r.ctxs[0].hasanswer).toBe(true);
      expect(r.ctxs[0].text).toContain(r.subject);
      expect(r.question).toContain(r.subject);
      for (const c of r.ctxs.slice(1)) expect(c.text.includes(r.subject)).toBe(false);
    }
  });

  it("questions cover every relation and many answer values", () => {
    const values = new Set(records.map((r) => r.answers[0]));
    const rel = new Set(records.map((r) => (r as unknown as { relation: string }).relation));
    expect(rel.size).toBe(10);
    expect(values.size).toBeGreaterThan(100);
  });
});

describe.each(Object.keys(EXPECTED))("%s", (name) => {
  const dir = path.join(MODELS, name);
  const exp = EXPECTED[name];

  it.skipIf(!present(name))("opens as a real checkpoint of its family with the expected spec", () => {
    const ckpt = openCheckpoint(dir);
    const spec = resolveModelSpec(ckpt);
    expect(spec.family).toBe(exp.family);
    expect(spec.causal).toBe(exp.causal);
    expect(spec.qkvBias).toBe(exp.qkvBias);
    expect(spec.logitShift).toBe(exp.logitShift);
    expect(spec.numLayers).toBeGreaterThanOrEqual(6);
    expect(spec.numHeads).toBeGreaterThanOrEqual(4);
    expect(spec.maskTokenId).toBe(exp.mask ? 4 : undefined);
    expect(spec.bosTokenId).toBe(1);
    expect(spec.eosTokenIds).toContain(2);
    for (const t of ckpt.tensors.values()) expect(t.dtype).toBe("F32");
  });

  it.skipIf(!present(name))(
    "tokenizer: same ids as the Python trainer and as Rust tokenizers; chat template renders the training prompt",
    async () => {
      const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.inputs.json`), "utf8")) as { prompts: FixturePrompt[] };
      const files = readTokenizerFiles(dir)!;
      const tok = loadTokenizer(files);
      const rust = oracle.Tokenizer.fromFile(path.join(dir, "tokenizer.json"));
      for (const p of fx.prompts) {
        expect(tok.encode(p.text, { addSpecialTokens: false }).ids, p.name).toEqual(p.ids);
        expect((await rust.encode(p.text, null, { addSpecialTokens: false })).getIds(), p.name).toEqual(p.ids);
        if (p.messages) {
          const rendered = tok.applyChatTemplate(p.messages, { addGenerationPrompt: p.add_generation_prompt });
          expect(rendered, p.name).toBe(p.text);
        }
      }
      expect(p0Unknowns(fx.prompts, files.json)).toEqual([]);
    },
  );

  it.skipIf(!present(name))("model card shows the recorded evaluation (regenerated by training/make_cards.py, not typed)", () => {
    const card = fs.readFileSync(path.join(dir, "README.md"), "utf8");
    const labels: Record<string, string> = {
      closed_book: "closed-book (no passage)",
      oracle: "oracle passage only",
      gold_4: "gold among 4 distractors",
      gold_9: "gold among 9 distractors",
    };
    let tables = 0;
    for (const f of ["eval-engine.json", "eval-torch.json"]) {
      if (!fs.existsSync(path.join(dir, f))) continue;
      tables++;
      const ev = JSON.parse(fs.readFileSync(path.join(dir, f), "utf8")) as { results: Record<string, { n: number; accuracy: number }> };
      for (const [s, r] of Object.entries(ev.results)) {
        expect(card, `${f} ${s}`).toContain(`| ${labels[s]} | ${r.n} | ${(100 * r.accuracy).toFixed(1)} |`);
      }
    }
    expect(tables).toBeGreaterThan(0);
  });

  it.skipIf(!present(name))("parity fixture: reference logits sized [rows, vocab], attention rows sum to 1", () => {
    const fx = JSON.parse(fs.readFileSync(path.join(FIXTURES, `${name}.inputs.json`), "utf8")) as { prompts: FixturePrompt[] };
    const file = path.join(FIXTURES, `${name}.reference.safetensors`);
    const h = readSafetensorsHeader(file);
    const byName = new Map(h.tensors.map((t) => [t.name, t]));
    const spec = resolveModelSpec(openCheckpoint(dir));
    for (const p of fx.prompts) {
      const t = byName.get(`${p.name}.logits`)!;
      expect(t.shape).toEqual([p.logits_rows[1] - p.logits_rows[0], spec.vocabSize]);
    }
    const T = fx.prompts[0].ids.length;
    for (let l = 0; l < spec.numLayers; l++) {
      const t = byName.get(`p0.blocks.${l}.attn.pattern`)!;
      expect(t.shape).toEqual([1, spec.numHeads, T, T]);
      const a = readTensorF32(t);
      for (let r = 0; r < spec.numHeads * T; r++) {
        let s = 0;
        for (let k = 0; k < T; k++) s += a[r * T + k];
        expect(Math.abs(s - 1)).toBeLessThan(1e-5);
        if (spec.causal) expect(a[r * T + T - 1] === 0 || r % T === T - 1).toBe(true);
      }
    }
  });
});

function p0Unknowns(prompts: FixturePrompt[], json: Record<string, unknown>): number[] {
  const unk = (json.model as { vocab: Record<string, number> }).vocab["<unk>"];
  return prompts.flatMap((p) => p.ids.filter((i) => i === unk));
}

it("the four committed models stay within 40 MB in all", () => {
  let total = 0;
  for (const name of Object.keys(EXPECTED)) {
    if (!present(name)) continue;
    for (const f of fs.readdirSync(path.join(MODELS, name))) total += fs.statSync(path.join(MODELS, name, f)).size;
  }
  expect(total).toBeLessThanOrEqual(40 * 1024 * 1024);
});
