/**
 * The hand-written ONNX protobuf encoder against protobufjs (an independent wire-format
 * implementation) on the same message, byte for byte; and an end-to-end check that
 * onnxruntime runs what GraphBuilder emits.
 *
 * The schema below is the subset of onnx/onnx.proto (proto2) that we emit, with the upstream
 * field numbers.
 */
import * as ort from "onnxruntime-node";
import protobuf from "protobufjs";
import { describe, expect, it } from "vitest";
import { DataType, GraphBuilder, float } from "../../src/graph/onnx/builder.js";
import { encodeModel, type ModelProto } from "../../src/graph/onnx/proto.js";

const SCHEMA = `
syntax = "proto2";
package onnx;
message AttributeProto {
  optional string name = 1; optional int32 type = 20; optional float f = 2; optional int64 i = 3; optional bytes s = 4;
  optional TensorProto t = 5; repeated float floats = 7; repeated int64 ints = 8; repeated bytes strings = 9;
}
message ValueInfoProto { optional string name = 1; optional TypeProto type = 2; }
message NodeProto {
  repeated string input = 1; repeated string output = 2; optional string name = 3; optional string op_type = 4;
  optional string domain = 7; repeated AttributeProto attribute = 5;
}
message ModelProto {
  optional int64 ir_version = 1; repeated OperatorSetIdProto opset_import = 8; optional string producer_name = 2;
  optional string producer_version = 3; optional string doc_string = 6; optional GraphProto graph = 7;
  repeated StringStringEntryProto metadata_props = 14;
}
message StringStringEntryProto { optional string key = 1; optional string value = 2; }
message GraphProto {
  repeated NodeProto node = 1; optional string name = 2; repeated TensorProto initializer = 5;
  optional string doc_string = 10; repeated ValueInfoProto input = 11; repeated ValueInfoProto output = 12;
}
message TensorProto {
  repeated int64 dims = 1; optional int32 data_type = 2; optional string name = 8; optional bytes raw_data = 9;
  repeated StringStringEntryProto external_data = 13; optional int32 data_location = 14;
}
message TensorShapeProto { message Dimension { oneof value { int64 dim_value = 1; string dim_param = 2; } } repeated Dimension dim = 1; }
message TypeProto { message Tensor { optional int32 elem_type = 1; optional TensorShapeProto shape = 2; } oneof value { Tensor tensor_type = 1; } }
message OperatorSetIdProto { optional string domain = 1; optional int64 version = 2; }
`;

/** Our plain-object ModelProto → the object protobufjs expects for the same message. */
function toProtobufjs(m: ModelProto): Record<string, unknown> {
  const tensor = (t: NonNullable<ModelProto["graph"]["initializer"][number]>) => ({
    dims: t.dims,
    dataType: t.dataType,
    name: t.name,
    ...(t.rawData ? { rawData: t.rawData } : {}),
    ...(t.externalData ? { externalData: t.externalData, dataLocation: 1 } : {}),
  });
  const vi = (v: ModelProto["graph"]["input"][number]) => ({
    name: v.name,
    type: {
      tensorType: {
        elemType: v.elemType,
        ...(v.shape ? { shape: { dim: v.shape.map((d) => (typeof d === "number" ? { dimValue: d } : { dimParam: d })) } } : {}),
      },
    },
  });
  return {
    irVersion: m.irVersion,
    opsetImport: m.opsetImport,
    producerName: m.producerName,
    producerVersion: m.producerVersion,
    metadataProps: m.metadataProps,
    graph: {
      name: m.graph.name,
      node: m.graph.node.map((n) => ({
        input: n.input,
        output: n.output,
        name: n.name,
        opType: n.opType,
        ...(n.domain ? { domain: n.domain } : {}),
        attribute: n.attribute.map((a) => {
          const o: Record<string, unknown> = { name: a.name, type: a.type };
          if (a.f !== undefined) o.f = a.f;
          if (a.i !== undefined) o.i = a.i;
          if (a.s !== undefined) o.s = Buffer.from(a.s);
          if (a.t) o.t = tensor(a.t);
          if (a.floats) o.floats = a.floats;
          if (a.ints) o.ints = a.ints;
          return o;
        }),
      })),
      initializer: m.graph.initializer.map(tensor),
      input: m.graph.input.map(vi),
      output: m.graph.output.map(vi),
    },
  };
}

