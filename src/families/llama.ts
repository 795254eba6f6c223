/**
 * LLaMA (HF `LlamaForCausalLM`, e.g. Meta-Llama-3-8B-Instruct): causal, GQA, no biases, RoPE θ
 * from `rope_theta` with optional Llama-3 frequency scaling, BOS added by the tokenizer.
 */
import type { FamilyAdapter } from "./types.js";

export const llama: FamilyAdapter<"llama"> = {
  family: "llama",
  architectures: ["LlamaForCausalLM"],
  modelTypes: ["llama"],
  keys: {
    hiddenSize: "hidden_size",
    numLayers: "num_hidden_layers",
    numHeads: "num_attention_heads",
    numKvHeads: "num_key_value_heads",
    headDim: "head_dim",
    intermediateSize: "intermediate_size",
    vocabSize: ["vocab_size"],
    rmsNormEps: "rms_norm_eps",
    ropeTheta: "rope_theta",
    ropeScaling: "rope_scaling",
    maxPositionEmbeddings: "max_position_embeddings",
    tieEmbeddings: "tie_word_embeddings",
  },
  defaults: { ropeTheta: 10000, rmsNormEps: 1e-6, tieEmbeddings: false, addsBos: true },
  requires: [
    { key: "hidden_act", allowed: ["silu"], why: "the graph implements SwiGLU with SiLU" },
    { key: "attention_bias", allowed: [false], why: "attention biases (incl. o_proj) are not implemented for llama" },
    { key: "mlp_bias", allowed: [false], why: "MLP biases are not implemented" },
    { key: "pretraining_tp", allowed: [1], why: "tensor-parallel slicing changes the forward pass" },
  ],
  names: {
    embed: "model.embed_tokens.weight",
    finalNorm: "model.norm.weight",
    lmHead: "lm_head.weight",
    block: {
      attnNorm: "model.layers.{l}.input_layernorm.weight",
      q: "model.layers.{l}.self_attn.q_proj.weight",
      k: "model.layers.{l}.self_attn.k_proj.weight",
      v: "model.layers.{l}.self_attn.v_proj.weight",
      o: "model.layers.{l}.self_attn.o_proj.weight",
      mlpNorm: "model.layers.{l}.post_attention_layernorm.weight",
      gate: "model.layers.{l}.mlp.gate_proj.weight",
      up: "model.layers.{l}.mlp.up_proj.weight",
      down: "model.layers.{l}.mlp.down_proj.weight",
    },
    qkvBias: {
      q: "model.layers.{l}.self_attn.q_proj.bias",
      k: "model.layers.{l}.self_attn.k_proj.bias",
      v: "model.layers.{l}.self_attn.v_proj.bias",
    },
  },
  flags: { causal: true, qkvBias: false, logitShift: 0, masked: false },
  paper: { sampler: "arm", promptFormat: "paper-chat" },
  tinyModel: "tiny-llama",
  gguf: { architecture: "llama", layout: "hf", permuted: true },
};
