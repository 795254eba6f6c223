/**
 * The scripts `floatscope slurm` writes, run with bash under a fake cluster (fake-cluster.ts): every value
 * reaches the commands as the one argument it was, and no name ever runs as shell code or splits the
 * `#SBATCH` header. One test per finding of the hostile-input review (each failed on the code before the fix), the
 * hand-worked quoting rule, and a normal grid's scripts call exactly the commands they should.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli as cli } from "../support/cli.js";
import { shellQuote, unsafeCharIn } from "../../src/util/shell.js";
import { findMarked, makeFakeCluster, readCalls, runScript, sbatchDirectives, type FakeCall } from "./fake-cluster.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-slurm-scripts-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const MARK = "PWNEDMARK";
let n = 0;

/** A fresh case folder with a grid file (models and data need not exist: slurm only reads the grid). */
function caseDir(spec: Record<string, unknown> = {}, gridName = "grid.json") {
  const dir = path.join(tmp, `case-${++n}`);
  fs.mkdirSync(dir, { recursive: true });
  const grid = path.join(dir, gridName);
  fs.writeFileSync(
    grid,
    JSON.stringify({ name: "g", models: ["/models/tiny-llada"], datasets: ["/data/qa.jsonl"], settings: [{ kind: "oracle" }], ...spec }),
  );
  return { dir, grid, fc: makeFakeCluster(dir) };
}

/** Run the three scripts as a cluster would: submit.sh from the case folder, then the array task and the merge job. */
function runAll(fc: ReturnType<typeof makeFakeCluster>, scripts: string, cwd: string) {
  const before = new Set(findMarked(tmp, MARK));
  const results = ["submit.sh", "shards.sbatch", "merge.sbatch"].map((s) => runScript(fc, path.join(scripts, s), cwd));
  const injected = findMarked(tmp, MARK).filter((p) => !before.has(p));
  return { results, injected, calls: readCalls(fc.log) };
}

const FS = ["node", "/opt/fs/main.js"];

/** Run `f` with `dir` as the working folder (relative defaults such as grid-runs/ land there). */
async function inDir<T>(dir: string, f: () => Promise<T>): Promise<T> {
  const cwd = process.cwd();
  process.chdir(dir);
  try {
    return await f();
  } finally {
    process.chdir(cwd);
  }
}
const nodeCalls = (calls: FakeCall[]) => calls.filter((c) => c.cmd === "node").map((c) => c.args);

describe("shellQuote (worked by hand)", () => {
  it("leaves plain words alone and single-quotes everything else, ' as '\\''", () => {
    expect(shellQuote("abc")).toBe("abc");
    expect(shellQuote("/a/b-c_d.e:f,g@h%i+j")).toBe("/a/b-c_d.e:f,g@h%i+j");
    expect(shellQuote("-rf")).toBe("-rf");
    expect(shellQuote("")).toBe("''");
    expect(shellQuote("a b")).toBe("'a b'");
    expect(shellQuote("it's")).toBe("'it'\\''s'");
    expect(shellQuote("'")).toBe("''\\'''");
    expect(shellQuote("a\nb")).toBe("'a\nb'");
    expect(shellQuote("$(touch x)")).toBe("'$(touch x)'");
    expect(shellQuote("`touch x`")).toBe("'`touch x`'");
    expect(shellQuote('"$HOME"')).toBe("'\"$HOME\"'");
    expect(shellQuote("a=b")).toBe("'a=b'"); // would be an assignment in command position
    expect(shellQuote("~/x")).toBe("'~/x'"); // would be expanded to $HOME/x
    expect(shellQuote("*")).toBe("'*'");
  });

  it("bash reads every quoted value back as one word equal to it", () => {
    const values = [
      "",
      "'",
      "''",
      "a'b'c",
      "a\nb",
      "$(touch x)",
      "`touch x`",
      "\\",
      "\\'",
      "$'\\x41'",
      "!x",
      "a b  c",
      "*?[a]",
      "~",
      "#x",
      "-n",
    ];
    const r = spawnSync("bash", ["-c", `printf '%s\\0' ${values.map(shellQuote).join(" ")}`], { encoding: "utf8" });
    expect(r.status).toBe(0);
    expect(r.stdout.split("\0").slice(0, -1)).toEqual(values);
  });

  it("names the first control character by code point", () => {
    expect(unsafeCharIn("abc")).toBeUndefined();
    expect(unsafeCharIn("名前 é")).toBeUndefined();
    expect(unsafeCharIn("x\ny")).toBe("U+000A (line feed) at character 2");
    expect(unsafeCharIn("ab\u0000")).toBe("U+0000 (NUL) at character 3");
    expect(unsafeCharIn("a\u202eb")).toMatch(/^U\+202E /);
    expect(unsafeCharIn("a\u2028b")).toMatch(/^U\+2028 /);
    expect(unsafeCharIn("\ud800")).toMatch(/^U\+D800 /);
  });
});

