/**
 * Long-table builders shared by every analysis.
 *
 * Definition: an analysis result is one arquero table in long format — one row per
 * (model, sample, step, layer, head, position, …) cell with a `value` column — built straight from
 * typed arrays so a notebook can `filter`, `groupby` and `join` without copies.
 * Upstream has no tables: each script reduces npz arrays straight into a matplotlib call.
 */
import * as aq from "arquero";
import type { ColumnTable } from "arquero";

export type { ColumnTable };

/** A column: a typed array or a plain array (strings, booleans, nulls). */
export type Column = ArrayLike<unknown> & Iterable<unknown>;

/**
 * Build a table from named columns; all must have the same length. Typed arrays are used as-is
 * (no copy). Strings and numbers in `constants` become repeated columns.
 */
export function longTable(columns: Record<string, Column>, constants: Record<string, string | number | boolean> = {}): ColumnTable {
  const names = Object.keys(columns);
  const n = names.length ? columns[names[0]].length : 0;
  for (const name of names) {
    if (columns[name].length !== n) throw new Error(`longTable: column ${name} has ${columns[name].length} rows, expected ${n}`);
  }
  const all: Record<string, Column> = {};
  for (const [k, v] of Object.entries(constants)) all[k] = new Array(n).fill(v);
  Object.assign(all, columns);
  return aq.table(all as Record<string, ArrayLike<unknown>>);
}

/**
 * Flatten a row-major tensor into index columns plus `value`:
 * `tensorTable(data, [2, 3], ["layer", "key"])` gives 6 rows with `layer`, `key`, `value`.
 */
export function tensorTable(
  data: ArrayLike<number>,
  dims: number[],
  axes: string[],
  constants: Record<string, string | number | boolean> = {},
  valueName = "value",
): ColumnTable {
  const n = dims.reduce((a, b) => a * b, 1);
  if (data.length !== n) throw new Error(`tensorTable: data has ${data.length} values, dims [${dims}] need ${n}`);
  const cols: Record<string, Column> = {};
  let stride = n;
  for (let a = 0; a < dims.length; a++) {
    stride /= dims[a];
    const col = new Int32Array(n);
    for (let i = 0; i < n; i++) col[i] = Math.floor(i / stride) % dims[a];
    cols[axes[a]] = col;
  }
  cols[valueName] = data as Column;
  return longTable(cols, constants);
}

/** Concatenate tables with the same columns (empty list → empty table with no columns). */
export function concatTables(tables: ColumnTable[]): ColumnTable {
  if (tables.length === 0) return aq.table({});
  return tables.length === 1 ? tables[0] : tables[0].concat(...tables.slice(1));
}

/** Sample labels: the given ones, or the trace's `settings.sampleId`/`settings.id`, or the index. */
export function sampleLabel(settings: Record<string, unknown>, index: number, given?: string[]): string {
  if (given && given[index] !== undefined) return given[index];
  const id = settings.sampleId ?? settings.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : String(index);
}
