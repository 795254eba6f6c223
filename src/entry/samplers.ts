/**
 * `floatscope/samplers`: LLaDA / Dream / ARM samplers over one step loop, seeded, recording traces; interventions.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { generate, prepareRun, STRATEGIES } from "../samplers/generate.js";
export type { GenerateOptions, GenerateResult, PromptInput } from "../samplers/generate.js";
export { resolveRunConfig, SAMPLERS, ALGS, SAMPLER_DEFAULTS } from "../samplers/config.js";
export type { RunConfig } from "../samplers/config.js";
export { Rng } from "../util/rng.js";
export { lladaTransferCounts, dreamTimesteps, dreamTransferCount, dreamOriginProbability } from "../samplers/schedule.js";
export { runSteps, finalPass } from "../samplers/loop.js";
export type { Strategy, RowState, Transfer, LoopOptions, LoopResult, FinalPass } from "../samplers/loop.js";
export { TraceRecorder } from "../samplers/recorder.js";
export {
  parsePolicy,
  resolvePolicy,
  canonicalName,
  policyLabel,
  policyProbes,
  makeIntervener,
  batchIntervention,
  Intervener,
  POLICY_KINDS,
} from "../samplers/interventions.js";
export type { InterventionPolicy, CustomPolicy, PolicyInput, PolicyPass, PolicyKind, ResolvedPolicy } from "../samplers/interventions.js";