describe("hostile names in `floatscope slurm`", () => {
  it("a newline in the grid name is refused (typed, naming the field and the character); no script is written", async () => {
    const { grid, dir } = caseDir({ name: `x\ntouch ${MARK}` });
    const r = await cli("slurm", grid, "--tasks", "2", "--out", path.join(dir, "out"), "--floatscope", FS.join(" "));
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/GridError/);
    expect(r.err).toMatch(/field: name/);
    expect(r.err).toMatch(/U\+000A/);
    expect(r.err).not.toMatch(/internal error/);
    expect(fs.existsSync(path.join(dir, "out"))).toBe(false);
  });

  for (const payload of [`$(touch ${MARK}1)`, "`touch " + MARK + "2`", `'; touch ${MARK}3; '`, `"; touch ${MARK}4; "`]) {
    it(`grid name ${JSON.stringify(payload)}: the scripts run nothing it contains, and Slurm reads the job name as one value`, async () => {
      // No --out: the default folder grid-runs/<name> carries the name into the scripts' paths too.
      const { grid, dir, fc } = caseDir({ name: `my ${payload}` });
      const out = path.join(dir, "grid-runs", `my ${payload}`);
      const r = await inDir(dir, () => cli("slurm", grid, "--tasks", "2", "--floatscope", FS.join(" ")));
      expect(r.code, r.err).toBe(0);
      const { injected, results } = runAll(fc, path.join(out, "slurm"), dir);
      expect(injected).toEqual([]);
      for (const x of results) expect(x.status, x.stderr).toBe(0);
      const header = sbatchDirectives(fs.readFileSync(path.join(out, "slurm", "shards.sbatch"), "utf8"));
      expect(header).toContainEqual([`--job-name=fs-my ${payload}`]);
    });
  }

  it("`$(…)` and backticks in --out run nothing; every command gets the folder as one argument", async () => {
    const { grid, dir, fc } = caseDir();
    const out = path.join(dir, `o $(touch ${MARK}5) \`touch ${MARK}6\` 'q' "d"`);
    const r = await cli("slurm", grid, "--tasks", "3", "--out", out, "--floatscope", FS.join(" "));
    expect(r.code, r.err).toBe(0);
    const { injected, results, calls } = runAll(fc, path.join(out, "slurm"), dir);
    expect(injected).toEqual([]);
    // submit.sh prints the progress command; pasted into a shell, it must run just that.
    const progress = /^progress: (.*)$/m.exec(results[0].stdout)?.[1];
    expect(progress, results[0].stdout).toBeDefined();
    const before = findMarked(tmp, MARK); // the folders named after --out, made by `floatscope slurm` itself
    const p = spawnSync("bash", ["-c", progress!], { cwd: dir, env: fc.env, encoding: "utf8" });
    expect(p.status).toBe(0);
    expect(findMarked(tmp, MARK)).toEqual(before);
    const node = nodeCalls(readCalls(fc.log));
    expect(node).toEqual([
      ["/opt/fs/main.js", "eval", "--grid", grid, "--shard", "1/3", "--out", out, "--device", "cpu", "--threads", "2"],
      ["/opt/fs/main.js", "status", out],
      ["/opt/fs/main.js", "merge", out, "--out", path.join(out, "merged.parquet")],
      ["/opt/fs/main.js", "status", out],
    ]);
    expect(calls.filter((c) => c.cmd === "sbatch").map((c) => c.cwd)).toEqual([path.join(out, "slurm"), path.join(out, "slurm")]);
  });

  for (const flag of ["--out", "--scripts", "--merged"]) {
    it(`a newline in ${flag} is refused naming ${flag} and U+000A (it would cut the #SBATCH header)`, async () => {
      const { grid, dir } = caseDir();
      const value = path.join(dir, flag === "--merged" ? "m\n#SBATCH --wrap=x.jsonl" : "o\n#SBATCH --wrap=x");
      const out = flag === "--out" ? [] : ["--out", path.join(dir, "o")];
      const r = await cli("slurm", grid, "--tasks", "2", ...out, flag, value, "--floatscope", FS.join(" "));
      expect(r.code).toBe(2);
      expect(r.err).toContain(`field: ${flag}`);
      expect(r.err).toMatch(/U\+000A/);
      expect(fs.readdirSync(dir).sort()).toEqual(["fake-bin", "fake.log", "grid.json"]);
    });
  }

  it("a grid named ../../x is refused without --out (nothing written outside grid-runs/); with --out it is just a label", async () => {
    const { grid, dir, fc } = caseDir({ name: "../../x" });
    const work = path.join(dir, "a", "b");
    fs.mkdirSync(work, { recursive: true });
    const cwd = process.cwd();
    process.chdir(work);
    try {
      const r = await cli("slurm", grid, "--tasks", "2", "--floatscope", FS.join(" "));
      expect(r.code).not.toBe(0);
      expect(r.err).toMatch(/field: name/);
      expect(r.err).toMatch(/--out/);
      expect(fs.readdirSync(path.join(dir, "a"))).toEqual(["b"]);
      expect(fs.readdirSync(work)).toEqual([]);
      // Named explicitly, the folder is the user's choice.
      const ok = await cli("slurm", grid, "--tasks", "2", "--out", "runs", "--floatscope", FS.join(" "));
      expect(ok.code, ok.err).toBe(0);
      expect(fs.existsSync(path.join(work, "runs", "slurm", "shards.sbatch"))).toBe(true);
      expect(runAll(fc, path.join(work, "runs", "slurm"), work).injected).toEqual([]);
    } finally {
      process.chdir(cwd);
    }
  });

  it("`eval --grid` refuses the same default folder for ../../x (nothing run or written outside grid-runs/)", async () => {
    const root = path.resolve(__dirname, "..", "..");
    const { grid, dir } = caseDir({
      name: "../../x",
      models: [path.join(root, "models", "tiny-llada")],
      datasets: [{ path: path.join(root, "models", "world", "eval-heldout.jsonl.gz"), limit: 1 }],
    });
    const work = path.join(dir, "a", "b");
    fs.mkdirSync(work, { recursive: true });
    const r = await inDir(work, () => cli("eval", "--grid", grid));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/field: name/);
    expect(fs.readdirSync(path.join(dir, "a"))).toEqual(["b"]);
    expect(fs.readdirSync(work)).toEqual([]);
  });

  it("a plain grid name still makes grid-runs/<name>/", async () => {
    const { grid, dir } = caseDir({ name: "fig 6 (v2)" });
    const cwd = process.cwd();
    process.chdir(dir);
    try {
      const r = await cli("slurm", grid, "--tasks", "2", "--floatscope", FS.join(" "));
      expect(r.code, r.err).toBe(0);
      expect(fs.existsSync(path.join(dir, "grid-runs", "fig 6 (v2)", "slurm", "submit.sh"))).toBe(true);
    } finally {
      process.chdir(cwd);
    }
  });

  for (const [where, spec] of [
    ["name", { name: 42 }],
    ["name", { name: ["a"] }],
    ["models[0].name", { models: [{ name: 7, path: "/m" }] }],
    ["datasets[0].name", { datasets: [{ name: { a: 1 }, path: "/d.jsonl" }] }],
  ] as const) {
    it(`a non-string ${where} is a typed one-line GridError, not an internal error`, async () => {
      const { grid, dir } = caseDir(spec);
      const r = await cli("slurm", grid, "--tasks", "2", "--out", path.join(dir, "o"));
      expect(r.code).toBe(1);
      expect(r.err).toMatch(/GridError/);
      expect(r.err).toContain(`field: ${where}`);
      expect(r.err).toMatch(/expected: a non-empty string/);
      expect(r.err).not.toMatch(/internal error|TypeError/);
    });
  }

  it("a scripts folder with spaces, quotes, # and % stays one --output value in the header (% doubled for Slurm)", async () => {
    const { grid, dir } = caseDir({ name: "my grid #1" });
    const scripts = path.join(dir, `logs "a" 'b' #c 50%`);
    const r = await cli("slurm", grid, "--tasks", "2", "--out", path.join(dir, "o"), "--scripts", scripts, "--partition", "gpu");
    expect(r.code, r.err).toBe(0);
    const header = sbatchDirectives(fs.readFileSync(path.join(scripts, "shards.sbatch"), "utf8"));
    const logs = path.join(scripts, "logs").replace(/%/g, "%%");
    expect(header).toEqual([
      ["--job-name=fs-my grid #1"],
      ["--array=1-2"],
      ["--ntasks=1"],
      ["--cpus-per-task=2"],
      ["--partition=gpu"],
      [`--output=${logs}/shard-%a.out`],
      ["--open-mode=append"],
      ["--requeue"],
    ]);
    const merge = sbatchDirectives(fs.readFileSync(path.join(scripts, "merge.sbatch"), "utf8"));
    expect(merge).toContainEqual(["--job-name=fs-my grid #1-merge"]);
    expect(merge).toContainEqual([`--output=${logs}/merge.out`]);
  });

  it("--floatscope is split at spaces into words, each passed as it is (no shell expansion)", async () => {
    const { grid, dir, fc } = caseDir();
    const out = path.join(dir, "o");
    const r = await cli("slurm", grid, "--tasks", "1", "--out", out, "--floatscope", `node $(touch ${MARK}7) ;x`);
    expect(r.code, r.err).toBe(0);
    const { injected, results } = runAll(fc, path.join(out, "slurm"), dir);
    expect(injected).toEqual([]);
    expect(results[1].status).toBe(0);
    expect(nodeCalls(readCalls(fc.log))[0].slice(0, 4)).toEqual([`$(touch`, `${MARK}7)`, ";x", "eval"]);
  });

  it("control characters in the grid file's path and in --floatscope are refused by name", async () => {
    const { grid, dir } = caseDir({}, "g\u001b[31m.json");
    const r = await cli("slurm", grid, "--tasks", "1", "--out", path.join(dir, "o"));
    expect(r.code).toBe(2);
    expect(r.err).toMatch(/field: <grid\.json>[\s\S]*U\+001B/);
    const { grid: g2, dir: d2 } = caseDir();
    const r2 = await cli("slurm", g2, "--tasks", "1", "--out", path.join(d2, "o"), "--floatscope", "node\rx");
    expect(r2.code).toBe(2);
    expect(r2.err).toMatch(/field: --floatscope[\s\S]*U\+000D/);
  });
});

