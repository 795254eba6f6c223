/**
 * `openModel(path, options)`: the one way to open a model — checkpoint → spec → tokenizer → engine, plus
 * what callers then ask for (family, the model's default prompt and sampler preset, a display name).
 * The CLI, the evaluator and the notebooks all open models through it.
 *
 * `path` is whatever `openCheckpoint` accepts (a Hugging Face checkpoint folder; a .gguf file where
 * that reader is present). In two steps when something must be checked between reading the files and
 * building the engine (the CLI validates settings and the prompt first): `openModelFiles` (cheap, no
 * engine) then `startEngine`.
 */
import * as path from "node:path";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { loadTokenizer, type LoadedTokenizer } from "../checkpoint/tokenizer.js";
import type { Checkpoint } from "../checkpoint/types.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import { defaultWeightCacheDir } from "../graph/build/weight-cache.js";
import { assertFiniteWeights } from "../graph/scan-weights.js";
import type { Family, ModelSpec } from "../graph/spec.js";
import { createEngine, type EngineOptions, type OnnxEngine } from "../runtime/engine.js";
import { CheckpointError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";
import { defaultPreset, paperPreset, type EvalPreset } from "./presets.js";

export interface ModelFilesOptions {
  /**
   * Scan the weights the spec reads for NaN/±Inf before anything runs (default true): a corrupt file
   * fails here with the tensor's name instead of as a NaN attention map later. Streams; costs one read
   * of the weights.
   */
  scanWeights?: boolean;
  /** `"optional"`: a checkpoint without tokenizer.json opens with `tokenizer` undefined (ids-only use). Default: required. */
  tokenizer?: "required" | "optional";
}

/** A model's files, read and validated: everything but the engine. */
export interface ModelFiles<Tok extends LoadedTokenizer | undefined = LoadedTokenizer> {
  /** Display name: the checkpoint folder's name. */
  name: string;
  checkpoint: Checkpoint;
  spec: ModelSpec;
  family: Family;
  tokenizer: Tok;
  /** The model's default prompt format, sampler settings and answer extraction (model/presets.ts). */
  preset: EvalPreset;
}

export interface OpenModelOptions extends Omit<EngineOptions, "probes">, ModelFilesOptions {
  /** Probes the engine computes: a request, or one made from the spec (e.g. layers chosen by depth). Default: none. */
  probes?: ProbeRequest | ((spec: ModelSpec) => ProbeRequest);
}

/** An opened model. `dispose()` frees the engine. */
export interface OpenModel<Tok extends LoadedTokenizer | undefined = LoadedTokenizer> extends ModelFiles<Tok> {
  engine: OnnxEngine;
  dispose(): Promise<void>;
}

/** Read a model's files (checkpoint, spec, tokenizer, preset) without building the engine. */
export function openModelFiles(modelPath: string, options?: ModelFilesOptions & { tokenizer?: "required" }): ModelFiles;
export function openModelFiles(
  modelPath: string,
  options: ModelFilesOptions & { tokenizer: "optional" },
): ModelFiles<LoadedTokenizer | undefined>;
export function openModelFiles(modelPath: string, options: ModelFilesOptions = {}): ModelFiles<LoadedTokenizer | undefined> {
  const checkpoint = openCheckpoint(modelPath);
  const spec = resolveModelSpec(checkpoint);
  // Scanned here, once, by tensor name (startEngine then tells the engine not to scan again).
  if (options.scanWeights !== false) assertFiniteWeights(checkpoint, spec, { verdictCache: defaultWeightCacheDir() });
  if (!checkpoint.tokenizer && options.tokenizer !== "optional") {
    throw new CheckpointError("This checkpoint has no tokenizer", {
      file: path.join(checkpoint.dir, "tokenizer.json"),
      expected: "tokenizer.json (and tokenizer_config.json with a chat template)",
      found: "no such file",
    });
  }
  const tokenizer = checkpoint.tokenizer
    ? loadTokenizer(checkpoint.tokenizer, { bosTokenId: spec.bosTokenId, eosTokenIds: spec.eosTokenIds })
    : undefined;
  return {
    name: path.basename(checkpoint.dir),
    checkpoint,
    spec,
    family: spec.family,
    tokenizer,
    preset: tokenizer ? defaultPreset(spec, tokenizer, checkpoint.dir) : paperPreset(spec),
  };
}

/** Build the engine for files opened with `openModelFiles`. */
export async function startEngine<Tok extends LoadedTokenizer | undefined>(
  files: ModelFiles<Tok>,
  options: Omit<OpenModelOptions, keyof ModelFilesOptions> = {},
): Promise<OpenModel<Tok>> {
  const { probes, ...engineOptions } = options;
  const request = typeof probes === "function" ? probes(files.spec) : (probes ?? {});
  // openModelFiles already scanned the weights (or the caller opted out): no second pass here.
  const engine = await createEngine(
    { spec: files.spec, tensors: files.checkpoint.tensors },
    { ...engineOptions, scanWeights: false, probes: request },
  );
  return { ...files, engine, dispose: () => engine.dispose() };
}

/**
 * Open a model: files, spec, tokenizer, default preset and an engine computing `options.probes`.
 * @example
 *   const m = await openModel("models/tiny-llada", { probes: { received: true } });
 *   try { const [r] = await generate(m.engine, ["…"], m.preset.sampler, { tokenizer: m.tokenizer }); } finally { await m.dispose(); }
 */
export async function openModel(modelPath: string, options?: OpenModelOptions & { tokenizer?: "required" }): Promise<OpenModel>;
export async function openModel(
  modelPath: string,
  options: OpenModelOptions & { tokenizer: "optional" },
): Promise<OpenModel<LoadedTokenizer | undefined>>;
export async function openModel(modelPath: string, options: OpenModelOptions = {}): Promise<OpenModel<LoadedTokenizer | undefined>> {
  const { scanWeights: scan, tokenizer, ...rest } = options;
  const files =
    tokenizer === "optional"
      ? openModelFiles(modelPath, { scanWeights: scan, tokenizer })
      : openModelFiles(modelPath, { scanWeights: scan });
  return startEngine(files, rest);
}
