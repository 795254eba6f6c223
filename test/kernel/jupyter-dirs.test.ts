/**
 * Jupyter's own files — config, data, runtime (the server's cookie secret, kernel connection files)
 * — stay inside the checkout when notebooks run (scripts/run-notebooks.py, which
 * `npm run reproduce` calls) and when JupyterLab starts (scripts/start.sh): with a fresh temporary
 * HOME, nothing Jupyter writes lands under it.
 */
import { execFile, spawn } from "node:child_process";
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join, relative } from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { ROOT, VENV, VENV_PYTHON, setupMissing } from "./env.js";

const run = promisify(execFile);
const missing = setupMissing();
const RUNTIME = join(ROOT, ".cache", "jupyter", "runtime");
const scratch: string[] = [];

/** A process environment as a new user would have it: an empty HOME, no Jupyter or XDG settings. */
function freshHome(): { home: string; env: NodeJS.ProcessEnv } {
  const home = mkdtempSync(join(tmpdir(), "floatscope-home-"));
  scratch.push(home);
  const env: NodeJS.ProcessEnv = {};
  for (const [k, v] of Object.entries(process.env)) if (!/^(JUPYTER_|XDG_|IPYTHON)/.test(k)) env[k] = v;
  env.HOME = home;
  return { home, env };
}

/** Every path under `dir`, relative to it. */
function walk(dir: string, base = dir): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = join(dir, e.name);
    return [relative(base, p), ...(e.isDirectory() ? walk(p, base) : [])];
  });
}

afterAll(() => {
  for (const d of scratch) rmSync(d, { recursive: true, force: true });
});

describe.skipIf(missing !== null)("Jupyter's files stay inside the checkout", () => {
  it("jupyter-env.sh points config, data and runtime into .cache/jupyter (plain Jupyter would use HOME)", async () => {
    const { home, env } = freshHome();
    const plain = JSON.parse((await run(join(VENV, "bin", "jupyter"), ["--paths", "--json"], { env, cwd: ROOT })).stdout);
    expect(plain.runtime[0].startsWith(home)).toBe(true); // the control: what we keep away from
    const ours = JSON.parse(
      (
        await run("bash", ["-c", "source scripts/lib/jupyter-env.sh && .venv/bin/jupyter --paths --json"], {
          env: { ...env, ROOT },
          cwd: ROOT,
        })
      ).stdout,
    );
    // (.venv's own etc/ and share/ come first: Jupyter prefers the active environment's paths)
    expect(ours.config).toContain(join(ROOT, ".cache", "jupyter", "config"));
    expect(ours.data).toContain(join(ROOT, ".cache", "jupyter", "data"));
    expect(ours.data[0]).toBe(join(VENV, "share", "jupyter"));
    expect(ours.runtime).toEqual([RUNTIME]);
    const underHome = [...ours.config, ...ours.data, ...ours.runtime].filter((p: string) => p.startsWith(home));
    expect(underHome).toEqual([]);
  }, 60_000);

  it("run-notebooks.py executes a notebook and leaves nothing under HOME", async () => {
    const { home, env } = freshHome();
    const nbDir = mkdtempSync(join(tmpdir(), "floatscope-nb-"));
    scratch.push(nbDir);
    const nb = {
      nbformat: 4,
      nbformat_minor: 5,
      metadata: { kernelspec: { name: "floatscope", display_name: "TypeScript (floatscope)", language: "typescript" } },
      cells: [{ cell_type: "code", id: "c1", metadata: {}, execution_count: null, outputs: [], source: "console.log(6 * 7);" }],
    };
    writeFileSync(join(nbDir, "tiny.ipynb"), JSON.stringify(nb));
    await run(VENV_PYTHON, [join(ROOT, "scripts", "run-notebooks.py"), "--output-dir", join(nbDir, "out"), join(nbDir, "tiny.ipynb")], {
      env,
      cwd: ROOT,
      timeout: 150_000,
    });
    const executed = JSON.parse(readFileSync(join(nbDir, "out", "tiny.ipynb"), "utf8"));
    expect(executed.cells[0].outputs[0].text.join?.("") ?? executed.cells[0].outputs[0].text).toBe("42\n");
    expect(walk(home).filter((p) => /jupyter|ipython/i.test(p))).toEqual([]);
  }, 180_000);

  it("start.sh runs JupyterLab with its runtime files (cookie secret, server info) in .cache/jupyter", async () => {
    const { home, env } = freshHome();
    const port = await new Promise<number>((res) => {
      const s = createServer().listen(0, "127.0.0.1", () => {
        const p = (s.address() as { port: number }).port;
        s.close(() => res(p));
      });
    });
    const proc = spawn("bash", [join(ROOT, "scripts", "start.sh")], {
      env: { ...env, FLOATSCOPE_SKIP_SETUP: "1", FLOATSCOPE_PORT: String(port) },
      cwd: ROOT,
      detached: true,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    proc.stdout!.on("data", (d) => (log += d));
    proc.stderr!.on("data", (d) => (log += d));
    try {
      // start.sh execs jupyter lab, so the server's pid is the one we spawned: its info file names it.
      const info = join(RUNTIME, `jpserver-${proc.pid}.json`);
      const deadline = Date.now() + 120_000;
      while (!existsSync(info) && Date.now() < deadline && proc.exitCode === null) await new Promise((r) => setTimeout(r, 500));
      expect(existsSync(info), log).toBe(true);
      expect(JSON.parse(readFileSync(info, "utf8")).port).toBe(port);
      expect(existsSync(join(RUNTIME, "jupyter_cookie_secret"))).toBe(true);
      expect(walk(home).filter((p) => /jupyter|ipython/i.test(p))).toEqual([]);
    } finally {
      if (proc.exitCode === null) {
        const gone = new Promise((r) => proc.once("exit", r));
        process.kill(-proc.pid!, "SIGTERM");
        await Promise.race([gone, new Promise((r) => setTimeout(r, 10_000))]);
        if (proc.exitCode === null) process.kill(-proc.pid!, "SIGKILL");
      }
    }
  }, 180_000);
});
