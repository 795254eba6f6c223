#!/usr/bin/env node
/**
 * `floatscope <command> [args]`: dispatch through the command table (commands.ts). Exit codes
 * (exit.ts): 0 ok, 1 a run failed (bad checkpoint, data or trace, budget, runtime), 2 bad usage,
 * 130 interrupted. Every error ends here as one message; `--debug` adds the stack trace.
 */
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";
import type { CliIO } from "./args.js";
import { COMMANDS } from "./commands.js";
import { EXIT, reportError, takeDebugFlag } from "./exit.js";

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return [
    "Usage: floatscope <command> [options]",
    "",
    "Commands:",
    ...lines,
    "",
    "Run `floatscope <command> --help` for a command's options. --debug (any command) prints stack traces.",
    "Exit codes: 0 ok, 1 failure (input files, budget, runtime), 2 usage (command line), 130 interrupted.",
  ].join("\n");
}

const STD_IO: CliIO = { out: (t) => process.stdout.write(t + "\n"), err: (t) => process.stderr.write(t + "\n") };

export async function main(argvIn: string[], io: CliIO = STD_IO): Promise<number> {
  const { argv, debug } = takeDebugFlag(argvIn);
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(overview());
    return name === undefined ? EXIT.usage : EXIT.ok;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.err(`floatscope: unknown command "${name}"\n\n${overview()}`);
    return EXIT.usage;
  }
  try {
    const { command } = await entry.load();
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(command.help);
      return EXIT.ok;
    }
    return await command.run(rest, io);
  } catch (e) {
    return reportError(e, name, io, debug);
  }
}

function invokedDirectly(): boolean {
  if (!process.argv[1]) return false;
  try {
    return fs.realpathSync(process.argv[1]) === fs.realpathSync(fileURLToPath(import.meta.url));
  } catch {
    return false;
  }
}

/**
 * Run as the `floatscope` program: main on process.argv, the exit code set, and errors outside
 * main's try (a rejected promise nobody awaited, a throw in a callback) still reported as one
 * line with exit code 1, never a raw stack trace. The `floatscope` bin (src/bin/floatscope.js)
 * calls this.
 */
export function runCli(): void {
  const { debug } = takeDebugFlag(process.argv.slice(2));
  const last = (e: unknown) => {
    process.exitCode = reportError(e, process.argv[2], STD_IO, debug);
    process.exit();
  };
  // `floatscope analyze … | head`: the reader went away; stop quietly, as a pipeline expects.
  process.stdout.on("error", (e: NodeJS.ErrnoException) => {
    if (e.code === "EPIPE") process.exit(EXIT.ok);
    last(e);
  });
  process.on("uncaughtException", last);
  process.on("unhandledRejection", last);
  main(process.argv.slice(2)).then((code) => {
    process.exitCode = code;
  }, last);
}

if (invokedDirectly()) runCli();
