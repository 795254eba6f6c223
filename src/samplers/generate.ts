/**
 * `generate`: run a sampler over one or more prompts in one batch and record a trace per prompt.
 *
 * Everything is checked before the first forward pass: the settings (`resolveRunConfig`), each
 * prompt's length against the model's maximum, the region layout for `region_sum`, and the trace
 * size estimate against `maxTraceBytes`. Then the shared step loop runs; each step is streamed to
 * the trace files; a final pass over the finished sequences records the same probes.
 *
 * Stopping: pass an `AbortSignal`; the loop stops before the next step and every trace is
 * returned (and left on disk) as a valid partial trace.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { Engine, TextTokenizer } from "../runtime/types.js";
import type { Region, Trace, TraceStep } from "../trace/types.js";
import { estimateTraceBytes } from "../trace/size.js";
import { BudgetError, SettingsError } from "../util/errors.js";
import { armStrategy } from "./arm.js";
import type { SamplerKind } from "../families/index.js";
import { resolveRunConfig, type RunConfig } from "./config.js";
import { dreamStrategy } from "./dream.js";
import { lladaStrategy } from "./llada.js";
import { finalPass, runSteps, type RowState, type Strategy } from "./loop.js";
import { probeOutputs } from "../graph/probes.js";
import { makeIntervener, type Intervener, type PolicyInput } from "./interventions.js";
import { TraceRecorder } from "./recorder.js";
import { Rng } from "../util/rng.js";

/** The algorithms, by name: the only place a sampler kind turns into code. */
export const STRATEGIES: Record<SamplerKind, (cfg: RunConfig, spec: ModelSpec) => Strategy> = {
  llada: lladaStrategy,
  dream: dreamStrategy,
  arm: armStrategy,
};

/** A prompt: the exact text to tokenize (after any chat template), and optional named regions. */
export type PromptInput = string | { text: string; regions?: Region[] };

export interface GenerateOptions {
  tokenizer: TextTokenizer;
  /** A `.fstrace` path per prompt (same order; undefined entries record nothing to disk). */
  traceFiles?: (string | undefined)[];
  /** Model label written into traces (default: the spec's architecture). */
  modelName?: string;
  /** Called for every prompt at every step, after its transfers are chosen. */
  onStep?: (promptIndex: number, step: TraceStep) => void;
  /** Abort between steps; traces come back (and stay on disk) partial. */
  signal?: AbortSignal;
  /** Keep every step in the returned traces (default true; false keeps memory flat in long evaluations). */
  keepSteps?: boolean;
  /**
   * Stop at the next step boundary on SIGINT (Ctrl-C; a Jupyter kernel interrupt, which the
   * floatscope kernelspec delivers as a signal). Default true: without it a notebook interrupt
   * rejects the cell but the loop would keep sampling in the background. The traces come back,
   * and stay on disk, partial.
   */
  stopOnInterrupt?: boolean;
  /**
   * Prompts per forward pass (default: all of them). Prompts are run in consecutive batches of this
   * size; each keeps RNG stream = its position in `prompts`, so results do not depend on the batching.
   * After an interrupt, results cover the prompts started so far.
   */
  batchSize?: number;
  /**
   * An attention-intervention policy evaluated at every step (src/samplers/interventions.ts):
   * "anchors", "anchors:first-pass", "first", "random", "random:4", "sink", an
   * `InterventionPolicy` object or a `CustomPolicy`. The engine must be built with
   * `interventions: true`. Omitted or "none": a plain run.
   */
  intervention?: PolicyInput;
  /**
   * Decode autoregressive models through the engine's key/value cache (default true): the prompt
   * runs once, then one single-row forward per generated token, with the same tokens as re-running
   * the prefix. It applies when the engine has a decoder (`createEngine`'s `kvCache`: a causal model
   * without probes or interventions), with no intervention policy; otherwise every step re-runs
   * the whole canvas, as false asks. Padded batches are cached too (rows keep their left padding).
   */
  kvCache?: boolean;
  /**
   * Run the final pass on this engine instead of `engine` (the same checkpoint, built with the probes the
   * trace's final pass records), while `engine`, which then computes no probe, runs the steps: probe-free,
   * and for an autoregressive model through its key/value cache. For runs that read probes only on the
   * finished sequences (the grid's qk, absorption and token-types measures): the steps' records hold no
   * probes, the final pass holds what a run on the probed engine alone would record. No intervention
   * policy and no region-sum probe with it.
   */
  finalPassEngine?: Engine;
  /**
   * Where warnings about the prompts go (today: pieces of a prompt that became the unknown token),
   * as a sentence and as data for callers that report them their own way (the evaluator names the
   * question). Default `console.warn`, which a notebook shows under the cell.
   */
  warn?: PromptWarn;
}

