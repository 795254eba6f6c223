/**
 * Streaming reader for question-answering data in the Lost-in-the-Middle schema (Liu et al. 2023,
 * nelson-liu/lost-in-the-middle, MIT):
 *
 *   {"question": str, "answers": [str, …], "ctxs": [{"title": str, "text": str, "hasanswer": bool, "isgold": bool}, …], …}
 *
 * one JSON object per line, plain or gzip (detected from the file's magic bytes, not its name). Used for
 * the NQ-open oracle file (one gold passage per question; the path comes from the user — the file is
 * never copied into the repository) and for the synthetic world's held-out set `models/world/eval-heldout.jsonl.gz`
 * (ctxs[0] is the gold passage, ctxs[1..9] distractors about other held-out people).
 *
 * Every record is validated as it is read; a bad one throws `DatasetError` naming the file, the
 * 1-based line number and the field. Fields other than the four are kept in `extra` (e.g. the
 * world's `subject`, `relation`, `gold_index`, `id`; NQ's `nq_annotated_gold`).
 *
 * Reading is bounded: lines are split from the (decompressed) byte stream by hand, so no line longer
 * than `maxLineBytes` (default 8 MiB; a Lost-in-the-Middle 30-passage record is ~30 KB) is ever
 * held, and the whole file stops at `maxBytes` decompressed (default 1 GiB) — a gzip bomb or a
 * single 50 MB line ends in a `DatasetError` with the line number, not in an aborted process.
 *
 * Records that parse but look wrong for QA scoring (no answers, a blank answer, several or no gold
 * passages, a passage without title or flags, an empty passage) are kept, flagged in `issues`, and
 * counted with their line numbers in a `QaDataReport` (`options.report`, `describeDataReport`).
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as zlib from "node:zlib";
import { FloatscopeError } from "../util/errors.js";
import type { LongFact } from "./metrics.js";

/** A QA data file has a malformed record (file, line and field are named). */
export class DatasetError extends FloatscopeError {}

export interface QaPassage {
  title: string;
  text: string;
  /** Whether the passage contains an answer string (as the data file says). */
  hasanswer?: boolean;
  /** Whether this is the gold (annotated) passage. */
  isgold?: boolean;
}

export interface QaRecord {
  /**
   * Deterministic id: `<row>-<hash>`, the 0-based row index among the file's records and the first 10
   * hex digits of SHA-256 over the question and answers. Stable across runs and machines (upstream used
   * Python's salted `hash()`, which changes between processes); a changed file changes the hash, so resuming
   * against a different file cannot silently reuse results.
   */
  id: string;
  /** 0-based row index among the file's records (blank lines are not records). */
  row: number;
  /** 1-based line number in the (decompressed) file. */
  line: number;
  question: string;
  answers: string[];
  ctxs: QaPassage[];
  /** Every other top-level field, untouched. */
  extra: Record<string, unknown>;
  /** What looks wrong with this record for QA scoring (empty when nothing does; always set by the reader). */
  issues?: SuspiciousKind[];
}

/** Ways a well-formed record can still be wrong for QA scoring. */
export const SUSPICIOUS_KINDS = [
  "no answers",
  "blank answer",
  "several gold passages",
  "no gold passage",
  "passage without title",
  "passage without hasanswer/isgold",
  "empty passage text",
] as const;
export type SuspiciousKind = (typeof SUSPICIOUS_KINDS)[number];

/** What a read saw: filled in as records stream by (pass one in `options.report`). */
export interface QaDataReport {
  file?: string;
  /** Records read (after validation; `skip`ped ones included). */
  records: number;
  /** Lines that were empty or whitespace. */
  blankLines: number;
  /** Decompressed bytes read. */
  bytes: number;
  /** Line numbers (1-based) per kind, only for kinds that occurred. */
  suspicious: Partial<Record<SuspiciousKind, number[]>>;
}

export function newDataReport(): QaDataReport {
  return { records: 0, blankLines: 0, bytes: 0, suspicious: {} };
}

/** Default per-line cap: far above any real QA record, far below what would exhaust memory. */
export const DEFAULT_MAX_LINE_BYTES = 8 * 2 ** 20;
/** Default cap on the decompressed size of a whole data file. */
export const DEFAULT_MAX_BYTES = 2 ** 30;

