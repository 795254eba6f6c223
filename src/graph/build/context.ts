/**
 * What every part of the graph builder reads: the ONNX graph being built, the model's sizes, the
 * validated options, the weights, the compute dtype, and the per-run size values (batch, seq).
 *
 * Parts take a `GraphBuilder` to emit into where they may run inside a subgraph (a Loop body over
 * query chunks, an If branch); it defaults to the graph itself. Weights, their casts and shared
 * constants always go to the outer graph (`ctx.g`), which a subgraph reads by name.
 */
import type { TensorInfo } from "../../checkpoint/types.js";
import { CheckpointError, SettingsError } from "../../util/errors.js";
import type { ProbeRequest } from "../../util/probes.js";
import { AUTO_CHUNKS, type QueryChunks } from "../chunks.js";
import { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import { kvCacheConflict, kvCacheInputs, type KvCache } from "./kv-cache.js";
import { validateProbeRequest } from "../probes.js";
import type { ModelSpec } from "../spec.js";
import { weightStore, type WeightStore } from "./weights.js";

export interface BuildOptions {
  probes?: ProbeRequest;
  /** "f32" (default; the only choice on CPU) or "f16" (weights and matmuls in half, norms and softmax in f32). */
  computeDType?: "f32" | "f16";
  /**
   * Split each layer's attention into this many query chunks (default 1), computed one after
   * the other, so only [batch, head, seq/chunks, seq] score tensors are alive at a time. Results
   * are identical; full `pattern` maps still need the whole [B, H, T, T] per requested layer.
   * "auto": chunks of a size chosen from a scratch budget (chunks.ts). The MLP is split into row
   * chunks by the same setting (n chunks, or the budget's rows under "auto").
   */
  queryChunks?: QueryChunks;
  /** Scratch bytes per chunk and batch row under "auto" (default `AUTO_CHUNKS.scratchBytes`, chunks.ts). */
  chunkBudgetBytes?: number;
  /**
   * Row-selectable LM head (default false): adds input `logit_rows` [batch, rows] (hidden-state
   * positions) and the `logit_summary.*` outputs; `logits` becomes [batch, rows, vocab]. See logits.ts.
   */
  logitRows?: boolean;
  /**
   * Attention interventions (default false): adds the inputs of interventions.ts (hidden keys and
   * an additive bias per layer and head, self-only query rows), applied before each softmax.
   */
  interventions?: boolean;
  /**
   * GGUF Q4_0 / Q4_1 / Q8_0 / Q4_K linear layers. "matmulnbits" (default) keeps them quantised and runs
   * them with onnxruntime's MatMulNBits (com.microsoft; f32 compute only, so f16 graphs expand
   * them): ≈ 1/6 of the weight memory of float32 for 4-bit layers. "dequantize" expands them to
   * float32 once, at build time. The embedding (a Gather) stays float32. See checkpoint/gguf/nbits.ts.
   */
  quantizedWeights?: "dequantize" | "matmulnbits";
  /**
   * Decoded weights (GGUF blocks) go to a cache file in this folder, which onnxruntime maps, and
   * are reused by the next build on the same checkpoint (build/weight-cache.ts). Default: none,
   * they are handed to onnxruntime from memory.
   */
  weightCacheDir?: string;
  /**
   * Fused attention (default false, see build/attention-fused.ts): layers whose probes need no
   * attention probabilities (none, or only q/k) run com.microsoft MultiHeadAttention instead of the
   * decomposed ops. f32 graphs without interventions only.
   */
  fusedAttention?: boolean;
  /** MatMulNBits `accuracy_level` (0 = float compute, default; 4 = int8 activations, faster, less exact). */
  nbitsAccuracyLevel?: 0 | 1 | 2 | 3 | 4;
  /**
   * Key/value cache inputs and outputs (default false; build/kv-cache.ts): the graph runs new tokens
   * after cached ones, `attention_mask` covers past and new keys. Causal models without probes or
   * interventions only (SettingsError otherwise).
   */
  kvCache?: boolean;
}

export interface BuildContext {
  g: GraphBuilder;
  spec: ModelSpec;
  options: BuildOptions;
  req: ProbeRequest;
  /** Model sizes: hidden, heads, kv heads, group (H / KV), head dim. */
  D: number;
  H: number;
  KV: number;
  G: number;
  hd: number;
  /** The compute dtype (ONNX DataType): float, or float16 with `computeDType: "f16"`. */
  CT: number;
  f16: boolean;
  chunking: QueryChunks;
  /** Scratch bytes per chunk under "auto". */
  budget: number;
  weights: WeightStore;
  /** The graph inputs, in order (parts append theirs). */
  inputNames: string[];
  /** input_ids, position_ids ([batch, seq]), attention_mask ([batch, seq], or [batch, past + seq] with a cache). */
  ids: string;
  pos: string;
  mask: string;
  /** This run's batch and seq (its new tokens), int64 [1]. */
  B: string;
  T: string;
  /** Keys each row attends over, int64 [1]: T, or P + T with a key/value cache. */
  K: string;
  /** The key/value cache (`kvCache`), its inputs declared. */
  cache?: KvCache;
  /** x in f32 (norms, softmax and probes run in f32), and back to the compute type. */
  toF32(x: string, b?: GraphBuilder): string;
  toCT(x: string, b?: GraphBuilder): string;
  /** A shape vector from constant and run-time ([1] int64) dims, in the outer graph. */
  dims(parts: (number | string)[]): string;
}

function checkOptions(spec: ModelSpec, options: BuildOptions): void {
  if (options.computeDType !== undefined && options.computeDType !== "f32" && options.computeDType !== "f16") {
    throw new SettingsError("Unknown compute dtype", {
      field: "computeDType",
      expected: '"f32" or "f16"',
      found: String(options.computeDType),
    });
  }
  if (spec.numHeads % spec.numKvHeads !== 0) {
    throw new CheckpointError("Query heads are not a multiple of key/value heads", {
      field: "num_key_value_heads",
      expected: `a divisor of ${spec.numHeads}`,
      found: String(spec.numKvHeads),
    });
  }
  const chunking = options.queryChunks ?? 1;
  if (chunking !== "auto" && (!Number.isInteger(chunking) || chunking < 1 || chunking > 4096)) {
    throw new SettingsError("Bad query chunk count", {
      field: "queryChunks",
      expected: 'an integer in [1, 4096] or "auto"',
      found: String(chunking),
    });
  }
  const budget = options.chunkBudgetBytes ?? AUTO_CHUNKS.scratchBytes;
  if (!(Number.isFinite(budget) && budget > 0)) {
    throw new SettingsError("Bad chunk budget", {
      field: "chunkBudgetBytes",
      expected: "a positive number of bytes",
      found: String(budget),
    });
  }
  if (options.kvCache) {
    const conflict = kvCacheConflict(spec, options);
    if (conflict) throw conflict;
  }
  const quantMode = options.quantizedWeights ?? "matmulnbits";
  if (quantMode !== "dequantize" && quantMode !== "matmulnbits") {
    throw new SettingsError("Unknown quantized-weights mode", {
      field: "quantizedWeights",
      expected: '"dequantize" or "matmulnbits"',
      found: String(quantMode),
    });
  }
}

/** Validate the options and start a graph: its three token inputs and the run's batch and seq. */
export function buildContext(spec: ModelSpec, tensors: Map<string, TensorInfo>, options: BuildOptions): BuildContext {
  const req = options.probes ?? {};
  validateProbeRequest(spec, req);
  checkOptions(spec, options);
  const f16 = options.computeDType === "f16";
  const CT = f16 ? DataType.FLOAT16 : DataType.FLOAT;
  const g = new GraphBuilder();
  const ids = g.input("input_ids", DataType.INT64, ["batch", "seq"]);
  const pos = g.input("position_ids", DataType.INT64, ["batch", "seq"]);
  const mask = g.input("attention_mask", DataType.BOOL, ["batch", options.kvCache ? "keys" : "seq"]);
  const idsShape = g.shape(ids);
  const B = g.slice(idsShape, 0, 1, 0);
  const T = g.slice(idsShape, 1, 2, 0);
  const cache = options.kvCache ? kvCacheInputs(g, spec, CT, T) : undefined;
  const { hiddenSize: D, numHeads: H, numKvHeads: KV, headDim: hd } = spec;
  return {
    g,
    spec,
    options,
    req,
    D,
    H,
    KV,
    G: H / KV,
    hd,
    CT,
    f16,
    chunking: options.queryChunks ?? 1,
    budget: options.chunkBudgetBytes ?? AUTO_CHUNKS.scratchBytes,
    weights: weightStore(g, tensors, CT, {
      cacheDir: options.weightCacheDir,
      cacheSettings: { quantizedWeights: options.quantizedWeights ?? "matmulnbits" },
    }),
    inputNames: [ids, pos, mask, ...(cache?.inputs ?? [])],
    ids,
    pos,
    mask,
    B,
    T,
    K: cache?.keys ?? T,
    cache,
    toF32: (x, b = g) => (f16 ? b.cast(x, DataType.FLOAT) : x),
    toCT: (x, b = g) => (f16 ? b.cast(x, CT) : x),
    dims: (parts) =>
      g.concat(
        parts.map((p) => (typeof p === "number" ? g.constI64([p]) : p)),
        0,
      ),
  };
}
