/**
 * A fake cluster for running the scripts `floatscope slurm` writes, without Slurm and without floatscope:
 * a folder of tiny `sh` programs named sbatch, srun, kubectl, scontrol, squeue, node, npx and floatscope
 * that append their argv to one log and exit 0 (sbatch prints a job id). Put the folder first on PATH
 * and every command a script starts is recorded, argument by argument, exactly as the script passed it.
 *
 * Also a reading of `#SBATCH` lines the way sbatch reads them (src/sbatch/opt.c, `_get_argument`): the
 * scripts' header is parsed by sbatch, not by bash, so its quoting is checked against sbatch's rules.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as path from "node:path";

export const FAKE_COMMANDS = ["sbatch", "srun", "kubectl", "scontrol", "squeue", "node", "npx", "floatscope"] as const;

export interface FakeCluster {
  /** Folder of the fake programs (first on PATH). */
  bin: string;
  /** Their shared log: per call the program name, its working folder, argc and the arguments, each NUL-terminated. */
  log: string;
  /** Environment for running a generated script under the fakes (no real node or Slurm reachable). */
  env: NodeJS.ProcessEnv;
}

// `--parsable` makes real sbatch print just the job id; without it, the sentence.
const FAKE = `#!/bin/sh
printf '%s\\0' "\${0##*/}" "$PWD" "$#" "$@" >> "$FS_FAKE_LOG"
if [ "\${0##*/}" = sbatch ]; then
  for a in "$@"; do [ "$a" = --parsable ] && { echo 1; exit 0; }; done
  echo "Submitted batch job 1"
fi
exit 0
`;

export function makeFakeCluster(dir: string): FakeCluster {
  const bin = path.join(dir, "fake-bin");
  fs.mkdirSync(bin, { recursive: true });
  for (const name of FAKE_COMMANDS) fs.writeFileSync(path.join(bin, name), FAKE, { mode: 0o755 });
  const log = path.join(dir, "fake.log");
  fs.writeFileSync(log, "");
  const env: NodeJS.ProcessEnv = {
    PATH: `${bin}:/usr/bin:/bin`,
    HOME: dir,
    LANG: "C.UTF-8",
    FS_FAKE_LOG: log,
    // What Slurm sets in a task of an array job.
    SLURM_ARRAY_TASK_ID: "1",
    SLURM_JOB_ID: "1",
  };
  return { bin, log, env };
}

export interface FakeCall {
  cmd: string;
  cwd: string;
  args: string[];
}

/** The calls recorded in a fake log, in order. */
export function readCalls(log: string): FakeCall[] {
  const parts = fs.readFileSync(log, "utf8").split("\0");
  const calls: FakeCall[] = [];
  let i = 0;
  while (i + 2 < parts.length) {
    const cmd = parts[i],
      cwd = parts[i + 1],
      n = Number(parts[i + 2]);
    calls.push({ cmd, cwd, args: parts.slice(i + 3, i + 3 + n) });
    i += 3 + n;
  }
  return calls;
}

/** Run one script with bash under the fakes; returns status and output. */
export function runScript(fc: FakeCluster, script: string, cwd: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync("bash", [script], { cwd, env: fc.env, encoding: "utf8", timeout: 20_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

const isCSpace = (c: string) => c === " " || c === "\t" || c === "\n" || c === "\v" || c === "\f" || c === "\r";

/**
 * The arguments sbatch reads from the text after one `#SBATCH` (its `_get_argument` loop): words split at
 * unquoted whitespace, `"…"` and `'…'` group, a backslash takes the next character as it is, an unquoted
 * `#` starts a comment.
 */
export function sbatchLineArgs(rest: string): string[] {
  const args: string[] = [];
  let i = 0;
  for (;;) {
    while (i < rest.length && isCSpace(rest[i])) i++;
    if (i >= rest.length || rest[i] === "#") return args;
    let arg = "";
    let quote = "";
    while (i < rest.length && (quote !== "" || !isCSpace(rest[i]))) {
      const c = rest[i];
      if (c === "\\") {
        i++;
        if (i < rest.length) arg += rest[i++];
        continue;
      }
      if (quote !== "") {
        if (c === quote) quote = "";
        else arg += c;
        i++;
        continue;
      }
      if (c === '"' || c === "'") {
        quote = c;
        i++;
        continue;
      }
      if (c === "#") {
        args.push(arg);
        return args;
      }
      arg += c;
      i++;
    }
    args.push(arg);
  }
}

/** Every option sbatch takes from a script's header: `#SBATCH` lines until the first line that is not a comment or blank. */
export function sbatchDirectives(script: string): string[][] {
  const out: string[][] = [];
  for (const line of script.split("\n").slice(1)) {
    if (line.startsWith("#SBATCH")) out.push(sbatchLineArgs(line.slice("#SBATCH".length)));
    else if (line.trim() === "" || line.startsWith("#")) continue;
    else break;
  }
  return out;
}

/** Every file or folder under `dir` (recursively) whose name contains `mark`. */
export function findMarked(dir: string, mark: string): string[] {
  const found: string[] = [];
  const walk = (d: string) => {
    let entries: fs.Dirent[];
    try {
      entries = fs.readdirSync(d, { withFileTypes: true });
    } catch {
      return;
    }
    for (const e of entries) {
      const p = path.join(d, e.name);
      if (e.name.includes(mark)) found.push(p);
      if (e.isDirectory()) walk(p);
    }
  };
  walk(dir);
  return found;
}
