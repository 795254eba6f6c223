/**
 * One query chunk of a decomposed layer's attention, emitted into `b` (the graph, or a Loop body):
 * scores [B,KV,G,Qc,K] = (q/√d) · kᵀ for the chunk's rows [start, end) (all rows when not given),
 * the masked softmax, the chunk's probe partials, and its context rows P·V [B,KV,G,Qc,hd].
 *
 * GQA without repeating K/V: q is grouped per kv head [B,KV,G,Qc,d] and k broadcast over the group
 * [B,KV,1,d,K], so query head h = kvHead·G + g reads kv head ⌊h / G⌋ (HF's repeat_interleave).
 */
import type { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import { chunkProbes, type ChunkPartials } from "../probes.js";
import type { AttentionRun } from "./attention.js";
import type { BuildContext } from "./context.js";

export interface ChunkResult {
  partial: ChunkPartials;
  /** P·V for the chunk's rows, [B,KV,G,Qc,hd] in the compute type. */
  context: string;
}

export function attendChunk(
  ctx: BuildContext,
  run: AttentionRun,
  b: GraphBuilder,
  l: number,
  q: { qc: string; kT5: string; v5: string; start?: string; end?: string },
): ChunkResult {
  const { start, end } = q;
  const { allowed, fill, anyPadding, interventions: iv } = run.mask;
  let allowedC = start && end && ctx.spec.causal ? b.node("Slice", [allowed, start, end, b.constI64([3])]) : allowed;
  if (iv) allowedC = iv.allowed(l, start, end, b); // built for this chunk's rows only
  let scores = ctx.toF32(b.matmul(q.qc, q.kT5), b);
  if (iv) scores = b.add(scores, iv.layerBias(l));
  // Nothing to mask (bidirectional, no padding in this run, no interventions): skip the Where,
  // a full pass over every [B, H, Qc, K] score tensor (8 % of a forward at T 1024).
  const masked = (bb: GraphBuilder, sc: string) => bb.softmax(bb.where(allowedC, sc, fill), -1);
  const p5 = anyPadding
    ? b.ifElse(
        anyPadding,
        (bb) => [[masked(bb, scores), DataType.FLOAT]],
        (bb) => [[bb.softmax(scores, -1), DataType.FLOAT]],
      )[0]
    : masked(b, scores);
  return { partial: chunkProbes(b, run.probes, l, { p5, start, end }), context: b.matmul(ctx.toCT(p5, b), q.v5) };
}

/**
 * A decomposed layer's attention in `count` unrolled chunks of ceil(T / count) rows (one chunk: the
 * whole query axis). Each chunk's start waits for the previous chunk's results, so ORT runs them
 * one after another and one chunk's scores are alive at a time. Returns the contexts [B,KV,G,T,hd].
 */
export function unrolledChunks(
  ctx: BuildContext,
  run: AttentionRun,
  l: number,
  q5: string,
  kT5: string,
  v5: string,
  count: number,
): { context: string; partials: ChunkPartials[] } {
  const { g, T } = ctx;
  const partials: ChunkPartials[] = [];
  const contexts: string[] = [];
  let after: string[] = []; // values of the previous chunk that the next one must wait for
  for (let c = 0; c < count; c++) {
    let qc = q5,
      start: string | undefined,
      end: string | undefined;
    if (count > 1) {
      [start, end] = run.chunks.bounds(run.chunks.evenRows(), T, count, c, after);
      qc = g.node("Slice", [q5, start, end, g.constI64([3])]);
    }
    const { partial, context } = attendChunk(ctx, run, g, l, { qc, kT5, v5, start, end });
    partials.push(partial);
    contexts.push(context);
    after = [contexts[c], ...partial.values];
  }
  return { context: contexts.length === 1 ? contexts[0] : g.concat(contexts, 3), partials };
}
