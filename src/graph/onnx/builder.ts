/**
 * GraphBuilder: a thin, typed way to write an ONNX graph as a sequence of calls that return
 * value names. Every helper emits one ONNX node (opset 21, default domain) and returns the
 * name of its output, so model code reads like the maths:
 *
 *   const h = g.mul(g.reciprocal(g.sqrt(g.add(ms, eps))), x);
 *
 * Small constants are stored inline; large weights are `external` initializers pointing into
 * safetensors files (see build/weights.ts). Names are made unique with a per-prefix counter.
 */
import {
  AttributeType,
  DataType,
  encodeModel,
  type AttributeProto,
  type Dim,
  type GraphProto,
  type ModelProto,
  type NodeProto,
  type TensorProto,
  type ValueInfoProto,
} from "./proto.js";

export const OPSET = 21;
export const IR_VERSION = 10;

/** Attribute values: numbers are INT unless wrapped with `float()`; arrays of numbers are INTS. */
export type AttrValue =
  number | string | number[] | { float: number } | { floats: number[] } | { tensor: TensorProto } | { graph: GraphProto };

export function float(f: number): { float: number } {
  return { float: f };
}

function attribute(name: string, v: AttrValue): AttributeProto {
  if (typeof v === "number") return { name, type: AttributeType.INT, i: v };
  if (typeof v === "string") return { name, type: AttributeType.STRING, s: v };
  if (Array.isArray(v)) return { name, type: AttributeType.INTS, ints: v };
  if ("float" in v) return { name, type: AttributeType.FLOAT, f: v.float };
  if ("floats" in v) return { name, type: AttributeType.FLOATS, floats: v.floats };
  if ("graph" in v) return { name, type: AttributeType.GRAPH, g: v.graph };
  return { name, type: AttributeType.TENSOR, t: v.tensor };
}

export class GraphBuilder {
  readonly nodes: NodeProto[] = [];
  readonly initializers: TensorProto[] = [];
  readonly inputs: ValueInfoProto[] = [];
  readonly outputs: ValueInfoProto[] = [];
  private counters: Map<string, number>;
  private constCache = new Map<string, string>();
  /** Values renamed by `output()`: old name → graph output name. */
  private aliases = new Map<string, string>();

  /** @param parent a subgraph's enclosing graph: names stay unique across both, outer values are read by name. */
  constructor(parent?: GraphBuilder) {
    this.counters = parent ? parent.counters : new Map();
    if (parent) this.aliases = new Map(parent.aliases);
  }

  /** A fresh value name `${prefix}_${n}`. */
  fresh(prefix: string): string {
    const n = this.counters.get(prefix) ?? 0;
    this.counters.set(prefix, n + 1);
    return `${prefix}_${n}`;
  }

  /** A graph input; `shape` undefined: rank unknown (a Loop body's carried values). */
  input(name: string, elemType: number, shape?: Dim[]): string {
    this.inputs.push({ name, elemType, shape });
    return name;
  }

  /**
   * Expose `value` as graph output `name`. A value computed by a node of this graph is renamed in
   * place (an Identity would copy it: for a [batch, head, query, key] map that is a second T²
   * buffer); graph inputs, initializers and values already exposed get an Identity.
   */
  output(value: string, name: string, elemType: number, shape?: Dim[]): void {
    value = this.aliases.get(value) ?? value;
    if (value !== name) {
      const producer = this.nodes.find((n) => n.output.includes(value));
      const exposed = this.outputs.some((o) => o.name === value);
      if (producer && !exposed) {
        for (const n of this.nodes) {
          n.input = n.input.map((i) => (i === value ? name : i));
          n.output = n.output.map((o) => (o === value ? name : o));
        }
        this.aliases.set(value, name); // later nodes may still use the old name
      } else {
        this.node("Identity", [value], {}, name);
      }
    }
    this.outputs.push({ name, elemType, shape });
  }

  initializer(t: TensorProto): string {
    this.initializers.push(t);
    return t.name;
  }

  /** Inline float32 constant (cached by content for small ones). */
  constF32(values: ArrayLike<number>, dims: number[], prefix = "c"): string {
    const data = Float32Array.from(values);
    return this.constRaw(DataType.FLOAT, new Uint8Array(data.buffer), dims, prefix);
  }

  /** Inline int64 constant. */
  constI64(values: ArrayLike<number>, dims: number[] = [values.length], prefix = "c"): string {
    const data = BigInt64Array.from(Array.from(values, (v) => BigInt(v)));
    return this.constRaw(DataType.INT64, new Uint8Array(data.buffer), dims, prefix);
  }

