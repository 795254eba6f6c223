/**
 * The frontier analysis on hand-built traces; every expected value is worked out in the comments
 * from the canvases and planted anchors below, not read off our own output.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  anchorDistances,
  anchorFrontier,
  chanceBaseline,
  distanceTo,
  emptyLayerStats,
  factsPerStep,
  type FactSpan,
  type FrontierLayerStats,
  frontierPositions,
  poolFrontier,
  sourceFollowing,
} from "../../src/analysis/frontier.js";
import { main } from "../../src/cli/main.js";
import { frontierFigure } from "../../src/figures/frontier.js";
import { kindBundle } from "../../src/figures/registry.js";
import { writeTrace } from "../../src/trace/writer.js";
import { ProbeMissingError, SettingsError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap, step } from "./make-trace.js";

const T = 8;
const M = 99; // the mask id of make-trace's model
/** Column means with 0.5 on `anchor` and 0.5/7 on each other key: the top-1 is `anchor`. */
const col = (anchor: number) => Array.from({ length: T }, (_, j) => (j === anchor ? 0.5 : 0.5 / 7));

/*
 * Prompt = positions 0–2; the answer 3–7 is decoded out of order:
 *   step 0  canvas P P P M M M M M   unmasks 3
 *   step 1  canvas P P P D M M M M   unmasks 6
 *   step 2  canvas P P P D M M D M   unmasks 4
 * Frontier (both sides of every masked/unmasked boundary):
 *   step 0: {2, 3}            d_F = 2 1 0 0 1 2 3 4   (sum 13)
 *   step 1: {3, 4}            d_F = 3 2 1 0 0 1 2 3   (sum 12)
 *   step 2: {3, 4, 5, 6, 7}   d_F = 3 2 1 0 0 0 0 0   (sum 6)
 * Just unmasked: d_U = |j − u|:
 *   step 0 (u = 3): 3 2 1 0 1 2 3 4 (sum 16);  step 1 (u = 6): 6 5 4 3 2 1 0 1 (sum 22);  step 2 (u = 4): 4 3 2 1 0 1 2 3 (sum 16)
 * Chance with radius 1 over all 8 keys: frontier 4/8, 4/8, 6/8; unmasked 3/8 each step.
 * Planted top-1 anchors: layer 0 walks with the front (4, 5, 7); layer 1 stays at 0; layer 2 (the deep
 * third of a 3-layer model) goes 0, 2, 0.
 */
const ANCHORS = [
  [4, 0, 0],
  [5, 0, 2],
  [7, 0, 0],
];
const CANVASES = [
  [1, 10, 11, M, M, M, M, M],
  [1, 10, 11, 20, M, M, M, M],
  [1, 10, 11, 20, M, M, 23, M],
];
const UNMASKED = [[3], [6], [4]];

function trace() {
  return makeTrace({
    model: { numLayers: 3 },
    sequence: [1, 10, 11, 20, 21, 22, 23, 24],
    promptLength: 3,
    steps: CANVASES.map((c, s) =>
      step(s, c, probeMap(...[0, 1, 2].map((l) => probe(l, "received", [T], col(ANCHORS[s][l])))), {
        transferred: Int32Array.from(UNMASKED[s]),
        tokens: Int32Array.from(UNMASKED[s], (p) => 17 + p), // the final sequence's token there
        confidence: Float32Array.from(UNMASKED[s], () => 0.9),
        producingRow: Int32Array.from(UNMASKED[s]),
      }),
    ),
  });
}

/** Facts: "born" is read from [0, 1) and written at 3 (step 0); "works" from [1, 3), written at 6 (step 1) and 7 (never unmasked). */
const FACTS: FactSpan[] = [
  { factId: "born", keySpan: [0, 1], answerTokens: [3] },
  { factId: "works", keySpan: [1, 3], answerTokens: [6, 7] },
];

