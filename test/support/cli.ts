/**
 * The CLI in-process, as the tests call it: `main` with its output lines collected, so a test reads
 * the exit code and what a user would have seen on stdout and stderr.
 */
import { main } from "../../src/cli/main.js";

export async function runCli(...args: string[]): Promise<{ code: number; out: string; err: string }> {
  const out: string[] = [],
    err: string[] = [];
  const code = await main(args, { out: (t) => out.push(t), err: (t) => err.push(t) });
  return { code, out: out.join("\n"), err: err.join("\n") };
}
