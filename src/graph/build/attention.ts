/**
 * One layer's self-attention, residual included: RMSNorm → q/k/v projections (+ bias) → RoPE →
 * attention → o_proj. The attention runs one of three ways (chunks.ts, docs/engine.md):
 *  - fused (attention-fused.ts): `fusedAttention` on and no probe of the layer reads probabilities;
 *  - looped (attention-loop.ts): under "auto", a Loop over query chunks, unless the layer records a
 *    full map; without q probes it also norms and projects its queries per chunk, so the whole
 *    [B, T, H, d] q (and its scaled, transposed copy) is never alive beside K and V;
 *  - unrolled (attention-chunk.ts): a chunk count n, or one chunk (a full-map layer under "auto").
 */
import type { GraphBuilder } from "../onnx/builder.js";
import { emitQkProbes, finishProbes, needsProbabilities, probeContext, recordsMap, recordsStates, type ProbeContext } from "../probes.js";
import type { BlockWeights } from "../spec.js";
import { unrolledChunks } from "./attention-chunk.js";
import { fusedAttention } from "./attention-fused.js";
import { attentionLoop, type ChunkQueries } from "./attention-loop.js";
import type { BuildContext } from "./context.js";
import { linear } from "./linear.js";
import { attentionMask, type AttentionMask } from "./mask.js";
import { rmsNorm } from "./norm.js";
import { ropeTables, rotate, type RopeTables } from "./rope.js";
import { rowChunks, type RowChunks } from "./row-chunks.js";

/** What every layer's attention shares in a run (made once, in the outer graph). */
export interface AttentionRun {
  mask: AttentionMask;
  rope: RopeTables;
  chunks: RowChunks;
  probes: ProbeContext;
  /** 1/√d in the compute type. */
  qScale: string;
  /** Fused attention is possible in this graph (f32, no interventions). */
  fuse: boolean;
  /** A causal graph's fused-attention bias [B, 1, T, T], made by the first fused layer. */
  causalBias?: string;
}

/** The run's masks, RoPE tables, chunk sizes and probe inputs (adds their graph inputs). */
export function attentionRun(ctx: BuildContext): AttentionRun {
  const mask = attentionMask(ctx);
  const rope = ropeTables(ctx);
  const { ctx: probes, inputs } = probeContext(ctx.g, ctx.spec, ctx.req, ctx.B, ctx.T);
  ctx.inputNames.push(...inputs);
  const fuse = (ctx.options.fusedAttention ?? false) && !ctx.f16 && !ctx.options.interventions;
  const qScale = ctx.toCT(ctx.g.constF32([1 / Math.sqrt(ctx.hd)], []));
  return { mask, rope, chunks: rowChunks(ctx), probes, qScale, fuse };
}

/** Queries of rows of x [B·rows, D] (or all rows): pre-/post-RoPE [B,rows,H,hd] and (q/√d) grouped per kv head [B,KV,G,rows,hd]. */
function projectQueries(ctx: BuildContext, run: AttentionRun, w: BlockWeights, xRows: string, b: GraphBuilder, tables: RopeTables) {
  const { B, H, KV, G, D, hd } = ctx;
  const bias = ctx.spec.qkvBias ? w.qBias : undefined;
  const q = b.reshape(linear(ctx, xRows, w.q, H * hd, D, bias, b), b.concat([B, b.constI64([-1, H, hd])], 0)); // [B,rows,H,hd]
  const qRot = rotate(ctx, q, tables, b);
  const q5 = b.reshape(b.transpose(b.mul(qRot, run.qScale), [0, 2, 1, 3]), b.concat([B, b.constI64([KV, G, -1, hd])], 0));
  return { q, qRot, q5 };
}

