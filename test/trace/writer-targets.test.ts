/**
 * The trace writer's target: whatever already sits at the trace's name must be a regular file (replaced) or
 * nothing. A FIFO there used to block `open(…, "w")` until a reader appeared, so a FIFO left at a
 * per-question trace name in an `eval --traces` folder hung the run; a folder there was an EISDIR stack trace.
 * The writer runs in a child process so that a regression shows as a timeout instead of hanging vitest.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-writer-target-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

/** Create a trace at `file` with the streaming writer or the atomic writeTrace, in a child; its outcome. */
function writeIn(file: string, how: "stream" | "atomic") {
  const script = `
    import { TraceWriter, writeTrace } from ${JSON.stringify(path.join(ROOT, "src/trace/writer.ts"))};
    const header = { formatVersion: 1, createdBy: "test", model: { family: "llada", numLayers: 1, numHeads: 1, numKvHeads: 1, headDim: 2, vocabSize: 4, maskTokenId: 3 },
      settings: { sampler: "llada", genLength: 1, steps: 1 }, promptLength: 1, probes: {} };
    try {
      if (${JSON.stringify(how)} === "stream") TraceWriter.create(process.argv[1], header).close();
      // Only the refusals are checked for writeTrace (the target is checked before the trace is encoded).
      else writeTrace(process.argv[1], {});
      console.log("wrote");
    } catch (e) { console.log(e.name + ": " + e.message.split("\\n")[0]); }`;
  const t0 = Date.now();
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, file], {
    encoding: "utf8",
    timeout: 10_000,
    cwd: ROOT,
  });
  return { out: (r.stdout ?? "").trim(), ms: Date.now() - t0, timedOut: r.error !== undefined || r.signal !== null };
}

describe("trace writer targets", () => {
  it("refuses a FIFO at the trace name within 2 s instead of blocking (streaming writer)", () => {
    const fifo = path.join(tmp, "q1.fstrace");
    spawnSync("mkfifo", [fifo]);
    const r = writeIn(fifo, "stream");
    expect(r.timedOut).toBe(false);
    expect(r.out).toMatch(/^TraceFormatError: The path given as trace file is a FIFO/);
  });

  it("refuses a symlink to a FIFO and a folder at the trace name (both writers)", () => {
    const fifo = path.join(tmp, "pipe");
    spawnSync("mkfifo", [fifo]);
    const link = path.join(tmp, "q2.fstrace");
    fs.symlinkSync(fifo, link);
    const dir = path.join(tmp, "q3.fstrace");
    fs.mkdirSync(dir);
    for (const how of ["stream", "atomic"] as const) {
      for (const target of [link, dir]) {
        const r = writeIn(target, how);
        expect(r.timedOut, `${how} ${target}`).toBe(false);
        expect(r.out, `${how} ${target}`).toMatch(/^TraceFormatError: The path given as trace file is (a FIFO|a folder)/);
      }
    }
  });

  it("still creates missing folders and replaces an existing regular file", () => {
    const nested = path.join(tmp, "a", "b", "q4.fstrace");
    expect(writeIn(nested, "stream").out).toBe("wrote");
    expect(fs.statSync(nested).size).toBeGreaterThan(0);
    fs.writeFileSync(nested, "old");
    expect(writeIn(nested, "stream").out).toBe("wrote");
    expect(fs.readFileSync(nested).subarray(0, 3).toString()).not.toBe("old");
  });
});
