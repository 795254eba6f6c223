/**
 * The steps every figure notebook takes, as library calls, so a notebook is narrative, settings, one
 * call per step and the figure:
 *
 *   const S = notebookSettings({ families: ["llada", "dream"], samples: 8 });   // environment + models present
 *   const qa = await loadQaSet(S, { distractors: 4 });                          // questions (+ distractor pool)
 *   const runs = await decodeQa(S, qa, { probes: { received: true } });         // each model, its default preset
 *
 * Environment (read by `notebookSettings`): FLOATSCOPE_MODELS (the folder of checkpoints, default
 * `../models` from notebooks/), FLOATSCOPE_MODEL_NAMES (JSON family → folder name), FLOATSCOPE_DEVICE
 * (`cpu` | `cuda` | `auto`), FLOATSCOPE_DATA (the QA file, default `../models/world/eval-heldout.jsonl.gz`),
 * FLOATSCOPE_SAMPLES (prompts per model).
 *
 * Tiers. The default tier is the user's models folder (the embedded tiny models unless FLOATSCOPE_MODELS
 * points elsewhere). `tier: "real"` is SmolLM2-135M-Instruct (a real pretrained ARM, as GGUF) and
 * `tier: "real-base"` its Dream-style MDM adaptation beside its causal twin, both from the set-up's cache
 * (`FLOATSCOPE_REAL_MODELS`, default `../.cache/real-models` from notebooks/; `FLOATSCOPE_REAL_SAMPLES`
 * overrides their sample count). `FLOATSCOPE_TIERS` (comma list, default every tier) leaves tiers out: a
 * real tier that is left out or not fetched yields no model and one note, so the notebook skips it.
 */
