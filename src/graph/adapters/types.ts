/**
 * `FamilyAdapter`: one model family described as data — how to recognise it, which config.json
 * keys hold its sizes, its tensor names, and its flags. `resolveModelSpec` (resolve.ts) is the only
 * code; each family file is a table (so no `if (family === "dream")` anywhere).
 */
import type { BlockWeights, Family } from "../spec.js";

/** Tensor name templates of the bias-free block parts; `{l}` is replaced by the block index. */
export type BlockNames = { [K in Exclude<keyof BlockWeights, "qBias" | "kBias" | "vBias">]: string };

export interface FamilyAdapter {
  family: Family;
  /** Values of `architectures[0]` in config.json that select this family. */
  architectures: readonly string[];
  /** Values of `model_type` (compared case-insensitively) used when `architectures` is absent. */
  modelTypes: readonly string[];
  /** config.json keys. Where a list is given, the first key present wins. */
  keys: {
    hiddenSize: string;
    numLayers: string;
    numHeads: string;
    /** Absent or null in the config means no GQA: numKvHeads = numHeads. */
    numKvHeads: string;
    /** Optional explicit head size (Llama `head_dim`); default hiddenSize / numHeads. */
    headDim?: string;
    intermediateSize: string;
    /** The logits width: LLaDA lists the padded `embedding_size` before `vocab_size`. */
    vocabSize: readonly string[];
    rmsNormEps: string;
    ropeTheta: string;
    /** Llama `rope_scaling`; families without one reject any scaling. */
    ropeScaling?: string;
    maxPositionEmbeddings: string;
    tieEmbeddings: string;
    /** Masked-diffusion families: the id of the mask token. */
    maskTokenId?: string;
    /** A config flag that switches q/k/v biases on (LLaDA `include_qkv_bias`); else `flags.qkvBias`. */
    qkvBias?: string;
  };
  defaults: {
    ropeTheta: number;
    rmsNormEps: number;
    tieEmbeddings: boolean;
    /** BOS behaviour when the checkpoint has no tokenizer files to decide from. */
    addsBos: boolean;
    /** Token string to look up when the config has no mask id (e.g. `<|mdm_mask|>`). */
    maskToken?: string;
  };
  /**
   * Config values this adapter can build. A key that is present with a value outside `allowed`
   * means the checkpoint has a variant we do not implement (e.g. LLaDA `block_type: "sequential"`).
   */
  requires: readonly { key: string; allowed: readonly (string | number | boolean | null)[]; why: string }[];
  names: {
    embed: string;
    finalNorm: string;
    /** Used unless the embeddings are tied. */
    lmHead: string;
    block: BlockNames;
    /** Bias names, used when the family (or its config flag) has q/k/v biases. */
    qkvBias: { q: string; k: string; v: string };
  };
  flags: {
    causal: boolean;
    qkvBias: boolean;
    logitShift: 0 | 1;
    /** Masked-diffusion model: a mask token id is required. */
    masked: boolean;
  };
}
