/**
 * `ModelSpec`: everything the graph builder needs to know about one checkpoint, produced by a
 * family adapter from `config.json` + the tensor index. Family differences live here as data;
 * nothing downstream asks "is this Dream?" — it reads `causal`, `qkvBias`, `logitShift`.
 */

export type { BlockWeights, Family } from "../families/index.js";
export { FAMILIES } from "../families/index.js";

export interface RopeSettings {
  theta: number;
  /** Llama-3 style frequency scaling (`rope_scaling.rope_type == "llama3"`), else undefined. */
  llama3?: {
    factor: number;
    lowFreqFactor: number;
    highFreqFactor: number;
    originalMaxPositionEmbeddings: number;
  };
}

import type { BlockWeights, Family } from "../families/index.js";

export interface ModelSpec {
  family: Family;
  /** `architectures[0]` or `model_type` from config.json, for messages. */
  architecture: string;
  vocabSize: number;
  hiddenSize: number;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  intermediateSize: number;
  rmsNormEps: number;
  rope: RopeSettings;
  maxPositionEmbeddings: number;
  /** ARMs: true. LLaDA/Dream: false (bidirectional). */
  causal: boolean;
  qkvBias: boolean;
  /** 1 for Dream: the distribution for position i is read from output row i-1. */
  logitShift: 0 | 1;
  /** Mask token of a masked-diffusion model; undefined for ARMs. */
  maskTokenId?: number;
  bosTokenId?: number;
  eosTokenIds: number[];
  padTokenId?: number;
  /** Whether the tokenizer adds BOS when encoding plain text (LLaMA yes, Qwen/Dream no). */
  addsBos: boolean;
  weights: {
    embed: string;
    finalNorm: string;
    /** Same as `embed` when the embeddings are tied. */
    lmHead: string;
    blocks: BlockWeights[];
  };
}
