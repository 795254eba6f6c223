/**
 * A grid whose measures all read the final pass (qk, absorption) decodes an ARM probe-free through its key/value
 * cache and measures on a second, probed engine (src/grid/shard.ts). Its rows (answers, scores and every measured
 * number) are exactly those of the same grid run with `--no-kv-cache`, where the ARM decodes with the measures'
 * probes at every step; the MDM beside it runs as before either way.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli as cli } from "../support/cli.js";
import { readShardFile } from "../../src/grid/shard.js";
import { HELDOUT, ROOT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-grid-final-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const gridFile = path.join(tmp, "final.json");

beforeAll(async () => {
  fs.writeFileSync(
    gridFile,
    JSON.stringify({
      name: "final-pass",
      models: [
        { path: path.join(ROOT, "models/tiny-llama"), tier: "tiny" },
        { path: path.join(ROOT, "models/tiny-llada"), tier: "tiny" },
      ],
      datasets: [{ name: "heldout", path: HELDOUT, limit: 5 }],
      settings: [{ kind: "distractors", k: 2, goldPosition: "cycle" }],
      measures: ["qk", "absorption"],
      batchSize: 1,
    }),
  );
  for (const [dir, extra] of [
    ["split", []],
    ["full", ["--no-kv-cache"]],
  ] as const) {
    const r = await cli("eval", "--grid", gridFile, "--out", path.join(tmp, dir), ...extra);
    expect(r.code, r.err).toBe(0);
  }
}, 240_000);

describe("final-pass measures on an ARM", () => {
  it("give the rows of a run with probes at every step, number for number", () => {
    const rows = (dir: string) =>
      readShardFile(path.join(tmp, dir, "shard-1-of-1.jsonl")).rows.map((r) => {
        const { ms: _ms, ...rest } = r as unknown as Record<string, unknown>;
        return rest;
      });
    const split = rows("split");
    const full = rows("full");
    expect(split).toHaveLength(10);
    expect(split).toEqual(full);
    const arm = split.filter((r) => r.model === "tiny-llama");
    expect(arm).toHaveLength(5);
    for (const r of arm) {
      const m = r.measures as { qk?: { advantage: number[] }; absorption?: unknown };
      expect(m.qk?.advantage.length).toBeGreaterThan(0);
      expect(m.absorption).toBeDefined();
    }
  });
});