/** A warning about one prompt, in words and as data. */
export type PromptWarn = (message: string, detail: PromptWarning) => void;

/** `prompt` is the index in the list given to `generate`; `pieces` the text that became the unknown token. */
export interface PromptWarning {
  kind: "unknown-words";
  prompt: number;
  pieces: string[];
}

export interface GenerateResult {
  answer: string;
  trace: Trace;
  /** Where the trace was written, if anywhere. */
  file?: string;
}

/**
 * Sample every prompt with one sampler configuration, batched into shared forward passes.
 * @example
 *   const [r] = await generate(engine, ["Question: …\nAnswer:"], { genLength: 32, steps: 32 }, { tokenizer, traceFiles: ["q1.fstrace"] });
 *   r.answer; r.trace.steps.length;
 */
export async function generate(
  engine: Engine,
  prompts: PromptInput[],
  settings: Partial<RunConfig> & Record<string, unknown>,
  options: GenerateOptions,
): Promise<GenerateResult[]> {
  const spec = engine.spec;
  // the engine whose probes the trace records: the final pass's when it has its own
  const recording = options.finalPassEngine ?? engine;
  if (options.finalPassEngine) checkFinalPassEngine(engine, options.finalPassEngine, options.intervention);
  const { cfg, encoded, intervener } = prepareRun(
    spec,
    prompts,
    { ...settings, probes: settings.probes ?? recording.probes },
    options.tokenizer,
    options.warn,
    options.intervention,
  );
  if (intervener && !engine.interventions) {
    throw new SettingsError("This engine cannot intervene on attention", {
      file: "settings",
      field: "intervention",
      expected: "an engine built with { interventions: true }",
      found: intervener.record.policy,
      hint: "createEngine(model, { interventions: true, … })",
    });
  }
  if (canonicalJson(cfg.probes) !== canonicalJson(recording.probes)) {
    throw new SettingsError("The engine computes a different probe set", {
      file: "settings",
      field: "probes",
      expected: JSON.stringify(recording.probes),
      found: JSON.stringify(cfg.probes),
      hint: "create the engine with the probes you want recorded",
    });
  }
  if (options.traceFiles && options.traceFiles.length !== prompts.length) {
    throw new SettingsError("One trace file per prompt", {
      file: "settings",
      field: "traceFiles",
      expected: `${prompts.length} entries`,
      found: String(options.traceFiles.length),
    });
  }

  const batchSize = options.batchSize ?? prompts.length;
  if (!Number.isSafeInteger(batchSize) || batchSize < 1) {
    throw new SettingsError("Invalid batchSize", {
      file: "settings",
      field: "batchSize",
      expected: "an integer ≥ 1",
      found: String(options.batchSize),
    });
  }
  preflightBudget(engine, cfg, encoded, batchSize);
  if (options.finalPassEngine) preflightBudget(options.finalPassEngine, cfg, encoded, batchSize);
  const interrupt = new AbortController();
  const onSigint = () => interrupt.abort();
  // once: a second Ctrl-C falls through to the default handler (force quit), as usual for CLIs.
  if (options.stopOnInterrupt ?? true) process.once("SIGINT", onSigint);
  const linked = options.signal ? anySignal(options.signal, interrupt.signal) : { signal: interrupt.signal, dispose: () => {} };
  const signal = linked.signal;
  const results: GenerateResult[] = [];
  try {
    for (let start = 0; start < encoded.length && !signal.aborted; start += batchSize) {
      const indices = encoded.slice(start, start + batchSize).map((_, j) => start + j);
      results.push(...(await runBatch(engine, cfg, encoded, indices, options, signal, intervener?.fork())));
    }
    return results;
  } finally {
    process.removeListener("SIGINT", onSigint);
    linked.dispose();
  }
}

