/**
 * Intervened evaluations join the QA tables: every row names its policy (`intervention`), the
 * summary has one line per (model, setting, intervention), resuming is per policy, and traces of
 * different policies go to different folders. A fake engine that accepts interventions (and,
 * being fake, ignores them) is enough here: what the policies do is tested in
 * test/samplers/interventions.test.ts on real graphs.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadQaJsonl } from "../../src/qa/datasets.js";
import { readResults, runEval, summarizeResults } from "../../src/qa/runner.js";
import type { ForwardInput, ForwardOutput } from "../../src/runtime/types.js";
import { readTrace } from "../../src/trace/reader.js";
import { FakeEngine, FakeTokenizer } from "../support/fake-engine.js";

const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-eval-iv-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

class IntervenableFake extends FakeEngine {
  readonly interventions = true;
  readonly seen: ForwardInput["intervention"][] = [];
  override async forward(input: ForwardInput): Promise<ForwardOutput> {
    this.seen.push(input.intervention);
    return super.forward(input);
  }
}

describe("runEval with an intervention policy", () => {
  it("labels rows, summarises per policy, resumes per policy, keeps trace folders apart", async () => {
    const file = path.join(tmp, "d.jsonl");
    fs.writeFileSync(
      file,
      Array.from({ length: 3 }, (_, i) =>
        JSON.stringify({ question: `q ${i}`, answers: ["t23"], ctxs: [{ title: "x", text: "t29 t23", isgold: true }] }),
      ).join("\n") + "\n",
    );
    const records = await loadQaJsonl(file);
    const engine = new IntervenableFake({ family: "llama", probes: {} });
    const resultsFile = path.join(tmp, "results.jsonl");
    const common = {
      engine,
      tokenizer: new FakeTokenizer(),
      records,
      promptFormat: "tiny-world" as const,
      sampler: { genLength: 2 },
      setting: { kind: "oracle" as const },
      resultsFile,
      traceDir: path.join(tmp, "traces"),
    };
    const plain = await runEval(common);
    const first = await runEval({ ...common, intervention: "first" });
    expect(plain.results.map((r) => r.intervention)).toEqual(["none", "none", "none"]);
    expect(first.results.map((r) => r.intervention)).toEqual(["first", "first", "first"]);
    expect(first.results.every((r) => r.error === undefined)).toBe(true);
    // the policy reached the engine: position 0 hidden at every layer
    const iv = engine.seen.at(-1)!;
    expect(iv.keyHidden!.reduce((a, b) => a + b, 0)).toBeGreaterThan(0);
    // resuming: a second run of the same policy does nothing; the file holds both policies
    const again = await runEval({ ...common, intervention: "first" });
    expect(again.progress.resumed).toBe(3);
    const rows = readResults(resultsFile);
    expect(rows.length).toBe(6);
    const t = summarizeResults(rows).objects() as { intervention: string; n: number }[];
    expect(t.map((r) => [r.intervention, r.n]).sort()).toEqual([
      ["first", 3],
      ["none", 3],
    ]);
    // traces: one folder per (setting, policy), and the intervened ones record it
    const dirs = fs.readdirSync(path.join(tmp, "traces")).sort();
    expect(dirs).toEqual(["oracle", "oracle@first"]);
    const tr = readTrace(first.results[0].trace!);
    expect(tr.intervention?.policy).toBe("first");
    // a bad policy is a typed error before any question runs
    await expect(runEval({ ...common, intervention: "sideways" })).rejects.toThrow(/Unknown intervention policy/);
    expect(readResults(resultsFile).length).toBe(6);
  });
});
