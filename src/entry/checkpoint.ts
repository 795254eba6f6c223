/**
 * `floatscope/checkpoint`: Checkpoint files: safetensors folders and GGUF files → a validated tensor index, config, tokenizer; weight scans and descriptions.
 * A subpath of the package (src/package.json `exports`); the main entry (src/index.ts) re-exports the
 * names most notebooks need.
 */
export { openCheckpoint, readTokenizerFiles } from "../checkpoint/checkpoint.js";
export { openGgufCheckpoint, type GgufCheckpoint } from "../checkpoint/gguf/open.js";
export { readGgufHeader, type GgufHeader, type GgufTensorEntry, type GgufEntry } from "../checkpoint/gguf/reader.js";
export { dequantize as dequantizeGgml } from "../checkpoint/gguf/dequant.js";
export {
  readJsonObject,
  requireInt,
  optionalInt,
  requireNumber,
  optionalNumber,
  requireString,
  optionalString,
  optionalBool,
  optionalObject,
  optionalIntList,
} from "../checkpoint/config.js";
export type { JsonObject, AccessorOptions } from "../checkpoint/config.js";
export {
  readSafetensorsHeader,
  readTensorBytes,
  readTensorF32,
  streamTensorBytes,
  writeSafetensors,
  encodeSafetensors,
  f16ToF32,
  DTYPE_BYTES,
} from "../checkpoint/safetensors.js";
export type { SafetensorsHeader, TensorToWrite } from "../checkpoint/safetensors.js";
export { loadTokenizer } from "../checkpoint/tokenizer.js";
export type { LoadedTokenizer, TokenizerEncoding, TokenizerSpecHints } from "../checkpoint/tokenizer.js";
export { charSpanToTokenSpan, tokenSpanToCharSpan } from "../checkpoint/spans.js";
export type { TokenSpan } from "../checkpoint/spans.js";
export { addsBosFromFiles, templatePrefixTokens } from "../checkpoint/special-tokens.js";
export type { Checkpoint, TensorInfo, TokenizerFiles, SafetensorsDType, GgmlEncoding } from "../checkpoint/types.js";
export { scanWeights, countNonFinite, assertFiniteWeights } from "../graph/scan-weights.js";
export type { ScanResult, ScanOptions, ScanProgress, NonFiniteTensor } from "../graph/scan-weights.js";
export { describeCheckpoint } from "../graph/describe.js";
export type { CheckpointDescription } from "../graph/describe.js";
