/**
 * Merging shard files (shard.ts) into the grid's result table, and summarising their progress.
 *
 * The merged table is the same whatever the sharding: one row per (unit, question), units in grid
 * order, questions in file order, and only the columns that do not depend on where and how fast a
 * row ran (no timings, batch sizes or trace paths). So `merge` of n shards and `merge` of one
 * unsharded run give identical tables, which the tests check row for row.
 *
 * Merge refuses: shards of different runs (manifest fingerprints differ: another grid, other
 * weights or data, another floatscope), two files claiming the same shard, and a question answered
 * successfully in two files (a unit that ran twice). It lists what is missing (shards never started,
 * units unfinished, questions that failed) and, unless asked for a partial table, fails on it.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { GridError } from "../util/errors.js";
import type { ColumnKind } from "../util/table-export.js";
import { aggregateMeasures, type MeasureAggregate, type MeasuredSample } from "./measures.js";
import {
  doneKeys,
  manifestKey,
  readShardFile,
  canonicalJson,
  SHARD_FILE_NAME,
  type ManifestKey,
  type ShardFile,
  type ShardRow,
} from "./shard.js";

/** One row of a merged grid table. */
export interface GridRow {
  unit: string;
  model: string;
  dataset: string;
  seed: number;
  setting: string;
  /** The attention-intervention policy ("none": a plain run). */
  intervention: string;
  /** Distractors in the prompt (null: closed-book / oracle). */
  k: number | null;
  /** Passages in the prompt and the gold one's 0-based index (null: closed-book). */
  passages: number;
  goldIndex: number | null;
  id: string;
  row: number;
  question: string;
  answers: string[];
  promptTokens: number | null;
  response: string | null;
  prediction: string | null;
  accuracy: number | null;
  f1: number | null;
  exactMatch: number | null;
  /** The error of a question that failed (in partial merges only), else null. */
  error: string | null;
}

export const GRID_COLUMNS: readonly (keyof GridRow)[] = [
  "unit",
  "model",
  "dataset",
  "seed",
  "setting",
  "intervention",
  "k",
  "passages",
  "goldIndex",
  "id",
  "row",
  "question",
  "answers",
  "promptTokens",
  "response",
  "prediction",
  "accuracy",
  "f1",
  "exactMatch",
  "error",
];

/** Fixed column types of the merged table, so every shard split and every format agree. */
export const GRID_TYPES: Record<string, ColumnKind> = {
  unit: "text",
  model: "text",
  dataset: "text",
  seed: "int",
  setting: "text",
  intervention: "text",
  k: "int",
  passages: "int",
  goldIndex: "int",
  id: "text",
  row: "int",
  question: "text",
  answers: "text",
  promptTokens: "int",
  response: "text",
  prediction: "text",
  accuracy: "double",
  f1: "double",
  exactMatch: "double",
  error: "text",
};

function kOf(setting: string): number | null {
  const m = /\/k(\d+)/.exec(setting);
  return m ? Number(m[1]) : null;
}

export function toGridRow(r: ShardRow): GridRow {
  return {
    unit: r.unit,
    model: r.model,
    dataset: r.dataset,
    seed: r.seed,
    setting: r.setting,
    intervention: r.intervention ?? "none",
    k: kOf(r.setting),
    passages: r.passages,
    goldIndex: r.goldIndex,
    id: r.id,
    row: r.row,
    question: r.question,
    answers: r.answers,
    promptTokens: r.promptTokens ?? null,
    response: r.response ?? null,
    prediction: r.prediction ?? null,
    accuracy: r.accuracy ?? null,
    f1: r.f1 ?? null,
    exactMatch: r.exactMatch ?? null,
    error: r.error ?? null,
  };
}

/** Shard files named on the command line: files as they are, folders → their shard-*.jsonl. */
export function shardFilesIn(inputs: readonly string[]): string[] {
  const out: string[] = [];
  for (const p of inputs) {
    if (fs.existsSync(p) && fs.statSync(p).isDirectory()) {
      const found = fs
        .readdirSync(p)
        .filter((f) => SHARD_FILE_NAME.test(f))
        .sort()
        .map((f) => path.join(p, f));
      if (found.length === 0)
        throw new GridError("No shard files in folder", {
          file: p,
          expected: "shard-<i>-of-<n>.jsonl files written by `floatscope eval --grid`",
        });
      out.push(...found);
    } else out.push(p);
  }
  return out;
}