import * as path from "node:path";
import type { Evidence } from "../analysis/retrieval-heads.js";
import type { ModelSpec } from "../graph/spec.js";
import { generate } from "../samplers/generate.js";
import type { Region, Trace } from "../trace/types.js";
import { escapeMarkdown, markdownCode } from "../display/escape.js";
import { SettingsError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";
import { buildContext, DistractorPool, type EvalSetting, type GoldPosition } from "../qa/contexts.js";
import { loadQaJsonl, type QaRecord } from "../qa/datasets.js";
import { canonicalFamily, TINY_MODEL_NAMES, type SamplerKind } from "../families/index.js";
import { findModels, modelsNote, REAL_BASE_MODEL_NAMES, REAL_MODEL_NAMES, type FoundModels } from "./models.js";
import { openModel, openModelFiles, startEngine } from "../model/open.js";
import { buildQaPrompt, promptRegionsToTokens } from "../qa/prompts.js";
import { runEval, type EvalResult } from "../qa/runner.js";
import { viewProbes, type ViewProbesSetting } from "./view-probes.js";

export type Device = "cpu" | "cuda" | "auto";

export interface NotebookSettings {
  /** The folder of checkpoints, as given. */
  models: string;
  /** family → folder name, the models present only, in the requested order. */
  names: Record<string, string>;
  found: FoundModels;
  device: Device;
  /** The QA file. */
  data: string;
  /** Prompts (or questions) per model. */
  samples: number;
  /**
   * For findings: `real` / `real-base` for those tiers; otherwise `tiny` when every model present is an
   * embedded tiny model, else `user`.
   */
  tier: Tier;
  /** False when this tier was left out (FLOATSCOPE_TIERS) or none of its models is there: the notebook skips it. */
  runs: boolean;
  /** The folder of one family's model. */
  dirOf(family: string): string;
  /** The settings line, and the missing-model lines when some are missing (for `show`). */
  toMimeBundle(): Record<string, string>;
}

export type Tier = "tiny" | "user" | "real" | "real-base";

/** What the real tiers hold (family → file or folder in the real-models folder) and how to name them. */
const REAL_TIERS = {
  real: { names: REAL_MODEL_NAMES, what: "SmolLM2-135M-Instruct (real ARM)" },
  "real-base": { names: REAL_BASE_MODEL_NAMES, what: "SmolLM2-135M adapted: Dream-style MDM and its causal twin (real-base)" },
} as const;

export interface NotebookSettingsOptions {
  /**
   * The families the figure compares (FAMILY_ALIASES accepted). On a real tier only those the tier holds
   * count (real: llama; real-base: dream = the MDM, llama = its causal twin).
   */
  families: readonly string[];
  /** A real tier instead of the models folder (see the module comment). */
  tier?: "real" | "real-base";
  /** Default for FLOATSCOPE_SAMPLES. */
  samples?: number;
  /** The environment to read (default `process.env`). */
  env?: Record<string, string | undefined>;
}

/** Read the notebook's settings from the environment and find which of its models are present. */
export function notebookSettings(o: NotebookSettingsOptions): NotebookSettings {
  const env = o.env ?? process.env;
  const models = env.FLOATSCOPE_MODELS ?? "../models";
  let overrides: Record<string, string> = {};
  if (env.FLOATSCOPE_MODEL_NAMES) {
    try {
      overrides = JSON.parse(env.FLOATSCOPE_MODEL_NAMES) as Record<string, string>;
    } catch {
      throw new SettingsError("FLOATSCOPE_MODEL_NAMES is not JSON", {
        field: "FLOATSCOPE_MODEL_NAMES",
        expected: 'a JSON object family → folder name, e.g. {"llada":"LLaDA-8B-Instruct"}',
        found: env.FLOATSCOPE_MODEL_NAMES,
      });
    }
  }
  const device = (env.FLOATSCOPE_DEVICE ?? "cpu") as Device;
  if (!["cpu", "cuda", "auto"].includes(device))
    throw new SettingsError("Unknown FLOATSCOPE_DEVICE", { field: "FLOATSCOPE_DEVICE", expected: "cpu, cuda or auto", found: device });
  if (o.tier) return realTierSettings(o, env, device);
  const samples = Number(env.FLOATSCOPE_SAMPLES ?? o.samples ?? 8);
  if (!(Number.isInteger(samples) && samples >= 1))
    throw new SettingsError("Bad FLOATSCOPE_SAMPLES", {
      field: "FLOATSCOPE_SAMPLES",
      expected: "an integer ≥ 1",
      found: String(env.FLOATSCOPE_SAMPLES),
    });
  const found = findModels(models, o.families, overrides);
  const tiny = new Set(Object.values(TINY_MODEL_NAMES));
  const s: NotebookSettings = {
    models,
    names: found.names,
    found,
    device,
    data: env.FLOATSCOPE_DATA ?? "../models/world/eval-heldout.jsonl.gz",
    samples,
    tier: found.present.every((p) => tiny.has(p.name)) ? "tiny" : "user",
    runs: !found.none,
    dirOf: (family) => path.join(models, found.names[family] ?? family),
    toMimeBundle() {
      // Paths and model names are user text: escaped in Markdown (display/escape.ts), as given in text.
      const note = (as: "markdown" | "text") => {
        const [name, code] = as === "markdown" ? [escapeMarkdown, markdownCode] : [String, String];
        const line = `${samples} sample(s) per model; models from ${code(models)}: ${found.present.map((p) => `${name(p.name)} (${p.family})`).join(", ") || "none"}; device ${device}; data ${code(s.data)}.`;
        return found.missing.length ? `${line}\n\n${modelsNote(found, as)}` : line;
      };
      return { "text/markdown": note("markdown"), "text/plain": note("text") };
    },
  };
  return s;
}

function realTierSettings(o: NotebookSettingsOptions, env: Record<string, string | undefined>, device: Device): NotebookSettings {
  const tier = o.tier!;
  const { names, what } = REAL_TIERS[tier];
  const models = env.FLOATSCOPE_REAL_MODELS ?? "../.cache/real-models";
  const samples = Number(env.FLOATSCOPE_REAL_SAMPLES ?? o.samples ?? 2);
  if (!(Number.isInteger(samples) && samples >= 1))
    throw new SettingsError("Bad FLOATSCOPE_REAL_SAMPLES", {
      field: "FLOATSCOPE_REAL_SAMPLES",
      expected: "an integer ≥ 1",
      found: String(env.FLOATSCOPE_REAL_SAMPLES),
    });
  const wanted = env.FLOATSCOPE_TIERS?.split(",").map((t) => t.trim());
  const families = o.families.map((f) => canonicalFamily(f)).filter((f) => f in names);
  const found = findModels(models, families, { ...names });
  const left = wanted !== undefined && !wanted.includes(tier);
  const runs = !left && !found.none;
  // One note when the tier does not run (not the tiny tier's missing-model lines: nothing to train here): see toMimeBundle.
  const s: NotebookSettings = {
    models,
    names: runs ? found.names : {},
    found,
    device,
    data: env.FLOATSCOPE_DATA ?? "../models/world/eval-heldout.jsonl.gz",
    samples,
    tier,
    runs,
    dirOf: (family) => path.join(models, found.names[family] ?? family),
    toMimeBundle() {
      // Model names, paths and FLOATSCOPE_TIERS are user text: escaped in Markdown (display/escape.ts), as given in text.
      const note = (as: "markdown" | "text") => {
        const [name, code, em] = as === "markdown" ? [escapeMarkdown, markdownCode, (t: string) => `_${t}_`] : [String, String, String];
        const why = left
          ? `left out by FLOATSCOPE_TIERS=${name(env.FLOATSCOPE_TIERS ?? "")}`
          : `${found.missing.map((m) => code(m.dir)).join(", ")} not there (${code("bash scripts/setup.sh")} fetches and merges it once; it needs PyPI the first time)`;
        return runs
          ? `Tier ${tier} — ${what}: ${found.present.map((p) => `${name(p.name)} (${p.family})`).join(", ")}; ${samples} sample(s) per model; device ${device}.` +
              (found.missing.length ? ` Not there: ${found.missing.map((m) => name(m.name)).join(", ")}.` : "")
          : em(`Tier ${tier} skipped — ${what}: ${why}.`);
      };
      return { "text/markdown": note("markdown"), "text/plain": note("text") };
    },
  };
  return s;
}

export interface QaSet {
  /** The questions the notebook decodes (the first `settings.samples`). */
  records: QaRecord[];
  /** Where distractors come from: the records' own passages, or other questions' gold passages. */
  source: "record" | "pool";
  pool?: DistractorPool;
  file: string;
}

/**
 * The notebook's questions. Records that carry their own distractors (the synthetic world, Lost-in-the-
 * Middle files) use them; single-passage files (the NQ-open oracle file) draw other questions' gold
 * passages (a pool of the first 200 records) instead.
 */
export async function loadQaSet(
  s: Pick<NotebookSettings, "data" | "samples">,
  o: { distractors?: number; file?: string; limit?: number } = {},
): Promise<QaSet> {
  const file = o.file ?? s.data;
  const n = o.limit ?? s.samples;
  const pooled = await loadQaJsonl(file, { limit: Math.max(n, 200) });
  const records = pooled.slice(0, n);
  const k = o.distractors ?? 0;
  const source = records.every((r) => r.ctxs.length > k) ? "record" : "pool";
  return { records, source, pool: source === "pool" ? new DistractorPool(pooled) : undefined, file };
}

/**
 * The context of each prompt: the gold passage alone, every gold passage of the record in file order
 * (`"all-golds"`, the long-answer oracle: a long answer's facts are spread over 1–3 of them), none, or gold
 * among `k` distractors at `goldPosition`.
 */
export type QaContext = "oracle" | "all-golds" | "closed-book" | { distractors: number; goldPosition?: GoldPosition };

export interface DecodeQaOptions {
  /** The probes to record: a request, or one made from the spec and the prompts' region count. */
  probes: ProbeRequest | ((spec: ModelSpec, regions: number) => ProbeRequest);
  /** One context, or several decoded with the same engine (`byContext` keeps them apart). Default "oracle". */
  context?: QaContext | QaContext[];
  /** Decode this many tokens, one per step, in one block (the paper's temporal setting); default the model's preset. */
  tokens?: number;
  /** Region names: the prompt builder's (default) or the paper's BOS / Doc i / Gold Doc / Query / Answer. */
  regions?: "prompt" | "paper";
  /** The families to decode (default: every one present). */
  families?: string[];
  /**
   * Also record what the attention scrubber shows (per-head received, full maps, per-head maps):
   * `"auto"` (default) when the memory estimate says it fits (notebook/view-probes.ts), `"all"` always,
   * `"none"` never. What "auto" leaves out is printed, with the setting that records it.
   */
  viewProbes?: ViewProbesSetting;
  /**
   * The masked-diffusion models' unmasking order instead of their preset's, e.g. `{ sampler: "llada", alg:
   * "low_confidence" }` (LLaDA's low-confidence remasking) or `{ sampler: "dream", alg: "entropy" }`; the rest of
   * the preset (τ, top-p) stays. Causal models keep their own decoder (left to right has no order to choose).
   */
  order?: { sampler: Exclude<SamplerKind, "arm">; alg: string };
}

export interface DecodedModel {
  name: string;
  family: string;
  /** The settings' tier (for findings). */
  tier: Tier;
  causal: boolean;
  numLayers: number;
  /** Every trace, in record order (contexts after each other). */
  traces: Trace[];
  /** The traces of each context, in the order given. */
  byContext: Trace[][];
  /** Per trace: the evidence span for retrieval scoring (the gold answer inside the gold passage). */
  evidence: Evidence[];
  /** The probes recorded (the request plus the view probes that fit), and what was left out. */
  probes: ProbeRequest;
  viewNote?: string;
  seconds: number;
}

function evalSetting(c: QaContext, source: "record" | "pool"): EvalSetting {
  if (c === "oracle" || c === "closed-book" || c === "all-golds") return { kind: c };
  return { kind: "distractors", k: c.distractors, goldPosition: c.goldPosition ?? "cycle", source };
}

/** The paper's region names: BOS (when the model put one first), Doc i / Gold Doc, Query, Answer; others dropped. */
export function paperRegions(all: Region[], ids: ArrayLike<number>, bosTokenId: number | undefined): Region[] {
  const gold = all.find((r) => r.name === "gold");
  const out: Region[] = [];
  if (bosTokenId !== undefined && ids[0] === bosTokenId) out.push({ name: "BOS", tokens: [0, 1], chars: [0, 0] });
  for (const r of all) {
    if (r.name.startsWith("doc ")) {
      const same = gold !== undefined && gold.tokens[0] === r.tokens[0] && gold.tokens[1] === r.tokens[1];
      out.push({ ...r, name: same ? "Gold Doc" : `Doc${r.name.slice(4)}` });
    } else if (r.name === "question") out.push({ ...r, name: "Query" });
    else if (r.name === "answer") out.push({ ...r, name: "Answer" });
  }
  return out.sort((a, b) => a.tokens[0] - b.tokens[0]);
}

/** Decode the QA set with one model: its prompt format and sampler preset, one engine for every context. */
export async function decodeQaWith(s: NotebookSettings, family: string, qa: QaSet, o: DecodeQaOptions): Promise<DecodedModel> {
  const t0 = Date.now();
  const dir = s.dirOf(family);
  const files = openModelFiles(dir);
  const { preset, spec, tokenizer } = files;
  const sampler = { ...preset.sampler, seed: 0 };
  if (o.order && !spec.causal) Object.assign(sampler, o.order);
  if (o.tokens !== undefined)
    Object.assign(sampler, spec.causal ? { genLength: o.tokens } : { genLength: o.tokens, steps: o.tokens, blockLength: o.tokens });
  const genLength = sampler.genLength ?? 32;
  const contexts = Array.isArray(o.context) ? o.context : [o.context ?? "oracle"];
  const evidence: Evidence[] = [];
  let longest = 0;
  const inputs = contexts.map((c) =>
    qa.records.map((rec) => {
      const ctx = buildContext(rec, evalSetting(c, qa.source), { pool: qa.pool, file: qa.file });
      const gold = ctx.goldIndex === null ? "" : ctx.passages[ctx.goldIndex].text;
      const answer = rec.answers.find((a) => gold.includes(a));
      evidence.push(answer ? { text: answer, within: "gold" } : { region: "gold" });
      const p = buildQaPrompt(preset.promptFormat, { question: rec.question, passages: ctx.passages, goldIndex: ctx.goldIndex }, tokenizer);
      const enc = tokenizer.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
      longest = Math.max(longest, enc.ids.length + genLength);
      const regions = promptRegionsToTokens(p, enc.offsets, genLength);
      return {
        text: p.text,
        add: p.addSpecialTokens,
        regions: o.regions === "paper" ? paperRegions(regions, enc.ids, spec.bosTokenId) : regions,
      };
    }),
  );
  const asked = typeof o.probes === "function" ? o.probes(spec, inputs[0][0]?.regions.length ?? 0) : o.probes;
  const batchSize = Math.max(0, ...inputs.map((b) => b.length));
  const steps = spec.causal ? genLength : Number(sampler.steps ?? genLength);
  const view = viewProbes(
    asked,
    spec,
    { batch: batchSize, traces: batchSize * inputs.length, seq: longest, steps },
    { setting: o.viewProbes },
  );
  const probes = view.probes;
  const m = await startEngine(files, { device: s.device, probes });
  try {
    const byContext: Trace[][] = [];
    for (const batch of inputs) {
      const results = await generate(
        m.engine,
        batch.map(({ text, regions }) => ({ text, regions })),
        { ...sampler, addSpecialTokens: batch[0]?.add ?? true },
        { tokenizer: m.tokenizer, modelName: m.name },
      );
      byContext.push(results.map((r) => r.trace));
    }
    return {
      name: m.name,
      family,
      tier: s.tier,
      causal: spec.causal,
      numLayers: spec.numLayers,
      traces: byContext.flat(),
      byContext,
      evidence,
      probes,
      viewNote: view.note,
      seconds: (Date.now() - t0) / 1000,
    };
  } finally {
    await m.dispose();
  }
}

/**
 * Decode the QA set with every model present (or `o.families`), one after the other (one engine in
 * memory at a time), printing one line per model. Keyed by family.
 */
export async function decodeQa(s: NotebookSettings, qa: QaSet, o: DecodeQaOptions): Promise<Record<string, DecodedModel>> {
  const out: Record<string, DecodedModel> = {};
  for (const family of o.families ?? Object.keys(s.names)) {
    if (!(family in s.names)) continue;
    const r = await decodeQaWith(s, family, qa, o);
    out[family] = r;
    const t = r.traces[0];
    console.log(
      `${r.name}: ${r.traces.length} prompt(s), ${t ? `prompt ${t.prompt.promptLength} tokens, ${t.steps.length} decoding steps, first answer ${JSON.stringify(t.answer)}` : "none"} (${r.seconds.toFixed(1)} s)`,
    );
  }
  return out;
}

/**
 * Score every setting with every model present: each model's prompt format, decoder and answer
 * extraction (its default preset), one engine per model. Rows carry the setting's label.
 */
export async function evaluateQa(
  s: NotebookSettings,
  qa: QaSet,
  settings: Record<string, EvalSetting>,
  o: { batchSize?: number } = {},
): Promise<EvalResult[]> {
  const rows: EvalResult[] = [];
  for (const family of Object.keys(s.names)) {
    const m = await openModel(s.dirOf(family), { device: s.device });
    try {
      for (const [label, given] of Object.entries(settings)) {
        const setting: EvalSetting = given.kind === "distractors" ? { ...given, source: qa.source } : given;
        const t0 = Date.now();
        const run = await runEval({
          engine: m.engine,
          tokenizer: m.tokenizer,
          records: qa.records,
          setting,
          promptFormat: m.preset.promptFormat,
          sampler: m.preset.sampler,
          extraction: m.preset.extraction,
          modelName: m.name,
          batchSize: o.batchSize,
          pool: qa.pool,
          dataFile: qa.file,
        });
        rows.push(...run.results.map((r) => ({ ...r, setting: label })));
        console.log(
          `${m.name} ${label}: ${run.progress.done} questions, ${run.progress.errors} errors, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        );
      }
    } finally {
      await m.dispose();
    }
  }
  return rows;
}