/**
 * One batch: prompts `indices` (positions in the caller's list, which are also their RNG streams)
 * share every forward pass. Returns their results, partial when `signal` stopped the loop.
 */
async function runBatch(
  engine: Engine,
  cfg: RunConfig,
  encoded: EncodedPrompt[],
  indices: number[],
  options: GenerateOptions,
  signal: AbortSignal,
  intervener?: Intervener,
): Promise<GenerateResult[]> {
  const spec = engine.spec;
  const strategy = STRATEGIES[cfg.sampler](cfg, spec);
  const rows: RowState[] = indices.map((index) => {
    const canvas = strategy.initCanvas(Int32Array.from(encoded[index].ids));
    return {
      index,
      promptLength: encoded[index].ids.length,
      canvas,
      rng: new Rng(cfg.seed, index),
      done: false,
      unmaskedAt: new Int32Array(canvas.length).fill(-1),
    };
  });
  const recorders = new Map(
    indices.map((index) => [
      index,
      new TraceRecorder({
        spec,
        modelName: options.modelName ?? spec.architecture,
        tokenizer: options.tokenizer,
        config: cfg,
        device: engine.device,
        stream: index,
        prompt: encoded[index],
        file: options.traceFiles?.[index],
        keepSteps: options.keepSteps ?? true,
        intervention: intervener?.record,
      }),
    ]),
  );
  const padId = spec.padTokenId ?? spec.eosTokenIds[0] ?? 0;
  const regions = cfg.probes.regionSum
    ? { count: cfg.probes.regionSum.regions, rows: encoded.map((e) => e.regions.map((r) => r.tokens)) }
    : undefined;
  try {
    const res = await runSteps(engine, strategy, rows, {
      padId,
      regions: options.finalPassEngine ? undefined : regions,
      signal,
      intervener,
      kvCache: options.kvCache,
      guidance: cfg.cfgScale > 0 ? { scale: cfg.cfgScale, maskId: spec.maskTokenId! } : undefined,
      onStep: (row, step) => {
        recorders.get(row.index)!.step(step);
        options.onStep?.(row.index, step);
      },
    });
    if (res.interrupted)
      return rows.map((r) => result(recorders.get(r.index)!.abandon(r.canvas, r.unmaskedAt), recorders.get(r.index)!.file));
    const finals = await finalPass(options.finalPassEngine ?? engine, rows, { padId, regions, intervener });
    return rows.map((r, i) =>
      result(
        recorders.get(r.index)!.finish(r.canvas, finals[i].probes, r.unmaskedAt, finals[i].intervention),
        recorders.get(r.index)!.file,
      ),
    );
  } finally {
    for (const r of recorders.values()) r.close();
  }
}

/** A final-pass engine must read the same checkpoint as the step engine, which must compute no probe. */
function checkFinalPassEngine(engine: Engine, final: Engine, intervention: GenerateOptions["intervention"]): void {
  const bad = (expected: string, found: string) =>
    new SettingsError("Invalid final-pass engine", { file: "settings", field: "finalPassEngine", expected, found });
  if (probeOutputs(engine.spec, engine.probes).length > 0)
    throw bad(
      "a step engine that computes no probe (the final-pass engine records them)",
      `step engine probes ${JSON.stringify(engine.probes)}`,
    );
  if (canonicalJson(final.spec) !== canonicalJson(engine.spec))
    throw bad("an engine on the same checkpoint as the step engine", `${final.spec.architecture} vs ${engine.spec.architecture}`);
  if (intervention !== undefined && intervention !== "none")
    throw bad("no intervention policy (a policy acts at every step)", "an intervention");
  if (final.probes.regionSum) throw bad("no region-sum probe (it needs the steps' region inputs)", "regionSum");
}

/**
 * The memory guard, before any trace file is opened: the largest forward of the run is a full
 * batch (doubled by classifier-free guidance) at the longest prompt + genLength, reading at most
 * genLength logit rows per row when the strategy selects rows (it reads only generated positions). A run the guard
 * would stop at its first step is refused here, leaving nothing on disk.
 */
