/**
 * Attention interventions as graph inputs: what a policy may change in each layer's attention,
 * applied to the scores just before the softmax. Built only when asked for
 * (`BuildOptions.interventions`), so a graph without them is exactly the graph of before.
 *
 * Inputs (all fed by the engine, neutral when the caller gives nothing):
 *   intervention_key_hidden bool [batch, layer, head, seq]: key k is hidden from every query of
 *     that layer and head (true = hidden) — except from its own query row, see below.
 *   intervention_key_bias float [batch, layer, head, seq]: added to the scores of key k.
 *   intervention_self_only bool [batch, seq]: query row q sees only its own key (a dedicated sink).
 *
 * Rules, in this order: s' = s + bias; allowed' = allowed ∧ (¬hidden ∨ q = k) ∧ (¬selfOnly[q] ∨ q = k);
 * P = softmax(Where(allowed', s', finfo.min)). `allowed` (padding, and the causal mask) is only ever
 * narrowed, so no policy can let a query see a later key. A query always keeps its own key: a row
 * with nothing left to attend to would fall back to a uniform distribution over *all* keys (every
 * score equal to finfo.min), future ones included.
 */
import type { GraphBuilder } from "./onnx/builder.js";
import { DataType } from "./onnx/proto.js";

export const INTERVENTION_INPUTS = {
  keyHidden: "intervention_key_hidden",
  keyBias: "intervention_key_bias",
  selfOnly: "intervention_self_only",
} as const;

export interface InterventionGraph {
  /** Names of the graph inputs added, in order. */
  inputs: string[];
  /**
   * Layer l's allowed mask for the query rows [start, end) (all rows when not given),
   * [B,KV,G,Qc,K]: built per query chunk, so it is never larger than the chunk's scores.
   * `b`: the builder of the (sub)graph where start/end live (a Loop body); the per-layer parts
   * that depend on no chunk are made once, in the outer graph.
   */
  allowed(l: number, start?: string, end?: string, b?: GraphBuilder): string;
  /** Layer l's additive bias, [B,KV,G,1,K]. */
  layerBias(l: number): string;
}

/**
 * Add the intervention inputs and the per-layer mask/bias tensors.
 * @param allowed the graph's own allowed mask, [B,1,1,1|Q,K]
 * @param T the sequence length (int64 [1])
 */
export function emitInterventions(
  g: GraphBuilder,
  o: { allowed: string; T: string; KV: number; G: number; numLayers: number; numHeads: number },
): InterventionGraph {
  const hidden = g.input(INTERVENTION_INPUTS.keyHidden, DataType.BOOL, ["batch", o.numLayers, o.numHeads, "seq"]);
  const bias = g.input(INTERVENTION_INPUTS.keyBias, DataType.FLOAT, ["batch", o.numLayers, o.numHeads, "seq"]);
  const selfOnly = g.input(INTERVENTION_INPUTS.selfOnly, DataType.BOOL, ["batch", "seq"]);
  const r = g.range(g.constI64([0], []), g.reshape(o.T, g.constI64([], [0])), g.constI64([1], []));
  const eye = g.node("Equal", [g.unsqueeze(r, [1]), g.unsqueeze(r, [0])]); // [Q,K]: q = k
  const rowOk = g.node("Or", [g.not(g.unsqueeze(selfOnly, [1, 2, 4])), eye]); // [B,1,1,Q,K]
  const shared = g.and(o.allowed, rowOk); // no head axis: B·T² booleans for the whole graph
  const perLayer = (x: string, l: number) => {
    const xl = g.gather(x, g.constI64([l], []), 1); // [B,H,K]
    return g.reshape(xl, g.concat([g.constI64([-1, o.KV, o.G, 1]), o.T], 0)); // [B,KV,G,1,K]
  };
  const visible = new Map<number, string>();
  const biasCache = new Map<number, string>();
  return {
    inputs: [hidden, bias, selfOnly],
    allowed: (l, start, end, b = g) => {
      let v = visible.get(l);
      if (!v) {
        v = g.not(perLayer(hidden, l)); // [B,KV,G,1,K]
        visible.set(l, v);
      }
      const rows = (x: string, axis: number) => (start && end ? b.node("Slice", [x, start, end, b.constI64([axis])]) : x);
      return b.and(rows(shared, 3), b.node("Or", [v, rows(eye, 0)]));
    },
    layerBias: (l) => {
      let b = biasCache.get(l);
      if (!b) {
        b = perLayer(bias, l);
        biasCache.set(l, b);
      }
      return b;
    },
  };
}
