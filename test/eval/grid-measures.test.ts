/**
 * A claims grid (per-sample attention measures) on an ARM and an MDM: 4 shards merge into exactly the
 * unsharded run's aggregate and findings; the rows' sink, absorption, drift and token-type numbers are the analyses of the
 * same decodes' traces; a grid with other measures is refused on resume and on merge.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { absorptionRate } from "../../src/analysis/absorption.js";
import { temporalDrift } from "../../src/analysis/drift.js";
import { firstTokenSink } from "../../src/analysis/first-token-sink.js";
import { tokenTypes } from "../../src/analysis/token-types.js";
import { runCli as cli } from "../support/cli.js";
import { readGrid } from "../../src/grid/grid.js";
import { mergeShards, shardFilesIn } from "../../src/grid/merge.js";
import { readShardFile } from "../../src/grid/shard.js";
import { openModel } from "../../src/model/open.js";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { runEval } from "../../src/qa/runner.js";
import type { Trace } from "../../src/trace/types.js";
import { GridError } from "../../src/util/errors.js";
import { HELDOUT, ROOT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-grid-measures-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const gridFile = path.join(tmp, "claims.json");
const spec = {
  name: "claims",
  models: [
    { path: path.join(ROOT, "models/tiny-llama"), tier: "tiny" },
    { path: path.join(ROOT, "models/tiny-llada"), tier: "tiny" },
  ],
  datasets: [{ name: "heldout", path: HELDOUT, limit: 8 }],
  settings: [{ kind: "distractors", k: 2, goldPosition: "cycle" }],
  chunk: 2,
  batchSize: 2,
  measures: ["sink", "absorption", "drift", "token-types"],
};

const whole = path.join(tmp, "whole"),
  four = path.join(tmp, "four");

beforeAll(async () => {
  fs.writeFileSync(gridFile, JSON.stringify(spec));
  expect((await cli("eval", "--grid", gridFile, "--out", whole)).code).toBe(0);
  // Shards in a shuffled order: the aggregate must not depend on which ran first.
  for (const i of [3, 1, 4, 2]) expect((await cli("eval", "--grid", gridFile, "--shard", `${i}/4`, "--out", four)).code).toBe(0);
}, 180_000);

describe("grid measures", () => {
  it("4 shards merge into exactly the unsharded aggregate, table and findings file", async () => {
    const a = mergeShards(shardFilesIn([whole]));
    const b = mergeShards(shardFilesIn([four]));
    expect(a.complete && b.complete).toBe(true);
    expect(a.measures?.sink).toBeDefined();
    expect(b.measures).toEqual(a.measures);
    const sink = a.measures!.sink!;
    // 2 models × 8 questions; every layer of each model (tiny models: 6 layers each here).
    expect(sink.samples).toHaveLength(16);
    expect(sink.layers.every((l) => l.n === 8)).toBe(true);
    for (const [dir, name] of [
      [whole, "whole"],
      [four, "four"],
    ])
      expect(
        (await cli("merge", dir, "--out", path.join(tmp, `${name}.jsonl`), "--findings", path.join(tmp, `${name}.findings.json`))).code,
      ).toBe(0);
    expect(fs.readFileSync(path.join(tmp, "four.jsonl"), "utf8")).toBe(fs.readFileSync(path.join(tmp, "whole.jsonl"), "utf8"));
    const text = fs.readFileSync(path.join(tmp, "whole.findings.json"), "utf8");
    expect(fs.readFileSync(path.join(tmp, "four.findings.json"), "utf8")).toBe(text);
    const file = JSON.parse(text);
    // Per model three sink quantities, absorption under two rules, four drift counts (two at each of the
    // shallow and deep layer) and the structural share of two bands' anchors, filed under the grid's tier.
    expect(file.findings).toHaveLength(22);
    for (const f of file.findings) expect(f).toMatchObject({ tier: "tiny", n: 8 });
    expect(file.findings.filter((f: { claim: string }) => f.claim === "sink-fixed-arm")).toHaveLength(6);
    const quantities = file.findings.map((f: { quantity: string }) => f.quantity);
    expect(quantities).toContain("absorption, % (rule upstream, mean over layers)");
    expect(quantities).toContain("distinct anchor positions (shallow layer 0, mean over questions)");
    expect(quantities).toContain("structural share of anchors, %, shallow band (layers 0–1)");
    expect(file.report.sink.layers.map((l: { model: string }) => l.model)).toContain("tiny-llama");
    expect(file.provenance.fingerprint).toBe(a.progress.manifest.fingerprint);
  });

  it("a shard resumed with half of every batch missing writes the rows an uninterrupted run does", async () => {
    // Rows lost from every batch (killed writes, failed questions): the rerun decodes the unit's own
    // batches again, so each question's attention numbers come from the batch it ran in the first time.
    const dir = path.join(tmp, "resumed");
    fs.mkdirSync(dir);
    const file = path.join(dir, "shard-1-of-1.jsonl");
    const [head, ...rows] = fs.readFileSync(path.join(whole, "shard-1-of-1.jsonl"), "utf8").trim().split("\n");
    fs.writeFileSync(file, [head, ...rows.filter((_, i) => i % 2 === 0)].join("\n") + "\n");
    const rerun = await cli("eval", "--grid", gridFile, "--out", dir);
    expect(rerun.code, rerun.err).toBe(0);
    expect(rerun.out).toMatch(/ran 8, resumed 8/);
    expect(
      (await cli("merge", dir, "--out", path.join(tmp, "resumed.jsonl"), "--findings", path.join(tmp, "resumed.findings.json"))).code,
    ).toBe(0);
    expect(mergeShards(shardFilesIn([dir])).measures).toEqual(mergeShards(shardFilesIn([whole])).measures);
    expect(fs.readFileSync(path.join(tmp, "resumed.findings.json"), "utf8")).toBe(
      fs.readFileSync(path.join(tmp, "whole.findings.json"), "utf8"),
    );
  }, 60_000);

  it("the rows' sink, absorption, drift and token-type numbers are the analyses of the same decodes", async () => {
    // The reference decodes the ARM's first 4 questions outside the grid, keeping each trace, and runs the
    // analysis on the traces themselves (no grid code): the grid must hold the same per-sample numbers.
    const grid = readGrid(gridFile);
    const entry = readShardFile(path.join(whole, "shard-1-of-1.jsonl"));
    const preset = entry.manifest.models.find((m) => m.name === "tiny-llama")!;
    const records = (await loadQaJsonl(HELDOUT)).slice(0, 4);
    const m = await openModel(path.join(ROOT, "models/tiny-llama"), { probes: { received: true } });
    const traces: Trace[] = [];
    let run;
    try {
      run = await runEval({
        engine: m.engine,
        tokenizer: m.tokenizer,
        records,
        setting: { ...grid.settings[0], seed: 0 } as (typeof grid.settings)[0],
        promptFormat: preset.promptFormat,
        sampler: { ...preset.sampler, seed: 0 },
        extraction: preset.extraction,
        modelName: "tiny-llama",
        batchSize: 2,
        measure: (t) => {
          traces.push(t);
          return {};
        },
      });
    } finally {
      await m.engine.dispose();
    }
    const ids = run.results.map((r) => r.id);
    expect(traces).toHaveLength(4);
    const expected = firstTokenSink(traces, { samples: ids });
    const agg = mergeShards(shardFilesIn([whole])).measures!.sink!;
    for (const want of expected.samples.objects()) {
      const got = agg.samples.find((s) => s.model === "tiny-llama" && s.sample.endsWith(`|${want.sample}`))!;
      expect(got, want.sample).toBeDefined();
      expect(got.top1AtFirst).toBeCloseTo(want.top1AtFirst, 12);
      expect(got.top1Stability).toBeCloseTo(want.top1Stability, 12);
      expect(got.onFirst).toBeCloseTo(want.onFirst, 6); // rows keep 6 decimals
    }
    // Absorption: the paper's rule per (sample, layer) on the final pass, averaged over layers per sample.
    const absorbed = absorptionRate(traces, { rule: "upstream", samples: ids }).table.objects();
    for (const id of ids) {
      const layers = absorbed.filter((d) => d.sample === id).map((d) => d.value);
      const got = mergeShards(shardFilesIn([whole])).measures!.absorption!.samples.find(
        (s) => s.model === "tiny-llama" && s.rule === "upstream" && s.sample.endsWith(`|${id}`),
      )!;
      expect(got.value).toBeCloseTo(layers.reduce((a, b) => a + b, 0) / layers.length, 6);
    }
    // Drift: anchors of the deep layer across the steps under the paper's temporal rule, counted by hand here.
    const deep = traces[0].model.numLayers - 1;
    ids.forEach((id, i) => {
      const anchors = temporalDrift(traces[i], { rule: "mean+ksigma", k: 3, layers: [deep] })
        .heat.objects()
        .filter((r) => r.anchor);
      const got = mergeShards(shardFilesIn([whole])).measures!.drift!.samples.find(
        (s) => s.model === "tiny-llama" && s.sample.endsWith(`|${id}`),
      )!;
      expect(got.deepLayer).toBe(deep);
      expect(got.distinct[1]).toBe(new Set(anchors.map((r) => r.position)).size);
    });
    // Token types: the final pass's anchors in the shallow band (notebook 07's rule), and how many are structural.
    const typed = tokenTypes(traces, { rule: "mean+ksigma", k: 3, fallback: "top-1", pass: "final", samples: ids }).table.objects();
    for (const id of ids) {
      const shallow = typed.filter((d) => d.sample === id && d.band === "layers 0–1");
      const got = mergeShards(shardFilesIn([whole])).measures!["token-types"]!.samples.find(
        (s) => s.model === "tiny-llama" && s.depth === "shallow" && s.sample.endsWith(`|${id}`),
      )!;
      expect(got.band).toBe("layers 0–1");
      expect([got.anchors, got.structural]).toEqual([shallow.length, shallow.filter((d) => d.structural).length]);
    }
    // And the answers are the grid's: the same decodes.
    const rows = mergeShards(shardFilesIn([whole]))
      .rows.filter((r) => r.model === "tiny-llama")
      .slice(0, 4);
    expect(run.results.map((r) => r.prediction)).toEqual(rows.map((r) => r.prediction));
  }, 60_000);

  it("a grid with other measures is refused on resume and on merge (typed errors naming `measures`)", async () => {
    const plain = path.join(tmp, "plain.json");
    fs.writeFileSync(plain, JSON.stringify({ ...spec, measures: undefined }));
    const resumed = await cli("eval", "--grid", plain, "--shard", "1/4", "--out", four);
    expect(resumed.code).toBe(1);
    expect(resumed.err).toMatch(/belongs to another run[\s\S]*measures/);
    // A shard of the plain grid beside the measured ones: merge refuses, naming the field.
    const mixed = path.join(tmp, "mixed");
    expect((await cli("eval", "--grid", plain, "--shard", "1/4", "--out", mixed)).code).toBe(0);
    const files = [path.join(mixed, "shard-1-of-4.jsonl"), ...[2, 3, 4].map((i) => path.join(four, `shard-${i}-of-4.jsonl`))];
    expect(() => mergeShards(files)).toThrow(GridError);
    expect(() => mergeShards(files)).toThrow(/different runs/);
    const r = await cli("merge", ...files, "--out", path.join(tmp, "mixed.jsonl"));
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/manifest: measures/);
    // --findings on a grid without measures is an error, not an empty file.
    const none = await cli(
      "merge",
      mixed,
      "--out",
      path.join(tmp, "p.jsonl"),
      "--findings",
      path.join(tmp, "p.findings.json"),
      "--partial",
    );
    expect(none.code).toBe(1);
    expect(none.err).toMatch(/records no measures/);
    expect(fs.existsSync(path.join(tmp, "p.findings.json"))).toBe(false);
  }, 60_000);

  it("a bad measure name is a grid error naming the field", () => {
    const bad = path.join(tmp, "bad.json");
    fs.writeFileSync(bad, JSON.stringify({ ...spec, measures: ["sinks"] }));
    expect(() => readGrid(bad)).toThrow(GridError);
    expect(() => readGrid(bad)).toThrow(/measures\[0\][\s\S]*sink/);
  });
});
