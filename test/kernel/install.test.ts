/**
 * kernel-extensions/install.cjs and launch.cjs without starting Jupyter: what gets written into a
 * prefix, that a second run is a no-op, and that the launcher fails clearly without tslab.
 */
import { execFile } from "node:child_process";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { promisify } from "node:util";
import { afterEach, describe, expect, it } from "vitest";
import { ROOT } from "./env.js";

const run = promisify(execFile);
const require = createRequire(import.meta.url);
const install = require(join(ROOT, "kernel-extensions", "install.cjs")) as {
  installKernelspec(prefix: string): { dest: string; changed: string[] };
  installLabSettings(prefix: string): boolean;
};
const TEMPLATE = join(ROOT, "kernel-extensions", "kernelspec", "floatscope");

const dirs: string[] = [];
function tmp(): string {
  const d = mkdtempSync(join(tmpdir(), "floatscope-install-"));
  dirs.push(d);
  return d;
}
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("install.cjs", () => {
  it("copies the kernelspec with an absolute node and this checkout's root", () => {
    const prefix = tmp();
    const r = install.installKernelspec(prefix);
    expect(r.dest).toBe(join(prefix, "share", "jupyter", "kernels", "floatscope"));
    expect(r.changed.sort()).toEqual(["kernel.json", "launch.cjs", "preload.cjs", "shorthand.cjs"]);
    const spec = JSON.parse(readFileSync(join(r.dest, "kernel.json"), "utf8"));
    const template = JSON.parse(readFileSync(join(TEMPLATE, "kernel.json"), "utf8"));
    expect(template.argv[0]).toBe("node");
    expect(spec.argv[0]).toBe(process.execPath);
    expect(spec.argv.slice(1)).toEqual(template.argv.slice(1));
    expect(spec.env).toEqual({ ...template.env, FLOATSCOPE_ROOT: ROOT });
    expect(readFileSync(join(r.dest, "launch.cjs"), "utf8")).toBe(readFileSync(join(TEMPLATE, "launch.cjs"), "utf8"));
  });

  it("is a no-op the second time (files untouched)", () => {
    const prefix = tmp();
    const { dest } = install.installKernelspec(prefix);
    const before = statSync(join(dest, "kernel.json")).mtimeMs;
    expect(install.installKernelspec(prefix).changed).toEqual([]);
    expect(statSync(join(dest, "kernel.json")).mtimeMs).toBe(before);
  });

  it("merges its JupyterLab settings defaults into an existing overrides.json", () => {
    const prefix = tmp();
    const file = join(prefix, "share", "jupyter", "lab", "settings", "overrides.json");
    mkdirSync(join(prefix, "share", "jupyter", "lab", "settings"), { recursive: true });
    writeFileSync(file, JSON.stringify({ "@jupyterlab/apputils-extension:themes": { theme: "JupyterLab Dark" } }));
    expect(install.installLabSettings(prefix)).toBe(true);
    expect(JSON.parse(readFileSync(file, "utf8"))).toEqual({
      "@jupyterlab/apputils-extension:themes": { theme: "JupyterLab Dark" },
      "@jupyterlab/apputils-extension:notification": { fetchNews: "false" },
    });
    expect(install.installLabSettings(prefix)).toBe(false);
  });
});

describe("launch.cjs", () => {
  it("fails with a clear message when no tslab can be found", async () => {
    const d = tmp();
    const spec = join(d, "a", "b", "c", "kernel");
    mkdirSync(spec, { recursive: true });
    copyFileSync(join(TEMPLATE, "launch.cjs"), join(spec, "launch.cjs"));
    const err = await run(process.execPath, [join(spec, "launch.cjs"), join(d, "conn.json")], {
      cwd: d,
      env: { ...process.env, FLOATSCOPE_ROOT: join(d, "nowhere"), NODE_PATH: "" },
    }).then(
      () => null,
      (e: { code: number; stderr: string }) => e,
    );
    expect(err).not.toBeNull();
    expect(err!.code).toBe(1);
    expect(err!.stderr).toContain("floatscope kernel: cannot find the tslab package");
    expect(err!.stderr).toContain(join(d, "nowhere"));
    expect(err!.stderr).toContain("bash scripts/setup.sh");
  });

  it("refuses to start without a connection file", async () => {
    const e = await run(process.execPath, [join(TEMPLATE, "launch.cjs")], { cwd: ROOT }).then(
      () => null,
      (x: { code: number; stderr: string }) => x,
    );
    expect(e!.code).toBe(2);
    expect(e!.stderr).toContain("usage: node launch.cjs <connection_file>");
  });
});
