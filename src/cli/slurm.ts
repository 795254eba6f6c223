/**
 * `floatscope slurm grid.json --tasks n`: the scripts that run a grid (src/grid/grid.ts) as a Slurm
 * job array, one array task per shard, plus the merge as a job that depends on the whole array.
 *
 * Written into one folder (default grid-runs/<grid>/slurm/):
 *   shards.sbatch  the array job (--array=1-n): task i runs `floatscope eval --grid … --shard i/n`.
 *                  It is safe to run again: a task resumes from its shard file, so a failed, timed-out
 *                  or pre-empted task is rerun with `sbatch --array=<i> shards.sbatch` (--requeue lets
 *                  Slurm do it on node failure).
 *   merge.sbatch   `floatscope merge` of the shard folder into the result table (and, for a grid that
 *                  records measures, into the findings file CLAIMS.md is rendered from).
 *   submit.sh      submits both, the merge with --dependency=afterok:<array job> (it runs once every
 *                  task has succeeded; after a rerun, submit merge.sbatch by hand).
 * Logs go to <folder>/logs/. Nothing is submitted by this command.
 *
 * Every value in the scripts is data, never code (names come from shared grid files): in the
 * bash part each value is one single-quoted word (src/util/shell.ts), and in the `#SBATCH` header, which
 * sbatch reads with its own rules, each value is one double-quoted argument with \ " ' # escaped. Values
 * with control characters are refused (a line break would end a header line whatever the quoting), and
 * the default folder grid-runs/<name> is refused for a name that is not one plain folder name ("../../x").
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { defaultRunFolder, readGrid } from "../grid/grid.js";
import { printable, shellCommand, shellQuote, unsafeCharIn } from "../util/shell.js";
import { TABLE_FORMATS } from "../util/table-export.js";
import { flagHelp, flagSpec, intList, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { deviceFlag, runtimeRows } from "./runtime-flags.js";
import type { CliCommand } from "./command-types.js";
import { GridError } from "../util/errors.js";
import { inputFile } from "./inputs.js";
import { outputDirectory, outputFile } from "./outputs.js";

/** The flags of `floatscope slurm`: the parse options and the help both come from here. */
const SLURM_ROWS: FlagRow[] = [
  { name: "tasks", type: "string", value: "<n>", help: "array tasks = shards (required)" },
  { name: "gpus-per-task", type: "string", value: "<n>", help: "GPUs per task (sets --device cuda unless --device is given)" },
  { name: "cpus-per-task", type: "string", value: "<n>", help: "CPUs per task (default 2; also the engine's threads)" },
  { name: "mem", type: "string", value: "<m>", help: "memory per task, Slurm syntax (e.g. 32G)" },
  { name: "time", type: "string", value: "<t>", help: "time limit per task, Slurm syntax (e.g. 02:00:00)" },
  { name: "partition", type: "string", value: "<p>", help: "partition" },
  { name: "account", type: "string", value: "<a>", help: "account" },
  { name: "qos", type: "string", value: "<q>", help: "QOS" },
  { name: "max-parallel", type: "string", value: "<n>", help: "at most n tasks at once (--array=1-n%k)" },
  { name: "out", type: "string", value: "<dir>", help: "shard folder (default grid-runs/<grid name>)" },
  { name: "scripts", type: "string", value: "<dir>", help: "where to write the scripts (default <out>/slurm)" },
  { name: "merged", type: "string", value: "<file>", help: "merged table (default <out>/merged.parquet; .jsonl/.csv/.arrow also work)" },
  {
    name: "findings",
    type: "string",
    value: "<file>",
    help: "findings of the grid's measures (grids with `measures`; default <out>/grid.findings.json)",
  },
  { ...runtimeRows("device")[0], default: "cpu, or cuda with --gpus-per-task" },
  {
    name: "floatscope",
    type: "string",
    value: "<cmd>",
    help: [
      "how tasks start floatscope: words separated by spaces, each passed as it is",
      "(no shell expansion; default: node and this installation's CLI)",
    ],
  },
];
const SLURM_FLAGS = flagSpec(SLURM_ROWS);

