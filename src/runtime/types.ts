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

/** Character span [start, end) in the text a token came from; [0,0] for special tokens added by the template. */
export type CharSpan = [number, number];

export interface Encoding {
  ids: number[];
  tokens: string[];
  offsets: CharSpan[];
}

export interface ChatMessage {
  role: "system" | "user" | "assistant";
  content: string;
}

/** What samplers and prompt builders need from a tokenizer. */
export interface TextTokenizer {
  encode(text: string, options?: { addSpecialTokens?: boolean }): Encoding;
  decode(ids: number[], options?: { skipSpecialTokens?: boolean }): string;
  /** Render the checkpoint's own Jinja chat template. */
  applyChatTemplate(messages: ChatMessage[], options?: { addGenerationPrompt?: boolean }): string;
  /** Token string for one id (for labels). */
  idToToken(id: number): string | undefined;
  tokenToId(token: string): number | undefined;
}
