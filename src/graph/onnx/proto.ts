/**
 * A dependency-free protobuf encoder for the dozen ONNX messages floatscope emits.
 *
 * Only encoding is needed: the graph is built here and handed to onnxruntime as bytes. Field
 * numbers are those of onnx/onnx.proto (proto2 syntax). Messages are plain objects; fields
 * that are undefined are not written, and fields go out in field-number order, as protobufjs
 * writes them (the unit test compares the bytes).
 *
 * Wire format recap: each field is a varint key (fieldNumber << 3 | wireType) followed by a
 * varint (wire type 0), 4 little-endian bytes (5) or a varint length and that many bytes (2).
 */

/** TensorProto.DataType values we use. */
export const DataType = {
  FLOAT: 1,
  UINT8: 2,
  INT8: 3,
  INT32: 6,
  INT64: 7,
  BOOL: 9,
  FLOAT16: 10,
  DOUBLE: 11,
  BFLOAT16: 16,
} as const;
export type DataTypeCode = (typeof DataType)[keyof typeof DataType];

/** AttributeProto.AttributeType values. */
export const AttributeType = { FLOAT: 1, INT: 2, STRING: 3, TENSOR: 4, GRAPH: 5, FLOATS: 6, INTS: 7, STRINGS: 8 } as const;

export interface StringStringEntry {
  key: string;
  value: string;
}
export interface OperatorSetId {
  domain: string;
  version: number;
}

export interface TensorProto {
  name: string;
  dataType: number;
  dims: number[];
  /** Inline little-endian bytes (small constants only). */
  rawData?: Uint8Array;
  /** When set, the data lives in a file: `location` (relative), `offset`, `length`. */
  externalData?: StringStringEntry[];
}

export interface AttributeProto {
  name: string;
  type: number;
  f?: number;
  i?: number;
  s?: string;
  t?: TensorProto;
  /** A subgraph (the branches of `If`). */
  g?: GraphProto;
  floats?: number[];
  ints?: number[];
  strings?: string[];
}

export interface NodeProto {
  name: string;
  opType: string;
  domain?: string;
  input: string[];
  output: string[];
  attribute: AttributeProto[];
}

/** A tensor dimension: a fixed size or a symbolic name such as "batch". */
export type Dim = number | string;

export interface ValueInfoProto {
  name: string;
  elemType: number;
  /** Undefined: shape unknown (rank too). */
  shape?: Dim[];
}

export interface GraphProto {
  name: string;
  node: NodeProto[];
  initializer: TensorProto[];
  input: ValueInfoProto[];
  output: ValueInfoProto[];
  docString?: string;
}

export interface ModelProto {
  irVersion: number;
  opsetImport: OperatorSetId[];
  producerName: string;
  producerVersion: string;
  graph: GraphProto;
  docString?: string;
  metadataProps?: StringStringEntry[];
}

const textEncoder = new TextEncoder();

/** Growable byte sink with the three wire encodings we need. */
class Writer {
  private buf = new Uint8Array(256);
  private len = 0;

  private ensure(extra: number): void {
    if (this.len + extra <= this.buf.length) return;
    let cap = this.buf.length * 2;
    while (cap < this.len + extra) cap *= 2;
    const next = new Uint8Array(cap);
    next.set(this.buf.subarray(0, this.len));
    this.buf = next;
  }

  byte(b: number): void {
    this.ensure(1);
    this.buf[this.len++] = b;
  }

  /** Unsigned varint for 0 ≤ v < 2^53; negative int64 values go through two's complement (10 bytes). */
  varint(v: number): void {
    if (!Number.isInteger(v)) throw new Error(`protobuf varint needs an integer, got ${v}`);
    if (v < 0) {
      let u = BigInt.asUintN(64, BigInt(v));
      while (u >= 0x80n) {
        this.byte(Number(u & 0x7fn) | 0x80);
        u >>= 7n;
      }
      this.byte(Number(u));
      return;
    }
    while (v >= 0x80) {
      this.byte((v % 0x80) | 0x80);
      v = Math.floor(v / 0x80);
    }
    this.byte(v);
  }

  key(field: number, wireType: 0 | 2 | 5): void {
    this.varint(field * 8 + wireType);
  }

  bytes(b: Uint8Array): void {
    this.ensure(b.length);
    this.buf.set(b, this.len);
    this.len += b.length;
  }

  float32(f: number): void {
    const tmp = new DataView(new ArrayBuffer(4));
    tmp.setFloat32(0, f, true);
    this.bytes(new Uint8Array(tmp.buffer));
  }

  finish(): Uint8Array {
    return this.buf.slice(0, this.len);
  }

