/**
 * `runEval`: one model, one dataset, one setting → a score per question, appended to a results
 * jsonl as it goes (resumable), plus a summary table.
 *
 * Per question: build the context (contexts.ts), the prompt (prompts.ts), generate with the chosen
 * sampler (samplers/generate.ts; questions are batched into shared forward passes, `batchSize`),
 * extract the answer (metrics.ts `AnswerExtraction`), score it against every gold answer.
 *
 * Failures are per question, never swallowed: the row carries `error`, the summary counts errors, and
 * means are over the questions that ran (upstream swallowed exceptions and counted files).
 * Resuming skips (setting, id) pairs that already have a successful row in the results file; failed
 * ones run again.
 *
 * Long answers (`scoring: "facts"`, the synthetic world's long-answer file): each row is also scored by
 * fact recall / precision against the record's `facts` (metrics.ts `factScores`).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as aq from "arquero";
import type { Rows } from "../analysis/tables.js";
import type { Engine, TextTokenizer } from "../runtime/types.js";
import type { Trace } from "../trace/types.js";
import { generate, unknownWordsText, type GenerateResult, type PromptInput } from "../samplers/generate.js";
import { resolveRunConfig, type RunConfig } from "../samplers/config.js";
import { policyLabel, type PolicyInput } from "../samplers/interventions.js";
import { FloatscopeError, SettingsError } from "../util/errors.js";
import { buildContext, settingLabel, validateSetting, type DistractorPool, type EvalSetting } from "./contexts.js";
import { longFacts, type QaRecord } from "./datasets.js";
import type { AnswerExtraction, PromptFormat } from "../model/presets.js";
import { extractAnswer, factScores, scoreAnswer, type LongFact } from "./metrics.js";
import { buildQaPrompt, promptRegionsToTokens, type QaPrompt } from "./prompts.js";

export interface EvalResult {
  id: string;
  row: number;
  /** `settingLabel(setting)`. */
  setting: string;
  /** The attention-intervention policy (`policyLabel`; "none" for a plain run; absent in older files = "none"). */
  intervention?: string;
  model: string;
  question: string;
  answers: string[];
  /** Number of passages in the prompt and the gold one's index (null: closed-book). */
  passages: number;
  goldIndex: number | null;
  promptTokens?: number;
  /** The decoded response (special tokens skipped), and the scored text after extraction. */
  response?: string;
  prediction?: string;
  accuracy?: number;
  f1?: number;
  exactMatch?: number;
  /** Long answers (`scoring: "facts"`): fact recall, precision, their F1, 1 when both are 1, and the claims counted. */
  recall?: number;
  precision?: number;
  factF1?: number;
  complete?: number;
  claims?: number;
  /** Wall time of the batch this question ran in, divided by the batch size. */
  ms?: number;
  batchSize?: number;
  /** `.fstrace` file, when traces are saved. */
  trace?: string;
  /** What `EvalOptions.measure` computed from this question's trace. */
  measures?: Record<string, unknown>;
  /** Set when this question failed: the error's name and message. */
  error?: string;
}

export interface EvalProgress {
  done: number;
  total: number;
  errors: number;
  /** Skipped because the results file already had them. */
  resumed: number;
}

