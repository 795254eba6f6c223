/**
 * Every command's `--help` documents exactly the flags it parses: each option in the command's
 * parse table (`CliCommand.flags`) is named in its help, and each `--flag` the help names is one it
 * parses (or a flag every command takes: --help, --debug). The lists come from the command table,
 * so a new command or flag is covered without touching this test.
 */
import { describe, expect, it } from "vitest";
import { COMMANDS } from "../../src/cli/commands.js";
import { main } from "../../src/cli/main.js";
import { UsageError } from "../../src/cli/args.js";
import { DEVICES, deviceFlag, runtimeOptions } from "../../src/cli/runtime-flags.js";

/** Taken by every command: main strips --debug, parseFlags adds --help. */
const COMMON = ["help", "debug"];

async function helpOf(name: string): Promise<string> {
  let out = "";
  const code = await main([name, "--help"], { out: (t) => (out += t + "\n"), err: () => {} });
  expect(code).toBe(0);
  return out;
}

/** Flag names at the start of a help line ("  --out <file>  …", "  -h, --help"): the documented ones. */
function documented(help: string): Set<string> {
  return new Set([...help.matchAll(/^ {2}(?:-\w, )?--([a-z][a-z0-9-]*)/gm)].map((m) => m[1]));
}

/**
 * Every `--flag` the help mentions, prose included, except on a line that names another command
 * ("floatscope eval --grid … --shard i/n"): those are that command's, checked there.
 */
function mentioned(help: string, name: string): Set<string> {
  const other = new RegExp(`floatscope (?!${name}\\b)[a-z]`);
  const lines = help.split("\n").filter((l) => !other.test(l));
  return new Set(lines.flatMap((l) => [...l.matchAll(/(?<![\w-])--([a-z][a-z0-9-]*)/g)].map((m) => m[1])));
}

describe.each(Object.keys(COMMANDS))("floatscope %s --help and its flags", (name) => {
  it("documents every flag it parses, on a line of its own", async () => {
    const { command } = await COMMANDS[name].load();
    const help = await helpOf(name);
    const rows = documented(help);
    const parsed = Object.keys(command.flags);
    expect(parsed.length + rows.size).toBeGreaterThan(0);
    expect(parsed.filter((f) => !rows.has(f))).toEqual([]);
  });

  it("names no flag it does not parse", async () => {
    const { command } = await COMMANDS[name].load();
    const help = await helpOf(name);
    const known = new Set([...Object.keys(command.flags), ...COMMON]);
    // --array=… in slurm's help is sbatch's option, not floatscope's.
    const foreign = name === "slurm" ? ["array"] : [];
    expect([...mentioned(help, name)].filter((f) => !known.has(f) && !foreign.includes(f))).toEqual([]);
    expect([...documented(help)].filter((f) => !known.has(f))).toEqual([]);
  });

  it("refuses a flag that is not in its table", async () => {
    const { command } = await COMMANDS[name].load();
    await expect(command.run(["--not-a-flag"], { out: () => {}, err: () => {} })).rejects.toBeInstanceOf(UsageError);
  });
});

describe("--device: one check in every command that takes it", () => {
  // The smallest command line that reaches the runtime flags' check (it runs before any path is
  // opened, so the model need not exist). slurm reads its grid first: covered through deviceFlag.
  const lines: Record<string, string[]> = {
    forward: ["no-model", "--ids", "1"],
    generate: ["no-model", "--prompt", "hi"],
    eval: ["no-model", "--data", "no-data.jsonl"],
    "eval --grid": ["--grid", "no-grid.json"],
  };

  it("covers every command whose flags include --device", async () => {
    const takers: string[] = [];
    for (const [name, entry] of Object.entries(COMMANDS)) if ("device" in (await entry.load()).command.flags) takers.push(name);
    expect(takers.filter((n) => n !== "slurm" && !(n in lines))).toEqual([]);
  });

  it.each(Object.entries(lines))("%s --device gpu is a usage error naming the flag and the allowed values", async (line, argv) => {
    const name = line.split(" ")[0];
    const { command } = await COMMANDS[name].load();
    const args = [...argv, "--device", "gpu"];
    const e = await command.run(args, { out: () => {}, err: () => {} }).catch((x: unknown) => x);
    expect(e).toBeInstanceOf(UsageError);
    expect((e as UsageError).field).toBe("--device");
    expect((e as UsageError).expected).toBe(DEVICES.join(" | "));
    expect((e as UsageError).found).toBe('"gpu"');
  });

  it("valid values and the default pass through unchanged", () => {
    for (const d of DEVICES) expect(runtimeOptions("forward", { device: d }).device).toBe(d);
    expect(runtimeOptions("forward", {})).toEqual({
      device: "cpu",
      lowMemory: false,
      queryChunks: "auto",
      scanWeights: true,
      quantizedWeights: "auto",
    });
    expect(deviceFlag("slurm", undefined, "cuda")).toBe("cuda");
    expect(() => deviceFlag("slurm", "tpu")).toThrow(UsageError);
  });
});
