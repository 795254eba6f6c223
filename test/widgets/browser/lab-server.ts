/**
 * Start the project's own JupyterLab (.venv) on a free localhost port with a token, in a scratch
 * root folder under .cache/ (inside the repo, so a notebook there finds node_modules/floatscope),
 * and drive Debian's Chromium with playwright-core. Nothing is downloaded; the browser is told
 * not to reach the network.
 */
import { spawn, type ChildProcess } from "node:child_process";
import * as fs from "node:fs";
import * as net from "node:net";
import * as path from "node:path";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";

export const ROOT = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "../../..");
export const CHROMIUM = process.env.FLOATSCOPE_CHROMIUM ?? "/usr/bin/chromium";
export const JUPYTER_LAB = path.join(ROOT, ".venv/bin/jupyter-lab");

/** Chromium flags: headless, no sandbox as root, no background network, fresh profile (playwright's). */
export const CHROMIUM_ARGS = [
  "--no-sandbox",
  "--disable-gpu",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
  "--no-first-run",
  "--disable-dev-shm-usage",
];

/** Why the browser tests cannot run here, or null when they can. */
export function missingPrerequisite(): string | null {
  if (!fs.existsSync(CHROMIUM)) return `no Chromium at ${CHROMIUM} (apt-get install -y chromium, or set FLOATSCOPE_CHROMIUM)`;
  if (!fs.existsSync(JUPYTER_LAB)) return "no .venv/bin/jupyter-lab (run scripts/setup.sh)";
  if (!fs.existsSync(path.join(ROOT, "widgets/labextension/package.json")))
    return "widgets not built (npm run build -w @floatscope/widgets)";
  if (!fs.existsSync(path.join(ROOT, ".venv/share/jupyter/labextensions/@floatscope/widgets")))
    return "labextension not installed into .venv (run scripts/setup.sh)";
  if (!fs.existsSync(path.join(ROOT, ".venv/share/jupyter/kernels/floatscope/kernel.json")))
    return "kernelspec floatscope not installed (run scripts/setup.sh)";
  if (!fs.existsSync(path.join(ROOT, "src/dist/index.js"))) return "library not built (npm run build)";
  return null;
}

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.on("error", reject);
    s.listen(0, "127.0.0.1", () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

export interface LabServer {
  url: string;
  token: string;
  dir: string;
  log: () => string;
  stop: () => Promise<void>;
}

/**
 * Notebook 7's server, when one is available: `.venv/bin/jupyter-notebook`, or the path in
 * FLOATSCOPE_NOTEBOOK7 (any environment with `notebook` 7.6; it finds our kernelspec and
 * labextension through JUPYTER_PATH).
 */
export function notebook7Binary(): string | null {
  const env = process.env.FLOATSCOPE_NOTEBOOK7;
  if (env) return fs.existsSync(env) ? env : null;
  const own = path.join(ROOT, ".venv/bin/jupyter-notebook");
  return fs.existsSync(own) ? own : null;
}

/**
 * Start JupyterLab (or, with `app: "notebook"`, Notebook 7) with `dir` as its root; resolves once
 * /api/status answers.
 */
export async function startLab(dir: string, timeoutMs = 90_000, app: "lab" | "notebook" = "lab"): Promise<LabServer> {
  const port = await freePort();
  const token = randomBytes(16).toString("hex");
  const scratch = path.join(dir, ".jupyter");
  fs.mkdirSync(scratch, { recursive: true });
  const args = [
    "--no-browser",
    "--ip=127.0.0.1",
    `--port=${port}`,
    "--port-retries=0",
    `--IdentityProvider.token=${token}`,
    `--ServerApp.root_dir=${dir}`,
    "--allow-root",
    ...(app === "lab"
      ? [
          "--LabApp.expose_app_in_browser=True",
          "--LabApp.check_for_updates_class=jupyterlab.NeverCheckForUpdate",
          `--LabApp.workspaces_dir=${path.join(scratch, "workspaces")}`,
          `--LabApp.user_settings_dir=${path.join(scratch, "settings")}`,
        ]
      : ["--JupyterNotebookApp.expose_app_in_browser=True", `--JupyterNotebookApp.user_settings_dir=${path.join(scratch, "settings")}`]),
  ];
  const binary = app === "lab" ? JUPYTER_LAB : notebook7Binary();
  if (!binary) throw new Error("no Notebook 7 server (install notebook==7.6.* or set FLOATSCOPE_NOTEBOOK7)");
  let out = "";
  const proc: ChildProcess = spawn(binary, args, {
    cwd: dir,
    detached: true, // own process group, so stop() ends the kernels it started too
    env: {
      ...process.env,
      JUPYTER_CONFIG_DIR: path.join(scratch, "config"),
      JUPYTER_RUNTIME_DIR: path.join(scratch, "runtime"),
      // Our kernelspec and labextension live in the project venv's data dir.
      JUPYTER_PATH: path.join(ROOT, ".venv/share/jupyter"),
      PATH: `${path.join(ROOT, ".venv/bin")}:${process.env.PATH}`,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  proc.stdout!.on("data", (d) => (out += d));
  proc.stderr!.on("data", (d) => (out += d));
  const url = `http://127.0.0.1:${port}`;
  const stop = async () => {
    if (proc.exitCode !== null || proc.pid === undefined) return;
    const exited = new Promise<void>((r) => proc.once("exit", () => r()));
    try {
      process.kill(-proc.pid, "SIGTERM");
    } catch {
      /* already gone */
    }
    const timer = setTimeout(() => {
      try {
        process.kill(-proc.pid!, "SIGKILL");
      } catch {
        /* already gone */
      }
    }, 10_000);
    await exited;
    clearTimeout(timer);
  };
  const t0 = Date.now();
  for (;;) {
    if (proc.exitCode !== null) throw new Error(`jupyter lab exited with ${proc.exitCode}:\n${out.slice(-3000)}`);
    try {
      const r = await fetch(`${url}/api/status`, { headers: { Authorization: `token ${token}` } });
      if (r.ok) break;
    } catch {
      /* not up yet */
    }
    if (Date.now() - t0 > timeoutMs) {
      await stop();
      throw new Error(`jupyter lab did not answer within ${timeoutMs} ms:\n${out.slice(-3000)}`);
    }
    await new Promise((r) => setTimeout(r, 300));
  }
  return { url, token, dir, log: () => out, stop };
}
