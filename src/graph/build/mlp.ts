/**
 * The SwiGLU MLP block, residual included: x + down(silu(gate(h)) · up(h)), h = RMSNorm(x), in row
 * chunks of the [B·T, D] residual stream (chunks.ts).
 *
 * Every op of the block is per row, so chunk c computes rows [c·m, (c+1)·m) ∩ [0, N) on its own and
 * the chunks are concatenated back: [rows, ffn] intermediates instead of [N, ffn]. As for the
 * attention chunks, an empty slice of the previous chunk's Shape orders chunk c after chunk c − 1.
 * The chunks are unrolled into a fixed number of slots (a Loop was measured 4 % slower; docs/engine.md).
 */
import { autoMlpRows, mlpSlots } from "../chunks.js";
import type { BlockWeights } from "../spec.js";
import type { BuildContext } from "./context.js";
import { linear } from "./linear.js";
import { rmsNorm } from "./norm.js";
import type { RowChunks } from "./row-chunks.js";

/** Rows per MLP chunk in this run, [1] int64, and the N = B·T rows they split (made once per run). */
export interface MlpRows {
  slots: number;
  rows?: { chunk: string; total: string };
}

export function mlpRows(ctx: BuildContext): MlpRows {
  return { slots: mlpSlots(ctx.spec, ctx.chunking, ctx.budget) };
}

/** The MLP of one block on rows xc [rows, D], residual added. */
function swiGlu(ctx: BuildContext, w: BlockWeights, xc: string): string {
  const { g, D } = ctx;
  const F = ctx.spec.intermediateSize;
  const h = rmsNorm(ctx, xc, w.mlpNorm);
  const gate = linear(ctx, h, w.gate, F, D);
  const up = linear(ctx, h, w.up, F, D);
  return g.add(xc, linear(ctx, g.mul(g.mul(gate, g.sigmoid(gate)), up), w.down, D, F));
}

/** x + MLP(x) for one block, x the residual stream [B·T, D]. */
export function mlpBlock(ctx: BuildContext, m: MlpRows, chunks: RowChunks, w: BlockWeights, x: string): string {
  const { g } = ctx;
  if (m.slots === 1) return swiGlu(ctx, w, x);
  if (!m.rows) {
    const total = g.mul(ctx.B, ctx.T);
    const even = g.div(g.add(total, g.constI64([m.slots - 1])), g.constI64([m.slots]));
    const auto = () => g.node("Max", [even, g.node("Min", [total, g.constI64([autoMlpRows(ctx.spec, ctx.budget)])])]);
    m.rows = { chunk: ctx.chunking === "auto" ? auto() : even, total };
  }
  const parts: string[] = [];
  for (let c = 0; c < m.slots; c++) {
    const [start, end] = chunks.bounds(m.rows.chunk, m.rows.total, m.slots, c, c > 0 ? [parts[c - 1]] : []);
    parts.push(swiGlu(ctx, w, g.node("Slice", [x, start, end, g.constI64([0])])));
  }
  return g.concat(parts, 0);
}
