/**
 * The engine's reference runs: every notebook's decoding on the embedded tiny models, with the
 * notebooks' settings, reduced to tokens and probe summaries. `scripts/capture-engine-reference.ts`
 * writes them (with the commit they came from) to test/fixtures/engine-reference.json, and
 * test/runtime/engine-reference.test.ts decodes again and compares: the same tokens, and probe values
 * within 1e-5. It pins what an engine change (fused attention, chunking, fewer copies) must not move.
 *
 * A probe summary keeps, per probe name and over all steps of a trace plus the final pass: the number
 * of values, their sum, a weighted sum (weights in [−0.5, 0.5] from the step and index, so a permutation
 * shows) and a few values at fixed places. If every value moves by at most ε, both sums move by at
 * most ε·n: that is the tolerance the test applies to them.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { buildContext, type EvalSetting } from "../../src/qa/contexts.js";
import { decodeQa, loadQaSet, notebookSettings, type QaContext } from "../../src/notebook/notebook.js";
import { openModel } from "../../src/model/open.js";
import { defaultPreset } from "../../src/model/presets.js";
import { buildQaPrompt, promptRegionsToTokens } from "../../src/qa/prompts.js";
import { runEval } from "../../src/qa/runner.js";
import { generate } from "../../src/samplers/generate.js";
import { readTrace } from "../../src/trace/reader.js";
import type { Trace } from "../../src/trace/types.js";
import type { ProbeRequest } from "../../src/util/probes.js";

export const MODELS_DIR = path.resolve(import.meta.dirname, "../../models");
export const DATA_FILE = path.join(MODELS_DIR, "world/eval-heldout.jsonl.gz");
export const FIXTURE = path.resolve(import.meta.dirname, "../fixtures/engine-reference.json");

export interface ProbeSummary {
  n: number;
  sum: number;
  wsum: number;
  /** [pass, index, value]: pass = step index, or −1 for the final pass. */
  samples: [number, number, number][];
}

export interface TraceSummary {
  model: string;
  /** Generated tokens (the final sequence after the prompt). */
  generated: number[];
  /** Step at which each generated position was unmasked (ARM: appended). */
  unmaskedAt: number[];
  steps: number;
  /** Sum of the transferred tokens' confidences over all steps. */
  confidence: number;
  probes: Record<string, ProbeSummary>;
}

export interface ReferenceCase {
  /** The notebook it stands for and what it runs. */
  name: string;
  traces: TraceSummary[];
}

export interface ReferenceFile {
  format: "floatscope-engine-reference";
  version: 1;
  commit: string;
  produced: string;
  note: string;
  cases: ReferenceCase[];
}

const SAMPLES_PER_PROBE = 4;

function weightOf(pass: number, i: number): number {
  // a fixed pseudo-random weight in [−0.5, 0.5): integer hash of (pass, index)
  let h = Math.imul(i + 1, 2654435761) ^ Math.imul(pass + 2, 40503);
  h = Math.imul(h ^ (h >>> 15), 2246822519);
  return ((h >>> 0) % 10007) / 10007 - 0.5;
}

/** The summary of one trace (see the module comment). */
export function summarizeTrace(t: Trace): TraceSummary {
  const passes: { pass: number; probes: Map<string, { data: ArrayLike<number> }> }[] = [
    ...t.steps.map((s, i) => ({ pass: i, probes: s.probes })),
    { pass: -1, probes: t.final.probes },
  ];
  const probes: Record<string, ProbeSummary> = {};
  const names = [...new Set(passes.flatMap((p) => [...p.probes.keys()]))].sort();
  for (const name of names) {
    const s: ProbeSummary = { n: 0, sum: 0, wsum: 0, samples: [] };
    const having = passes.filter((p) => p.probes.has(name));
    for (const { pass, probes: m } of having) {
      const d = m.get(name)!.data;
      for (let i = 0; i < d.length; i++) {
        s.sum += d[i];
        s.wsum += d[i] * weightOf(pass, i);
      }
      s.n += d.length;
    }
    for (let k = 0; k < SAMPLES_PER_PROBE && having.length > 0; k++) {
      const { pass, probes: m } = having[Math.floor((k * (having.length - 1)) / Math.max(1, SAMPLES_PER_PROBE - 1))];
      const d = m.get(name)!.data;
      if (d.length === 0) continue;
      const i = Math.floor(((weightOf(pass, k) + 0.5) * d.length) % d.length);
      s.samples.push([pass, i, d[i]]);
    }
    probes[name] = s;
  }
  const L = t.prompt.promptLength;
  let confidence = 0;
  for (const s of t.steps) for (const c of s.confidence) confidence += c;
  return {
    model: t.model.name,
    generated: [...t.final.sequence.slice(L)],
    unmaskedAt: [...t.unmaskedAt.slice(L)],
    steps: t.steps.length,
    confidence,
    probes,
  };
}

