/**
 * Hostile strings (hostile-strings.ts, all of them) × every input of the script generator, `floatscope slurm`:
 * the grid's name (as the default folder grid-runs/<name>, and as a label beside --out), the grid file's path,
 * --out, --scripts, --merged, --floatscope, the Slurm words (--partition, --account, --qos, --mem, --time),
 * --device, and the model and dataset names and paths inside the grid.
 *
 * Each case either gets a typed refusal (exit 1 or 2, a message, no "internal error", no stack trace) or
 * scripts, and every set of scripts is then RUN with bash, under a fake cluster (../cluster/fake-cluster.ts:
 * sbatch, srun, kubectl, scontrol, squeue and node are logging fakes first on PATH): submit.sh, the progress
 * command it prints (for the fields that reach it), shards.sbatch as array task 1, merge.sbatch. The test fails when
 * - any file or folder whose name holds MARK appears while the scripts run (an injected `touch` ran), in the
 *   cases' folders, the working folder or the temporary folder;
 * - a script exits non-zero, or a fake command's argv differs from what the values say (each value one argument,
 *   equal to the value: paths as path.resolve gives them);
 * - the `#SBATCH` header, read as sbatch reads it, is not the expected options one per line (a value split it);
 * - a value that the documented rules accept (docs/cluster.md, "Names and quoting") is refused, or one they
 *   refuse is accepted;
 * - a value that should never reach the scripts (model and dataset names and paths) changes them.
 *
 * Path values are given under the case's folder (`<case>/` + string), which sits six levels deep, so `../` runs in
 * the corpus stay inside this test's temporary folder. Prints one line (scripts/test.sh shows it):
 *
 *   hostile-scripts: <N> strings × <F> fields, <G> scripts run, <R> refused, 0 injected commands
 */
import { spawn } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { findMarked, makeFakeCluster, readCalls, sbatchDirectives } from "../cluster/fake-cluster.js";
import { HOSTILE_STRINGS, MARK } from "./hostile-strings.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-hostile-scripts-"));
// Thousands of small folders: removed by rm(1) in the background, so a busy machine's slow unlinks are not
// counted in this test's time.
afterAll(() => spawn("rm", ["-rf", "--", tmp], { detached: true, stdio: "ignore" }).unref());

/**
 * What the rules refuse in a value written into a script (written out here, not imported, so that the rule and
 * src/util/shell.ts are checked against each other): C0 and C1 controls and DEL, U+2028/9, bidirectional
 * controls, lone surrogates.
 */
