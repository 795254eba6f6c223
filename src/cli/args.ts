/**
 * Flag parsing for CLI commands: node's `parseArgs` in strict mode, with errors that name the
 * command, the flag and where to look (`floatscope <command> --help`).
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { SettingsError } from "../util/errors.js";

export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** Thrown for bad command-line usage; main prints the message and exits with code 2. */
export class UsageError extends SettingsError {}

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

export function parseFlags(command: string, argv: string[], flags: FlagSpec): Parsed {
  try {
    const r = parseArgs({ args: argv, options: { ...flags, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
    return { values: r.values as Parsed["values"], positionals: r.positionals };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const flag = /'(-[^']+)'/.exec(msg)?.[1];
    throw new UsageError(`Bad arguments for \`floatscope ${command}\``, {
      field: flag ?? "arguments",
      expected: `one of: ${Object.keys(flags).map((f) => `--${f}`).join(", ")}, --help`,
      found: msg.split("\n")[0],
      hint: `run \`floatscope ${command} --help\``,
    });
  }
}

/** "1,2,3" → [1, 2, 3] (integers only). */
export function intList(command: string, flag: string, value: string): number[] {
  const parts = value.split(",").map((s) => s.trim()).filter((s) => s !== "");
  const out = parts.map(Number);
  if (parts.length === 0 || out.some((n) => !Number.isInteger(n))) {
    throw new UsageError(`Bad value for --${flag} of \`floatscope ${command}\``, { field: `--${flag}`, expected: "comma-separated integers, e.g. 0,3,7", found: JSON.stringify(value) });
  }
  return out;
}

/** Output sink so commands can be tested without a child process. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}
