/**
 * Streaming trace writer. The header (meta record) goes to disk before the first step, each
 * step is written the moment it is recorded, then the final-sequence pass, then an `end` record.
 * A run interrupted at any point between records leaves a file that `readTrace` loads with
 * `partial: true`; each record goes out in one `writeSync`, so a torn record can only come from
 * the process dying inside that call (see `readTrace`'s `allowTruncated`).
 */
import * as fs from "node:fs";
import { TraceFormatError } from "../util/errors.js";
import { checkOutputFile } from "../util/paths.js";
import type { ProbeTensor } from "../util/probes.js";
import { encodePreamble, encodeRecord, type RawTensor, type TraceRecord } from "./codec.js";
import type { TraceMeta } from "./reader.js";
import { passInterventionJson } from "./intervention.js";
import { TRACE_FORMAT_VERSION, type CharSpan, type PassIntervention, type Trace, type TraceStep } from "./types.js";

/** Everything known before the first step (the `meta` record): the fields the reader validates, and who wrote it. */
export interface TraceHeader extends TraceMeta {
  createdBy: string;
}

/** Everything known after the last step (the `end` record). */
export interface TraceEnd {
  tokens: string[];
  offsets: CharSpan[];
  unmaskedAt: Int32Array;
  answer: string;
  completion: string;
  stepCount: number;
}

export const CREATED_BY = "floatscope trace writer";

function raw(t: Int32Array | Float32Array, shape: number[]): RawTensor {
  return { dtype: t instanceof Int32Array ? "I32" : "F32", shape, data: t };
}

function probeTensors(probes: Map<string, ProbeTensor>, into: Map<string, RawTensor>): Record<string, string[]> {
  const axes: Record<string, string[]> = {};
  for (const [name, p] of probes) {
    into.set(name, raw(p.data, p.dims));
    axes[name] = p.axes;
  }
  return axes;
}

export function metaRecord(h: TraceHeader): TraceRecord {
  return { kind: "meta", json: h as unknown as Record<string, unknown>, tensors: new Map() };
}

export function stepRecord(s: TraceStep, tokenStrings: string[] = []): TraceRecord {
  const tensors = new Map<string, RawTensor>([
    ["canvas", raw(s.canvas, [s.canvas.length])],
    ["transferred", raw(s.transferred, [s.transferred.length])],
    ["tokens", raw(s.tokens, [s.tokens.length])],
    ["confidence", raw(s.confidence, [s.confidence.length])],
    ["producing_row", raw(s.producingRow, [s.producingRow.length])],
  ]);
  const probes = probeTensors(s.probes, tensors);
  const json: Record<string, unknown> = { step: s.step, block: s.block, tokenStrings, probes };
  if (s.intervention) json.intervention = passInterventionJson(s.intervention);
  return { kind: "step", json, tensors };
}

export function finalRecord(sequence: Int32Array, probesIn: Map<string, ProbeTensor>, intervention?: PassIntervention): TraceRecord {
  const tensors = new Map<string, RawTensor>([["sequence", raw(sequence, [sequence.length])]]);
  const probes = probeTensors(probesIn, tensors);
  const json: Record<string, unknown> = { probes };
  if (intervention) json.intervention = passInterventionJson(intervention);
  return { kind: "final", json, tensors };
}

export function endRecord(e: TraceEnd): TraceRecord {
  return {
    kind: "end",
    json: { tokens: e.tokens, offsets: e.offsets, answer: e.answer, completion: e.completion, stepCount: e.stepCount },
    tensors: new Map([["unmasked_at", raw(e.unmaskedAt, [e.unmaskedAt.length])]]),
  };
}

export class TraceWriter {
  private fd: number | undefined;
  /** Bytes written so far (the file size). */
  bytesWritten = 0;
  readonly file: string;

  private constructor(file: string, fd: number) {
    this.file = file;
    this.fd = fd;
  }

  /** Create (truncate) `file` and write the preamble and the meta record. */
  static create(file: string, header: TraceHeader): TraceWriter {
    // Something already at the name must be a regular file: opening a FIFO for writing blocks until a
    // reader appears (a FIFO left at a per-question trace name would hang `eval --traces`), and a folder
    // or device is a sentence, not an EISDIR. Missing folders are made, as the writer always did.
    checkOutputFile(file, { what: "trace file", field: "trace", error: TraceFormatError, mkdir: true });
    const w = new TraceWriter(file, fs.openSync(file, "w"));
    w.put(Buffer.concat([encodePreamble(header.formatVersion), encodeRecord(metaRecord(header))]));
    return w;
  }

  writeStep(step: TraceStep, tokenStrings?: string[]): void {
    this.put(encodeRecord(stepRecord(step, tokenStrings)));
  }

  writeFinal(sequence: Int32Array, probes: Map<string, ProbeTensor>, intervention?: PassIntervention): void {
    this.put(encodeRecord(finalRecord(sequence, probes, intervention)));
  }

  /** Write the end record and close: the trace is complete. */
  finish(end: TraceEnd): void {
    this.put(encodeRecord(endRecord(end)));
    this.close();
  }

  /** Close without an end record (an interrupted run): the file reads back as partial. */
  close(): void {
    if (this.fd !== undefined) fs.closeSync(this.fd);
    this.fd = undefined;
  }

  get closed(): boolean {
    return this.fd === undefined;
  }

  private put(buf: Buffer): void {
    if (this.fd === undefined) throw new Error(`trace writer for ${this.file} is closed`);
    let done = 0;
    while (done < buf.length) done += fs.writeSync(this.fd, buf, done, buf.length - done);
    this.bytesWritten += buf.length;
  }
}

/** Header fields of an in-memory trace (for re-writing a loaded trace). */
export function headerOf(trace: Trace): TraceHeader {
  const L = trace.prompt.promptLength;
  return {
    formatVersion: TRACE_FORMAT_VERSION,
    model: trace.model,
    prompt: trace.prompt,
    promptTokens: trace.tokens.slice(0, L),
    promptOffsets: trace.offsets.slice(0, L),
    settings: trace.settings,
    probes: trace.probes,
    seed: trace.seed,
    stream: trace.stream,
    device: trace.device,
    createdBy: CREATED_BY,
  };
}

/** Serialise a whole in-memory trace to bytes (a partial trace gets no final/end records). */
export function encodeTrace(trace: Trace, header: TraceHeader = headerOf(trace)): Buffer {
  const parts = [encodePreamble(header.formatVersion), encodeRecord(metaRecord(header))];
  for (const s of trace.steps) parts.push(encodeRecord(stepRecord(s)));
  if (!trace.partial) {
    parts.push(encodeRecord(finalRecord(trace.final.sequence, trace.final.probes)));
    parts.push(
      encodeRecord(
        endRecord({
          tokens: trace.tokens,
          offsets: trace.offsets,
          unmaskedAt: trace.unmaskedAt,
          answer: trace.answer,
          completion: trace.completion,
          stepCount: trace.steps.length,
        }),
      ),
    );
  }
  return Buffer.concat(parts);
}

/** Write an in-memory trace to a file atomically (temp + rename). */
export function writeTrace(file: string, trace: Trace): void {
  checkOutputFile(file, { what: "trace file", field: "trace", error: TraceFormatError, mkdir: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, encodeTrace(trace));
  fs.renameSync(tmp, file);
}
