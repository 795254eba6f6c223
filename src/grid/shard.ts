/**
 * Running one shard of a grid (grid.ts) into a shard file, resumably.
 *
 * A shard file is JSON lines: the first line is `{"manifest": …}`, every other line one question's
 * result (`EvalResult` plus `unit`, `dataset`, `seed`). Rows are appended as each batch finishes; a
 * rerun reads the file, keeps what succeeded, and runs the rest (failed rows run again; a truncated
 * last line from a killed process is ignored). A rerun whose manifest differs (another grid, other
 * weights or data, another floatscope) is refused rather than mixed in.
 *
 * The manifest records what the numbers depend on: floatscope's version, the grid (settings, seeds,
 * chunking, every unit id and size), each model's fingerprint and evaluation preset, each dataset's
 * SHA-256. Its `fingerprint` (a hash over exactly those) is what merge compares across shards;
 * paths, hosts and times are recorded for people but not compared.
 */
import { createHash } from "node:crypto";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { loadTokenizer } from "../checkpoint/tokenizer.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import type { RunConfig } from "../samplers/config.js";
import type { Trace } from "../trace/types.js";
import { FloatscopeError, GridError } from "../util/errors.js";
import { openRegularFile, readFileBounded } from "../util/paths.js";
import type { ProbeRequest } from "../util/probes.js";
import { DistractorPool, settingLabel } from "../qa/contexts.js";
import { loadQaJsonl, type QaRecord } from "../qa/datasets.js";
import { openModel } from "../model/open.js";
import { defaultPreset } from "../model/presets.js";
import type { AnswerExtraction, PromptFormat } from "../model/presets.js";
import { runEval, type EvalResult } from "../qa/runner.js";
import { parsePolicy, policyProbes } from "../samplers/interventions.js";
import { expandGrid, shardUnits, type ResolvedGrid, type WorkUnit } from "./grid.js";
import { FINAL_PASS_MEASURES, measureProbes, measureTrace, type MeasuredModel, type MeasureName, type SampleMeasures } from "./measures.js";

/** Shard files hold one JSON line per question: far below this even for a full NQ-open run with traces named. */
const SHARD_MAX_BYTES = 2 ** 30;

export const SHARD_FORMAT = "floatscope-shard";
export const SHARD_VERSION = 1;

export interface ModelEntry {
  name: string;
  /** `sha256:<hex>` over the checkpoint's files (see `fingerprintModel`). */
  hash: string;
  promptFormat: PromptFormat;
  extraction: AnswerExtraction;
  sampler: Partial<RunConfig>;
}

export interface DatasetEntry {
  name: string;
  /** `sha256:<hex>` of the file as stored (compressed bytes for .gz). */
  hash: string;
  /** Selected records (after skip/limit). */
  records: number;
  skip: number;
  limit: number | null;
}

/** The part of a manifest every shard of one grid run must share. */
export interface ManifestKey {
  format: typeof SHARD_FORMAT;
  version: number;
  floatscope: string;
  grid: string;
  settings: string[];
  seeds: number[];
  chunk: number;
  models: ModelEntry[];
  datasets: DatasetEntry[];
  /** Every unit of the grid (not just this shard's), with its question count. */
  units: { id: string; n: number }[];
  /**
   * The per-sample measures rows record, and how findings label each model; absent when the grid records
   * none (so a grid without measures keeps the fingerprint it always had).
   */
  measures?: { names: MeasureName[]; models: MeasuredModel[]; on?: string[] };
}

export interface ShardManifest extends ManifestKey {
  /** sha256 of the canonical JSON of the ManifestKey fields. */
  fingerprint: string;
  shard: { index: number; count: number };
  /** Where things were on the machine that wrote this (informative only). */
  paths: { grid: string; models: Record<string, string>; datasets: Record<string, string> };
  host: string;
  createdAt: string;
}

export interface ShardRow extends Omit<EvalResult, "measures"> {
  unit: string;
  dataset: string;
  seed: number;
  /** The grid's measures of this question (measures.ts), when it names any. */
  measures?: SampleMeasures;
}

