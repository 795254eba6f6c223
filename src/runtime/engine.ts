/**
 * `createEngine`: checkpoint → ONNX graph (with the chosen probes) → onnxruntime session, behind
 * the `Engine` interface samplers are written against (types.ts).
 *
 * One engine = one (checkpoint, probe set, device). Each `forward` validates its input, checks
 * the memory estimate against the budget, derives position ids and query weights in TS, runs the
 * graph, and returns logits plus probes keyed by their canonical names.
 */
import * as fs from "node:fs";
import * as ort from "onnxruntime-node";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import type { Checkpoint, TensorInfo } from "../checkpoint/types.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import { buildModelGraph, type BuiltGraph } from "../graph/model.js";
import { PROBE_INPUTS, type ProbeOutput } from "../graph/probes.js";
import { positionIdsFromMask } from "../graph/rope.js";
import type { ModelSpec } from "../graph/spec.js";
import { RuntimeError, SettingsError, keyword } from "../util/errors.js";
import { DEFAULT_PROBES, type ProbeRequest, type ProbeTensor } from "../util/probes.js";
import { checkBudget, defaultMemoryBudget, estimateMemory, type MemoryEstimate } from "./memory.js";
import { createSession, type DeviceRequest, type SessionOptions } from "./session.js";
import type { Engine, ForwardInput, ForwardOutput } from "./types.js";

export interface EngineOptions extends SessionOptions {
  /** Which statistics the graph computes (default `{received: true}`). */
  probes?: ProbeRequest;
  /** "f32" (default). "f16" only on CUDA: weights and matmuls in half, norms and softmax in f32. */
  computeDType?: "f32" | "f16";
  /** Refuse a forward whose estimate exceeds this (default 75 % of physical memory). */
  memoryBudgetBytes?: number;
  /** Attention in this many query chunks (default 1): less memory at long sequences, same results. */
  queryChunks?: number;
}

/** A checkpoint folder, an opened Checkpoint, or a spec with its tensor index (tests, custom specs). */
export type EngineSource = string | Checkpoint | { spec: ModelSpec; tensors: Map<string, TensorInfo> };

export interface OnnxEngine extends Engine {
  readonly computeDType: "f32" | "f16";
  readonly memoryBudgetBytes: number;
  readonly queryChunks: number;
  /** Graph size, for reports. */
  readonly nodeCount: number;
  estimateMemory(batch: number, seq: number): MemoryEstimate;
}

function resolveSource(source: EngineSource): { spec: ModelSpec; tensors: Map<string, TensorInfo> } {
  if (typeof source === "string") {
    const ckpt = openCheckpoint(source);
    return { spec: resolveModelSpec(ckpt), tensors: ckpt.tensors };
  }
  if ("spec" in source) return source;
  return { spec: resolveModelSpec(source), tensors: source.tensors };
}

export async function createEngine(source: EngineSource, options: EngineOptions = {}): Promise<OnnxEngine> {
  const { spec, tensors } = resolveSource(source);
  const device = keyword<DeviceRequest>(options.device ?? "cpu", ["cpu", "cuda", "auto"], { field: "device" });
  const computeDType = keyword<"f32" | "f16">(options.computeDType ?? "f32", ["f32", "f16"], { field: "computeDType" });
  if (computeDType === "f16" && device === "cpu") {
    throw new SettingsError("f16 compute is only available on CUDA", {
      field: "computeDType", expected: '"f32" on CPU', found: '"f16"', hint: 'use device: "cuda" (or "auto"), or computeDType: "f32"',
    });
  }
  const probes = options.probes ?? DEFAULT_PROBES;
  const warn = options.warn ?? ((m: string) => console.warn(m));
  const queryChunks = options.queryChunks ?? 1;
  let built = buildModelGraph(spec, tensors, { probes, computeDType, queryChunks });
  let created = await createSession(built.bytes, built.externalFiles, { ...options, device, warn });
  let dtype = computeDType;
  if (created.device === "cpu" && dtype === "f16") {
    // CPU has no half kernels (ORT would insert casts around every op): rebuild in f32.
    warn("floatscope: f16 compute needs CUDA; rebuilding the graph in f32 for CPU.");
    await created.session.release();
    if (created.tempDir) fs.rmSync(created.tempDir, { recursive: true, force: true });
    built = buildModelGraph(spec, tensors, { probes, computeDType: "f32", queryChunks });
    created = await createSession(built.bytes, built.externalFiles, { ...options, device: "cpu", warn });
    dtype = "f32";
  }
  return new OrtEngine(spec, probes, built, created.session, created.device, dtype, options.memoryBudgetBytes ?? defaultMemoryBudget(), queryChunks, created.tempDir);
}

function bad(field: string, expected: string, found: string): SettingsError {
  return new SettingsError("Invalid forward input", { field, expected, found });
}

