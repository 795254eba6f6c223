/**
 * The state a key/value-cached decode carries between steps (graph/build/kv-cache.ts): every
 * layer's keys and values so far (the graph's present outputs, fed back as its past inputs, never
 * copied in JS), which of those columns are real tokens, and how many real tokens each row has (the
 * next token's position). The engine runs the graph (`CachedRun`); this object only keeps the state.
 */
// Must come before onnxruntime-node: see ort-env.ts.
import "./ort-env.js";
import * as ort from "onnxruntime-node";
import { SettingsError } from "../util/errors.js";
import type { ForwardInput, ForwardOutput, KvDecoder } from "./types.js";

/** What a cached forward reads besides its input: the keys and values held, per batch row. */
export interface KvPast {
  batch: number;
  /** P: columns held per row. */
  length: number;
  /** past.<l>.key, past.<l>.value for l = 0 … L − 1 ([batch, P, kvHead, headDim] each). */
  tensors: ort.Tensor[];
  /** [batch, P]: 1 where the column is a real token. */
  mask: Uint8Array;
  /** Real tokens per row so far. */
  real: Int32Array;
}

/** One cached forward: the output, and the present tensors (past + new, in `KvPast.tensors` order). */
export type CachedRun = (input: ForwardInput, past: KvPast) => Promise<{ out: ForwardOutput; present: ort.Tensor[] }>;

/** An empty past of `batch` rows: P = 0 tensors of the graph's compute type. */
export function emptyPast(batch: number, layers: number, kvHeads: number, headDim: number, dtype: "float32" | "float16"): KvPast {
  const tensors: ort.Tensor[] = [];
  for (let i = 0; i < 2 * layers; i++)
    tensors.push(new ort.Tensor(dtype, dtype === "float32" ? new Float32Array(0) : new Uint16Array(0), [batch, 0, kvHeads, headDim]));
  return { batch, length: 0, tensors, mask: new Uint8Array(0), real: new Int32Array(batch) };
}

export class CachedDecoder implements KvDecoder {
  private past?: KvPast;

  constructor(
    private readonly run: CachedRun,
    private readonly empty: (batch: number) => KvPast,
  ) {}

  get batch(): number {
    return this.past?.batch ?? 0;
  }

  get length(): number {
    return this.past?.length ?? 0;
  }

  async step(input: ForwardInput): Promise<ForwardOutput> {
    const past = this.past ?? this.empty(input.batch);
    if (input.batch !== past.batch) {
      throw new SettingsError("A decode step must keep the decoder's batch", {
        field: "batch",
        expected: `${past.batch} rows (retain() drops rows)`,
        found: String(input.batch),
      });
    }
    const { out, present } = await this.run(input, past);
    const { batch: B, length: P } = past;
    const S = input.seq;
    const mask = new Uint8Array(B * (P + S));
    const real = Int32Array.from(past.real);
    for (let b = 0; b < B; b++) {
      mask.set(past.mask.subarray(b * P, (b + 1) * P), b * (P + S));
      for (let t = 0; t < S; t++) {
        const m = input.attentionMask ? input.attentionMask[b * S + t] : 1;
        mask[b * (P + S) + P + t] = m ? 1 : 0;
        if (m) real[b]++;
      }
    }
    this.past = { batch: B, length: P + S, tensors: present, mask, real };
    return out;
  }

  retain(rows: number[]): void {
    const past = this.past;
    if (!past) return;
    if (rows.some((r, i) => !Number.isInteger(r) || r < 0 || r >= past.batch || (i > 0 && r <= rows[i - 1]))) {
      throw new SettingsError("retain() takes ascending rows of the current batch", {
        field: "rows",
        expected: `ascending indices in [0, ${past.batch - 1}]`,
        found: JSON.stringify(rows),
      });
    }
    if (rows.length === past.batch) return;
    const P = past.length;
    // batch is the outermost axis of every tensor: a kept row is one contiguous block
    const keep = <A extends Float32Array | Uint16Array | Uint8Array | Int32Array>(data: A, per: number): A => {
      const out = new (data.constructor as new (n: number) => A)(rows.length * per);
      rows.forEach((r, i) => out.set(data.subarray(r * per, (r + 1) * per), i * per));
      return out;
    };
    const tensors = past.tensors.map((t) => {
      const per = t.dims.slice(1).reduce((a, b) => a * b, 1);
      return new ort.Tensor(t.type as "float32", keep(t.data as Float32Array, per), [rows.length, ...t.dims.slice(1)]);
    });
    this.past = {
      batch: rows.length,
      length: P,
      tensors,
      mask: keep(past.mask, P),
      real: keep(past.real, 1),
    };
  }
}
