/**
 * Executing notebooks in the notebook tests as a user does: `scripts/reproduce.sh` (what `npm run reproduce`
 * runs) into a scratch folder, with the set-up skipped (the test run did it). Never throws: a failed run comes
 * back as its exit status and log, for the tests to show.
 */
import { execFile } from "node:child_process";
import { promisify } from "node:util";
import { ROOT } from "../kernel/env.js";
import { join1, outputsOf, type Notebook } from "./nb-outputs.js";

const run = promisify(execFile);

/** `scripts/reproduce.sh --output-dir <dir> <notebooks…>` from the repository root; `env` is added to the process's. */
export async function reproduce(
  dir: string,
  notebooks: string[],
  o: { env?: Record<string, string>; timeoutMs: number },
): Promise<{ log: string; rc: number }> {
  try {
    const r = await run("bash", ["scripts/reproduce.sh", "--output-dir", dir, ...notebooks], {
      cwd: ROOT,
      env: { ...process.env, FLOATSCOPE_SKIP_SETUP: "1", ...o.env },
      timeout: o.timeoutMs,
      maxBuffer: 64 * 1024 * 1024,
    });
    return { log: r.stdout + r.stderr, rc: 0 };
  } catch (e) {
    const err = e as { stdout?: string; stderr?: string; code?: number };
    return { log: (err.stdout ?? "") + (err.stderr ?? ""), rc: typeof err.code === "number" ? err.code : 1 };
  }
}

/** What an executed notebook shows that a clean run would not: error outputs, stderr text, code cells never run. */
export function runProblems(nb: Notebook): { errors: unknown[]; stderr: string[]; unexecuted: number } {
  const outs = outputsOf(nb);
  return {
    errors: outs.filter((o) => o.output_type === "error"),
    stderr: outs.filter((o) => o.output_type === "stream" && o.name === "stderr").map((o) => join1(o.text)),
    unexecuted: nb.cells.filter((c) => c.cell_type === "code" && c.execution_count == null).length,
  };
}
