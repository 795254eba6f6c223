#!/usr/bin/env node
"use strict";
/**
 * Install the floatscope kernel flavour (and, when built, the widgets labextension) into a
 * Jupyter prefix — normally the project's own `.venv`, so nothing lands in the user's home.
 *
 *   node kernel-extensions/install.cjs --prefix .venv
 *
 * Node-only on purpose (no `jupyter kernelspec install`): it copies
 * kernel-extensions/kernelspec/floatscope/ to <prefix>/share/jupyter/kernels/floatscope/ and
 * rewrites kernel.json with the absolute path of the node that ran this script (Jupyter resolves
 * argv[0] on the *server's* PATH, which is a classic source of "kernel won't start") and with
 * FLOATSCOPE_ROOT so the launcher can always find this checkout's tslab.
 * Files are only rewritten when their content changes, so re-running is cheap and quiet.
 */
const fs = require("node:fs");
const path = require("node:path");

const KERNEL_NAME = "floatscope";
const ROOT = path.resolve(__dirname, "..");
const TEMPLATE = path.join(__dirname, "kernelspec", KERNEL_NAME);

function parseArgs(argv) {
  const out = { prefix: path.join(ROOT, ".venv"), quiet: false };
  for (let i = 0; i < argv.length; i++) {
    if (argv[i] === "--prefix") out.prefix = path.resolve(argv[++i]);
    else if (argv[i] === "--quiet") out.quiet = true;
    else throw new Error(`install.cjs: unknown argument ${argv[i]}`);
  }
  return out;
}

/** Write `content` to `file` unless it already holds exactly that; returns true if written. */
function writeIfChanged(file, content) {
  if (fs.existsSync(file) && fs.readFileSync(file).equals(Buffer.from(content))) return false;
  const tmp = `${file}.tmp-${process.pid}`;
  fs.writeFileSync(tmp, content);
  fs.renameSync(tmp, file);
  return true;
}

function kernelJson() {
  const spec = JSON.parse(fs.readFileSync(path.join(TEMPLATE, "kernel.json"), "utf8"));
  spec.argv[0] = process.execPath;
  spec.env = { ...spec.env, FLOATSCOPE_ROOT: ROOT };
  spec.metadata = { floatscope: { installedFrom: TEMPLATE, node: process.version } };
  return JSON.stringify(spec, null, 2) + "\n";
}

function installKernelspec(prefix) {
  const dest = path.join(prefix, "share", "jupyter", "kernels", KERNEL_NAME);
  fs.mkdirSync(dest, { recursive: true });
  const changed = [];
  for (const name of fs.readdirSync(TEMPLATE)) {
    const content = name === "kernel.json" ? kernelJson() : fs.readFileSync(path.join(TEMPLATE, name));
    if (writeIfChanged(path.join(dest, name), content)) changed.push(name);
  }
  return { dest, changed };
}

/**
 * Link widgets/labextension (built by the widgets workspace) into
 * <prefix>/share/jupyter/labextensions/<package name>, the folder JupyterLab scans for prebuilt
 * extensions. Skipped silently while the widgets are not built; a stale link is removed.
 */
function installLabextension(prefix) {
  const built = path.join(ROOT, "widgets", "labextension");
  const pkgFile = path.join(built, "package.json");
  const labextDir = path.join(prefix, "share", "jupyter", "labextensions");
  if (!fs.existsSync(pkgFile)) {
    removeDanglingLinks(labextDir);
    return null;
  }
  const name = JSON.parse(fs.readFileSync(pkgFile, "utf8")).name;
  if (typeof name !== "string" || name === "") {
    throw new Error(`install.cjs: ${pkgFile} has no "name"; cannot install the labextension`);
  }
  const link = path.join(labextDir, ...name.split("/"));
  fs.mkdirSync(path.dirname(link), { recursive: true });
  let current = null;
  try {
    current = fs.readlinkSync(link);
  } catch {
    if (fs.existsSync(link)) fs.rmSync(link, { recursive: true, force: true });
  }
  if (current === built) return { name, link, changed: false };
  if (current !== null) fs.unlinkSync(link);
  fs.symlinkSync(built, link, "dir");
  return { name, link, changed: true };
}

/**
 * JupyterLab settings defaults for this environment (<prefix>/share/jupyter/lab/settings/
 * overrides.json): don't ask every new user whether to fetch Jupyter news. Merged into an
 * existing file, so other overrides survive.
 */
function installLabSettings(prefix) {
  const file = path.join(prefix, "share", "jupyter", "lab", "settings", "overrides.json");
  let current = {};
  if (fs.existsSync(file)) {
    try {
      current = JSON.parse(fs.readFileSync(file, "utf8"));
    } catch {
      return false; // someone's hand-edited file we cannot parse: leave it alone
    }
  }
  const key = "@jupyterlab/apputils-extension:notification";
  const merged = { ...current, [key]: { fetchNews: "false", ...(current[key] || {}) } };
  fs.mkdirSync(path.dirname(file), { recursive: true });
  return writeIfChanged(file, JSON.stringify(merged, null, 2) + "\n");
}

function removeDanglingLinks(dir) {
  if (!fs.existsSync(dir)) return;
  for (const entry of fs.readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, entry.name);
    if (entry.isSymbolicLink() && !fs.existsSync(p)) fs.unlinkSync(p);
    else if (entry.isDirectory() && entry.name.startsWith("@")) removeDanglingLinks(p);
  }
}

function main() {
  const { prefix, quiet } = parseArgs(process.argv.slice(2));
  const log = (s) => quiet || console.log(s);
  const k = installKernelspec(prefix);
  log(
    k.changed.length
      ? `  kernelspec "${KERNEL_NAME}" installed in ${k.dest} (${k.changed.join(", ")})`
      : `  kernelspec "${KERNEL_NAME}" up to date`,
  );
  if (installLabSettings(prefix)) log("  JupyterLab settings defaults written (no news prompt)");
  const l = installLabextension(prefix);
  if (l) log(l.changed ? `  labextension ${l.name} linked at ${l.link}` : `  labextension ${l.name} up to date`);
}

if (require.main === module) main();
module.exports = { installKernelspec, installLabextension, installLabSettings, kernelJson, KERNEL_NAME };
