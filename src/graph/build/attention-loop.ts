/**
 * A decomposed layer's attention as an ONNX Loop over query chunks (under "auto"; chunks.ts), so the
 * graph does not fix how many chunks a run has. Iteration i computes rows [i·r', (i+1)·r') ∩ [0, T)
 * exactly as an unrolled chunk does.
 *
 * What the Loop carries and stacks comes from the probe table (graph/probes.ts `GRAPH_PROBES`): sums
 * over queries are loop-carried (0 + c₀ + c₁ + …: the unrolled order); per-query results (the context
 * rows, and probes whose values are per query row) are scan outputs, which onnxruntime stacks only
 * when every iteration has the same shape, so a short last chunk is padded to r' rows and the
 * padding is sliced off after the loop. (A layer recording a full map never loops.)
 */
import type { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import { layerPartials, type ChunkPartials } from "../probes.js";
import { attendChunk } from "./attention-chunk.js";
import type { AttentionRun } from "./attention.js";
import type { BuildContext } from "./context.js";

/** The query rows [start, end) of every batch row, as (q/√d) grouped per kv head [B,KV,G,rows,hd]. */
export type ChunkQueries = (b: GraphBuilder, start: string, end: string) => string;

/** Returns the context as [B, T, H·d] and the layer's partials (one entry: the loop's totals). */
export function attentionLoop(
  ctx: BuildContext,
  run: AttentionRun,
  l: number,
  queries: ChunkQueries,
  kT5: string,
  v5: string,
): { context: string; partials: ChunkPartials[] } {
  const { g, T, H, hd, CT } = ctx;
  const { rows, trips } = run.chunks.loopSize();
  const partials = layerPartials(ctx.req, l);
  // the partials' declarations, split: sums are carried, per-query rows are stacked
  const sums: { i: number; zeros: (number | string)[] }[] = [];
  const perQuery: { i: number; rank: number; dtype: number }[] = [];
  partials.forEach(({ across }, i) => {
    if (across.reduce === "sum") sums.push({ i, zeros: across.zeros(run.probes) });
    else if (across.reduce === "rows") perQuery.push({ i, rank: across.rank, dtype: across.dtype });
    else throw new Error("internal: a full-map probe in a looped layer");
  });
  const loop = g.loop(
    trips,
    sums.map(({ zeros }) => [g.node("ConstantOfShape", [ctx.dims(zeros)]), DataType.FLOAT]), // float 0 by default
    (b, it, carried) => {
      const start = b.mul(b.reshape(it, b.constI64([1])), rows);
      const end = b.node("Min", [b.add(start, rows), T]);
      // pads = [0…0 | 0…0, r' − rows of this chunk, 0…0]: the end of axis `axis` only
      const short = b.sub(b.add(start, rows), end);
      const padEnd = (x: string, r: number, axis: number) => {
        const parts = [b.constI64(new Array<number>(r + axis).fill(0)), short];
        if (axis < r - 1) parts.push(b.constI64(new Array<number>(r - axis - 1).fill(0)));
        return b.node("Pad", [x, b.concat(parts, 0)]);
      };
      const { partial, context: c5 } = attendChunk(ctx, run, b, l, { qc: queries(b, start, end), kT5, v5, start, end });
      const cRows = b.reshape(b.transpose(b.reshape(c5, b.constI64([0, H, -1, hd])), [0, 2, 1, 3]), b.constI64([0, -1, H * hd]));
      return {
        carried: sums.map(({ i }, j) => b.add(carried[j], partial.parts[i])),
        scans: [
          [padEnd(cRows, 3, 1), CT],
          ...perQuery.map(({ i, rank, dtype }): [string, number] => [padEnd(partial.parts[i], rank, rank - 1), dtype]),
        ],
      };
    },
  );
  // [n, B, …, r'] scans → [B, …, n·r'] → the first T rows
  const firstT = (x: string, axis: number) => g.node("Slice", [x, g.constI64([0]), T, g.constI64([axis])]);
  const [cScan, ...pqScans] = loop.scans;
  const context = firstT(g.reshape(g.transpose(cScan, [1, 0, 2, 3]), g.constI64([0, -1, H * hd])), 1);
  const total: ChunkPartials = { parts: new Array<string>(partials.length), values: [] };
  sums.forEach(({ i }, j) => (total.parts[i] = loop.carried[j]));
  perQuery.forEach(({ i, rank: r }, j) => {
    // [n, d0, …, r'] → [d0, …, n, r'] → [d0, …, n·r']
    const perm = [...Array.from({ length: r - 1 }, (_, a) => a + 1), 0, r];
    const merged = g.reshape(g.transpose(pqScans[j], perm), g.constI64([...new Array<number>(r - 1).fill(0), -1]));
    total.parts[i] = firstT(merged, r - 1);
  });
  return { context, partials: [total] };
}
