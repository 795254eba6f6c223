/**
 * `floatscope/engine`: The ONNX graph with attention probes, the engine that runs it, and the float64 reference forward pass.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export type { TextTokenizer, Encoding, CharSpan, ChatMessage } from "../runtime/types.js";
export { buildModelGraph, F32_MIN } from "../graph/model.js";
export type { BuildOptions, BuiltGraph } from "../graph/model.js";
export { probeOutputs, validateProbeRequest } from "../graph/probes.js";
export { PROBES, PROBE_AXES, DEFAULT_PROBES, REQUEST_KEYS, probeInfo, probeName, parseProbeName } from "../util/probes.js";
export type { ProbeRequest, ProbeInfo, ProbeKind, RequestKey, CostClass, Axis } from "../util/probes.js";
export type { ProbeOutput } from "../graph/probes.js";
export { ropeInvFreq, positionIdsFromMask } from "../graph/rope.js";
export { GraphBuilder } from "../graph/onnx/builder.js";
export { encodeModel } from "../graph/onnx/proto.js";
export { createEngine } from "../runtime/engine.js";
export type { EngineOptions, EngineSource, OnnxEngine } from "../runtime/engine.js";
export { estimateMemory, defaultMemoryBudget, formatBytes } from "../runtime/memory.js";
export type { MemoryEstimate, MemoryEstimateOptions } from "../runtime/memory.js";
export { cudaProviderInstalled, CUDA_INSTALL_HINT } from "../runtime/session.js";
export type { DeviceRequest } from "../runtime/session.js";
export type { Engine, ForwardInput, ForwardOutput, AttentionIntervention, KvDecoder } from "../runtime/types.js";
export { KV_CACHE_NAMES } from "../graph/build/kv-cache.js";
export { INTERVENTION_INPUTS } from "../graph/interventions.js";
export { referenceForward, probesFromAttention } from "../reference/forward.js";
export type { ReferenceInput, ReferenceOutput } from "../reference/forward.js";