const HELP = `Usage: floatscope slurm <grid.json> --tasks <n> [options]

Writes a Slurm job array for an evaluation grid: task i of n runs shard i/n (resumable: rerun a task
with sbatch --array=i shards.sbatch), and a merge job that depends on the whole array. A grid with
"measures" (e.g. ["sink"]: per-sample attention numbers for the paper's claims, docs/claims.md) has
them merged into a findings file as well. Prints the folder; run its submit.sh on the cluster's login node. docs/cluster.md has a Kubernetes Indexed Job
for the same shards.

${flagHelp(SLURM_ROWS, 25)}
  -h, --help             this help`;

export interface SlurmOptions {
  gridFile: string;
  gridName: string;
  tasks: number;
  outDir: string;
  scriptsDir: string;
  merged: string;
  /** The findings file the merge writes (grids that record measures), else undefined. */
  findings?: string;
  /** The command that starts floatscope, as words (each becomes one argument). */
  floatscope: string[];
  device: string;
  cpusPerTask: number;
  gpusPerTask?: number;
  mem?: string;
  time?: string;
  partition?: string;
  account?: string;
  qos?: string;
  maxParallel?: number;
}

/**
 * One value as one argument of an `#SBATCH` line, as sbatch reads those lines (its own parser, not bash's):
 * words split at spaces, `"…"` groups, a backslash takes the next character as it is, an unquoted `#`
 * starts a comment. So anything but a plain word goes in double quotes with \ " ' # escaped (older sbatch
 * also ended a line at a # inside quotes). Control characters never get here (refused in `run`).
 */
export function sbatchQuote(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `"${s.replace(/[\\"'#]/g, "\\$&")}"`;
}

/** A path for a Slurm file-name pattern (--output): `%` doubled, so a % in a folder name is not read as %j, %a, … */
function slurmPattern(p: string): string {
  return p.replace(/%/g, "%%");
}

/** The three files (name → text) for these options. */
export function slurmScripts(o: SlurmOptions): Record<string, string> {
  const logs = path.join(o.scriptsDir, "logs");
  const directive = (option: string, value: string | number) => `#SBATCH --${option}=${sbatchQuote(String(value))}`;
  const common = [
    o.partition && directive("partition", o.partition),
    o.account && directive("account", o.account),
    o.qos && directive("qos", o.qos),
  ].filter(Boolean) as string[];
  const array = `1-${o.tasks}${o.maxParallel ? `%${o.maxParallel}` : ""}`;
  const floatscope = (...args: string[]) => shellCommand([...o.floatscope, ...args]);
  const shards = [
    "#!/bin/bash",
    directive("job-name", `fs-${o.gridName}`),
    directive("array", array),
    directive("ntasks", 1),
    directive("cpus-per-task", o.cpusPerTask),
    o.gpusPerTask !== undefined && directive("gpus-per-task", o.gpusPerTask),
    o.mem && directive("mem", o.mem),
    o.time && directive("time", o.time),
    ...common,
    directive("output", `${slurmPattern(logs)}/shard-%a.out`),
    "#SBATCH --open-mode=append",
    "#SBATCH --requeue",
    // The name in a comment is safe: it has no line break (refused), so the comment cannot end early.
    `# floatscope grid ${JSON.stringify(o.gridName)}, ${o.tasks} shards. Written by \`floatscope slurm\`; see docs/cluster.md.`,
    "# A task resumes from its shard file: rerun one with  sbatch --array=<i> " + shellQuote(path.join(o.scriptsDir, "shards.sbatch")),
    "set -euo pipefail",
    // Only numbers and Slurm's variables inside these double quotes; no value from the user.
    `echo "[floatscope] shard $SLURM_ARRAY_TASK_ID/${o.tasks} on $(hostname) at $(date -u +%FT%TZ) (job $SLURM_JOB_ID, restart \${SLURM_RESTART_COUNT:-0})"`,
    `exec ${floatscope("eval", "--grid", o.gridFile)} --shard "$SLURM_ARRAY_TASK_ID/${o.tasks}" --out ${shellQuote(o.outDir)} --device ${shellQuote(o.device)} --threads ${o.cpusPerTask}`,
    "",
  ].filter((l) => l !== false && l !== undefined && l !== "") as string[];
  const merge = [
    "#!/bin/bash",
    directive("job-name", `fs-${o.gridName}-merge`),
    "#SBATCH --ntasks=1",
    "#SBATCH --cpus-per-task=1",
    ...common,
    directive("output", `${slurmPattern(logs)}/merge.out`),
    "#SBATCH --open-mode=append",
    "set -euo pipefail",
    `${floatscope("status", o.outDir)} || true`,
    `exec ${floatscope("merge", o.outDir, "--out", o.merged, ...(o.findings ? ["--findings", o.findings] : []))}`,
  ];
  const submit = [
    "#!/bin/bash",
    `# Submit the ${o.tasks}-task array of grid ${JSON.stringify(o.gridName)} and its merge (runs after every task succeeded).`,
    "set -euo pipefail",
    `cd ${shellQuote(o.scriptsDir)}`,
    `mkdir -p ${shellQuote(logs)}`,
    "array=$(sbatch --parsable shards.sbatch)",
    "array=${array%%;*}",
    'merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes merge.sbatch)',
    "merge=${merge%%;*}",
    'echo "array job $array (shards), merge job $merge"',
    // The progress command is printed for pasting into a shell: built here, quoted, and printed as one
    // single-quoted string (never inside double quotes, where $(…) and backticks would run).
    `printf '%s\\n' ${shellQuote(`progress: ${floatscope("status", o.outDir)}`)}`,
    'echo "$array $merge" > submitted.txt',
  ];
  return { "shards.sbatch": shards.join("\n") + "\n", "merge.sbatch": merge.join("\n") + "\n", "submit.sh": submit.join("\n") + "\n" };
}