let versionCache: string | undefined;
/** floatscope's version: the `version` of the nearest package.json named "floatscope" above this module. */
export function floatscopeVersion(): string {
  if (versionCache) return versionCache;
  let dir = path.dirname(fileURLToPath(import.meta.url));
  for (;;) {
    const p = path.join(dir, "package.json");
    if (fs.existsSync(p)) {
      const pkg = JSON.parse(fs.readFileSync(p, "utf8")) as { name?: string; version?: string };
      if (pkg.name === "floatscope" && pkg.version) return (versionCache = pkg.version);
    }
    const up = path.dirname(dir);
    if (up === dir) break;
    dir = up;
  }
  // Run from the source tree (tsx): the library's package.json sits in src/.
  const src = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..", "package.json");
  if (fs.existsSync(src)) return (versionCache = (JSON.parse(fs.readFileSync(src, "utf8")) as { version: string }).version);
  return (versionCache = "unknown");
}

/** Files bigger than this are fingerprinted by size + their first and last FULL_LIMIT/2 bytes. */
const FULL_LIMIT = 256 * 2 ** 20;

function hashFile(h: ReturnType<typeof createHash>, file: string): void {
  const { fd, size } = openRegularFile(file, { what: "model file", error: GridError });
  h.update(`${path.basename(file)}\0${size}\0`);
  try {
    const buf = Buffer.allocUnsafe(8 * 2 ** 20);
    const ranges: [number, number][] =
      size <= FULL_LIMIT
        ? [[0, size]]
        : [
            [0, FULL_LIMIT / 2],
            [size - FULL_LIMIT / 2, size],
          ];
    for (const [from, to] of ranges) {
      for (let pos = from; pos < to;) {
        const n = fs.readSync(fd, buf, 0, Math.min(buf.length, to - pos), pos);
        if (n <= 0) break;
        h.update(buf.subarray(0, n));
        pos += n;
      }
    }
  } finally {
    fs.closeSync(fd);
  }
}

/**
 * A checkpoint's fingerprint: SHA-256 over its config, tokenizer and weight files (names, sizes and
 * contents; weight files above 256 MiB contribute their size and first and last 128 MiB, which hold
 * the safetensors header and enough bytes that a retrained or requantised model differs).
 */
export function fingerprintModel(p: string): string {
  const h = createHash("sha256");
  const st = fs.statSync(p);
  if (st.isFile()) hashFile(h, p);
  else {
    const files = fs
      .readdirSync(p)
      .filter((f) =>
        /^(config|generation_config|tokenizer|tokenizer_config)\.json$|\.safetensors$|\.safetensors\.index\.json$|\.gguf$/.test(f),
      )
      .sort();
    if (files.length === 0)
      throw new GridError("No checkpoint files to fingerprint", { file: p, expected: "config.json and *.safetensors (or a .gguf file)" });
    for (const f of files) hashFile(h, path.join(p, f));
  }
  return `sha256:${h.digest("hex")}`;
}

export function fingerprintFile(file: string): string {
  const h = createHash("sha256");
  const { fd } = openRegularFile(file, { what: "data file", error: GridError });
  try {
    const buf = Buffer.allocUnsafe(8 * 2 ** 20);
    for (let n = fs.readSync(fd, buf, 0, buf.length, null); n > 0; n = fs.readSync(fd, buf, 0, buf.length, null))
      h.update(buf.subarray(0, n));
  } finally {
    fs.closeSync(fd);
  }
  return `sha256:${h.digest("hex")}`;
}

/** Canonical JSON (sorted keys) so that equal objects hash equal. */
export function canonicalJson(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJson).join(",")}]`;
  if (v && typeof v === "object") {
    return `{${Object.keys(v)
      .filter((k) => (v as Record<string, unknown>)[k] !== undefined)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonicalJson((v as Record<string, unknown>)[k])}`)
      .join(",")}}`;
  }
  return JSON.stringify(v);
}

export function manifestKey(m: ManifestKey): ManifestKey {
  const { format, version, floatscope, grid, settings, seeds, chunk, models, datasets, units, measures } = m;
  return { format, version, floatscope, grid, settings, seeds, chunk, models, datasets, units, measures };
}

export function keyFingerprint(k: ManifestKey): string {
  return `sha256:${createHash("sha256")
    .update(canonicalJson(manifestKey(k)))
    .digest("hex")}`;
}

/** A grid with its data loaded: every dataset's records, and the units they give. */
export interface PreparedGrid {
  grid: ResolvedGrid;
  /** All records of each dataset file (pool distractors draw from the whole file). */
  all: Map<string, QaRecord[]>;
  /** The selected records (skip/limit) of each dataset. */
  selected: Map<string, QaRecord[]>;
  units: WorkUnit[];
  datasetEntries: DatasetEntry[];
}

