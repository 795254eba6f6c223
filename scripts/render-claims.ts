/**
 * CLAIMS.md outside Jupyter: the same table notebook 10 writes (`buildClaims`), from executed notebooks and
 * findings files — e.g. a large run's committed findings beside the notebooks of `npm run reproduce`.
 *
 *   npx tsx scripts/render-claims.ts notebooks/_executed                  # its NN-*.ipynb (not 10-) and *.findings.json
 *   npx tsx scripts/render-claims.ts notebooks/_executed runs/sink.findings.json --out CLAIMS.md
 *
 * A folder contributes its `NN-*.ipynb` (the claims notebook 10 left out) and `*.findings.json`; a file is read
 * as given. Prints the Markdown, or writes it to `--out`. Exit 1 on an unreadable or invalid input (the message
 * names the file and the field), 2 on bad usage.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { parseArgs } from "node:util";
import { buildClaims } from "../src/display/claims.js";
import { FloatscopeError } from "../src/util/errors.js";
import { readClaimSource } from "./lib/findings-file.js";

function usage(msg: string): never {
  console.error(`render-claims: ${msg}\nusage: npx tsx scripts/render-claims.ts <folder or file>… [--out CLAIMS.md]`);
  process.exit(2);
}

/** The input files of one argument: a folder's notebooks and findings files, in name order, or the file itself. */
function inputsOf(arg: string): string[] {
  if (!fs.existsSync(arg)) usage(`${JSON.stringify(arg)} does not exist`);
  if (!fs.statSync(arg).isDirectory()) return [arg];
  return fs
    .readdirSync(arg)
    .filter((f) => (/^\d\d-.*\.ipynb$/.test(f) && !f.startsWith("10-")) || f.endsWith(".findings.json"))
    .sort()
    .map((f) => path.join(arg, f));
}

const { values, positionals } = parseArgs({ options: { out: { type: "string" } }, allowPositionals: true });
if (positionals.length === 0) usage("no folder or file given");
try {
  const files = positionals.flatMap(inputsOf);
  const sources = files.map(readClaimSource);
  const { markdown } = buildClaims(sources);
  if (values.out) {
    fs.writeFileSync(values.out, markdown + "\n");
    console.error(`render-claims: ${files.length} input(s) → ${values.out}`);
  } else process.stdout.write(markdown + "\n");
} catch (e) {
  if (e instanceof FloatscopeError) {
    console.error(`render-claims: ${e.message}`);
    process.exit(1);
  }
  throw e;
}