/** `node /abs/…/cli/main.js` of this installation (works on any node of a shared file system). */
function defaultFloatscope(): string[] {
  const here = fileURLToPath(import.meta.url);
  const main = path.join(path.dirname(here), here.endsWith(".ts") ? "main.ts" : "main.js");
  if (main.endsWith(".ts")) return ["npx", "tsx", main];
  return [process.execPath, main];
}

/**
 * A value that will be written into the scripts: refused when it holds a control character (say which,
 * and where). `field` is the flag or argument as the help names it.
 */
function scriptValue(value: string, field: string, expected: string): string {
  const bad = unsafeCharIn(value);
  if (bad)
    throw new UsageError(`Bad value for ${field}: it would be written into the job scripts`, {
      field,
      expected,
      found: `${bad} of ${printable(value)}`,
    });
  return value;
}

/** `--floatscope`: words separated by spaces, each one argument (no quotes, variables or other shell syntax are read from it). */
function floatscopeWords(s: string): string[] {
  const expected = 'a command and its arguments separated by spaces, e.g. "node /opt/floatscope/src/dist/cli/main.js"';
  const words = scriptValue(s, "--floatscope", expected)
    .split(" ")
    .filter((w) => w !== "");
  if (words.length === 0) throw new UsageError("Bad value for --floatscope", { field: "--floatscope", expected, found: JSON.stringify(s) });
  return words;
}