export interface UnitProgress {
  id: string;
  /** Questions the unit has. */
  n: number;
  /** Successful questions found. */
  done: number;
  /** Questions whose last row is a failure. */
  failed: number;
  /** The shard this unit belongs to (1-based). */
  shard: number;
}

export interface GridProgress {
  manifest: ManifestKey & { fingerprint: string };
  shardCount: number;
  /** Shard indices (1-based) with a file. */
  shardsPresent: number[];
  shardsMissing: number[];
  units: UnitProgress[];
}

/**
 * Read and cross-check shard files. Throws (GridError) on mismatched manifests, two files for
 * one shard, or a question that succeeded in two files.
 */
export function collectShards(files: readonly string[]): { progress: GridProgress; shards: ShardFile[] } {
  if (files.length === 0)
    throw new GridError("No shard files given", { field: "<shards>", expected: "shard files or the folder holding them" });
  const shards = files.map(readShardFile);
  const first = shards[0];
  for (const s of shards.slice(1)) {
    if (s.manifest.fingerprint !== first.manifest.fingerprint || s.manifest.shard.count !== first.manifest.shard.count) {
      const a = manifestKey(first.manifest) as unknown as Record<string, unknown>;
      const b = manifestKey(s.manifest) as unknown as Record<string, unknown>;
      const diff = Object.keys(a).filter((k) => canonicalJson(a[k]) !== canonicalJson(b[k]));
      if (s.manifest.shard.count !== first.manifest.shard.count) diff.push("shard count");
      throw new GridError("Shards of different runs cannot be merged", {
        file: s.file,
        field: `manifest: ${diff.join(", ") || "fingerprint"}`,
        expected: `the manifest of ${first.file} (${first.manifest.fingerprint.slice(0, 19)}…, ${first.manifest.shard.count} shards)`,
        found: `${s.manifest.fingerprint.slice(0, 19)}…, ${s.manifest.shard.count} shards`,
        hint: "merge only the shards of one `floatscope eval --grid` run (same grid, models, data and floatscope version)",
      });
    }
  }
  const count = first.manifest.shard.count;
  const byIndex = new Map<number, ShardFile>();
  for (const s of shards) {
    const prev = byIndex.get(s.manifest.shard.index);
    if (prev) {
      throw new GridError("Two files for the same shard", {
        file: s.file,
        field: "manifest.shard.index",
        expected: "each shard once",
        found: `shard ${s.manifest.shard.index}/${count} also in ${prev.file}`,
      });
    }
    byIndex.set(s.manifest.shard.index, s);
  }
  // A question that succeeded in two files: a unit ran in two places (copied file, wrong --shard).
  const owner = new Map<string, string>();
  for (const s of shards) {
    for (const key of doneKeys(s.rows)) {
      const o = owner.get(key);
      if (o) {
        const [unit, id] = key.split("\n");
        throw new GridError("Duplicate result in two shard files", {
          file: s.file,
          field: `unit ${unit}, question ${id}`,
          expected: "each question in one shard",
          found: `also in ${o}`,
        });
      }
      owner.set(key, s.file);
    }
  }
  const present = [...byIndex.keys()].sort((a, b) => a - b);
  const missing = Array.from({ length: count }, (_, i) => i + 1).filter((i) => !byIndex.has(i));
  const units: UnitProgress[] = first.manifest.units.map((u, i) => {
    const shard = (i % count) + 1;
    const s = byIndex.get(shard);
    let done = 0,
      failed = 0;
    if (s) {
      const last = new Map<string, ShardRow>();
      for (const r of s.rows) if (r.unit === u.id) last.set(r.id, r);
      for (const r of last.values()) {
        if (r.error === undefined) done++;
        else failed++;
      }
    }
    return { id: u.id, n: u.n, done, failed, shard };
  });
  return {
    progress: {
      manifest: { ...manifestKey(first.manifest), fingerprint: first.manifest.fingerprint },
      shardCount: count,
      shardsPresent: present,
      shardsMissing: missing,
      units,
    },
    shards,
  };
}

