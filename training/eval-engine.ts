/**
 * Held-out evaluation of an embedded tiny model with floatscope's own engine and samplers — the
 * numbers the model cards show. Same questions, settings and gold placement as the torch-side
 * evaluation (training/evaluate.py): closed-book, oracle, gold among 4 and among 9 distractors, gold at
 * position i mod (k+1) for question i; prompt = the "tiny-world" layout of training/README.md.
 *
 *   npx tsx training/eval-engine.ts models/tiny-qwen [--limit N] [--batch 16]
 *
 * writes models/<name>/eval-engine.json; then `python3 training/make_cards.py <name>`.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as zlib from "node:zlib";
import { readTokenizerFiles } from "../src/checkpoint/checkpoint.js";
import { loadTokenizer } from "../src/checkpoint/tokenizer.js";
import { scoreAnswer } from "../src/eval/metrics.js";
import { createEngine } from "../src/runtime/engine.js";
import { generate } from "../src/samplers/generate.js";

const ROOT = path.resolve(import.meta.dirname, "..");
const SETTINGS: Record<string, number | null> = { closed_book: null, oracle: 0, gold_4: 4, gold_9: 9 };

interface Rec { question: string; answers: string[]; ctxs: { text: string }[] }

/** Sampler settings per sampler kind, and how the card describes them. */
const DECODERS = {
  arm: { settings: { sampler: "arm", alg: "greedy", genLength: 6, steps: 6, blockLength: 6, temperature: 0, stopAtEos: true },
    text: "floatscope ARM sampler: greedy, at most 6 new tokens, stop at <eos>" },
  llada: { settings: { sampler: "llada", alg: "low_confidence", genLength: 4, steps: 4, blockLength: 4, temperature: 0 },
    text: "floatscope LLaDA sampler: low-confidence remasking, 4 masks, 4 steps, one block, temperature 0" },
  dream: { settings: { sampler: "dream", alg: "entropy", genLength: 4, steps: 4, blockLength: 4, temperature: 0, topP: null },
    text: "floatscope Dream sampler: entropy order, shifted logits, 4 masks, 4 steps, temperature 0" },
} as const;

function passagesFor(r: Rec, k: number | null, i: number): string[] {
  if (k === null) return [];
  const ds = r.ctxs.slice(1, 1 + k).map((c) => c.text);
  const pos = i % (k + 1);
  return [...ds.slice(0, pos), r.ctxs[0].text, ...ds.slice(pos)];
}

function userContent(passages: string[], question: string): string {
  return [...passages.map((p, i) => `Passage ${i + 1} : ${p}`), `Question : ${question}`].join("\n");
}

async function main(): Promise<void> {
  const args = process.argv.slice(2);
  const dir = path.resolve(args[0] ?? "");
  const opt = (name: string, d: number) => { const i = args.indexOf(name); return i >= 0 ? Number(args[i + 1]) : d; };
  const limit = opt("--limit", Infinity);
  const batch = opt("--batch", 16);
  if (!fs.existsSync(path.join(dir, "config.json"))) throw new Error(`usage: npx tsx training/eval-engine.ts models/<name> (no config.json in ${dir})`);
  const data = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");
  const recs = zlib.gunzipSync(fs.readFileSync(data)).toString("utf8").split("\n").filter((l) => l.trim())
    .map((l) => JSON.parse(l) as Rec).slice(0, limit);
  const tok = loadTokenizer(readTokenizerFiles(dir)!);
  const engine = await createEngine(dir, { probes: {} });
  const kind = engine.spec.family === "llada" ? "llada" : engine.spec.family === "dream" ? "dream" : "arm";
  const dec = DECODERS[kind];
  const eos = new Set(engine.spec.eosTokenIds);
  const t0 = Date.now();
  const results: Record<string, { n: number; accuracy: number; f1: number; exact_match: number }> = {};
  try {
    for (const [setting, k] of Object.entries(SETTINGS)) {
      let acc = 0, f1 = 0, em = 0;
      for (let s = 0; s < recs.length; s += batch) {
        const chunk = recs.slice(s, s + batch);
        const texts = chunk.map((r, j) => tok.applyChatTemplate(
          [{ role: "user", content: userContent(passagesFor(r, k, s + j), r.question) }], { addGenerationPrompt: true }));
        const out = await generate(engine, texts, { ...dec.settings, addSpecialTokens: false, probes: {} },
          { tokenizer: tok, keepSteps: false });
        out.forEach((o, j) => {
          // The answer is the text before the first <eos> (MDM canvases are padded with <eos>).
          const L = tok.encode(texts[j], { addSpecialTokens: false }).ids.length;
          const gen = Array.from(o.trace.final.sequence.subarray(L));
          const cut = gen.findIndex((id) => eos.has(id));
          const pred = tok.decode(cut < 0 ? gen : gen.slice(0, cut), { skipSpecialTokens: true });
          const sc = scoreAnswer(pred, chunk[j].answers);
          acc += sc.accuracy; f1 += sc.f1; em += sc.exactMatch;
        });
      }
      results[setting] = { n: recs.length, accuracy: acc / recs.length, f1: f1 / recs.length, exact_match: em / recs.length };
      process.stderr.write(`${path.basename(dir)} ${setting}: ${JSON.stringify(results[setting])}\n`);
    }
  } finally {
    await engine.dispose();
  }
  const rec = {
    model: path.basename(dir), data: "models/world/eval-heldout.jsonl.gz",
    evaluator: `floatscope engine (onnxruntime-node, ${engine.device}) and samplers, training/eval-engine.ts`,
    decoder: dec.text, results, seconds: Math.round((Date.now() - t0) / 100) / 10,
  };
  const file = path.join(dir, "eval-engine.json");
  fs.writeFileSync(file + ".tmp", JSON.stringify(rec, null, 1) + "\n");
  fs.renameSync(file + ".tmp", file);
  console.log(file);
}

main().catch((e) => { console.error(e); process.exit(1); });