describe("a normal grid's scripts under the fake cluster", () => {
  it("submit.sh submits the array then the merge after it; the task and the merge call floatscope with these exact arguments", async () => {
    const { grid, dir, fc } = caseDir({ name: "tiny-test" });
    const out = path.join(dir, "runs");
    const r = await cli(
      "slurm",
      grid,
      "--tasks",
      "4",
      "--cpus-per-task",
      "1",
      "--gpus-per-task",
      "1",
      "--max-parallel",
      "2",
      "--time",
      "01:00:00",
      "--out",
      out,
      "--merged",
      path.join(out, "m.jsonl"),
      "--floatscope",
      FS.join(" "),
    );
    expect(r.code, r.err).toBe(0);
    const scripts = path.join(out, "slurm");
    const { results, calls, injected } = runAll(fc, scripts, dir);
    expect(injected).toEqual([]);
    for (const x of results) expect(x.status, x.stderr).toBe(0);
    expect(calls.filter((c) => c.cmd === "sbatch").map((c) => c.args)).toEqual([
      ["--parsable", "shards.sbatch"],
      ["--parsable", "--dependency=afterok:1", "--kill-on-invalid-dep=yes", "merge.sbatch"],
    ]);
    expect(fs.readFileSync(path.join(scripts, "submitted.txt"), "utf8")).toBe("1 1\n");
    expect(nodeCalls(calls)).toEqual([
      ["/opt/fs/main.js", "eval", "--grid", grid, "--shard", "1/4", "--out", out, "--device", "cuda", "--threads", "1"],
      ["/opt/fs/main.js", "status", out],
      ["/opt/fs/main.js", "merge", out, "--out", path.join(out, "m.jsonl")],
    ]);
    const header = sbatchDirectives(fs.readFileSync(path.join(scripts, "shards.sbatch"), "utf8"));
    expect(header).toContainEqual(["--array=1-4%2"]);
    expect(header).toContainEqual(["--gpus-per-task=1"]);
    expect(header).toContainEqual(["--time=01:00:00"]);
    expect(header).toContainEqual([`--output=${scripts}/logs/shard-%a.out`]);
  });

  it("a grid with measures: the merge also writes the findings file (default beside the shards, or --findings; one argument)", async () => {
    const { grid, dir, fc } = caseDir({ name: "claims", measures: ["sink"] });
    const out = path.join(dir, "runs");
    const merged = path.join(out, "m.jsonl");
    expect((await cli("slurm", grid, "--tasks", "2", "--out", out, "--merged", merged, "--floatscope", FS.join(" "))).code).toBe(0);
    let { calls } = runAll(fc, path.join(out, "slurm"), dir);
    expect(nodeCalls(calls).pop()).toEqual([
      "/opt/fs/main.js",
      "merge",
      out,
      "--out",
      merged,
      "--findings",
      path.join(out, "grid.findings.json"),
    ]);
    const odd = path.join(dir, `my findings $(touch ${MARK}-f) 'x'.json`);
    const r = await cli("slurm", grid, "--tasks", "2", "--out", out, "--merged", merged, "--findings", odd, "--floatscope", FS.join(" "));
    expect(r.code, r.err).toBe(0);
    const again = runAll(fc, path.join(out, "slurm"), dir);
    expect(again.injected).toEqual([]);
    calls = again.calls;
    expect(nodeCalls(calls).pop()).toEqual(["/opt/fs/main.js", "merge", out, "--out", merged, "--findings", odd]);
    // --findings on a grid without measures: a usage error, nothing to find.
    const plain = caseDir();
    const refused = await cli("slurm", plain.grid, "--tasks", "2", "--out", path.join(plain.dir, "r"), "--findings", odd);
    expect(refused.code).toBe(2);
    expect(refused.err).toMatch(/--findings needs a grid that records measures/);
  });
});