function preflightBudget(engine: Engine, cfg: RunConfig, encoded: EncodedPrompt[], batchSize: number): void {
  if (!engine.preflight) return;
  const seq = Math.max(...encoded.map((e) => e.ids.length)) + cfg.genLength;
  const batch = Math.min(batchSize, encoded.length) * (cfg.cfgScale > 0 ? 2 : 1);
  const selective = STRATEGIES[cfg.sampler](cfg, engine.spec).rowsNeeded !== undefined;
  engine.preflight(batch, seq, selective ? Math.min(seq, cfg.genLength) : seq);
}

/** JSON with object keys sorted, so {a, b} and {b, a} compare equal. */
function canonicalJson(v: unknown): string {
  return JSON.stringify(v, (_k, x) =>
    x && typeof x === "object" && !Array.isArray(x) ? Object.fromEntries(Object.entries(x).sort(([a], [b]) => (a < b ? -1 : 1))) : x,
  );
}

/**
 * A signal that aborts when either does (AbortSignal.any needs Node 20.3; this needs nothing), and
 * `dispose` to unhook it: a caller's long-lived signal shared by many runs would otherwise collect one
 * listener per run (and Node warns past 10).
 */
function anySignal(a: AbortSignal, b: AbortSignal): { signal: AbortSignal; dispose: () => void } {
  const c = new AbortController();
  const abort = () => c.abort();
  if (a.aborted || b.aborted) abort();
  a.addEventListener("abort", abort, { once: true });
  b.addEventListener("abort", abort, { once: true });
  const dispose = () => {
    a.removeEventListener("abort", abort);
    b.removeEventListener("abort", abort);
  };
  return { signal: c.signal, dispose };
}

/**
 * Every check that needs no engine: settings, prompt tokenization and lengths, regions, and the
 * trace size estimate. The CLI calls it before building the engine; `generate` calls it again.
 */
export function prepareRun(
  spec: ModelSpec,
  prompts: PromptInput[],
  settings: Partial<RunConfig> & Record<string, unknown>,
  tokenizer: TextTokenizer,
  warn: PromptWarn = (m) => console.warn(m),
  intervention?: PolicyInput,
): { cfg: RunConfig; encoded: EncodedPrompt[]; traceBytes: number; intervener?: Intervener } {
  const cfg = resolveRunConfig(settings, spec);
  const intervener = makeIntervener(intervention, spec, cfg);
  if (prompts.length === 0) throw new SettingsError("No prompts", { file: "settings", field: "prompts", expected: "at least one prompt" });
  const prefix = intervener?.prefix ?? [];
  const encoded = prompts.map((p, i) => withPrefix(encodePrompt(p, i, cfg, spec, tokenizer, warn, prefix.length), prefix, tokenizer));
  checkRegions(encoded, cfg);
  const longest = Math.max(...encoded.map((e) => e.ids.length)) + cfg.genLength;
  const traceBytes = estimateTraceBytes(cfg.probes, {
    numLayers: spec.numLayers,
    numHeads: spec.numHeads,
    numKvHeads: spec.numKvHeads,
    headDim: spec.headDim,
    seq: longest,
    steps: cfg.steps,
    transfersPerStep: Math.ceil(cfg.genLength / cfg.steps),
  });
  if (traceBytes > cfg.maxTraceBytes) {
    throw new BudgetError("The trace would exceed maxTraceBytes", {
      file: "settings",
      field: "probes",
      expected: `≤ ${cfg.maxTraceBytes} bytes per trace (maxTraceBytes)`,
      found: `≈ ${traceBytes} bytes for T = ${longest}, ${cfg.steps} steps, ${spec.numLayers} layers`,
      hint: "record fewer layers/heads in pattern, or raise maxTraceBytes",
    });
  }
  return intervener ? { cfg, encoded, traceBytes, intervener } : { cfg, encoded, traceBytes };
}

/** Tokens placed before the prompt (a dedicated sink): ids, token strings, empty spans, regions shifted. */
function withPrefix(e: EncodedPrompt, prefix: number[], tokenizer: TextTokenizer): EncodedPrompt {
  const n = prefix.length;
  if (n === 0) return e;
  return {
    text: e.text,
    ids: [...prefix, ...e.ids],
    tokens: [...prefix.map((id) => tokenizer.idToToken(id) ?? ""), ...e.tokens],
    offsets: [...prefix.map((): [number, number] => [0, 0]), ...e.offsets],
    regions: e.regions.map((r) => ({ ...r, tokens: [r.tokens[0] + n, r.tokens[1] + n] })),
  };
}

