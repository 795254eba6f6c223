/**
 * Batching helpers for the step loop: left-pad several canvases into one forward input, read one
 * row's logits back in unpadded coordinates (with classifier-free guidance mixed in), and cut one
 * row's probe tensors out of a batched result.
 *
 * Left padding keeps every prompt's last token at the same column, which ARM decoding needs; the
 * engine gives padding keys no attention and counts positions over real tokens only, so each
 * row computes what it would alone (up to float rounding).
 */
import type { ForwardInput, ForwardOutput } from "../runtime/types.js";
import type { ProbeTensor } from "../util/probes.js";

export interface PaddedBatch {
  input: ForwardInput;
  /** Left padding of each row, [batch]. */
  pads: number[];
}

/**
 * @param canvases unpadded rows
 * @param padId token written into padding columns (never attended to)
 * @param regionRows optional token spans per row for the `region_sum` probe (unpadded coordinates)
 */
export function padBatch(canvases: Int32Array[], padId: number, regionRows?: [number, number][][], regions?: number): PaddedBatch {
  const batch = canvases.length;
  const seq = Math.max(...canvases.map((c) => c.length));
  const ids = new Int32Array(batch * seq).fill(padId);
  const attentionMask = new Uint8Array(batch * seq);
  const pads: number[] = [];
  canvases.forEach((c, b) => {
    const pad = seq - c.length;
    pads.push(pad);
    ids.set(c, b * seq + pad);
    attentionMask.fill(1, b * seq + pad, (b + 1) * seq);
  });
  const input: ForwardInput = { ids, batch, seq, attentionMask };
  if (regionRows && regions !== undefined) {
    const oneHot = new Float32Array(batch * seq * regions);
    // Spans are clipped to the row's own canvas: an ARM's "answer" span reaches past the canvas until the
    // answer is written, and unclipped it would mark the next batch row's first tokens (its BOS, the sink)
    // as this row's answer.
    regionRows.forEach((spans, b) =>
      spans.forEach(([s, e], r) => {
        const end = Math.min(e, canvases[b].length);
        for (let i = Math.max(0, s); i < end; i++) oneHot[(b * seq + pads[b] + i) * regions + r] = 1;
      }),
    );
    input.regionOneHot = oneHot;
  }
  return { input, pads };
}

/** One row's logits: `row(pos)` is position `pos`'s vocabulary distribution (unpadded coordinates). */
export interface LogitsView {
  vocab: number;
  /** [vocab]; may be a scratch buffer reused by the next call. */
  row(pos: number): Float32Array;
  /**
   * The engine's float64 summary of position `pos`'s row (runtime/types.ts `LogitSummary`), when
   * the forward returned summaries (never under guidance); undefined otherwise.
   */
  summary?(pos: number): RowSummary | undefined;
}

/** One row's entries of a `LogitSummary`. */
export interface RowSummary {
  argmax: number;
  maxProb: number;
  logSumExp: number;
  negEntropy: number;
  margin: number;
}

/**
 * The logits rows of a step: each batch row's positions (unpadded) → `logitRows` [batch, rows] in
 * padded coordinates. Every batch row names the same number of rows, so short lists are filled
 * by repeating their last position (or the first real column when a row needs none).
 * @param needed per batch row, unpadded positions
 */
export function logitRowsInput(needed: number[][], pads: number[]): Int32Array {
  const R = Math.max(1, ...needed.map((n) => n.length));
  const rows = new Int32Array(needed.length * R);
  needed.forEach((list, b) => {
    for (let r = 0; r < R; r++) rows[b * R + r] = pads[b] + (list.length ? list[Math.min(r, list.length - 1)] : 0);
  });
  return rows;
}

/**
 * Logits of batch row `b`. With `uncondRow` and scale c > 0, classifier-free guidance:
 * un + (c + 1)·(cond − un), as LLaDA's generate mixes them. When the forward selected rows
 * (`out.logitRows`), only those positions can be read, and `batch` (the forward's batch size) is needed.
 */