export async function prepareGrid(grid: ResolvedGrid): Promise<PreparedGrid> {
  const all = new Map<string, QaRecord[]>();
  const selected = new Map<string, QaRecord[]>();
  const datasetEntries: DatasetEntry[] = [];
  for (const d of grid.datasets) {
    if (!fs.existsSync(d.path))
      throw new GridError("Grid dataset not found", {
        file: grid.file,
        field: `datasets.${d.name}`,
        expected: "an existing jsonl(.gz) file",
        found: d.path,
      });
    const records = await loadQaJsonl(d.path);
    all.set(d.name, records);
    const sel = records.slice(d.skip, d.limit === null ? undefined : d.skip + d.limit);
    selected.set(d.name, sel);
    datasetEntries.push({ name: d.name, hash: fingerprintFile(d.path), records: sel.length, skip: d.skip, limit: d.limit });
  }
  const sizes = Object.fromEntries([...selected].map(([k, v]) => [k, v.length]));
  return { grid, all, selected, units: expandGrid(grid, sizes), datasetEntries };
}

/** The names `shardFileName` gives: what a run folder's shard files are recognised by. */
export const SHARD_FILE_NAME = /^shard-\d+-of-\d+\.jsonl$/;

/** Shard file name for shard i of n. */
export function shardFileName(index: number, count: number): string {
  const w = String(count).length;
  return `shard-${String(index).padStart(w, "0")}-of-${count}.jsonl`;
}

export interface ShardFile {
  file: string;
  manifest: ShardManifest;
  /** Every row in file order (retries included). */
  rows: ShardRow[];
}

/** Read a shard file: its manifest and rows (a truncated last line is ignored). */
export function readShardFile(file: string): ShardFile {
  let text: string;
  try {
    // Checked before it is opened (a FIFO would block, a folder is EISDIR), as the CLI checks it.
    text = readFileBounded(file, { what: "shard file", error: GridError, maxBytes: SHARD_MAX_BYTES }).toString("utf8");
  } catch (e) {
    if (e instanceof FloatscopeError) throw e;
    throw new GridError("Cannot read shard file", {
      file,
      expected: "a shard file written by `floatscope eval --grid`",
      found: (e as NodeJS.ErrnoException).code ?? String(e),
    });
  }
  const lines = text.split("\n");
  let manifest: ShardManifest | undefined;
  const rows: ShardRow[] = [];
  lines.forEach((line, i) => {
    if (!line.trim()) return;
    let v: unknown;
    try {
      v = JSON.parse(line);
    } catch {
      if (i >= lines.length - 2) return; // the last line of a killed run
      throw new GridError("Shard file has a malformed line", { file, field: `line ${i + 1}`, expected: "one JSON object per line" });
    }
    if (i === 0) {
      const m = (v as { manifest?: ShardManifest }).manifest;
      if (!m || m.format !== SHARD_FORMAT)
        throw new GridError("Not a floatscope shard file", {
          file,
          field: "line 1",
          expected: `{"manifest": {"format": "${SHARD_FORMAT}", …}}`,
          found: line.slice(0, 80),
        });
      if (m.version !== SHARD_VERSION)
        throw new GridError("Unsupported shard file version", {
          file,
          field: "manifest.version",
          expected: String(SHARD_VERSION),
          found: String(m.version),
        });
      manifest = m;
      return;
    }
    rows.push(v as ShardRow);
  });
  if (!manifest)
    throw new GridError("Shard file has no manifest", { file, field: "line 1", expected: '{"manifest": …}', found: "an empty file" });
  return { file, manifest, rows };
}

/** (unit, id) of the rows that succeeded, last row winning (a retry that failed undoes an earlier success). */
export function doneKeys(rows: readonly ShardRow[]): Set<string> {
  const done = new Set<string>();
  for (const r of rows) {
    const key = `${r.unit}\n${r.id}`;
    if (r.error === undefined) done.add(key);
    else done.delete(key);
  }
  return done;
}

export interface ShardProgress {
  unit: WorkUnit;
  unitsDone: number;
  units: number;
  questionsDone: number;
  questions: number;
  errors: number;
  resumed: number;
}

