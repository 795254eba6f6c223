/**
 * `buildModelGraph`: one ModelSpec + the checkpoint's tensor index → ONNX bytes for a
 * Llama-family forward pass with in-graph attention probes. The parts are in ./build/
 * (docs/engine.md, "The graph builder's parts"); this file puts them in order.
 *
 * Graph inputs (all [batch, seq] with symbolic dims unless noted):
 *   input_ids int64 · position_ids int64 (computed in TS: cumsum(mask) − 1, clipped at 0) ·
 *   attention_mask bool (false = padding key) · query_weight float (normalised per row; only
 *   with received probes) · region_onehot float [batch, seq, region] (only with regionSum).
 * Outputs: `logits` float [batch, seq, vocab] (already shifted for logitShift 1, so row i is
 * the distribution for token i), then one output per probe, named canonically. With
 * `logitRows`, an extra input `logit_rows` selects the rows the head runs on, and per-row
 * vocabulary summaries are added (logits.ts). With `kvCache` (causal, probe-free), per-layer
 * `past.<l>.key/value` inputs and `present.<l>.key/value` outputs carry keys and values from one
 * run to the next, and `attention_mask` covers the past keys too (build/kv-cache.ts).
 *
 * Design (docs/engine.md): weights are external data pointing INTO the safetensors files
 * (zero copy), kept in HF [out, in] layout and used through Gemm(transB=1); BF16/F16 weights get
 * a Cast to the compute type; the residual stream is kept 2-D [batch·seq, hidden]; RMSNorm,
 * RoPE and attention are decomposed into plain ops so that every intermediate can be exposed;
 * GQA broadcasts q [B,KV,G,T,d] against k [B,KV,1,d,T] instead of repeating K/V.
 */
import type { TensorInfo } from "../checkpoint/types.js";
import { CheckpointError } from "../util/errors.js";
import { attentionBlock, attentionRun } from "./build/attention.js";
import { buildContext, type BuildContext, type BuildOptions } from "./build/context.js";
import { KV_CACHE_NAMES } from "./build/kv-cache.js";
import { linear } from "./build/linear.js";
import { mlpBlock, mlpRows } from "./build/mlp.js";
import { rmsNorm } from "./build/norm.js";
import { emitLogitHead, SUMMARY_OUTPUTS } from "./logits.js";
import type { GraphProto } from "./onnx/proto.js";
import { probeOutputs, type ProbeOutput } from "./probes.js";
import type { ModelSpec } from "./spec.js";

export type { BuildOptions } from "./build/context.js";
export { F32_MIN } from "./build/mask.js";

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
  /** Decoded weights: none or in memory ("memory"), read from the weight cache ("hit") or written to it ("written"). */
  weightCache: "memory" | "hit" | "written";
  inputNames: string[];
  probes: ProbeOutput[];
  nodeCount: number;
  /** The graph as plain objects (for inspection and tests). */
  graph: GraphProto;
}

function numel(shape: number[]): number {
  return shape.reduce((a, b) => a * b, 1);
}

export function buildModelGraph(spec: ModelSpec, tensors: Map<string, TensorInfo>, options: BuildOptions = {}): BuiltGraph {
  const ctx = buildContext(spec, tensors, options);
  try {
    return buildGraph(spec, options, ctx);
  } catch (e) {
    ctx.weights.sink.abort();
    throw e;
  }
}

function buildGraph(spec: ModelSpec, options: BuildOptions, ctx: BuildContext): BuiltGraph {
  const { g, D } = ctx;
  const run = attentionRun(ctx);
  const mlp = mlpRows(ctx);

  // embedding: [B,T] → [B·T, D]; the residual stream stays 2-D
  let x = g.reshape(g.gather(ctx.weights.weight(spec.weights.embed, [spec.vocabSize, D]), ctx.ids, 0), g.constI64([-1, D]));
  for (let l = 0; l < spec.numLayers; l++) {
    const w = spec.weights.blocks[l];
    if (!w)
      throw new CheckpointError("Model spec lists fewer blocks than layers", {
        field: "weights.blocks",
        expected: `${spec.numLayers} blocks`,
        found: String(spec.weights.blocks.length),
      });
    x = attentionBlock(ctx, run, l, w, x);
    x = mlpBlock(ctx, mlp, run.chunks, w, x);
  }

  const head = emitLogitHead(g, {
    hidden: rmsNorm(ctx, x, spec.weights.finalNorm),
    batch: ctx.B,
    seq: ctx.T,
    vocab: spec.vocabSize,
    toF32: (v) => ctx.toF32(v),
    logitShift: spec.logitShift,
    head: (h) => linear(ctx, h, spec.weights.lmHead, spec.vocabSize, D),
    selectRows: options.logitRows ?? false,
  });
  ctx.inputNames.push(...head);

  ctx.weights.sink.finish();
  const name = `floatscope_${spec.family}`;
  const bytes = g.encode(name, { family: spec.family, architecture: spec.architecture });
  const probes = probeOutputs(spec, ctx.req);
  // The builder emitted the outputs probeOutputs lists; check it (one rule, two readers).
  const headOutputs = new Set<string>(["logits", ...Object.values(SUMMARY_OUTPUTS)]);
  const present = new Set<string>(
    ctx.cache
      ? Array.from({ length: spec.numLayers }, (_, l) => [KV_CACHE_NAMES.presentKey(l), KV_CACHE_NAMES.presentValue(l)]).flat()
      : [],
  );
  const emitted = g.outputs.map((o) => o.name).filter((n) => !headOutputs.has(n) && !present.has(n));
  if (emitted.length !== probes.length || emitted.some((n) => !probes.some((p) => p.name === n))) {
    throw new Error(`internal: probe outputs disagree: ${emitted.join(",")} vs ${probes.map((p) => p.name).join(",")}`);
  }
  return {
    bytes,
    externalFiles: ctx.weights.files(),
    externalBuffers: ctx.weights.buffers,
    weightCache: ctx.weights.sink.state(),
    inputNames: ctx.inputNames,
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