describe("frontier core", () => {
  it("the frontier is both sides of every boundary", () => {
    expect(Array.from(frontierPositions([0, 0, 0, 1, 1, 1, 1, 1]))).toEqual([2, 3]);
    expect(Array.from(frontierPositions([0, 0, 0, 0, 1, 1, 0, 1]))).toEqual([3, 4, 5, 6, 7]);
    expect(Array.from(frontierPositions([0, 0, 0]))).toEqual([]); // nothing masked: no frontier
  });
  it("distances to the nearest target, Infinity when there is none", () => {
    expect(Array.from(distanceTo([2, 3], 8))).toEqual([2, 1, 0, 0, 1, 2, 3, 4]);
    expect(Array.from(distanceTo([6, 9], 8))).toEqual([6, 5, 4, 3, 2, 1, 0, 1]); // 9 is outside the canvas
    expect(Array.from(distanceTo([], 2))).toEqual([Infinity, Infinity]);
  });
  it("chance baseline, exact: step 0 with radius 1 is 4/8 within and mean distance 13/8 (off-by-one checks)", () => {
    const d = distanceTo([2, 3], 8);
    const all = new Uint8Array(8).fill(1);
    // d ≤ 1 at {1, 2, 3, 4}. A strict `d < r` would give 2/8; a frontier of only the first mask {3}
    // would give {2, 3, 4} = 3/8 and mean distance 16/8 = 2.
    expect(chanceBaseline(d, all, 1)).toEqual({ share: 0.5, distance: 13 / 8, candidates: 8 });
    // radius 0: only the frontier itself, 2 of 8
    expect(chanceBaseline(d, all, 0).share).toBe(0.25);
    // candidates exclude key 0 (d = 2): within {1,2,3,4} of 7 keys, distances 1+0+0+1+2+3+4 = 11
    const no0 = Uint8Array.from([0, 1, 1, 1, 1, 1, 1, 1]);
    expect(chanceBaseline(d, no0, 1)).toEqual({ share: 4 / 7, distance: 11 / 7, candidates: 7 });
    expect(chanceBaseline(distanceTo([], 8), all, 1).share).toBeNaN();
  });
  it("anchor distances: within-radius count and summed distance", () => {
    const d = distanceTo([2, 3], 8);
    expect(anchorDistances(d, [4, 7], 1)).toEqual({ within: 1, distance: 1 + 4 });
    expect(anchorDistances(d, [5], 2)).toEqual({ within: 1, distance: 2 }); // d = radius counts
  });
  it("facts per step: a fact is written at a step that unmasks one of its answer tokens", () => {
    expect(factsPerStep(FACTS, UNMASKED)).toEqual([[0], [1], []]);
  });
  it("source following: observed vs the exact mean over all permutations of the steps", () => {
    // steps: anchors {0}, {2}, {2}, {5}; facts' spans: [0,2) | [2,3) | none | [0,2) and [2,3).
    // Counted steps S* = {0, 1, 3} (step 2 writes no fact). hit(s,t) = share of A_s inside K_t:
    //   A_0 = {0}: K_0 1, K_1 0, K_3 1;  A_1 = {2}: K_0 0, K_1 1, K_3 1;  A_3 = {5}: 0, 0, 0.
    // observed Σ hit(s,s) = 1 + 1 + 0 = 2; shuffled Σ_s mean_t hit(s,t) = 2/3 + 2/3 + 0 = 4/3.
    const anchors = [[0], [2], [2], [5]];
    const spans: [number, number][][] = [
      [[0, 2]],
      [[2, 3]],
      [],
      [
        [0, 2],
        [2, 3],
      ],
    ];
    const r = sourceFollowing(anchors, spans);
    expect(r.steps).toBe(3);
    expect(r.hits).toBe(2);
    expect(r.shuffled).toBeCloseTo(4 / 3, 12);
    // Independent check: enumerate the 6 permutations of S* and average Σ_s hit(s, π(s)).
    const use = [0, 1, 3];
    const hit = (s: number, t: number) => (spans[t].some(([b, e]) => b <= anchors[s][0] && anchors[s][0] < e) ? 1 : 0);
    const perms = [
      [0, 1, 3],
      [0, 3, 1],
      [1, 0, 3],
      [1, 3, 0],
      [3, 0, 1],
      [3, 1, 0],
    ];
    const avg = perms.reduce((a, p) => a + use.reduce((b, s, i) => b + hit(s, p[i]), 0), 0) / perms.length;
    expect(r.shuffled).toBeCloseTo(avg, 12);
  });
  it("an anchor that never moves scores the same as shuffled", () => {
    const r = sourceFollowing([[0], [0], [0]], [[[0, 1]], [[1, 3]], [[0, 1]]]);
    // observed 1 + 0 + 1 = 2; every row of hit(s,·) is (1, 0, 1) → mean 2/3, three steps → 2
    expect(r.hits).toBe(2);
    expect(r.shuffled).toBeCloseTo(2, 12);
  });
});

