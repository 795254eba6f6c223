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
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as readline from "node:readline";
import * as zlib from "node:zlib";
import { FloatscopeError } from "../util/errors.js";

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
}

export function recordId(row: number, question: string, answers: readonly string[]): string {
  const h = createHash("sha256").update(JSON.stringify([question, answers])).digest("hex").slice(0, 10);
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

/** Stream the records of a `.jsonl` / `.jsonl.gz` file, validating each. */
export async function* readQaJsonl(file: string, options: ReadQaOptions = {}): AsyncGenerator<QaRecord> {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    throw new DatasetError("QA data file not found", {
      file, expected: "a Lost-in-the-Middle-schema .jsonl or .jsonl.gz file",
      hint: "NQ-open oracle: nq-open-oracle.jsonl.gz from nelson-liu/lost-in-the-middle (qa_data/); pass its path or set FLOATSCOPE_NQ",
    });
  }
  if (!stat.isFile()) throw new DatasetError("QA data path is not a file", { file, expected: "a .jsonl or .jsonl.gz file" });
  const raw = fs.createReadStream(file);
  const input = isGzip(file) ? raw.pipe(zlib.createGunzip()) : raw;
  let gunzipError: Error | undefined;
  input.on("error", (e: Error) => { gunzipError = e; });
  const lines = readline.createInterface({ input, crlfDelay: Infinity });
  const skip = options.skip ?? 0;
  const limit = options.limit ?? Infinity;
  const every = options.progressEvery ?? 100;
  let lineNo = 0, row = 0, yielded = 0;
  const progress = () => options.onProgress?.({ records: row, bytesRead: raw.bytesRead, totalBytes: stat.size });
  try {
    for await (const text of lines) {
      lineNo++;
      if (text.trim() === "") continue;
      const rec = parseRecord(text, file, lineNo, row);
      row++;
      if (row % every === 0) progress();
      if (row <= skip) continue;
      if (yielded >= limit) break;
      yielded++;
      yield rec;
      if (yielded >= limit) break;
    }
  } catch (e) {
    if (e instanceof DatasetError) throw e;
    throw new DatasetError("QA data file cannot be read", { file, field: `line ${lineNo + 1}`, found: (e as Error).message.slice(0, 200) });
  } finally {
    lines.close();
    raw.destroy();
  }
  if (gunzipError) throw new DatasetError("QA data file is not valid gzip", { file, found: gunzipError.message.slice(0, 200) });
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
    throw new DatasetError("Line is not valid JSON", { file, field: `line ${line}`, expected: "one JSON object per line", found: (e as Error).message.slice(0, 120) });
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
  return { id: recordId(row, o.question, answers), row, line, question: o.question, answers, ctxs, extra };
}

function preview(v: unknown): string {
  const s = v === undefined ? "undefined (missing)" : JSON.stringify(v);
  return s.length > 80 ? s.slice(0, 77) + "…" : s;
}

/** Index of the gold passage: the first ctx with `isgold: true`; undefined when none is marked. */
export function goldPassageIndex(record: QaRecord): number | undefined {
  const i = record.ctxs.findIndex((c) => c.isgold === true);
  return i < 0 ? undefined : i;
}

/** The environment variable the CLI and scripts read for the NQ-open oracle file. */
export const NQ_ENV = "FLOATSCOPE_NQ";
