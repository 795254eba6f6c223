/**
 * A grid crossed with an intervention policy: the sharded rows of the intervened units are the rows a
 * direct `runEval` with that policy gives (same model, questions, setting and seed), and the plain units
 * are untouched by the extra axis.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { openModel } from "../../src/model/open.js";
import { runEval } from "../../src/qa/runner.js";
import { ROOT } from "./helpers.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-grid-iv-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));
const DATA = path.join(ROOT, "models/world/eval-heldout.jsonl.gz");
const MODEL = path.join(ROOT, "models/tiny-dream");
const quiet = { out: () => undefined, err: () => undefined };

describe("grid × interventions", () => {
  it("intervened units give the rows of runEval with that policy; plain units those without", async () => {
    const grid = path.join(tmp, "grid.json");
    fs.writeFileSync(
      grid,
      JSON.stringify({
        name: "iv",
        models: [MODEL],
        datasets: [{ name: "heldout", path: DATA, limit: 4 }],
        settings: [{ kind: "distractors", k: 2, goldPosition: "first" }],
        interventions: ["none", "first"],
        chunk: 4,
        batchSize: 2,
      }),
    );
    expect(await main(["eval", "--grid", grid, "--out", path.join(tmp, "shards")], quiet)).toBe(0);
    const merged = path.join(tmp, "merged.jsonl");
    expect(await main(["merge", path.join(tmp, "shards"), "--out", merged], quiet)).toBe(0);
    const rows = fs
      .readFileSync(merged, "utf8")
      .split("\n")
      .filter((l) => l.trim())
      .map((l) => JSON.parse(l) as { unit: string; id: string; prediction: string; intervention?: string });
    expect(rows).toHaveLength(8);
    const first = rows.filter((r) => r.unit.includes("|iv=first|"));
    const plain = rows.filter((r) => !r.unit.includes("|iv="));
    expect(first.map((r) => r.intervention)).toEqual(["first", "first", "first", "first"]);

    // The same four questions, run directly.
    const records = (await loadQaJsonl(DATA)).slice(0, 4);
    const setting = { kind: "distractors" as const, k: 2, goldPosition: 0, source: "record" as const, seed: 0 };
    const m = await openModel(MODEL, { interventions: true });
    try {
      const opts = {
        engine: m.engine,
        tokenizer: m.tokenizer,
        records,
        setting,
        promptFormat: m.preset.promptFormat,
        sampler: { ...m.preset.sampler, seed: 0 },
        extraction: m.preset.extraction,
        modelName: "tiny-dream",
        batchSize: 2,
      };
      const direct = await runEval({ ...opts, intervention: "first" });
      const directPlain = await runEval(opts);
      expect(first.map((r) => [r.id, r.prediction])).toEqual(direct.results.map((r) => [r.id, r.prediction]));
      expect(plain.map((r) => [r.id, r.prediction])).toEqual(directPlain.results.map((r) => [r.id, r.prediction]));
    } finally {
      await m.dispose();
    }
  }, 180_000);
});