function result(trace: Trace, file?: string): GenerateResult {
  const r: GenerateResult = { answer: trace.answer, trace };
  if (file) r.file = file;
  return r;
}

/** "prompt 0: 3 piece(s) of the text are not in the model's vocabulary …: "Zanzibar" ×2, "qux"". */
export function unknownWordsWarning(promptIndex: number, unknown: string[]): string {
  return `prompt ${promptIndex}: ${unknownWordsText(unknown)}`;
}

/** "3 piece(s) of the text are not in the model's vocabulary and became the unknown token: "Zanzibar" ×2, "qux"". */
export function unknownWordsText(unknown: string[]): string {
  const counts = new Map<string, number>();
  for (const w of unknown) counts.set(w, (counts.get(w) ?? 0) + 1);
  const listed = [...counts].slice(0, 12).map(([w, n]) => JSON.stringify(w) + (n > 1 ? ` ×${n}` : ""));
  const more = counts.size > 12 ? `, and ${counts.size - 12} more` : "";
  return `${unknown.length} piece(s) of the text are not in the model's vocabulary and became the unknown token: ${listed.join(", ")}${more}`;
}

interface EncodedPrompt {
  text: string;
  ids: number[];
  tokens: string[];
  offsets: [number, number][];
  regions: Region[];
}

function encodePrompt(
  p: PromptInput,
  i: number,
  cfg: RunConfig,
  spec: ModelSpec,
  tokenizer: TextTokenizer,
  warn: PromptWarn,
  extra = 0,
): EncodedPrompt {
  const text = typeof p === "string" ? p : p.text;
  if (typeof text !== "string")
    throw new SettingsError("Prompt is not text", { file: "settings", field: `prompts[${i}]`, expected: "a string or {text, regions}" });
  const enc = tokenizer.encode(text, { addSpecialTokens: cfg.addSpecialTokens });
  if (enc.unknown && enc.unknown.length > 0)
    warn(unknownWordsWarning(i, enc.unknown), { kind: "unknown-words", prompt: i, pieces: enc.unknown });
  if (enc.ids.length === 0)
    throw new SettingsError("Prompt is empty", { file: "settings", field: `prompts[${i}]`, expected: "at least one token" });
  const total = enc.ids.length + extra + cfg.genLength;
  if (total > spec.maxPositionEmbeddings) {
    throw new SettingsError("Prompt plus generation is longer than the model's maximum", {
      file: "settings",
      field: `prompts[${i}]`,
      expected: `prompt tokens${extra ? " + sink" : ""} + genLength ≤ max_position_embeddings ${spec.maxPositionEmbeddings}`,
      found: `${enc.ids.length}${extra ? ` + ${extra}` : ""} + ${cfg.genLength} = ${total}`,
    });
  }
  return { text, ids: enc.ids, tokens: enc.tokens, offsets: enc.offsets, regions: typeof p === "string" ? [] : (p.regions ?? []) };
}

function checkRegions(encoded: EncodedPrompt[], cfg: RunConfig): void {
  encoded.forEach((e, i) => {
    const T = e.ids.length + cfg.genLength;
    e.regions.forEach((r, k) => {
      const [s, t] = r.tokens;
      if (!(Number.isInteger(s) && Number.isInteger(t) && 0 <= s && s <= t && t <= T)) {
        throw new SettingsError("Region token span is out of range", {
          file: "settings",
          field: `prompts[${i}].regions[${k}].tokens`,
          expected: `0 ≤ start ≤ end ≤ ${T}`,
          found: JSON.stringify(r.tokens),
        });
      }
    });
    if (cfg.probes.regionSum && e.regions.length !== cfg.probes.regionSum.regions) {
      throw new SettingsError("region_sum needs one region list per prompt of the probe's size", {
        file: "settings",
        field: `prompts[${i}].regions`,
        expected: `${cfg.probes.regionSum.regions} regions`,
        found: String(e.regions.length),
      });
    }
  });
}
