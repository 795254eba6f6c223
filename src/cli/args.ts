/**
 * Flag parsing for CLI commands: node's `parseArgs` in strict mode, with errors that name the
 * command, the flag and where to look (`floatscope <command> --help`), and strict number parsing:
 * a flag that takes a number takes it in plain decimal (`16`, `0.95`, `1e-3`) and in range, or
 * the command stops with a usage error (exit 2). `0x10`, `1_000`, `Infinity`, `""` and `12abc`
 * are refused, never read as something else.
 */
import { parseArgs, type ParseArgsConfig } from "node:util";
import { SettingsError } from "../util/errors.js";

export type FlagSpec = NonNullable<ParseArgsConfig["options"]>;

/** One flag of a command: what parseArgs accepts and the help line that documents it. */
export interface FlagRow {
  /** Without the dashes: "memory-budget". */
  name: string;
  type: "string" | "boolean";
  /** Placeholder of the value in the help ("<n>"); none for a boolean flag. */
  value?: string;
  /** The description; further lines continue it under the same column. */
  help: string | readonly string[];
  /** Shown as "(default …)" after the description. */
  default?: string;
}

/** parseArgs options of the rows, so a parsed flag is always a documented one. */
export function flagSpec(rows: readonly FlagRow[]): FlagSpec {
  return Object.fromEntries(rows.map((r) => [r.name, { type: r.type }]));
}

/** Help lines of the rows, descriptions starting at column `column` (flag names are indented two). */
export function flagHelp(rows: readonly FlagRow[], column: number): string {
  return rows
    .flatMap((r) => {
      const lines = typeof r.help === "string" ? [r.help] : [...r.help];
      if (r.default !== undefined) lines[lines.length - 1] += ` (default ${r.default})`;
      const head = `  --${r.name}${r.value ? ` ${r.value}` : ""}`;
      return lines.map((l, i) => `${(i === 0 ? head : "").padEnd(column - 1)} ${l}`.trimEnd());
    })
    .join("\n");
}

/** Help sections "Title:\n  --flag …" of a command's flag table, in the table's order. */
export function helpSections(sections: Record<string, readonly FlagRow[]>, column: number): string {
  return Object.entries(sections)
    .map(([title, rows]) => `${title}:\n${flagHelp(rows, column)}`)
    .join("\n");
}

/** Thrown for bad command-line usage; main prints the message and exits with code 2. */
export class UsageError extends SettingsError {}

export interface Parsed {
  values: Record<string, string | boolean | undefined>;
  positionals: string[];
}

const NEGATIVE_NUMBER = /^-(\d|\.\d)/;

export function parseFlags(command: string, argv: string[], flags: FlagSpec): Parsed {
  // `--steps -3`: parseArgs reads "-3" as a flag and calls the option ambiguous. Join a value that
  // looks like a negative number to its flag, so the number check says what is wrong with it.
  const args: string[] = [];
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i];
    const name = a.startsWith("--") && !a.includes("=") ? a.slice(2) : undefined;
    if (name !== undefined && flags[name]?.type === "string" && i + 1 < argv.length && NEGATIVE_NUMBER.test(argv[i + 1])) {
      args.push(`${a}=${argv[++i]}`);
    } else {
      args.push(a);
    }
  }
  try {
    const r = parseArgs({ args, options: { ...flags, help: { type: "boolean", short: "h" } }, allowPositionals: true, strict: true });
    return { values: r.values as Parsed["values"], positionals: r.positionals };
  } catch (e) {
    const msg = e instanceof Error ? e.message : String(e);
    const flag = /'(-[^' ]+)/.exec(msg)?.[1];
    throw new UsageError(`Bad arguments for \`floatscope ${command}\``, {
      field: flag ?? "arguments",
      expected: `one of: ${Object.keys(flags)
        .map((f) => `--${f}`)
        .join(", ")}, --help`,
      found: msg.split("\n")[0],
      hint: `run \`floatscope ${command} --help\``,
    });
  }
}

