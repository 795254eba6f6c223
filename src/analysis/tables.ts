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
 * A table whose rows have a known shape. arquero's tables are untyped (`objects()` gives `object[]`), so
 * without this a notebook reading an analysis's rows would have to cast; with it `objects()` returns rows
 * with the columns the analysis built. (arquero types its verbs as returning `this`: after `select` or
 * `rename` the row type still lists the original columns.)
 */
export interface Rows<R extends object> extends ColumnTable {
  objects(options?: Parameters<ColumnTable["objects"]>[0]): R[];
}

/** The row of a table with these columns: each column's element type (a typed array's is number). */
export type RowOf<C> = { [K in keyof C]: C[K] extends ArrayLike<infer V> ? V : never };

/**
 * Build a table from named columns; all must have the same length. Typed arrays are used as-is
 * (no copy). Strings and numbers in `constants` become repeated columns. The result's rows are typed
 * from the columns given.
 */
export function longTable<C extends Record<string, Column>, K extends Record<string, string | number | boolean> = Record<never, never>>(
  columns: C,
  constants?: K,
): Rows<RowOf<C> & K> {
  const names = Object.keys(columns);
  const n = names.length ? columns[names[0]].length : 0;
  for (const name of names) {
    if (columns[name].length !== n) throw new Error(`longTable: column ${name} has ${columns[name].length} rows, expected ${n}`);
  }
  const all: Record<string, Column> = {};
  for (const [k, v] of Object.entries(constants ?? {})) all[k] = new Array(n).fill(v);
  Object.assign(all, columns);
  // The one place rows get their type: the columns just checked are exactly the ones typed.
  return aq.table(all as Record<string, ArrayLike<unknown>>) as Rows<RowOf<C> & K>;
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

/** Concatenate tables with the same columns (empty list → empty table with no columns, so no rows). */
export function concatTables<T extends ColumnTable>(tables: T[]): T {
  if (tables.length === 0) return aq.table({}) as T;
  return tables.length === 1 ? tables[0] : tables[0].concat(...tables.slice(1));
}

/** Sample labels: the given ones, or the trace's `settings.sampleId`/`settings.id`, or the index. */
export function sampleLabel(settings: Record<string, unknown>, index: number, given?: string[]): string {
  if (given && given[index] !== undefined) return given[index];
  const id = settings.sampleId ?? settings.id;
  return typeof id === "string" || typeof id === "number" ? String(id) : String(index);
}