const CONTROL =
  /[\u0000-\u001f\u007f-\u009f\u2028\u2029\u202a-\u202e\u2066-\u2069]|[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;
const ENV_REF = /\$\{[A-Za-z_][A-Za-z0-9_]*\}/; // `${VAR}` in a grid path is read from the environment (unset here: refused)
const SLURM_WORD = /^[A-Za-z0-9_.:,+-]+$/;
const FS_MAIN = "/opt/fs/main.js";
const TASKS = 2;

/** Every component of an absolute path fits a file name (255 bytes on Linux). */
const componentsFit = (p: string) => p.split("/").every((c) => Buffer.byteLength(c) <= 255);

interface Case {
  field: string;
  value: string;
  /** Case folder: fake.log, run/ (the working folder), and path values under it. */
  dir: string;
  argv: string[];
  /** true: must be accepted; false: must be refused; "either": both are fine (refusals are safe). */
  accepts: boolean | "either";
  /** Expected arguments, when accepted. */
  gridFile: string;
  gridName: string;
  outDir: string;
  scriptsDir: string;
  merged: string;
  extraWords: string[];
  slurm: Record<string, string>;
  /** The value never reaches the scripts: they must be the baseline's, byte for byte. */
  sameAsBaseline: boolean;
  /** The value reaches the progress command submit.sh prints (the out folder or the floatscope words): run it too. */
  progress: boolean;
}

interface Field {
  name: string;
  /** The value must never reach the scripts: cases share the baseline's folder and must reproduce its scripts. */
  shared?: boolean;
  /** The value is a path under the case folder, which must then sit deep enough for the corpus's ../ runs. */
  path?: boolean;
  /** The value reaches the progress command submit.sh prints, which is then run too. */
  progress?: boolean;
  /** Fill in the case: write its grid file, set argv, the expected values and the acceptance rule. */
  make(c: Case, s: string): void;
}

/** A case folder, six levels deep for path values (see the header). */
function caseFolder(key: string, deep: boolean): string {
  const dir = deep ? path.join(tmp, "cases", key, "p", "p", "p", "p", "p", "p") : path.join(tmp, "cases", key);
  fs.mkdirSync(path.join(dir, "run"), { recursive: true });
  return dir;
}

function writeGrid(file: string, spec: Record<string, unknown>): boolean {
  try {
    fs.mkdirSync(path.dirname(file), { recursive: true });
    fs.writeFileSync(
      file,
      JSON.stringify({ name: "g", models: ["/models/m"], datasets: ["/data/d.jsonl"], settings: [{ kind: "oracle" }], ...spec }),
    );
    return fs.statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Fields whose value is a path: the case folder + "/" + the string. */
const under = (c: Case, s: string) => `${c.dir}/${s}`;
const plainFolderName = (s: string) => s !== "" && s !== "." && s !== ".." && !/[/\\]/.test(s) && Buffer.byteLength(s) <= 255;

const FIELDS: Field[] = [
  {
    name: "grid name (default folder grid-runs/<name>)",
    path: true, // "../../x": without the check, grid-runs/<name> leaves the case folder
    progress: true,
    make(c, s) {
      writeGrid(c.gridFile, { name: s });
      c.argv = [c.gridFile];
      c.gridName = s;
      c.outDir = path.join(c.dir, "run", "grid-runs", s);
      c.accepts = !CONTROL.test(s) && plainFolderName(s);
    },
  },
  {
    name: "grid name (with --out)",
    make(c, s) {
      writeGrid(c.gridFile, { name: s });
      c.gridName = s;
      c.accepts = !CONTROL.test(s) && s !== "";
    },
  },
  {
    name: "grid file path",
    path: true,
    make(c, s) {
      c.gridFile = path.resolve(under(c, s));
      const made = writeGrid(under(c, s), {});
      c.argv = [under(c, s), `--out=${c.outDir}`];
      c.accepts = made && !CONTROL.test(s);
    },
  },
  {
    name: "--out",
    path: true,
    progress: true,
    make(c, s) {
      c.outDir = path.resolve(under(c, s));
      c.argv = [c.gridFile, `--out=${under(c, s)}`];
      // The scripts folder defaults to <out>/slurm, and Slurm's log names cannot hold a backslash.
      c.accepts = !CONTROL.test(s) && !s.includes("\\") && componentsFit(c.outDir + "/slurm/logs");
    },
  },
  {
    name: "--scripts",
    path: true,
    make(c, s) {
      c.scriptsDir = path.resolve(under(c, s));
      c.argv.push(`--scripts=${under(c, s)}`);
      c.accepts = !CONTROL.test(s) && !s.includes("\\") && componentsFit(c.scriptsDir + "/logs");
    },
  },
  {
    name: "--merged",
    path: true,
    make(c, s) {
      c.merged = path.resolve(under(c, s) + ".jsonl");
      c.argv.push(`--merged=${under(c, s)}.jsonl`);
      c.accepts = CONTROL.test(s) ? false : s.includes("/") ? "either" : true;
    },
  },
  {
    name: "--floatscope (words after the program)",
    progress: true,
    make(c, s) {
      c.argv.push(`--floatscope=node ${FS_MAIN} ${s}`);
      c.extraWords = s.split(" ").filter((w) => w !== "");
      c.accepts = !CONTROL.test(s);
    },
  },
  ...["partition", "account", "qos", "mem", "time"].map((flag): Field => ({
    name: `--${flag}`,
    make(c, s) {
      c.argv.push(`--${flag}=${s}`);
      c.slurm = { [flag]: s };
      c.accepts = SLURM_WORD.test(s);
    },
  })),
  {
    name: "--device",
    make(c, s) {
      c.argv.push(`--device=${s}`);
      c.accepts = ["cpu", "cuda", "auto"].includes(s);
    },
  },
  ...(["models", "datasets"] as const).flatMap((list): Field[] => {
    const other = list === "models" ? "/data/d.jsonl" : "/models/m";
    const entry = (e: unknown) => (list === "models" ? { models: [e], datasets: [other] } : { models: [other], datasets: [e] });
    const ext = list === "models" ? "" : ".jsonl";
    return [
      {
        name: `${list} name`,
        shared: true,
        make(c, s) {
          writeGrid(c.gridFile, entry({ name: s, path: list === "models" ? "/models/m" : "/data/d.jsonl" }));
          c.accepts = !CONTROL.test(s) && s !== "" && !s.includes("|");
        },
      },
      {
        name: `${list} path`,
        shared: true,
        path: true,
        make(c, s) {
          writeGrid(c.gridFile, entry(under(c, s) + ext));
          // The label defaults to the folder or file name (less .jsonl/.gz): it must be there, without a control character or "|".
          const label = path
            .basename(path.resolve(under(c, s) + ext))
            .replace(/\.gz$/, "")
            .replace(/\.jsonl?$/, "");
          c.accepts = CONTROL.test(s) || label === "" ? false : ENV_REF.test(s) || s.includes("|") ? "either" : true;
        },
      },
    ];
  }),
];

/** A case with every value plain; `field.make` then puts the hostile string in one place. */
function baseCase(field: string, value: string, dir: string): Case {
  const outDir = path.join(dir, "out");
  const c: Case = {
    field,
    value,
    dir,
    argv: [],
    accepts: true,
    gridFile: path.join(dir, "grid.json"),
    gridName: "g",
    outDir,
    scriptsDir: "",
    merged: "",
    extraWords: [],
    slurm: {},
    sameAsBaseline: false,
    progress: false,
  };
  writeGrid(c.gridFile, {});
  c.argv = [c.gridFile, `--out=${outDir}`];
  return c;
}

function finish(c: Case): void {
  c.argv.push(`--tasks=${TASKS}`);
  if (!c.argv.some((a) => a.startsWith("--floatscope="))) c.argv.push(`--floatscope=node ${FS_MAIN}`);
  if (c.scriptsDir === "") c.scriptsDir = path.join(c.outDir, "slurm");
  if (c.merged === "") c.merged = path.join(c.outDir, "merged.parquet");
}

async function generate(c: Case): Promise<{ code: number; err: string }> {
  const err: string[] = [];
  const cwd = process.cwd();
  process.chdir(path.join(c.dir, "run"));
  try {
    const code = await main(["slurm", ...c.argv], { out: () => {}, err: (t) => err.push(t) });
    return { code, err: err.join("\n") };
  } finally {
    process.chdir(cwd);
  }
}

const SCRIPTS = ["submit.sh", "shards.sbatch", "merge.sbatch"];
const readScripts = (dir: string) => SCRIPTS.map((s) => fs.readFileSync(path.join(dir, s), "utf8"));

/**
 * One bash process that runs the scripts of many cases in turn: per case, submit.sh, the progress command it
 * prints (when the value can reach it), the array task and the merge, each in its own bash, logging to the case's
 * fake.log. Case folder, scripts folder and the progress flag come NUL-separated on stdin, so the driver itself
 * interpolates nothing.
 */
const DRIVER = `
while IFS= read -r -d '' c && IFS= read -r -d '' s && IFS= read -r -d '' progress; do
  cd "$c/run" || { echo "cannot cd to $c/run" >&2; continue; }
  export FS_FAKE_LOG="$c/fake.log"
  bash "$s/submit.sh" > "$c/submit.out" 2>&1; echo $? > "$c/rc"
  if [ "$progress" = 1 ]; then
    while IFS= read -r l; do
      case $l in "progress: "*) bash -c "\${l#progress: }" >> "$c/progress.out" 2>&1; echo $? >> "$c/rc";; esac
    done < "$c/submit.out"
  fi
  bash "$s/shards.sbatch" > "$c/shards.out" 2>&1; echo $? >> "$c/rc"
  bash "$s/merge.sbatch" > "$c/merge.out" 2>&1; echo $? >> "$c/rc"
done
`;

function runDriver(cases: Case[], env: NodeJS.ProcessEnv): Promise<void> {
  return new Promise((resolve, reject) => {
    const p = spawn("bash", ["-c", DRIVER], { env, stdio: ["pipe", "ignore", "pipe"] });
    let err = "";
    p.stderr.on("data", (d) => (err += d));
    p.on("error", reject);
    p.on("close", (code) => (code === 0 && err === "" ? resolve() : reject(new Error(`driver: exit ${code}: ${err.slice(0, 2000)}`))));
    p.stdin.end(Buffer.concat(cases.flatMap((c) => [c.dir, c.scriptsDir, c.progress ? "1" : "0"].map((x) => Buffer.from(x + "\0")))));
  });
}

function expectedHeader(c: Case): string[][] {
  const pattern = path.join(c.scriptsDir, "logs").replace(/%/g, "%%");
  const slurm = ["mem", "time", "partition", "account", "qos"].filter((k) => c.slurm[k] !== undefined).map((k) => [`--${k}=${c.slurm[k]}`]);
  return [
    [`--job-name=fs-${c.gridName}`],
    [`--array=1-${TASKS}`],
    ["--ntasks=1"],
    ["--cpus-per-task=2"],
    ...slurm,
    [`--output=${pattern}/shard-%a.out`],
    ["--open-mode=append"],
    ["--requeue"],
  ];
}

function expectedCalls(c: Case): { cmd: string; cwd?: string; args: string[] }[] {
  const fsArgs = [FS_MAIN, ...c.extraWords];
  return [
    { cmd: "sbatch", cwd: c.scriptsDir, args: ["--parsable", "shards.sbatch"] },
    { cmd: "sbatch", cwd: c.scriptsDir, args: ["--parsable", "--dependency=afterok:1", "--kill-on-invalid-dep=yes", "merge.sbatch"] },
    ...(c.progress ? [{ cmd: "node", args: [...fsArgs, "status", c.outDir] }] : []), // the progress command submit.sh printed
    {
      cmd: "node",
      args: [...fsArgs, "eval", "--grid", c.gridFile, "--shard", `1/${TASKS}`, "--out", c.outDir, "--device", "cpu", "--threads", "2"],
    },
    { cmd: "node", args: [...fsArgs, "status", c.outDir] },
    { cmd: "node", args: [...fsArgs, "merge", c.outDir, "--out", c.merged] },
  ];
}

it("the harness sees an injected command and a split argument (self-test)", async () => {
  const fc = makeFakeCluster(path.join(tmp, "self"));
  const c = baseCase("self-test", "", caseFolder("self-test", false));
  finish(c);
  fs.mkdirSync(c.scriptsDir, { recursive: true });
  // What the generator wrote before values were quoted: a value inside a double-quoted echo, and one left unquoted.
  fs.writeFileSync(path.join(c.scriptsDir, "submit.sh"), `echo "progress: $(touch ${MARK}-self)"\n`);
  fs.writeFileSync(path.join(c.scriptsDir, "shards.sbatch"), `exec node ${FS_MAIN} eval --out ${c.dir}/a b\n`);
  fs.writeFileSync(path.join(c.scriptsDir, "merge.sbatch"), "exit 0\n");
  const before = findMarked(tmp, MARK);
  await runDriver([c], fc.env);
  expect(findMarked(tmp, MARK).filter((p) => !before.includes(p))).toEqual([path.join(c.dir, "run", `${MARK}-self`)]);
  expect(readCalls(path.join(c.dir, "fake.log")).map((k) => k.args)).toEqual([[FS_MAIN, "eval", "--out", `${c.dir}/a`, "b"]]);
});

it("no hostile string in any input of `floatscope slurm` runs as code when the scripts run; refusals are typed", async () => {
  const t0 = Date.now();
  const fc = makeFakeCluster(tmp);
  const problems: string[] = [];
  const toRun: Case[] = [];
  let refused = 0;
  const refusedBy = new Map<string, number>();

  // The baseline: plain values; fields that must not reach the scripts share its folder and are compared to it.
  const sharedDir = caseFolder("shared", true);
  const baseline = baseCase("baseline", "", sharedDir);
  baseline.progress = true;
  finish(baseline);
  const b = await generate(baseline);
  expect(b.code, b.err).toBe(0);
  const baselineScripts = readScripts(baseline.scriptsDir).join("\0");
  toRun.push(baseline);

  for (const [f, field] of FIELDS.entries()) {
    for (const [i, s] of HOSTILE_STRINGS.entries()) {
      const c = baseCase(field.name, s, field.shared ? sharedDir : caseFolder(`${f}-${i}`, field.path === true));
      c.sameAsBaseline = field.shared === true;
      c.progress = field.progress === true;
      field.make(c, s);
      finish(c);
      const r = await generate(c);
      const where = `${field.name} = ${JSON.stringify(s)}`;
      if (r.code !== 0) {
        refused++;
        refusedBy.set(field.name, (refusedBy.get(field.name) ?? 0) + 1);
        if (c.accepts === true) problems.push(`${where}: refused, but the rules accept it: ${r.err.split("\n")[0]}`);
        if (![1, 2].includes(r.code) || /internal error|\n\s+at /.test(r.err) || r.err.trim() === "")
          problems.push(`${where}: not a typed refusal (exit ${r.code}): ${r.err.slice(0, 300)}`);
        continue;
      }
      if (c.accepts === false) problems.push(`${where}: accepted, but the rules refuse it`);
      if (c.sameAsBaseline) {
        if (readScripts(c.scriptsDir).join("\0") !== baselineScripts) problems.push(`${where}: the value reached the scripts`);
        continue;
      }
      const shards = path.join(c.scriptsDir, "shards.sbatch");
      if (!fs.existsSync(shards)) {
        problems.push(`${where}: accepted, but no scripts in ${c.scriptsDir}`);
        continue;
      }
      const header = sbatchDirectives(fs.readFileSync(shards, "utf8"));
      if (JSON.stringify(header) !== JSON.stringify(expectedHeader(c)))
        problems.push(`${where}: #SBATCH header read as ${JSON.stringify(header).slice(0, 400)}`);
      toRun.push(c);
    }
  }
  const tGen = Date.now();

  // Run every accepted case's scripts: two bash drivers side by side (two cores).
  const before = new Set(findMarked(tmp, MARK));
  const outside = [process.cwd(), os.tmpdir()];
  const marked = (d: string) => fs.readdirSync(d).filter((n) => n.includes(MARK));
  const outsideBefore = outside.map(marked);
  const half = Math.ceil(toRun.length / 2);
  const tWalk = Date.now();
  await Promise.all([runDriver(toRun.slice(0, half), fc.env), runDriver(toRun.slice(half), fc.env)]);
  const tDrive = Date.now();
  const injected = findMarked(tmp, MARK).filter((p) => !before.has(p));
  outside.forEach((d, k) =>
    injected.push(
      ...marked(d)
        .filter((n) => !outsideBefore[k].includes(n))
        .map((n) => path.join(d, n)),
    ),
  );
  for (const p of injected) problems.push(`injected command ran: it created ${p}`);

  for (const c of toRun) {
    const where = `${c.field} = ${JSON.stringify(c.value)}`;
    const rc = fs.readFileSync(path.join(c.dir, "rc"), "utf8").trim().split("\n");
    if (rc.join(",") !== (c.progress ? "0,0,0,0" : "0,0,0")) {
      const out = ["submit", "shards", "merge"].map((s) => fs.readFileSync(path.join(c.dir, `${s}.out`), "utf8")).join(" | ");
      problems.push(`${where}: exit codes ${rc.join(",")} (submit, [progress,] shards, merge): ${out.slice(0, 400)}`);
      continue;
    }
    const calls = readCalls(path.join(c.dir, "fake.log"));
    const want = expectedCalls(c);
    const got = calls.map((k, j) => ({ cmd: k.cmd, ...(want[j]?.cwd !== undefined ? { cwd: k.cwd } : {}), args: k.args }));
    if (JSON.stringify(got) !== JSON.stringify(want))
      problems.push(
        `${where}: the fake commands got ${JSON.stringify(got).slice(0, 600)}\n  expected ${JSON.stringify(want).slice(0, 600)}`,
      );
  }
  const tRun = Date.now();

  const n = HOSTILE_STRINGS.length;
  const scriptsRun = toRun.length * SCRIPTS.length;
  const line = `hostile-scripts: ${n} strings × ${FIELDS.length} fields, ${scriptsRun} scripts run, ${refused} refused, ${injected.length} injected commands`;
  const secs = (a: number, b: number) => ((b - a) / 1000).toFixed(1);
  const perField = FIELDS.map((f) => `${f.name} ${refusedBy.get(f.name) ?? 0}`).join(", ");
  console.log(
    `${line}\n(refused per field: ${perField})\n(generating ${secs(t0, tGen)} s, running the scripts ${secs(tWalk, tDrive)} s, checking ${secs(tDrive, tRun)} s)`,
  );
  expect(problems, `${problems.length} problems:\n${problems.slice(0, 40).join("\n")}`).toEqual([]);
  expect(injected).toEqual([]);
}, 180_000);