/** One line per finding, for a CLI or a notebook: "2 records with no answers (lines 3, 9)". */
export function describeDataReport(r: QaDataReport): string[] {
  const out: string[] = [];
  if (r.records === 0) out.push(`no records${r.blankLines ? ` (${r.blankLines} blank lines)` : ""}${r.file ? ` in ${r.file}` : ""}`);
  for (const kind of SUSPICIOUS_KINDS) {
    const lines = r.suspicious[kind];
    if (!lines?.length) continue;
    const shown = lines.slice(0, 10).join(", ") + (lines.length > 10 ? `, … (${lines.length - 10} more)` : "");
    out.push(`${lines.length} record${lines.length === 1 ? "" : "s"} with ${kind} (line${lines.length === 1 ? "" : "s"} ${shown})`);
  }
  return out;
}

export interface ReadProgress {
  records: number;
  /** Bytes of the file (compressed, for .gz) read so far, and in total. */
  bytesRead: number;
  totalBytes: number;
}

export interface ReadQaOptions {
  /** Stop after this many records (after `skip`). */
  limit?: number;
  /** Skip the first n records (they are still validated). */
  skip?: number;
  /** Called at most every `progressEvery` records and once at the end. */
  onProgress?: (p: ReadProgress) => void;
  progressEvery?: number;
  /** Longest line accepted, in bytes (default `DEFAULT_MAX_LINE_BYTES`, 8 MiB). */
  maxLineBytes?: number;
  /** Most decompressed bytes read from the file (default `DEFAULT_MAX_BYTES`, 1 GiB). */
  maxBytes?: number;
  /** Filled in while reading: counts, blank lines and suspicious records with their line numbers. */
  report?: QaDataReport;
}

export function recordId(row: number, question: string, answers: readonly string[]): string {
  const h = createHash("sha256")
    .update(JSON.stringify([question, answers]))
    .digest("hex")
    .slice(0, 10);
  return `${row}-${h}`;
}

