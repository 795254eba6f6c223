/**
 * `openGgufCheckpoint(file)`: a .gguf file as the same `Checkpoint` a Hugging Face folder gives —
 * a config.json-equivalent object, tensor infos under Hugging Face names, and tokenizer files —
 * so the family adapters, the engine and every command take it unchanged. No tensor data is read.
 *
 * Tensors stored as F32/F16/BF16 in HF row order are used in place (ONNX external data points into
 * the .gguf, zero copy); quantised tensors and llama.cpp-permuted q/k rows carry an `encoding`
 * and are decoded to float32 when the graph is built (`readTensorBytes`).
 */
import * as path from "node:path";
import type { Checkpoint, SafetensorsDType, TensorInfo } from "../types.js";
import { mapArchitecture } from "./architecture.js";
import { GgufMetadata } from "./metadata.js";
import { readGgufHeader, type GgufHeader } from "./reader.js";
import { tokenizerFromGguf } from "./tokenizer-json.js";

const IN_PLACE = new Set(["F32", "F16", "BF16"]);

export interface GgufCheckpoint extends Checkpoint {
  format: "gguf";
  gguf: { version: 2 | 3; architecture: string; tensorTypes: Record<string, number>; alignment: number };
}

export function openGgufCheckpoint(file: string): GgufCheckpoint {
  const header = readGgufHeader(path.resolve(file));
  return checkpointFromHeader(header);
}

export function checkpointFromHeader(header: GgufHeader): GgufCheckpoint {
  const meta = new GgufMetadata(header.file, header.metadata);
  const mapped = mapArchitecture(meta, header.tensors);
  const tensors = new Map<string, TensorInfo>();
  const tensorTypes: Record<string, number> = {};
  for (const t of header.tensors) {
    const m = mapped.tensors.get(t.name);
    const name = m?.name ?? t.name;
    tensorTypes[t.type.name] = (tensorTypes[t.type.name] ?? 0) + 1;
    const inPlace = IN_PLACE.has(t.type.name) && m?.unpermuteHeads === undefined;
    const info: TensorInfo = {
      name,
      file: header.file,
      dtype: (inPlace ? t.type.name : "F32") as SafetensorsDType,
      shape: [...t.dims].reverse(),
      byteOffset: t.byteOffset,
      byteLength: t.byteLength,
    };
    if (!inPlace)
      info.encoding = { ggmlType: t.type.name, ...(m?.unpermuteHeads !== undefined ? { unpermuteHeads: m.unpermuteHeads } : {}) };
    tensors.set(name, info);
  }
  return {
    dir: header.file,
    configFile: header.file,
    format: "gguf",
    config: mapped.config,
    tensors,
    tokenizer: tokenizerFromGguf(meta),
    gguf: { version: header.version, architecture: mapped.architecture, tensorTypes, alignment: header.alignment },
  };
}
