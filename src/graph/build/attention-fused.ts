/**
 * Fused attention, for layers whose probes need no probabilities (`fusedAttention: true`, f32
 * graphs without interventions). com.microsoft MultiHeadAttention takes q/k/v as [B, T, heads·d]
 * (no transposes) and runs scores, softmax and P·V in one kernel; masks enter as an additive bias
 * (0 or finfo.min, so masked scores become exactly finfo.min, as with Where). Chunked over queries
 * like the decomposed path (unrolled, `RowChunks.fusedRows` rows per chunk).
 * Off by default: on CPU (onnxruntime 1.30, one thread) the fused kernel measured 2–12 % slower
 * than the decomposed ops (bench/engine-perf.ts; docs/engine.md "Performance choices").
 */
import { float, type GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import type { AttentionRun } from "./attention.js";
import type { BuildContext } from "./context.js";

/** Additive bias [B, 1, Q|1, K] from allowed [B, 1, 1, Q|1, K]: 0 where allowed, finfo.min elsewhere. */
function biasOf(ctx: BuildContext, run: AttentionRun, allowedRows: string): string {
  const { g } = ctx;
  return g.where(g.node("Squeeze", [allowedRows, g.constI64([1])]), g.constF32([0], []), run.mask.fill);
}

/** The fused attention of one layer: context rows [B·T, H·d]. */
export function fusedAttention(ctx: BuildContext, run: AttentionRun, qRot: string, kRot: string, v: string): string {
  const { g, T, K, H, G, hd } = ctx;
  const flat = (x: string, rows = T) => g.reshape(x, ctx.dims([-1, rows, H * hd]));
  // kv head j serves query heads j·G … j·G + G − 1 (HF's repeat_interleave); K keys (cached ones included)
  const perQueryHead = (x: string) => flat(G === 1 ? x : g.node("Expand", [g.unsqueeze(x, [3]), g.constI64([1, 1, 1, G, 1])]), K);
  const qF = flat(qRot),
    kF = perQueryHead(kRot),
    vF = perQueryHead(v);
  // [B, 1, T, T], built once per run (by the first fused layer of a causal graph)
  if (ctx.spec.causal && !run.causalBias) run.causalBias = g.node("Expand", [biasOf(ctx, run, run.mask.allowed), ctx.dims([1, 1, T, 1])]);
  const causalBias = run.causalBias;
  const mha = (b: GraphBuilder, qc: string, bias?: string) =>
    b.node(
      "MultiHeadAttention",
      bias ? [qc, kF, vF, "", "", bias] : [qc, kF, vF],
      { num_heads: H, scale: float(1 / Math.sqrt(hd)) },
      1,
      "com.microsoft",
    );
  const slots = run.chunks.slots;
  const contexts: string[] = [];
  for (let c = 0; c < slots; c++) {
    let qc = qF,
      rows: (x: string) => string = (x) => x;
    if (slots > 1) {
      const [start, end] = run.chunks.bounds(run.chunks.fusedRows(), T, slots, c, c > 0 ? [contexts[c - 1]] : []);
      qc = g.node("Slice", [qF, start, end, g.constI64([1])]);
      rows = (x) => g.node("Slice", [x, start, end, g.constI64([2])]);
    }
    if (causalBias) contexts.push(mha(g, qc, rows(causalBias)));
    else {
      // bidirectional: a bias only when some key of this run is padding
      const keys = biasOf(ctx, run, run.mask.allowed); // [B, 1, 1, T]
      const expanded = (b: GraphBuilder) => b.node("Expand", [keys, b.concat([b.constI64([1, 1]), b.slice(b.shape(qc), 1, 2, 0), K], 0)]);
      contexts.push(
        g.ifElse(
          run.mask.anyPadding!,
          (b) => [[mha(b, qc, expanded(b)), DataType.FLOAT]],
          (b) => [[mha(b, qc), DataType.FLOAT]],
        )[0],
      );
    }
  }
  const out = contexts.length === 1 ? contexts[0] : g.concat(contexts, 1); // [B, T, H·d]
  return g.reshape(out, g.constI64([-1, H * hd]));
}