/** x + attention(x) for layer l, x the residual stream [B·T, D]. */
export function attentionBlock(ctx: BuildContext, run: AttentionRun, l: number, w: BlockWeights, x: string): string {
  const { g, req, T, D, H, KV, hd } = ctx;
  const h = rmsNorm(ctx, x, w.attnNorm);
  const bias = (b?: string) => (ctx.spec.qkvBias ? b : undefined);
  const fused = run.fuse && !needsProbabilities(req, l);
  const looping = ctx.chunking === "auto" && !recordsMap(req, l) && !fused;
  const qPerChunk = looping && !recordsStates(req, l);
  const full = qPerChunk ? undefined : projectQueries(ctx, run, w, h, g, run.rope);
  const k = g.reshape(linear(ctx, h, w.k, KV * hd, D, bias(w.kBias)), ctx.dims([-1, T, KV, hd]));
  const v = g.reshape(linear(ctx, h, w.v, KV * hd, D, bias(w.vBias)), ctx.dims([-1, T, KV, hd]));
  const kRot = rotate(ctx, k, run.rope);
  if (full) emitQkProbes(g, req, l, { q: full.q, k, qRot: full.qRot, kRot }, ctx.toF32);
  // with a key/value cache the rows attend over the cached keys and values too (kv-cache.ts)
  const kv = ctx.cache ? ctx.cache.append(l, kRot, v) : { keys: kRot, values: v };
  let o: string;
  if (fused) o = fusedAttention(ctx, run, full!.qRot, kv.keys, kv.values);
  else {
    // rows [start, end) of every batch row: slices of the projected queries, or (per chunk) of x
    // [B, T, D], normed, projected and rotated with those rows of cos and sin
    const x3 = qPerChunk ? g.reshape(x, ctx.dims([-1, T, D])) : undefined;
    const queries: ChunkQueries = (b, start, end) => {
      const rows = (t: string, axis: number) => b.node("Slice", [t, start, end, b.constI64([axis])]);
      if (!x3) return rows(full!.q5, 3);
      const xRows = b.reshape(rows(x3, 1), b.constI64([-1, D]));
      const tables = { cos: rows(run.rope.cos, 1), sin: rows(run.rope.sin, 1) };
      return projectQueries(ctx, run, w, rmsNorm(ctx, xRows, w.attnNorm, b), b, tables).q5;
    };
    o = decomposedAttention(ctx, run, l, { q5: full?.q5, queries, kRot: kv.keys, v: kv.values, looping });
  }
  return g.add(x, linear(ctx, o, w.o, D, H * hd));
}

/** Scores, softmax, probes and P·V as separate ops (looped or unrolled chunks): context rows [B·T, H·d]. */
function decomposedAttention(
  ctx: BuildContext,
  run: AttentionRun,
  l: number,
  a: { q5?: string; queries: ChunkQueries; kRot: string; v: string; looping: boolean },
): string {
  const { g, T, H, hd } = ctx;
  // scores [B,KV,G,Q,K] = (q/√d) · kᵀ, with q grouped per kv head and k broadcast over the group
  const kT5 = g.unsqueeze(g.transpose(a.kRot, [0, 2, 3, 1]), [2]); // [B,KV,1,hd,K]
  const v5 = g.unsqueeze(g.transpose(a.v, [0, 2, 1, 3]), [2]); // [B,KV,1,K,hd]
  const count = ctx.chunking === "auto" ? 1 : run.chunks.slots;
  const { context, partials } = a.looping
    ? attentionLoop(ctx, run, l, a.queries, kT5, v5) // [B, T, H·d]
    : unrolledChunks(ctx, run, l, a.q5!, kT5, v5, count); // [B,KV,G,T,hd]
  const firstOutput = g.outputs.length;
  finishProbes(g, run.probes, l, partials);
  // Make this layer's output projection wait for its probes. Otherwise ORT may schedule the
  // probe nodes (whose results only feed graph outputs) after later layers, keeping every
  // layer's [B, H, T, T] probabilities alive at once (measured: +800 MB at T 2048, 4 layers).
  // The dependency is an empty slice of each probe's Shape, concatenated into a Reshape target.
  const barrier = g.outputs.slice(firstOutput).map((out) => g.slice(g.shape(out.name), 0, 0, 0));
  const oShape = barrier.length ? g.concat([...barrier, g.constI64([-1, H * hd])], 0) : g.constI64([-1, H * hd]);
  if (a.looping) return g.reshape(context, oShape);
  return g.reshape(g.transpose(g.reshape(context, ctx.dims([-1, H, T, hd])), [0, 2, 1, 3]), oShape);
}
