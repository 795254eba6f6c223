/**
 * `buildModelGraph`: one ModelSpec + the checkpoint's tensor index → ONNX bytes for a
 * Llama-family forward pass with in-graph attention probes.
 *
 * Graph inputs (all [batch, seq] with symbolic dims unless noted):
 *   input_ids int64 · position_ids int64 (computed in TS: cumsum(mask) − 1, clipped at 0) ·
 *   attention_mask bool (false = padding key) · query_weight float (normalised per row; only
 *   with received probes) · region_onehot float [batch, seq, region] (only with regionSum).
 * Outputs: `logits` float [batch, seq, vocab] (already shifted for logitShift 1, so row i is
 * the distribution for token i), then one output per probe, named canonically. With
 * `logitRows`, an extra input `logit_rows` selects the rows the head runs on, and per-row
 * vocabulary summaries are added (logits.ts).
 *
 * Design (docs/engine.md): weights are external data pointing INTO the safetensors files
 * (zero copy), kept in HF [out, in] layout and used through Gemm(transB=1); BF16/F16 weights get
 * a Cast to the compute type; the residual stream is kept 2-D [batch·seq, hidden]; RMSNorm,
 * RoPE and attention are decomposed into plain ops so that every intermediate can be exposed;
 * GQA broadcasts q [B,KV,G,T,d] against k [B,KV,1,d,T] instead of repeating K/V.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { toMatMulNBits } from "../checkpoint/gguf/nbits.js";
import { readTensorBytes } from "../checkpoint/safetensors.js";
import type { TensorInfo } from "../checkpoint/types.js";
import { CheckpointError, SettingsError } from "../util/errors.js";
import type { ProbeRequest } from "../util/probes.js";
import { float, GraphBuilder } from "./onnx/builder.js";
import { DataType, type GraphProto } from "./onnx/proto.js";
import { emitLogitHead, SUMMARY_OUTPUTS } from "./logits.js";
import {
  chunkProbes,
  emitQkProbes,
  finishProbes,
  probeOutputs,
  needsProbabilities,
  validateProbeRequest,
  PROBE_INPUTS,
  type ChunkPartials,
  type ProbeContext,
  type ProbeOutput,
} from "./probes.js";
import { emitInterventions, type InterventionGraph } from "./interventions.js";
import { attentionRowKeys, AUTO_CHUNKS, autoMlpRows, chunkSlots, mlpSlots, type QueryChunks } from "./chunks.js";
import { ropeInvFreq } from "./rope.js";
import type { ModelSpec } from "./spec.js";

/** float32 finfo.min: HF's fill value for masked scores (−inf would turn fully masked rows into NaN). */
export const F32_MIN = -3.4028234663852886e38;

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
   * GGUF Q4_0 / Q4_1 / Q8_0 linear layers (default "dequantize": expanded to float32 once, at build
   * time). "matmulnbits" keeps them quantised and runs them with onnxruntime's MatMulNBits
   * (com.microsoft; f32 compute only): ≈ 1/6 of the weight memory for 4-bit layers. The embedding
   * (a Gather) and a head tied to it stay float32. See checkpoint/gguf/nbits.ts.
   */
  quantizedWeights?: "dequantize" | "matmulnbits";
  /**
   * Fused attention (default false, see below): layers whose probes need no attention probabilities
   * (none, or only q/k) run com.microsoft MultiHeadAttention instead of the decomposed ops. f32
   * graphs without interventions only.
   */
  fusedAttention?: boolean;
  /** MatMulNBits `accuracy_level` (0 = float compute, default; 4 = int8 activations, faster, less exact). */
  nbitsAccuracyLevel?: 0 | 1 | 2 | 3 | 4;
}

export interface BuiltGraph {
  /** Serialised ModelProto. */
  bytes: Uint8Array;
  /** Real (symlink-resolved) paths of the safetensors files referenced as external data; locations are their basenames. */
  externalFiles: string[];
  /**
   * Weights decoded in memory (GGUF quantised or permuted tensors), handed to onnxruntime as
   * in-memory external data under these virtual locations.
   */
  externalBuffers: { path: string; data: Uint8Array }[];
  inputNames: string[];
  probes: ProbeOutput[];
  nodeCount: number;
  /** The graph as plain objects (for inspection and tests). */
  graph: GraphProto;
}

const ONNX_DTYPE: Record<string, number> = { F32: DataType.FLOAT, F16: DataType.FLOAT16, BF16: DataType.BFLOAT16 };

function realpathOrThrow(file: string, tensor: string): string {
  try {
    return fs.realpathSync(file);
  } catch {
    throw new CheckpointError("Weight file not found", { file, field: tensor, expected: "an existing .safetensors file" });
  }
}

/** A GGUF float tensor that only needs its rows reordered (no dequantisation). */
function rowOrderOnly(t: TensorInfo): boolean {
  return t.encoding !== undefined && t.encoding.unpermuteHeads !== undefined && ONNX_DTYPE[t.encoding.ggmlType] !== undefined;
}

