/**
 * `--export <file> [--export-format csv|jsonl|parquet|arrow]`, shared by the commands that print
 * tables (eval, analyze; merge's --out is its table): the table goes to a file pandas, polars or
 * DuckDB read directly (src/util/table-export.ts). A command with several tables writes
 * `<name>-<table>.<ext>`. (`--format` is taken: eval's prompt format.)
 */
import * as path from "node:path";
import { TABLE_FORMATS, formatFromPath, type TableFormat } from "../util/table-export.js";
import { UsageError, type FlagRow } from "./args.js";

export const EXPORT_ROWS: FlagRow[] = [
  { name: "export", type: "string", value: "<file>", help: "also write the table(s) to a file (.csv, .jsonl, .parquet, .arrow)" },
  { name: "export-format", type: "string", value: "<f>", help: `${TABLE_FORMATS.join(" | ")} (default: from --export's extension)` },
];

/** The export target of the parsed flags, or undefined when --export is absent. */
export function exportTarget(
  command: string,
  values: Record<string, string | boolean | undefined>,
): { file: string; format: TableFormat } | undefined {
  if (values.export === undefined) {
    if (values["export-format"] !== undefined)
      throw new UsageError(`--export-format needs --export in \`floatscope ${command}\``, {
        field: "--export-format",
        expected: "--export <file> with it",
        found: String(values["export-format"]),
      });
    return undefined;
  }
  const file = String(values.export);
  let format: TableFormat | undefined;
  const given = values["export-format"];
  if (given !== undefined) {
    if (!(TABLE_FORMATS as readonly string[]).includes(String(given))) {
      throw new UsageError(`Bad --export-format for \`floatscope ${command}\``, {
        field: "--export-format",
        expected: TABLE_FORMATS.join(" | "),
        found: String(given),
      });
    }
    format = given as TableFormat;
  } else format = formatFromPath(file);
  if (!format)
    throw new UsageError(`Unknown table format for \`floatscope ${command}\``, {
      field: "--export",
      expected: "a file ending .csv, .jsonl, .parquet or .arrow, or --export-format",
      found: file,
    });
  return { file, format };
}

/** `<stem>-<table>.<ext>` for one of several tables. */
export function tableFile(file: string, table: string, format: TableFormat): string {
  const ext = path.extname(file);
  const stem = ext ? file.slice(0, -ext.length) : file;
  return `${stem}-${table.replace(/[^A-Za-z0-9_.-]+/g, "_")}${ext || `.${format}`}`;
}
