/**
 * `floatscope eval --grid grid.json [--shard i/n] [--out dir]`: run one shard of an evaluation grid
 * (src/grid/grid.ts, docs/cluster.md) into `<dir>/shard-i-of-n.jsonl`, resumably. SIGTERM/SIGINT
 * (Slurm's scancel, a pre-empted node, Ctrl-C) stop after the current batch with every finished row
 * saved; running the same command again continues.
 */
import * as path from "node:path";
import { defaultRunFolder, parseShard, readGrid } from "../grid/grid.js";
import { reusableRows } from "../grid/reuse.js";
import { prepareGrid, runShard, SHARD_FILE_NAME, shardFileName } from "../grid/shard.js";
import { GridError } from "../util/errors.js";
import { inspectPath } from "../util/paths.js";
import { flagHelp, flagSpec, intList, parseFlags, UsageError, type CliIO, type FlagRow, type FlagSpec } from "./args.js";
import { runtimeOptions, runtimeRows } from "./runtime-flags.js";
import { CHECKPOINT_INPUT, type PathArgument } from "./command-types.js";
import { EXIT } from "./exit.js";
import { checkpointInput, inputFile, inputFilesIn, inputFolder, inputPath } from "./inputs.js";
import { outputDirectory } from "./outputs.js";

/** The paths `eval --grid` reads and writes (part of eval's `paths`). */
export const GRID_PATHS: PathArgument[] = [
  { arg: "--grid", role: "input", expects: "file", name: "grid.json", example: (p) => ["--grid", p] },
  { ...CHECKPOINT_INPUT, arg: "models[] (in the grid file)", example: (p, f) => ["--grid", f.grid({ model: p })] },
  {
    arg: "datasets[] (in the grid file)",
    role: "input",
    expects: "file",
    name: "data.jsonl",
    example: (p, f) => ["--grid", f.grid({ data: p })],
  },
  {
    arg: "--out (eval --grid)",
    role: "output",
    expects: "folder",
    name: "runs",
    inside: ["shard-1-of-1.jsonl"],
    example: (p, f) => ["--grid", f.grid(), "--out", p],
  },
  {
    arg: "--reuse",
    role: "input",
    expects: "folder",
    name: "old-run",
    inside: ["shard-1-of-1.jsonl"],
    example: (p, f) => ["--grid", f.grid(), "--out", `${f.tmp}/new-run`, "--reuse", p],
  },
];

/**
 * The files `fingerprintModel` (src/grid/shard.ts) hashes in a checkpoint folder: all of them are
 * opened (the preset file, read by presetOf, is checked by checkpointInput).
 */
const FINGERPRINTED = /^(config|generation_config|tokenizer|tokenizer_config)\.json$|\.safetensors$|\.safetensors\.index\.json$|\.gguf$/;

/**
 * Every path the grid names, checked before any is opened: the dataset files are read whole and
 * hashed, and each model path is a checkpoint folder (whose files openCheckpoint checks one by one)
 * or a .gguf file.
 */
function checkGridPaths(grid: ReturnType<typeof readGrid>): void {
  for (const d of grid.datasets)
    inputFile(d.path, {
      command: "eval",
      arg: `datasets.${d.name} (in ${grid.file})`,
      what: "QA data file (jsonl or jsonl.gz)",
      error: GridError,
    });
  for (const m of grid.models) {
    const spec = { command: "eval", arg: `models.${m.name} (in ${grid.file})`, what: "checkpoint folder or .gguf file", error: GridError };
    if (inputPath(m.path, "file or folder", spec).kind !== "directory") continue;
    checkpointInput("eval", m.path, spec.arg);
    inputFilesIn(m.path, (n) => FINGERPRINTED.test(n), { ...spec, what: "checkpoint file (config, tokenizer or weights)" });
  }
}

/** The flags of `floatscope eval --grid`: its parse options and help lines come from here. */
const GRID_ROWS: FlagRow[] = [
  { name: "grid", type: "string", value: "<file>", help: "grid spec (JSON)" },
  { name: "shard", type: "string", value: "<i/n>", help: "which share to run", default: "1/1" },
  { name: "out", type: "string", value: "<dir>", help: "folder for shard files (default grid-runs/<grid name>)" },
  { name: "reuse", type: "string", value: "<dir>", help: "copy the rows of an earlier run of this grid for the models unchanged since" },
  { name: "batch-size", type: "string", value: "<n>", help: "questions per forward batch (default: the grid's, 8)" },
  ...runtimeRows("device", "threads", "quantized-weights", "no-kv-cache"),
];

export const GRID_FLAGS: FlagSpec = flagSpec(GRID_ROWS);

