/**
 * The GGUF container's fixed vocabulary: metadata value types and the ggml tensor types with
 * their block layouts (elements per block, bytes per block), as llama.cpp's ggml defines them.
 * Only the types we can decode are listed by name; any other id is reported as unsupported.
 */

export const GGUF_MAGIC = 0x46554747; // "GGUF" read as a little-endian u32
export const GGUF_DEFAULT_ALIGNMENT = 32;

/** Metadata value type ids. */
export const GgufValueType = {
  UINT8: 0,
  INT8: 1,
  UINT16: 2,
  INT16: 3,
  UINT32: 4,
  INT32: 5,
  FLOAT32: 6,
  BOOL: 7,
  STRING: 8,
  ARRAY: 9,
  UINT64: 10,
  INT64: 11,
  FLOAT64: 12,
} as const;
export type GgufValueType = (typeof GgufValueType)[keyof typeof GgufValueType] | number;

/** Bytes of one scalar of each fixed-size value type (strings and arrays are variable). */
export const VALUE_BYTES: Readonly<Record<number, number>> = { 0: 1, 1: 1, 2: 2, 3: 2, 4: 4, 5: 4, 6: 4, 7: 1, 10: 8, 11: 8, 12: 8 };

export const VALUE_TYPE_NAMES: Readonly<Record<number, string>> = {
  0: "uint8",
  1: "int8",
  2: "uint16",
  3: "int16",
  4: "uint32",
  5: "int32",
  6: "float32",
  7: "bool",
  8: "string",
  9: "array",
  10: "uint64",
  11: "int64",
  12: "float64",
};

/** A metadata value: numbers (64-bit integers as bigint when beyond 2^53), strings, booleans, arrays. */
export type GgufValue = number | bigint | boolean | string | GgufValue[] | ArrayLike<number>;

export type GgmlTypeName = "F32" | "F16" | "BF16" | "F64" | "Q4_0" | "Q4_1" | "Q5_0" | "Q5_1" | "Q8_0" | "Q4_K" | "Q5_K" | "Q6_K";

export interface GgmlType {
  name: GgmlTypeName;
  /** Elements per block (1 for plain floats). */
  blockSize: number;
  /** Bytes per block. */
  typeSize: number;
}

/** ggml type id → layout, for the types this reader decodes. */
export const GGML_TYPES: Readonly<Record<number, GgmlType>> = {
  0: { name: "F32", blockSize: 1, typeSize: 4 },
  1: { name: "F16", blockSize: 1, typeSize: 2 },
  2: { name: "Q4_0", blockSize: 32, typeSize: 2 + 16 },
  3: { name: "Q4_1", blockSize: 32, typeSize: 2 + 2 + 16 },
  6: { name: "Q5_0", blockSize: 32, typeSize: 2 + 4 + 16 },
  7: { name: "Q5_1", blockSize: 32, typeSize: 2 + 2 + 4 + 16 },
  8: { name: "Q8_0", blockSize: 32, typeSize: 2 + 32 },
  12: { name: "Q4_K", blockSize: 256, typeSize: 2 + 2 + 12 + 128 },
  13: { name: "Q5_K", blockSize: 256, typeSize: 2 + 2 + 12 + 32 + 128 },
  14: { name: "Q6_K", blockSize: 256, typeSize: 128 + 64 + 16 + 2 },
  28: { name: "F64", blockSize: 1, typeSize: 8 },
  30: { name: "BF16", blockSize: 1, typeSize: 2 },
};

/** Names of ggml types we know of but do not decode, so the error can say what the file has. */
export const KNOWN_UNSUPPORTED: Readonly<Record<number, string>> = {
  9: "Q8_1",
  10: "Q2_K",
  11: "Q3_K",
  15: "Q8_K",
  16: "IQ2_XXS",
  17: "IQ2_XS",
  18: "IQ3_XXS",
  19: "IQ1_S",
  20: "IQ4_NL",
  21: "IQ3_S",
  22: "IQ2_S",
  23: "IQ4_XS",
  24: "I8",
  25: "I16",
  26: "I32",
  27: "I64",
  29: "IQ1_M",
  34: "TQ1_0",
  35: "TQ2_0",
  39: "MXFP4",
};

export const SUPPORTED_TYPE_LIST = Object.values(GGML_TYPES)
  .map((t) => t.name)
  .join(", ");