function sampleGraph(): GraphBuilder {
  const g = new GraphBuilder();
  const x = g.input("x", DataType.FLOAT, ["batch", 3]);
  g.initializer({
    name: "w",
    dataType: DataType.BFLOAT16,
    dims: [152064, 3584],
    externalData: [
      { key: "location", value: "model-00001-of-00004.safetensors" },
      { key: "offset", value: "5368709120" },
      { key: "length", value: "1089994752" },
    ],
  });
  const c = g.constF32([1.5, -2, 3e-8], [3]);
  const y = g.transpose(g.add(x, c), [1, 0]);
  const z = g.node("LeakyRelu", [y], { alpha: float(0.125) });
  const s = g.reduceSum(g.unsqueeze(z, [-1, 0]), -2, false);
  g.node("Cast", [s], { to: DataType.FLOAT, note: "ünïcode" });
  g.output(s, "y", DataType.FLOAT, [3, "batch"]);
  return g;
}

describe("ONNX protobuf encoder", () => {
  it("writes the same bytes as protobufjs for every message kind we emit", () => {
    const model = sampleGraph().toModel("g", { family: "llama", note: "x" });
    const ours = encodeModel(model);
    const Model = protobuf.parse(SCHEMA).root.lookupType("onnx.ModelProto");
    const msg = Model.fromObject(toProtobufjs(model));
    const theirs = Model.encode(msg).finish();
    expect(Buffer.from(ours).equals(Buffer.from(theirs))).toBe(true);
    // and it decodes back to the same structure (negative ints, 64-bit offsets, symbolic dims)
    const back = Model.toObject(Model.decode(ours), { longs: Number, bytes: String }) as Record<string, any>;
    expect(back.graph.initializer[0].dims).toEqual([152064, 3584]);
    expect(back.graph.initializer[0].externalData[1]).toEqual({ key: "offset", value: "5368709120" });
    const unsq = back.graph.node.find((n: any) => n.opType === "Unsqueeze");
    expect(unsq).toBeDefined();
    const axesInit = back.graph.initializer.find((t: any) => t.name === unsq.input[1]);
    expect(Array.from(new BigInt64Array(Uint8Array.from(Buffer.from(axesInit.rawData, "base64")).buffer), Number)).toEqual([-1, 0]);
    expect(back.graph.node.find((n: any) => n.opType === "Transpose").attribute[0].ints).toEqual([1, 0]);
    expect(back.graph.input[0].type.tensorType.shape.dim).toEqual([{ dimParam: "batch" }, { dimValue: 3 }]);
  });

  it("encodes negative int64 attributes as 10-byte two's complement varints", () => {
    const g = new GraphBuilder();
    g.node("Softmax", ["a"], { axis: -1 }, "b");
    const bytes = encodeModel(g.toModel("t"));
    // AttributeProto.i (field 3, varint) = -1 → 0x18 then ff×9 01
    const needle = Buffer.from([0x18, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]);
    expect(Buffer.from(bytes).includes(needle)).toBe(true);
  });

  it("onnxruntime runs a GraphBuilder graph with symbolic dims", async () => {
    const g = new GraphBuilder();
    const x = g.input("x", DataType.FLOAT, ["batch", 3]);
    const m = g.reduceMean(g.add(x, g.constF32([1, 2, 3], [3])), -1, false);
    g.output(m, "mean", DataType.FLOAT, ["batch"]);
    g.output(g.argMax(g.neg(x), 1), "am", DataType.INT64, ["batch"]);
    const s = await ort.InferenceSession.create(g.encode("t"));
    const r = await s.run({ x: new ort.Tensor("float32", Float32Array.from([1, 1, 1, 0, 5, -3]), [2, 3]) });
    expect(Array.from(r.mean.data as Float32Array)).toEqual([3, Math.fround(8 / 3)]);
    expect(Array.from(r.am.data as BigInt64Array, Number)).toEqual([0, 2]);
    await s.release();
  });
});

describe("GraphBuilder.output", () => {
  it("renames a computed value in place, and later uses of the old name follow", async () => {
    const g = new GraphBuilder();
    const x = g.input("x", DataType.FLOAT, [2]);
    const y = g.mul(x, x);
    g.output(y, "sq", DataType.FLOAT, [2]);
    g.output(g.add(y, x), "sum", DataType.FLOAT, [2]); // uses y after it was renamed
    g.output(y, "sq_again", DataType.FLOAT, [2]); // a second name needs an Identity
    g.output(x, "x_out", DataType.FLOAT, [2]); // graph inputs are never renamed
    expect(g.nodes.map((n) => n.opType)).toEqual(["Mul", "Add", "Identity", "Identity"]);
    const s = await ort.InferenceSession.create(g.encode("t"));
    const r = await s.run({ x: new ort.Tensor("float32", Float32Array.from([2, 3]), [2]) });
    expect(Array.from(r.sq.data as Float32Array)).toEqual([4, 9]);
    expect(Array.from(r.sum.data as Float32Array)).toEqual([6, 12]);
    expect(Array.from(r.sq_again.data as Float32Array)).toEqual([4, 9]);
    expect(Array.from(r.x_out.data as Float32Array)).toEqual([2, 3]);
    await s.release();
  });
});
