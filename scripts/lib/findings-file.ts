/**
 * Findings files as the measurement scripts write them and scripts/render-claims.ts reads them:
 * `{ notebook, findings, provenance, report }` (docs/claims.md, "Findings files and large runs").
 *
 * - `readClaimSource`: one input of the claims table, an executed notebook or a findings file, read
 *   bounded and parsed (a typed error naming the file otherwise); `collectFindings` then checks it.
 * - `provenanceOf`: the commit, command, settings, machine (CPU, cores, memory, load) and wall time of
 *   a run, so a committed number says how it was made.
 * - `writeFindingsFile`: the file itself.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import type { Finding } from "../../src/display/findings.js";
import { FloatscopeError } from "../../src/util/errors.js";
import { readFileBounded } from "../../src/util/paths.js";

export const ROOT = path.resolve(path.dirname(new URL(import.meta.url).pathname), "../..");

const MAX_BYTES = 256 * 2 ** 20; // an executed notebook with figures is a few MB; a findings file, kilobytes

/** One input of the claims table: its base name and parsed JSON. */
export function readClaimSource(file: string): { file: string; json: unknown } {
  const text = readFileBounded(file, { what: "notebook or findings file", maxBytes: MAX_BYTES }).toString("utf8");
  try {
    return { file: path.basename(file), json: JSON.parse(text) as unknown };
  } catch (e) {
    throw new FloatscopeError("not JSON", {
      file,
      expected: "an executed notebook (.ipynb) or a findings file",
      found: (e as Error).message,
    });
  }
}

export interface Provenance {
  commit: string;
  /** Tracked files differed from the commit when the run started. */
  dirty: boolean;
  date: string;
  command: string;
  settings: Record<string, unknown>;
  machine: { cpu: string; cores: number; memoryGiB: number; load1: number };
  wallSeconds: number;
}

/** The provenance block of a run that started at `t0` (Date.now()) and ran `script` with its arguments. */
export function provenanceOf(script: string, settings: Record<string, unknown>, t0: number): Provenance {
  const git = (...a: string[]) => execFileSync("git", a, { cwd: ROOT, encoding: "utf8" }).trim();
  return {
    commit: git("rev-parse", "HEAD"),
    dirty: git("status", "--porcelain", "--untracked-files=no") !== "",
    date: new Date().toISOString(),
    command: `npx tsx ${script} ${process.argv.slice(2).join(" ")}`.trim(),
    settings,
    machine: {
      cpu: os.cpus()[0]?.model ?? "unknown",
      cores: os.cpus().length,
      memoryGiB: Math.round(os.totalmem() / 2 ** 30),
      load1: os.loadavg()[0],
    },
    wallSeconds: (Date.now() - t0) / 1000,
  };
}

/** Write `{ notebook, findings, provenance, report, …extra }` as indented JSON. */
export function writeFindingsFile(
  out: string,
  record: { notebook: string; findings: Finding[]; provenance: Provenance; report: unknown } & Record<string, unknown>,
): void {
  fs.writeFileSync(out, JSON.stringify(record, null, 1) + "\n");
}
