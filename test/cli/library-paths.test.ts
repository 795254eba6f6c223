/**
 * The library's own readers follow the CLI's path rule (src/util/paths.ts): a notebook that calls readGrid,
 * readShardFile or opens a model folder whose floatscope-preset.json is a FIFO gets a typed error at once
 * instead of a blocked open(). Each call runs in a child process, so a regression is a timeout, not a hung suite.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "..", "..");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-libpaths-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

function callIn(module: string, fn: string, arg: string) {
  const script = `
    const m = await import(${JSON.stringify(path.join(ROOT, module))});
    try { m[${JSON.stringify(fn)}](process.argv[1]); console.log("returned"); }
    catch (e) { console.log(e.name + ": " + String(e.message).split("\\n")[0]); }`;
  const r = spawnSync(process.execPath, ["--import", "tsx", "--input-type=module", "-e", script, arg], {
    encoding: "utf8",
    timeout: 20_000,
    cwd: ROOT,
  });
  return { out: (r.stdout ?? "").trim(), timedOut: r.error !== undefined || r.signal !== null };
}

describe("library readers refuse a FIFO without blocking", () => {
  const fifo = path.join(tmp, "grid.json");
  spawnSync("mkfifo", [fifo]);
  const model = path.join(tmp, "model");
  fs.mkdirSync(model);
  spawnSync("mkfifo", [path.join(model, "floatscope-preset.json")]);

  it("readGrid", () => {
    const r = callIn("src/grid/grid.ts", "readGrid", fifo);
    expect(r.timedOut).toBe(false);
    expect(r.out).toMatch(/^GridError: .*FIFO/);
  });
  it("readShardFile", () => {
    const r = callIn("src/grid/shard.ts", "readShardFile", fifo);
    expect(r.timedOut).toBe(false);
    expect(r.out).toMatch(/^GridError: .*FIFO/);
  });
  it("checkpointPreset", () => {
    const r = callIn("src/model/presets.ts", "checkpointPreset", model);
    expect(r.timedOut).toBe(false);
    expect(r.out).toMatch(/^CheckpointError: .*FIFO/);
  });
});
