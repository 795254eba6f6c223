import { describe, expect, it } from "vitest";
import {
  offsetsLayout,
  poolRegions,
  regionRollout,
  rollout,
  rowNormalize,
  stationary,
  upstreamLayout,
} from "../../src/analysis/rollout.js";
import { ProbeMissingError, SettingsError } from "../../src/util/errors.js";
import { makeTrace, probe, probeMap } from "./make-trace.js";

const round = (a: ArrayLike<number>) => Array.from(a, (v) => +v.toFixed(12));

// Causal pooled map over (BOS, query, answer): P = [[1,0,0],[.5,.5,0],[.5,.25,.25]].
// Â = ½P + ½I = [[1,0,0],[.25,.75,0],[.25,.125,.625]].
// Â² by hand: row 1 = [.25 + .75·.25, .75², 0] = [.4375, .5625, 0];
//             row 2 = [.25 + .125·.25 + .625·.25, .125·.75 + .625·.125, .625²] = [.4375, .171875, .390625].
const P = [1, 0, 0, 0.5, 0.5, 0, 0.5, 0.25, 0.25];

describe("rollout core", () => {
  it("two layers of the causal map give Â² (hand values)", () => {
    expect(round(rollout([P, P], 3))).toEqual([1, 0, 0, 0.4375, 0.5625, 0, 0.4375, 0.171875, 0.390625]);
  });
  it("causal rollout ends on BOS: with depth every row → [1, 0, 0], and π = e_BOS", () => {
    const deep = rollout(Array(80).fill(P), 3);
    for (let a = 0; a < 3; a++) expect(deep[a * 3]).toBeGreaterThan(0.9999);
    expect(round(stationary(deep, 3)).map((v) => +v.toFixed(6))).toEqual([1, 0, 0]);
  });
  it("bidirectional maps mix to identical rows whose common value is π", () => {
    const B = [0.2, 0.5, 0.3, 0.1, 0.6, 0.3, 0.3, 0.3, 0.4];
    const deep = rollout(Array(200).fill(B), 3);
    const pi = stationary(B, 3);
    for (let a = 0; a < 3; a++) for (let b = 0; b < 3; b++) expect(deep[a * 3 + b]).toBeCloseTo(pi[b], 9);
    // π = πB by hand: column 3 gives .6π₃ = .3(1 − π₃) → π₃ = 1/3; column 1 gives .9π₁ = .1·(2/3) + .1 → π₁ = 5/27;
    // π₂ = 13/27 (column 2 checks: (.5·5 + .6·13 + .3·9)/27 = 13/27).
    expect(Array.from(pi)).toEqual([expect.closeTo(5 / 27, 12), expect.closeTo(13 / 27, 12), expect.closeTo(9 / 27, 12)]);
  });
  it("an empty region's zero row becomes an identity row (upstream's guard)", () => {
    expect(round(rowNormalize([0, 0, 2, 2], 2))).toEqual([0, 0, 0.5, 0.5]);
    expect(round(rollout([[0, 0, 1, 1]], 2))).toEqual([1, 0, 0.25, 0.75]);
  });
  it("sum pooling of a 4-token causal map (hand values)", () => {
    // tokens: BOS(0) query(1,2) answer(3)
    const A = [1, 0, 0, 0, 0.5, 0.5, 0, 0, 0.5, 0.25, 0.25, 0, 0.4, 0.2, 0.2, 0.2];
    const pooled = poolRegions(A, 4, { names: ["BOS", "query", "answer"], assign: Int32Array.of(0, 1, 1, 2) });
    expect(round(pooled)).toEqual([1, 0, 0, 1, 1, 0, 0.4, 0.4, 0.2]);
    expect(round(rowNormalize(pooled, 3))).toEqual([1, 0, 0, 0.5, 0.5, 0, 0.4, 0.4, 0.2]);
  });
});

// A 12-token RAG prompt: BOS(0) header(1–3) doc 1 (4–5) doc 2 = gold (6–8) instruction (9) | answer (10–11).
function rag(over: { bos?: boolean; maps?: number[][] } = {}) {
  const bos = over.bos ?? true;
  const seq = [bos ? 1 : 50, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21];
  const T = 12;
  const uniformCausal = Array.from({ length: T * T }, (_, x) => (x % T <= Math.floor(x / T) ? 1 / (Math.floor(x / T) + 1) : 0));
  const maps = over.maps ?? [uniformCausal, uniformCausal];
  return makeTrace({
    model: { name: "tiny-llama", family: "llama", causal: true },
    sequence: seq,
    promptLength: 10,
    regions: [
      { name: "query", tokens: [1, 4], chars: [0, 0] },
      { name: "doc 1", tokens: [4, 6], chars: [0, 0] },
      { name: "doc 2", tokens: [6, 9], chars: [0, 0] },
      { name: "gold", tokens: [6, 9], chars: [0, 0] },
      { name: "instruction", tokens: [9, 10], chars: [0, 0] },
    ],
    finalProbes: probeMap(...maps.map((m, l) => probe(l, "pattern_mean", [T, T], m))),
  });
}