export const GRID_HELP = `Usage: floatscope eval --grid <grid.json> [--shard i/n] [--out <dir>] [options]

Runs shard i of n (1-based; default 1/1, the whole grid) of an evaluation grid: models × datasets ×
settings × seeds (docs/cluster.md). Rows go to <dir>/shard-i-of-n.jsonl with a manifest (floatscope
version, settings, seeds, model and data hashes); rerunning resumes. Then: floatscope merge <dir>.
After a model changed (retrained, re-exported), --reuse <old dir> with a new --out copies the old run's
rows of the other models and decodes only the changed model's units.
A grid with "measures" (["sink", "absorption", "drift", "token-types"]: each question's first-token
sink, absorption, anchor drift and anchor token types per layer) also records those attention numbers
in its rows, decoding with the probes they need; merge pools them into the findings CLAIMS.md is built
from (docs/claims.md, "Claims on a grid").

${flagHelp(GRID_ROWS, 25)}
  -h, --help             this help`;

export async function runGridEval(argv: string[], io: CliIO): Promise<number> {
  const { values: v, positionals } = parseFlags("eval", argv, GRID_FLAGS);
  if (positionals.length)
    throw new UsageError("`floatscope eval --grid` takes no model folder (the grid names the models)", {
      field: "<model-dir>",
      expected: "no positional arguments",
      found: positionals.join(" "),
    });
  const gridFile = String(v.grid);
  let shard: { index: number; count: number };
  try {
    shard = parseShard(String(v.shard ?? "1/1"));
  } catch {
    throw new UsageError("Bad --shard", { field: "--shard", expected: "i/n with 1 ≤ i ≤ n, e.g. 2/4", found: JSON.stringify(v.shard) });
  }
  const int = (flag: string) => (v[flag] === undefined ? undefined : intList("eval", flag, String(v[flag]))[0]);
  const { device, threads, quantizedWeights, kvCache } = runtimeOptions("eval", v);
  const grid = readGrid(inputFile(gridFile, { command: "eval", arg: "--grid", what: "grid file (JSON)", error: GridError }));
  checkGridPaths(grid);
  // the earlier run's folder and each shard file in it, checked before any is read (a FIFO would block) and before --out is created
  const reuseSpec = { command: "eval", arg: "--reuse", what: "run folder (shard files of an earlier run of this grid)", error: GridError };
  const reuseDir = v.reuse === undefined ? undefined : inputFolder(String(v.reuse), reuseSpec);
  if (reuseDir !== undefined) inputFilesIn(reuseDir, (n) => SHARD_FILE_NAME.test(n), { ...reuseSpec, what: "shard file" });
  // The shard folder is created when missing (as it always was); when it exists, the shard file in
  // it is read to resume, so it must be a regular file or not there yet.
  const outDir = outputDirectory("eval", "out", String(v.out ?? defaultRunFolder(grid)), true, io);
  const shardFile = path.join(outDir, shardFileName(shard.index, shard.count));
  if (inspectPath(shardFile).kind !== "missing")
    inputFile(shardFile, { command: "eval", arg: "--out", what: "shard file to resume (written by an earlier run)", error: GridError });
  const pg = await prepareGrid(grid);
  const controller = new AbortController();
  const stop = (sig: string) => () => {
    io.err(`eval: ${sig}: stopping after the current batch (finished rows are saved; rerun to resume)`);
    controller.abort();
  };
  const onTerm = stop("SIGTERM"),
    onInt = stop("SIGINT");
  process.once("SIGTERM", onTerm);
  process.once("SIGINT", onInt);
  const t0 = Date.now();
  let lastUnit = "";
  try {
    const s = await runShard(pg, {
      index: shard.index,
      count: shard.count,
      outDir,
      threads,
      device,
      quantizedWeights,
      kvCache,
      batchSize: int("batch-size"),
      signal: controller.signal,
      ...(reuseDir !== undefined
        ? {
            reuse: (key, units) => {
              const r = reusableRows(reuseDir, key, units);
              io.err(
                `eval: --reuse ${reuseDir}: ${r.rows.length} rows of ${r.models.join(", ") || "no model"} taken from ${r.files.length} shard file(s); decoded again: ${r.changed.join(", ") || "nothing (no model changed)"}`,
              );
              return r.rows;
            },
          }
        : {}),
      warn: io.err,
      onProgress: (p) => {
        if (p.unit.id !== lastUnit || p.questionsDone === p.questions) {
          lastUnit = p.unit.id;
          io.err(
            `eval: shard ${shard.index}/${shard.count}: unit ${p.unitsDone + 1}/${p.units} ${p.unit.id} · ${p.questionsDone}/${p.questions} questions (${p.resumed} resumed, ${p.errors} errors)`,
          );
        }
      },
    });
    const secs = ((Date.now() - t0) / 1000).toFixed(1);
    io.out(
      `shard ${shard.index}/${shard.count} of grid "${grid.name}": ${s.units} units, ${s.questions} questions — ran ${s.ran}, resumed ${s.resumed}, ${s.errors} errors, ${secs} s → ${s.file}`,
    );
    if (s.aborted) {
      io.err(`eval: interrupted; rerun the same command to continue`);
      return EXIT.interrupted;
    }
    if (s.errors > 0) {
      io.err(`eval: ${s.errors} questions failed (their rows carry the error); rerunning retries them`);
      return 1;
    }
    return 0;
  } finally {
    process.off("SIGTERM", onTerm);
    process.off("SIGINT", onInt);
  }
}
