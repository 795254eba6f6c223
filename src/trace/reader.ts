/**
 * Validating trace reader. Checks, in order: the magic and format version (a newer version is
 * refused by number), every record's length and CRC-32, each safetensors header, the record order
 * (meta, step*, final?, end?), and every field's type, dtype and shape against the schema.
 *
 * Truncation policy: a file that ends exactly after a record but has no `end` record is an
 * interrupted run and loads with `partial: true`. A file whose last record is cut short (torn
 * write, truncated copy) throws `TraceFormatError` unless `allowTruncated: true`, which keeps the
 * complete records and marks the trace partial.
 */
import * as fs from "node:fs";
import { FAMILIES, isFamily } from "../families/index.js";
import { TraceFormatError } from "../util/errors.js";
import type { ProbeRequest, ProbeTensor } from "../util/probes.js";
import {
  bufferReader,
  decodeBlob,
  decodePreamble,
  fileReader,
  framedRecords,
  PREAMBLE_BYTES,
  type ReadAt,
  type RecordPlace,
  type TraceRecord,
} from "./codec.js";
import { readPassIntervention, readTraceIntervention } from "./intervention.js";
import { TruncatedTraceError } from "./partial.js";
import { Check, checkMetaSizes, checkProbeCoverage, readProbes } from "./schema.js";
import {
  TRACE_FORMAT_VERSION,
  type CharSpan,
  type Region,
  type Trace,
  type TraceModelInfo,
  type TraceIntervention,
  type TracePrompt,
  type TraceStep,
} from "./types.js";

export interface ReadTraceOptions {
  /** Load the complete records of a file whose last record is cut short (marked partial). */
  allowTruncated?: boolean;
}

const STEP_TENSORS = new Set(["canvas", "transferred", "tokens", "confidence", "producing_row"]);
const FINAL_TENSORS = new Set(["sequence"]);
const END_TENSORS = new Set(["unmasked_at"]);

/**
 * Read and validate a `.fstrace` file. Records are read one at a time (the file is never held in
 * memory whole), so a trace costs about its decoded arrays.
 */
export function readTrace(file: string, options: ReadTraceOptions = {}): Trace {
  return withFile(file, (read, size) => assemble(decodedRecords(read, size, file, options), file));
}

/** Decode trace bytes (see `readTrace`). `file` names the source in errors. */
export function decodeTrace(buf: Buffer, file = "trace", options: ReadTraceOptions = {}): Trace {
  return assemble(decodedRecords(bufferReader(buf), buf.length, file, options), file);
}

/** The validated meta record of a trace file (model, prompt, settings…), without reading the steps. */
export function readTraceHeader(file: string): TraceMeta {
  return withFile(file, (read, size) => {
    for (const { place, rec } of decodedRecords(read, size, file, { allowTruncated: true })) {
      if (rec.kind !== "meta") new Check(place).fail("kind", "meta (the first record)", rec.kind);
      return readMeta(new Check(place), rec.json);
    }
    throw noMeta(file);
  });
}

/**
 * The steps of a trace file, validated and yielded one at a time: analyses of long traces with full
 * maps can run in bounded memory. Stops at the final pass (records after it are not read); a cut
 * inside the steps is handled as in `readTrace`.
 */
export function* traceSteps(file: string, options: ReadTraceOptions = {}): Generator<TraceStep> {
  // Not `withFile`: the descriptor must stay open while the caller iterates.
  const fd = openTraceFile(file);
  try {
    let meta: TraceMeta | undefined;
    let index = 0;
    for (const { place, rec } of decodedRecords(fileReader(fd), fs.fstatSync(fd).size, file, options)) {
      const c = new Check(place);
      if (!meta) {
        if (rec.kind !== "meta") c.fail("kind", "meta (the first record)", rec.kind);
        meta = readMeta(c, rec.json);
        continue;
      }
      if (rec.kind !== "step") return;
      yield readStep(c, rec, meta, index++);
    }
    if (!meta) throw noMeta(file);
  } finally {
    fs.closeSync(fd);
  }
}

function openTraceFile(file: string): number {
  try {
    return fs.openSync(file, "r");
  } catch (e) {
    throw new TraceFormatError("Cannot read trace file", { file, found: (e as Error).message });
  }
}

function withFile<T>(file: string, f: (read: ReadAt, size: number) => T): T {
  const fd = openTraceFile(file);
  try {
    return f(fileReader(fd), fs.fstatSync(fd).size);
  } finally {
    fs.closeSync(fd);
  }
}

function noMeta(file: string): TraceFormatError {
  return new TraceFormatError("Trace file has no meta record", {
    file,
    field: "record 0",
    expected: "a meta record",
    found: "end of file",
  });
}

interface Decoded {
  place: RecordPlace;
  rec: TraceRecord;
}

