/**
 * `FamilyAdapter`: one model family described as data — how to recognise it, which config.json
 * keys hold its sizes, its tensor names, its flags, and what the rest of the pipeline reads about it
 * (default sampler, the paper's prompt format, the GGUF architecture). `resolveModelSpec`
 * (graph/adapters/resolve.ts) is the only code that reads the config; each family file is a table
 * (so no `if (family === "dream")` anywhere), and every family list or map in src/ is derived from
 * the registry in index.ts.
 *
 * This folder sits at the bottom of the layers (it imports only util/), so the trace format,
 * checkpoint readers and samplers can all derive from it.
 */

/** Tensor names of one transformer block, in the checkpoint's own naming. */
export interface BlockWeights {
  attnNorm: string;
  q: string;
  k: string;
  v: string;
  qBias?: string;
  kBias?: string;
  vBias?: string;
  o: string;
  mlpNorm: string;
  /** SiLU is applied to this branch (LLaDA: `ff_proj`). */
  gate: string;
  /** The linear branch (LLaDA: `up_proj`). */
  up: string;
  /** LLaDA: `ff_out` inside the block. */
  down: string;
}

/** The sampler kinds (samplers/): MDM remasking as LLaDA or as Dream does it, or autoregressive decoding. */
export type SamplerKind = "llada" | "dream" | "arm";

/** The paper's two paradigms: autoregressive (causal) vs masked diffusion. */
export type Paradigm = "ARM" | "MDM";

/** The paper's evaluation prompts (qa/prompts.ts): LLaDA's own, or the one the Dream / Llama / Qwen scripts share. */
export type PaperPromptFormat = "paper-llada" | "paper-chat";

/** Tensor layout of a GGUF file's Hugging Face counterpart (checkpoint/gguf/architecture.ts): the Llama modules or LLaDA's OLMo ones. */
export type GgufLayout = "hf" | "olmo";

/** Tensor name templates of the bias-free block parts; `{l}` is replaced by the block index. */
export type BlockNames = { [K in Exclude<keyof BlockWeights, "qBias" | "kBias" | "vBias">]: string };

export interface FamilyAdapter<F extends string = string> {
  /** The family word of specs and traces; equal to the adapter's key in the registry. */
  family: F;
  /** Other words users may write for it (e.g. `qwen` for `qwen2`), accepted at the edges only. */
  aliases?: readonly string[];
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
  /** The sampler `generate` runs by default, and the prompt of the paper's evaluation script. */
  paper: { sampler: SamplerKind; promptFormat: PaperPromptFormat };
  /** Folder name of the embedded tiny model (models/), the notebooks' default; else `tiny-<family>`. */
  tinyModel?: string;
  /**
   * llama.cpp's `general.architecture` for this family, the HF tensor layout its converter started
   * from, and whether it permuted the q/k rows for its "normal" RoPE (LLaMA-style families do).
   * Absent: GGUF files of this family are refused.
   */
  gguf?: { architecture: string; layout: GgufLayout; permuted: boolean };
}
