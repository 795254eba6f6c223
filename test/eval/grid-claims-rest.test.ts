/**
 * A grid of the remaining claims on an ARM and an MDM (the shape of findings/claims-rest.grid.json, small):
 * accuracy in five settings, the qk and retrieval measures in one (`measuresOn`). 4 shards, run in a shuffled
 * order, merge into exactly the unsharded run's table and findings file; the findings cover the five claims;
 * rows outside `measuresOn` carry no measures; a run with other `measuresOn` is refused on resume.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli as cli } from "../support/cli.js";
import { readGrid } from "../../src/grid/grid.js";
import { readShardFile } from "../../src/grid/shard.js";
import { GridError } from "../../src/util/errors.js";
import { HELDOUT, ROOT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-grid-rest-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const gridFile = path.join(tmp, "rest.json");
const spec = {
  name: "rest",
  models: [
    { path: path.join(ROOT, "models/tiny-llama"), tier: "tiny" },
    { path: path.join(ROOT, "models/tiny-llada"), tier: "tiny" },
  ],
  datasets: [{ name: "heldout", path: HELDOUT, limit: 6 }],
  settings: [
    { kind: "closed-book" },
    { kind: "distractors", k: 2, goldPosition: "cycle" },
    { kind: "distractors", k: 0, source: "pool" },
    { kind: "distractors", k: 3, goldPosition: ["first", "last"], source: "pool" },
  ],
  measures: ["qk", "retrieval"],
  measuresOn: ["gold@cycle/k2"],
  chunk: 3,
  batchSize: 1,
};

const whole = path.join(tmp, "whole"),
  four = path.join(tmp, "four");

beforeAll(async () => {
  fs.writeFileSync(gridFile, JSON.stringify(spec));
  const r = await cli("eval", "--grid", gridFile, "--out", whole);
  expect(r.code, r.err).toBe(0);
  for (const i of [2, 4, 1, 3]) expect((await cli("eval", "--grid", gridFile, "--shard", `${i}/4`, "--out", four)).code).toBe(0);
}, 240_000);

describe("a grid of the remaining claims", () => {
  it("4 shards merge into exactly the unsharded table and findings, which cover the five claims", async () => {
    for (const [dir, name] of [
      [whole, "whole"],
      [four, "four"],
    ]) {
      const r = await cli("merge", dir, "--out", path.join(tmp, `${name}.jsonl`), "--findings", path.join(tmp, `${name}.findings.json`));
      expect(r.code, r.err).toBe(0);
    }
    expect(fs.readFileSync(path.join(tmp, "four.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
    const text = fs.readFileSync(path.join(tmp, "whole.findings.json"), "utf8");
    expect(fs.readFileSync(path.join(tmp, "four.findings.json"), "utf8")).toBe(text);
    const file = JSON.parse(text) as {
      findings: { claim: string; model: string; quantity: string; n: number }[];
      report: Record<string, unknown>;
    };
    for (const model of ["tiny-llama", "tiny-llada"]) {
      const claims = new Set(file.findings.filter((f) => f.model === model).map((f) => f.claim));
      expect([...claims].sort()).toEqual([
        "angle-vs-norm",
        "rag-gain-mdm-vs-arm",
        "retrieval-heads-deep",
        "robust-distractors",
        "robust-position",
      ]);
    }
    const q = (claim: string, model: string) => file.findings.find((f) => f.claim === claim && f.model === model)!;
    expect(q("robust-position", "tiny-llama").quantity).toBe(
      "accuracy spread over gold positions 1, 4 among 3 distractors (best − worst, points)",
    );
    expect(q("robust-distractors", "tiny-llama").quantity).toMatch(/^accuracy drop from 0 to 3 distractors/);
    for (const claim of ["angle-vs-norm", "rag-gain-mdm-vs-arm", "robust-distractors", "robust-position"])
      expect(q(claim, "tiny-llada").n).toBe(6);
    expect(Object.keys(file.report).sort()).toEqual(["accuracy", "qk", "retrieval"]);
  });

  it("only the units of the measured setting record measures", () => {
    const rows = readShardFile(path.join(whole, "shard-1-of-1.jsonl")).rows;
    expect(rows).toHaveLength(2 * 5 * 6);
    for (const r of rows) {
      if (r.setting === "gold@cycle/k2") expect(Object.keys(r.measures ?? {}).sort()).toEqual(["qk", "retrieval"]);
      else expect(r.measures).toBeUndefined();
    }
  });

  it("measuresOn is checked against the grid's settings and is part of the run's fingerprint", async () => {
    const bad = (over: object) => () => readGrid(write({ ...spec, ...over }));
    const write = (s: object) => {
      const f = path.join(tmp, `g${Math.random().toString(36).slice(2)}.json`);
      fs.writeFileSync(f, JSON.stringify(s));
      return f;
    };
    expect(bad({ measuresOn: ["gold@cycle/k4"] })).toThrow(GridError);
    expect(bad({ measuresOn: ["gold@cycle/k4"] })).toThrow(/measuresOn\[0\]/);
    expect(bad({ measures: undefined })).toThrow(/measuresOn/);
    const other = write({ ...spec, measuresOn: ["closed-book"] });
    const r = await cli("eval", "--grid", other, "--out", whole);
    expect(r.code).not.toBe(0);
    expect(r.err).toMatch(/another run/);
  });
});
