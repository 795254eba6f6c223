/**
 * What a Hugging Face checkpoint folder is, once read and validated.
 * Nothing here loads tensor data: `TensorInfo` says where the bytes are, so the graph
 * builder can point ONNX external data straight into the safetensors files (zero copy).
 */

/** safetensors dtype strings, as written in the file header. */
export type SafetensorsDType = "F64" | "F32" | "F16" | "BF16" | "I64" | "I32" | "I16" | "I8" | "U64" | "U32" | "U16" | "U8" | "BOOL";

export interface TensorInfo {
  /** Tensor name as written in the checkpoint, e.g. `model.layers.0.self_attn.q_proj.weight`. */
  name: string;
  /** Absolute, symlink-resolved path of the safetensors file holding it (ORT refuses symlinks). */
  file: string;
  dtype: SafetensorsDType;
  shape: number[];
  /** Absolute byte offset of the first byte of data in `file` (8 + header length + begin). */
  byteOffset: number;
  byteLength: number;
  /**
   * Set for GGUF tensors whose stored bytes are not the values as they are (quantised blocks, or
   * q/k rows in llama.cpp's rotary order): `byteOffset`/`byteLength` then describe the stored
   * bytes, `dtype` and `shape` the decoded tensor, and readers must go through `readTensorBytes`
   * (which decodes). Absent for tensors usable in place (zero copy).
   */
  encoding?: GgmlEncoding;
}

export interface GgmlEncoding {
  /** ggml type of the stored bytes: F32, F16, BF16, Q8_0, Q4_0, Q4_1, Q5_0, Q5_1, Q4_K, Q5_K, Q6_K. */
  ggmlType: string;
  /** Undo llama.cpp's rotary row order with this many heads (LLaMA-family q/k projections). */
  unpermuteHeads?: number;
}

/** The tokenizer files of a checkpoint, parsed but not yet turned into a tokenizer. */
export interface TokenizerFiles {
  /** Path of tokenizer.json. */
  path: string;
  json: Record<string, unknown>;
  /** tokenizer_config.json (may be absent in some checkpoints: then `{}`). */
  config: Record<string, unknown>;
  /** The Jinja chat template string, if the checkpoint has one (tokenizer_config.json or chat_template.jinja). */
  chatTemplate?: string;
}

export interface Checkpoint {
  /** Folder the checkpoint was opened from (as given, resolved to absolute); for GGUF, the .gguf file. */
  dir: string;
  /** The file `config` was read from, for error messages (default `dir/config.json`). */
  configFile?: string;
  /** "gguf" when opened from a .gguf file (config and tokenizer then come from its metadata). */
  format?: "safetensors" | "gguf";
  /** config.json, parsed, untouched. Family adapters read their own keys from it. */
  config: Record<string, unknown>;
  /** generation_config.json when present. */
  generationConfig?: Record<string, unknown>;
  /** Every tensor of every shard, by name. */
  tensors: Map<string, TensorInfo>;
  /** Absent when the folder has no tokenizer.json (the engine then needs ids, not text). */
  tokenizer?: TokenizerFiles;
}