function isGzip(file: string): boolean {
  const fd = fs.openSync(file, "r");
  try {
    const b = Buffer.alloc(2);
    return fs.readSync(fd, b, 0, 2, 0) === 2 && b[0] === 0x1f && b[1] === 0x8b;
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * Split a byte stream into lines without ever holding more than `maxLine` bytes of one line (and
 * stop at `maxTotal` bytes in all). Yields raw line bytes without the "\n" (and a trailing "\r").
 */
async function* boundedLines(
  input: AsyncIterable<Buffer>,
  maxLine: number,
  maxTotal: number,
  tooLong: (line: number, kind: "line" | "total", bytes: number) => never,
): AsyncGenerator<Buffer> {
  let pieces: Buffer[] = [];
  let pending = 0;
  let total = 0;
  let line = 1;
  for await (const chunk of input) {
    total += chunk.length;
    if (total > maxTotal) tooLong(line, "total", total);
    let start = 0;
    for (let nl = chunk.indexOf(0x0a, start); nl >= 0; nl = chunk.indexOf(0x0a, start)) {
      pending += nl - start;
      if (pending > maxLine) tooLong(line, "line", pending);
      pieces.push(chunk.subarray(start, nl));
      yield finishLine(pieces);
      pieces = [];
      pending = 0;
      line++;
      start = nl + 1;
    }
    pending += chunk.length - start;
    if (pending > maxLine) tooLong(line, "line", pending);
    if (start < chunk.length) pieces.push(chunk.subarray(start));
  }
  if (pending > 0) yield finishLine(pieces);
}

function finishLine(pieces: Buffer[]): Buffer {
  const b = pieces.length === 1 ? pieces[0] : Buffer.concat(pieces);
  return b.length > 0 && b[b.length - 1] === 0x0d ? b.subarray(0, b.length - 1) : b;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Stream the records of a `.jsonl` / `.jsonl.gz` file, validating each (bounded: see the module comment). */
export async function* readQaJsonl(file: string, options: ReadQaOptions = {}): AsyncGenerator<QaRecord> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new DatasetError("QA data file not found", {
      file,
      expected: "a Lost-in-the-Middle-schema .jsonl or .jsonl.gz file",
      hint: "NQ-open oracle: nq-open-oracle.jsonl.gz from nelson-liu/lost-in-the-middle (qa_data/); pass its path or set FLOATSCOPE_NQ",
    });
  }
  if (!stat.isFile())
    throw new DatasetError("QA data path is not a file", {
      file,
      expected: "a .jsonl or .jsonl.gz file",
      found: stat.isDirectory() ? "a directory" : "not a regular file",
    });
  const maxLine = options.maxLineBytes ?? DEFAULT_MAX_LINE_BYTES;
  const maxTotal = options.maxBytes ?? DEFAULT_MAX_BYTES;
  const report = options.report;
  if (report) report.file = file;
  const gz = isGzip(file);
  const raw = fs.createReadStream(file);
  const gunzip = gz ? zlib.createGunzip() : undefined;
  // Forward read errors into the stream being iterated (pipe() does not).
  if (gunzip) raw.on("error", (e) => gunzip.destroy(e));
  const input: AsyncIterable<Buffer> = gunzip ? raw.pipe(gunzip) : raw;
  const skip = options.skip ?? 0;
  const limit = options.limit ?? Infinity;
  const every = options.progressEvery ?? 100;
  let lineNo = 0,
    row = 0,
    yielded = 0;
  const progress = () => options.onProgress?.({ records: row, bytesRead: raw.bytesRead, totalBytes: stat.size });
  const tooLong = (line: number, kind: "line" | "total", bytes: number): never => {
    throw kind === "line"
      ? new DatasetError("Line is longer than the per-line limit", {
          file,
          field: `line ${line}`,
          expected: `at most ${maxLine} bytes per line`,
          found: `more than ${maxLine} bytes (${bytes} read so far)`,
          hint: "a QA record is a few KB; if this one is real, raise readQaJsonl's maxLineBytes",
        })
      : new DatasetError(`QA data file is larger than the limit${gz ? " once decompressed" : ""}`, {
          file,
          field: `line ${line}`,
          expected: `at most ${maxTotal} bytes ${gz ? "decompressed" : "in all"}`,
          found: `more than ${maxTotal} bytes`,
          hint: "a gzip that inflates this far is likely not QA data; if it is, raise readQaJsonl's maxBytes",
        });
  };
  try {
    for await (const bytes of boundedLines(input, maxLine, maxTotal, tooLong)) {
      lineNo++;
      if (report) report.bytes += bytes.length + 1;
      let text: string;
      try {
        text = utf8.decode(bytes);
      } catch {
        throw new DatasetError("Line is not valid UTF-8", {
          file,
          field: `line ${lineNo}`,
          expected: "UTF-8 text (JSON Lines)",
          found: "invalid byte sequence",
        });
      }
      if (text.trim() === "") {
        if (report) report.blankLines++;
        continue;
      }
      const rec = parseRecord(text, file, lineNo, row);
      row++;
      if (report) {
        report.records++;
        for (const k of rec.issues ?? []) (report.suspicious[k] ??= []).push(lineNo);
      }
      if (row % every === 0) progress();
      if (row <= skip) continue;
      if (yielded >= limit) break;
      yielded++;
      yield rec;
      if (yielded >= limit) break;
    }
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    const err = e as NodeJS.ErrnoException;
    if (gz && (err.code?.startsWith("Z_") || /incorrect header|unexpected end|invalid/i.test(err.message))) {
      throw new DatasetError("QA data file is not valid gzip", { file, field: `line ${lineNo + 1}`, found: err.message.slice(0, 200) });
    }
    throw new DatasetError("QA data file cannot be read", {
      file,
      field: `line ${lineNo + 1}`,
      found: (err.message ?? String(e)).slice(0, 200),
    });
  } finally {
    gunzip?.destroy();
    raw.destroy();
  }
  progress();
}

/** All records (or the first `limit`) in memory. The NQ oracle file is 2,655 records, ~3 MB of text. */
export async function loadQaJsonl(file: string, options: ReadQaOptions = {}): Promise<QaRecord[]> {
  const out: QaRecord[] = [];
  for await (const r of readQaJsonl(file, options)) out.push(r);
  return out;
}

const KNOWN = new Set(["question", "answers", "ctxs"]);

function parseRecord(text: string, file: string, line: number, row: number): QaRecord {
  const at = (field: string, expected: string, found: unknown) =>
    new DatasetError("Malformed QA record", { file, field: `line ${line}: ${field}`, expected, found: preview(found) });
  let obj: unknown;
  try {
    obj = JSON.parse(text);
  } catch (e) {
    throw new DatasetError("Line is not valid JSON", {
      file,
      field: `line ${line}`,
      expected: "one JSON object per line",
      found: (e as Error).message.slice(0, 120),
    });
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) throw at("(record)", "a JSON object", obj);
  const o = obj as Record<string, unknown>;
  if (typeof o.question !== "string" || o.question.trim() === "") throw at("question", "a non-empty string", o.question);
  if (!Array.isArray(o.answers) || o.answers.some((a) => typeof a !== "string")) throw at("answers", "a list of strings", o.answers);
  if (!Array.isArray(o.ctxs)) throw at("ctxs", "a list of {title, text, hasanswer, isgold}", o.ctxs);
  const ctxs: QaPassage[] = o.ctxs.map((c: unknown, i: number) => {
    if (c === null || typeof c !== "object" || Array.isArray(c)) throw at(`ctxs[${i}]`, "an object {title, text, hasanswer, isgold}", c);
    const p = c as Record<string, unknown>;
    if (typeof p.text !== "string") throw at(`ctxs[${i}].text`, "a string", p.text);
    if (p.title !== undefined && p.title !== null && typeof p.title !== "string") throw at(`ctxs[${i}].title`, "a string", p.title);
    for (const k of ["hasanswer", "isgold"] as const) {
      if (p[k] !== undefined && p[k] !== null && typeof p[k] !== "boolean") throw at(`ctxs[${i}].${k}`, "true or false", p[k]);
    }
    const out: QaPassage = { title: typeof p.title === "string" ? p.title : "", text: p.text };
    if (typeof p.hasanswer === "boolean") out.hasanswer = p.hasanswer;
    if (typeof p.isgold === "boolean") out.isgold = p.isgold;
    return out;
  });
  const extra: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(o)) if (!KNOWN.has(k)) extra[k] = v;
  const answers = o.answers as string[];
  return {
    id: recordId(row, o.question, answers),
    row,
    line,
    question: o.question,
    answers,
    ctxs,
    extra,
    issues: issuesOf(answers, o.ctxs as Record<string, unknown>[], o.kind === "long"),
  };
}

