/**
 * `floatscope/model`: Model families (the registry every family list derives from), `ModelSpec`, and opening a model with its preset.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { resolveModelSpec, detectFamily, specTensorNames, ADAPTERS, LIMITS } from "../graph/adapters/index.js";
export type { FamilyAdapter, BlockNames } from "../graph/adapters/index.js";
export {
  FAMILIES,
  PARADIGM_OF_FAMILY,
  DEFAULT_SAMPLER,
  PAPER_FORMAT_OF_FAMILY,
  TINY_MODEL_NAMES,
  FAMILY_ALIASES,
  canonicalFamily,
  paradigmOf,
  isFamily,
} from "../families/index.js";
export type { ModelSpec, Family, BlockWeights, RopeSettings } from "../graph/spec.js";
export type { SamplerKind } from "../families/index.js";
export { PROMPT_FORMATS, ANSWER_EXTRACTIONS } from "../model/presets.js";
export type { PromptFormat, AnswerExtraction } from "../model/presets.js";
export { defaultPreset, tinyPreset, paperPreset, defaultPromptFormat, isTinyWorldTokenizer } from "../model/presets.js";
export type { EvalPreset } from "../model/presets.js";
export { openModel, openModelFiles, startEngine } from "../model/open.js";
export type { OpenModel, OpenModelOptions, ModelFiles, ModelFilesOptions } from "../model/open.js";
export type { Paradigm } from "../families/index.js";
