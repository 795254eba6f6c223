/**
 * `floatscope slurm grid.json --tasks n`: the scripts that run a grid (src/eval/grid.ts) as a Slurm
 * job array, one array task per shard, plus the merge as a job that depends on the whole array.
 *
 * Written into one folder (default grid-runs/<grid>/slurm/):
 *   shards.sbatch  the array job (--array=1-n): task i runs `floatscope eval --grid … --shard i/n`.
 *                  It is safe to run again: a task resumes from its shard file, so a failed, timed-out
 *                  or pre-empted task is rerun with `sbatch --array=<i> shards.sbatch` (--requeue lets
 *                  Slurm do it on node failure).
 *   merge.sbatch   `floatscope merge` of the shard folder into the result table.
 *   submit.sh      submits both, the merge with --dependency=afterok:<array job> (it runs once every
 *                  task has succeeded; after a rerun, submit merge.sbatch by hand).
 * Logs go to <folder>/logs/. Nothing is submitted by this command.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { readGrid } from "../eval/grid.js";
import { TABLE_FORMATS } from "../util/table-export.js";
import { intList, parseFlags, UsageError, type CliIO } from "./args.js";
import type { CliCommand } from "./commands.js";

const HELP = `Usage: floatscope slurm <grid.json> --tasks <n> [options]

Writes a Slurm job array for an evaluation grid: task i of n runs shard i/n (resumable: rerun a task
with sbatch --array=i shards.sbatch), and a merge job that depends on the whole array. Prints the
folder; run its submit.sh on the cluster's login node. docs/cluster.md has a Kubernetes Indexed Job
for the same shards.

  --tasks <n>            array tasks = shards (required)
  --gpus-per-task <n>    GPUs per task (sets --device cuda unless --device is given)
  --cpus-per-task <n>    CPUs per task (default 2; also the engine's threads)
  --mem <m>              memory per task, Slurm syntax (e.g. 32G)
  --time <t>             time limit per task, Slurm syntax (e.g. 02:00:00)
  --partition <p>        partition;   --account <a>   account;   --qos <q>   QOS
  --max-parallel <n>     at most n tasks at once (--array=1-n%k)
  --out <dir>            shard folder (default grid-runs/<grid name>)
  --scripts <dir>        where to write the scripts (default <out>/slurm)
  --merged <file>        merged table (default <out>/merged.parquet; .jsonl/.csv/.arrow also work)
  --device <d>           cpu | cuda | auto (default cpu, or cuda with --gpus-per-task)
  --floatscope <cmd>     how tasks start floatscope (default: node and this installation's CLI)
  -h, --help             this help`;

export interface SlurmOptions {
  gridFile: string;
  gridName: string;
  tasks: number;
  outDir: string;
  scriptsDir: string;
  merged: string;
  floatscope: string;
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

/** Single-quote for sh. */
export function shq(s: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`;
}

/** The three files (name → text) for these options. */
export function slurmScripts(o: SlurmOptions): Record<string, string> {
  const logs = path.join(o.scriptsDir, "logs");
  const common = [
    o.partition && `#SBATCH --partition=${o.partition}`,
    o.account && `#SBATCH --account=${o.account}`,
    o.qos && `#SBATCH --qos=${o.qos}`,
  ].filter(Boolean) as string[];
  const array = `1-${o.tasks}${o.maxParallel ? `%${o.maxParallel}` : ""}`;
  const shards = [
    "#!/bin/bash",
    `#SBATCH --job-name=fs-${o.gridName}`,
    `#SBATCH --array=${array}`,
    `#SBATCH --ntasks=1`,
    `#SBATCH --cpus-per-task=${o.cpusPerTask}`,
    o.gpusPerTask !== undefined && `#SBATCH --gpus-per-task=${o.gpusPerTask}`,
    o.mem && `#SBATCH --mem=${o.mem}`,
    o.time && `#SBATCH --time=${o.time}`,
    ...common,
    `#SBATCH --output=${logs}/shard-%a.out`,
    "#SBATCH --open-mode=append",
    "#SBATCH --requeue",
    `# floatscope grid "${o.gridName}", ${o.tasks} shards. Written by \`floatscope slurm\`; see docs/cluster.md.`,
    "# A task resumes from its shard file: rerun one with  sbatch --array=<i> " + shq(path.join(o.scriptsDir, "shards.sbatch")),
    "set -euo pipefail",
    `echo "[floatscope] shard $SLURM_ARRAY_TASK_ID/${o.tasks} on $(hostname) at $(date -u +%FT%TZ) (job $SLURM_JOB_ID, restart \${SLURM_RESTART_COUNT:-0})"`,
    `exec ${o.floatscope} eval --grid ${shq(o.gridFile)} --shard "$SLURM_ARRAY_TASK_ID/${o.tasks}" --out ${shq(o.outDir)} --device ${o.device} --threads ${o.cpusPerTask}`,
    "",
  ].filter((l) => l !== false && l !== undefined && l !== "") as string[];
  const merge = [
    "#!/bin/bash",
    `#SBATCH --job-name=fs-${o.gridName}-merge`,
    "#SBATCH --ntasks=1",
    "#SBATCH --cpus-per-task=1",
    ...common,
    `#SBATCH --output=${logs}/merge.out`,
    "#SBATCH --open-mode=append",
    "set -euo pipefail",
    `${o.floatscope} status ${shq(o.outDir)} || true`,
    `exec ${o.floatscope} merge ${shq(o.outDir)} --out ${shq(o.merged)}`,
  ];
  const submit = [
    "#!/bin/bash",
    `# Submit the ${o.tasks}-task array of grid "${o.gridName}" and its merge (runs after every task succeeded).`,
    "set -euo pipefail",
    `cd ${shq(o.scriptsDir)}`,
    `mkdir -p ${shq(logs)}`,
    "array=$(sbatch --parsable shards.sbatch)",
    "array=${array%%;*}",
    'merge=$(sbatch --parsable --dependency=afterok:"$array" --kill-on-invalid-dep=yes merge.sbatch)',
    "merge=${merge%%;*}",
    'echo "array job $array (shards), merge job $merge"',
    `echo "progress: ${o.floatscope.replace(/"/g, '\\"')} status ${shq(o.outDir).replace(/"/g, '\\"')}"`,
    'echo "$array $merge" > submitted.txt',
  ];
  return { "shards.sbatch": shards.join("\n") + "\n", "merge.sbatch": merge.join("\n") + "\n", "submit.sh": submit.join("\n") + "\n" };
}

