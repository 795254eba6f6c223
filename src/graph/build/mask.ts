/**
 * Which keys each query may attend to in this run, made once and shared by every layer:
 * `allowed` [B, 1, 1, Q|1, K] (key k is real, and for a causal model k ≤ q; with a key/value cache,
 * k ≤ P + q over the P cached and Q new keys), the fill value for
 * the others, and the attention interventions' narrowing of it (../interventions.ts).
 */
import { emitInterventions, type InterventionGraph } from "../interventions.js";
import { DataType } from "../onnx/proto.js";
import type { BuildContext } from "./context.js";

/** float32 finfo.min: HF's fill value for masked scores (−inf would turn fully masked rows into NaN). */
export const F32_MIN = -3.4028234663852886e38;

export interface AttentionMask {
  /** [B,1,1,1,K] (bidirectional) or [B,1,1,Q,K] (causal). */
  allowed: string;
  /** F32_MIN as a float scalar. */
  fill: string;
  /**
   * bool []: some key of this run is padding. Only a bidirectional graph without interventions
   * can skip the mask when there is none (a causal one always hides future keys); undefined otherwise.
   */
  anyPadding?: string;
  interventions?: InterventionGraph;
}

export function attentionMask(ctx: BuildContext): AttentionMask {
  const { g, spec, T } = ctx;
  let allowed = g.unsqueeze(ctx.mask, [1, 2, 3]); // [B,1,1,1,K]
  if (ctx.cache) {
    // new row i is column P + i of the cached keys (kv-cache.ts)
    allowed = g.and(allowed, g.not(ctx.cache.future()));
  } else if (spec.causal) {
    const r = g.range(g.constI64([0], []), g.reshape(T, g.constI64([], [0])), g.constI64([1], []));
    const future = g.greater(g.unsqueeze(r, [0]), g.unsqueeze(r, [1])); // [Q,K]: k > q
    allowed = g.and(allowed, g.not(future));
  }
  const fill = g.constF32([F32_MIN], []);
  const anyPadding =
    !spec.causal && !ctx.options.interventions
      ? g.not(g.cast(g.node("ReduceMin", [g.cast(ctx.mask, DataType.INT32)], { keepdims: 0 }), DataType.BOOL))
      : undefined;
  let interventions: InterventionGraph | undefined;
  if (ctx.options.interventions) {
    interventions = emitInterventions(g, { allowed, T, KV: ctx.KV, G: ctx.G, numLayers: spec.numLayers, numHeads: ctx.H });
    ctx.inputNames.push(...interventions.inputs);
  }
  return { allowed, fill, anyPadding, interventions };
}
