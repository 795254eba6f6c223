/**
 * What a user sees from the venv's own Jupyter: our kernel is listed (installed in .venv, not in
 * the home directory) and, once widgets/ is built, so is the labextension.
 */
import { execFile } from "node:child_process";
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { promisify } from "node:util";
import { describe, expect, it } from "vitest";
import { ROOT, VENV, setupMissing } from "./env.js";

const run = promisify(execFile);
const missing = setupMissing();
const jupyter = join(VENV, "bin", "jupyter");
// Same environment the entry-point scripts use (scripts/lib/jupyter-env.sh): nothing under HOME.
const env = {
  ...process.env,
  JUPYTER_PATH: join(VENV, "share", "jupyter"),
  JUPYTER_PLATFORM_DIRS: "1",
  JUPYTER_CONFIG_DIR: join(ROOT, ".cache", "jupyter", "config"),
  JUPYTER_DATA_DIR: join(ROOT, ".cache", "jupyter", "data"),
  JUPYTER_RUNTIME_DIR: join(ROOT, ".cache", "jupyter", "runtime"),
  IPYTHONDIR: join(ROOT, ".cache", "ipython"),
};

describe.skipIf(missing !== null)("jupyter CLI from .venv", () => {
  it("kernelspec list shows floatscope, installed inside .venv", async () => {
    const { stdout } = await run(jupyter, ["kernelspec", "list", "--json"], { env, cwd: ROOT, timeout: 60_000 });
    const specs = JSON.parse(stdout).kernelspecs;
    expect(specs.floatscope).toBeDefined();
    expect(specs.floatscope.resource_dir).toBe(join(VENV, "share", "jupyter", "kernels", "floatscope"));
    expect(specs.floatscope.spec.display_name).toBe("TypeScript (floatscope)");
    expect(specs.floatscope.spec.language).toBe("typescript");
  }, 60_000);

  it("jupyterlab is the pinned 4.6.6", async () => {
    const py = join(VENV, "bin", "python");
    const { stdout } = await run(py, ["-c", "from importlib.metadata import version; print(version('jupyterlab'))"], {
      env,
      timeout: 60_000,
    });
    expect(stdout.trim()).toBe("4.6.6");
  }, 60_000);

  const built = join(ROOT, "widgets", "labextension", "package.json");
  it.skipIf(!existsSync(built))(
    "labextension list shows the widgets extension, enabled and OK",
    async () => {
      const name = JSON.parse(readFileSync(built, "utf8")).name as string;
      const r = await run(jupyter, ["labextension", "list"], { env, cwd: ROOT, timeout: 60_000 });
      const text = (r.stdout + r.stderr).replace(/\x1b\[[0-9;]*m/g, "");
      expect(text).not.toContain("Fail to get yarn configuration");
      const line = text.split("\n").find((l) => l.includes(name));
      expect(line, text).toBeDefined();
      expect(line).toMatch(/enabled\s+OK/);
    },
    60_000,
  );
});