/** A marker the record stream yields last when a cut-short tail was accepted (allowTruncated). */
const TRUNCATED = Symbol("truncated");

/** Preamble and version checks, then each record decoded lazily; a cut-short tail throws unless allowed. */
function* decodedRecords(read: ReadAt, size: number, file: string, options: ReadTraceOptions): Generator<Decoded> {
  decodePreamble(read(0, PREAMBLE_BYTES), file);
  const stream = framedRecords(read, size, file);
  let index = 0;
  for (const r of stream.records) {
    const place: RecordPlace = { file, index: index++, offset: r.offset, fileSize: size };
    yield { place, rec: decodeBlob(r.blob, place) };
  }
  const cut = stream.truncation();
  if (cut && !options.allowTruncated) {
    throw new TruncatedTraceError(
      "Trace file is truncated: its last record is cut short",
      {
        file,
        field: `record ${cut.complete} (byte ${cut.at})`,
        expected: "a complete length-prefixed record",
        found: `${cut.trailing} trailing bytes`,
        hint: `readTrace(file, { allowTruncated: true }) loads the ${cut.complete} complete records as a partial trace`,
      },
      cut.complete,
    );
  }
  if (cut) yield { place: { file, index, offset: cut.at }, rec: TRUNCATED as unknown as TraceRecord };
}

function assemble(records: Iterable<Decoded>, file: string): Trace {
  const it = records[Symbol.iterator]();
  const head = it.next();
  if (head.done || (head.value.rec as unknown) === TRUNCATED) throw noMeta(file);
  const first = head.value;
  if (first.rec.kind !== "meta") new Check(first.place).fail("kind", "meta (the first record)", first.rec.kind);
  const h = readMeta(new Check(first.place), first.rec.json);
  const steps: TraceStep[] = [];
  const stepStrings: string[][] = [];
  let final: Trace["final"] | undefined;
  let end: { json: Record<string, unknown>; unmaskedAt: Int32Array; place: RecordPlace } | undefined;
  let truncated = false;
  for (let r = it.next(); !r.done; r = it.next()) {
    const { place, rec } = r.value;
    if ((rec as unknown) === TRUNCATED) {
      truncated = true;
      break;
    }
    const c = new Check(place);
    if (end) c.fail("kind", "nothing after the end record", rec.kind);
    if (rec.kind === "meta") c.fail("kind", "step, final or end", "a second meta record");
    if (rec.kind === "end" && !final) c.fail("kind", "the final record before the end record", "end");
    if (rec.kind === "step") {
      if (final) c.fail("kind", "final or end after the final record", "step");
      const s = readStep(c, rec, h, steps.length);
      steps.push(s);
      stepStrings.push(c.strings(rec.json, "tokenStrings"));
    } else if (rec.kind === "final") {
      if (final) c.fail("kind", "one final record", "a second final record");
      const seq = c.tensor(rec.tensors, "sequence", "I32", [rec.tensors.get("sequence")?.shape[0] ?? 0]).data as Int32Array;
      // The final pass runs over what the last step left: its canvas plus its transfers (ARMs append one).
      const want = steps.length ? replay(steps[steps.length - 1]).length : undefined;
      if (want !== undefined && seq.length !== want) c.fail("sequence.shape", `${want} (the last step's canvas)`, `[${seq.length}]`);
      checkPromptPrefix(c, "sequence", seq, h.prompt.ids);
      const probes = readProbes(c, c.obj(rec.json, "probes"), rec.tensors, h.model, seq.length, FINAL_TENSORS);
      checkProbeCoverage(c, probes, h.model);
      final = { sequence: seq, probes };
      const intervention = readPassIntervention(c, rec.json, h.model.numLayers, h.model.numHeads, seq.length);
      if (intervention) final.intervention = intervention;
    } else {
      const T = final ? final.sequence.length : (rec.tensors.get("unmasked_at")?.shape[0] ?? 0);
      const unmaskedAt = c.tensor(rec.tensors, "unmasked_at", "I32", [T]).data as Int32Array;
      for (const n of rec.tensors.keys()) if (!END_TENSORS.has(n)) c.fail(n, "no tensor but unmasked_at", n);
      for (const [i, at] of unmaskedAt.entries()) {
        if (at < -1 || at >= steps.length) c.fail(`unmasked_at[${i}]`, `a step index in [-1, ${steps.length})`, String(at));
      }
      end = { json: rec.json, unmaskedAt, place };
    }
  }

  const base = {
    formatVersion: h.formatVersion,
    model: h.model,
    prompt: h.prompt,
    settings: h.settings,
    probes: h.probes,
    steps,
    seed: h.seed,
    stream: h.stream,
    device: h.device,
    ...(h.intervention ? { intervention: h.intervention } : {}),
  };
  if (end && final && !truncated) {
    const c = new Check(end.place);
    const T = final.sequence.length;
    const stepCount = c.int(end.json, "stepCount");
    if (stepCount !== steps.length) c.fail("stepCount", `${steps.length} (step records in the file)`, String(stepCount));
    return {
      ...base,
      final,
      unmaskedAt: end.unmaskedAt,
      partial: false,
      tokens: c.strings(end.json, "tokens", T),
      offsets: c.spans(end.json, "offsets", T),
      answer: c.str(end.json, "answer"),
      completion: c.str(end.json, "completion"),
    };
  }
  // Partial: rebuild what the steps say about the canvas.
  const L = h.prompt.promptLength;
  const canvas = steps.length ? replay(steps[steps.length - 1]) : Int32Array.from(h.prompt.ids);
  const unmaskedAt = new Int32Array(canvas.length).fill(-1);
  const tokens = [...h.promptTokens];
  for (let i = L; i < canvas.length; i++) tokens.push(h.maskToken ?? "");
  steps.forEach((s, k) =>
    s.transferred.forEach((pos, j) => {
      if (pos < canvas.length) {
        unmaskedAt[pos] = s.step;
        if (pos >= L) tokens[pos] = stepStrings[k][j] ?? "";
      }
    }),
  );
  const textEnd = h.prompt.text.length;
  const offsets: CharSpan[] = [...h.promptOffsets];
  for (let i = L; i < canvas.length; i++) offsets.push([textEnd, textEnd]);
  return {
    ...base,
    partial: true,
    unmaskedAt,
    tokens,
    offsets,
    answer: "",
    completion: "",
    final: final ?? { sequence: canvas, probes: new Map<string, ProbeTensor>() },
    source: { file, cut: truncated, final: final !== undefined },
  };
}