describe("anchorFrontier on a trace", () => {
  const r = anchorFrontier(trace(), { radius: 1, facts: [FACTS] });
  const sum = Object.fromEntries(
    (r.summary.objects() as { statistic: string; value: number; baseline: number }[]).map((x) => [x.statistic, x]),
  );

  it("per (step, layer) cells: layer 0 follows the front", () => {
    const l0 = (r.cells.objects() as Record<string, number>[]).filter((c) => c.layer === 0);
    expect(l0.map((c) => c.top1)).toEqual([4, 5, 7]);
    // anchors 4, 5, 7: d_F = 1, 1, 0 (all within 1); d_U = 1, 1, 3
    expect(l0.map((c) => c.frontierDistance)).toEqual([1, 1, 0]);
    expect(l0.map((c) => c.frontierWithin)).toEqual([1, 1, 1]);
    expect(l0.map((c) => c.chanceFrontierWithin)).toEqual([0.5, 0.5, 0.75]);
    expect(l0.map((c) => c.chanceFrontierDistance)).toEqual([13 / 8, 12 / 8, 6 / 8]);
    expect(l0.map((c) => c.unmaskedDistance)).toEqual([1, 1, 3]);
    expect(l0.map((c) => c.chanceUnmaskedDistance)).toEqual([2, 22 / 8, 2]);
    expect(l0.map((c) => c.candidates)).toEqual([8, 8, 8]);
  });

  it("anchors table: masked flag and the three distances (d_M = 0 on a masked key)", () => {
    const a = (r.anchors.objects() as Record<string, unknown>[]).filter((x) => x.layer === 2);
    // layer 2: 0 at step 0 (prompt, d_F 2, d_M 3, d_U 3); 2 at step 1 (d_F 1, d_M 2, d_U 4); 0 at step 2 (d_F 3, d_M 4, d_U 4)
    expect(a.map((x) => [x.step, x.position, x.masked, x.dFrontier, x.dMasked, x.dUnmasked])).toEqual([
      [0, 0, false, 2, 3, 3],
      [1, 2, false, 1, 2, 4],
      [2, 0, false, 3, 4, 4],
    ]);
    const first = (r.anchors.objects() as Record<string, unknown>[])[0];
    expect([first.position, first.masked, first.dMasked, first.token]).toEqual([4, true, 0, "<mask>"]);
  });

  it("summary of one trace: hand-pooled over 3 layers × 3 steps", () => {
    // distinct anchors: layer 0 {4,5,7}, layer 1 {0}, layer 2 {0,2} → (3 + 1 + 2)/3 = 2
    expect(sum["distinct anchors per layer"].value).toBeCloseTo(2, 12);
    // top-1 moves in layers 0 and 2, not in 1 → 2/3
    expect(sum["share of layers whose top-1 moves"].value).toBeCloseTo(2 / 3, 12);
    // within 1 of the frontier: layer 0 3, layer 1 0 (d 2,3,3), layer 2 1 (d 2,1,3) → 4/9;
    // chance per layer (0.5 + 0.5 + 0.75) → 3 × 1.75 / 9 = 7/12
    expect(sum["share of anchors within radius of the frontier"].value).toBeCloseTo(4 / 9, 12);
    expect(sum["share of anchors within radius of the frontier"].baseline).toBeCloseTo(7 / 12, 12);
    // distances: layer 0 1+1+0, layer 1 2+3+3, layer 2 2+1+3 → 16/9; chance 3 × (13+12+6)/8 / 9 = 31/24
    expect(sum["anchor-to-frontier distance"].value).toBeCloseTo(16 / 9, 12);
    expect(sum["anchor-to-frontier distance"].baseline).toBeCloseTo(31 / 24, 12);
    // unmasked: within 1 only anchors 4 (step 0) and 5 (step 1) of layer 0 → 2/9, chance 3/8;
    // distances 1+1+3 + 3+6+4 + 3+4+4 = 29 → 29/9; chance (16 + 22 + 16)/8/3 = 2.25
    expect(sum["share of anchors within radius of the unmasked tokens"].value).toBeCloseTo(2 / 9, 12);
    expect(sum["share of anchors within radius of the unmasked tokens"].baseline).toBeCloseTo(3 / 8, 12);
    expect(sum["anchor-to-unmasked distance"].value).toBeCloseTo(29 / 9, 12);
    expect(sum["anchor-to-unmasked distance"].baseline).toBeCloseTo(2.25, 12);
  });

  it("source following on the deep layer (2): anchor 0 while 'born' ([0,1)) is written, 2 while 'works' ([1,3)) is", () => {
    // counted steps {0, 1}; hit(0,0) = 1, hit(1,1) = 1 → observed 1; hit(0,1) = 0, hit(1,0) = 0 → shuffled (1+0+0+1)/4 = 1/2
    const s = sum["deep anchor in the written fact's source"] as unknown as { value: number; baseline: number; difference: number };
    expect(s.value).toBe(1);
    expect(s.baseline).toBe(0.5);
    expect(s.difference).toBe(0.5);
    const deep = r.perTrace[0].layers.find((l) => l.layer === 2)!;
    expect([deep.sourceSteps, deep.sourceHits, deep.sourceShuffled]).toEqual([2, 2, 1]);
    expect(r.perTrace[0].layers.find((l) => l.layer === 1)!.sourceSteps).toBe(0); // not a source layer
  });

  it("one trace: every interval collapses to the value", () => {
    const x = sum["share of anchors within radius of the frontier"] as unknown as Record<string, number>;
    expect([x.lo, x.hi]).toEqual([x.value, x.value]);
  });

  it("the chance baseline follows the rule's exclusions", () => {
    const ex = anchorFrontier(trace(), { radius: 1, layers: [0], exclude: ["first-token"] });
    const c = ex.cells.objects() as Record<string, number>[];
    // step 0 without key 0 (d_F 2): 4 within of 7, distance 11/7 (as in the core test)
    expect([c[0].candidates, c[0].chanceFrontierWithin, c[0].chanceFrontierDistance]).toEqual([7, 4 / 7, 11 / 7]);
  });

  it("figure input: per-layer shares with chance, and the strip's states and anchors", () => {
    const { spec } = r;
    expect(spec.layers).toEqual([0, 1, 2]);
    expect(spec.within).toEqual([1, 0, 1 / 3]);
    expect(spec.chance.map((x) => x * 12)).toEqual([7, 7, 7]);
    // strip at layer 0, step 1: P P P D M M U M (U = unmasked at this step, position 6)
    const row1 = Array.from(spec.strip.state.values).slice(T, 2 * T);
    expect(row1).toEqual([0, 0, 0, 1, 2, 2, 3, 2]);
    expect(Array.from(spec.strip.anchors.values).slice(T, 2 * T)).toEqual([0, 0, 0, 0, 0, 1, 0, 0]);
    const d = frontierFigure(spec);
    expect(d.panels.map((p) => p.type)).toEqual(["lines", "heat"]);
    const svg = kindBundle(spec)["image/svg+xml"] as string;
    expect(svg).toContain("Anchors vs the frontier");
  });
});

