#!/usr/bin/env node
/**
 * `floatscope <command> [args]`: dispatch through the command table (commands.ts). Exit codes:
 * 0 ok, 1 a run failed (bad checkpoint, budget, runtime), 2 bad usage.
 */
import * as fs from "node:fs";
import { fileURLToPath } from "node:url";
import { FloatscopeError } from "../util/errors.js";
import { UsageError, type CliIO } from "./args.js";
import { COMMANDS } from "./commands.js";

function overview(): string {
  const width = Math.max(...Object.keys(COMMANDS).map((n) => n.length));
  const lines = Object.entries(COMMANDS).map(([n, c]) => `  ${n.padEnd(width)}  ${c.summary}`);
  return ["Usage: floatscope <command> [options]", "", "Commands:", ...lines, "", "Run `floatscope <command> --help` for a command's options."].join("\n");
}

export async function main(argv: string[], io: CliIO = { out: (t) => process.stdout.write(t + "\n"), err: (t) => process.stderr.write(t + "\n") }): Promise<number> {
  const [name, ...rest] = argv;
  if (name === undefined || name === "--help" || name === "-h" || name === "help") {
    io.out(overview());
    return name === undefined ? 2 : 0;
  }
  const entry = Object.hasOwn(COMMANDS, name) ? COMMANDS[name] : undefined;
  if (!entry) {
    io.err(`floatscope: unknown command "${name}"\n\n${overview()}`);
    return 2;
  }
  try {
    const { command } = await entry.load();
    if (rest.includes("--help") || rest.includes("-h")) {
      io.out(command.help);
      return 0;
    }
    return await command.run(rest, io);
  } catch (e) {
    if (e instanceof UsageError) {
      io.err(`floatscope ${name}: ${e.message}`);
      return 2;
    }
    if (e instanceof FloatscopeError) {
      io.err(`floatscope ${name}: ${e.name}: ${e.message}`);
      return 1;
    }
    throw e;
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

if (invokedDirectly()) {
  main(process.argv.slice(2)).then(
    (code) => { process.exitCode = code; },
    (e) => { console.error(e); process.exitCode = 1; },
  );
}