/** `node /abs/…/cli/main.js` of this installation (works on any node of a shared file system). */
function defaultFloatscope(): string {
  const here = fileURLToPath(import.meta.url);
  const main = path.join(path.dirname(here), here.endsWith(".ts") ? "main.ts" : "main.js");
  if (main.endsWith(".ts")) return `npx tsx ${shq(main)}`;
  return `${shq(process.execPath)} ${shq(main)}`;
}

export const command: CliCommand = {
  help: HELP,
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("slurm", argv, {
      tasks: { type: "string" },
      "gpus-per-task": { type: "string" },
      "cpus-per-task": { type: "string" },
      mem: { type: "string" },
      time: { type: "string" },
      partition: { type: "string" },
      account: { type: "string" },
      qos: { type: "string" },
      "max-parallel": { type: "string" },
      out: { type: "string" },
      scripts: { type: "string" },
      merged: { type: "string" },
      device: { type: "string" },
      floatscope: { type: "string" },
    });
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
    const gridFile = path.resolve(positionals[0]);
    const grid = readGrid(gridFile);
    const tasks = int("tasks", 1)!;
    const gpus = int("gpus-per-task", 0);
    const outDir = path.resolve(String(v.out ?? path.join("grid-runs", grid.name)));
    const scriptsDir = path.resolve(String(v.scripts ?? path.join(outDir, "slurm")));
    const merged = path.resolve(String(v.merged ?? path.join(outDir, "merged.parquet")));
    if (!TABLE_FORMATS.some((f) => merged.endsWith(`.${f}`) || (f === "jsonl" && merged.endsWith(".ndjson")))) {
      throw new UsageError("Bad --merged", {
        field: "--merged",
        expected: "a file ending .parquet, .jsonl, .csv or .arrow",
        found: merged,
      });
    }
    const device = String(v.device ?? (gpus ? "cuda" : "cpu"));
    if (!["cpu", "cuda", "auto"].includes(device))
      throw new UsageError("Bad --device", { field: "--device", expected: "cpu | cuda | auto", found: device });
    const opts: SlurmOptions = {
      gridFile,
      gridName: grid.name,
      tasks,
      outDir,
      scriptsDir,
      merged,
      device,
      floatscope: v.floatscope !== undefined ? String(v.floatscope) : defaultFloatscope(),
      cpusPerTask: int("cpus-per-task", 1) ?? 2,
      gpusPerTask: gpus,
      mem: slurmWord("mem"),
      time: slurmWord("time"),
      partition: slurmWord("partition"),
      account: slurmWord("account"),
      qos: slurmWord("qos"),
      maxParallel: int("max-parallel", 1),
    };
    fs.mkdirSync(path.join(scriptsDir, "logs"), { recursive: true });
    for (const [name, text] of Object.entries(slurmScripts(opts))) {
      const file = path.join(scriptsDir, name);
      fs.writeFileSync(file, text, { mode: 0o755 });
    }
    io.out(
      `wrote ${path.join(scriptsDir, "shards.sbatch")} (array 1-${tasks}), merge.sbatch and submit.sh\nsubmit with: bash ${shq(path.join(scriptsDir, "submit.sh"))}`,
    );
    return 0;
  },
};
