/**
 * One small, deterministic input per figure kind, shaped as the analyses return them (numbers,
 * labels, warnings): the pixel snapshots and the widget/static comparison draw these. The values
 * are formulas, not model output, so a changed picture can only come from a changed figure module
 * or renderer.
 */
import type {
  AbsorptionSpec,
  DistractorSpec,
  DriftSpec,
  FrontierSpec,
  QKSpec,
  RetrievalSpec,
  RolloutSpec,
  TokenTypesSpec,
} from "../../src/analysis/figure-data.js";
import type { HeatmapSpec } from "../../src/protocol/heatmap.js";

const TOKENS = ["<s>", "The", " capital", " of", " France", " is", "<mask>", "<mask>", ".", "\n", "Answer", ":"];

function grid(rows: number, cols: number, f: (r: number, c: number) => number) {
  const values = new Float64Array(rows * cols);
  for (let r = 0; r < rows; r++) for (let c = 0; c < cols; c++) values[r * cols + c] = f(r, c);
  return { shape: [rows, cols], values };
}

export const absorption: AbsorptionSpec = {
  kind: "absorption",
  rule: "upstream: first-token; upstream: rulli-eps (ε=3, mean scale), fallback top-1",
  warnings: ["tiny-llada: run stopped at step 6 of 8; statistics cover the finished steps"],
  series: [
    {
      model: "tiny-llama",
      paradigm: "ARM",
      layers: [0, 1, 2, 3, 4, 5],
      mean: [5, 40, 72, 80, 83, 85],
      std: [2, 6, 5, 4, 4, 3],
      samples: 8,
      anchors: [1, 1, 1, 1, 1, 1],
    },
    {
      model: "tiny-llada",
      paradigm: "MDM",
      layers: [0, 1, 2, 3, 4, 5],
      mean: [3, 12, 25, 31, 28, 22],
      std: [1, 4, 6, 7, 6, 5],
      samples: 8,
      anchors: [1, 2, 2, 3, 2, 2],
    },
  ],
};

export const qk: QKSpec = {
  kind: "qk",
  model: "tiny-llada",
  tokens: TOKENS.slice(0, 8),
  heads: "score-mean",
  rope: "post",
  scaled: true,
  warnings: [],
  panels: [1, 4].map((layer) => ({
    layer,
    start: 0,
    score: grid(8, 8, (r, c) => (c === 0 ? 4 : Math.sin(r + c + layer) * 2)),
    cos: grid(8, 8, (r, c) => (c === 0 ? 0.4 : Math.cos(r * c + layer) * 0.2)),
    normProduct: grid(8, 8, (r, c) => 4 + (c === 0 ? 2 : 0) + 0.1 * r),
    anchors: [0],
  })),
  summary: [
    { layer: 1, cosFloating: 0.38, cosOther: 0.02, normFloating: 6, normOther: 4.3, advantage: 3.1, angleTerm: 2.2, normTerm: 0.9 },
    { layer: 4, cosFloating: 0.31, cosOther: -0.03, normFloating: 6.1, normOther: 4.5, advantage: 2.6, angleTerm: 1.4, normTerm: 1.2 },
  ],
};

export const retrieval: RetrievalSpec = {
  kind: "retrieval",
  normalisation: "max-normalised",
  warnings: [],
  kept: [
    { model: "tiny-llada", kept: 6, total: 8 },
    { model: "tiny-llama", kept: 7, total: 8 },
  ],
  models: [
    { model: "tiny-llada", layers: [0, 1, 2, 3, 4, 5], scores: grid(6, 4, (l, h) => ((l * 4 + h) % 7) / 6), samples: 6 },
    { model: "tiny-llama", layers: [0, 1, 2, 3, 4, 5], scores: grid(6, 4, (l, h) => ((l + 2 * h) % 5) / 4), samples: 7 },
  ],
};

export const rollout: RolloutSpec = {
  kind: "rollout",
  model: "tiny-llama",
  regions: ["BOS", "query", "doc 1", "gold", "Answer"],
  matrix: grid(5, 5, (r, c) => (c > r ? 0 : r === 0 ? 1 : c === 0 ? 0.5 : 0.5 / r)),
  samples: 12,
  condition: "gold doc at 2 of 2",
  stationary: [0.6, 0.1, 0.1, 0.1, 0.1],
  rowSpread: 0.5,
  layout: "offsets",
  warnings: [],
};

