#!/usr/bin/env node
// The `floatscope` command. This file is committed (with its exec bit) rather than generated, so
// `npm ci` can link it into node_modules/.bin before the library is built; it loads the built CLI
// and, when there is none yet, says how to build it instead of "floatscope: not found".
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";

const cli = new URL("../dist/cli/main.js", import.meta.url);
if (!existsSync(fileURLToPath(cli))) {
  process.stderr.write(
    "floatscope: the library is not built yet (no src/dist/cli/main.js); run `bash scripts/setup.sh` (or `npm run build`) in the repository\n",
  );
  process.exit(1);
}
const { runCli } = await import(cli.href);
runCli();
