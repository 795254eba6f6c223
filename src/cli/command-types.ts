/**
 * What a `floatscope` command is (`CliCommand`) and what it declares about its path arguments. Each
 * command file exports its `command: CliCommand` with these types; the command table (commands.ts)
 * only imports the command files, so no command file imports the table back.
 */
import type { CliIO, FlagSpec } from "./args.js";

export interface CliCommand {
  /** Full help text printed for `floatscope <name> --help`. */
  help: string;
  /**
   * Every flag `run` parses (for eval, with those of `eval --grid`). test/cli/help-flags.test.ts
   * checks that each is in `help` and that `help` names no other.
   */
  flags: FlagSpec;
  /**
   * Every path the command reads or writes. Required, so a new command says what it opens:
   * test/cli/every-command-paths.test.ts feeds each one a FIFO, a folder-as-file (or file-as-folder)
   * and a dangling link and expects one message and a non-zero exit within 2 s, never a hang.
   */
  paths: PathArgument[];
  /** Returns the process exit code. */
  run(argv: string[], io: CliIO): Promise<number>;
}

/** A path argument of a command (see `CliCommand.paths`). */
export interface PathArgument {
  /** As the help names it: "<trace>", "--data", "models[] (in the grid file)". */
  arg: string;
  /** Read (checked by inputs.ts) or written (outputs.ts). */
  role: "input" | "output";
  /** What must be there ("file or folder": a checkpoint folder or .gguf file, a shard folder or shard file). */
  expects: "file" | "folder" | "file or folder";
  /** The file name the test gives the hostile path (the extension can matter: .gguf, .jsonl). */
  name: string;
  /** For a folder argument: files the command reads inside it, which the test makes FIFOs (one at a time). */
  inside?: string[];
  /** A valid folder for this argument: the test links its files into the folder around the FIFO. */
  like?: (f: PathFixtures) => string;
  /** A command line (after the command name) with `p` in this argument and everything else valid. */
  example(p: string, f: PathFixtures): string[];
}

/**
 * A checkpoint, wherever a command is given one (its argument, or `models[]` of a grid file): a folder
 * whose config.json and preset the command reads, or a .gguf file.
 */
export const CHECKPOINT_INPUT: Pick<PathArgument, "role" | "expects" | "name" | "inside" | "like"> = {
  role: "input",
  expects: "file or folder",
  name: "model",
  inside: ["config.json", "floatscope-preset.json"],
  like: (f) => f.model,
};

/** The checkpoint argument of inspect, forward, generate and eval: `rest` follows the path in the example. */
export function checkpointPath(rest: (f: PathFixtures) => string[]): PathArgument {
  return { ...CHECKPOINT_INPUT, arg: "<checkpoint>", example: (p, f) => [p, ...rest(f)] };
}

/** The shard files or folder of merge and status (a grid run's output): `rest` follows the path in the example. */
export function shardsPath(rest: (f: PathFixtures) => string[]): PathArgument {
  return {
    arg: "<shards>",
    role: "input",
    expects: "file or folder",
    name: "shards",
    inside: ["shard-1-of-1.jsonl"],
    example: (p, f) => [p, ...rest(f)],
  };
}

/** Valid inputs the test supplies, so that the hostile path is what a command trips on. */
export interface PathFixtures {
  /** A checkpoint folder that opens. */
  model: string;
  /** A QA data file. */
  data: string;
  /** A folder for outputs that do not exist yet ("<tmp>/x.jsonl" is a fine output name). */
  tmp: string;
  /** A grid file over `model` and `data`; `model` / `data` replace those paths in it. */
  grid(replace?: { model?: string; data?: string }): string;
  /** A complete trace file. */
  trace: string;
}