export interface MergeResult {
  rows: GridRow[];
  /**
   * The grid's per-sample measures pooled per model (measures.ts), over the successful questions of plain
   * (not intervened) units; null when the grid records no measures.
   */
  measures: MeasureAggregate | null;
  progress: GridProgress;
  /** Lines saying what is missing (empty when complete). */
  missing: string[];
  complete: boolean;
}

/** What is missing, in words (shards, then unfinished units, at most `max` lines of units). */
export function describeMissing(p: GridProgress, max = 20): string[] {
  const out: string[] = [];
  if (p.shardsMissing.length) out.push(`shards with no file: ${p.shardsMissing.map((i) => `${i}/${p.shardCount}`).join(", ")}`);
  const open = p.units.filter((u) => u.done < u.n && !p.shardsMissing.includes(u.shard));
  for (const u of open.slice(0, max))
    out.push(`unit ${u.id} (shard ${u.shard}/${p.shardCount}): ${u.done}/${u.n} done${u.failed ? `, ${u.failed} failed` : ""}`);
  if (open.length > max) out.push(`… and ${open.length - max} more unfinished units`);
  return out;
}

/**
 * Merge shard files into the grid table. Rows of units are in grid order, questions in file order;
 * with `partial`, failed questions come as rows with `error` and missing ones are left out.
 */
export function mergeShards(files: readonly string[], options: { partial?: boolean } = {}): MergeResult {
  const { progress, shards } = collectShards(files);
  const byShard = new Map(shards.map((s) => [s.manifest.shard.index, s]));
  // Last row per (unit, id) in its shard, grouped by unit.
  const rowsOfUnit = new Map<string, Map<string, ShardRow>>();
  for (const s of shards) {
    for (const r of s.rows) {
      let m = rowsOfUnit.get(r.unit);
      if (!m) rowsOfUnit.set(r.unit, (m = new Map()));
      m.set(r.id, r);
    }
  }
  const rows: GridRow[] = [];
  const measured: MeasuredSample[] = [];
  for (const u of progress.units) {
    if (!byShard.has(u.shard)) continue;
    const got = [...(rowsOfUnit.get(u.id)?.values() ?? [])].sort((a, b) => a.row - b.row);
    for (const r of got) {
      if (r.error === undefined || options.partial) rows.push(toGridRow(r));
      if (r.error === undefined && r.measures && (r.intervention ?? "none") === "none")
        measured.push({ model: r.model, sample: `${r.unit}|${r.id}`, measures: r.measures });
    }
  }
  const m = progress.manifest.measures;
  const measures = m ? aggregateMeasures(measured, m.models) : null;
  const missing = describeMissing(progress);
  return { rows, measures, progress, missing, complete: missing.length === 0 };
}

export interface StatusSummary {
  shards: { index: number; present: boolean; units: number; unitsDone: number; questions: number; done: number; failed: number }[];
  units: number;
  unitsDone: number;
  questions: number;
  done: number;
  failed: number;
}

/** Per-shard and overall progress. */
export function summarizeProgress(p: GridProgress): StatusSummary {
  const shards = Array.from({ length: p.shardCount }, (_, i) => {
    const us = p.units.filter((u) => u.shard === i + 1);
    return {
      index: i + 1,
      present: p.shardsPresent.includes(i + 1),
      units: us.length,
      unitsDone: us.filter((u) => u.done === u.n).length,
      questions: us.reduce((s, u) => s + u.n, 0),
      done: us.reduce((s, u) => s + u.done, 0),
      failed: us.reduce((s, u) => s + u.failed, 0),
    };
  });
  const sum = (f: (s: (typeof shards)[number]) => number) => shards.reduce((a, s) => a + f(s), 0);
  return {
    shards,
    units: sum((s) => s.units),
    unitsDone: sum((s) => s.unitsDone),
    questions: sum((s) => s.questions),
    done: sum((s) => s.done),
    failed: sum((s) => s.failed),
  };
}