const settings = (families: string[], samples: number) =>
  notebookSettings({ families, samples, env: { FLOATSCOPE_MODELS: MODELS_DIR, FLOATSCOPE_DATA: DATA_FILE } });

async function decodeCase(
  families: string[],
  samples: number,
  o: {
    probes: Parameters<typeof decodeQa>[2]["probes"];
    context?: QaContext | QaContext[];
    tokens?: number;
    regions?: "paper";
    distractors?: number;
  },
): Promise<TraceSummary[]> {
  const S = settings(families, samples);
  const qa = await loadQaSet(S, { distractors: o.distractors });
  // viewProbes "none": the reference holds the probes the notebooks asked for; the scrubber's extra view
  // probes (decodeQa's default "auto", added after the reference commit) are additive and not compared.
  const runs = await decodeQa(S, qa, { probes: o.probes, context: o.context, tokens: o.tokens, regions: o.regions, viewProbes: "none" });
  return Object.values(runs).flatMap((r) => r.traces.map(summarizeTrace));
}

/** Batched evaluation with traces saved (the scoring notebooks' path: padded batches of 16). */
async function evalCase(
  families: string[],
  questions: number,
  setting: EvalSetting,
  o: { probes?: ProbeRequest; interventions?: boolean; policies?: string[] },
): Promise<TraceSummary[]> {
  const S = settings(families, questions);
  const records = (await loadQaJsonl(DATA_FILE, { limit: questions })).slice(0, questions);
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-engine-ref-"));
  const out: TraceSummary[] = [];
  try {
    for (const family of Object.keys(S.names)) {
      const m = await openModel(S.dirOf(family), { probes: o.probes, interventions: o.interventions });
      try {
        const preset = defaultPreset(m.spec, m.tokenizer);
        for (const intervention of o.policies ?? ["none"]) {
          if (intervention === "sink" && m.spec.causal) continue;
          const traceDir = path.join(dir, `${m.name}-${intervention}`);
          const run = await runEval({
            engine: m.engine,
            tokenizer: m.tokenizer,
            records,
            setting,
            ...preset, // promptFormat, sampler, extraction
            modelName: m.name,
            batchSize: 16,
            dataFile: DATA_FILE,
            intervention: o.policies ? intervention : undefined,
            traceDir,
            warn: () => {},
          });
          for (const r of run.results) {
            if (r.error) throw new Error(`${m.name} ${intervention} ${r.id}: ${r.error}`);
            out.push({ ...summarizeTrace(readTrace(r.trace!)), model: `${m.name} @ ${intervention}` });
          }
        }
      } finally {
        await m.dispose();
      }
    }
  } finally {
    fs.rmSync(dir, { recursive: true, force: true });
  }
  return out;
}

/** Notebook 09's drift runs: one oracle question, deterministic settings, each MDM under three policies. */
async function interventionDriftCase(): Promise<TraceSummary[]> {
  const S = settings(["llada", "dream"], 1);
  const [record] = await loadQaJsonl(DATA_FILE, { limit: 1 });
  const out: TraceSummary[] = [];
  for (const family of Object.keys(S.names)) {
    const m = await openModel(S.dirOf(family), { probes: { received: true }, interventions: true });
    try {
      const GEN = 16;
      const preset = defaultPreset(m.spec, m.tokenizer);
      const ctx = buildContext(record, { kind: "oracle" });
      const prompt = buildQaPrompt(
        preset.promptFormat,
        { question: record.question, passages: ctx.passages, goldIndex: ctx.goldIndex },
        m.tokenizer,
      );
      const enc = m.tokenizer.encode(prompt.text, { addSpecialTokens: prompt.addSpecialTokens });
      const regions = promptRegionsToTokens(prompt, enc.offsets, GEN);
      const run =
        family === "llada"
          ? { sampler: "llada" as const, genLength: GEN, steps: GEN, blockLength: GEN, temperature: 0 }
          : { sampler: "dream" as const, genLength: GEN, steps: GEN, temperature: 0, topP: null, seed: 0 };
      for (const v of ["none", "anchors", "sink"]) {
        const [r] = await generate(
          m.engine,
          [{ text: prompt.text, regions }],
          { ...run, addSpecialTokens: prompt.addSpecialTokens },
          {
            tokenizer: m.tokenizer,
            modelName: `${m.name} @ ${v}`,
            intervention: v,
          },
        );
        out.push(summarizeTrace(r.trace));
      }
    } finally {
      await m.dispose();
    }
  }
  return out;
}

const ALL = ["llama", "qwen2", "llada", "dream"];
const MDMS = ["llada", "dream"];
const layersOf = (L: number) => [...new Set([1 / 31, 11 / 31, 28 / 31].map((f) => Math.min(L - 1, Math.max(1, Math.round(f * (L - 1))))))];

