/**
 * dedupeSubgraphInitializers (src/graph/onnx/dedupe-initializers.ts) repairs the models onnxruntime
 * saves with external initializers, where every subgraph initializer appears twice: a model with an
 * If branch holding a repeated initializer is refused by onnxruntime ("initializer name is not
 * unique"); after the repair it loads and computes the branch's value; a model with nothing
 * repeated comes back byte for byte.
 */
import * as ort from "onnxruntime-node";
import { describe, expect, it } from "vitest";
import { GraphBuilder, DataType } from "../../src/graph/onnx/builder.js";
import { dedupeSubgraphInitializers } from "../../src/graph/onnx/dedupe-initializers.js";
import { encodeModel } from "../../src/graph/onnx/proto.js";

/** y = If(c) then x + [10, 20] else x − 1, the then-branch's constant an initializer of the branch. */
function model(repeat: boolean): Uint8Array {
  const g = new GraphBuilder();
  const c = g.input("c", DataType.BOOL, [1]);
  const x = g.input("x", DataType.FLOAT, [2]);
  const [y] = g.ifElse(
    c,
    (b) => [[b.add(x, b.constF32([10, 20], [2])), DataType.FLOAT]],
    (b) => [[b.sub(x, g.constF32([1], [])), DataType.FLOAT]],
  );
  g.output(y, "y", DataType.FLOAT, [2]);
  const m = g.toModel("dedupe");
  if (repeat) {
    const then = m.graph.node.find((n) => n.opType === "If")!.attribute.find((a) => a.name === "then_branch")!.g!;
    expect(then.initializer).toHaveLength(1);
    then.initializer.push({ ...then.initializer[0] });
  }
  return encodeModel(m);
}

async function run(bytes: Uint8Array): Promise<number[]> {
  const s = await ort.InferenceSession.create(bytes, { logSeverityLevel: 3 });
  try {
    const out = await s.run({ c: new ort.Tensor("bool", Uint8Array.of(1), [1]), x: new ort.Tensor("float32", Float32Array.of(1, 2), [2]) });
    return Array.from(out.y.data as Float32Array);
  } finally {
    await s.release();
  }
}

describe("dedupeSubgraphInitializers", () => {
  it("a repeated branch initializer makes onnxruntime refuse the model; removing the repeat makes it load and compute", async () => {
    const broken = model(true);
    await expect(run(broken)).rejects.toThrow(/not unique/);
    const { bytes, dropped } = dedupeSubgraphInitializers(broken);
    expect(dropped).toBe(1);
    expect(await run(bytes)).toEqual([11, 22]);
  });

  it("a model with nothing repeated is returned unchanged", () => {
    const clean = model(false);
    const { bytes, dropped } = dedupeSubgraphInitializers(clean);
    expect(dropped).toBe(0);
    expect(Buffer.from(bytes).equals(Buffer.from(clean))).toBe(true);
  });
});