export interface RunShardOptions {
  index: number;
  count: number;
  /** Folder for the shard file (created). */
  outDir: string;
  threads?: number;
  device?: "cpu" | "cuda" | "auto";
  /** GGUF quantised layers (EngineOptions.quantizedWeights; default "auto"). */
  quantizedWeights?: "auto" | "matmulnbits" | "dequantize";
  /** false: no key/value-cached decoding (EngineOptions.kvCache; default on where it applies). */
  kvCache?: false;
  batchSize?: number;
  signal?: AbortSignal;
  /**
   * Rows of an earlier run to copy instead of decoding (src/grid/reuse.ts reusableRows), given this run's
   * manifest key and the shard's units; rows already in the shard file are kept as they are.
   */
  reuse?: (key: ManifestKey, units: readonly WorkUnit[]) => readonly ShardRow[];
  onProgress?: (p: ShardProgress) => void;
  warn?: (text: string) => void;
}

export interface ShardRunSummary {
  file: string;
  units: number;
  questions: number;
  ran: number;
  resumed: number;
  errors: number;
  aborted: boolean;
}

function describeDiff(a: ManifestKey, b: ManifestKey): string {
  const ka = manifestKey(a) as unknown as Record<string, unknown>;
  const kb = manifestKey(b) as unknown as Record<string, unknown>;
  return (
    Object.keys(ka)
      .filter((k) => canonicalJson(ka[k]) !== canonicalJson(kb[k]))
      .join(", ") || "(none)"
  );
}

/**
 * The manifest's model entries. Each needs the model's preset, known only once it is open: models are
 * opened lazily, but every model of the grid is fingerprinted and preset up front so all shards write
 * the same manifest.
 */
function modelEntries(grid: PreparedGrid["grid"]): (ModelEntry & { family: string; causal: boolean })[] {
  return grid.models.map((m) => {
    if (!fs.existsSync(m.path))
      throw new GridError("Grid model not found", {
        file: grid.file,
        field: `models.${m.name}`,
        expected: "a checkpoint folder (or .gguf file)",
        found: m.path,
      });
    return { name: m.name, hash: fingerprintModel(m.path), ...presetOf(m.path) };
  });
}

/**
 * Run shard `index`/`count` of a prepared grid: load each of its models once, evaluate its units in
 * grid order, append rows to `<outDir>/shard-i-of-n.jsonl`, skip what a previous run finished.
 */
