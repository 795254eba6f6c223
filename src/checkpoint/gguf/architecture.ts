/**
 * GGUF metadata → the Hugging Face `config.json` our family adapters read, and GGUF tensor names
 * → Hugging Face tensor names, for llama.cpp's `llama`, `qwen2`, `llada` and `dream`
 * architectures. The checkpoint then goes through the same adapter tables (and the same checks)
 * as a safetensors folder.
 *
 * llama.cpp conventions undone here:
 * - dims are stored fastest-first, so a GGUF [in, out] matrix is HF's row-major [out, in];
 * - its converter permutes the rows of LLaMA-family (`llama`, `llada`) q and k projections so that
 *   each head's rotary pairs are adjacent (its "normal" RoPE); HF rotates half-head pairs. Row
 *   h·d + 2i + s of the file is row h·d + s·d/2 + i of the HF weight (d = head size, s ∈ {0, 1});
 *   qwen2 and dream are converted unpermuted (llama.cpp runs them with "neox" RoPE = HF's);
 * - no `output.weight` means the head is tied to the embedding.
 */
import { CheckpointError } from "../../util/errors.js";
import type { GgufMetadata } from "./metadata.js";
import type { GgufTensorEntry } from "./reader.js";

export type GgufArchitecture = "llama" | "qwen2" | "llada" | "dream";
export const GGUF_ARCHITECTURES: readonly GgufArchitecture[] = ["llama", "qwen2", "llada", "dream"];

export interface TensorMapping {
  /** Hugging Face name. */
  name: string;
  /** Undo llama.cpp's rotary row permutation with this many heads. */
  unpermuteHeads?: number;
}

export interface ArchitectureMapping {
  architecture: GgufArchitecture;
  config: Record<string, unknown>;
  /** GGUF tensor name → HF name; GGUF tensors not listed keep their name. */
  tensors: Map<string, TensorMapping>;
}

/** HF names by role: the Llama module layout (llama, qwen2, dream) and LLaDA's OLMo layout. */
const HF_NAMES = {
  hf: {
    token_embd: "model.embed_tokens.weight",
    output_norm: "model.norm.weight",
    output: "lm_head.weight",
    block: (l: number) => `model.layers.${l}`,
    parts: {
      attn_norm: "input_layernorm",
      attn_q: "self_attn.q_proj",
      attn_k: "self_attn.k_proj",
      attn_v: "self_attn.v_proj",
      attn_output: "self_attn.o_proj",
      ffn_norm: "post_attention_layernorm",
      ffn_gate: "mlp.gate_proj",
      ffn_up: "mlp.up_proj",
      ffn_down: "mlp.down_proj",
    } as Record<string, string>,
  },
  olmo: {
    token_embd: "model.transformer.wte.weight",
    output_norm: "model.transformer.ln_f.weight",
    output: "model.transformer.ff_out.weight",
    block: (l: number) => `model.transformer.blocks.${l}`,
    parts: {
      attn_norm: "attn_norm",
      attn_q: "q_proj",
      attn_k: "k_proj",
      attn_v: "v_proj",
      attn_output: "attn_out",
      ffn_norm: "ff_norm",
      ffn_gate: "ff_proj",
      ffn_up: "up_proj",
      ffn_down: "ff_out",
    } as Record<string, string>,
  },
};

const LAYOUT: Record<GgufArchitecture, { names: keyof typeof HF_NAMES; permuted: boolean; hfArch: string; modelType: string }> = {
  llama: { names: "hf", permuted: true, hfArch: "LlamaForCausalLM", modelType: "llama" },
  qwen2: { names: "hf", permuted: false, hfArch: "Qwen2ForCausalLM", modelType: "qwen2" },
  llada: { names: "olmo", permuted: true, hfArch: "LLaDAModelLM", modelType: "llada" },
  dream: { names: "hf", permuted: false, hfArch: "DreamModel", modelType: "dream" },
};

