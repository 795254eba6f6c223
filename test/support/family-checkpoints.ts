/**
 * Write tiny random checkpoints of the four families in their real on-disk layout (config keys,
 * tensor names, single-file or sharded + index), for checkpoint/adapter tests. Independent of
 * the adapters: names and keys are spelled out here again, from the families' published modelling code.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { writeSafetensors, type TensorToWrite } from "../../src/checkpoint/safetensors.js";
import type { Family } from "../../src/graph/spec.js";
import { mulberry32 } from "../../src/util/rng.js";

export interface TinyOptions {
  layers?: number;
  hidden?: number;
  heads?: number;
  kvHeads?: number;
  ffn?: number;
  vocab?: number;
  /** LLaDA: padded embedding rows (>= vocab). */
  embeddingSize?: number;
  dtype?: "F32" | "F16" | "BF16";
  shards?: number;
  tied?: boolean;
  seed?: number;
  /** Merged into config.json last; a key set to undefined is deleted. */
  config?: Record<string, unknown>;
  /** Tensor names to leave out. */
  drop?: string[];
  /** Extra files {name: JSON object or string}. */
  files?: Record<string, unknown>;
}

/** Small seeded PRNG for reproducible weights: the library's mulberry32 (the same stream as before). */
export const rng = mulberry32;

/** f32 weights in the stored dtype: BF16 rounds to nearest even, F16 via `f32ToF16`. */
export function toDtype(x: Float32Array, dtype: "F32" | "F16" | "BF16"): ArrayBufferView {
  if (dtype === "F32") return x;
  const out = new Uint16Array(x.length);
  const u32 = new Uint32Array(x.buffer, x.byteOffset, x.length);
  for (let i = 0; i < x.length; i++) {
    if (dtype === "BF16") {
      const u = u32[i];
      out[i] = (u + 0x7fff + ((u >>> 16) & 1)) >>> 16;
    } else {
      out[i] = f32ToF16(x[i]);
    }
  }
  return out;
}

/** Round-to-nearest float → half (enough for small test values). */
export function f32ToF16(v: number): number {
  if (Number.isNaN(v)) return 0x7e00;
  const s = v < 0 || Object.is(v, -0) ? 0x8000 : 0;
  const a = Math.abs(v);
  if (a === Infinity || a >= 65520) return s | 0x7c00;
  if (a < 2 ** -24 / 2) return s;
  if (a < 2 ** -14) return s | Math.round(a / 2 ** -24);
  let e = Math.floor(Math.log2(a));
  let m = Math.round((a / 2 ** e - 1) * 1024);
  if (m === 1024) {
    m = 0;
    e += 1;
  }
  return s | ((e + 15) << 10) | m;
}

export function tinyTensorNames(family: Family, o: Required<Pick<TinyOptions, "layers">> & { bias: boolean; tied: boolean }): string[] {
  return Object.keys(tinyShapes(family, { ...o, hidden: 8, heads: 2, kvHeads: 1, ffn: 12, vocab: 16, embeddingSize: 16 }));
}

function tinyShapes(
  family: Family,
  o: {
    layers: number;
    hidden: number;
    heads: number;
    kvHeads: number;
    ffn: number;
    vocab: number;
    embeddingSize: number;
    bias: boolean;
    tied: boolean;
  },
): Record<string, number[]> {
  const D = o.hidden,
    d = D / o.heads,
    Q = o.heads * d,
    KV = o.kvHeads * d,
    F = o.ffn;
  const s: Record<string, number[]> = {};
  if (family === "llada") {
    const V = o.embeddingSize;
    s["model.transformer.wte.weight"] = [V, D];
    for (let l = 0; l < o.layers; l++) {
      const b = `model.transformer.blocks.${l}`;
      Object.assign(s, {
        [`${b}.attn_norm.weight`]: [D],
        [`${b}.q_proj.weight`]: [Q, D],
        [`${b}.k_proj.weight`]: [KV, D],
        [`${b}.v_proj.weight`]: [KV, D],
        [`${b}.attn_out.weight`]: [D, Q],
        [`${b}.ff_norm.weight`]: [D],
        [`${b}.ff_proj.weight`]: [F, D],
        [`${b}.up_proj.weight`]: [F, D],
        [`${b}.ff_out.weight`]: [D, F],
      });
    }
    s["model.transformer.ln_f.weight"] = [D];
    if (!o.tied) s["model.transformer.ff_out.weight"] = [V, D];
    return s;
  }
  const V = o.vocab;
  s["model.embed_tokens.weight"] = [V, D];
  for (let l = 0; l < o.layers; l++) {
    const b = `model.layers.${l}`;
    s[`${b}.input_layernorm.weight`] = [D];
    s[`${b}.self_attn.q_proj.weight`] = [Q, D];
    if (o.bias) s[`${b}.self_attn.q_proj.bias`] = [Q];
    s[`${b}.self_attn.k_proj.weight`] = [KV, D];
    if (o.bias) s[`${b}.self_attn.k_proj.bias`] = [KV];
    s[`${b}.self_attn.v_proj.weight`] = [KV, D];
    if (o.bias) s[`${b}.self_attn.v_proj.bias`] = [KV];
    s[`${b}.self_attn.o_proj.weight`] = [D, Q];
    s[`${b}.post_attention_layernorm.weight`] = [D];
    s[`${b}.mlp.gate_proj.weight`] = [F, D];
    s[`${b}.mlp.up_proj.weight`] = [F, D];
    s[`${b}.mlp.down_proj.weight`] = [D, F];
  }
  s["model.norm.weight"] = [D];
  if (!o.tied) s["lm_head.weight"] = [V, D];
  return s;
}