export interface EvalOptions {
  engine: Engine;
  tokenizer: TextTokenizer;
  records: readonly QaRecord[];
  setting: EvalSetting;
  promptFormat: PromptFormat;
  /** Sampler settings (samplers/config.ts); defaults are the family's paper settings. */
  sampler?: Partial<RunConfig>;
  /** Needed for pool distractors: built from the WHOLE data file. */
  pool?: DistractorPool;
  /** Label written into rows (default: the engine's architecture). */
  modelName?: string;
  /** For error messages (the data file's path). */
  dataFile?: string;
  chatTemplate?: boolean;
  reproduceDoubleBos?: boolean;
  /** Questions per batched `generate` call (default 1, as upstream). */
  batchSize?: number;
  /**
   * The `setting` written into rows and used for resuming (default `settingLabel(setting)`). Name there what
   * else defines the run when the same setting is run several ways in one results file (e.g. "oracle@32",
   * a canvas of 32 slots), so their rows neither mix nor resume each other.
   */
  label?: string;
  /**
   * "answers" (default): accuracy / F1 / EM against `answers`; "facts": also fact recall / precision against
   * the record's `facts` (long answers; a record without them fails with a DatasetError in its row).
   */
  scoring?: "answers" | "facts";
  /** Default "none": the whole response is scored, as in the paper. */
  extraction?: AnswerExtraction;
  /** Append rows here (jsonl) and skip (setting, id) pairs already done there. */
  resultsFile?: string;
  /** Save one `.fstrace` per question under this folder (`<dir>/<setting>/<id>.fstrace`). */
  traceDir?: string;
  onProgress?: (p: EvalProgress) => void;
  /**
   * Warnings about the run: a torn last line dropped from the results file (at the start), and how
   * many prompts had pieces outside the model's vocabulary, with the first such prompt's words (at
   * the end). Default `console.warn`.
   */
  warn?: (message: string) => void;
  signal?: AbortSignal;
  /**
   * An attention-intervention policy for every question (src/samplers/interventions.ts); the engine
   * must be built with `interventions: true` (and `received` for anchors/random). Rows carry its name.
   */
  intervention?: PolicyInput;
  /**
   * Per-question numbers from each question's trace (e.g. a grid's attention measures): the trace keeps
   * every step in memory until this has read it, and rows carry what it returns as `measures`. The
   * engine must compute the probes it reads (or `finalPassEngine`, for a measure of the final pass only).
   */
  measure?: (trace: Trace, record: QaRecord) => Record<string, unknown>;
  /** The engine of the final pass, when `engine` runs the steps probe-free (`GenerateOptions.finalPassEngine`). */
  finalPassEngine?: Engine;
}

export interface EvalRun {
  /** Rows of this call (resumed rows are not repeated here; read the results file for all). */
  results: EvalResult[];
  progress: EvalProgress;
}

/** A results (`--out`) file is not one this runner wrote: refused before anything is appended to it. */
export class ResultsFileError extends FloatscopeError {}

interface ResultsScan {
  rows: EvalResult[];
  /** Byte offset where a torn last line (an interrupted write) begins; undefined when there is none. */
  tornAt?: number;
  /** The file ends in a complete row without its newline (append a "\n" before the next row). */
  needsNewline: boolean;
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true });

/**
 * Read and validate a results file: every line must be a JSON result row ({id, setting, model: strings,
 * …}). The one exception is a last line with no newline that starts like a row ("{") and does not parse:
 * the tail of an interrupted write, reported as `tornAt`. Anything else is a `ResultsFileError` naming the
 * line: a corrupt file is never skipped over and appended to.
 */