  // -- field helpers (skip undefined) --
  intField(field: number, v: number | undefined): void {
    if (v === undefined) return;
    this.key(field, 0);
    this.varint(v);
  }
  stringField(field: number, s: string | undefined): void {
    if (s === undefined) return;
    this.bytesField(field, textEncoder.encode(s));
  }
  bytesField(field: number, b: Uint8Array): void {
    this.key(field, 2);
    this.varint(b.length);
    this.bytes(b);
  }
  floatField(field: number, f: number | undefined): void {
    if (f === undefined) return;
    this.key(field, 5);
    this.float32(f);
  }
  messageField<T>(field: number, m: T | undefined, enc: (w: Writer, m: T) => void): void {
    if (m === undefined) return;
    const sub = new Writer();
    enc(sub, m);
    this.bytesField(field, sub.finish());
  }
  /**
   * Repeated varints, one key per element: onnx.proto is proto2, where `dims` and `ints` are
   * not declared packed (parsers accept both; this matches what protobufjs writes).
   */
  repeatedInts(field: number, vs: number[] | undefined): void {
    for (const v of vs ?? []) this.intField(field, v);
  }
  repeatedFloats(field: number, vs: number[] | undefined): void {
    for (const v of vs ?? []) this.floatField(field, v);
  }
}

function encEntry(w: Writer, e: StringStringEntry): void {
  w.stringField(1, e.key);
  w.stringField(2, e.value);
}

function encOpset(w: Writer, o: OperatorSetId): void {
  w.stringField(1, o.domain);
  w.intField(2, o.version);
}

function encTensor(w: Writer, t: TensorProto): void {
  w.repeatedInts(1, t.dims);
  w.intField(2, t.dataType);
  w.stringField(8, t.name);
  if (t.rawData) w.bytesField(9, t.rawData);
  if (t.externalData) {
    for (const e of t.externalData) w.messageField(13, e, encEntry);
    w.intField(14, 1); // data_location = EXTERNAL
  }
}

function encAttribute(w: Writer, a: AttributeProto): void {
  w.stringField(1, a.name);
  w.floatField(2, a.f);
  w.intField(3, a.i);
  w.stringField(4, a.s);
  w.messageField(5, a.t, encTensor);
  w.messageField(6, a.g, encGraph);
  w.repeatedFloats(7, a.floats);
  w.repeatedInts(8, a.ints);
  for (const s of a.strings ?? []) w.stringField(9, s);
  w.intField(20, a.type);
}

function encNode(w: Writer, n: NodeProto): void {
  for (const i of n.input) w.stringField(1, i);
  for (const o of n.output) w.stringField(2, o);
  w.stringField(3, n.name);
  w.stringField(4, n.opType);
  for (const a of n.attribute) w.messageField(5, a, encAttribute);
  if (n.domain) w.stringField(7, n.domain);
}

function encDim(w: Writer, d: Dim): void {
  if (typeof d === "number") w.intField(1, d);
  else w.stringField(2, d);
}

function encValueInfo(w: Writer, v: ValueInfoProto): void {
  w.stringField(1, v.name);
  // TypeProto { tensor_type (1): TypeProto.Tensor { elem_type (1), shape (2): TensorShapeProto { dim (1) } } }
  w.messageField(2, v, (tw, vi) => {
    tw.messageField(1, vi, (tt, x) => {
      tt.intField(1, x.elemType);
      if (x.shape)
        tt.messageField(2, x.shape, (sw, dims) => {
          for (const d of dims) sw.messageField(1, d, encDim);
        });
    });
  });
}

function encGraph(w: Writer, g: GraphProto): void {
  for (const n of g.node) w.messageField(1, n, encNode);
  w.stringField(2, g.name);
  for (const t of g.initializer) w.messageField(5, t, encTensor);
  w.stringField(10, g.docString);
  for (const v of g.input) w.messageField(11, v, encValueInfo);
  for (const v of g.output) w.messageField(12, v, encValueInfo);
}

function encModel(w: Writer, m: ModelProto): void {
  w.intField(1, m.irVersion);
  w.stringField(2, m.producerName);
  w.stringField(3, m.producerVersion);
  w.stringField(6, m.docString);
  w.messageField(7, m.graph, encGraph);
  for (const o of m.opsetImport) w.messageField(8, o, encOpset);
  for (const e of m.metadataProps ?? []) w.messageField(14, e, encEntry);
}

/** Serialise a ModelProto to the bytes onnxruntime loads. */
export function encodeModel(m: ModelProto): Uint8Array {
  const w = new Writer();
  encModel(w, m);
  return w.finish();
}

/** Exposed for the byte-level tests against protobufjs. */
export function encodeTensor(t: TensorProto): Uint8Array {
  const w = new Writer();
  encTensor(w, t);
  return w.finish();
}