function tinyConfig(
  family: Family,
  o: { layers: number; hidden: number; heads: number; kvHeads: number; ffn: number; vocab: number; embeddingSize: number; tied: boolean },
): Record<string, unknown> {
  if (family === "llada") {
    return {
      architectures: ["LLaDAModelLM"],
      model_type: "llada",
      activation_type: "silu",
      alibi: false,
      block_type: "llama",
      d_model: o.hidden,
      n_layers: o.layers,
      n_heads: o.heads,
      n_kv_heads: o.kvHeads,
      mlp_hidden_size: o.ffn,
      mlp_ratio: 4,
      vocab_size: o.vocab,
      embedding_size: o.embeddingSize,
      weight_tying: o.tied,
      rope: true,
      rope_theta: 500000.0,
      rms_norm_eps: 1e-5,
      layer_norm_type: "rms",
      layer_norm_with_affine: true,
      include_bias: false,
      include_qkv_bias: false,
      attention_layer_norm: false,
      input_emb_norm: false,
      scale_logits: false,
      max_sequence_length: 64,
      mask_token_id: o.vocab - 1,
      bos_token_id: 1,
      eos_token_id: 2,
      pad_token_id: 2,
      use_cache: false,
    };
  }
  const common = {
    hidden_size: o.hidden,
    num_hidden_layers: o.layers,
    num_attention_heads: o.heads,
    num_key_value_heads: o.kvHeads,
    intermediate_size: o.ffn,
    vocab_size: o.vocab,
    rms_norm_eps: 1e-6,
    hidden_act: "silu",
    max_position_embeddings: 64,
    tie_word_embeddings: o.tied,
    bos_token_id: 1,
    eos_token_id: 2,
    rope_scaling: null,
  };
  if (family === "llama")
    return {
      architectures: ["LlamaForCausalLM"],
      model_type: "llama",
      ...common,
      rope_theta: 500000.0,
      attention_bias: false,
      mlp_bias: false,
    };
  if (family === "qwen2")
    return { architectures: ["Qwen2ForCausalLM"], model_type: "qwen2", ...common, rope_theta: 1e6, use_sliding_window: false };
  return {
    architectures: ["DreamModel"],
    model_type: "Dream",
    ...common,
    rope_theta: 1e6,
    use_sliding_window: false,
    mask_token_id: o.vocab - 1,
    pad_token_id: 2,
  };
}

/** Write a tiny checkpoint into `dir` (created); returns the config written. */
export function writeTinyCheckpoint(dir: string, family: Family, opts: TinyOptions = {}): Record<string, unknown> {
  const o = {
    layers: opts.layers ?? 2,
    hidden: opts.hidden ?? 8,
    heads: opts.heads ?? 2,
    kvHeads: opts.kvHeads ?? 1,
    ffn: opts.ffn ?? 12,
    vocab: opts.vocab ?? 16,
    tied: opts.tied ?? false,
    bias: family === "qwen2" || family === "dream",
  };
  const embeddingSize = opts.embeddingSize ?? o.vocab;
  const dtype = opts.dtype ?? "F32";
  fs.mkdirSync(dir, { recursive: true });
  const config = tinyConfig(family, { ...o, embeddingSize });
  for (const [k, v] of Object.entries(opts.config ?? {})) {
    if (v === undefined) delete config[k];
    else config[k] = v;
  }
  fs.writeFileSync(path.join(dir, "config.json"), JSON.stringify(config, null, 2));
  const rand = rng(opts.seed ?? 1);
  const tensors: Record<string, TensorToWrite> = {};
  for (const [name, shape] of Object.entries(tinyShapes(family, { ...o, embeddingSize }))) {
    if (opts.drop?.includes(name)) continue;
    const x = new Float32Array(shape.reduce((a, b) => a * b, 1));
    for (let i = 0; i < x.length; i++) x[i] = (rand() - 0.5) * 0.2;
    tensors[name] = { dtype, shape, data: toDtype(x, dtype) };
  }
  const shards = opts.shards ?? 1;
  if (shards === 1) {
    writeSafetensors(path.join(dir, "model.safetensors"), tensors, { format: "pt" });
  } else {
    const names = Object.keys(tensors);
    const per = Math.ceil(names.length / shards);
    const weightMap: Record<string, string> = {};
    let total = 0;
    for (let s = 0; s < shards; s++) {
      const file = `model-${String(s + 1).padStart(5, "0")}-of-${String(shards).padStart(5, "0")}.safetensors`;
      const group: Record<string, TensorToWrite> = {};
      for (const n of names.slice(s * per, (s + 1) * per)) {
        group[n] = tensors[n];
        weightMap[n] = file;
        total += tensors[n].data.byteLength;
      }
      writeSafetensors(path.join(dir, file), group, { format: "pt" });
    }
    fs.writeFileSync(
      path.join(dir, "model.safetensors.index.json"),
      JSON.stringify({ metadata: { total_size: total }, weight_map: weightMap }, null, 2),
    );
  }
  for (const [name, content] of Object.entries(opts.files ?? {})) {
    fs.writeFileSync(path.join(dir, name), typeof content === "string" ? content : JSON.stringify(content));
  }
  return config;
}