export const command: CliCommand = {
  help: HELP,
  flags: SLURM_FLAGS,
  paths: [
    { arg: "<grid.json>", role: "input", expects: "file", name: "grid.json", example: (p) => [p, "--tasks", "2"] },
    {
      arg: "--scripts",
      role: "output",
      expects: "folder",
      name: "scripts",
      inside: ["shards.sbatch"],
      example: (p, f) => [f.grid(), "--tasks", "2", "--scripts", p],
    },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("slurm", argv, SLURM_FLAGS);
    if (positionals.length !== 1)
      throw new UsageError("`floatscope slurm` takes one grid file", {
        field: "<grid.json>",
        expected: "one path",
        found: positionals.join(" ") || "nothing",
      });
    if (v.tasks === undefined)
      throw new UsageError("`floatscope slurm` needs --tasks", {
        field: "--tasks",
        expected: "the number of array tasks (= shards), e.g. --tasks 16",
        found: "nothing",
      });
    const int = (flag: string, min: number) => {
      if (v[flag] === undefined) return undefined;
      const n = intList("slurm", flag, String(v[flag]))[0];
      if (n < min)
        throw new UsageError(`Bad value for --${flag}`, { field: `--${flag}`, expected: `an integer ≥ ${min}`, found: String(n) });
      return n;
    };
    const slurmWord = (flag: string) => {
      const s = v[flag];
      if (s === undefined) return undefined;
      if (!/^[A-Za-z0-9_.:,+-]+$/.test(String(s)))
        throw new UsageError(`Bad value for --${flag}`, {
          field: `--${flag}`,
          expected: "Slurm syntax without spaces or quotes (e.g. 02:00:00, 32G, gpu)",
          found: JSON.stringify(s),
        });
      return String(s);
    };
    const gridFile = path.resolve(scriptValue(positionals[0], "<grid.json>", "a path without control characters"));
    const grid = readGrid(inputFile(gridFile, { command: "slurm", arg: "<grid.json>", what: "grid file (JSON)", error: GridError }));
    const tasks = int("tasks", 1)!;
    const gpus = int("gpus-per-task", 0);
    // Names and paths reach the scripts: no control characters in any of them. The grid's name was
    // checked by readGrid; as the default folder it must also be one plain folder name.
    const noControl = "a path without control characters (line breaks, tabs, escapes)";
    const outDir = path.resolve(v.out === undefined ? defaultRunFolder(grid) : scriptValue(String(v.out), "--out", noControl));
    const scriptsDir = path.resolve(
      v.scripts === undefined
        ? scriptValue(path.join(outDir, "slurm"), "--out", noControl)
        : scriptValue(String(v.scripts), "--scripts", noControl),
    );
    // Slurm reads a backslash in a log file name as "no %-patterns": every task would log to one file.
    if (scriptsDir.includes("\\"))
      throw new UsageError("Bad scripts folder: Slurm's log file names cannot hold a backslash", {
        field: v.scripts === undefined ? "--out" : "--scripts",
        expected: "a folder path without '\\'",
        found: printable(scriptsDir),
      });
    const merged = path.resolve(
      v.merged === undefined ? path.join(outDir, "merged.parquet") : scriptValue(String(v.merged), "--merged", noControl),
    );
    if (!TABLE_FORMATS.some((f) => merged.endsWith(`.${f}`) || (f === "jsonl" && merged.endsWith(".ndjson")))) {
      throw new UsageError("Bad --merged", {
        field: "--merged",
        expected: "a file ending .parquet, .jsonl, .csv or .arrow",
        found: merged,
      });
    }
    if (v.findings !== undefined && grid.measures.length === 0)
      throw new UsageError("--findings needs a grid that records measures", {
        field: "--findings",
        expected: `a grid with "measures" (e.g. ["sink"]) in ${gridFile}`,
        found: "a grid without measures",
      });
    const findings =
      grid.measures.length === 0
        ? undefined
        : path.resolve(
            v.findings === undefined ? path.join(outDir, "grid.findings.json") : scriptValue(String(v.findings), "--findings", noControl),
          );
    const device = deviceFlag("slurm", v.device, gpus ? "cuda" : "cpu");
    const opts: SlurmOptions = {
      gridFile,
      gridName: grid.name,
      tasks,
      outDir,
      scriptsDir,
      merged,
      findings,
      device,
      floatscope: v.floatscope !== undefined ? floatscopeWords(String(v.floatscope)) : defaultFloatscope(),
      cpusPerTask: int("cpus-per-task", 1) ?? 2,
      gpusPerTask: gpus,
      mem: slurmWord("mem"),
      time: slurmWord("time"),
      partition: slurmWord("partition"),
      account: slurmWord("account"),
      qos: slurmWord("qos"),
      maxParallel: int("max-parallel", 1),
    };
    // The scripts folder is made when missing (said on stderr); a file, FIFO or dangling link there is refused.
    outputDirectory("slurm", "scripts", scriptsDir, true, io);
    fs.mkdirSync(path.join(scriptsDir, "logs"), { recursive: true });
    for (const [name, text] of Object.entries(slurmScripts(opts))) {
      // A FIFO named shards.sbatch would block writeFileSync until a reader came: refused instead.
      const file = outputFile("slurm", "scripts", path.join(scriptsDir, name), true, io);
      fs.writeFileSync(file, text, { mode: 0o755 });
    }
    io.out(
      `wrote ${path.join(scriptsDir, "shards.sbatch")} (array 1-${tasks}), merge.sbatch and submit.sh\nsubmit with: bash ${shellQuote(path.join(scriptsDir, "submit.sh"))}`,
    );
    return 0;
  },
};
