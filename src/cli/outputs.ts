/**
 * Output paths of CLI commands (`--out`, `--trace`, `--traces`), checked before any work starts:
 * a file path must be a new name or a regular file, and its folder must exist — it is created
 * only with `--mkdir`, and each folder created is said on stderr. Problems are usage errors (2).
 */
import { checkOutputDirectory, checkOutputFile } from "../util/paths.js";
import { UsageError, type CliIO, type FlagRow } from "./args.js";

/** The flag every command with an output takes. */
export const MKDIR_ROW: FlagRow = { name: "mkdir", type: "boolean", help: "create missing folders of the output paths (said on stderr)" };

function announce(command: string, io: CliIO) {
  return (dir: string) => io.err(`floatscope ${command}: created folder ${dir}`);
}

/** Check an output file flag; returns its absolute path. */
export function outputFile(command: string, flag: string, value: string, mkdir: boolean, io: CliIO): string {
  return checkOutputFile(value, {
    what: `--${flag} file`,
    field: `--${flag}`,
    error: UsageError,
    mkdir,
    onCreate: announce(command, io),
    mkdirHint: "create it, or pass --mkdir",
  });
}

/** Check (and create when missing, saying so) an output folder flag; returns its absolute path. */
export function outputDirectory(command: string, flag: string, value: string, mkdir: boolean, io: CliIO): string {
  return checkOutputDirectory(value, {
    what: `--${flag} folder`,
    field: `--${flag}`,
    error: UsageError,
    mkdir,
    onCreate: announce(command, io),
    mkdirHint: "create it, or pass --mkdir",
  });
}