export function logitsView(
  out: ForwardOutput,
  seq: number,
  b: number,
  pad: number,
  guidance?: { uncondRow: number; uncondPad: number; scale: number } | undefined,
  batch?: number,
): LogitsView {
  const V = out.vocabSize;
  const L = out.logits;
  const scratch = new Float32Array(V);
  // With row selection, logits are [batch, rows, vocab]: find the row holding a position.
  const sel = out.logitRows;
  if (sel && !(batch && batch > 0)) throw new Error("internal: logitsView needs the batch size when rows were selected");
  const R = sel ? sel.length / batch! : seq;
  const maps = new Map<number, Map<number, number>>(); // batch row → (padded position → flat row)
  const index = (batchRow: number, padded: number): number => {
    if (!sel) return batchRow * seq + padded;
    let m = maps.get(batchRow);
    if (!m) {
      m = new Map();
      for (let r = R - 1; r >= 0; r--) m.set(sel[batchRow * R + r], batchRow * R + r);
      maps.set(batchRow, m);
    }
    const i = m.get(padded);
    if (i === undefined) throw new Error(`internal: logits row ${padded} of batch row ${batchRow} was not selected`);
    return i;
  };
  const s = out.summary;
  return {
    vocab: V,
    summary:
      s &&
      ((pos: number) => {
        const i = index(b, pad + pos);
        return { argmax: s.argmax[i], maxProb: s.maxProb[i], logSumExp: s.logSumExp[i], negEntropy: s.negEntropy[i], margin: s.margin[i] };
      }),
    row(pos: number): Float32Array {
      const cond = index(b, pad + pos) * V;
      if (!guidance) return L.subarray(cond, cond + V);
      const un = index(guidance.uncondRow, guidance.uncondPad + pos) * V;
      const k = guidance.scale + 1;
      for (let v = 0; v < V; v++) scratch[v] = L[un + v] + k * (L[cond + v] - L[un + v]);
      return scratch;
    },
  };
}

/**
 * Cut batch row `b` out of every probe tensor: drop the batch axis and the `pad` padding columns
 * of every query/key axis, so the result is what the row would give alone. `argmax_key` values
 * (key indices) are shifted by −pad into the row's own coordinates. An unpadded row is a view into
 * the batch tensor, not a copy.
 */
export function sliceProbes(probes: Map<string, ProbeTensor>, b: number, pad: number): Map<string, ProbeTensor> {
  const out = new Map<string, ProbeTensor>();
  for (const [name, t] of probes) {
    const axes = t.axes.slice(1);
    const inner = t.dims.slice(1);
    const starts = axes.map((a) => (a === "query" || a === "key" ? pad : 0));
    const dims = inner.map((d, i) => d - starts[i]);
    const count = dims.reduce((x, y) => x * y, 1);
    if (pad === 0) {
      // Nothing to cut: batch row b is one contiguous block, so a view (no copy; at batch 1 the
      // whole tensor). The forward's output buffers are not reused, so the view stays valid.
      const start = b * count;
      out.set(name, { name, axes, dims, data: t.data.subarray(start, start + count) });
      continue;
    }
    const data = t.data instanceof Int32Array ? new Int32Array(count) : new Float32Array(count);
    const strides = inner.map((_, i) => inner.slice(i + 1).reduce((x, y) => x * y, 1));
    const base = b * inner.reduce((x, y) => x * y, 1);
    const last = dims.length - 1;
    const idx = new Array<number>(dims.length).fill(0);
    let o = 0;
    // Copy contiguous runs along the last axis, odometer over the others.
    while (o < count) {
      let src = base;
      for (let i = 0; i < last; i++) src += (idx[i] + starts[i]) * strides[i];
      src += starts[last] * strides[last];
      data.set(t.data.subarray(src, src + dims[last]), o);
      o += dims[last];
      for (let i = last - 1; i >= 0; i--) {
        if (++idx[i] < dims[i]) break;
        idx[i] = 0;
      }
      if (last === 0) break;
    }
    if (name.endsWith(".argmax_key") && pad > 0) for (let i = 0; i < count; i++) data[i] -= pad;
    out.set(name, { name, axes, dims, data });
  }
  return out;
}
