/**
 * Result tables out to the data ecosystem: CSV, JSON lines, Apache Parquet and Arrow IPC, so pandas,
 * polars, DuckDB and R read what floatscope measured without a converter.
 *
 * One column type per column, decided from the values: integer (all whole numbers in the int32
 * range) → INT32, other numbers → DOUBLE, booleans → BOOLEAN, everything else → text. Lists and
 * objects (a row's gold answers) stay JSON values in JSON lines and are JSON text in the other three
 * (one form every reader takes). Missing values (undefined/null) are empty in CSV, null in JSON lines, null in
 * Parquet/Arrow. NaN is written as null too: JSON has no NaN, and "no value" is what it means here.
 *
 * Files are written to a temporary name and renamed, so a reader never sees half a table.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import * as aq from "arquero";
import { bool, float64, int32, utf8 } from "@uwdata/flechette";
import { parquetWriteBuffer } from "hyparquet-writer";
import { SettingsError } from "./errors.js";

export const TABLE_FORMATS = ["csv", "jsonl", "parquet", "arrow"] as const;
export type TableFormat = (typeof TABLE_FORMATS)[number];

export type Row = Record<string, unknown>;
/** Column types: int → INT32, double → DOUBLE, bool → BOOLEAN, text → UTF-8 string. */
export type ColumnKind = "int" | "double" | "bool" | "text";

/** The format of `file` from its extension (.csv, .jsonl/.ndjson, .parquet, .arrow/.feather/.ipc). */
export function formatFromPath(file: string): TableFormat | undefined {
  const ext = path.extname(file).toLowerCase();
  if (ext === ".csv") return "csv";
  if (ext === ".jsonl" || ext === ".ndjson") return "jsonl";
  if (ext === ".parquet") return "parquet";
  if (ext === ".arrow" || ext === ".feather" || ext === ".ipc") return "arrow";
  return undefined;
}

/** Column names in first-seen order over all rows (or the order given). */
export function columnsOf(rows: readonly Row[], columns?: readonly string[]): string[] {
  if (columns) return [...columns];
  const seen = new Set<string>();
  for (const r of rows) for (const k of Object.keys(r)) seen.add(k);
  return [...seen];
}

function missing(v: unknown): boolean {
  return v === undefined || v === null || (typeof v === "number" && Number.isNaN(v));
}

function kindOf(rows: readonly Row[], col: string): ColumnKind {
  let kind: ColumnKind | undefined;
  for (const r of rows) {
    const v = r[col];
    if (missing(v)) continue;
    const k: ColumnKind =
      typeof v === "boolean"
        ? "bool"
        : typeof v === "number"
          ? Number.isInteger(v) && Math.abs(v) <= 2 ** 31 - 1
            ? "int"
            : "double"
          : "text";
    if (kind === undefined) kind = k;
    else if (kind !== k) {
      if ((kind === "int" && k === "double") || (kind === "double" && k === "int")) kind = "double";
      else return "text";
    }
  }
  return kind ?? "text";
}

function text(v: unknown): string {
  if (typeof v === "string") return v;
  if (typeof v === "number" && !Number.isFinite(v)) return String(v); // ±Infinity in a text column
  return typeof v === "object" ? JSON.stringify(v) : String(v);
}

/** Plain cell values, typed per column (see module doc). */
function normalise(
  rows: readonly Row[],
  cols: readonly string[],
  types: Record<string, ColumnKind> = {},
): { kinds: ColumnKind[]; cells: unknown[][] } {
  const kinds = cols.map((c) => types[c] ?? kindOf(rows, c));
  const cells = cols.map((c, j) =>
    rows.map((r) => {
      const v = r[c];
      if (missing(v)) return null;
      const k = kinds[j];
      if (k === "text") return text(v);
      if (k === "double" || k === "int") {
        if (typeof v !== "number")
          throw new SettingsError("Value does not fit its column type", {
            field: c,
            expected: `a number (${k} column)`,
            found: JSON.stringify(v),
          });
        if (!Number.isFinite(v)) return null;
        if (k === "int" && !Number.isInteger(v))
          throw new SettingsError("Value does not fit its column type", {
            field: c,
            expected: "an integer (int column)",
            found: String(v),
          });
      }
      if (k === "bool" && typeof v !== "boolean")
        throw new SettingsError("Value does not fit its column type", {
          field: c,
          expected: "true or false (bool column)",
          found: JSON.stringify(v),
        });
      return v;
    }),
  );
  return { kinds, cells };
}