/** For each HF row, the file row holding it: HF row h·d + s·d/2 + i is file row h·d + 2i + s (see checkpoint/gguf/tensor.ts). */
function hfRowOrder(rows: number, heads: number): number[] {
  const d = rows / heads;
  const order: number[] = new Array(rows);
  for (let h = 0; h < heads; h++)
    for (let s = 0; s < 2; s++) for (let i = 0; i < d / 2; i++) order[h * d + s * (d / 2) + i] = h * d + 2 * i + s;
  return order;
}

function numel(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function buildModelGraph(spec: ModelSpec, tensors: Map<string, TensorInfo>, options: BuildOptions = {}): BuiltGraph {
  const req = options.probes ?? {};
  validateProbeRequest(spec, req);
  const f16 = (options.computeDType ?? "f32") === "f16";
  if (options.computeDType !== undefined && options.computeDType !== "f32" && options.computeDType !== "f16") {
    throw new SettingsError("Unknown compute dtype", {
      field: "computeDType",
      expected: '"f32" or "f16"',
      found: String(options.computeDType),
    });
  }
  const CT = f16 ? DataType.FLOAT16 : DataType.FLOAT;
  const { hiddenSize: D, numHeads: H, numKvHeads: KV, headDim: hd } = spec;
  if (H % KV !== 0) {
    throw new CheckpointError("Query heads are not a multiple of key/value heads", {
      field: "num_key_value_heads",
      expected: `a divisor of ${H}`,
      found: String(KV),
    });
  }
  const G = H / KV;
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
  const slots = chunkSlots(spec, chunking, budget);
  const slotsMlp = mlpSlots(spec, chunking, budget);
  const g = new GraphBuilder();
  const files = new Map<string, string>(); // real path → location
  const weightCache = new Map<string, string>();
  const realFiles = new Map<string, string>();
  const buffers: { path: string; data: Uint8Array }[] = [];
  // Float tensors whose only encoding is llama.cpp's q/k row order stay in place (Gather below);
  // anything quantised has to be decoded, and then every weight goes to onnxruntime from memory.
  const inMemory = [...tensors.values()].some((t) => t.encoding !== undefined && !rowOrderOnly(t));

  /** External initializer for a checkpoint tensor, shape-checked, cast to the compute type. */
  const weight = (name: string, shape: number[]): string => {
    const cached = weightCache.get(name);
    if (cached) return cached;
    const info = tensors.get(name);
    if (!info)
      throw new CheckpointError("Checkpoint lacks a tensor the model needs", {
        field: name,
        expected: `a tensor of shape [${shape}]`,
        found: "nothing",
      });
    if (info.shape.length !== shape.length || info.shape.some((d, i) => d !== shape[i])) {
      throw new CheckpointError("Tensor has the wrong shape", {
        file: info.file,
        field: name,
        expected: `[${shape}]`,
        found: `[${info.shape}]`,
      });
    }
    const dt = ONNX_DTYPE[info.dtype];
    if (dt === undefined)
      throw new CheckpointError("Unsupported weight dtype", {
        file: info.file,
        field: `${name}.dtype`,
        expected: "F32, F16 or BF16",
        found: info.dtype,
      });
    if (inMemory) {
      // Stored bytes are not the values (quantised blocks, permuted rows): decode once, pass in
      // memory. onnxruntime then wants every external weight in its in-memory table, so the
      // tensors usable in place (norms, mostly) are read too.
      const data = readTensorBytes(info);
      const location = `floatscope-decoded-${buffers.length}.bin`;
      buffers.push({ path: location, data });
      const init = g.initializer({
        name,
        dataType: dt,
        dims: shape,
        externalData: [
          { key: "location", value: location },
          { key: "offset", value: "0" },
          { key: "length", value: String(data.byteLength) },
        ],
      });
      const v = dt === CT ? init : g.cast(init, CT);
      weightCache.set(name, v);
      return v;
    }
    // ORT refuses symlinks that leave the model folder: name the real file (TensorInfo.file
    // normally is already real; a hand-made tensor map may not be).
    const real = realFiles.get(info.file) ?? realpathOrThrow(info.file, name);
    realFiles.set(info.file, real);
    const location = path.basename(real);
    const prev = [...files].find(([f, loc]) => loc === location && f !== real);
    if (prev)
      throw new CheckpointError("Two weight files share a base name in different folders", {
        file: real,
        field: name,
        expected: "distinct file names",
        found: `${prev[0]} and ${real}`,
      });
    files.set(real, location);
    const heads = info.encoding?.unpermuteHeads;
    const storedDt = info.encoding ? ONNX_DTYPE[info.encoding.ggmlType] : dt;
    const init = g.initializer({
      name: heads !== undefined ? `${name}.stored` : name,
      dataType: storedDt,
      dims: shape,
      externalData: [
        { key: "location", value: location },
        { key: "offset", value: String(info.byteOffset) },
        { key: "length", value: String(info.byteLength) },
      ],
    });
    // A GGUF float tensor in llama.cpp's rotary row order stays in the file; a constant Gather
    // puts the rows back in HF order (onnxruntime folds it once, at load).
    const stored = heads !== undefined ? g.gather(init, g.constI64(hfRowOrder(shape[0], heads)), 0) : init;
    const v = storedDt === CT ? stored : g.cast(stored, CT);
    weightCache.set(name, v);
    return v;
  };
  // The helpers below take the builder to emit into (default: the graph itself; a Loop body when a
  // layer's attention loops over query chunks). Weights and their casts always go to the outer graph.
  const toF32 = (x: string, b: GraphBuilder = g) => (f16 ? b.cast(x, DataType.FLOAT) : x);
  const toCT = (x: string, b: GraphBuilder = g) => (f16 ? b.cast(x, CT) : x);
  const dims = (parts: (number | string)[]) =>
    g.concat(
      parts.map((p) => (typeof p === "number" ? g.constI64([p]) : p)),
      0,
    );
  const quantMode = options.quantizedWeights ?? "dequantize";
  if (quantMode !== "dequantize" && quantMode !== "matmulnbits") {
    throw new SettingsError("Unknown quantized-weights mode", {
      field: "quantizedWeights",
      expected: '"dequantize" or "matmulnbits"',
      found: String(quantMode),
    });
  }
  const useNBits = quantMode === "matmulnbits" && !f16;
  /** A quantised GGUF linear layer as MatMulNBits, or undefined (then the plain f32 Gemm). */
  // A weight's MatMulNBits initializers, made once: the MLP runs per row chunk (chunks.ts), so the same
  // weight feeds one MatMulNBits node per chunk, and each must read the same initializers (a second copy
  // under the same name would point at an external buffer that is never written).
  const nbitsInputs = new Map<string, { inputs: string[]; attrs: Record<string, number> } | null>();
  const nbitsLinear = (x: string, w: string, out: number, inp: number, b: GraphBuilder = g): string | undefined => {
    let made = nbitsInputs.get(w);
    if (made === undefined) {
      made = nbitsInitializers(w, out, inp);
      nbitsInputs.set(w, made);
    }
    if (made === null) return undefined;
    return b.node("MatMulNBits", [x, ...made.inputs], made.attrs, 1, "com.microsoft");
  };
  const nbitsInitializers = (w: string, out: number, inp: number): { inputs: string[]; attrs: Record<string, number> } | null => {
    const info = tensors.get(w);
    if (!useNBits || !info?.encoding || info.shape[0] !== out || info.shape[1] !== inp) return null;
    const q = toMatMulNBits(info);
    if (!q) return null;
    const external = (suffix: string, dataType: number, dims: number[], data: Uint8Array): string => {
      const location = `floatscope-decoded-${buffers.length}.bin`;
      buffers.push({ path: location, data });
      return g.initializer({
        name: `${w}.${suffix}`,
        dataType,
        dims,
        externalData: [
          { key: "location", value: location },
          { key: "offset", value: "0" },
          { key: "length", value: String(data.byteLength) },
        ],
      });
    };
    const nb = q.k / q.blockSize;
    const u8 = (a: Float32Array) => new Uint8Array(a.buffer, a.byteOffset, a.byteLength);
    const inputs = [
      external("nbits_codes", DataType.UINT8, [q.n, nb, (q.blockSize * q.bits) / 8], q.codes),
      external("nbits_scales", DataType.FLOAT, [q.n * nb], u8(q.scales)),
    ];
    if (q.zeroPoints) inputs.push(external("nbits_zero_points", DataType.FLOAT, [q.n * nb], u8(q.zeroPoints)));
    return { inputs, attrs: { K: q.k, N: q.n, bits: q.bits, block_size: q.blockSize, accuracy_level: options.nbitsAccuracyLevel ?? 0 } };
  };
  const linear = (x: string, w: string, out: number, inp: number, bias?: string, b: GraphBuilder = g) => {
    const y = nbitsLinear(x, w, out, inp, b);
    if (y !== undefined) return bias ? b.add(y, weight(bias, [out])) : y;
    return b.gemmTransB(x, weight(w, [out, inp]), bias ? weight(bias, [out]) : undefined);
  };

  /** RMSNorm over the last axis, in f32 (HF: normalise in f32, cast back, then × weight). */
  const eps = g.constF32([spec.rmsNormEps], []);
  const rmsNorm = (x: string, w: string, b: GraphBuilder = g): string => {
    const xf = toF32(x, b);
    const ms = b.reduceMean(b.mul(xf, xf), -1, true);
    const normed = b.mul(xf, b.reciprocal(b.sqrt(b.add(ms, eps))));
    return b.mul(toCT(normed, b), weight(w, [D]));
  };

  // ---- inputs and shared per-run tensors ----
  const ids = g.input("input_ids", DataType.INT64, ["batch", "seq"]);
  const pos = g.input("position_ids", DataType.INT64, ["batch", "seq"]);
  const mask = g.input("attention_mask", DataType.BOOL, ["batch", "seq"]);
  const inputNames = [ids, pos, mask];
  const idsShape = g.shape(ids);
  const B = g.slice(idsShape, 0, 1, 0);
  const T = g.slice(idsShape, 1, 2, 0);

  // allowed[b,1,1,q,k]: key k is real, and (causal) k ≤ q.
  let allowed = g.unsqueeze(mask, [1, 2, 3]); // [B,1,1,1,K]
  if (spec.causal) {
    const r = g.range(g.constI64([0], []), g.reshape(T, g.constI64([], [0])), g.constI64([1], []));
    const future = g.greater(g.unsqueeze(r, [0]), g.unsqueeze(r, [1])); // [Q,K]: k > q
    allowed = g.and(allowed, g.not(future));
  }
  const maskFill = g.constF32([F32_MIN], []);
  // bool []: some key of this run is padding. Only a bidirectional graph without interventions
  // can skip the mask (a causal one always hides future keys).
  const anyPadding =
    !spec.causal && !options.interventions
      ? g.not(g.cast(g.node("ReduceMin", [g.cast(mask, DataType.INT32)], { keepdims: 0 }), DataType.BOOL))
      : undefined;
  let iv: InterventionGraph | undefined;
  if (options.interventions) {
    iv = emitInterventions(g, { allowed, T, KV, G, numLayers: spec.numLayers, numHeads: H });
    inputNames.push(...iv.inputs);
  }
  // query rows per unrolled chunk: ceil(T / slots) (a chunk count; under "auto" only fused layers are
  // unrolled, with at least min(T, 3·r(T)) rows), r(T) = max(q, floor(rowKeys / T / q)·q) from this run's T
  const evenRows = g.div(g.add(T, g.constI64([slots - 1])), g.constI64([slots]));
  const autoRows = (rowKeys: number) => {
    const q = g.constI64([AUTO_CHUNKS.attentionQuantum]);
    return g.node("Max", [q, g.mul(g.div(g.div(g.constI64([rowKeys]), T), q), q)]);
  };
  const atLeast = (rows: string) => g.node("Max", [evenRows, g.node("Min", [T, rows])]);
  const rowKeys = attentionRowKeys(spec, budget);
  // A fused layer holds one [B, H, rows, T] buffer, not three, so under "auto" its chunks are 3×
  // longer for the same memory (fewer chunks: MultiHeadAttention re-lays K and V out per call).
  const fusedChunkSize = chunking === "auto" ? atLeast(autoRows(3 * rowKeys)) : evenRows;

  // Under "auto", a decomposed layer's attention runs as a Loop over query chunks (`attentionLoop`
  // below), so the number of chunks is not fixed by the graph: n = ceil(T / min(T, r(T))) chunks of
  // r' = min(T, ceil(T / n) rounded up to the quantum) rows, which is ≤ r(T), so every chunk's
  // scratch stays within the budget at any T (chunks.ts `rowsPerChunk`). Computed once per run.
  let loopSize: { rows: string; trips: string } | undefined;
  const attentionLoopSize = () => {
    if (loopSize) return loopSize;
    const q = AUTO_CHUNKS.attentionQuantum;
    const first = g.node("Min", [T, autoRows(rowKeys)]);
    const one = g.constI64([1]);
    const n = g.div(g.sub(g.add(T, first), one), first); // ceil(T / first)
    const even = g.div(g.sub(g.add(T, n), one), n); // ceil(T / n)
    const up = g.mul(g.div(g.add(even, g.constI64([q - 1])), g.constI64([q])), g.constI64([q]));
    loopSize = { rows: g.node("Min", [T, up]), trips: g.reshape(n, g.constI64([], [0])) };
    return loopSize;
  };

  // Chunk c covers rows [c·size, (c+1)·size) ∩ [0, total). The bounds are computed once per run and
  // shared by every layer; each layer's `start` also waits for `after` (the previous chunk's results:
  // an empty slice of their Shape is concatenated in), which orders the chunks one after another.
  const bounds = new Map<string, [string, string][]>();
  const chunkBounds = (size: string, total: string, count: number, c: number, after: string[]): [string, string] => {
    const key = `${size}/${total}/${count}`;
    let list = bounds.get(key);
    if (!list) {
      list = Array.from({ length: count }, (_, i) => [
        g.node("Min", [g.mul(size, g.constI64([i])), total]),
        g.node("Min", [g.mul(size, g.constI64([i + 1])), total]),
      ]);
      bounds.set(key, list);
    }
    const [start, end] = list[c];
    if (after.length === 0) return [start, end];
    return [g.concat([...after.map((v) => g.slice(g.shape(v), 0, 0, 0)), start], 0), end];
  };

  // RoPE tables for this run: angle[b,t,j] = position · invFreq[j], duplicated to dHead.
  const invFreq = g.constF32(ropeInvFreq(spec.rope, hd), [hd / 2], "inv_freq");
  const freqs = g.mul(g.unsqueeze(g.cast(pos, DataType.FLOAT), [2]), invFreq); // [B,T,hd/2]
  const emb = g.unsqueeze(g.concat([freqs, freqs], -1), [2]); // [B,T,1,hd]
  const cos = toCT(g.cos(emb));
  const sin = toCT(g.sin(emb));
  const half = hd / 2;
  /** x·cos + rotate_half(x)·sin on [B,T,heads,hd] (or on rows of T, with those rows of cos and sin). */
  const rope = (x: string, b: GraphBuilder = g, c = cos, s = sin): string => {
    const x1 = b.slice(x, 0, half, 3);
    const x2 = b.slice(x, half, hd, 3);
    return b.add(b.mul(x, c), b.mul(b.concat([b.neg(x2), x1], 3), s));
  };

  const ctx: ProbeContext = { spec, req, batch: B, seq: T };
  // made here, in the outer graph, because a layer's probes may be built inside a Loop body
  if (req.regionSum || req.patternMean) ctx.headMeanWeights = g.constF32(new Array<number>(H).fill(1 / H), [1, H], "head_mean_w");
  if (req.received || req.receivedHeads) {
    const qw = g.input(PROBE_INPUTS.queryWeight, DataType.FLOAT, ["batch", "seq"]);
    inputNames.push(qw);
    ctx.queryWeight5 = g.unsqueeze(qw, [1, 2, 3]);
  }
  if (req.regionSum) {
    const m = g.input(PROBE_INPUTS.regionOneHot, DataType.FLOAT, ["batch", "seq", req.regionSum.regions]);
    inputNames.push(m);
    ctx.region = m;
    ctx.regionT = g.transpose(m, [0, 2, 1]);
  }

  // ---- fused attention, for layers whose probes need no probabilities ----
  // com.microsoft MultiHeadAttention takes q/k/v as [B, T, heads·d] (no transposes) and runs
  // scores, softmax and P·V in one kernel; masks enter as an additive bias (0 or finfo.min, so
  // masked scores become exactly finfo.min, as with Where). Same query chunks as the decomposed path.
  // Off by default: on CPU (onnxruntime 1.30, one thread) the fused kernel measured 2–12 % slower
  // than the decomposed ops (bench/engine-perf.ts; docs/engine.md "Performance choices").
  const fuse = (options.fusedAttention ?? false) && !f16 && !options.interventions;
  let causalBias: string | undefined; // [B, 1, T, T], built once per run, for causal graphs
  const biasOf = (allowedRows: string) => g.where(g.node("Squeeze", [allowedRows, g.constI64([1])]), g.constF32([0], []), maskFill);
  const fusedAttention = (qRot: string, kRot: string, v: string): string => {
    const flat = (x: string) => g.reshape(x, dims([-1, T, H * hd]));
    // kv head j serves query heads j·G … j·G + G − 1 (HF's repeat_interleave)
    const perQueryHead = (x: string) => (G === 1 ? flat(x) : flat(g.node("Expand", [g.unsqueeze(x, [3]), g.constI64([1, 1, 1, G, 1])])));
    const qF = flat(qRot),
      kF = perQueryHead(kRot),
      vF = perQueryHead(v);
    if (spec.causal && !causalBias) causalBias = g.node("Expand", [biasOf(allowed), dims([1, 1, T, 1])]);
    const mha = (b: GraphBuilder, qc: string, bias?: string) =>
      b.node(
        "MultiHeadAttention",
        bias ? [qc, kF, vF, "", "", bias] : [qc, kF, vF],
        { num_heads: H, scale: float(1 / Math.sqrt(hd)) },
        1,
        "com.microsoft",
      );
    const contexts: string[] = [];
    for (let c = 0; c < slots; c++) {
      let qc = qF,
        rows: (x: string) => string = (x) => x;
      if (slots > 1) {
        const [start, end] = chunkBounds(fusedChunkSize, T, slots, c, c > 0 ? [contexts[c - 1]] : []);
        qc = g.node("Slice", [qF, start, end, g.constI64([1])]);
        rows = (x) => g.node("Slice", [x, start, end, g.constI64([2])]);
      }
      if (causalBias) contexts.push(mha(g, qc, rows(causalBias)));
      else {
        // bidirectional: a bias only when some key of this run is padding
        const keys = biasOf(allowed); // [B, 1, 1, T]
        contexts.push(
          g.ifElse(
            anyPadding!,
            (b) => [
              [mha(b, qc, b.node("Expand", [keys, b.concat([b.constI64([1, 1]), b.slice(b.shape(qc), 1, 2, 0), T], 0)])), DataType.FLOAT],
            ],
            (b) => [[mha(b, qc), DataType.FLOAT]],
          )[0],
        );
      }
    }
    const out = contexts.length === 1 ? contexts[0] : g.concat(contexts, 1); // [B, T, H·d]
    return g.reshape(out, g.constI64([-1, H * hd]));
  };

  // ---- the MLP block in row chunks of the [B·T, D] residual stream (chunks.ts) ----
  // Every op of the block is per row, so chunk c computes rows [c·m, (c+1)·m) ∩ [0, N) on its own and
  // the chunks are concatenated back: [rows, ffn] intermediates instead of [N, ffn]. As for the
  // attention chunks, an empty slice of the previous chunk's Shape orders chunk c after chunk c − 1.
  let mlpChunk: string | undefined; // rows per MLP chunk, [1] int64
  let flatRows: string | undefined; // B·T, [1] int64
  const mlpChunked = (xIn: string, block: (xc: string) => string): string => {
    if (slotsMlp === 1) return block(xIn);
    if (!flatRows || !mlpChunk) {
      flatRows = g.mul(B, T);
      const even = g.div(g.add(flatRows, g.constI64([slotsMlp - 1])), g.constI64([slotsMlp]));
      mlpChunk = chunking === "auto" ? g.node("Max", [even, g.node("Min", [flatRows, g.constI64([autoMlpRows(spec, budget)])])]) : even;
    }
    const parts: string[] = [];
    for (let c = 0; c < slotsMlp; c++) {
      const [start, end] = chunkBounds(mlpChunk, flatRows, slotsMlp, c, c > 0 ? [parts[c - 1]] : []);
      parts.push(block(g.node("Slice", [xIn, start, end, g.constI64([0])])));
    }
    return g.concat(parts, 0);
  };

  // ---- one query chunk of a decomposed layer's attention, emitted into `b` (the graph, or a Loop body) ----
  // scores [B,KV,G,Qc,K] = (q/√d) · kᵀ for the chunk's rows [start, end) (all rows when not given), the
  // masked softmax, the chunk's probe partials, and its context rows P·V [B,KV,G,Qc,hd].
  const attendChunk = (b: GraphBuilder, l: number, qc: string, kT5: string, v5: string, start?: string, end?: string) => {
    let allowedC = start && end && spec.causal ? b.node("Slice", [allowed, start, end, b.constI64([3])]) : allowed;
    if (iv) allowedC = iv.allowed(l, start, end, b); // built for this chunk's rows only
    let scores = toF32(b.matmul(qc, kT5), b);
    if (iv) scores = b.add(scores, iv.layerBias(l));
    // Nothing to mask (bidirectional, no padding in this run, no interventions): skip the Where,
    // a full pass over every [B, H, Qc, K] score tensor (8 % of a forward at T 1024).
    const masked = (bb: GraphBuilder, sc: string) => bb.softmax(bb.where(allowedC, sc, maskFill), -1);
    const p5 = anyPadding
      ? b.ifElse(
          anyPadding,
          (bb) => [[masked(bb, scores), DataType.FLOAT]],
          (bb) => [[bb.softmax(scores, -1), DataType.FLOAT]],
        )[0]
      : masked(b, scores);
    return { partial: chunkProbes(b, ctx, l, { p5, start, end }), context: b.matmul(toCT(p5, b), v5) };
  };

  // ---- a decomposed layer's attention as a Loop over query chunks ("auto"; see attentionLoopSize) ----
  // Iteration i computes rows [i·r', (i+1)·r') ∩ [0, T) exactly as an unrolled chunk does. Sums over
  // queries (received, region) are loop-carried (0 + c0 + c1 + …: the unrolled order); per-query
  // results (the context rows, self, argmax) are scan outputs, which onnxruntime stacks only when
  // every iteration has the same shape, so a short last chunk is padded to r' rows and the padding
  // is sliced off after the loop. Returns the context as [B, T, H·d] and the layer's combined partials.
  const attentionLoop = (
    l: number,
    queries: (b: GraphBuilder, start: string, end: string) => string,
    kT5: string,
    v5: string,
  ): { context: string; partials: ChunkPartials[] } => {
    const { rows, trips } = attentionLoopSize();
    type Part = "rh" | "region" | "diag" | "am" | "amp"; // the ChunkPartials a looped layer can have
    const sums: [Part, string][] = [];
    if (req.received || req.receivedHeads) sums.push(["rh", dims([B, KV, G, 1, T])]);
    if (req.regionSum) sums.push(["region", dims([B, req.regionSum.regions, T])]);
    const perQuery: [Part, number][] = [];
    if (req.self) perQuery.push(["diag", DataType.FLOAT]);
    if (req.argmax) perQuery.push(["am", DataType.INT64], ["amp", DataType.FLOAT]);
    const zeros = (shape: string) => g.node("ConstantOfShape", [shape]); // float 0 by default
    const loop = g.loop(
      trips,
      sums.map(([, shape]) => [zeros(shape), DataType.FLOAT]),
      (b, i, carried) => {
        const start = b.mul(b.reshape(i, b.constI64([1])), rows);
        const end = b.node("Min", [b.add(start, rows), T]);
        // pads = [0…0 | 0…0, r' − rows of this chunk, 0…0]: the end of axis `axis` only
        const short = b.sub(b.add(start, rows), end);
        const padEnd = (x: string, rank: number, axis: number) => {
          const parts = [b.constI64(new Array<number>(rank + axis).fill(0)), short];
          if (axis < rank - 1) parts.push(b.constI64(new Array<number>(rank - axis - 1).fill(0)));
          return b.node("Pad", [x, b.concat(parts, 0)]);
        };
        const { partial: part, context: c5 } = attendChunk(b, l, queries(b, start, end), kT5, v5, start, end);
        const cRows = b.reshape(b.transpose(b.reshape(c5, b.constI64([0, H, -1, hd])), [0, 2, 1, 3]), b.constI64([0, -1, H * hd]));
        return {
          carried: sums.map(([k], j) => b.add(carried[j], part[k]!)),
          scans: [[padEnd(cRows, 3, 1), CT], ...perQuery.map(([k, type]): [string, number] => [padEnd(part[k]!, 4, 3), type])],
        };
      },
    );
    // [n, B, …, r'] scans → [B, …, n·r'] → the first T rows
    const firstT = (x: string, axis: number) => g.node("Slice", [x, g.constI64([0]), T, g.constI64([axis])]);
    const [cScan, ...pqScans] = loop.scans;
    const context = firstT(g.reshape(g.transpose(cScan, [1, 0, 2, 3]), g.constI64([0, -1, H * hd])), 1);
    const partial: ChunkPartials = { values: [] };
    sums.forEach(([k], j) => (partial[k] = loop.carried[j]));
    perQuery.forEach(([k], j) => (partial[k] = firstT(g.reshape(g.transpose(pqScans[j], [1, 2, 3, 0, 4]), g.constI64([0, 0, 0, -1])), 3)));
    return { context, partials: [partial] };
  };

  // ---- embedding: [B,T] → [B·T, D] ----
  let x = g.reshape(g.gather(weight(spec.weights.embed, [spec.vocabSize, D]), ids, 0), g.constI64([-1, D]));
  const qScale = toCT(g.constF32([1 / Math.sqrt(hd)], []));

  for (let l = 0; l < spec.numLayers; l++) {
    const w = spec.weights.blocks[l];
    if (!w)
      throw new CheckpointError("Model spec lists fewer blocks than layers", {
        field: "weights.blocks",
        expected: `${spec.numLayers} blocks`,
        found: String(spec.weights.blocks.length),
      });
    const h = rmsNorm(x, w.attnNorm);
    const bias = (b?: string) => (spec.qkvBias ? b : undefined);
    const fusedLayer = fuse && !needsProbabilities(req, l);
    // a layer exposing its full map runs as one chunk under "auto" (chunks.ts); any other decomposed
    // layer runs its chunks as a Loop under "auto", and unrolled into `slots` chunks for a chunk count
    const fullMap = req.pattern?.layers.includes(l) || req.patternMean?.layers.includes(l);
    const looping = chunking === "auto" && !fullMap && !fusedLayer;
    // A looping layer without q probes projects its queries per chunk, inside the Loop: the whole
    // [B, T, H, d] q (and its scaled, transposed copy) is then never alive beside K and V.
    const qPerChunk = looping && !req.qk?.layers.includes(l);
    /** (q/√d) for rows of x [B·rows, D] (or all rows), grouped per kv head: [B,KV,G,rows,hd]. */
    const scaledQ = (xRows: string, b: GraphBuilder, c = cos, s = sin) => {
      const qc = b.reshape(linear(xRows, w.q, H * hd, D, bias(w.qBias), b), b.concat([B, b.constI64([-1, H, hd])], 0)); // [B,rows,H,hd]
      const qr = rope(qc, b, c, s);
      return {
        q: qc,
        qRot: qr,
        q5: b.reshape(b.transpose(b.mul(qr, qScale), [0, 2, 1, 3]), b.concat([B, b.constI64([KV, G, -1, hd])], 0)),
      };
    };
    const full = qPerChunk ? undefined : scaledQ(h, g);
    const k = g.reshape(linear(h, w.k, KV * hd, D, bias(w.kBias)), dims([-1, T, KV, hd]));
    const v = g.reshape(linear(h, w.v, KV * hd, D, bias(w.vBias)), dims([-1, T, KV, hd]));
    const kRot = rope(k);
    if (full) emitQkProbes(g, req, l, { q: full.q, k, qRot: full.qRot, kRot }, toF32);

    let o: string;
    if (fusedLayer) {
      o = fusedAttention(full!.qRot, kRot, v);
    } else {
      // scores [B,KV,G,Q,K] = (q/√d) · kᵀ, with q grouped per kv head and k broadcast over the group
      const kT5 = g.unsqueeze(g.transpose(kRot, [0, 2, 3, 1]), [2]); // [B,KV,1,hd,K]
      const v5 = g.unsqueeze(g.transpose(v, [0, 2, 1, 3]), [2]); // [B,KV,1,T,hd]
      let partials: ChunkPartials[] = [];
      const contexts: string[] = [];
      let after: string[] = []; // values of the previous chunk that the next one must wait for
      const K = looping ? 0 : chunking === "auto" ? 1 : slots;
      let looped: string | undefined; // [B, T, H·d]
      if (looping) {
        // rows [start, end) of every batch row of x (a [B, T, D] view), normed and projected per chunk
        const x3 = qPerChunk ? g.reshape(x, dims([-1, T, D])) : undefined;
        const queries = (b: GraphBuilder, start: string, end: string): string => {
          const rows = (t: string, axis: number) => b.node("Slice", [t, start, end, b.constI64([axis])]);
          if (!x3) return rows(full!.q5, 3);
          const xRows = b.reshape(rows(x3, 1), b.constI64([-1, D]));
          return scaledQ(rmsNorm(xRows, w.attnNorm, b), b, rows(cos, 1), rows(sin, 1)).q5;
        };
        ({ context: looped, partials } = attentionLoop(l, queries, kT5, v5));
      }
      for (let c = 0; c < K; c++) {
        const q5 = full!.q5; // an unrolled layer projects all its queries up front
        let qc = q5,
          start: string | undefined,
          end: string | undefined;
        if (K > 1) {
          // rows [c·cs, (c+1)·cs) ∩ [0, T); the empty Shape slices order this chunk after the last one
          [start, end] = chunkBounds(evenRows, T, K, c, after); // K > 1 only for a chunk count
          qc = g.node("Slice", [q5, start, end, g.constI64([3])]);
        }
        const { partial, context } = attendChunk(g, l, qc, kT5, v5, start, end);
        partials.push(partial);
        contexts.push(context);
        after = [contexts[c], ...partial.values];
      }
      const firstOutput = g.outputs.length;
      finishProbes(g, ctx, l, partials);
      // Make this layer's output projection wait for its probes. Otherwise ORT may schedule the
      // probe nodes (whose results only feed graph outputs) after later layers, keeping every
      // layer's [B, H, T, T] probabilities alive at once (measured: +800 MB at T 2048, 4 layers).
      // The dependency is an empty slice of each probe's Shape, concatenated into a Reshape target.
      const barrier = g.outputs.slice(firstOutput).map((out) => g.slice(g.shape(out.name), 0, 0, 0));
      const oShape = barrier.length ? g.concat([...barrier, g.constI64([-1, H * hd])], 0) : g.constI64([-1, H * hd]);
      if (looped) o = g.reshape(looped, oShape);
      else {
        const o5 = contexts.length === 1 ? contexts[0] : g.concat(contexts, 3); // [B,KV,G,T,hd]
        o = g.reshape(g.transpose(g.reshape(o5, dims([-1, H, T, hd])), [0, 2, 1, 3]), oShape);
      }
    }
    x = g.add(x, linear(o, w.o, D, H * hd));
    x = mlpChunked(x, (xc) => {
      const h2 = rmsNorm(xc, w.mlpNorm);
      const gate = linear(h2, w.gate, spec.intermediateSize, D);
      const up = linear(h2, w.up, spec.intermediateSize, D);
      return g.add(xc, linear(g.mul(g.mul(gate, g.sigmoid(gate)), up), w.down, D, spec.intermediateSize));
    });
  }

  const final = rmsNorm(x, spec.weights.finalNorm);
  inputNames.push(
    ...emitLogitHead(g, {
      hidden: final,
      batch: B,
      seq: T,
      vocab: spec.vocabSize,
      toF32,
      logitShift: spec.logitShift,
      head: (h) => linear(h, spec.weights.lmHead, spec.vocabSize, D),
      selectRows: options.logitRows ?? false,
    }),
  );

  const name = `floatscope_${spec.family}`;
  const bytes = g.encode(name, { family: spec.family, architecture: spec.architecture });
  const probes = probeOutputs(spec, req);
  // The builder emitted outputs in the same order probeOutputs lists them; check it (one rule, two readers).
  const head = new Set<string>(["logits", ...Object.values(SUMMARY_OUTPUTS)]);
  const emitted = g.outputs.map((o) => o.name).filter((n) => !head.has(n));
  if (emitted.length !== probes.length || emitted.some((n) => !probes.some((p) => p.name === n))) {
    throw new Error(`internal: probe outputs disagree: ${emitted.join(",")} vs ${probes.map((p) => p.name).join(",")}`);
  }
  return {
    bytes,
    externalFiles: [...files.keys()],
    externalBuffers: buffers,
    inputNames,
    probes,
    nodeCount: g.nodes.length,
    graph: g.toGraph(name),
  };
}

/** Parameter count of the tensors a spec uses (tied heads counted once). */
export function parameterCount(spec: ModelSpec, tensors: Map<string, TensorInfo>): number {
  const names = new Set<string>([spec.weights.embed, spec.weights.finalNorm, spec.weights.lmHead]);
  for (const b of spec.weights.blocks) for (const n of Object.values(b)) if (n) names.add(n);
  let n = 0;
  for (const name of names) {
    const t = tensors.get(name);
    if (t) n += numel(t.shape);
  }
  return n;
}