function scanResults(file: string): ResultsScan {
  let stat: fs.Stats;
  try {
    stat = fs.statSync(file);
  } catch {
    return { rows: [], needsNewline: false }; // not written yet
  }
  if (!stat.isFile())
    throw new ResultsFileError("Results path is not a regular file", {
      file,
      expected: "a .jsonl results file (or a path that does not exist yet)",
      found: stat.isDirectory() ? "a directory" : "not a regular file",
    });
  const bytes = fs.readFileSync(file);
  let text: string;
  try {
    text = strictUtf8.decode(bytes);
  } catch {
    throw new ResultsFileError("Results file is not UTF-8 text", {
      file,
      expected: "one JSON result per line",
      found: "binary data",
      hint: "pass a new --out path; this file was not written by floatscope eval",
    });
  }
  const lines = text.split("\n");
  const rows: EvalResult[] = [];
  let offset = 0;
  let tornAt: number | undefined;
  let needsNewline = false;
  lines.forEach((line, i) => {
    const last = i === lines.length - 1;
    const start = offset;
    offset += Buffer.byteLength(line) + 1;
    if (!line.trim()) return;
    // Both line errors name the line and quote its start the same way.
    const badLine = (message: string, expected: string, hint: string) =>
      new ResultsFileError(message, { file, field: `line ${i + 1}`, expected, found: line.slice(0, 60), hint });
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      if (last && line.startsWith("{")) {
        tornAt = start;
        return;
      }
      throw badLine("Results file has a malformed line", "one JSON result per line", "pass a new --out path, or fix or remove that line");
    }
    const r = v as Record<string, unknown>;
    if (
      r === null ||
      typeof r !== "object" ||
      Array.isArray(r) ||
      typeof r.id !== "string" ||
      typeof r.setting !== "string" ||
      typeof r.model !== "string" ||
      (r.error !== undefined && typeof r.error !== "string")
    ) {
      throw badLine(
        "Results file has a line that is not a result row",
        "{id, setting, model: strings, …} as floatscope eval writes",
        "pass a new --out path",
      );
    }
    rows.push(r as unknown as EvalResult);
    if (last) needsNewline = true;
  });
  return { rows, tornAt, needsNewline };
}

/**
 * Successful (setting, intervention, id) keys of a results file (only rows of `model` when given). A torn last line
 * (an interrupted write) is ignored; any other malformed line throws `ResultsFileError`.
 */
export function readDoneKeys(file: string, model?: string): Set<string> {
  const done = new Set<string>();
  for (const r of scanResults(file).rows) {
    if (model !== undefined && r.model !== model) continue;
    const key = resumeKey(r.setting, r.intervention, r.id);
    if (r.error === undefined) done.add(key);
    else done.delete(key);
  }
  return done;
}

/** The resume key of a row: "setting|id", or "setting@policy|id" for an intervened run (older files have no policy). */
function resumeKey(setting: string, intervention: string | undefined, id: string): string {
  return intervention === undefined || intervention === "none" ? `${setting}|${id}` : `${setting}@${intervention}|${id}`;
}

/** Read every row of a results jsonl (last row wins per (model, setting, id)); [] when the file does not exist. */
export function readResults(file: string): EvalResult[] {
  const byKey = new Map<string, EvalResult>();
  for (const r of scanResults(file).rows) byKey.set(`${r.model}|${r.setting}|${r.intervention ?? "none"}|${r.id}`, r);
  return [...byKey.values()];
}

/** Make a results file safe to append to: drop a torn last line, end a complete one with its newline. */
function prepareForAppend(file: string, warn?: (message: string) => void): void {
  const scan = scanResults(file);
  if (scan.tornAt !== undefined) {
    const dropped = fs.statSync(file).size - scan.tornAt;
    fs.truncateSync(file, scan.tornAt);
    warn?.(`${file}: dropped its last line (${dropped} bytes, an interrupted write); that question runs again`);
  } else if (scan.needsNewline) {
    fs.appendFileSync(file, "\n");
  }
}

/**
 * The fewest tokens `text` can encode to: no token covers more input bytes than its own string's UTF-8
 * length, up to normalisation (NFKC can shrink a full-width character's 3 bytes to 1, hence × 3). Lets a
 * megabyte passage be refused before any tokenizer sees it.
 */
function minTokens(text: string, maxTokenBytes: number): number {
  return Math.ceil(Buffer.byteLength(text) / (3 * maxTokenBytes));
}

const longestToken = new WeakMap<object, number>();

/** UTF-8 length of the tokenizer's longest token string (over the model's vocabulary), cached per tokenizer. */
function maxTokenBytes(tokenizer: TextTokenizer, vocabSize: number): number {
  const known = longestToken.get(tokenizer);
  if (known !== undefined) return known;
  let max = 1;
  for (let id = 0; id < vocabSize; id++) {
    const t = tokenizer.idToToken(id);
    if (t !== undefined) max = Math.max(max, Buffer.byteLength(t));
  }
  longestToken.set(tokenizer, max);
  return max;
}

