"use strict";
/**
 * Launcher for the "TypeScript (floatscope)" kernel.
 *
 * Jupyter starts it as `node --require preload.cjs launch.cjs <connection_file>` with the
 * notebook's folder as cwd. We pick the tslab copy ourselves instead of relying on a `tslab`
 * binary on PATH:
 *   1. the tslab that the notebook's folder resolves (node_modules in it or an ancestor),
 *   2. the tslab of the floatscope checkout this kernelspec was installed from (FLOATSCOPE_ROOT),
 *   3. the checkout that holds this file (template copy, or the copy installed in .venv/).
 * Using the cwd's copy first matters: library code finds the live kernel through
 * require.cache, and cells `require("tslab")` from the notebook's point of view.
 */
const path = require("node:path");
const { createRequire } = require("node:module");

function candidates() {
  const dirs = [process.cwd()];
  if (process.env.FLOATSCOPE_ROOT) dirs.push(process.env.FLOATSCOPE_ROOT);
  // Template copy: kernel-extensions/kernelspec/floatscope; installed copy:
  // .venv/share/jupyter/kernels/floatscope. Either way the checkout is a few levels up.
  dirs.push(path.resolve(__dirname, "..", "..", ".."), path.resolve(__dirname, "..", "..", "..", "..", ".."));
  return dirs;
}

function resolveTslab() {
  const tried = [];
  for (const dir of candidates()) {
    tried.push(dir);
    try {
      return createRequire(path.join(dir, "__floatscope_launch__.js")).resolve("tslab/dist/main.js");
    } catch {
      // not resolvable from here; try the next place
    }
  }
  process.stderr.write(
    "floatscope kernel: cannot find the tslab package.\n" +
      `  looked from: ${tried.join(", ")}\n` +
      "  fix: run `bash scripts/setup.sh` in the floatscope checkout.\n",
  );
  process.exit(1);
}

const connectionFile = process.argv[2];
if (!connectionFile) {
  process.stderr.write("floatscope kernel: usage: node launch.cjs <connection_file>\n");
  process.exit(2);
}
const mainPath = resolveTslab();
process.env.FLOATSCOPE_TSLAB = mainPath;
// tslab loses shorthand properties that name an earlier cell's binding (`{ tokenizer }`);
// see shorthand.cjs. Patched before tslab creates its converters.
require("./shorthand.cjs").install(path.dirname(mainPath));
// enableFindLocal: false — we already chose the copy; tslab's own search would look again.
require(mainPath).startKernel({ configPath: connectionFile, enableFindLocal: false });
