/**
 * Figure specs the analyses return. Where `payloads.ts` (the kernel ↔ widget
 * contract) already has a payload for the figure — absorption, QK, retrieval, rollout — the spec IS
 * that payload, widened with the extra numbers only the analysis knows (the QK angle/norm split, the
 * rollout's stationary vector). The two figures it lacks get their own versioned MIME types here:
 * the temporal drift heatmap and the floating-token-type shares.
 *
 * Type-only imports plus plain JSON: this module stays a leaf like `payloads.ts`.
 */
import type {
  AbsorptionPayload,
  EncodedArray,
  PayloadBase,
  QkLayerSummary,
  QkPayload,
  RetrievalPayload,
  RolloutPayload,
} from "./payloads.js";

export const MIME_DRIFT = "application/vnd.floatscope.drift.v1+json";
export const MIME_TOKEN_TYPES = "application/vnd.floatscope.token-types.v1+json";

/** Absorption rate per layer (paper Fig. 3); `mean`/`std` in percent like the paper's y axis. */
export type AbsorptionSpec = AbsorptionPayload & {
  series: (AbsorptionPayload["series"][number] & {
    /** Mean anchor-set size |S| per layer (upstream always 1 for MDMs). */
    anchors: number[];
  })[];
};

/** Per-layer QK summary plus the exact split of the floating columns' score advantage. */
export interface QkSummarySpec extends QkLayerSummary {
  /** Mean over rows i, floating keys f and other keys o of s_if − s_io (only cells visible to row i). */
  advantage: number;
  /** The part of `advantage` carried by cos θ (angle); angleTerm + normTerm = advantage exactly. */
  angleTerm: number;
  /** The part carried by ‖q‖‖k‖ (norm). */
  normTerm: number;
}

/** QK geometric decomposition (paper Fig. 4). */
export type QKSpec = Omit<QkPayload, "summary"> & {
  summary: QkSummarySpec[];
  /** "vector-mean" | "score-mean" | "head 15". */
  heads: string;
  rope: "pre" | "post";
  scaled: boolean;
};

/** Retrieval-head scores (paper Fig. 5) on a fixed [0, 1] colour scale. */
export type RetrievalSpec = RetrievalPayload & {
  /** Samples kept by the filter / seen, per model (same order as `models`). */
  kept: { model: string; kept: number; total: number }[];
};

/** Region rollout (paper Fig. rollout) plus the stationary vector and the row spread. */
export type RolloutSpec = RolloutPayload & {
  /** π with π = π·R̄, Σπ = 1 (the common row of a mixed rollout). */
  stationary: number[];
  /** max over columns of (max − min over rows) of R̄: ≈ 0 means every row is the same. */
  rowSpread: number;
  layout: "offsets" | "upstream";
};

/** Temporal drift heatmap (paper Fig. temporal): steps × positions with anchors hatched. */
export interface DriftSpec extends PayloadBase {
  kind: "drift";
  model: string;
  /** Layers averaged into `heat`. */
  layers: number[];
  /** Words describing the anchor rule. */
  rule: string;
  /** The `step` value of each row (upstream labelled rows by index). */
  steps: number[];
  /** Column means, [step, key]; NaN (missing code) for keys a step did not have. */
  heat: EncodedArray;
  /** 1 where (step, key) is an anchor, [step, key] (uint8). */
  anchors: EncodedArray;
  /** 1 where the key was still a mask token at that step, [step, key] (uint8). */
  masked: EncodedArray;
  /** Token strings of the final sequence (untrusted). */
  tokens: string[];
  /** Anchor tracks: position at birth and death, steps alive. */
  tracks: { id: number; birth: number; death: number; from: number; to: number; lifetime: number }[];
}

/** Shares of floating-token types per layer band (RQ2). */
export interface TokenTypesSpec extends PayloadBase {
  kind: "token-types";
  model: string;
  /** Type names in stacking order. */
  types: string[];
  bands: { band: string; layers: [number, number]; count: number; shares: number[] }[];
}

export type AnalysisSpec = AbsorptionSpec | QKSpec | RetrievalSpec | RolloutSpec | DriftSpec | TokenTypesSpec;
