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
}

export interface ForwardOutput {
  /**
   * [batch, seq, vocab], aligned so that row i is the model's distribution for token i.
   * For Dream (logitShift 1) the engine has already shifted: row i came from hidden state i−1,
   * and row 0 repeats the model's own row 0, as Dream's sampler does.
   */
  logits: Float32Array;
  vocabSize: number;
  /** Requested probes by canonical name (see util/probes.ts). */
  probes: Map<string, ProbeTensor>;
}

export interface Engine {
  readonly spec: ModelSpec;
  readonly probes: ProbeRequest;
  /** "cpu" or "cuda": what the session actually runs on (after any fallback). */
  readonly device: string;
  forward(input: ForwardInput): Promise<ForwardOutput>;
  dispose(): Promise<void>;
}

// Tokenizer contract: defined beside the tokenizer (checkpoint layer), re-exported here for samplers.
export type { CharSpan, Encoding, ChatMessage, TextTokenizer } from "../checkpoint/tokenizer-types.js";
