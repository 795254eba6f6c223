/**
 * `compare(models, { prompt, passages })`: decode ONE prompt on several models and get them side by
 * side in the attention scrubber, in one call:
 *
 *   const c = await compare(["models/tiny-llada", "models/tiny-llama"], {
 *     prompt: "What is the favourite colour of Bifo Mimosis ?",
 *     passages: ["Bifo Mimosis has a home in Viro . The favourite colour of Bifo Mimosis is green ."],
 *     pattern: true,
 *   });
 *   show(c);              // the multi-run scrubber; c.traces are the runs for any other analysis
 *
 * Each model decodes with its own prompt format (chat template, tiny-world or paper format) and its
 * own sampler preset (eval/presets.ts), as the notebooks do. Options are forgiving where the meaning
 * is plain (`pattern: true` = every layer; passages as strings) and checked before any model is
 * opened, each wrong one a SettingsError that names the field and the expected shape.
 *
 * Why in src/ and not in src/figures or src/display: it opens models and runs samplers (eval,
 * samplers) and then builds a figure; only the top level may import both sides (test/architecture).
 */
import { generate } from "./samplers/generate.js";
import { openModelFiles, startEngine } from "./model/open.js";
import { buildQaPrompt, promptRegionsToTokens } from "./qa/prompts.js";
import type { QaPassage } from "./qa/datasets.js";
import { viewProbes, type ViewProbesSetting } from "./notebook/view-probes.js";
import { scrubber, type ScrubberFigure } from "./figures/scrubber.js";
import type { Trace } from "./trace/types.js";
import type { ProbeRequest } from "./util/probes.js";
import type { DeviceRequest } from "./runtime/session.js";
import { SettingsError, keyword } from "./util/errors.js";

/** A context passage: its text, or a title and a text. */
export type PassageInput = string | { title?: string; text: string };

/** Layers for a map probe: `true` = every layer, `false` = none, a list, or `{ layers }`. */
export type LayerChoice = boolean | number[] | { layers: number[] };

export interface CompareOptions {
  /** The question or instruction (required). */
  prompt: string;
  /** Context passages shown before the question, as strings or `{ title, text }` (default none). */
  passages?: PassageInput[];
  /** Index of the passage that holds the answer (marks the "gold" region); default none. */
  gold?: number | null;
  /** New tokens to decode (MDMs: one per step in one block); default each model's preset. */
  tokens?: number;
  /** Per-head attention maps for the head view: `true` = every layer (default: what fits, see viewProbes). */
  pattern?: LayerChoice;
  /** Head-mean full maps for the full-map view: `true` = every layer (default: what fits). */
  patternMean?: LayerChoice;
  /** The other scrubber views: "auto" (default) adds what fits the memory budget, "all", or "none". */
  viewProbes?: ViewProbesSetting;
  /** Where the engines run; default "cpu". */
  device?: DeviceRequest;
  /** Scrubber title; default the prompt. */
  title?: string;
  /** One panel label per model; default "<folder name> (MDM|ARM)". */
  labels?: string[];
  /** Sampler seed (default 0). */
  seed?: number;
  /** Cap on the scrubber payload in characters (default the scrubber's). */
  maxBytes?: number;
}

/** The decoded runs and their side-by-side scrubber; `show(c)` shows the scrubber. */
export interface Comparison {
  /** One trace per model, in the order given. */
  traces: Trace[];
  /** The model folder names, in the same order. */
  models: string[];
  scrubber: ScrubberFigure;
  toMimeBundle(): ReturnType<ScrubberFigure["toMimeBundle"]>;
}

const FILE = "compare";

function typeName(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "an array";
  return typeof v;
}

/** A wrong option: "passages: expected string[] or {title, text}[], found number" (the type of what came). */
function bad(field: string, expected: string, value: unknown): never {
  return badValue(field, expected, typeName(value));
}

/** As `bad`, with the finding in words (a number out of range is shown as itself). */
function badValue(field: string, expected: string, found: string): never {
  throw new SettingsError(`${field}: expected ${expected}, found ${found}`, { file: FILE, field, expected, found });
}

const shown = (v: unknown) => (typeof v === "number" ? String(v) : typeName(v));

/** The models argument: a path or a non-empty list of paths. */
function checkModels(models: unknown): string[] {
  const list = typeof models === "string" ? [models] : models;
  if (!Array.isArray(list) || list.length === 0) bad("models", "a model folder or a non-empty string[] of them", models);
  list.forEach((m, i) => {
    if (typeof m !== "string" || m.length === 0) bad(`models[${i}]`, "a model folder path (string)", m);
  });
  return list as string[];
}

/** Passages as strings or {title, text}; a string becomes a passage with an empty title. */
export function normalisePassages(passages: unknown): QaPassage[] {
  if (passages === undefined) return [];
  const expected = "string[] or {title, text}[]";
  if (!Array.isArray(passages)) bad("passages", expected, passages);
  return passages.map((p: unknown, i) => {
    if (typeof p === "string") return { title: "", text: p };
    if (p !== null && typeof p === "object" && !Array.isArray(p)) {
      const o = p as Record<string, unknown>;
      if (typeof o.text !== "string") bad(`passages[${i}].text`, "a string", o.text);
      if (o.title !== undefined && typeof o.title !== "string") bad(`passages[${i}].title`, "a string", o.title);
      return { title: (o.title as string | undefined) ?? "", text: o.text };
    }
    return bad(`passages[${i}]`, "a string or {title, text}", p);
  });
}