export interface NumberRange {
  /** Inclusive lower bound. */
  min?: number;
  /** Inclusive upper bound. */
  max?: number;
  /** Exclusive lower bound (e.g. 0 for "positive"). */
  above?: number;
}

const INTEGER = /^[+-]?\d+$/;
const DECIMAL = /^[+-]?(\d+(\.\d*)?|\.\d+)([eE][+-]?\d+)?$/;

function rangeWords(kind: string, r: NumberRange): string {
  const parts: string[] = [];
  if (r.above !== undefined) parts.push(`> ${r.above}`);
  if (r.min !== undefined) parts.push(`≥ ${r.min}`);
  if (r.max !== undefined) parts.push(`≤ ${r.max}`);
  return parts.length ? `${kind} ${parts.join(" and ")}` : kind;
}

function inRange(n: number, r: NumberRange): boolean {
  return (r.min === undefined || n >= r.min) && (r.max === undefined || n <= r.max) && (r.above === undefined || n > r.above);
}

function badValue(command: string, flag: string, expected: string, value: string): UsageError {
  return new UsageError(`Bad value for --${flag} of \`floatscope ${command}\``, {
    field: `--${flag}`,
    expected,
    found: JSON.stringify(value),
    hint: `run \`floatscope ${command} --help\``,
  });
}

/** A decimal integer in range ("16", "-2"; never "0x10", "1e3", "16.0" or "16 "). */
export function intFlag(command: string, flag: string, value: string | boolean, range: NumberRange = {}): number {
  const s = String(value);
  const n = INTEGER.test(s) ? Number(s) : NaN;
  const expected = rangeWords("a decimal integer", range);
  if (!Number.isSafeInteger(n) || !inRange(n, range)) throw badValue(command, flag, expected, s);
  return n;
}

/** A finite decimal number in range ("0.95", "1e-3", ".5"; never "0x10", "Infinity" or ""). */
export function numberFlag(command: string, flag: string, value: string | boolean, range: NumberRange = {}): number {
  const s = String(value);
  const n = DECIMAL.test(s) ? Number(s) : NaN;
  if (!Number.isFinite(n) || !inRange(n, range)) throw badValue(command, flag, rangeWords("a decimal number", range), s);
  return n;
}

/** The flag's integer when given, else undefined. */
export function optionalInt(
  command: string,
  flag: string,
  value: string | boolean | undefined,
  range: NumberRange = {},
): number | undefined {
  return value === undefined ? undefined : intFlag(command, flag, value, range);
}

/** The flag's number when given, else undefined. */
export function optionalNumber(
  command: string,
  flag: string,
  value: string | boolean | undefined,
  range: NumberRange = {},
): number | undefined {
  return value === undefined ? undefined : numberFlag(command, flag, value, range);
}

/** "1,2,3" → [1, 2, 3] (decimal integers only, each in range; spaces around items allowed). */
export function intList(command: string, flag: string, value: string, range: NumberRange = {}): number[] {
  const parts = value.split(",").map((s) => s.trim());
  const out = parts.map((s) => (INTEGER.test(s) ? Number(s) : NaN));
  const bad = out.findIndex((n) => !Number.isSafeInteger(n) || !inRange(n, range));
  if (value.trim() === "" || bad >= 0) {
    const shown = bad >= 0 ? `${JSON.stringify(parts[bad])} (item ${bad + 1} of ${parts.length})` : JSON.stringify(value);
    throw new UsageError(`Bad value for --${flag} of \`floatscope ${command}\``, {
      field: `--${flag}`,
      expected: `comma-separated ${rangeWords("decimal integers", range)}, e.g. 2,3,7`,
      found: shown,
    });
  }
  return out;
}

/** Output sink so commands can be tested without a child process. */
export interface CliIO {
  out(text: string): void;
  err(text: string): void;
}