/**
 * The runs, one per notebook (02 and 07 decode the same runs; 06 and 09 score the first 16 questions,
 * one padded batch, rather than 60 / 80; 08's grid goes through the same batched runner as 06).
 */
export const REFERENCE_CASES: { name: string; run: () => Promise<TraceSummary[]> }[] = [
  {
    name: "01 temporal drift: oracle, 16 tokens, received",
    run: () => decodeCase(MDMS, 1, { probes: { received: true }, context: "oracle", tokens: 16 }),
  },
  {
    name: "02/07 absorption, token types: 4 distractors, received",
    run: () => decodeCase(ALL, 8, { probes: { received: true }, context: { distractors: 4, goldPosition: "cycle" }, distractors: 4 }),
  },
  {
    name: "03 qk decomposition: oracle, 16 tokens, received + qk",
    run: () =>
      decodeCase(MDMS, 4, {
        probes: (spec) => ({ received: true, qk: { layers: layersOf(spec.numLayers) } }),
        context: "oracle",
        tokens: 16,
      }),
  },
  {
    name: "04 retrieval heads: 4 distractors, received + argmax",
    run: () =>
      decodeCase(MDMS, 24, {
        probes: { received: true, argmax: true },
        context: { distractors: 4, goldPosition: "cycle" },
        distractors: 4,
      }),
  },
  {
    name: "05 region rollout: 9 distractors at gold 0/4/9, paper regions, received + regionSum",
    run: () =>
      decodeCase(ALL, 6, {
        probes: (_spec, regions) => ({ received: true, regionSum: { regions } }),
        context: [0, 4, 9].map((g) => ({ distractors: 9, goldPosition: g })),
        regions: "paper",
        distractors: 9,
      }),
  },
  {
    name: "06 QA RAG: 16 questions batched, closed-book / RAG / oracle, no probes",
    run: async () => [
      ...(await evalCase(ALL, 16, { kind: "closed-book" }, {})),
      ...(await evalCase(ALL, 16, { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" }, {})),
      ...(await evalCase(ALL, 16, { kind: "oracle" }, {})),
    ],
  },
  {
    name: "09 interventions: 16 questions batched, 4 distractors, every policy, received",
    run: () =>
      evalCase(
        ALL,
        16,
        { kind: "distractors", k: 4, goldPosition: "cycle", source: "record" },
        { probes: { received: true }, interventions: true, policies: ["none", "anchors", "random", "first", "sink"] },
      ),
  },
  { name: "09 interventions: drift, one oracle question, none / anchors / sink", run: interventionDriftCase },
];

/** Every way `got` differs from `ref` beyond the tolerance (tokens exact; values eps, sums eps × count), as messages; empty when it matches. */
export function compareTraces(ref: TraceSummary, got: TraceSummary, eps = 1e-5): string[] {
  const errs: string[] = [];
  const same = (a: number[], b: number[]) => a.length === b.length && a.every((v, i) => v === b[i]);
  if (!same(ref.generated, got.generated)) errs.push(`${ref.model}: generated tokens differ: [${ref.generated}] vs [${got.generated}]`);
  if (!same(ref.unmaskedAt, got.unmaskedAt)) errs.push(`${ref.model}: unmask order differs`);
  if (ref.steps !== got.steps) errs.push(`${ref.model}: ${ref.steps} vs ${got.steps} steps`);
  const nConf = ref.generated.length;
  if (!(Math.abs(ref.confidence - got.confidence) <= eps * Math.max(1, nConf)))
    errs.push(`${ref.model}: confidence sum ${ref.confidence} vs ${got.confidence}`);
  const names = Object.keys(ref.probes);
  if (names.length !== Object.keys(got.probes).length || names.some((n) => !(n in got.probes)))
    errs.push(`${ref.model}: probe names differ: ${names} vs ${Object.keys(got.probes)}`);
  for (const n of names) {
    const a = ref.probes[n],
      b = got.probes[n];
    if (!b) continue;
    const tol = eps * Math.max(1, a.n);
    if (a.n !== b.n) errs.push(`${ref.model} ${n}: ${a.n} vs ${b.n} values`);
    if (!(Math.abs(a.sum - b.sum) <= tol)) errs.push(`${ref.model} ${n}: sum ${a.sum} vs ${b.sum} (tolerance ${tol})`);
    if (!(Math.abs(a.wsum - b.wsum) <= tol)) errs.push(`${ref.model} ${n}: weighted sum ${a.wsum} vs ${b.wsum} (tolerance ${tol})`);
    a.samples.forEach(([pass, i, v], k) => {
      const s = b.samples[k];
      if (!s || s[0] !== pass || s[1] !== i || !(Math.abs(s[2] - v) <= eps))
        errs.push(`${ref.model} ${n}: value at pass ${pass} index ${i}: ${v} vs ${s?.[2]}`);
    });
  }
  return errs;
}