interface Prepared {
  record: QaRecord;
  prompt?: QaPrompt;
  /** `scoring: "facts"`: the record's gold facts (read before generating, so a bad record costs no decoding). */
  facts?: LongFact[];
  base: EvalResult;
}

export async function runEval(o: EvalOptions): Promise<EvalRun> {
  const setting = validateSetting(o.setting);
  const label = o.label ?? settingLabel(setting);
  const model = o.modelName ?? o.engine.spec.architecture;
  const batchSize = o.batchSize ?? 1;
  if (!Number.isInteger(batchSize) || batchSize < 1)
    throw new SettingsError("Bad batch size", { field: "batchSize", expected: "an integer ≥ 1", found: String(batchSize) });
  const extraction = o.extraction ?? "none";
  const intervention = policyLabel(o.intervention);
  // Validated before anything runs: a corrupt file is refused, a torn last line dropped before appending.
  const done = o.resultsFile ? readDoneKeys(o.resultsFile, model) : new Set<string>();
  const todo = o.records.filter((r) => !done.has(resumeKey(label, intervention, r.id)));
  const progress: EvalProgress = { done: 0, total: todo.length, errors: 0, resumed: o.records.length - todo.length };
  const results: EvalResult[] = [];
  if (o.resultsFile) {
    fs.mkdirSync(path.dirname(path.resolve(o.resultsFile)), { recursive: true });
    prepareForAppend(o.resultsFile, o.warn ?? ((m: string) => console.warn(m)));
  }
  const genLength = (() => {
    try {
      return resolveRunConfig(o.sampler ?? {}, o.engine.spec).genLength;
    } catch {
      return 0; // bad settings: every question fails with the sampler's own message (runGroup)
    }
  })();
  const emit = (r: EvalResult) => {
    results.push(r);
    if (r.error !== undefined) progress.errors++;
    progress.done++;
    if (o.resultsFile) fs.appendFileSync(o.resultsFile, JSON.stringify(r) + "\n");
  };
  o.onProgress?.({ ...progress });
  const unknown: { id: string; pieces: string[] }[] = [];

  for (let start = 0; start < todo.length; start += batchSize) {
    if (o.signal?.aborted) break;
    const batch = todo.slice(start, start + batchSize).map((record) => prepare(record, o, label, model, genLength, intervention));
    for (const p of batch) if (!p.prompt) emit(p.base);
    const ready = batch.filter((p) => p.prompt);
    // One sampler config per generate call: group by how the text must be encoded.
    for (const flag of [true, false]) {
      const group = ready.filter((p) => p.prompt!.addSpecialTokens === flag);
      if (group.length) for (const r of await runGroup(group, flag, o, label, extraction, unknown)) emit(r);
    }
    o.onProgress?.({ ...progress });
  }
  if (unknown.length > 0) {
    // The count and one example (by question id) are what a reader needs; one line per question would flood a notebook.
    (o.warn ?? ((m: string) => console.warn(m)))(
      `${model}, ${label}: ${unknown.length} of ${todo.length} prompts had text outside the model's vocabulary (it became the unknown token); first, question ${unknown[0].id}: ${unknownWordsText(unknown[0].pieces)}`,
    );
  }
  return { results, progress };
}

