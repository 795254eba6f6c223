/**
 * Every CLI command, every path argument it declares (`paths` in its CliCommand, required by the
 * type, so a new command is covered without touching this file), three hostile kinds each:
 *
 *   fifo          a FIFO, and a symlink to a FIFO (opening either for reading blocks forever)
 *   wrong kind    a folder where a file is expected; a regular file where a folder is; for a
 *                 "file or folder" argument, a folder whose file the command reads is a FIFO
 *   dangling link a symlink to nothing
 *
 * plus, for a folder argument that names a file read inside it, that file as a FIFO. Each must end
 * with a non-zero exit within 2 s and one message (a first line, then only the error's indented
 * detail lines) naming the path, with no stack trace. The commands run in a child process
 * (hostile-paths-driver.ts): a blocked open would freeze the process it runs in, so the timer must
 * live outside it.
 */
import { fork, spawnSync, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { pathToFileURL } from "node:url";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { PathArgument, PathFixtures } from "../../src/cli/command-types.js";
import { COMMANDS } from "../../src/cli/commands.js";
import { generate } from "../../src/samplers/generate.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const root = path.resolve(import.meta.dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-hostile-paths-"));
const LIMIT_MS = 2000;
const TSX = pathToFileURL(path.join(root, "node_modules/tsx/dist/loader.mjs")).href;
/** A stack trace line as Node prints them. */
const STACK_LINE = /^\s+at .+(:\d+:\d+\)?|native\))$/m;
/** The detail lines a FloatscopeError adds under its summary (errors.ts formatMessage). */
const DETAIL_LINE = /^ {2}(file|field|expected|found|hint): /;

interface Reply {
  code: number;
  out: string;
  err: string;
  ms: number;
}

/** The driver process; restarted after a hang (the hung one is killed). */
class Driver {
  private child: ChildProcess | undefined;
  private next = 0;

  private async start(): Promise<ChildProcess> {
    const child = fork(path.join(import.meta.dirname, "hostile-paths-driver.ts"), [], {
      // tsx by absolute URL: the driver runs in the scratch folder (a relative default path a command
      // falls back on lands there, not in the checkout), where "tsx" would not resolve.
      execArgv: ["--import", TSX],
      cwd: tmp,
      stdio: ["ignore", "ignore", "inherit", "ipc"],
    });
    await new Promise<void>((resolve, reject) => {
      child.once("message", () => resolve());
      child.once("exit", (c) => reject(new Error(`driver exited (${c}) before it was ready`)));
    });
    return child;
  }

  /** Commands whose modules the current driver has loaded. */
  private warm = new Set<string>();

  /**
   * Run one command line; "hang" when no reply came within `limit` ms. The command's modules are
   * loaded first (its `--help`, untimed), so the limit times the command, not a cold import.
   */
  async run(argv: string[], limit: number): Promise<Reply | "hang"> {
    if (!this.child) {
      this.child = await this.start();
      this.warm.clear();
    }
    if (!this.warm.has(argv[0])) {
      this.warm.add(argv[0]);
      await this.run([argv[0], "--help"], 60_000);
    }
    const child = this.child!;
    const id = this.next++;
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        child.off("message", onMessage);
        child.kill("SIGKILL");
        this.child = undefined;
        resolve("hang");
      }, limit);
      const onMessage = (m: { id?: number } & Reply) => {
        if (m.id !== id) return;
        clearTimeout(timer);
        child.off("message", onMessage);
        resolve(m);
      };
      child.on("message", onMessage);
      child.send({ id, argv });
    });
  }

  stop(): void {
    this.child?.kill("SIGKILL");
  }
}

function mkfifo(p: string): void {
  // mkfifo has no Node API; the coreutils binary is on every Debian machine
  const r = spawnSync("mkfifo", [p]);
  if (r.status !== 0) throw new Error(`mkfifo ${p} failed: ${r.stderr}`);
}

interface Case {
  command: string;
  arg: PathArgument;
  kind: "fifo" | "wrong kind" | "dangling link" | "inside";
  label: string;
  /** The hostile path given on the command line, and the path the message must name. */
  given: string;
  named: string;
}

let counter = 0;
/** A fresh folder per case, holding the hostile thing under the argument's declared name. */
function hostile(command: string, arg: PathArgument): Case[] {
  const make = (kind: Case["kind"], label: string, build: (p: string) => string): Case => {
    const dir = path.join(tmp, `case-${counter++}`);
    fs.mkdirSync(dir);
    const given = path.join(dir, arg.name);
    const named = build(given);
    return { command, arg, kind, label, given, named };
  };
  const cases: Case[] = [
    make("fifo", "a FIFO", (p) => {
      mkfifo(p);
      return p;
    }),
    make("fifo", "a symlink to a FIFO", (p) => {
      mkfifo(`${p}.fifo`);
      fs.symlinkSync(`${p}.fifo`, p);
      return p;
    }),
    make("dangling link", "a dangling symlink", (p) => {
      fs.symlinkSync(path.join(path.dirname(p), "nowhere"), p);
      return p;
    }),
  ];
  if (arg.expects === "file")
    cases.push(
      make("wrong kind", "a folder where a file is expected", (p) => {
        fs.mkdirSync(p);
        return p;
      }),
    );
  if (arg.expects === "folder")
    cases.push(
      make("wrong kind", "a file where a folder is expected", (p) => {
        fs.writeFileSync(p, "{}");
        return p;
      }),
    );
  for (const inside of arg.inside ?? []) {
    cases.push(
      make(arg.expects === "folder" ? "inside" : "wrong kind", `a folder whose ${inside} is a FIFO`, (p) => {
        fs.mkdirSync(p);
        // Around the FIFO, the files of a valid folder (linked), so the FIFO is what the command meets.
        const like = arg.like?.(fixtures);
        for (const n of like ? fs.readdirSync(like) : []) if (n !== inside) fs.symlinkSync(path.join(like!, n), path.join(p, n));
        mkfifo(path.join(p, inside));
        return path.join(p, inside);
      }),
    );
  }
  if (arg.expects === "file or folder" && !arg.inside?.length)
    throw new Error(`${command} ${arg.arg}: a "file or folder" argument must declare the files read \`inside\` it`);
  return cases;
}