/** The canvas after a step's transfers (ARM steps append one position). */
function replay(s: TraceStep): Int32Array {
  let len = s.canvas.length;
  s.transferred.forEach((p) => {
    len = Math.max(len, p + 1);
  });
  const out = new Int32Array(len);
  out.set(s.canvas);
  s.transferred.forEach((p, j) => {
    out[p] = s.tokens[j];
  });
  return out;
}

/** The validated meta record: what the writer's `TraceHeader` holds, less `createdBy`. */
export interface TraceMeta {
  formatVersion: number;
  model: TraceModelInfo;
  prompt: TracePrompt;
  /** Token strings and char offsets of the prompt tokens, [promptLength]. */
  promptTokens: string[];
  promptOffsets: CharSpan[];
  /** The resolved RunConfig, verbatim. */
  settings: Record<string, unknown>;
  probes: ProbeRequest;
  seed: number;
  stream: number;
  device: string;
  /** Token string of the mask id, used to label still-masked positions of partial traces. */
  maskToken?: string;
  /** The attention-intervention policy of the run (absent without one). */
  intervention?: TraceIntervention;
}

function readMeta(c: Check, j: Record<string, unknown>): TraceMeta {
  const formatVersion = c.int(j, "formatVersion", 1);
  // The preamble's version was checked already (decodePreamble); the meta must agree with it.
  if (formatVersion !== TRACE_FORMAT_VERSION)
    c.fail("formatVersion", `${TRACE_FORMAT_VERSION} (the preamble's format version)`, String(formatVersion));
  const m = c.obj(j, "model");
  const model: TraceModelInfo = {
    name: c.str(m, "name"),
    family: c.str(m, "family") as TraceModelInfo["family"],
    numLayers: c.int(m, "numLayers", 1),
    numHeads: c.int(m, "numHeads", 1),
    numKvHeads: c.int(m, "numKvHeads", 1),
    headDim: c.int(m, "headDim", 1),
    causal: m.causal === true,
    logitShift: c.int(m, "logitShift") === 1 ? 1 : 0,
    eosTokenIds: c.ints(m, "eosTokenIds"),
  };
  if (typeof m.causal !== "boolean") c.fail("model.causal", "true or false", m.causal);
  if (model.numHeads % model.numKvHeads !== 0)
    c.fail("model.numKvHeads", `a count that divides numHeads ${model.numHeads}`, String(model.numKvHeads));
  if (!isFamily(model.family)) c.fail("model.family", FAMILIES.join(" | "), model.family);
  for (const k of ["maskTokenId", "bosTokenId", "padTokenId"] as const) if (m[k] !== undefined) model[k] = c.int(m, k);
  checkMetaSizes(c, model, j.settings);
  const p = c.obj(j, "prompt");
  const ids = c.ints(p, "ids");
  const promptLength = c.int(p, "promptLength", 1);
  if (promptLength !== ids.length) c.fail("prompt.promptLength", `${ids.length} (prompt.ids length)`, String(promptLength));
  if (!Array.isArray(p.regions)) c.fail("prompt.regions", "an array", p.regions);
  const regions = (p.regions as unknown[]).map((r, i) => {
    if (r === null || typeof r !== "object") c.fail(`prompt.regions[${i}]`, "{name, tokens, chars}", r);
    const o = r as Record<string, unknown>;
    const [tokens] = c.spans({ tokens: [o.tokens] }, "tokens", 1);
    const [chars] = c.spans({ chars: [o.chars] }, "chars", 1);
    return { name: c.str(o, "name"), tokens, chars } as Region;
  });
  // Token spans must lie inside the canvas the run was set up for (prompt + genLength, as generate
  // checks). Character spans are not checked against the text: hand-built traces label tokens freely.
  const text = c.str(p, "text");
  const genLength = typeof j.settings === "object" && j.settings !== null ? (j.settings as Record<string, unknown>).genLength : undefined;
  const maxT = Number.isSafeInteger(genLength) && (genLength as number) >= 0 ? promptLength + (genLength as number) : undefined;
  regions.forEach((r, i) => {
    if (maxT !== undefined && r.tokens[1] > maxT)
      c.fail(`prompt.regions[${i}].tokens`, `a span inside [0, ${maxT}] (prompt + genLength)`, JSON.stringify(r.tokens));
  });
  const meta: TraceMeta = {
    formatVersion,
    model,
    prompt: { text, ids, promptLength, regions },
    promptTokens: c.strings(j, "promptTokens", promptLength),
    promptOffsets: c.spans(j, "promptOffsets", promptLength),
    settings: c.obj(j, "settings"),
    probes: c.obj(j, "probes") as ProbeRequest,
    seed: c.int(j, "seed"),
    stream: c.int(j, "stream"),
    device: c.str(j, "device"),
  };
  if (j.maskToken !== undefined) meta.maskToken = c.str(j, "maskToken");
  const intervention = readTraceIntervention(c, j);
  if (intervention) meta.intervention = intervention;
  return meta;
}

