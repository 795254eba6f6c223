/**
 * arquero tables → MIME bundles (`text/html` via the table's own `toHTML`, plus `text/plain`).
 *
 * Detected by shape, not by `instanceof`: a notebook may load a different copy of arquero than
 * the library, and the display module should not import arquero just to recognise a table.
 */
import { escapeMarkup } from "../figures/svg.js";
import type { MimeBundle } from "./mime.js";
import { displayToken, inferTokenizerKind } from "../protocol/token-text.js";

/** arquero's per-column cell formatters. */
export type CellFormats = Record<string, (value: unknown) => string>;

/** The part of arquero's ColumnTable API we use. */
export interface TableLike {
  numRows(): number;
  numCols(): number;
  columnNames(): string[];
  toHTML(options?: { limit?: number; format?: CellFormats }): string;
  toMarkdown(options?: { limit?: number; format?: CellFormats }): string;
}

/** True for arquero tables (and anything with the same methods). */
export function isTableLike(x: unknown): x is TableLike {
  if (typeof x !== "object" || x === null) return false;
  const t = x as Record<string, unknown>;
  return ["numRows", "numCols", "columnNames", "toHTML", "toMarkdown"].every((m) => typeof t[m] === "function");
}

/** Rows shown in the HTML table; the caption says how many there are in total. */
export const TABLE_HTML_ROWS = 50;
/** Rows shown in text/plain. */
export const TABLE_TEXT_ROWS = 10;

export function tableBundle(table: TableLike): MimeBundle {
  const rows = table.numRows();
  const cols = table.numCols();
  const shape = `${rows} row${rows === 1 ? "" : "s"} × ${cols} column${cols === 1 ? "" : "s"}`;
  const shown = Math.min(rows, TABLE_HTML_ROWS);
  const caption = rows > shown ? `${shape} (first ${shown} shown)` : shape;
  const format = tokenFormats(table);
  const html = escapeHeader(table.toHTML({ limit: TABLE_HTML_ROWS, format }), table);
  const textRows = Math.min(rows, TABLE_TEXT_ROWS);
  const text =
    `Table: ${shape}` +
    (cols ? `\n${table.toMarkdown({ limit: TABLE_TEXT_ROWS, format }).trimEnd()}` : "") +
    (rows > textRows ? `\n… ${rows - textRows} more rows` : "");
  return {
    "text/html": `<div class="floatscope-table"><div style="color:#555;font-size:0.9em">${escapeMarkup(caption)}</div>${html}</div>`,
    "text/plain": text,
  };
}

/**
 * arquero escapes cell values but inserts column names into <th> raw, so the header is rebuilt
 * here. Cell bodies are escaped, so the last "</thead>" is the real end of the header even when
 * a column name contains that string.
 */
function escapeHeader(html: string, table: TableLike): string {
  const start = html.indexOf("<thead>");
  const end = html.lastIndexOf("</thead>");
  if (start < 0 || end < start) return html;
  const get = (table as { get?: (name: string, row: number) => unknown }).get;
  const cells = table.columnNames().map((name) => {
    const first = typeof get === "function" && table.numRows() > 0 ? get.call(table, name, 0) : undefined;
    const align = typeof first === "number" || typeof first === "bigint" ? "right" : "left";
    return `<th style="text-align: ${align};">${escapeMarkup(name)}</th>`;
  });
  return html.slice(0, start) + `<thead><tr>${cells.join("")}</tr>` + html.slice(end);
}

/**
 * A formatter for each column that holds token text of a byte-level BPE or SentencePiece vocabulary
 * (decided from the column's own strings, protocol/token-text.ts), so a token column reads "·helpful",
 * "↵" instead of "Ġhelpful", "Ċ". Other columns (names, numbers, plain words) keep arquero's own format.
 */
export function tokenFormats(table: TableLike): CellFormats {
  const array = (table as { array?: (name: string) => ArrayLike<unknown> }).array;
  if (typeof array !== "function") return {};
  const out: CellFormats = {};
  for (const name of table.columnNames()) {
    const strings = Array.from(array.call(table, name)).filter((v): v is string => typeof v === "string");
    if (strings.length === 0) continue;
    const kind = inferTokenizerKind(strings);
    if (kind === "plain") continue;
    out[name] = (v) => (v === null || v === undefined ? "" : typeof v === "string" ? displayToken(v, kind) : String(v));
  }
  return out;
}