describe("pooling over traces", () => {
  const zero: FrontierLayerStats = { ...emptyLayerStats(0, 1), distinct: 1 };
  const unit = (anchors: number, within: number) => ({
    model: "m",
    sample: String(anchors),
    rule: "top-k (k=1)",
    radius: 1,
    layers: [{ ...zero, anchors, within, chanceWithin: anchors / 2 }],
  });
  it("a ratio of sums (anchors weigh, not traces) with a bootstrap over traces", () => {
    // 2 of 2 and 0 of 8 → 2/10 = 0.2 (a mean of ratios would say 0.5). Resamples: both the first
    // (p = 1/4) → 1, both the second (1/4) → 0, mixed → 0.2; so the 95 % interval is [0, 1].
    const { summary } = poolFrontier([unit(2, 2), unit(8, 0)]);
    const row = (summary.objects() as Record<string, number | string>[]).find(
      (x) => x.statistic === "share of anchors within radius of the frontier",
    )!;
    expect(row.value).toBeCloseTo(0.2, 12);
    expect([row.lo, row.hi]).toEqual([0, 1]);
    expect(row.baseline).toBeCloseTo(0.5, 12);
    expect(row.traces).toBe(2);
  });
  it("two copies of a trace pool to its own values", () => {
    const one = anchorFrontier(trace(), { radius: 1 });
    const two = anchorFrontier([trace(), trace()], { radius: 1 });
    const v = (t: typeof one) => (t.summary.objects() as { value: number }[]).map((x) => x.value);
    expect(v(two).slice(0, 6)).toEqual(v(one).slice(0, 6));
  });
});