function readStep(c: Check, rec: TraceRecord, meta: TraceMeta, expectedIndex: number): TraceStep {
  const { model, prompt } = meta;
  const promptLength = prompt.promptLength;
  const j = rec.json;
  const step = c.int(j, "step");
  if (step !== expectedIndex) c.fail("step", `${expectedIndex} (steps are numbered in order)`, String(step));
  const T = rec.tensors.get("canvas")?.shape[0] ?? 0;
  const canvas = c.tensor(rec.tensors, "canvas", "I32", [T]).data as Int32Array;
  if (T < promptLength) c.fail("canvas.shape", `≥ ${promptLength} (the prompt length)`, String(T));
  checkPromptPrefix(c, "canvas", canvas, prompt.ids);
  const n = rec.tensors.get("transferred")?.shape[0] ?? 0;
  const transferred = c.tensor(rec.tensors, "transferred", "I32", [n]).data as Int32Array;
  // Samplers only write generated positions (an ARM appends at T); the prompt is never rewritten.
  for (const pos of transferred)
    if (pos < promptLength || pos > T) c.fail("transferred", `positions in [${promptLength}, ${T}]`, String(pos));
  const producingRow = c.tensor(rec.tensors, "producing_row", "I32", [n]).data as Int32Array;
  for (const row of producingRow) if (row < 0 || row >= Math.max(T, 1)) c.fail("producing_row", `query rows in [0, ${T})`, String(row));
  const tokenStrings = c.strings(j, "tokenStrings");
  if (tokenStrings.length !== 0 && tokenStrings.length !== n) c.fail("tokenStrings", `0 or ${n} strings`, String(tokenStrings.length));
  const probes = readProbes(c, c.obj(j, "probes"), rec.tensors, model, T, STEP_TENSORS);
  checkProbeCoverage(c, probes, model, meta.probes as unknown as Record<string, unknown>);
  const out: TraceStep = {
    step,
    block: c.int(j, "block"),
    canvas,
    transferred,
    tokens: c.tensor(rec.tensors, "tokens", "I32", [n]).data as Int32Array,
    confidence: c.tensor(rec.tensors, "confidence", "F32", [n]).data as Float32Array,
    producingRow,
    probes,
  };
  const intervention = readPassIntervention(c, j, model.numLayers, model.numHeads, T);
  if (intervention) out.intervention = intervention;
  return out;
}

/** The first prompt.length tokens of a canvas or final sequence are the prompt's ids. */
function checkPromptPrefix(c: Check, field: string, seq: Int32Array, ids: readonly number[]): void {
  if (seq.length < ids.length) c.fail(`${field}.shape`, `≥ ${ids.length} (the prompt length)`, String(seq.length));
  for (let i = 0; i < ids.length; i++) if (seq[i] !== ids[i]) c.fail(`${field}[${i}]`, `${ids[i]} (prompt.ids[${i}])`, String(seq[i]));
}
