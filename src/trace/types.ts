/**
 * The in-memory shape of a trace: one prompt, one sampler run, every denoising (or decoding)
 * step, plus one forward pass over the final sequence with the same probes (what the paper's
 * figures use). A batch of prompts yields one Trace per prompt.
 *
 * The on-disk format (writer/reader) lives beside this file; analyses only ever see this type.
 * Leaf module on the data side: imports only util/ and the family registry.
 */
import type { Family } from "../families/index.js";
import type { Axis, ProbeRequest, ProbeTensor } from "../util/probes.js";

export const TRACE_FORMAT_VERSION = 1;

export type CharSpan = [number, number];

export interface TraceModelInfo {
  /** Folder name or user label, e.g. "tiny-llada". */
  name: string;
  family: Family;
  numLayers: number;
  numHeads: number;
  numKvHeads: number;
  headDim: number;
  causal: boolean;
  /** 1 for Dream: token i was produced by query row i−1. */
  logitShift: 0 | 1;
  maskTokenId?: number;
  bosTokenId?: number;
  eosTokenIds: number[];
  padTokenId?: number;
}

/** A named token span of the prompt (from character offsets), e.g. "query", "doc 3", "gold". */
export interface Region {
  name: string;
  /** Token span [start, end). */
  tokens: [number, number];
  /** Character span in `prompt.text`. */
  chars: CharSpan;
}

export interface TracePrompt {
  /** The exact text fed to the tokenizer (after any chat template). */
  text: string;
  /** Prompt token ids (length = promptLength). */
  ids: number[];
  promptLength: number;
  regions: Region[];
}

/**
 * What an attention intervention did in one forward pass (sparse; src/graph/interventions.ts has
 * the rules). Positions are the prompt's own canvas positions, as everywhere in a trace.
 */
export interface PassIntervention {
  /** Hidden keys as [layer, head, key]; head −1 = every head of that layer. */
  hidden: [number, number, number][];
  /** Additive score biases as [layer, head, key, value]; head −1 = every head. */
  bias: [number, number, number, number][];
  /** Query rows that attended only to themselves (a dedicated sink). */
  selfOnly: number[];
  /** true when an un-intervened first pass ran at this step to choose them. */
  firstPass: boolean;
}

/** The policy a run was intervened with (meta record): its name and resolved parameters. */
export interface TraceIntervention {
  /** Canonical spelling, e.g. "anchors", "anchors:first-pass", "random:4", "first", "sink". */
  policy: string;
  /** Every parameter the policy ran with (rule, k, seed, layers, heads, sink token and position). */
  params: Record<string, unknown>;
}

/** Per-step record. All arrays cover the whole canvas (prompt + generation) unless said. */
export interface TraceStep {
  /** 0-based step index over the whole run (LLaDA: across blocks). */
  step: number;
  /** LLaDA block index (0 for Dream/ARM). */
  block: number;
  /** The canvas fed to the model at this step, [seq]. */
  canvas: Int32Array;
  /** Positions unmasked (ARM: appended) at this step. */
  transferred: Int32Array;
  /** Token written at each transferred position. */
  tokens: Int32Array;
  /** Sampler confidence of each transferred position (LLaDA: softmax prob; Dream: per `alg`). */
  confidence: Float32Array;
  /**
   * Query row whose output produced each transferred token: i for LLaDA, i−1 for Dream (logit
   * shift) and for ARMs (the token appended at position i is predicted by the last row, i−1).
   */
  producingRow: Int32Array;
  /** Probe tensors of this step's forward pass, batch axis removed. */
  probes: Map<string, ProbeTensor>;
  /** The attention intervention applied in this step's forward pass (intervened runs only). */
  intervention?: PassIntervention;
}

export interface Trace {
  formatVersion: number;
  model: TraceModelInfo;
  prompt: TracePrompt;
  /** Token strings and char offsets of the final sequence (prompt + generated), [seq]. */
  tokens: string[];
  offsets: CharSpan[];
  /** Every setting of the run, verbatim (sampler, steps, genLength, blockLength, alg, temperature, seed, …). */
  settings: Record<string, unknown>;
  probes: ProbeRequest;
  steps: TraceStep[];
  /**
   * Forward pass over the final sequence with the same probes. In a partial trace: the canvas
   * as the recorded steps left it, and no probes.
   */
  final: { sequence: Int32Array; probes: Map<string, ProbeTensor>; intervention?: PassIntervention };
  /** The intervention policy of the run; absent for a run without one. */
  intervention?: TraceIntervention;
  /** Step at which each position was unmasked (−1 for prompt positions), [seq]. */
  unmaskedAt: Int32Array;
  /** Decoded answer text (generated ids, special tokens skipped, as the paper's evaluation decodes). */
  answer: string;
  /**
   * The generated ids decoded with special tokens kept. Character offsets of generated tokens
   * index into `prompt.text + completion`. Empty in a partial trace (generated offsets are then
   * empty spans at the end of the prompt).
   */
  completion: string;
  /** Seed of the run and the RNG stream this prompt used (its row in the batch). */
  seed: number;
  stream: number;
  /** Where the engine ran ("cpu", "cuda"), for the record. */
  device: string;
  /** true when the run was interrupted and this trace holds only the steps written so far. */
  partial: boolean;
  /**
   * Only on a partial trace read from a file (`readTrace`): the file, and whether its last record was
   * cut short (loaded with `allowTruncated`). `describePartial` (partial.ts) turns it into words.
   */
  source?: { file: string; cut: boolean; final: boolean };
}

export type { Axis, ProbeTensor };
