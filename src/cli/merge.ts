/**
 * `floatscope merge <dir | shard files…> --out table.{jsonl,csv,parquet,arrow}`: the shards of one
 * `floatscope eval --grid` run → the grid's result table, the same table an unsharded run gives
 * (src/grid/merge.ts). Refuses shards of different runs and duplicate results; lists what is missing
 * and fails on it unless --partial.
 */
import { GRID_COLUMNS, GRID_TYPES, mergeShards } from "../grid/merge.js";
import * as fs from "node:fs";
import { GridError, keyword } from "../util/errors.js";
import { gridFindingsFile } from "./grid-findings.js";
import { TABLE_FORMATS, formatFromPath, writeTable, type TableFormat } from "../util/table-export.js";
import { flagHelp, flagSpec, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { shardsPath, type CliCommand } from "./command-types.js";
import { shardInputs } from "./inputs.js";
import { outputFile } from "./outputs.js";

/** The flags of `floatscope merge`: the parse options and the help both come from here. */
const MERGE_ROWS: FlagRow[] = [
  { name: "out", type: "string", value: "<file>", help: "the merged table (.jsonl, .csv, .parquet or .arrow)" },
  { name: "format", type: "string", value: "<f>", help: `${TABLE_FORMATS.join(" | ")} (default: from --out's extension)` },
  { name: "partial", type: "boolean", help: "write what there is (failed questions as rows with their error)" },
  {
    name: "findings",
    type: "string",
    value: "<file>",
    help: ["also write the grid's measures as findings (JSON; a grid with `measures`),", "the file scripts/render-claims.ts reads"],
  },
];

const HELP = `Usage: floatscope merge <shard-dir | shard files…> --out <table> [--format f] [--partial] [--findings f]

Combines the shard files of one grid run (floatscope eval --grid … --shard i/n) into one table: a row
per (work unit, question), units in grid order, without timings, so it equals an unsharded run's.
Refuses shards whose manifests differ (grid, models, data, floatscope version), two files for one
shard, and a question answered in two shards; lists what is missing and exits 1 unless --partial.
A grid that records measures (docs/claims.md, "Claims on a grid") pools them per model; --findings
writes them as the findings CLAIMS.md is built from, the same bytes whatever the sharding.

${flagHelp(MERGE_ROWS, 21)}
  -h, --help         this help`;

export const command: CliCommand = {
  help: HELP,
  flags: flagSpec(MERGE_ROWS),
  paths: [
    shardsPath((f) => ["--out", `${f.tmp}/merged.jsonl`]),
    // Outputs are checked before any shard is read, so the input here need not be a shard.
    { arg: "--out", role: "output", expects: "file", name: "merged.jsonl", example: (p, f) => [f.data, "--out", p] },
    {
      arg: "--findings",
      role: "output",
      expects: "file",
      name: "grid.findings.json",
      example: (p, f) => [f.data, "--out", `${f.tmp}/merged.jsonl`, "--findings", p],
    },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("merge", argv, flagSpec(MERGE_ROWS));
    if (positionals.length === 0)
      throw new UsageError("`floatscope merge` needs shard files", {
        field: "<shards>",
        expected: "a folder of shard-*.jsonl or the files",
        found: "nothing",
      });
    if (v.out === undefined)
      throw new UsageError("`floatscope merge` needs --out", {
        field: "--out",
        expected: "the merged table's path, e.g. grid.parquet",
        found: "nothing",
      });
    const out = String(v.out);
    let format: TableFormat | undefined;
    try {
      format = v.format !== undefined ? keyword<TableFormat>(v.format, TABLE_FORMATS, { field: "--format" }) : formatFromPath(out);
    } catch (e) {
      throw new UsageError("Bad --format", {
        field: "--format",
        expected: TABLE_FORMATS.join(" | "),
        found: String(v.format),
        hint: e instanceof Error ? e.message.split("\n")[0] : undefined,
      });
    }
    if (!format)
      throw new UsageError("Unknown table format", {
        field: "--out",
        expected: "a name ending .jsonl, .csv, .parquet or .arrow, or --format",
        found: out,
      });
    // The table is written to a temporary name and renamed; its folder is made as before (no --mkdir here).
    outputFile("merge", "out", out, true, io);
    const findingsOut = v.findings === undefined ? undefined : outputFile("merge", "findings", String(v.findings), true, io);
    const files = shardInputs("merge", positionals);
    const r = mergeShards(files, { partial: !!v.partial });
    const findings = findingsOut === undefined ? null : gridFindingsFile(r);
    if (findingsOut !== undefined && !findings)
      throw new GridError("This grid records no measures: there are no findings to write", {
        file: files[0],
        field: "manifest.measures",
        expected: 'a grid run with "measures" (e.g. ["sink"])',
        found: "none",
        hint: "drop --findings, or add measures to the grid and run it again",
      });
    const p = r.progress;
    if (!r.complete) {
      io.err(`merge: grid "${p.manifest.grid}" is incomplete (${p.shardsPresent.length}/${p.shardCount} shard files):`);
      for (const line of r.missing) io.err(`  ${line}`);
      if (!v.partial) {
        io.err("merge: nothing written; finish (rerun) the shards above, or pass --partial");
        return 1;
      }
    }
    writeTable(out, r.rows as unknown as Record<string, unknown>[], {
      format,
      columns: GRID_COLUMNS,
      types: GRID_TYPES,
      metadata: {
        "floatscope.grid": p.manifest.grid,
        "floatscope.version": p.manifest.floatscope,
        "floatscope.fingerprint": p.manifest.fingerprint,
      },
    });
    if (findingsOut !== undefined && findings) {
      fs.writeFileSync(findingsOut, JSON.stringify(findings, null, 1) + "\n");
      io.out(`wrote ${findings.findings.length} findings of grid "${p.manifest.grid}" → ${findingsOut}`);
    }
    io.out(
      `merged ${files.length} shard file(s) of grid "${p.manifest.grid}" (${p.shardCount} shards, ${p.units.length} units): ${r.rows.length} rows → ${out} (${format})${r.complete ? "" : " — PARTIAL"}`,
    );
    return r.complete ? 0 : 1;
  },
};