/** `true`/`false`/number[]/{layers} → the probe's layers for a model of `numLayers` layers (undefined: not asked). */
export function layersOf(choice: unknown, field: string, numLayers: number): number[] | undefined {
  if (choice === undefined || choice === false) return undefined;
  if (choice === true) return Array.from({ length: numLayers }, (_, i) => i);
  const list = Array.isArray(choice)
    ? choice
    : choice !== null && typeof choice === "object" && Array.isArray((choice as { layers?: unknown }).layers)
      ? (choice as { layers: unknown[] }).layers
      : bad(field, "true (every layer), a layer list such as [0, 5], or { layers: [...] }", choice);
  return list.map((l, i) => {
    if (!Number.isInteger(l) || (l as number) < 0 || (l as number) >= numLayers)
      badValue(`${field}[${i}]`, `a layer index 0..${numLayers - 1}`, shown(l));
    return l as number;
  });
}

/** Check every option before a model is opened (a typo fails in a second, not after a decode). */
function checkOptions(o: unknown): CompareOptions {
  if (o === null || typeof o !== "object" || Array.isArray(o)) bad("options", "{ prompt, passages?, tokens?, pattern?, … }", o);
  const opts = o as CompareOptions;
  if (typeof opts.prompt !== "string" || opts.prompt.trim() === "") bad("prompt", "a non-empty string", opts.prompt);
  normalisePassages(opts.passages);
  if (opts.gold !== undefined && opts.gold !== null) {
    const n = opts.passages?.length ?? 0;
    if (!Number.isInteger(opts.gold) || opts.gold < 0 || opts.gold >= n)
      badValue("gold", n ? `a passage index 0..${n - 1} or null` : "null (no passages given)", shown(opts.gold));
  }
  if (opts.tokens !== undefined && !(Number.isInteger(opts.tokens) && opts.tokens > 0))
    badValue("tokens", "a positive integer", shown(opts.tokens));
  for (const k of ["pattern", "patternMean"] as const)
    if (opts[k] !== undefined && typeof opts[k] !== "boolean") layersOf(opts[k], k, Number.MAX_SAFE_INTEGER);
  if (opts.viewProbes !== undefined) keyword(opts.viewProbes, ["auto", "all", "none"] as const, { file: FILE, field: "viewProbes" });
  if (opts.labels !== undefined && !(Array.isArray(opts.labels) && opts.labels.every((l) => typeof l === "string")))
    bad("labels", "string[] (one per model)", opts.labels);
  return opts;
}

/**
 * Decode `options.prompt` (with its passages) on every model, one engine at a time, and return the
 * traces with their side-by-side scrubber. See the module doc for an example and docs/figures.md.
 */
export async function compare(models: string | string[], options: CompareOptions): Promise<Comparison> {
  const dirs = checkModels(models);
  const o = checkOptions(options);
  if (o.labels !== undefined && o.labels.length !== dirs.length)
    badValue("labels", `${dirs.length} labels (one per model)`, `${o.labels.length} labels`);
  const passages = normalisePassages(o.passages);
  const traces: Trace[] = [];
  const names: string[] = [];
  for (const dir of dirs) {
    const files = openModelFiles(dir);
    const { preset, spec, tokenizer } = files;
    const sampler: Record<string, unknown> = { ...preset.sampler, seed: o.seed ?? 0 };
    if (o.tokens !== undefined)
      Object.assign(sampler, spec.causal ? { genLength: o.tokens } : { genLength: o.tokens, steps: o.tokens, blockLength: o.tokens });
    const genLength = Number(sampler.genLength ?? 32);
    const p = buildQaPrompt(preset.promptFormat, { question: o.prompt, passages, goldIndex: o.gold ?? null }, tokenizer);
    const enc = tokenizer.encode(p.text, { addSpecialTokens: p.addSpecialTokens });
    const regions = promptRegionsToTokens(p, enc.offsets, genLength);
    // What the scrubber draws: received per layer and head always; the maps as asked, else what fits.
    const base: ProbeRequest = { received: true, receivedHeads: true };
    const headLayers = layersOf(o.pattern, "pattern", spec.numLayers);
    const meanLayers = layersOf(o.patternMean, "patternMean", spec.numLayers);
    if (headLayers) base.pattern = { layers: headLayers };
    if (meanLayers) base.patternMean = { layers: meanLayers };
    const steps = spec.causal ? genLength : Number(sampler.steps ?? genLength);
    const view = viewProbes(base, spec, { batch: 1, traces: 1, seq: enc.ids.length + genLength, steps }, { setting: o.viewProbes });
    const m = await startEngine(files, { device: o.device ?? "cpu", probes: view.probes });
    try {
      const [r] = await generate(
        m.engine,
        [{ text: p.text, regions }],
        { ...sampler, addSpecialTokens: p.addSpecialTokens },
        { tokenizer: m.tokenizer, modelName: m.name },
      );
      traces.push(r.trace);
      names.push(m.name);
    } finally {
      await m.dispose();
    }
  }
  const fig = scrubber(traces, {
    title: o.title ?? o.prompt,
    ...(o.labels ? { labels: o.labels } : {}),
    ...(o.maxBytes !== undefined ? { maxBytes: o.maxBytes } : {}),
  });
  return { traces, models: names, scrubber: fig, toMimeBundle: () => fig.toMimeBundle() };
}
