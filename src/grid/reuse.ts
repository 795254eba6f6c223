/**
 * Rows an earlier run of a grid already holds, for the models that did not change since.
 *
 * A shard file is bound to one manifest (models with their hashes, data, settings, units): retrain one
 * model of a large grid and every shard of the old run is refused, although the other models' rows are
 * still exactly what a new run would compute. `floatscope eval --grid g --out new --reuse old` copies
 * those rows into the new shard files instead of decoding them again, and decodes only the changed
 * models' units. A row is taken only when
 * - the old manifest equals the new one in everything but its models (same grid, settings, seeds, chunk,
 *   data hashes, units, measures and floatscope version: the row would be computed the same way), and
 * - its model's entry (name, fingerprint of config, tokenizer and weights, preset) and, for a grid with
 *   measures, that model's measured label (family, paradigm, tier) are equal in both,
 * - it is a finished row (no error) of a unit of the shard being run.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import type { WorkUnit } from "./grid.js";
import { canonicalJson, doneKeys, manifestKey, readShardFile, SHARD_FILE_NAME, type ManifestKey, type ShardRow } from "./shard.js";
import { GridError } from "../util/errors.js";

/** Everything of a manifest key except the models and their measured labels. */
function withoutModels(k: ManifestKey): Record<string, unknown> {
  const { models: _m, measures, ...rest } = manifestKey(k);
  return { ...rest, measures: measures && { ...measures, models: undefined } };
}

/** The models whose rows carry over from `prev` to `now`: same entry and same measured label in both. */
export function unchangedModels(prev: ManifestKey, now: ManifestKey): string[] {
  const label = (k: ManifestKey, name: string) => canonicalJson(k.measures?.models.find((m) => m.name === name) ?? null);
  return now.models
    .filter((m) => {
      const before = prev.models.find((p) => p.name === m.name);
      return before !== undefined && canonicalJson(before) === canonicalJson(m) && label(prev, m.name) === label(now, m.name);
    })
    .map((m) => m.name);
}

export interface ReusedRows {
  rows: ShardRow[];
  /** The models whose rows were taken, and the shard's models that changed since (decoded again). */
  models: string[];
  changed: string[];
  files: string[];
}

/**
 * The finished rows of the shard files in `dir` (any shard count) that belong to `units` and to a model
 * unchanged between that run and `key`. Throws a GridError naming the file and the fields when the
 * earlier run is of another grid, data or settings (nothing of it could be reused safely).
 */
export function reusableRows(dir: string, key: ManifestKey, units: readonly WorkUnit[]): ReusedRows {
  let names: string[];
  try {
    names = fs
      .readdirSync(dir)
      .filter((n) => SHARD_FILE_NAME.test(n))
      .sort();
  } catch (e) {
    throw new GridError("Cannot read the run to reuse", {
      file: dir,
      field: "--reuse",
      expected: "a folder of shard files written by `floatscope eval --grid`",
      found: (e as NodeJS.ErrnoException).code ?? String(e),
    });
  }
  if (names.length === 0)
    throw new GridError("No shard files in the run to reuse", {
      file: dir,
      field: "--reuse",
      expected: "shard-i-of-n.jsonl files written by `floatscope eval --grid`",
      found: "none",
    });
  const modelOf = new Map(units.map((u) => [u.id, u.model]));
  const taken = new Map<string, ShardRow>();
  const models = new Set<string>();
  const files: string[] = [];
  const unchanged = new Set(key.models.map((m) => m.name));
  for (const name of names) {
    const file = path.join(dir, name);
    const prev = readShardFile(file);
    const a = withoutModels(prev.manifest),
      b = withoutModels(key);
    const differ = Object.keys(b).filter((f) => canonicalJson(a[f]) !== canonicalJson(b[f]));
    if (differ.length > 0)
      throw new GridError("The run to reuse is of another grid", {
        file,
        field: `manifest (${differ.join(", ")})`,
        expected: `a run of grid "${key.grid}" with the same settings, seeds, data, units and floatscope ${key.floatscope}; only models may differ`,
        found: `grid "${prev.manifest.grid}" (${prev.manifest.fingerprint.slice(0, 19)}…)`,
        hint: "reuse only a run of this grid file (rows computed another way would be mixed in)",
      });
    const same = new Set(unchangedModels(prev.manifest, key));
    for (const n of [...unchanged]) if (!same.has(n)) unchanged.delete(n);
    // doneKeys: the rows that finished without an error (a later retry of a failed question wins)
    const done = doneKeys(prev.rows);
    for (const r of prev.rows) {
      const model = modelOf.get(r.unit);
      if (model === undefined || !same.has(model) || r.error !== undefined || !done.has(`${r.unit}\n${r.id}`)) continue;
      taken.set(`${r.unit}\n${r.id}`, r);
      models.add(model);
    }
    files.push(file);
  }
  const mine = new Set(units.map((u) => u.model));
  return {
    rows: [...taken.values()],
    models: [...models].sort(),
    changed: key.models.map((m) => m.name).filter((n) => mine.has(n) && !unchanged.has(n)),
    files,
  };
}