  private constRaw(dataType: number, raw: Uint8Array, dims: number[], prefix: string): string {
    const key = raw.length <= 64 ? `${dataType}|${dims.join(",")}|${Buffer.from(raw).toString("hex")}` : undefined;
    const hit = key && this.constCache.get(key);
    if (hit) return hit;
    const name = this.fresh(prefix);
    this.initializer({ name, dataType, dims, rawData: raw });
    if (key) this.constCache.set(key, name);
    return name;
  }

  /** Emit one node. `outputs`: a name, a count of fresh outputs, or explicit names. */
  node(
    opType: string,
    inputs: string[],
    attrs: Record<string, AttrValue | undefined> = {},
    outputs: string | number | string[] = 1,
    domain?: string,
  ): string {
    const outs =
      typeof outputs === "string"
        ? [outputs]
        : typeof outputs === "number"
          ? Array.from({ length: outputs }, () => this.fresh(opType))
          : outputs;
    const attribute_: AttributeProto[] = [];
    for (const [k, v] of Object.entries(attrs)) if (v !== undefined) attribute_.push(attribute(k, v));
    const input = inputs.map((i) => this.aliases.get(i) ?? i);
    this.nodes.push({ name: this.fresh(`n_${opType}`), opType, domain, input, output: outs, attribute: attribute_ });
    return outs[0];
  }

  /** Emit a node with several outputs and return all their names. */
  nodeN(opType: string, inputs: string[], n: number, attrs: Record<string, AttrValue | undefined> = {}): string[] {
    const outs = Array.from({ length: n }, () => this.fresh(opType));
    this.node(opType, inputs, attrs, outs);
    return outs;
  }

  // ---- typed helpers (one ONNX op each) ----
  add(a: string, b: string): string {
    return this.node("Add", [a, b]);
  }
  sub(a: string, b: string): string {
    return this.node("Sub", [a, b]);
  }
  mul(a: string, b: string): string {
    return this.node("Mul", [a, b]);
  }
  div(a: string, b: string): string {
    return this.node("Div", [a, b]);
  }
  neg(a: string): string {
    return this.node("Neg", [a]);
  }
  sqrt(a: string): string {
    return this.node("Sqrt", [a]);
  }
  reciprocal(a: string): string {
    return this.node("Reciprocal", [a]);
  }
  sigmoid(a: string): string {
    return this.node("Sigmoid", [a]);
  }
  cos(a: string): string {
    return this.node("Cos", [a]);
  }
  sin(a: string): string {
    return this.node("Sin", [a]);
  }
  not(a: string): string {
    return this.node("Not", [a]);
  }
  and(a: string, b: string): string {
    return this.node("And", [a, b]);
  }
  greater(a: string, b: string): string {
    return this.node("Greater", [a, b]);
  }
  where(cond: string, a: string, b: string): string {
    return this.node("Where", [cond, a, b]);
  }
  matmul(a: string, b: string): string {
    return this.node("MatMul", [a, b]);
  }
  /** Y = A·Bᵀ (+ C): weights stay in HF [out, in] layout, no transpose copy. A must be 2-D. */
  gemmTransB(a: string, b: string, c?: string): string {
    return this.node("Gemm", c ? [a, b, c] : [a, b], { transB: 1 });
  }
  cast(a: string, to: number): string {
    return this.node("Cast", [a], { to });
  }
  shape(a: string): string {
    return this.node("Shape", [a]);
  }
  reshape(a: string, shape: string): string {
    return this.node("Reshape", [a, shape]);
  }
  transpose(a: string, perm: number[]): string {
    return this.node("Transpose", [a], { perm });
  }
  unsqueeze(a: string, axes: number[]): string {
    return this.node("Unsqueeze", [a, this.constI64(axes)]);
  }
  concat(xs: string[], axis: number): string {
    return this.node("Concat", xs, { axis });
  }
  gather(data: string, indices: string, axis = 0): string {
    return this.node("Gather", [data, indices], { axis });
  }
  /** Slice along one axis: [start, end). */
  slice(a: string, start: number, end: number, axis: number): string {
    return this.node("Slice", [a, this.constI64([start]), this.constI64([end]), this.constI64([axis])]);
  }
  softmax(a: string, axis = -1): string {
    return this.node("Softmax", [a], { axis });
  }
  /**
   * Reductions take ONE axis: ORT CPU's multi-axis ReduceMean was measured ~18× slower than two
   * single-axis reductions, so callers chain them.
   */
  reduceMean(a: string, axis: number, keepdims = true): string {
    return this.node("ReduceMean", [a, this.constI64([axis])], { keepdims: keepdims ? 1 : 0 });
  }
  reduceSum(a: string, axis: number, keepdims = true): string {
    return this.node("ReduceSum", [a, this.constI64([axis])], { keepdims: keepdims ? 1 : 0 });
  }
  reduceMax(a: string, axis: number, keepdims = true): string {
    return this.node("ReduceMax", [a, this.constI64([axis])], { keepdims: keepdims ? 1 : 0 });
  }
  argMax(a: string, axis: number, keepdims = false): string {
    return this.node("ArgMax", [a], { axis, keepdims: keepdims ? 1 : 0 });
  }
  range(start: string, limit: string, delta: string): string {
    return this.node("Range", [start, limit, delta]);
  }