export const drift: DriftSpec = {
  kind: "drift",
  model: "tiny-llada",
  layers: [5],
  rule: "c_j > mean + 3·std (population), per step and layer",
  steps: [0, 1, 2, 3, 4, 5],
  heat: grid(6, 12, (s, j) => (j > 5 + s ? NaN : j === (s % 3) + 6 ? 0.5 : 0.04 + 0.01 * ((s * j) % 5))),
  anchors: grid(6, 12, (s, j) => (j === (s % 3) + 6 && j <= 5 + s ? 1 : 0)),
  masked: grid(6, 12, (s, j) => (j >= 6 + s ? 1 : 0)),
  tokens: TOKENS,
  tracks: [{ id: 0, birth: 1, death: 6, from: 7, to: 8, lifetime: 5 }],
  warnings: [],
};

export const tokenTypes: TokenTypesSpec = {
  kind: "token-types",
  model: "tiny-llada",
  types: ["special", "punctuation", "stopword", "content"],
  bands: [
    { band: "shallow", layers: [0, 1], count: 40, shares: [0.5, 0.3, 0.15, 0.05] },
    { band: "middle", layers: [2, 3], count: 38, shares: [0.3, 0.3, 0.2, 0.2] },
    { band: "deep", layers: [4, 5], count: 41, shares: [0.1, 0.2, 0.2, 0.5] },
  ],
  warnings: [],
};

export const distractor: DistractorSpec = {
  kind: "distractor",
  metric: "Accuracy (%)",
  positions: [1, 2, 3, 4, 5],
  series: [
    { model: "tiny-llada (MDM)", values: [62, 55, 51, 54, 60], lo: [55, 48, 44, 47, 53], hi: [69, 62, 58, 61, 67] },
    { model: "tiny-llama (ARM)", values: [58, 45, 40, 44, 57], lo: [51, 38, 33, 37, 50], hi: [65, 52, 47, 51, 64] },
  ],
  warnings: [],
};

export const frontier: FrontierSpec = {
  kind: "frontier",
  model: "tiny-llada",
  rule: "top-k (k=1)",
  radius: 2,
  traces: 8,
  layers: [0, 1, 2, 3, 4, 5],
  within: [0.8, 0.6, 0.45, 0.3, 0.25, 0.2],
  withinLo: [0.7, 0.5, 0.35, 0.2, 0.15, 0.1],
  withinHi: [0.9, 0.7, 0.55, 0.4, 0.35, 0.3],
  chance: [0.35, 0.35, 0.35, 0.35, 0.35, 0.35],
  unmasked: [0.6, 0.4, 0.3, 0.2, 0.1, 0.1],
  unmaskedChance: [0.3, 0.3, 0.3, 0.3, 0.3, 0.3],
  // prompt 0–5; the answer 6–11 decoded left to right, one slot per step; the anchor walks one behind the front
  strip: {
    sample: "0",
    layer: 0,
    steps: [0, 1, 2, 3, 4, 5],
    state: grid(6, 12, (s, j) => (j < 6 ? 0 : j < 6 + s ? 1 : j === 6 + s ? 3 : 2)),
    anchors: grid(6, 12, (s, j) => (j === 5 + s ? 1 : 0)),
    tokens: TOKENS,
  },
  warnings: [],
};

export const heatmapSpec: HeatmapSpec = {
  kind: "heatmap",
  title: "attention received",
  subtitle: "head mean, final step",
  xTitle: "key",
  yTitle: "layer",
  valueLabel: "received",
  xLabels: TOKENS.slice(0, 6),
  yLabels: ["0", "1", "2"],
  values: [
    [0.5, 0.1, 0.1, 0.1, 0.1, 0.1],
    [0.7, 0.05, 0.05, 0.1, 0.05, 0.05],
    [0.9, 0.02, 0.02, 0.02, 0.02, 0.02],
  ],
  colormap: "viridis",
  domain: [0, 1],
};

/** Every figure kind with a static description, by registry key. */
export const FIGURE_INPUTS = {
  absorption,
  qk,
  retrieval,
  rollout,
  drift,
  "token-types": tokenTypes,
  distractor,
  frontier,
  heatmap: heatmapSpec,
} as const;
