/**
 * The LM head with logits-row selection and per-row vocabulary summaries.
 *
 * Samplers need only a few logits rows per step (LLaDA: the masked positions of the current
 * block; Dream: the masked positions; ARM: the last real row), and at temperature 0 only a few
 * numbers per row. Reading [batch, seq, vocab] f32 out of the graph (≈500 MB at T 1000, V 126k)
 * and scanning it in JS costs more than the forward itself, so the graph can instead
 *  - gather the selected hidden rows BEFORE the head, so the [rows, D] × [D, V] matmul runs only
 *    on them (input `logit_rows`, int64 [batch, rows]: hidden-state positions per batch row; the
 *    engine turns output positions into hidden positions, which is where Dream's shift lives:
 *    output row i ← hidden max(i − 1, 0));
 *  - summarise each selected row over the vocabulary (outputs `logit_summary.*`, [batch, rows]).
 *
 * Summaries are computed in float64 from the f32 logits (as the JS samplers do), so they are the
 * samplers' own numbers up to summation order; only the argmax (first maximum, torch's tie rule)
 * and the top-2 selection run on the f32 logits directly.
 * onnxruntime runs every node whatever a run fetches (it does not prune per run), so the summaries
 * sit behind an `If` on the input `logit_summaries`: a run that does not ask computes none. A run
 * that fetches only summaries still computes the logits but never copies them out.
 */
import type { GraphBuilder } from "./onnx/builder.js";
import { DataType } from "./onnx/proto.js";

/** Graph input naming the hidden rows the head runs on. */
export const LOGIT_ROWS_INPUT = "logit_rows";

/** Graph input, bool [1]: compute the summaries in this run (else they come out empty). */
export const SUMMARIES_INPUT = "logit_summaries";

/** Summary outputs, by field of `LogitSummary` (runtime/types.ts). */
export const SUMMARY_OUTPUTS = {
  argmax: "logit_summary.argmax",
  maxProb: "logit_summary.max_prob",
  logSumExp: "logit_summary.log_sum_exp",
  negEntropy: "logit_summary.neg_entropy",
  margin: "logit_summary.margin",
} as const;

export interface LogitHeadOptions {
  /** [B·T, D] final-normed hidden states in the compute type. */
  hidden: string;
  /** Shape scalars [1] int64. */
  batch: string;
  seq: string;
  vocab: number;
  /** Applies the LM head to [N, D] → [N, V] (compute type). */
  head: (x: string) => string;
  toF32: (x: string) => string;
  /** Gather rows before the head (adds input `logit_rows`) and emit the summaries. */
  selectRows: boolean;
  logitShift: 0 | 1;
}

/** Emits `logits` (and, with selectRows, the summaries); returns the added input names. */
export function emitLogitHead(g: GraphBuilder, o: LogitHeadOptions): string[] {
  const V = o.vocab;
  if (!o.selectRows) {
    const dims = g.concat([g.constI64([-1]), o.seq, g.constI64([V])], 0);
    let logits = g.reshape(o.toF32(o.head(o.hidden)), dims);
    if (o.logitShift === 1) {
      // Dream: row i ← model row i−1; row 0 keeps its own (concat(logits[:, :1], logits[:, :-1])).
      logits = g.concat([g.slice(logits, 0, 1, 1), g.slice(logits, 0, -1, 1)], 1);
    }
    g.output(logits, "logits", DataType.FLOAT, ["batch", "seq", V]);
    return [];
  }
  const rows = g.input(LOGIT_ROWS_INPUT, DataType.INT64, ["batch", "rows"]);
  const R = g.slice(g.shape(rows), 1, 2, 0);
  // flat index b·T + rows[b, r] into the [B·T, D] residual stream
  const b = g.range(g.constI64([0], []), g.reshape(o.batch, g.constI64([], [0])), g.constI64([1], []));
  const offsets = g.unsqueeze(g.mul(b, g.reshape(o.seq, g.constI64([], [0]))), [1]); // [B,1]
  const flat = g.reshape(g.add(rows, offsets), g.constI64([-1])); // [B·R]
  const picked = g.gather(o.hidden, flat, 0); // [B·R, D]
  const logits = g.reshape(o.toF32(o.head(picked)), g.concat([g.constI64([-1]), R, g.constI64([V])], 0)); // [B,R,V]
  g.output(logits, "logits", DataType.FLOAT, ["batch", "rows", V]);

  // ---- summaries over the vocabulary axis, one reduction at a time, only when the run asks ----
  // ORT runs every node of the graph whatever the caller fetches, so the float64 summaries sit in
  // the `then` branch of an If on the run-time flag `logit_summaries`; the `else` branch returns
  // empty tensors (measured +10 % of a forward at T 256 when they ran unasked).
  const want = g.input(SUMMARIES_INPUT, DataType.BOOL, [1]);
  const types = [DataType.INT32, DataType.DOUBLE, DataType.DOUBLE, DataType.DOUBLE, DataType.DOUBLE];
  const outs = g.ifElse(
    want,
    (b) => summaries(b, logits).map((v, i) => [v, types[i]]),
    (b) => types.map((t) => [b.initializer({ name: b.fresh("empty"), dataType: t, dims: [0, 0], rawData: new Uint8Array(0) }), t]),
  );
  const names = [
    SUMMARY_OUTPUTS.argmax,
    SUMMARY_OUTPUTS.maxProb,
    SUMMARY_OUTPUTS.logSumExp,
    SUMMARY_OUTPUTS.negEntropy,
    SUMMARY_OUTPUTS.margin,
  ];
  outs.forEach((v, i) => g.output(v, names[i], types[i], ["batch", "rows"]));
  return [rows, want];
}

/** argmax, maxProb, logSumExp, negEntropy, margin of [B, R, V] f32 logits, per row (float64 but argmax). */
function summaries(g: GraphBuilder, logits: string): string[] {
  const argmax = g.cast(g.argMax(logits, -1, false), DataType.INT32); // first maximum
  const top2 = g.nodeN("TopK", [logits, g.constI64([2])], 2, { axis: -1, largest: 1, sorted: 1 })[0]; // [B,R,2] f32
  const l64 = g.cast(logits, DataType.DOUBLE);
  const max = g.reduceMax(l64, -1, true); // [B,R,1]
  const e = g.node("Exp", [g.sub(l64, max)]);
  const sum = g.reduceSum(e, -1, true);
  const p = g.div(e, sum);
  const squeeze = (x: string) => g.node("Squeeze", [x, g.constI64([-1])]);
  const maxProb = squeeze(g.reciprocal(sum)); // the argmax's probability: exp(0) / Σ
  const lse = squeeze(g.add(max, g.node("Log", [sum])));
  // Σ p·log(p + 1e-10), Dream's `entropy` confidence (p = 0 terms are exactly 0, as in JS)
  const tiny = g.initializer({
    name: g.fresh("c"),
    dataType: DataType.DOUBLE,
    dims: [],
    rawData: new Uint8Array(Float64Array.of(1e-10).buffer),
  });
  const negEntropy = squeeze(g.reduceSum(g.mul(p, g.node("Log", [g.add(p, tiny)])), -1, true));
  // p1 − p2 = (1 − exp(l2 − max)) / Σ from the two largest logits (ties give 0, as JS does)
  const second = g.slice(g.cast(top2, DataType.DOUBLE), 1, 2, 2);
  const p2 = g.div(g.node("Exp", [g.sub(second, max)]), sum);
  const margin = squeeze(g.sub(g.reciprocal(sum), p2));
  return [argmax, maxProb, lse, negEntropy, margin];
}
