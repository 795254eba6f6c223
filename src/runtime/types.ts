/**
 * The engine contract samplers are written against. Kept free of onnxruntime imports so that
 * samplers can be unit-tested with a fake engine that returns hand-made logits.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { ProbeRequest, ProbeTensor } from "../util/probes.js";

export interface ForwardInput {
  /** Token ids, row-major [batch, seq]. */
  ids: Int32Array;
  batch: number;
  seq: number;
  /**
   * 1 for real tokens, 0 for padding, [batch, seq]. Padding keys get no attention; position ids
   * count real tokens only (cumsum − 1), as HF does for left padding. Default: all ones.
   */
  attentionMask?: Uint8Array;
  /** Query-row weights for `received` probes, [batch, seq]. Default: the attention mask. */
  queryWeight?: Float32Array;
  /** One-hot region membership [batch, seq, regions] for the `regionSum` probe. */
  regionOneHot?: Float32Array;
  /**
   * Return logits only for these positions, [batch, rows] row-major (every batch row names the
   * same number of positions, in [0, seq); repeats are allowed, e.g. as filler). Position i means
   * "the distribution for token i", as in the full logits (the engine applies Dream's shift).
   * Ignored by engines without row selection (`Engine.logitRows` false): they return all rows and
   * leave `ForwardOutput.logitRows` unset, so callers must check it.
   */
  logitRows?: Int32Array;
  /** With `logitRows`: also return `summary` for the selected rows. */
  summaries?: boolean;
  /** With `logitRows` and `summaries`: false skips the logits themselves (`logits` is then empty). */
  returnLogits?: boolean;
  /**
   * Attention interventions for this forward (engines built with `interventions: true` only;
   * src/graph/interventions.ts has the rules). Omitted parts are neutral.
   */
  intervention?: AttentionIntervention;
}

/** What a policy changes in one forward's attention. Arrays are row-major; L layers, H query heads. */
export interface AttentionIntervention {
  /** [batch, L, H, seq]: 1 hides key k from every other query of that layer and head. */
  keyHidden?: Uint8Array;
  /** [batch, L, H, seq]: added to the scores of key k before the softmax (finite). */
  keyBias?: Float32Array;
  /** [batch, seq]: 1 makes query row q attend only to itself (a dedicated sink). */
  selfOnly?: Uint8Array;
}

/**
 * Per-row statistics over the vocabulary, each [batch, rows], for the selected rows. Computed in
 * float64 from the f32 logits l, with p = softmax(l):
 */
export interface LogitSummary {
  /** First index of the largest logit (torch.argmax's tie rule). */
  argmax: Int32Array;
  /** max p = 1 / Σ exp(l − max l). */
  maxProb: Float64Array;
  /** log Σ exp(l). */
  logSumExp: Float64Array;
  /** Σ p·log(p + 1e-10): Dream's `entropy` confidence (negative entropy; higher = more certain). */
  negEntropy: Float64Array;
  /** p(top1) − p(top2) (0 when the two largest logits tie): Dream's `topk_margin`. */
  margin: Float64Array;
}

export interface ForwardOutput {
  /**
   * [batch, seq, vocab], aligned so that row i is the model's distribution for token i.
   * For Dream (logitShift 1) the engine has already shifted: row i came from hidden state i−1,
   * and row 0 repeats the model's own row 0, as Dream's sampler does.
   */
  logits: Float32Array;
  vocabSize: number;
  /**
   * Set when the input's `logitRows` was honoured: `logits` is then [batch, rows, vocab] and holds
   * these positions ([batch, rows], a copy of the request); empty when `returnLogits` was false.
   */
  logitRows?: Int32Array;
  /** With `summaries`: per-row statistics of the selected rows. */
  summary?: LogitSummary;
  /** Requested probes by canonical name (see util/probes.ts). */
  probes: Map<string, ProbeTensor>;
}

/**
 * A key/value-cached decode (`Engine.decoder`): each `step` runs only its new tokens, after every
 * token earlier steps ran, whose keys and values the decoder holds. One decoder per sequence batch.
 */
export interface KvDecoder {
  /** Batch rows held (0 before the first step). */
  readonly batch: number;
  /** Key/value columns held per batch row: every column run so far, left padding included. */
  readonly length: number;
  /**
   * Run `ids` [batch, seq] after what is held. `attentionMask` marks the new tokens real (1) or
   * padding (0), positions continue from each row's real tokens so far, and `logitRows` name
   * positions among the new tokens. The output is as `Engine.forward`'s for those new rows (no
   * probes). Only ids, batch, seq, attentionMask, logitRows, summaries and returnLogits are read.
   */
  step(input: ForwardInput): Promise<ForwardOutput>;
  /** Keep only these batch rows (indices into the current batch, ascending): the others left it. */
  retain(rows: number[]): void;
}

export interface Engine {
  readonly spec: ModelSpec;
  readonly probes: ProbeRequest;
  /** "cpu" or "cuda": what the session actually runs on (after any fallback). */
  readonly device: string;
  /** True when `forward` honours `ForwardInput.logitRows` / `summaries` (optional; default false). */
  readonly logitRows?: boolean;
  /** True when `forward` honours `ForwardInput.intervention` (optional; default false). */
  readonly interventions?: boolean;
  forward(input: ForwardInput): Promise<ForwardOutput>;
  /**
   * A new key/value-cached decode (optional: engines built with a key/value cache, i.e. causal
   * models without probes or interventions). The samplers use it for autoregressive decoding.
   */
  decoder?(): KvDecoder;
  /**
   * Throw (BudgetError) when a forward of this size would be refused, without running anything
   * (optional). `generate` calls it before it opens any trace file.
   */
  preflight?(batch: number, seq: number, logitRows?: number): void;
  dispose(): Promise<void>;
}

// Tokenizer contract: defined beside the tokenizer (checkpoint layer), re-exported here for samplers.
export type { CharSpan, Encoding, ChatMessage, TextTokenizer } from "../checkpoint/tokenizer-types.js";
