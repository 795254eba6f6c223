/**
 * The trace recorder: builds one `Trace` per prompt from the step loop's callbacks and streams it
 * to its `.fstrace` file as it goes (meta first, then each step, then the final pass and the end
 * record). If the run stops early, `close()` leaves a valid partial file.
 */
import type { ModelSpec } from "../graph/spec.js";
import type { TextTokenizer } from "../runtime/types.js";
import type { ProbeRequest, ProbeTensor } from "../util/probes.js";
import {
  TRACE_FORMAT_VERSION,
  type CharSpan,
  type PassIntervention,
  type Region,
  type Trace,
  type TraceIntervention,
  type TraceModelInfo,
  type TraceStep,
} from "../trace/types.js";
import { CREATED_BY, TraceWriter, type TraceHeader } from "../trace/writer.js";
import type { RunConfig } from "./config.js";

export interface RecorderInit {
  spec: ModelSpec;
  modelName: string;
  tokenizer: TextTokenizer;
  config: RunConfig;
  device: string;
  stream: number;
  prompt: { text: string; ids: number[]; tokens: string[]; offsets: CharSpan[]; regions: Region[] };
  /** Stream the trace to this file (optional). */
  file?: string;
  /** Keep every step in memory for the returned Trace (default true). */
  keepSteps: boolean;
  /** The run's intervention policy (meta record), if any. */
  intervention?: TraceIntervention;
}

export function modelInfo(spec: ModelSpec, name: string): TraceModelInfo {
  const m: TraceModelInfo = {
    name,
    family: spec.family,
    numLayers: spec.numLayers,
    numHeads: spec.numHeads,
    numKvHeads: spec.numKvHeads,
    headDim: spec.headDim,
    causal: spec.causal,
    logitShift: spec.logitShift,
    eosTokenIds: [...spec.eosTokenIds],
  };
  if (spec.maskTokenId !== undefined) m.maskTokenId = spec.maskTokenId;
  if (spec.bosTokenId !== undefined) m.bosTokenId = spec.bosTokenId;
  if (spec.padTokenId !== undefined) m.padTokenId = spec.padTokenId;
  return m;
}

export class TraceRecorder {
  readonly header: TraceHeader;
  private readonly writer?: TraceWriter;
  private readonly steps: TraceStep[] = [];
  private stepCount = 0;

  constructor(private readonly init: RecorderInit) {
    const { spec, tokenizer, config, prompt } = init;
    this.header = {
      formatVersion: TRACE_FORMAT_VERSION,
      model: modelInfo(spec, init.modelName),
      prompt: { text: prompt.text, ids: prompt.ids, promptLength: prompt.ids.length, regions: prompt.regions },
      promptTokens: prompt.tokens,
      promptOffsets: prompt.offsets,
      settings: { ...config } as unknown as Record<string, unknown>,
      probes: config.probes as ProbeRequest,
      seed: config.seed,
      stream: init.stream,
      device: init.device,
      createdBy: CREATED_BY,
    };
    const maskToken = spec.maskTokenId !== undefined ? tokenizer.idToToken(spec.maskTokenId) : undefined;
    if (maskToken !== undefined) this.header.maskToken = maskToken;
    if (init.intervention) this.header.intervention = init.intervention;
    if (init.file) this.writer = TraceWriter.create(init.file, this.header);
  }

  get file(): string | undefined {
    return this.init.file;
  }

  step(s: TraceStep): void {
    this.stepCount++;
    this.writer?.writeStep(
      s,
      Array.from(s.tokens, (id) => this.init.tokenizer.idToToken(id) ?? ""),
    );
    if (this.init.keepSteps) this.steps.push(s);
  }

  /** Complete the trace: final pass, decoded text, token strings and offsets; writes the end record. */
  finish(sequence: Int32Array, finalProbes: Map<string, ProbeTensor>, unmaskedAt: Int32Array, finalIntervention?: PassIntervention): Trace {
    const { tokenizer, prompt } = this.init;
    const L = prompt.ids.length;
    const generated = Array.from(sequence.subarray(L));
    const completion = decodeKnown(tokenizer, generated, false);
    const answer = decodeKnown(tokenizer, generated, true);
    const tokens = [...prompt.tokens, ...generated.map((id) => tokenizer.idToToken(id) ?? "")];
    const offsets: CharSpan[] = [...prompt.offsets, ...generatedOffsets(tokenizer, generated, prompt.text.length)];
    this.writer?.writeFinal(sequence, finalProbes, finalIntervention);
    this.writer?.finish({ tokens, offsets, unmaskedAt, answer, completion, stepCount: this.stepCount });
    const final: Trace["final"] = { sequence, probes: finalProbes };
    if (finalIntervention) final.intervention = finalIntervention;
    return {
      ...this.base(),
      final,
      unmaskedAt,
      tokens,
      offsets,
      answer,
      completion,
      partial: false,
    };
  }

  /** Stop early: the file keeps what was written (partial); the returned trace says so. */
  abandon(canvas: Int32Array, unmaskedAt: Int32Array): Trace {
    this.writer?.close();
    const { tokenizer, prompt } = this.init;
    const L = prompt.ids.length;
    const textEnd = prompt.text.length;
    const tokens = [...prompt.tokens, ...Array.from(canvas.subarray(L), (id) => tokenizer.idToToken(id) ?? "")];
    const offsets: CharSpan[] = [...prompt.offsets, ...Array.from(canvas.subarray(L), (): CharSpan => [textEnd, textEnd])];
    return {
      ...this.base(),
      final: { sequence: canvas, probes: new Map() },
      unmaskedAt,
      tokens,
      offsets,
      answer: "",
      completion: "",
      partial: true,
    };
  }

  /** Close the file without finishing (after an error). */
  close(): void {
    this.writer?.close();
  }

  private base() {
    const h = this.header;
    return {
      formatVersion: h.formatVersion,
      model: h.model,
      prompt: h.prompt,
      settings: h.settings,
      probes: h.probes,
      steps: this.steps,
      seed: h.seed,
      stream: h.stream,
      device: h.device,
      ...(h.intervention ? { intervention: h.intervention } : {}),
    };
  }
}

/**
 * Character spans of generated tokens in `prompt.text + completion`: token k covers the text its
 * decoding adds to the decoding of tokens 0..k−1 (byte-level BPE pieces that complete a character
 * later get an empty span).
 */
function generatedOffsets(tokenizer: TextTokenizer, ids: number[], start: number): CharSpan[] {
  const out: CharSpan[] = [];
  let prev = 0;
  for (let k = 0; k < ids.length; k++) {
    const len = decodeKnown(tokenizer, ids.slice(0, k + 1), false).length;
    const end = Math.max(prev, len);
    out.push([start + prev, start + end]);
    prev = end;
  }
  return out;
}

/**
 * Decode, leaving out ids the tokenizer does not know: models pad their vocabulary beyond the
 * tokenizer's (LLaDA, Qwen/Dream), and an untrained or unlucky model can sample those rows.
 */
function decodeKnown(tokenizer: TextTokenizer, ids: number[], skipSpecialTokens: boolean): string {
  return tokenizer.decode(
    ids.filter((id) => tokenizer.idToToken(id) !== undefined),
    { skipSpecialTokens },
  );
}