function prepare(record: QaRecord, o: EvalOptions, label: string, model: string, genLength: number, intervention: string): Prepared {
  const base: EvalResult = {
    id: record.id,
    row: record.row,
    setting: label,
    intervention,
    model,
    question: record.question,
    answers: record.answers,
    passages: 0,
    goldIndex: null,
  };
  try {
    const ctx = buildContext(record, o.setting, { file: o.dataFile, pool: o.pool });
    base.passages = ctx.passages.length;
    base.goldIndex = ctx.goldIndex;
    // Before any tokenization (the prompt builder encodes the whole text): a lower bound on the tokens.
    const { spec } = o.engine;
    const least = minTokens(record.question + ctx.passages.map((p) => p.text).join(""), maxTokenBytes(o.tokenizer, spec.vocabSize));
    if (least + genLength > spec.maxPositionEmbeddings) {
      throw new SettingsError("Prompt is too long for the model", {
        file: o.dataFile,
        field: `line ${record.line}`,
        expected: `prompt tokens + genLength ≤ max_position_embeddings ${spec.maxPositionEmbeddings}`,
        found: `at least ${least} tokens (question and passages, before the template) + ${genLength}`,
      });
    }
    const facts = o.scoring === "facts" ? longFacts(record, o.dataFile) : undefined;
    const prompt = buildQaPrompt(o.promptFormat, { question: record.question, ...ctx }, o.tokenizer, {
      chatTemplate: o.chatTemplate,
      reproduceDoubleBos: o.reproduceDoubleBos,
    });
    return { record, prompt, facts, base };
  } catch (e) {
    return { record, base: { ...base, error: describe(e) } };
  }
}

async function runGroup(
  group: Prepared[],
  addSpecialTokens: boolean,
  o: EvalOptions,
  label: string,
  extraction: AnswerExtraction,
  unknown: { id: string; pieces: string[] }[],
): Promise<EvalResult[]> {
  const policy = policyLabel(o.intervention);
  const folder = safe(policy === "none" ? label : `${label}@${policy}`);
  const traceFiles = o.traceDir ? group.map((p) => path.join(o.traceDir!, folder, `${p.record.id}.fstrace`)) : undefined;
  if (traceFiles) fs.mkdirSync(path.dirname(traceFiles[0]), { recursive: true });
  const settings = { ...(o.sampler ?? {}), addSpecialTokens };
  const t0 = performance.now();
  let out: GenerateResult[];
  // Unknown-word warnings count only once the group succeeds: a failed group is rerun one question at a
  // time below, and those runs report their own warnings again.
  const warned: { id: string; pieces: string[] }[] = [];
  try {
    // Regions travel into traces (and feed a region_sum probe): char spans → tokens via the offsets.
    // A measure may read them too (the retrieval measure's evidence is the gold passage's region).
    const withRegions = traceFiles !== undefined || o.engine.probes.regionSum !== undefined || o.measure !== undefined;
    const genLength = settings.genLength ?? resolveRunConfig(settings, o.engine.spec).genLength;
    const prompts: PromptInput[] = group.map((p) =>
      withRegions
        ? {
            text: p.prompt!.text,
            regions: promptRegionsToTokens(p.prompt!, o.tokenizer.encode(p.prompt!.text, { addSpecialTokens }).offsets, genLength),
          }
        : p.prompt!.text,
    );
    out = await generate(o.engine, prompts, settings, {
      tokenizer: o.tokenizer,
      traceFiles,
      modelName: o.modelName,
      keepSteps: o.measure !== undefined,
      signal: o.signal,
      intervention: o.intervention,
      ...(o.finalPassEngine ? { finalPassEngine: o.finalPassEngine } : {}),
      warn: (_m, d) => warned.push({ id: group[d.prompt].record.id, pieces: d.pieces }),
    });
    unknown.push(...warned);
  } catch (e) {
    // Settings errors concern every question alike; otherwise find the culprit by running one at a time.
    if (group.length === 1 || (e instanceof SettingsError && /^Invalid|Unknown setting/.test(e.message))) {
      return group.map((p) => ({ ...p.base, error: describe(e) }));
    }
    const each: EvalResult[] = [];
    for (const p of group) each.push(...(await runGroup([p], addSpecialTokens, o, label, extraction, unknown)));
    return each;
  }
  const ms = (performance.now() - t0) / group.length;
  const eos = new Set(o.engine.spec.eosTokenIds);
  return group.map((p, i) => {
    const g = out[i];
    if (g.trace.partial) return { ...p.base, error: "Interrupted: the run was aborted before this question finished" };
    const response = extraction === "up-to-eos" ? decodeUpToEos(g, eos, o.tokenizer) : g.answer;
    const prediction = extractAnswer(response, extraction);
    const s = scoreAnswer(prediction, p.record.answers);
    const r: EvalResult = {
      ...p.base,
      promptTokens: g.trace.prompt.promptLength,
      response: g.answer,
      prediction,
      accuracy: s.accuracy,
      f1: s.f1,
      exactMatch: s.exactMatch,
      ms: Math.round(ms * 10) / 10,
      batchSize: group.length,
    };
    if (p.facts) {
      const f = factScores(prediction, p.facts);
      Object.assign(r, { recall: f.recall, precision: f.precision, factF1: f.f1, complete: f.complete, claims: f.claims });
    }
    if (g.file) r.trace = g.file;
    if (o.measure) {
      try {
        r.measures = o.measure(g.trace, p.record);
      } catch (e) {
        return { ...p.base, error: describe(e) };
      }
    }
    return r;
  });
}