/**
 * What is suspicious about a well-formed record (`raw` are its ctxs as written, to see missing fields).
 * `long`: a long-answer record of the synthetic world (`"kind": "long"`, models/world/eval-heldout-long.jsonl.gz),
 * whose facts are spread over 1–3 gold passages by design, so several golds are not flagged there.
 */
function issuesOf(answers: string[], raw: Record<string, unknown>[], long = false): SuspiciousKind[] {
  const out: SuspiciousKind[] = [];
  if (answers.length === 0) out.push("no answers");
  // A blank answer normalises to "" — a substring of every response: accuracy 100 for anything.
  else if (answers.some((a) => a.trim() === "")) out.push("blank answer");
  const golds = raw.filter((c) => c.isgold === true).length;
  if (golds > 1 && !long) out.push("several gold passages");
  if (golds === 0) out.push("no gold passage");
  if (raw.some((c) => c.title === undefined || c.title === null)) out.push("passage without title");
  if (raw.some((c) => typeof c.hasanswer !== "boolean" || typeof c.isgold !== "boolean")) out.push("passage without hasanswer/isgold");
  if (raw.some((c) => typeof c.text === "string" && c.text.trim() === "")) out.push("empty passage text");
  return out;
}

function preview(v: unknown): string {
  let s: string;
  try {
    s = v === undefined ? "undefined (missing)" : JSON.stringify(v);
  } catch {
    s = Array.isArray(v) ? "a deeply nested array" : typeof v; // stringify can overflow the stack
  }
  return s.length > 80 ? s.slice(0, 77) + "…" : s;
}

/** Index of the gold passage: the first ctx with `isgold: true`; undefined when none is marked. */
export function goldPassageIndex(record: QaRecord): number | undefined {
  const i = record.ctxs.findIndex((c) => c.isgold === true);
  return i < 0 ? undefined : i;
}

/**
 * The gold facts of a long-answer record (`facts`: [{object, templates, …}], models/world/eval-heldout-long.jsonl.gz),
 * what `factScores` scores a long answer against. A record without them is a `DatasetError` naming the line.
 */
export function longFacts(record: QaRecord, file = "dataset"): LongFact[] {
  const facts = record.extra.facts;
  const bad = (field: string, found: unknown) =>
    new DatasetError("Long-answer record has malformed facts", {
      file,
      field: `line ${record.line}: ${field}`,
      expected: 'a non-empty list of {"object": string, "templates": [string, …]} (a long-answer file, kind "long")',
      found: preview(found),
    });
  if (!Array.isArray(facts) || facts.length === 0) throw bad("facts", facts);
  return facts.map((f: unknown, i) => {
    const o = f as Record<string, unknown> | null;
    if (o === null || typeof o !== "object" || typeof o.object !== "string") throw bad(`facts[${i}].object`, o?.object);
    const t = o.templates;
    if (!Array.isArray(t) || t.length === 0 || t.some((x) => typeof x !== "string")) throw bad(`facts[${i}].templates`, t);
    return { object: o.object, templates: t as string[] };
  });
}

/** The environment variable the CLI and scripts read for the NQ-open oracle file. */
export const NQ_ENV = "FLOATSCOPE_NQ";
