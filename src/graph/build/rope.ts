/**
 * Rotary position embedding in the graph (the maths and `inv_freq` are in ../rope.ts).
 *
 * The cos and sin tables are made once per run from the position ids, [batch, seq, 1, dHead]:
 * angle[b, t, j] = position · invFreq[j], the dHead/2 angles duplicated (half-split layout).
 * A query chunk rotates its rows with those rows of the tables.
 */
import type { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import { ropeInvFreq } from "../rope.js";
import type { BuildContext } from "./context.js";

export interface RopeTables {
  /** [B, T, 1, dHead] in the compute type. */
  cos: string;
  sin: string;
}

/** This run's cos and sin tables. */
export function ropeTables(ctx: BuildContext): RopeTables {
  const { g, hd } = ctx;
  const invFreq = g.constF32(ropeInvFreq(ctx.spec.rope, hd), [hd / 2], "inv_freq");
  const freqs = g.mul(g.unsqueeze(g.cast(ctx.pos, DataType.FLOAT), [2]), invFreq); // [B,T,hd/2]
  const emb = g.unsqueeze(g.concat([freqs, freqs], -1), [2]); // [B,T,1,hd]
  return { cos: ctx.toCT(g.cos(emb)), sin: ctx.toCT(g.sin(emb)) };
}

/** x·cos + rotate_half(x)·sin on x [B, rows, heads, dHead], with the tables' matching rows. */
export function rotate(ctx: BuildContext, x: string, t: RopeTables, b: GraphBuilder = ctx.g): string {
  const { hd } = ctx;
  const half = hd / 2;
  const x1 = b.slice(x, 0, half, 3);
  const x2 = b.slice(x, half, hd, 3);
  return b.add(b.mul(x, t.cos), b.mul(b.concat([b.neg(x2), x1], 3), t.sin));
}