function csvCell(v: unknown): string {
  if (v === null) return "";
  const s = String(v);
  return /[",\n\r]/.test(s) ? `"${s.replace(/"/g, '""')}"` : s;
}

/** The table as bytes in one format. */
export interface TableOptions {
  /** Column order (default: first-seen over the rows). */
  columns?: readonly string[];
  /** Fixed types for some columns (default: decided from the values). */
  types?: Record<string, ColumnKind>;
  /** Key–value metadata (Parquet footer; ignored by the other formats). */
  metadata?: Record<string, string>;
}

export function encodeTable(rows: readonly Row[], format: TableFormat, options: TableOptions = {}): Uint8Array {
  const cols = columnsOf(rows, options.columns);
  if (format === "jsonl") {
    // JSON keeps lists and objects as they are; only missing values and NaN become null.
    const lines = rows.map((r) =>
      JSON.stringify(
        Object.fromEntries(cols.map((c) => [c, missing(r[c]) || (typeof r[c] === "number" && !Number.isFinite(r[c])) ? null : r[c]])),
      ),
    );
    return Buffer.from(lines.map((l) => l + "\n").join(""), "utf8");
  }
  const { kinds, cells } = normalise(rows, cols, options.types);
  const n = rows.length;
  if (format === "csv") {
    const lines = [cols.map(csvCell).join(",")];
    for (let i = 0; i < n; i++) lines.push(cols.map((_, j) => csvCell(cells[j][i])).join(","));
    return Buffer.from(lines.join("\n") + "\n", "utf8");
  }
  if (format === "parquet") {
    if (cols.length === 0)
      throw new SettingsError("A Parquet table needs at least one column", { field: "columns", expected: "≥ 1 column", found: "0" });
    const type = { int: "INT32", double: "DOUBLE", bool: "BOOLEAN", text: "STRING" } as const;
    const buf = parquetWriteBuffer({
      columnData: cols.map((name, j) => ({ name, data: cells[j] as never[], type: type[kinds[j]], nullable: true })),
      kvMetadata: options.metadata ? Object.entries(options.metadata).map(([key, value]) => ({ key, value })) : undefined,
      createdBy: "floatscope",
    });
    return new Uint8Array(buf);
  }
  // Arrow IPC (file format, = Feather v2), through arquero's Arrow encoder with explicit column types.
  const data: Record<string, unknown[]> = {};
  cols.forEach((c, j) => {
    data[c] = cells[j];
  });
  const table = aq.table(data);
  const arrowType = { int: int32, double: float64, bool, text: utf8 };
  const types = Object.fromEntries(cols.map((c, j) => [c, arrowType[kinds[j]]()]));
  return aq.toArrowIPC(table, { format: "file", types });
}

/** Write a table atomically (temporary file + rename). The format defaults to the file's extension. */
export function writeTable(file: string, rows: readonly Row[], options: TableOptions & { format?: TableFormat } = {}): TableFormat {
  const format = options.format ?? formatFromPath(file);
  if (!format) {
    throw new SettingsError("Unknown table format", {
      file,
      field: "--format",
      expected: `one of ${TABLE_FORMATS.join(", ")} (or a file ending .csv, .jsonl, .parquet, .arrow)`,
      found: path.extname(file) || "no extension",
    });
  }
  const bytes = encodeTable(rows, format, options);
  fs.mkdirSync(path.dirname(path.resolve(file)), { recursive: true });
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, bytes);
  fs.renameSync(tmp, file);
  return format;
}
