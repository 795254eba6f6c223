/**
 * What the analyses hand to their figures: numbers, labels and warnings only. Each type is the
 * `spec` field of an analysis result (kept under that name so notebooks' `show(result.spec)` and
 * `result.spec.steps` still work); `src/figures/<kind>.ts` turns it into the one figure
 * description both the static image and the widget draw. No encoding, no MIME types, no colours
 * here: those are decisions of the figure, not of the statistic.
 */

/** A row-major matrix (or tensor) at full precision; NaN = no value. */
export interface Grid {
  shape: number[];
  values: ArrayLike<number>;
}

/** Fields every figure input carries. */
export interface FigureDataBase {
  title?: string;
  /** Non-fatal remarks the figure draws (partial runs, degenerate inputs). */
  warnings: string[];
}

/** Absorption rate per layer (paper Fig. 3); `mean`/`std` in percent like the paper's y axis. */
export interface AbsorptionSpec extends FigureDataBase {
  kind: "absorption";
  /** e.g. "upstream: first-token; mean+3σ" (the rules of the models, joined when they differ). */
  rule: string;
  series: {
    model: string;
    /** "MDM" | "ARM". */
    paradigm: string;
    layers: number[];
    /** Percent, [layer]. */
    mean: number[];
    /** Population std over samples, [layer]. */
    std: number[];
    samples: number;
    /** Mean anchor-set size |S| per layer (upstream always 1 for MDMs). */
    anchors: number[];
  }[];
}

/** Per layer: mean cos and mean norm product at floating columns vs all others, and the exact split of the advantage. */
export interface QkSummarySpec {
  layer: number;
  cosFloating: number;
  cosOther: number;
  normFloating: number;
  normOther: number;
  /** Mean over rows i, floating keys f and other keys o of s_if − s_io (only cells visible to row i). */
  advantage: number;
  /** The part of `advantage` carried by cos θ (angle); angleTerm + normTerm = advantage exactly. */
  angleTerm: number;
  /** The part carried by ‖q‖‖k‖ (norm). */
  normTerm: number;
}

/** One layer's maps of the QK decomposition QK_ij = ‖q_i‖·‖k_j‖·cos θ_ij over the window. */
export interface QkLayerMaps {
  layer: number;
  /** Model head, or absent for a mean over heads. */
  head?: number;
  /** Absolute position of the first query/key of the window. */
  start: number;
  /** [query, key]; NaN where masked (causal j > i). */
  score: Grid;
  cos: Grid;
  normProduct: Grid;
  /** Floating key positions (absolute). */
  anchors: number[];
}

/** QK geometric decomposition (paper Fig. 4). */
export interface QKSpec extends FigureDataBase {
  kind: "qk";
  model: string;
  /** Token strings of the window. */
  tokens: string[];
  panels: QkLayerMaps[];
  summary: QkSummarySpec[];
  /** "vector-mean" | "score-mean" | "head 15". */
  heads: string;
  rope: "pre" | "post";
  scaled: boolean;
}

/** Retrieval-head scores (paper Fig. 5), one [layer, head] matrix per model. */
export interface RetrievalSpec extends FigureDataBase {
  kind: "retrieval";
  models: { model: string; layers: number[]; scores: Grid; samples: number }[];
  /** "raw" or "max-normalised". */
  normalisation: string;
  /** Samples kept by the filter / seen, per model (same order as `models`). */
  kept: { model: string; kept: number; total: number }[];
}

/** Region rollout R̄ (rows: from region, columns: to region) plus the stationary vector and the row spread. */
export interface RolloutSpec extends FigureDataBase {
  kind: "rollout";
  model: string;
  regions: string[];
  /** [region, region]. */
  matrix: Grid;
  /** Per-layer region maps before rollout, [layer, region, region]. */
  perLayer?: Grid;
  samples: number;
  /** Free text, e.g. "gold doc at 5 of 10". */
  condition?: string;
  /** π with π = π·R̄, Σπ = 1 (the common row of a mixed rollout). */
  stationary: number[];
  /** max over columns of (max − min over rows) of R̄: ≈ 0 means every row is the same. */
  rowSpread: number;
  layout: "offsets" | "upstream";
}

/** Temporal drift heatmap (paper Fig. temporal): steps × positions with the anchors marked. */
export interface DriftSpec extends FigureDataBase {
  kind: "drift";
  model: string;
  /** Layers averaged into `heat`. */
  layers: number[];
  /** Words describing the anchor rule. */
  rule: string;
  /** The `step` value of each row. */
  steps: number[];
  /** Column means, [step, key]; NaN for keys a step did not have. */
  heat: Grid;
  /** 1 where (step, key) is an anchor, [step, key]. */
  anchors: Grid;
  /** 1 where the key was still a mask token at that step, [step, key]. */
  masked: Grid;
  /** Token strings of the final sequence. */
  tokens: string[];
  /** Anchor tracks: position at birth and death, steps alive. */
  tracks: { id: number; birth: number; death: number; from: number; to: number; lifetime: number }[];
}

/** Shares of floating-token types per layer band (RQ2). */
export interface TokenTypesSpec extends FigureDataBase {
  kind: "token-types";
  model: string;
  /** Type names in stacking order. */
  types: string[];
  bands: { band: string; layers: [number, number]; count: number; shares: number[] }[];
}

/** A metric as a function of the gold-document position (lost-in-the-middle sweep), one line per model. */
export interface DistractorSpec extends FigureDataBase {
  kind: "distractor";
  /** e.g. "Accuracy (%)" or "gold-doc rollout share". */
  metric: string;
  /** x values (1-based gold-document positions, or e.g. the number of distractors with `xTitle`). */
  positions: number[];
  series: { model: string; values: number[]; lo?: number[]; hi?: number[] }[];
  /** x-axis title (default "Gold document position"). */
  xTitle?: string;
}

/**
 * Anchors vs the masked/unmasked frontier (analysis/frontier.ts): per layer, the share of anchors
 * within `radius` positions of the frontier and of the just-unmasked tokens, each beside its exact
 * chance share; and one trace's step × position strip at one layer.
 */
export interface FrontierSpec extends FigureDataBase {
  kind: "frontier";
  model: string;
  /** Words describing the anchor rule. */
  rule: string;
  radius: number;
  /** Traces pooled into the per-layer series. */
  traces: number;
  layers: number[];
  /** Share of anchors within the radius of the frontier, [layer], with its 95 % interval over traces. */
  within: number[];
  withinLo: number[];
  withinHi: number[];
  /** The chance share (uniform over candidate keys), [layer]. */
  chance: number[];
  /** The same against the positions unmasked at the step, and its chance share. */
  unmasked: number[];
  unmaskedChance: number[];
  strip: {
    sample: string;
    layer: number;
    /** The `step` value of each row. */
    steps: number[];
    /** [step, key]: 0 prompt, 1 decoded, 2 masked, 3 unmasked at this step; NaN where the canvas is shorter. */
    state: Grid;
    /** [step, key]: 1 at the layer's anchors. */
    anchors: Grid;
    tokens: string[];
  };
}

export type AnalysisSpec =
  AbsorptionSpec | QKSpec | RetrievalSpec | RolloutSpec | DriftSpec | TokenTypesSpec | DistractorSpec | FrontierSpec;