/** Generated ids up to (not including) the first EOS, decoded without special tokens. */
function decodeUpToEos(g: GenerateResult, eos: Set<number>, tokenizer: TextTokenizer): string {
  const gen = Array.from(g.trace.final.sequence.subarray(g.trace.prompt.promptLength));
  const cut = gen.findIndex((t) => eos.has(t));
  return tokenizer.decode(cut < 0 ? gen : gen.slice(0, cut), { skipSpecialTokens: true });
}

function describe(e: unknown): string {
  return e instanceof Error ? `${e.name}: ${e.message}` : String(e);
}

function safe(label: string): string {
  return label.replace(/[^A-Za-z0-9@._-]+/g, "_");
}

/** A row of `summarizeResults`: one (model, setting, intervention). */
export interface EvalSummaryRow {
  model: string;
  setting: string;
  intervention: string;
  n: number;
  errors: number;
  accuracy: number;
  f1: number;
  exactMatch: number;
  promptTokens: number;
  msPerQuestion: number;
}

/**
 * Mean Acc / F1 / EM per (model, setting, intervention), ×100 as in Table 1, with counts: `n`
 * questions that ran, `errors` that failed. Means are over the questions that ran.
 */
export function summarizeResults(results: readonly EvalResult[]): Rows<EvalSummaryRow> {
  const ok = results.filter((r) => r.error === undefined);
  const iv = (r: EvalResult) => r.intervention ?? "none";
  const keys = new Map<string, { model: string; setting: string; intervention: string }>();
  for (const r of results) keys.set(`${r.model}|${r.setting}|${iv(r)}`, { model: r.model, setting: r.setting, intervention: iv(r) });
  const rows = [...keys.values()].map(({ model, setting, intervention }) => {
    const same = (r: EvalResult) => r.model === model && r.setting === setting && iv(r) === intervention;
    const rs = ok.filter(same);
    const mean = (f: (r: EvalResult) => number) => (rs.length ? (100 * rs.reduce((s, r) => s + f(r), 0)) / rs.length : NaN);
    return {
      model,
      setting,
      intervention,
      n: rs.length,
      errors: results.filter((r) => same(r) && r.error !== undefined).length,
      accuracy: mean((r) => r.accuracy!),
      f1: mean((r) => r.f1!),
      exactMatch: mean((r) => r.exactMatch!),
      promptTokens: rs.length ? rs.reduce((s, r) => s + (r.promptTokens ?? 0), 0) / rs.length : NaN,
      msPerQuestion: rs.length ? rs.reduce((s, r) => s + (r.ms ?? 0), 0) / rs.length : NaN,
    };
  });
  return aq.from(rows) as Rows<EvalSummaryRow>;
}
