/**
 * The one place CLI commands check a path they are about to read: a grid file, a data file, a
 * trace, a checkpoint folder, a shard folder and the shard files found in it, the files a grid
 * names. Each check looks at the path with stat/lstat (src/util/paths.ts), never by opening it:
 * opening a FIFO for reading blocks until a writer appears, so `floatscope status fifo` would hang
 * instead of failing. A symlink is followed by stat, so a link to a FIFO is a FIFO here too.
 *
 * A path of the wrong kind (a FIFO, socket or device, a folder where a file is expected or a file
 * where a folder is, a dangling link, a link loop, nothing at all) is one typed error (exit 1; the
 * class of what the path is for: CheckpointError, GridError, TraceFormatError…, else PathError)
 * whose first line names the argument, the path, what is there and what was expected.
 *
 * Output paths are checked in outputs.ts. Every path argument of every command is declared in the
 * command's `paths` (commands.ts) and exercised by test/cli/every-command-paths.test.ts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { shardFilesIn } from "../grid/merge.js";
import { PRESET_FILE } from "../model/presets.js";
import { CheckpointError, GridError, type FloatscopeError } from "../util/errors.js";
import { describeKind, inspectPath, PathError, readable, type ErrorClass, type PathInfo, type PathKind } from "../util/paths.js";

export interface InputSpec {
  /** The command ("status"), for the message. */
  command: string;
  /** The argument as the help names it: "<trace>", "--grid", "datasets.heldout (in the grid file)". */
  arg: string;
  /** What the path is for, in words: "trace file", "shard folder or shard file". */
  what: string;
  /** What to do instead, when there is something better to say than "give <expected>". */
  hint?: string;
  /** Error class (default PathError, exit 1). */
  error?: ErrorClass;
}

const EXPECTED = {
  file: "a regular file",
  folder: "a folder",
  "file or folder": "a regular file or a folder",
} as const;

export type Expects = keyof typeof EXPECTED;

function accepts(expects: Expects, kind: PathKind): boolean {
  if (kind === "file") return expects !== "folder";
  if (kind === "directory") return expects !== "file";
  return false;
}

/** The user's spelling of the path plus, when it differs, where it resolves. */
function shown(given: string, info: PathInfo): string {
  return path.resolve(given) === given ? given : `${given} (${info.path})`;
}

function refuse(given: string, info: PathInfo, expects: Expects, spec: InputSpec, found = describeKind(info.kind)): FloatscopeError {
  const E = spec.error ?? PathError;
  const expected = `${EXPECTED[expects]} (${spec.what})`;
  const what = info.kind === "missing" ? "does not exist" : `is ${found}`;
  return new E(`${spec.arg} ${shown(given, info)} ${what}; expected ${expected}`, {
    file: info.path,
    field: spec.arg,
    expected,
    found,
    hint: spec.hint,
  });
}

/**
 * Check that `p` is what `expects` says and readable; returns what is there. Never opens `p`.
 */
export function inputPath(p: string, expects: Expects, spec: InputSpec): PathInfo {
  const info = inspectPath(p);
  if (!accepts(expects, info.kind)) throw refuse(p, info, expects, spec);
  const mode = info.kind === "directory" ? fs.constants.R_OK | fs.constants.X_OK : fs.constants.R_OK;
  if (!readable(info.path, mode)) throw refuse(p, info, expects, spec, "not readable (permission denied)");
  return info;
}

/** A regular file to read; returns its absolute path. */
export function inputFile(p: string, spec: InputSpec): string {
  return inputPath(p, "file", spec).path;
}

/** A folder to read; returns its absolute path. */
export function inputFolder(p: string, spec: InputSpec): string {
  return inputPath(p, "folder", spec).path;
}

/**
 * The entries of folder `dir` that `take` selects, each checked as a regular file (a FIFO named
 * shard-1-of-2.jsonl inside a shard folder is refused here, before anything opens it). Returns
 * their paths (dir joined with the name, as given), sorted by name.
 */
export function inputFilesIn(dir: string, take: (name: string) => boolean, spec: InputSpec): string[] {
  const names = fs.readdirSync(dir).filter(take).sort();
  return names.map((n) => {
    const p = path.join(dir, n);
    inputPath(p, "file", spec);
    return p;
  });
}

/**
 * A checkpoint argument: a folder (config.json, *.safetensors, tokenizer files, each checked by
 * openCheckpoint as it reads it) or a .gguf file. Returns the path as given.
 */
export function checkpointInput(command: string, p: string, arg = "<checkpoint>"): string {
  const info = inputPath(p, "file or folder", {
    command,
    arg,
    what: "checkpoint folder or .gguf file",
    hint: "give a folder with config.json and *.safetensors, or a .gguf file",
    error: CheckpointError,
  });
  // The preset file is optional and read with a plain readFileSync (src/model/presets.ts): when
  // something has its name, it must be a regular file.
  const preset = path.join(p, PRESET_FILE);
  if (info.kind === "directory" && inspectPath(preset).kind !== "missing")
    inputFile(preset, { command, arg, what: `checkpoint preset (${PRESET_FILE})`, error: CheckpointError });
  return p;
}

/**
 * The shard files named on a `merge` / `status` command line: each argument a shard file or a
 * folder of them (shardFilesIn, src/grid/merge.ts, picks shard-<i>-of-<n>.jsonl), every argument
 * and every file found in a folder checked here before any is opened.
 */
export function shardInputs(command: string, args: readonly string[]): string[] {
  const spec = { command, arg: "<shards>", what: "shard folder or shard file of `floatscope eval --grid`", error: GridError };
  for (const a of args) inputPath(a, "file or folder", spec);
  return shardFilesIn(args).map((f) => {
    inputFile(f, { ...spec, what: "shard file" });
    return f;
  });
}