export function mapArchitecture(meta: GgufMetadata, tensors: GgufTensorEntry[]): ArchitectureMapping {
  const arch = meta.string("general.architecture");
  if (arch === undefined) {
    throw new CheckpointError("GGUF file has no architecture", {
      file: meta.file,
      field: "general.architecture",
      expected: GGUF_ARCHITECTURES.join(", "),
      found: "missing",
    });
  }
  if (!(GGUF_ARCHITECTURES as readonly string[]).includes(arch)) {
    throw new CheckpointError("Unsupported GGUF architecture", {
      file: meta.file,
      field: "general.architecture",
      expected: `one of ${GGUF_ARCHITECTURES.join(", ")}`,
      found: JSON.stringify(arch),
    });
  }
  const a = arch as GgufArchitecture;
  const k = (s: string) => `${a}.${s}`;
  for (const key of [k("attention.head_count"), k("attention.head_count_kv")]) {
    if (meta.entries.get(key)?.type === 9) {
      throw new CheckpointError("Per-layer head counts are not supported", {
        file: meta.file,
        field: key,
        expected: "one integer for all layers",
        found: "an array",
      });
    }
  }
  const byName = new Map(tensors.map((t) => [t.name, t]));
  const embd = byName.get("token_embd.weight");
  if (embd === undefined || embd.dims.length !== 2) {
    throw new CheckpointError("GGUF file has no 2-D token embedding", {
      file: meta.file,
      field: "token_embd.weight",
      expected: "a [hidden, vocab] tensor",
      found: embd ? `dims [${embd.dims}]` : "missing",
    });
  }
  const hidden = meta.requireInt(k("embedding_length"), { min: 1 });
  const heads = meta.requireInt(k("attention.head_count"), { min: 1 });
  const kvHeads = meta.int(k("attention.head_count_kv"), { min: 1, max: heads }) ?? heads;
  const headDim = meta.int(k("attention.key_length"), { min: 2 }) ?? hidden / heads;
  const valueDim = meta.int(k("attention.value_length"), { min: 2 });
  if (valueDim !== undefined && valueDim !== headDim) {
    throw new CheckpointError("Different key and value head sizes are not supported", {
      file: meta.file,
      field: k("attention.value_length"),
      expected: `${headDim} (= key_length)`,
      found: String(valueDim),
    });
  }
  const ropeDims = meta.int(k("rope.dimension_count"));
  if (ropeDims !== undefined && ropeDims !== headDim) {
    throw new CheckpointError("Partial rotary embeddings are not supported", {
      file: meta.file,
      field: k("rope.dimension_count"),
      expected: `${headDim} (the head size)`,
      found: String(ropeDims),
    });
  }
  const scaling = meta.string(k("rope.scaling.type"));
  if (scaling !== undefined && scaling !== "none") {
    throw new CheckpointError("RoPE scaling from GGUF is not supported", {
      file: meta.file,
      field: k("rope.scaling.type"),
      expected: '"none" or absent',
      found: JSON.stringify(scaling),
    });
  }
  if (byName.has("rope_freqs.weight")) {
    throw new CheckpointError("Per-frequency RoPE factors are not supported", {
      file: meta.file,
      field: "rope_freqs.weight",
      expected: "no rope_freqs tensor (plain RoPE)",
      found: "a rope_freqs tensor (Llama-3.1-style scaling)",
      hint: "convert the Hugging Face checkpoint to safetensors instead: its rope_scaling is supported there",
    });
  }
  const vocab = embd.dims[1];
  const tied = !byName.has("output.weight");
  const layers = meta.requireInt(k("block_count"), { min: 1 });
  const ff = meta.requireInt(k("feed_forward_length"), { min: 1 });
  const eps = meta.float(k("attention.layer_norm_rms_epsilon"), { min: 0, max: 1 });
  const theta = meta.float(k("rope.freq_base"), { min: Number.MIN_VALUE });
  const ctx = meta.requireInt(k("context_length"), { min: 1 });
  const ids = specialIds(meta, vocab);
  const causal = meta.bool(k("attention.causal"));
  const L = LAYOUT[a];
  const expectCausal = a === "llama" || a === "qwen2";
  if (causal !== undefined && causal !== expectCausal) {
    throw new CheckpointError("GGUF attention mode contradicts the architecture", {
      file: meta.file,
      field: k("attention.causal"),
      expected: `${expectCausal} for ${a}`,
      found: String(causal),
    });
  }

  const config: Record<string, unknown> = { architectures: [L.hfArch], model_type: L.modelType };
  if (a === "llada") {
    Object.assign(config, {
      d_model: hidden,
      n_layers: layers,
      n_heads: heads,
      n_kv_heads: kvHeads,
      mlp_hidden_size: ff,
      embedding_size: vocab,
      vocab_size: vocab,
      max_sequence_length: ctx,
      weight_tying: tied,
      block_type: "llama",
      activation_type: "silu",
      layer_norm_type: "rms",
      rope: true,
      alibi: false,
      include_bias: false,
      include_qkv_bias: byName.has("blk.0.attn_q.bias"),
      attention_layer_norm: false,
      input_emb_norm: false,
      scale_logits: false,
      layer_norm_with_affine: true,
    });
    if (eps !== undefined) config.rms_norm_eps = eps;
    if (theta !== undefined) config.rope_theta = theta;
  } else {
    Object.assign(config, {
      hidden_size: hidden,
      num_hidden_layers: layers,
      num_attention_heads: heads,
      num_key_value_heads: kvHeads,
      intermediate_size: ff,
      vocab_size: vocab,
      max_position_embeddings: ctx,
      tie_word_embeddings: tied,
      hidden_act: "silu",
    });
    if (a === "llama") Object.assign(config, { attention_bias: false, mlp_bias: false, head_dim: headDim });
    else Object.assign(config, { use_sliding_window: false, rope_scaling: null });
    if (eps !== undefined) config.rms_norm_eps = eps;
    if (theta !== undefined) config.rope_theta = theta;
  }
  if (ids.bos !== undefined) config.bos_token_id = ids.bos;
  // Chat models end a turn with EOT (Llama-3's <|eot_id|>): HF lists it among the EOS ids.
  const eos = [...new Set([ids.eos, ids.eot].filter((x): x is number => x !== undefined))];
  if (eos.length > 0) config.eos_token_id = eos.length === 1 ? eos[0] : eos;
  if (ids.pad !== undefined) config.pad_token_id = ids.pad;
  if (ids.mask !== undefined) config.mask_token_id = ids.mask;

  const names = HF_NAMES[L.names];
  const map = new Map<string, TensorMapping>();
  for (const t of tensors) {
    const top = (
      { "token_embd.weight": names.token_embd, "output_norm.weight": names.output_norm, "output.weight": names.output } as Record<
        string,
        string
      >
    )[t.name];
    if (top !== undefined) {
      map.set(t.name, { name: top });
      continue;
    }
    const m = /^blk\.(\d+)\.([a-z_]+)\.(weight|bias)$/.exec(t.name);
    const part = m ? names.parts[m[2]] : undefined;
    if (!m || part === undefined) continue;
    const l = Number(m[1]);
    const mapping: TensorMapping = { name: `${names.block(l)}.${part}.${m[3]}` };
    if (L.permuted && (m[2] === "attn_q" || m[2] === "attn_k")) mapping.unpermuteHeads = m[2] === "attn_q" ? heads : kvHeads;
    map.set(t.name, mapping);
  }
  return { architecture: a, config, tensors: map };
}

function specialIds(meta: GgufMetadata, vocab: number) {
  const id = (key: string) => meta.int(`tokenizer.ggml.${key}`, { min: 0, max: Math.max(vocab, 1 << 24) });
  return {
    bos: id("bos_token_id"),
    eos: id("eos_token_id"),
    eot: id("eot_token_id"),
    pad: id("padding_token_id"),
    mask: id("mask_token_id"),
  };
}