class OrtEngine implements OnnxEngine {
  readonly nodeCount: number;
  private readonly outputs: ProbeOutput[];

  constructor(
    readonly spec: ModelSpec,
    readonly probes: ProbeRequest,
    built: BuiltGraph,
    private session: ort.InferenceSession,
    readonly device: "cpu" | "cuda",
    readonly computeDType: "f32" | "f16",
    readonly memoryBudgetBytes: number,
    readonly queryChunks: number,
    private tempDir?: string,
  ) {
    this.outputs = built.probes;
    this.nodeCount = built.nodeCount;
  }

  estimateMemory(batch: number, seq: number): MemoryEstimate {
    return estimateMemory(this.spec, { batch, seq, probes: this.probes, computeDType: this.computeDType, queryChunks: this.queryChunks });
  }

  async forward(input: ForwardInput): Promise<ForwardOutput> {
    const { batch: B, seq: T, ids } = input;
    if (!Number.isInteger(B) || B < 1 || !Number.isInteger(T) || T < 1) throw bad("batch/seq", "positive integers", `${B} × ${T}`);
    const N = B * T;
    if (ids.length !== N) throw bad("ids", `${N} ids (batch ${B} × seq ${T})`, `${ids.length}`);
    const V = this.spec.vocabSize;
    for (let i = 0; i < N; i++) {
      if (!(ids[i] >= 0 && ids[i] < V)) throw bad(`ids[${i}]`, `a token id in [0, ${V - 1}]`, String(ids[i]));
    }
    const mask = input.attentionMask ?? new Uint8Array(N).fill(1);
    if (mask.length !== N) throw bad("attentionMask", `${N} values`, `${mask.length}`);
    checkBudget(this.estimateMemory(B, T), this.memoryBudgetBytes, { batch: B, seq: T });

    const pos = positionIdsFromMask(mask, B, T);
    const feeds: Record<string, ort.Tensor> = {
      input_ids: new ort.Tensor("int64", BigInt64Array.from(ids, (v) => BigInt(v)), [B, T]),
      position_ids: new ort.Tensor("int64", BigInt64Array.from(pos, (v) => BigInt(v)), [B, T]),
      attention_mask: new ort.Tensor("bool", Uint8Array.from(mask, (v) => (v ? 1 : 0)), [B, T]),
    };
    if (this.probes.received || this.probes.receivedHeads) {
      const w = input.queryWeight ?? Float32Array.from(mask, (v) => (v ? 1 : 0));
      if (w.length !== N) throw bad("queryWeight", `${N} values`, `${w.length}`);
      // normalised per batch row here, so the graph's w·P is directly the weighted mean
      const norm = new Float32Array(N);
      for (let b = 0; b < B; b++) {
        let s = 0;
        for (let t = 0; t < T; t++) s += w[b * T + t];
        if (s > 0) for (let t = 0; t < T; t++) norm[b * T + t] = w[b * T + t] / s;
      }
      feeds[PROBE_INPUTS.queryWeight] = new ort.Tensor("float32", norm, [B, T]);
    }
    if (this.probes.regionSum) {
      const R = this.probes.regionSum.regions;
      const m = input.regionOneHot;
      if (!m || m.length !== N * R) {
        throw bad("regionOneHot", `[batch ${B}, seq ${T}, region ${R}] = ${N * R} values (the regionSum probe is on)`, m ? `${m.length}` : "nothing");
      }
      feeds[PROBE_INPUTS.regionOneHot] = new ort.Tensor("float32", m, [B, T, R]);
    }

    let res: ort.InferenceSession.OnnxValueMapType;
    try {
      res = await this.session.run(feeds);
    } catch (e) {
      throw new RuntimeError("onnxruntime failed during the forward pass", {
        field: "session.run", expected: "a successful run", found: e instanceof Error ? e.message.slice(0, 400) : String(e),
        hint: "a memory allocation failure here usually means the sequence is too long: lower memoryBudgetBytes to be refused earlier",
      });
    }
    const probes = new Map<string, ProbeTensor>();
    for (const p of this.outputs) {
      const t = res[p.name];
      const data = p.dtype === "int32" ? (t.data as Int32Array) : (t.data as Float32Array);
      // a full pattern comes out in the grouped 5-D layout [batch, kvHead, group, query, key]; head = kvHead·group + g
      const dims = t.dims.length === 5 ? [t.dims[0], t.dims[1] * t.dims[2], t.dims[3], t.dims[4]] : [...t.dims];
      probes.set(p.name, { name: p.name, axes: p.axes, dims, data });
    }
    return { logits: res.logits.data as Float32Array, vocabSize: V, probes };
  }

  async dispose(): Promise<void> {
    await this.session.release();
    if (this.tempDir) fs.rmSync(this.tempDir, { recursive: true, force: true });
  }
}
