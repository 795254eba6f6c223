/**
 * Grid runs end to end on two tiny models: sharded runs merge into exactly the unsharded table, a
 * killed shard resumes, and merge refuses what does not belong together.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { readShardFile } from "../../src/grid/shard.js";
import { ROOT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-grid-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const gridFile = path.join(tmp, "grid.json");

function io() {
  const out: string[] = [],
    err: string[] = [];
  return { out, err, io: { out: (t: string) => out.push(t), err: (t: string) => err.push(t) } };
}
async function cli(...args: string[]) {
  const c = io();
  const code = await main(args, c.io);
  return { code, out: c.out.join("\n"), err: c.err.join("\n") };
}
const lines = (f: string) =>
  fs
    .readFileSync(f, "utf8")
    .split("\n")
    .filter((l) => l.trim());

beforeAll(async () => {
  fs.writeFileSync(
    gridFile,
    JSON.stringify({
      name: "two-tiny",
      models: [path.join(ROOT, "models/tiny-llada"), path.join(ROOT, "models/tiny-qwen")],
      datasets: [{ name: "heldout", path: path.join(ROOT, "models/world/eval-heldout.jsonl.gz"), limit: 6 }],
      settings: [{ kind: "oracle" }, { kind: "distractors", k: 2, goldPosition: ["first", "last"] }],
      chunk: 3,
      batchSize: 2,
    }),
  );
  expect((await cli("eval", "--grid", gridFile, "--out", path.join(tmp, "whole"))).code).toBe(0);
  expect((await cli("merge", path.join(tmp, "whole"), "--out", path.join(tmp, "whole.jsonl"))).code).toBe(0);
}, 120_000);

describe("grid shards and merge", () => {
  it("the unsharded table has one row per unit × question, with the grid's settings", () => {
    const rows = lines(path.join(tmp, "whole.jsonl")).map((l) => JSON.parse(l));
    expect(rows).toHaveLength(2 * 3 * 6);
    expect(new Set(rows.map((r) => r.setting))).toEqual(new Set(["oracle", "gold@0/k2", "gold@2/k2"]));
    for (const r of rows.filter((x) => x.setting === "gold@2/k2")) {
      expect(r.goldIndex).toBe(2);
      expect(r.passages).toBe(3);
      expect(r.k).toBe(2);
    }
    expect(rows.every((r) => r.error === null && typeof r.prediction === "string")).toBe(true);
    // No timings in the merged table: it must not depend on where a row ran.
    expect(Object.keys(rows[0])).not.toContain("ms");
  });

  it("3 shards merge into the same bytes as one run; status and manifest say what ran", async () => {
    const dir = path.join(tmp, "three");
    for (const i of [3, 1, 2]) expect((await cli("eval", "--grid", gridFile, "--shard", `${i}/3`, "--out", dir)).code).toBe(0);
    const st = await cli("status", dir);
    expect(st.code).toBe(0);
    expect(st.out).toMatch(/36\/36 questions \(100\.0 %\), 12\/12 units/);
    const m = readShardFile(path.join(dir, "shard-2-of-3.jsonl")).manifest;
    expect(m.shard).toEqual({ index: 2, count: 3 });
    expect(m.models.map((x) => x.name)).toEqual(["tiny-llada", "tiny-qwen"]);
    expect(m.models[0].hash).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(m.datasets[0]).toMatchObject({ name: "heldout", records: 6 });
    expect(m.units).toHaveLength(12);
    expect((await cli("merge", dir, "--out", path.join(tmp, "three.jsonl"))).code).toBe(0);
    expect(fs.readFileSync(path.join(tmp, "three.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
  }, 120_000);

  it("a killed shard (torn last line, rows missing) resumes and still merges equal", async () => {
    const dir = path.join(tmp, "killed");
    expect((await cli("eval", "--grid", gridFile, "--shard", "1/2", "--out", dir)).code).toBe(0);
    expect((await cli("eval", "--grid", gridFile, "--shard", "2/2", "--out", dir)).code).toBe(0);
    const f = path.join(dir, "shard-2-of-2.jsonl");
    const all = lines(f);
    // Keep the manifest and the first 5 rows, plus half of the 6th: what a SIGKILL mid-write leaves.
    fs.writeFileSync(f, all.slice(0, 6).join("\n") + "\n" + all[6].slice(0, 40));
    const st = await cli("status", dir);
    expect(st.code).toBe(1);
    expect(st.out).toMatch(/still to do/);
    const incomplete = await cli("merge", dir, "--out", path.join(tmp, "never.jsonl"));
    expect(incomplete.code).toBe(1);
    expect(incomplete.err).toMatch(/unit tiny-/);
    expect(fs.existsSync(path.join(tmp, "never.jsonl"))).toBe(false);
    const rerun = await cli("eval", "--grid", gridFile, "--shard", "2/2", "--out", dir);
    expect(rerun.code).toBe(0);
    expect(rerun.out).toMatch(/ran 13, resumed 5/);
    expect((await cli("merge", dir, "--out", path.join(tmp, "killed.jsonl"))).code).toBe(0);
    expect(fs.readFileSync(path.join(tmp, "killed.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
    // Nothing left to do: a third run runs nothing.
    expect((await cli("eval", "--grid", gridFile, "--shard", "2/2", "--out", dir)).out).toMatch(/ran 0, resumed 18/);
  }, 120_000);

  it("refuses mismatched manifests, two files for one shard, and duplicate results; lists missing shards", async () => {
    const dir = path.join(tmp, "three");
    const s1 = path.join(dir, "shard-1-of-3.jsonl"),
      s2 = path.join(dir, "shard-2-of-3.jsonl"),
      s3 = path.join(dir, "shard-3-of-3.jsonl");
    // Another model's weights: the manifest differs in `models`.
    const forged = path.join(tmp, "forged.jsonl");
    const [head, ...rest] = lines(s3);
    const manifest = JSON.parse(head);
    manifest.manifest.models[1].hash = "sha256:" + "0".repeat(64);
    manifest.manifest.fingerprint = "sha256:" + "1".repeat(64);
    fs.writeFileSync(forged, [JSON.stringify(manifest), ...rest].join("\n") + "\n");
    const mismatch = await cli("merge", s1, s2, forged, "--out", path.join(tmp, "x.jsonl"));
    expect(mismatch.code).toBe(1);
    expect(mismatch.err).toMatch(/different runs[\s\S]*models/);
    // The same shard twice.
    const copy = path.join(tmp, "copy-of-1.jsonl");
    fs.copyFileSync(s1, copy);
    const twice = await cli("merge", s1, copy, s2, s3, "--out", path.join(tmp, "x.jsonl"));
    expect(twice.code).toBe(1);
    expect(twice.err).toMatch(/same shard/);
    // A row of shard 1 pasted into shard 2: the question is answered in two files.
    const dup = path.join(tmp, "dup-2.jsonl");
    fs.writeFileSync(dup, fs.readFileSync(s2, "utf8") + lines(s1)[1] + "\n");
    const duplicate = await cli("merge", s1, dup, s3, "--out", path.join(tmp, "x.jsonl"));
    expect(duplicate.code).toBe(1);
    expect(duplicate.err).toMatch(/Duplicate result/);
    // A shard never run.
    const partial = await cli("merge", s1, s3, "--out", path.join(tmp, "x.jsonl"));
    expect(partial.code).toBe(1);
    expect(partial.err).toMatch(/shards with no file: 2\/3/);
    expect(fs.existsSync(path.join(tmp, "x.jsonl"))).toBe(false);
    const forced = await cli("merge", s1, s3, "--out", path.join(tmp, "x.jsonl"), "--partial");
    expect(forced.code).toBe(1);
    expect(lines(path.join(tmp, "x.jsonl"))).toHaveLength(24);
    // A rerun into a folder that holds another grid's shard is refused, not mixed.
    const other = path.join(tmp, "other.json");
    fs.writeFileSync(other, fs.readFileSync(gridFile, "utf8").replace('"limit":6', '"limit":5'));
    const refused = await cli("eval", "--grid", other, "--shard", "1/3", "--out", dir);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/belongs to another run[\s\S]*datasets/);
  });

  it("--reuse: after one model changed, the other model's rows are copied and only the changed one decodes", async () => {
    // tiny-qwen "retrained": a copy whose generation_config.json gains a key, so its fingerprint changes
    // while its answers cannot (that file does not reach the decoder); tiny-llada is untouched.
    const changed = path.join(tmp, "changed", "tiny-qwen");
    fs.mkdirSync(changed, { recursive: true });
    const src = path.join(ROOT, "models/tiny-qwen");
    for (const n of fs.readdirSync(src)) fs.copyFileSync(path.join(src, n), path.join(changed, n));
    const gen = JSON.parse(fs.readFileSync(path.join(changed, "generation_config.json"), "utf8"));
    fs.writeFileSync(path.join(changed, "generation_config.json"), JSON.stringify({ ...gen, retrained: "2026-12-07" }));
    const grid2 = path.join(tmp, "grid-changed.json");
    fs.writeFileSync(grid2, fs.readFileSync(gridFile, "utf8").replace(JSON.stringify(src), JSON.stringify(changed)));
    const old = path.join(tmp, "whole");
    // Into the old folder: refused, as any changed model is.
    expect((await cli("eval", "--grid", grid2, "--out", old)).err).toMatch(/belongs to another run[\s\S]*models/);
    const dir = path.join(tmp, "reused");
    const r = await cli("eval", "--grid", grid2, "--out", dir, "--reuse", old);
    expect(r.code).toBe(0);
    expect(r.err).toMatch(/18 rows of tiny-llada taken from 1 shard file\(s\); decoded again: tiny-qwen/);
    expect(r.out).toMatch(/ran 18, resumed 18/);
    const before = readShardFile(path.join(old, "shard-1-of-1.jsonl"));
    const after = readShardFile(path.join(dir, "shard-1-of-1.jsonl"));
    expect(after.manifest.fingerprint).not.toBe(before.manifest.fingerprint);
    // The copied rows are the old rows, timings included (a decode would give other milliseconds).
    const key = (x: { unit: string; id: string }) => `${x.unit} ${x.id}`;
    const oldLlada = new Map(before.rows.filter((x) => x.unit.startsWith("tiny-llada|")).map((x) => [key(x), JSON.stringify(x)]));
    const newLlada = after.rows.filter((x) => x.unit.startsWith("tiny-llada|"));
    expect(newLlada).toHaveLength(18);
    for (const x of newLlada) expect(JSON.stringify(x)).toBe(oldLlada.get(key(x)));
    // The merged table equals the full run's: the change did not reach the answers.
    expect((await cli("merge", dir, "--out", path.join(tmp, "reused.jsonl"))).code).toBe(0);
    expect(fs.readFileSync(path.join(tmp, "reused.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
    // Sharded the same way: 2 shards, each takes its own units' rows, and they merge to the same bytes.
    const two = path.join(tmp, "reused-two");
    for (const i of [1, 2]) expect((await cli("eval", "--grid", grid2, "--shard", `${i}/2`, "--out", two, "--reuse", old)).code).toBe(0);
    expect((await cli("merge", two, "--out", path.join(tmp, "reused-two.jsonl"))).code).toBe(0);
    expect(fs.readFileSync(path.join(tmp, "reused-two.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
    // A run of another grid (one question fewer: other data selection and units) is refused, and nothing is written.
    const other = path.join(tmp, "other-reuse.json");
    fs.writeFileSync(other, fs.readFileSync(grid2, "utf8").replace('"limit":6', '"limit":5'));
    const none = path.join(tmp, "reuse-refused");
    const refused = await cli("eval", "--grid", other, "--out", none, "--reuse", old);
    expect(refused.code).toBe(1);
    expect(refused.err).toMatch(/run to reuse is of another grid[\s\S]*shard-1-of-1\.jsonl[\s\S]*manifest \(datasets, units\)/);
    expect(refused.err).not.toMatch(/\n\s+at /);
    expect(fs.existsSync(path.join(none, "shard-1-of-1.jsonl"))).toBe(false);
    // A folder with no shard file.
    const empty = fs.mkdtempSync(path.join(tmp, "empty-"));
    const nothing = await cli("eval", "--grid", grid2, "--out", path.join(tmp, "reuse-empty"), "--reuse", empty);
    expect(nothing.code).toBe(1);
    expect(nothing.err).toMatch(/No shard files in the run to reuse/);
  }, 180_000);

  it("usage errors exit 2", async () => {
    expect((await cli("eval", "--grid", gridFile, "--shard", "4/3")).code).toBe(2);
    expect((await cli("merge", path.join(tmp, "three"))).code).toBe(2);
    expect((await cli("merge", path.join(tmp, "three"), "--out", path.join(tmp, "t.xlsx"))).code).toBe(2);
    expect((await cli("status")).code).toBe(2);
    expect((await cli("slurm", gridFile)).code).toBe(2);
  });
});
