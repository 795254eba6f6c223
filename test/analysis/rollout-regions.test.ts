/**
 * Two ways regionRollout used to be silently wrong, with hand-worked values:
 * (a) offsets layout, a prompt region named "answer" and no region_sum probe: the layout's own
 *     "answer" took every generated token, leaving the prompt's "answer" an empty region whose
 *     identity row absorbed 1/R of the stationary vector;
 * (b) a trace with full maps for only some layers rolled out over those layers only, without a word.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { offsetsLayout, regionRollout } from "../../src/analysis/rollout.js";
import { main } from "../../src/cli/main.js";
import { writeTrace } from "../../src/trace/writer.js";
import { ProbeMissingError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap } from "./make-trace.js";

// Three tokens, bidirectional: prompt = tokens 0, 1 (region "query"), generated = token 2 ("answer",
// as promptRegionsToTokens writes it: [promptLength, promptLength + genLength)). No BOS (id 50).
// Head-mean map (rows = queries):
//   row 0: [.5, .25, .25]   row 1: [.25, .5, .25]   row 2: [.5, .5, 0]
// Sum-pooled over (query, answer): P = [[1.5, .5], [1, 0]] → row-normalised [[.75, .25], [1, 0]].
// Â = rownorm(P + I) = [[1.75, .25] / 2, [1, 1] / 2] = [[.875, .125], [.5, .5]].
// One layer: R = Â. Stationary π = πR: π_a = .125·π_q + .5·π_a → π_a = π_q / 4 → π = [.8, .2].
const MAP = [0.5, 0.25, 0.25, 0.25, 0.5, 0.25, 0.5, 0.5, 0];

function answerRegionTrace() {
  return makeTrace({
    model: { numLayers: 1, bosTokenId: 1 },
    sequence: [50, 11, 12],
    promptLength: 2,
    regions: [
      { name: "query", tokens: [0, 2], chars: [0, 0] },
      { name: "answer", tokens: [2, 3], chars: [0, 0] },
    ],
    finalProbes: probeMap(probe(0, "pattern_mean", [3, 3], MAP)),
  });
}

describe("offsets layout with an `answer` region in the prompt's regions (no region_sum)", () => {
  it("the generated tokens stay in the trace's own answer region: no empty extra region", () => {
    const l = offsetsLayout(answerRegionTrace());
    expect(l.names).toEqual(["query", "answer"]);
    expect(Array.from(l.assign)).toEqual([0, 0, 1]);
  });

  it("rollout and stationary vector are the hand-worked ones and π sums to 1", () => {
    const { spec } = regionRollout(answerRegionTrace());
    expect(spec.regions).toEqual(["query", "answer"]);
    expect(Array.from(spec.matrix.values)).toEqual([
      expect.closeTo(0.875, 7),
      expect.closeTo(0.125, 7),
      expect.closeTo(0.5, 7),
      expect.closeTo(0.5, 7),
    ]);
    expect(spec.stationary).toEqual([expect.closeTo(0.8, 7), expect.closeTo(0.2, 7)]);
    expect(spec.stationary.reduce((a, b) => a + b, 0)).toBeCloseTo(1, 12);
  });

  it("a region nested inside another gets no token of its own: left out, with a warning, not an empty region", () => {
    // "title" [0, 1) lies inside "query" [0, 2); the outermost region keeps the tokens, so "title" holds none.
    // Without it the regions and values are those of the case above.
    const t = answerRegionTrace();
    t.prompt.regions.push({ name: "title", tokens: [0, 1], chars: [0, 0] });
    const { spec } = regionRollout(t);
    expect(spec.regions).toEqual(["query", "answer"]);
    expect(spec.stationary).toEqual([expect.closeTo(0.8, 7), expect.closeTo(0.2, 7)]);
    expect(spec.warnings?.join(" ")).toMatch(/title.*no token/);
  });
});

// The 12-token RAG prompt of rollout.test.ts on a model of 4 layers whose trace has pattern_mean
// for layers 0 and 1 only (a chosen-layer probe).
function ragOfLayers(numLayers: number, recorded: number[]) {
  const T = 12;
  const uniformCausal = Array.from({ length: T * T }, (_, x) => (x % T <= Math.floor(x / T) ? 1 / (Math.floor(x / T) + 1) : 0));
  return makeTrace({
    model: { name: "tiny-llama", family: "llama", causal: true, numLayers },
    sequence: [1, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21],
    promptLength: 10,
    regions: [
      { name: "query", tokens: [1, 4], chars: [0, 0] },
      { name: "doc 1", tokens: [4, 6], chars: [0, 0] },
      { name: "doc 2", tokens: [6, 9], chars: [0, 0] },
      { name: "gold", tokens: [6, 9], chars: [0, 0] },
      { name: "instruction", tokens: [9, 10], chars: [0, 0] },
    ],
    finalProbes: probeMap(...recorded.map((l) => probe(l, "pattern_mean", [T, T], uniformCausal))),
  });
}

describe("full maps for only some layers", () => {
  it.each(["upstream", "offsets"] as const)("%s layout: refused by default, naming the missing layers and the probe option", (layout) => {
    let err: unknown;
    try {
      regionRollout(ragOfLayers(4, [0, 1]), { layout });
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(ProbeMissingError);
    const e = err as ProbeMissingError;
    expect(e.field).toBe("blocks.2.attn.pattern_mean");
    expect(e.expected).toMatch(/layers 0…3/);
    expect(e.found).toMatch(/layers 0, 1/);
    expect(e.message).toMatch(/layers 2, 3/);
    expect(e.hint).toMatch(/patternMean/);
  });

  it('layers: "recorded" rolls out over the recorded layers and carries the warning in the result', () => {
    const sub = regionRollout(ragOfLayers(4, [0, 1]), { layout: "upstream", layers: "recorded" });
    // The same two maps on a 2-layer model: nothing is missing, so the numbers must be the same.
    const whole = regionRollout(ragOfLayers(2, [0, 1]), { layout: "upstream" });
    expect(Array.from(sub.spec.matrix.values)).toEqual(Array.from(whole.spec.matrix.values));
    expect(sub.spec.warnings?.join(" ")).toMatch(/over layers 0, 1 only.*layers 2, 3 of 4 were not recorded/);
    expect(whole.spec.warnings?.join(" ")).not.toMatch(/not recorded/);
  });
});

describe("floatscope analyze rollout on a trace with some layers", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-rollout-layers-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const run = async (...argv: string[]) => {
    let out = "",
      err = "";
    const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
    return { code, out, err };
  };
  const file = path.join(dir, "some-layers.fstrace");
  const t = ragOfLayers(4, [0, 1]);
  t.probes = { patternMean: { layers: [0, 1] } };
  t.unmaskedAt = new Int32Array(12).fill(-1); // no step records: nothing was unmasked at a step
  writeTrace(file, t);

  it("refused (exit 1) naming the missing layers and the flag that allows them", async () => {
    const r = await run("analyze", "rollout", file, "--layout", "upstream");
    expect(r.code).toBe(1);
    expect(r.err).toMatch(/layers 2, 3/);
    expect(r.err).toMatch(/--layers recorded/);
  });

  it("--layers recorded: exit 0, the warning in the text and in --json", async () => {
    const text = await run("analyze", "rollout", file, "--layout", "upstream", "--layers", "recorded");
    expect(text.code).toBe(0);
    expect(text.out + text.err).toMatch(/layers 2, 3 of 4 were not recorded/);
    const json = await run("analyze", "rollout", file, "--layout", "upstream", "--layers", "recorded", "--json");
    expect(json.code).toBe(0);
    expect(JSON.parse(json.out).warnings.join(" ")).toMatch(/layers 2, 3 of 4 were not recorded/);
  });
});
