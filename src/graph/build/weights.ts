/**
 * Checkpoint tensors as ONNX initializers, made once per name.
 *
 * Weights are never copied when they can be used in place: an initializer is ONNX external data
 * pointing INTO the safetensors (or GGUF) file (`location` = the real file's basename, `offset`,
 * `length`). Tensors whose stored bytes are not the values (GGUF quantised blocks) are decoded
 * once (weight-cache.ts): into a cache file onnxruntime maps (`cacheDir`), or handed to it as
 * in-memory external data under virtual locations. Either way every weight of such a checkpoint
 * goes the decoded way, so onnxruntime reads external data from one folder (or one table).
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { readTensorBytes } from "../../checkpoint/safetensors.js";
import type { TensorInfo } from "../../checkpoint/types.js";
import { CheckpointError } from "../../util/errors.js";
import type { GraphBuilder } from "../onnx/builder.js";
import { DataType } from "../onnx/proto.js";
import { cacheSink, memorySink, weightCacheKey, type DecodedSink, type DecodedTensor } from "./weight-cache.js";

const ONNX_DTYPE: Record<string, number> = { F32: DataType.FLOAT, F16: DataType.FLOAT16, BF16: DataType.BFLOAT16 };

export interface WeightStore {
  /** The checkpoint's tensor index. */
  tensors: Map<string, TensorInfo>;
  /** Initializer for a checkpoint tensor, shape-checked, cast to the compute type (cached by name). */
  weight(name: string, shape: number[]): string;
  /**
   * Initializers decoded from one checkpoint tensor (group `key`), made by `make` unless the weight
   * cache has them; undefined when `make` declines.
   */
  decoded(key: string, make: () => DecodedTensor[] | undefined): string[] | undefined;
  /** Real paths of the files referenced as external data. */
  files(): string[];
  /** Decoded weights held in memory, by virtual location. */
  buffers: { path: string; data: Uint8Array }[];
  /** The decoded weights' store (finish it after the last weight). */
  sink: DecodedSink;
}

export interface WeightStoreOptions {
  /** Put decoded weights in this cache folder (weight-cache.ts) rather than in memory. */
  cacheDir?: string;
  /** Settings that change the decoded bytes (part of the cache key). */
  cacheSettings?: Record<string, unknown>;
}

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

/** The checked dtype of a checkpoint tensor that must have `shape`. */
function checkedDtype(tensors: Map<string, TensorInfo>, name: string, shape: number[]): { info: TensorInfo; dt: number } {
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
  return { info, dt };
}

/** Weights of `tensors` as initializers of `g` (always the outer graph, also for a Loop body's layers). */
export function weightStore(
  g: GraphBuilder,
  tensors: Map<string, TensorInfo>,
  computeType: number,
  options: WeightStoreOptions = {},
): WeightStore {
  const files = new Map<string, string>(); // real path → location
  const realFiles = new Map<string, string>();
  const cache = new Map<string, string>();
  // Float tensors whose only encoding is llama.cpp's q/k row order stay in place (Gather below);
  // anything quantised has to be decoded, and then every weight goes the decoded way.
  const decodeAll = [...tensors.values()].some((t) => t.encoding !== undefined && !rowOrderOnly(t));
  const sink =
    decodeAll && options.cacheDir !== undefined
      ? cacheSink(
          options.cacheDir,
          weightCacheKey(
            [...tensors.values()].map((t) => t.file),
            { computeType, ...options.cacheSettings },
          ),
        )
      : memorySink();
  const toCompute = (v: string, dt: number) => (dt === computeType ? v : g.cast(v, computeType));

  const decoded = (key: string, make: () => DecodedTensor[] | undefined): string[] | undefined =>
    sink.group(key, make)?.map((t) =>
      g.initializer({
        name: t.name,
        dataType: t.dataType,
        dims: t.dims,
        externalData: [
          { key: "location", value: t.location },
          { key: "offset", value: String(t.offset) },
          { key: "length", value: String(t.length) },
        ],
      }),
    );

  /** A tensor used where it lies in its file (with its rows put back in HF order if GGUF permuted them). */
  const inPlace = (name: string, info: TensorInfo, dt: number, shape: number[]): string => {
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
    return toCompute(stored, storedDt);
  };

  const weight = (name: string, shape: number[]): string => {
    const cached = cache.get(name);
    if (cached) return cached;
    const { info, dt } = checkedDtype(tensors, name, shape);
    // Stored bytes are not the values (quantised blocks, permuted rows): decode once, pass in memory.
    const v = decodeAll
      ? toCompute(decoded(name, () => [{ name, dataType: dt, dims: shape, data: readTensorBytes(info) }])![0], dt)
      : inPlace(name, info, dt, shape);
    cache.set(name, v);
    return v;
  };

  return { tensors, weight, decoded, files: () => [...files.keys(), ...sink.files()], buffers: sink.buffers, sink };
}
