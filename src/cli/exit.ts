/**
 * The CLI's exit-code contract and its one error handler, shared by every command:
 *
 *   0  ok
 *   1  failure: the command line was fine, but what it points at or the run failed (a bad or
 *      missing checkpoint, trace or data file, a memory/trace budget refusal, onnxruntime)
 *   2  usage: the command line itself is wrong (unknown command or flag, a bad or out-of-range
 *      value, a missing or conflicting argument, settings the sampler refuses, an output path
 *      that cannot be used, an input longer than the model's positions)
 *   130 interrupted (Ctrl-C) after a partial result was saved
 *
 * A command throws; `reportError` turns any error into one message and its code. Stack traces
 * are shown only with `--debug` (or FLOATSCOPE_DEBUG=1). A new command needs nothing: errors
 * thrown from `run()` reach this handler through main.ts.
 */
import { FloatscopeError, SettingsError } from "../util/errors.js";
import { describeKind, inspectPath } from "../util/paths.js";
import { UsageError, type CliIO } from "./args.js";

export const EXIT = { ok: 0, failure: 1, usage: 2, interrupted: 130 } as const;

/** The code for an error: 2 for usage/settings errors, 1 for everything else. */
export function exitCodeFor(e: unknown): number {
  return e instanceof SettingsError ? EXIT.usage : EXIT.failure;
}

/** A Node system error (ENOENT, EISDIR, EACCES…) that escaped a command. */
function systemErrorLine(e: NodeJS.ErrnoException): string | undefined {
  if (typeof e.code !== "string" || !/^E[A-Z]+$/.test(e.code)) return undefined;
  const where = e.path ? ` ${e.path}` : "";
  const what = e.path ? `; it is ${describeKind(inspectPath(e.path).kind)}` : "";
  return `cannot ${e.syscall ?? "access"}${where}: ${e.code}${what}`;
}

/**
 * Print one message for `e` and return the exit code. `command` is the subcommand name, when
 * known. With `debug`, the stack trace follows the message.
 */
export function reportError(e: unknown, command: string | undefined, io: CliIO, debug = false): number {
  const prefix = command ? `floatscope ${command}` : "floatscope";
  let line: string;
  if (e instanceof UsageError) {
    line = `${prefix}: ${e.message}`;
  } else if (e instanceof FloatscopeError) {
    line = `${prefix}: ${e.name}: ${e.message}`;
  } else if (e instanceof Error && systemErrorLine(e as NodeJS.ErrnoException)) {
    line = `${prefix}: ${systemErrorLine(e as NodeJS.ErrnoException)}`;
  } else {
    const msg = e instanceof Error ? `${e.name}: ${e.message}` : String(e);
    line = `${prefix}: internal error: ${msg.split("\n")[0].slice(0, 500)}\n  this is a bug in floatscope; rerun with --debug for the stack trace and report it`;
  }
  io.err(line);
  if (debug && e instanceof Error && e.stack) io.err(e.stack);
  return exitCodeFor(e);
}

/** `--debug` anywhere before `--` (removed from argv), or FLOATSCOPE_DEBUG=1. */
export function takeDebugFlag(argv: string[]): { argv: string[]; debug: boolean } {
  const end = argv.indexOf("--");
  const head = end < 0 ? argv : argv.slice(0, end);
  const tail = end < 0 ? [] : argv.slice(end);
  const debug = head.includes("--debug") || process.env.FLOATSCOPE_DEBUG === "1";
  return { argv: [...head.filter((a) => a !== "--debug"), ...tail], debug };
}
