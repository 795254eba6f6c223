/**
 * Tiny random Llama-family checkpoints for engine tests: safetensors files in HF naming, a
 * config.json, and the ModelSpec built by hand (independent of the family adapters).
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { readSafetensorsHeader, readTensorF32, writeSafetensors, type TensorToWrite } from "../../src/checkpoint/safetensors.js";
import type { SafetensorsDType, TensorInfo } from "../../src/checkpoint/types.js";
import type { BlockWeights, Family, ModelSpec, RopeSettings } from "../../src/graph/spec.js";
import { rng, toDtype } from "./family-checkpoints.js";

export interface TinyEngineOptions {
  family?: Family;
  layers?: number;
  hidden?: number;
  heads?: number;
  kvHeads?: number;
  headDim?: number;
  ffn?: number;
  vocab?: number;
  causal?: boolean;
  qkvBias?: boolean;
  tied?: boolean;
  logitShift?: 0 | 1;
  dtype?: "F32" | "F16" | "BF16";
  rope?: RopeSettings;
  /** Split the weights over this many shard files (default 1). */
  shards?: number;
  seed?: number;
  /** Scale of the q/k weights: larger → peakier attention. */
  qkScale?: number;
}

export interface TinyEngineCheckpoint {
  dir: string;
  spec: ModelSpec;
  tensors: Map<string, TensorInfo>;
  /** Weights as the checkpoint stores them, widened to f32 (for the reference forward). */
  weights: Map<string, Float32Array>;
  cleanup(): void;
}

/** mulberry32: a small seeded PRNG so fixtures are reproducible (the same one the family checkpoints use). */
export const seeded = rng;

export function makeTinyEngineCheckpoint(o: TinyEngineOptions = {}): TinyEngineCheckpoint {
  const L = o.layers ?? 2,
    D = o.hidden ?? 32,
    H = o.heads ?? 4,
    KV = o.kvHeads ?? H;
  const hd = o.headDim ?? D / H,
    F = o.ffn ?? 48,
    V = o.vocab ?? 61;
  const dtype = o.dtype ?? "F32";
  const rand = seeded(o.seed ?? 1);
  const uniform = (n: number, scale: number, offset = 0) => Float32Array.from({ length: n }, () => offset + (rand() * 2 - 1) * scale);
  const qk = o.qkScale ?? 2.5;
  const t: Record<string, Float32Array> = {};
  const shapes: Record<string, number[]> = {};
  const put = (name: string, shape: number[], scale: number, offset = 0) => {
    t[name] = uniform(
      shape.reduce((a, b) => a * b, 1),
      scale,
      offset,
    );
    shapes[name] = shape;
  };
  put("model.embed_tokens.weight", [V, D], 1);
  const blocks: BlockWeights[] = [];
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}`;
    const b: BlockWeights = {
      attnNorm: `${p}.input_layernorm.weight`,
      q: `${p}.self_attn.q_proj.weight`,
      k: `${p}.self_attn.k_proj.weight`,
      v: `${p}.self_attn.v_proj.weight`,
      o: `${p}.self_attn.o_proj.weight`,
      mlpNorm: `${p}.post_attention_layernorm.weight`,
      gate: `${p}.mlp.gate_proj.weight`,
      up: `${p}.mlp.up_proj.weight`,
      down: `${p}.mlp.down_proj.weight`,
    };
    put(b.attnNorm, [D], 0.2, 1);
    put(b.q, [H * hd, D], qk / Math.sqrt(D));
    put(b.k, [KV * hd, D], qk / Math.sqrt(D));
    put(b.v, [KV * hd, D], 1 / Math.sqrt(D));
    if (o.qkvBias) {
      b.qBias = `${p}.self_attn.q_proj.bias`;
      b.kBias = `${p}.self_attn.k_proj.bias`;
      b.vBias = `${p}.self_attn.v_proj.bias`;
      put(b.qBias, [H * hd], 0.5);
      put(b.kBias, [KV * hd], 0.5);
      put(b.vBias, [KV * hd], 0.5);
    }
    put(b.o, [D, H * hd], 1 / Math.sqrt(H * hd));
    put(b.mlpNorm, [D], 0.2, 1);
    put(b.gate, [F, D], 1.5 / Math.sqrt(D));
    put(b.up, [F, D], 1.5 / Math.sqrt(D));
    put(b.down, [D, F], 1 / Math.sqrt(F));
    blocks.push(b);
  }
  put("model.norm.weight", [D], 0.2, 1);
  if (!o.tied) put("lm_head.weight", [V, D], 2 / Math.sqrt(D));

  const dir = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-engine-"));
  const names = Object.keys(t);
  const shards = o.shards ?? 1;
  const tensors = new Map<string, TensorInfo>();
  const weights = new Map<string, Float32Array>();
  const weightMap: Record<string, string> = {};
  for (let s = 0; s < shards; s++) {
    const file =
      shards === 1 ? "model.safetensors" : `model-${String(s + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
    const part: Record<string, TensorToWrite> = {};
    names
      .filter((_, i) => i % shards === s)
      .forEach((n) => {
        part[n] = { dtype: dtype as SafetensorsDType, shape: shapes[n], data: toDtype(t[n], dtype) };
        weightMap[n] = file;
      });
    writeSafetensors(path.join(dir, file), part, { format: "pt" });
    for (const info of readSafetensorsHeader(path.join(dir, file)).tensors) {
      tensors.set(info.name, info);
      weights.set(info.name, readTensorF32(info));
    }
  }
  if (shards > 1) fs.writeFileSync(path.join(dir, "model.safetensors.index.json"), JSON.stringify({ metadata: {}, weight_map: weightMap }));

  const rope = o.rope ?? { theta: 10000 };
  const spec: ModelSpec = {
    family: o.family ?? "llama",
    architecture: "LlamaForCausalLM",
    vocabSize: V,
    hiddenSize: D,
    numLayers: L,
    numHeads: H,
    numKvHeads: KV,
    headDim: hd,
    intermediateSize: F,
    rmsNormEps: 1e-5,
    rope,
    maxPositionEmbeddings: 4096,
    causal: o.causal ?? true,
    qkvBias: !!o.qkvBias,
    logitShift: o.logitShift ?? 0,
    eosTokenIds: [V - 1],
    addsBos: false,
    weights: {
      embed: "model.embed_tokens.weight",
      finalNorm: "model.norm.weight",
      lmHead: o.tied ? "model.embed_tokens.weight" : "lm_head.weight",
      blocks,
    },
  };
  const config = {
    architectures: ["LlamaForCausalLM"],
    model_type: "llama",
    vocab_size: V,
    hidden_size: D,
    num_hidden_layers: L,
    num_attention_heads: H,
    num_key_value_heads: KV,
    head_dim: hd,
    intermediate_size: F,
    rms_norm_eps: 1e-5,
    rope_theta: rope.theta,
    max_position_embeddings: 4096,
    tie_word_embeddings: !!o.tied,
    attention_bias: !!o.qkvBias,
    eos_token_id: V - 1,
    torch_dtype: { F32: "float32", F16: "float16", BF16: "bfloat16" }[dtype],
  };
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 2));
  return { dir, spec, tensors, weights, cleanup: () => fs.rmSync(dir, { recursive: true, force: true }) };
}
