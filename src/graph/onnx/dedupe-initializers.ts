/**
 * Repairs an ONNX model that onnxruntime saved with external initializers: inside subgraphs (Loop
 * bodies, If branches) every initializer is written twice, which onnxruntime then refuses to load
 * ("… initializer name is not unique"). Graph::AddExternalInitializersToGraphProtoImpl re-adds a
 * subgraph's initializers without clearing the ones already serialised (an open upstream bug,
 * reproduced on onnxruntime 1.23–1.30). This keeps the last entry of each name per subgraph — the
 * re-added one, which is what a fixed onnxruntime writes — and leaves every other byte as it was.
 *
 * It walks the protobuf wire format directly (ModelProto.graph → GraphProto.node → NodeProto.attribute
 * → AttributeProto.g / .graphs), so no ONNX schema library is needed: only the fields on that path
 * are decoded; all others are copied verbatim.
 */

interface Field {
  field: number;
  wire: number;
  /** Whole field (tag included), and its payload (for length-delimited fields). */
  start: number;
  end: number;
  dataStart: number;
  dataEnd: number;
}

// protobuf field numbers (onnx.proto)
const MODEL_GRAPH = 7;
const GRAPH_NODE = 1;
const GRAPH_INITIALIZER = 5;
const NODE_ATTRIBUTE = 5;
const ATTRIBUTE_G = 6;
const ATTRIBUTE_GRAPHS = 11;
const TENSOR_NAME = 8;
const LEN = 2;

function readVarint(buf: Uint8Array, pos: number): [number, number] {
  let value = 0;
  let mul = 1;
  for (;;) {
    if (pos >= buf.length) throw new Error("truncated varint");
    const b = buf[pos++];
    value += (b & 0x7f) * mul;
    if (!(b & 0x80)) return [value, pos];
    mul *= 128;
  }
}

function varint(v: number): number[] {
  const out: number[] = [];
  do {
    let b = v % 128;
    v = Math.floor(v / 128);
    if (v > 0) b |= 0x80;
    out.push(b);
  } while (v > 0);
  return out;
}

function fields(buf: Uint8Array): Field[] {
  const out: Field[] = [];
  let p = 0;
  while (p < buf.length) {
    const start = p;
    let tag: number;
    [tag, p] = readVarint(buf, p);
    const wire = tag & 7;
    let dataStart = p;
    if (wire === 0) [, p] = readVarint(buf, p);
    else if (wire === 1) p += 8;
    else if (wire === 5) p += 4;
    else if (wire === LEN) {
      let len: number;
      [len, p] = readVarint(buf, p);
      dataStart = p;
      p += len;
    } else throw new Error(`unsupported wire type ${wire}`);
    if (p > buf.length) throw new Error("truncated field");
    out.push({ field: Math.floor(tag / 8), wire, start, end: p, dataStart, dataEnd: p });
  }
  return out;
}

function concat(parts: Uint8Array[]): Uint8Array {
  const out = new Uint8Array(parts.reduce((a, p) => a + p.length, 0));
  let k = 0;
  for (const p of parts) {
    out.set(p, k);
    k += p.length;
  }
  return out;
}

const lenField = (field: number, body: Uint8Array) => concat([Uint8Array.from([...varint(field * 8 + LEN), ...varint(body.length)]), body]);

/** Rewrite the length-delimited fields of `buf` that `edit` maps (by field number); copy the rest. */
function rewrite(buf: Uint8Array, edit: (f: Field, body: Uint8Array, i: number) => Uint8Array | null | undefined): Uint8Array {
  const parts: Uint8Array[] = [];
  fields(buf).forEach((f, i) => {
    const body = buf.subarray(f.dataStart, f.dataEnd);
    const made = f.wire === LEN ? edit(f, body, i) : undefined;
    if (made === null) return; // dropped
    parts.push(made ? lenField(f.field, made) : buf.subarray(f.start, f.end));
  });
  return concat(parts);
}

function tensorName(buf: Uint8Array): string {
  const f = fields(buf).find((x) => x.field === TENSOR_NAME && x.wire === LEN);
  return f ? new TextDecoder().decode(buf.subarray(f.dataStart, f.dataEnd)) : "";
}

export interface DedupeResult {
  bytes: Uint8Array;
  /** Initializer entries removed (repeats of a name within one subgraph). */
  dropped: number;
}

/** The model with each subgraph's repeated initializers removed (the main graph is left as it is). */
export function dedupeSubgraphInitializers(model: Uint8Array): DedupeResult {
  let dropped = 0;
  const graph = (buf: Uint8Array, sub: boolean): Uint8Array => {
    const last = new Map<string, number>();
    if (sub) {
      fields(buf).forEach((f, i) => {
        if (f.field === GRAPH_INITIALIZER && f.wire === LEN) last.set(tensorName(buf.subarray(f.dataStart, f.dataEnd)), i);
      });
    }
    return rewrite(buf, (f, body, i) => {
      if (sub && f.field === GRAPH_INITIALIZER && last.get(tensorName(body)) !== i) {
        dropped++;
        return null;
      }
      return f.field === GRAPH_NODE ? node(body) : undefined;
    });
  };
  const node = (buf: Uint8Array) => rewrite(buf, (f, body) => (f.field === NODE_ATTRIBUTE ? attribute(body) : undefined));
  const attribute = (buf: Uint8Array) =>
    rewrite(buf, (f, body) => (f.field === ATTRIBUTE_G || f.field === ATTRIBUTE_GRAPHS ? graph(body, true) : undefined));
  const bytes = rewrite(model, (f, body) => (f.field === MODEL_GRAPH ? graph(body, false) : undefined));
  return { bytes, dropped };
}