const driver = new Driver();
let fixtures: PathFixtures;

beforeAll(async () => {
  const data = path.join(tmp, "data.jsonl");
  fs.writeFileSync(
    data,
    JSON.stringify({
      question: "What is the favourite colour of Bifo Mimosis ?",
      answers: ["green"],
      ctxs: [{ title: "Bifo Mimosis", text: "The favourite colour of Bifo Mimosis is green .", hasanswer: true, isgold: true }],
    }) + "\n",
  );
  const model = path.join(root, "models/tiny-llama");
  let grids = 0;
  const grid = (replace: { model?: string; data?: string } = {}) => {
    const file = path.join(tmp, `grid-${grids++}.json`);
    fs.writeFileSync(
      file,
      JSON.stringify({
        name: "hostile-paths",
        models: [{ name: "m", path: replace.model ?? model }],
        datasets: [{ name: "d", path: replace.data ?? data }],
        settings: [{ kind: "oracle" }],
      }),
    );
    return file;
  };
  const trace = path.join(tmp, "run.fstrace");
  const probes = { received: true, argmax: true };
  await generate(
    new FakeEngine({ family: "llada", probes }),
    ["t5 t6 t7"],
    { genLength: 4, steps: 2, seed: 1, probes },
    {
      tokenizer: new FakeTokenizer(),
      traceFiles: [trace],
      modelName: "fake",
    },
  );
  fixtures = { model, data, tmp: path.join(tmp, "out"), grid, trace };
  fs.mkdirSync(fixtures.tmp);
}, 60_000);

afterAll(() => {
  driver.stop();
  fs.rmSync(tmp, { recursive: true, force: true });
});

describe("every CLI command refuses hostile paths at once", () => {
  it("Every CLI command given a FIFO exits non-zero within 2 s with a one-line message.", async () => {
    const names = Object.keys(COMMANDS);
    const cases: Case[] = [];
    let args = 0;
    for (const name of names) {
      const { command } = await COMMANDS[name].load();
      expect(Array.isArray(command.paths), `${name} declares its paths`).toBe(true);
      // Load the command's modules once (the first call of a command imports them), so the 2 s
      // below time the path check, not module loading.
      const warm = await driver.run([name, "--help"], 60_000);
      expect(warm !== "hang" && warm.code, `${name} --help`).toBe(0);
      for (const arg of command.paths) {
        args++;
        cases.push(...hostile(name, arg));
      }
    }
    const failures: string[] = [];
    let hangs = 0,
      stacks = 0,
      slowest = { ms: 0, what: "" };
    for (const c of cases) {
      const argv = [c.command, ...c.arg.example(c.given, fixtures)];
      const what = `floatscope ${argv.join(" ")}  [${c.arg.arg}: ${c.label}]`;
      const r = await driver.run(argv, LIMIT_MS);
      if (r === "hang") {
        hangs++;
        failures.push(`${what}: no exit within ${LIMIT_MS} ms`);
        continue;
      }
      if (r.ms > slowest.ms) slowest = { ms: r.ms, what: `${c.command} ${c.arg.arg} (${c.label})` };
      const lines = r.err.split("\n").filter((l) => l !== "");
      const problems: string[] = [];
      if (r.code === 0) problems.push("exit 0");
      if (STACK_LINE.test(r.err) || /internal error/.test(r.err)) {
        stacks++;
        problems.push("a stack trace or internal error");
      }
      if (lines.length === 0 || !lines[0].startsWith(`floatscope ${c.command}: `)) problems.push("no `floatscope <command>: …` first line");
      if (lines.slice(1).some((l) => !DETAIL_LINE.test(l))) problems.push("more than one message");
      if (!r.err.includes(c.named)) problems.push(`the message does not name ${c.named}`);
      const said = c.kind === "dangling link" ? /symbolic link/ : /FIFO|folder|regular file|symbolic link/;
      if (!said.test(lines[0] ?? "")) problems.push("the first line does not say what is there");
      if (problems.length) failures.push(`${what}: ${problems.join("; ")}\n${r.err}`);
    }
    const kinds = new Set(cases.filter((c) => c.kind !== "inside").map((c) => c.kind)).size;
    const line = `hostile-paths: ${names.length} commands × ${args} path arguments × ${kinds} kinds, ${hangs} hangs, ${stacks} stack traces (${cases.length} cases; slowest ${slowest.ms.toFixed(0)} ms: ${slowest.what})`;
    console.log(line);
    expect(failures, failures.join("\n\n")).toEqual([]);
    expect(names.length).toBeGreaterThanOrEqual(8);
  }, 300_000);
});
