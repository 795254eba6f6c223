/**
 * The run-time side of row chunking (the rule itself, and why, is in ../chunks.ts): how many rows
 * a chunk has in this run, computed in the graph from the run's T, once per run and shared by
 * every layer.
 */
import { attentionRowKeys, AUTO_CHUNKS, chunkSlots } from "../chunks.js";
import type { BuildContext } from "./context.js";

export interface RowChunks {
  /** Unrolled attention chunk slots the graph is built with (chunks.ts `chunkSlots`). */
  slots: number;
  /** Query rows per unrolled chunk: ceil(T / slots). */
  evenRows(): string;
  /** Query rows per fused-attention chunk (at least min(T, 3·r(T)) under "auto": one buffer, not three). */
  fusedRows(): string;
  /** A looped layer's chunk height r' and trip count n (int64 [1] and scalar). */
  loopSize(): { rows: string; trips: string };
  /**
   * Chunk c of `count` covers rows [c·size, (c+1)·size) ∩ [0, total). Its `start` also waits for
   * `after` (the previous chunk's results: an empty slice of their Shape is concatenated in), which
   * orders the chunks one after another.
   */
  bounds(size: string, total: string, count: number, c: number, after: string[]): [string, string];
}

export function rowChunks(ctx: BuildContext): RowChunks {
  const { g, T, K, spec } = ctx;
  const slots = chunkSlots(spec, ctx.chunking, ctx.budget);
  const rowKeys = attentionRowKeys(spec, ctx.budget);
  const once = <V>(make: () => V): (() => V) => {
    let v: V | undefined;
    return () => (v ??= make());
  };
  const evenRows = once(() => g.div(g.add(T, g.constI64([slots - 1])), g.constI64([slots])));
  // r(T) = max(q, floor(rowKeys / K / q)·q) from this run's key count K (T, or P + T with a key/value cache)
  const autoRows = (keys: number) => {
    const q = g.constI64([AUTO_CHUNKS.attentionQuantum]);
    return g.node("Max", [q, g.mul(g.div(g.div(g.constI64([keys]), K), q), q)]);
  };
  const fusedRows = once(() =>
    ctx.chunking === "auto" ? g.node("Max", [evenRows(), g.node("Min", [T, autoRows(3 * rowKeys)])]) : evenRows(),
  );
  // n = ceil(T / min(T, r(T))) chunks of r' = min(T, ceil(T / n) rounded up to the quantum) rows,
  // which is ≤ r(T), so every chunk's scratch stays within the budget at any T (chunks.ts `rowsPerChunk`).
  const loopSize = once(() => {
    const q = AUTO_CHUNKS.attentionQuantum;
    const first = g.node("Min", [T, autoRows(rowKeys)]);
    const one = g.constI64([1]);
    const n = g.div(g.sub(g.add(T, first), one), first); // ceil(T / first)
    const even = g.div(g.sub(g.add(T, n), one), n); // ceil(T / n)
    const up = g.mul(g.div(g.add(even, g.constI64([q - 1])), g.constI64([q])), g.constI64([q]));
    return { rows: g.node("Min", [T, up]), trips: g.reshape(n, g.constI64([], [0])) };
  });
  const lists = new Map<string, [string, string][]>();
  const bounds = (size: string, total: string, count: number, c: number, after: string[]): [string, string] => {
    const key = `${size}/${total}/${count}`;
    let list = lists.get(key);
    if (!list) {
      list = Array.from({ length: count }, (_, i) => [
        g.node("Min", [g.mul(size, g.constI64([i])), total]),
        g.node("Min", [g.mul(size, g.constI64([i + 1])), total]),
      ]);
      lists.set(key, list);
    }
    const [start, end] = list[c];
    if (after.length === 0) return [start, end];
    return [g.concat([...after.map((v) => g.slice(g.shape(v), 0, 0, 0)), start], 0), end];
  };
  return { slots, evenRows, fusedRows, loopSize, bounds };
}
