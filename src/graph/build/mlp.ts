/**
 * The SwiGLU MLP block, residual included: x + down(silu(gate(h)) · up(h)), h = RMSNorm(x), in row
 * chunks of the [B·T, D] residual stream (chunks.ts).
 *
 * Every op of the block is per row, so chunk c computes rows [c·m, (c+1)·m) ∩ [0, N) on its own and
 * the chunks are concatenated back: [rows, ffn] intermediates instead of [N, ffn]. As for the
 * attention chunks, an empty slice of the previous chunk's Shape orders chunk c after chunk c − 1.
 * The chunks are unrolled into a fixed number of slots (a Loop was measured 4 % slower; docs/engine.md),
 * except when the block's weights run as MatMulNBits (kept-quantised GGUF blocks): then the chunks are
 * an ONNX Loop, so each weight feeds one node. onnxruntime prepacks a constant weight once per node
 * that reads it, single-threaded, so 16 unrolled slots repacked every MLP weight 16 times: an 8B-shaped
 * Q4_0 GGUF's session took 100.6 s of CPU to build, 7–10 s with the Loop (docs/engine.md, "Opening a
 * large quantised model").
 */
import { autoMlpRows, mlpSlots } from "../chunks.js";
import type { BlockWeights } from "../spec.js";
import type { BuildContext } from "./context.js";
import type { GraphBuilder } from "../onnx/builder.js";
import { linear, runsAsNBits } from "./linear.js";
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

/** The MLP of one block on rows xc [rows, D], residual added; emitted into `b`. */
function swiGlu(ctx: BuildContext, w: BlockWeights, xc: string, b: GraphBuilder = ctx.g): string {
  const { D } = ctx;
  const F = ctx.spec.intermediateSize;
  const h = rmsNorm(ctx, xc, w.mlpNorm, b);
  const gate = linear(ctx, h, w.gate, F, D, undefined, b);
  const up = linear(ctx, h, w.up, F, D, undefined, b);
  return b.add(xc, linear(ctx, b.mul(b.mul(gate, b.sigmoid(gate)), up), w.down, D, F, undefined, b));
}

/**
 * The MLP's row chunks as a Loop: iteration i computes rows [i·m, (i+1)·m) ∩ [0, N) exactly as an
 * unrolled chunk does; the Loop stacks equal shapes only, so a short last chunk is padded to m rows
 * and the padding is cut off after the loop (as in attention-loop.ts).
 */
function mlpLoop(ctx: BuildContext, rows: { chunk: string; total: string }, w: BlockWeights, x: string): string {
  const { g, D } = ctx;
  const { chunk, total } = rows;
  const one = g.constI64([1]);
  const trips = g.reshape(g.div(g.sub(g.add(total, chunk), one), chunk), g.constI64([], [0])); // ceil(N / m)
  const axis0 = g.constI64([0]);
  const zeros2 = g.constI64([0, 0]);
  const loop = g.loop(trips, [], (b, it) => {
    const start = b.mul(b.reshape(it, one), chunk);
    const end = b.node("Min", [b.add(start, chunk), total]);
    const y = swiGlu(ctx, w, b.node("Slice", [x, start, end, axis0]), b);
    // pads [0, 0 | m − rows of this chunk, 0]: the end of the row axis only
    const pads = b.concat([zeros2, b.sub(b.add(start, chunk), end), axis0], 0);
    return { carried: [], scans: [[b.node("Pad", [y, pads]), ctx.CT]] };
  });
  // [n, m, D] → [n·m, D] → the first N rows
  return g.node("Slice", [g.reshape(loop.scans[0], g.constI64([-1, D])), axis0, total, axis0]);
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
  const F = ctx.spec.intermediateSize;
  if (runsAsNBits(ctx, w.gate, F, ctx.D) || runsAsNBits(ctx, w.up, F, ctx.D) || runsAsNBits(ctx, w.down, ctx.D, F)) {
    return mlpLoop(ctx, m.rows, w, x);
  }
  const parts: string[] = [];
  for (let c = 0; c < m.slots; c++) {
    const [start, end] = chunks.bounds(m.rows.chunk, m.rows.total, m.slots, c, c > 0 ? [parts[c - 1]] : []);
    parts.push(swiGlu(ctx, w, g.node("Slice", [x, start, end, g.constI64([0])])));
  }
  return g.concat(parts, 0);
}
