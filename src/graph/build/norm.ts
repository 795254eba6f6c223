/**
 * RMSNorm over the last axis, computed in f32 as HF does (normalise in f32, cast back to the
 * compute type, then × weight): x / √(mean(x²) + ε) · w.
 */
import type { GraphBuilder } from "../onnx/builder.js";
import type { BuildContext } from "./context.js";

/** RMSNorm of x [rows, D] with the checkpoint's weight `w` [D]; emitted into `b`. */
export function rmsNorm(ctx: BuildContext, x: string, w: string, b: GraphBuilder = ctx.g): string {
  const eps = ctx.g.constF32([ctx.spec.rmsNormEps], []); // one constant per graph (cached by value)
  const xf = ctx.toF32(x, b);
  const ms = b.reduceMean(b.mul(xf, xf), -1, true);
  const normed = b.mul(xf, b.reciprocal(b.sqrt(b.add(ms, eps))));
  return b.mul(ctx.toCT(normed, b), ctx.weights.weight(w, [ctx.D]));
}