export async function runShard(pg: PreparedGrid, o: RunShardOptions): Promise<ShardRunSummary> {
  const { grid } = pg;
  const mine = shardUnits(pg.units, o.index, o.count);
  const file = path.join(o.outDir, shardFileName(o.index, o.count));
  const opened = modelEntries(grid);
  const models: ModelEntry[] = opened.map(({ family: _f, causal: _c, ...entry }) => entry);
  const key: ManifestKey = {
    format: SHARD_FORMAT,
    version: SHARD_VERSION,
    floatscope: floatscopeVersion(),
    grid: grid.name,
    settings: grid.settings.map(settingLabel),
    seeds: grid.seeds,
    chunk: grid.chunk,
    models,
    datasets: pg.datasetEntries,
    units: pg.units.map((u) => ({ id: u.id, n: u.end - u.start })),
    measures:
      grid.measures.length === 0
        ? undefined
        : {
            names: grid.measures,
            models: opened.map((m, i) => ({
              name: m.name,
              family: m.family,
              paradigm: m.causal ? "ARM" : "MDM",
              tier: grid.models[i].tier,
            })),
            // Only when the grid names them, so a grid measured in every setting keeps the fingerprint it had.
            ...(grid.measuresOn ? { on: grid.measuresOn } : {}),
          },
  };
  const manifest: ShardManifest = {
    ...key,
    fingerprint: keyFingerprint(key),
    shard: { index: o.index, count: o.count },
    paths: {
      grid: grid.file,
      models: Object.fromEntries(grid.models.map((m) => [m.name, m.path])),
      datasets: Object.fromEntries(grid.datasets.map((d) => [d.name, d.path])),
    },
    host: os.hostname(),
    createdAt: new Date().toISOString(),
  };

  const reused = o.reuse?.(key, mine) ?? [];
  fs.mkdirSync(o.outDir, { recursive: true });
  let done = new Set<string>();
  if (fs.existsSync(file) && fs.statSync(file).size > 0) {
    const prev = readShardFile(file);
    if (
      prev.manifest.fingerprint !== manifest.fingerprint ||
      prev.manifest.shard.index !== o.index ||
      prev.manifest.shard.count !== o.count
    ) {
      throw new GridError("Shard file belongs to another run", {
        file,
        field: prev.manifest.fingerprint !== manifest.fingerprint ? `manifest (${describeDiff(prev.manifest, key)})` : "manifest.shard",
        expected: `shard ${o.index}/${o.count} of grid "${grid.name}" with these models, data and floatscope ${key.floatscope}`,
        found: `shard ${prev.manifest.shard.index}/${prev.manifest.shard.count} of grid "${prev.manifest.grid}" (${prev.manifest.fingerprint.slice(0, 19)}…)`,
        hint: "write to another --out folder, or delete the old shard file to start again",
      });
    }
    done = doneKeys(prev.rows);
    // A killed run can leave a torn last line: cut it off, so the file stays one JSON object per line.
    const text = fs.readFileSync(file);
    if (text[text.length - 1] !== 0x0a) fs.truncateSync(file, text.lastIndexOf(0x0a) + 1);
  } else {
    fs.writeFileSync(file, JSON.stringify({ manifest }) + "\n");
  }

  // An earlier run's rows (read before, so a refused --reuse leaves no new file): appended after the rows
  // this shard file already holds, which stay as they are.
  const carried = reused.filter((r) => !done.has(`${r.unit}\n${r.id}`));
  if (carried.length > 0) fs.appendFileSync(file, carried.map((r) => JSON.stringify(r) + "\n").join(""));
  for (const r of carried) done.add(`${r.unit}\n${r.id}`);

  const questions = mine.reduce((s, u) => s + u.end - u.start, 0);
  const summary: ShardRunSummary = { file, units: mine.length, questions, ran: 0, resumed: 0, errors: 0, aborted: false };
  const batchSize = o.batchSize ?? grid.batchSize;
  let unitsDone = 0;
  const byModel = new Map<string, WorkUnit[]>();
  for (const u of mine) byModel.set(u.model, [...(byModel.get(u.model) ?? []), u]);
  const pools = new Map<string, DistractorPool>();
  for (const [modelName, units] of byModel) {
    const todoOf = (u: WorkUnit) =>
      pg.selected
        .get(u.dataset)!
        .slice(u.start, u.end)
        .filter((r) => !done.has(`${u.id}\n${r.id}`));
    const pending = units.filter((u) => todoOf(u).length > 0);
    for (const u of units)
      if (!pending.includes(u)) {
        summary.resumed += u.end - u.start;
        unitsDone++;
      }
    if (pending.length === 0) continue;
    if (o.signal?.aborted) break;
    const spec = grid.models.find((m) => m.name === modelName)!;
    const entry = models.find((m) => m.name === modelName)!;
    // Units of the settings that record measures, and the rest: each group gets an engine computing only the
    // probes it reads (the measures' probes cost time on every pass).
    const measured = (u: WorkUnit) => grid.measures.length > 0 && (grid.measuresOn === null || grid.measuresOn.includes(u.setting));
    const groups = [pending.filter(measured), pending.filter((u) => !measured(u))].filter((g) => g.length > 0);
    for (const group of groups) {
      if (o.signal?.aborted) break;
      // Intervened units need the engine's intervention inputs and the probes their policies read.
      const policies = [...new Set(group.map((u) => u.intervention))].filter((p) => p !== "none");
      const withMeasures = measured(group[0]);
      const measure = withMeasures
        ? (t: Trace, rec: { answers: string[] }) => measureTrace(t, grid.measures, rec.answers) as Record<string, unknown>
        : undefined;
      // An ARM whose measures all read the final pass decodes probe-free, through its key/value cache, and a second
      // engine on the same checkpoint runs the final pass with the measures' probes: with probes at every step it
      // would re-run the whole prefix for every token (the real ARM: tens of seconds per question).
      const finalOnly =
        withMeasures &&
        policies.length === 0 &&
        opened.find((e) => e.name === modelName)!.causal &&
        o.kvCache !== false &&
        grid.measures.every((n) => FINAL_PASS_MEASURES.includes(n));
      const m = await openModel(spec.path, {
        device: o.device ?? "cpu",
        threads: o.threads,
        quantizedWeights: o.quantizedWeights,
        kvCache: o.kvCache,
        warn: o.warn,
        ...(policies.length > 0 ? { interventions: true } : {}),
        ...(policies.length > 0 || (measure && !finalOnly)
          ? {
              probes: (ms: { numLayers: number }) =>
                Object.assign(
                  {},
                  ...policies.map((p) => policyProbes(parsePolicy(p))),
                  withMeasures ? measureProbes(grid.measures, ms.numLayers) : {},
                ) as ProbeRequest,
            }
          : {}),
      });
      let final: Awaited<ReturnType<typeof openModel>> | undefined;
      try {
        final = finalOnly
          ? await openModel(spec.path, {
              device: o.device ?? "cpu",
              threads: o.threads,
              quantizedWeights: o.quantizedWeights,
              warn: o.warn,
              probes: (ms: { numLayers: number }) => measureProbes(grid.measures, ms.numLayers),
            })
          : undefined;
        for (const u of group) {
          const todo = todoOf(u);
          summary.resumed += u.end - u.start - todo.length;
          let pool: DistractorPool | undefined;
          if (u.evalSetting.kind === "distractors" && u.evalSetting.source === "pool") {
            pool = pools.get(u.dataset) ?? new DistractorPool(pg.all.get(u.dataset)!);
            pools.set(u.dataset, pool);
          }
          // The unit's batches are fixed slices of its questions, appended as each finishes (a kill loses one
          // batch). A resumed batch runs whole, though only its missing questions are written: a question's
          // attention numbers depend, in their last digits, on the batch it ran in, so a resumed unit must
          // decode the batches an uninterrupted one did to write the same rows.
          const all = pg.selected.get(u.dataset)!.slice(u.start, u.end);
          const wanted = new Set(todo.map((r) => r.id));
          for (let s = 0; s < all.length && !o.signal?.aborted; s += batchSize) {
            const batch = all.slice(s, s + batchSize);
            if (!batch.some((r) => wanted.has(r.id))) continue;
            const run = await runEval({
              engine: m.engine,
              tokenizer: m.tokenizer,
              records: batch,
              setting: u.evalSetting,
              promptFormat: entry.promptFormat,
              sampler: { ...entry.sampler, seed: u.seed },
              extraction: entry.extraction,
              pool,
              modelName,
              dataFile: grid.datasets.find((d) => d.name === u.dataset)!.path,
              batchSize,
              signal: o.signal,
              ...(u.intervention !== "none" ? { intervention: u.intervention } : {}),
              measure,
              ...(final ? { finalPassEngine: final.engine } : {}),
            });
            const rows = run.results.filter((r) => wanted.has(r.id) && !(o.signal?.aborted && r.error?.startsWith("Interrupted")));
            if (rows.length)
              fs.appendFileSync(
                file,
                rows.map((r) => JSON.stringify({ unit: u.id, dataset: u.dataset, seed: u.seed, ...r })).join("\n") + "\n",
              );
            summary.ran += rows.length;
            summary.errors += rows.filter((r) => r.error !== undefined).length;
            o.onProgress?.({
              unit: u,
              unitsDone,
              units: mine.length,
              questionsDone: summary.ran + summary.resumed,
              questions,
              errors: summary.errors,
              resumed: summary.resumed,
            });
          }
          if (o.signal?.aborted) break;
          unitsDone++;
        }
      } finally {
        await m.engine.dispose();
        await final?.engine.dispose();
      }
    }
    if (o.signal?.aborted) break;
  }
  summary.aborted = !!o.signal?.aborted;
  return summary;
}

/**
 * The evaluation preset of a model (prompt, sampler, extraction), read without building its engine, with
 * its family and whether it is causal (an ARM), which findings of its measures are labelled with.
 */
function presetOf(p: string): Pick<ModelEntry, "promptFormat" | "extraction" | "sampler"> & { family: string; causal: boolean } {
  const ckpt = openCheckpoint(p);
  const spec = resolveModelSpec(ckpt);
  if (!ckpt.tokenizer) throw new GridError("Evaluation needs the checkpoint's tokenizer", { file: p, expected: "tokenizer.json" });
  const tok = loadTokenizer(ckpt.tokenizer, { bosTokenId: spec.bosTokenId, eosTokenIds: spec.eosTokenIds });
  const preset = defaultPreset(spec, tok, ckpt.dir);
  return {
    promptFormat: preset.promptFormat,
    extraction: preset.extraction,
    sampler: preset.sampler,
    family: spec.family,
    causal: spec.causal,
  };
}