  /**
   * `If(cond)`: each branch builds its own subgraph (reading outer values by name) and returns its
   * outputs with their element types; both must return as many values, of the same types. Only the
   * branch taken runs, which is how the graph skips work a run does not need.
   */
  ifElse(cond: string, thenBranch: (b: GraphBuilder) => [string, number][], elseBranch: (b: GraphBuilder) => [string, number][]): string[] {
    const branch = (build: (b: GraphBuilder) => [string, number][], label: string): GraphProto => {
      const b = new GraphBuilder(this);
      const outs = build(b);
      outs.forEach(([v, type]) => b.output(v, this.fresh(`${label}_out`), type));
      return b.toGraph(this.fresh(label));
    };
    const then = branch(thenBranch, "then");
    const else_ = branch(elseBranch, "else");
    if (then.output.length !== else_.output.length) throw new Error("internal: If branches return different counts");
    const outs = then.output.map(() => this.fresh("If"));
    this.node("If", [cond], { then_branch: { graph: then }, else_branch: { graph: else_ } }, outs);
    return outs;
  }

  /**
   * `Loop(trips)`: runs `body` `trips` times (an int64 scalar value), one iteration after the other.
   * `carried` are the loop-carried values (initial value, element type): the body receives their
   * current values and returns their next ones; the Loop's first outputs are their final values.
   * Each of the body's `scans` is stacked over the iterations along a new axis 0 (onnxruntime
   * requires the same shape in every iteration). The body reads outer values by name.
   */
  loop(
    trips: string,
    carried: [string, number][],
    body: (b: GraphBuilder, iteration: string, carried: string[]) => { carried: string[]; scans: [string, number][] },
  ): { carried: string[]; scans: string[] } {
    const b = new GraphBuilder(this);
    const iteration = b.input(this.fresh("loop_iter"), DataType.INT64, []);
    const condIn = b.input(this.fresh("loop_cond"), DataType.BOOL, []);
    const carriedIn = carried.map(([, type]) => b.input(this.fresh("loop_carried"), type));
    const made = body(b, iteration, carriedIn);
    if (made.carried.length !== carried.length) throw new Error("internal: Loop body returns a different number of carried values");
    b.output(condIn, this.fresh("loop_cond_out"), DataType.BOOL, []);
    made.carried.forEach((v, j) => b.output(v, this.fresh("loop_carried_out"), carried[j][1]));
    made.scans.forEach(([v, type]) => b.output(v, this.fresh("loop_scan_out"), type));
    const outs = [...carried, ...made.scans].map(() => this.fresh("Loop"));
    const always = this.constRaw(DataType.BOOL, new Uint8Array([1]), [], "true");
    this.node("Loop", [trips, always, ...carried.map(([v]) => v)], { body: { graph: b.toGraph(this.fresh("loop_body")) } }, outs);
    return { carried: outs.slice(0, carried.length), scans: outs.slice(carried.length) };
  }

  toGraph(name: string): GraphProto {
    return { name, node: this.nodes, initializer: this.initializers, input: this.inputs, output: this.outputs };
  }

  toModel(name: string, metadata: Record<string, string> = {}): ModelProto {
    return {
      irVersion: IR_VERSION,
      // Contrib operators (com.microsoft MatMulNBits) need their domain imported too.
      opsetImport: [
        { domain: "", version: OPSET },
        ...[...new Set(this.nodes.map((n) => n.domain).filter((d): d is string => !!d))].map((domain) => ({ domain, version: 1 })),
      ],
      producerName: "floatscope",
      producerVersion: "0.1.0",
      graph: this.toGraph(name),
      metadataProps: Object.entries(metadata).map(([key, value]) => ({ key, value })),
    };
  }

  encode(name: string, metadata?: Record<string, string>): Uint8Array {
    return encodeModel(this.toModel(name, metadata));
  }
}

export { DataType };