describe("bad input", () => {
  it("no steps or no received probe → ProbeMissingError naming the probe and how to record it", () => {
    expect(() => anchorFrontier(makeTrace({ sequence: [1, 2] }))).toThrow(ProbeMissingError);
    const noProbe = makeTrace({ sequence: [1, 99], steps: [step(0, [1, 99], probeMap())] });
    expect(() => anchorFrontier(noProbe)).toThrow(/blocks\.0\.attn\.received[\s\S]*hint: record it with/);
  });
  it("bad radius, fact spans or fact-list count → SettingsError", () => {
    expect(() => anchorFrontier(trace(), { radius: -1 })).toThrow(SettingsError);
    expect(() => anchorFrontier(trace(), { radius: 1.5 })).toThrow(/radius/);
    expect(() => anchorFrontier(trace(), { facts: [[{ factId: "x", keySpan: [3, 3], answerTokens: [4] }]] })).toThrow(/bad fact span/);
    expect(() => anchorFrontier(trace(), { facts: [FACTS, FACTS] })).toThrow(/one fact list per trace/);
    expect(() => anchorFrontier(trace(), { layers: [0, 1], sourceLayers: [2] })).toThrow(/source layer not read/);
  });
});

describe("floatscope analyze frontier", () => {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-frontier-"));
  afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));
  const file = path.join(dir, "t.fstrace");
  writeTrace(file, trace());
  const facts = path.join(dir, "facts.json");
  fs.writeFileSync(facts, JSON.stringify(FACTS));
  async function run(...argv: string[]): Promise<{ code: number; out: string; err: string }> {
    let out = "",
      err = "";
    const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
    return { code, out, err };
  }

  it("--json: the summary and per-layer tables (the same hand-worked values as above)", async () => {
    const r = await run("analyze", "frontier", file, "--radius", "1", "--facts", facts, "--json");
    expect(r.err).toBe("");
    expect(r.code).toBe(0);
    const j = JSON.parse(r.out);
    expect(j.analysis).toBe("frontier");
    expect(j.radius).toBe(1);
    expect(j.rule).toBe("top-k (k=1)");
    const row = (name: string) => j.summary.find((x: { statistic: string }) => x.statistic === name);
    expect(row("share of anchors within radius of the frontier").value).toBeCloseTo(4 / 9, 6); // written through the trace file: float32
    expect(row("share of anchors within radius of the frontier").baseline).toBeCloseTo(7 / 12, 12);
    expect(row("deep anchor in the written fact's source").value).toBe(1);
    expect(row("deep anchor in the written fact's source").baseline).toBe(0.5);
    expect(j.layers.map((x: { within: number }) => x.within)).toEqual([1, 0, 1 / 3]);
  });
  it("text: markdown tables; a bad radius is a usage error; a trace without steps fails with the probe hint", async () => {
    const r = await run("analyze", "frontier", file);
    expect(r.code).toBe(0);
    expect(r.out).toContain("## summary");
    expect(r.out).toContain("share of layers whose top-1 moves");
    expect((await run("analyze", "frontier", file, "--radius", "-1")).code).toBe(2);
    const bare = path.join(dir, "bare.fstrace");
    writeTrace(
      bare,
      makeTrace({ model: { numLayers: 1 }, sequence: [1, 2], finalProbes: probeMap(probe(0, "received", [2], [0.5, 0.5])) }),
    );
    const e = await run("analyze", "frontier", bare);
    expect(e.code).toBe(1);
    expect(e.err).toMatch(/no per-step records/);
  });
});
