/**
 * scripts/record-run.mjs writes findings/runs.jsonl, the provenance of every large-runs step: a "started" line as a
 * step begins (so an invocation killed before its end still leaves a line) and a "finished" line at its end, with
 * the decode seconds per model summed from the step's shard rows (a row written twice counts once, the last).
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const SCRIPT = path.resolve(__dirname, "../../scripts/record-run.mjs");
const TMP = fs.mkdtempSync(path.join(os.tmpdir(), "record-run-"));
afterAll(() => fs.rmSync(TMP, { recursive: true, force: true }));

function record(args: string[], env: Record<string, string> = {}) {
  const r = spawnSync(process.execPath, [SCRIPT, ...args], { cwd: TMP, encoding: "utf8", env: { ...process.env, ...env } });
  expect(r.status, r.stderr).toBe(0);
}

function lines(): Record<string, unknown>[] {
  return fs
    .readFileSync(path.join(TMP, "findings", "runs.jsonl"), "utf8")
    .trim()
    .split("\n")
    .map((l) => JSON.parse(l) as Record<string, unknown>);
}

describe("record-run.mjs", () => {
  fs.mkdirSync(path.join(TMP, "findings"));
  fs.mkdirSync(path.join(TMP, "runs", "demo"), { recursive: true });
  // a grid unit's id names its model (model|dataset|setting|seed|slice), as the grid writes it
  const row = (id: string, model: string, ms: number) =>
    JSON.stringify({ unit: `${model}|heldout|s|s0|0-25`, id, setting: "s", seed: 0, model, ms });
  fs.writeFileSync(
    path.join(TMP, "runs", "demo", "shard-1-of-1.jsonl"),
    [JSON.stringify({ manifest: {} }), row("q1", "arm", 1500), row("q2", "arm", 2500), row("q1", "mdm", 4000), row("q1", "mdm", 6000)].join(
      "\n",
    ) + "\n",
  );
  const started = 1_800_000_000;

  it("writes a started line first: commit, state and start load, no end", () => {
    record(["demo", String(started), "0.5 0.4 0.3", "abc1234", "clean"], { RECORD_PHASE: "start" });
    const [first] = lines();
    expect(first).toMatchObject({ step: "demo", phase: "started", commit: "abc1234", dirty: false, started: "2027-01-15T08:00:00.000Z" });
    expect(first).not.toHaveProperty("finished");
    expect(first).not.toHaveProperty("decode");
    expect(first.load).toEqual({ start: "0.5 0.4 0.3" });
  });

  it("then a finished line with the wall time and the decode seconds per model, a repeated row counted once", () => {
    record(["demo", String(started), "0.5 0.4 0.3", "abc1234", "dirty", "runs/demo"], {
      RECORD_FINISHED_EPOCH: String(started + 90),
      RECORD_NOTE: "stopped by a signal before the end of the step",
    });
    const all = lines();
    expect(all).toHaveLength(2);
    const last = all[1];
    expect(last).toMatchObject({ phase: "finished", dirty: true, wallSeconds: 90, finished: "2027-01-15T08:01:30.000Z" });
    expect(last.note).toBe("stopped by a signal before the end of the step");
    // arm: 1.5 + 2.5 s over 2 rows; mdm: q1 twice, the last (6 s) counts
    expect(last.decode).toEqual({ arm: { rows: 2, seconds: 4 }, mdm: { rows: 1, seconds: 6 } });
  });
});