describe("region layouts", () => {
  it("offsets layout: BOS, query, doc 1, doc 2 / gold, instruction, answer — every token in one region", () => {
    const l = offsetsLayout(rag());
    expect(l.names).toEqual(["BOS", "query", "doc 1", "doc 2 / gold", "instruction", "answer"]);
    expect(Array.from(l.assign)).toEqual([0, 1, 1, 1, 2, 2, 3, 3, 3, 4, 5, 5]);
  });
  it("upstream layout: Query = [1, n_header) loses a token, docs shift by −1, the last doc token and the instruction are dropped", () => {
    const l = upstreamLayout(rag());
    expect(l.names).toEqual(["BOS", "Query", "Doc1", "Gold Doc", "Answer"]);
    // n_header = 3 (tokens 1–3 without BOS): Query [1,3), Doc1 [3,5), Gold [5,8), dropped 8, 9; Answer [10,12)
    expect(Array.from(l.assign)).toEqual([0, 1, 1, 2, 2, 3, 3, 3, -1, -1, 4, 4]);
  });
  it("upstream layout without a BOS: no off-by-one, but 'BOS' is just the first header token", () => {
    const l = upstreamLayout(rag({ bos: false }));
    expect(Array.from(l.assign)).toEqual([0, 1, 1, 1, 2, 2, 3, 3, 3, -1, 4, 4]);
  });
  it("uncovered prompt tokens become a template region instead of being dropped", () => {
    const t = rag();
    t.prompt.regions = t.prompt.regions.filter((r) => r.name !== "instruction");
    expect(offsetsLayout(t).names).toEqual(["BOS", "query", "doc 1", "doc 2 / gold", "template", "answer"]);
  });
});

describe("regionRollout over traces", () => {
  it("causal trace: rollout mass drains to BOS and the result warns", () => {
    const { spec, stationary: st } = regionRollout(
      rag({
        maps: Array(40)
          .fill(null)
          .map(() => causalMap()),
      }),
    );
    const m = spec.matrix.values;
    const R = spec.regions.length;
    for (let a = 0; a < R; a++) expect(m[a * R]).toBeGreaterThan(0.99);
    expect(st.get("region", 0)).toBe("BOS");
    expect(st.get("value", 0)).toBeGreaterThan(0.999);
    expect(spec.warnings?.join(" ")).toMatch(/causal/);
  });
  it("per-layer maps are the row-normalised pooled maps", () => {
    const { layers } = regionRollout(rag());
    // layer 0, query rows 1–3 of a uniform causal map: row i spreads 1/(i+1) over keys ≤ i.
    // BOS: 1/2 + 1/3 + 1/4 = 13/12; query: (1/2) + (2/3) + (3/4) = 23/12 → shares 13/36, 23/36
    const q = layers.filter((d: { layer: number; from: string }) => d.layer === 0 && d.from === "query").objects() as {
      to: string;
      value: number;
    }[];
    expect(q.find((r) => r.to === "BOS")!.value).toBeCloseTo(13 / 36, 7); // maps are float32
    expect(q.find((r) => r.to === "query")!.value).toBeCloseTo(23 / 36, 7);
  });
  it("upstream layout reproduces the paper's regions; region_sum is refused for it", () => {
    const up = regionRollout(rag(), { layout: "upstream" });
    expect(up.spec.regions).toEqual(["BOS", "Query", "Doc1", "Gold Doc", "Answer"]);
    expect(() => regionRollout(rag(), { layout: "upstream", source: "region_sum" })).toThrow(SettingsError);
  });
  it("region_sum: the region axis is trace.prompt.regions as the sampler fed them; overlaps and gaps are warned", () => {
    const R = 5; // query, doc 1, doc 2, gold, instruction
    const t = rag();
    t.model.numLayers = 1; // one region_sum map: a one-layer model (a missing layer is refused)
    const ident = Array.from({ length: R * R }, (_, x) => (x % (R + 1) === 0 ? 1 : 0));
    t.final.probes = probeMap(probe(0, "region_sum", [R, R], ident));
    const { spec } = regionRollout(t);
    expect(spec.regions).toEqual(["query", "doc 1", "doc 2", "gold", "instruction"]);
    expect(Array.from(spec.matrix.values)).toEqual(ident);
    expect(spec.warnings?.join(" ")).toMatch(/doc 2 and gold overlap/);
    expect(spec.warnings?.join(" ")).toMatch(/3 tokens lie in no recorded region/); // BOS and the two answer tokens
    t.final.probes = probeMap(probe(0, "region_sum", [4, 4], new Array(16).fill(0.25)));
    expect(() => regionRollout(t)).toThrow(/region count/);
    t.final.probes = new Map();
    expect(() => regionRollout(t)).toThrow(ProbeMissingError);
    expect(() => regionRollout(t)).toThrow(/blocks\.0\.attn\.pattern_mean[\s\S]*patternMean/);
  });
});

function causalMap(): number[] {
  const T = 12;
  return Array.from({ length: T * T }, (_, x) => (x % T <= Math.floor(x / T) ? 1 / (Math.floor(x / T) + 1) : 0));
}
