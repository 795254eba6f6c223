/**
 * MLP row chunks over MatMulNBits weights run as a Loop (src/graph/build/mlp.ts): each quantised
 * weight feeds exactly one node (onnxruntime prepacks once per node, and a saved optimized model
 * keeps one node's prepacked form), and the results equal the unchunked graph's. Q4 GGUF fixture
 * (Q4_0 gate/up, f32 down); a 64-row chunk budget makes a 150-token run three iterations, the last
 * one padded.
 */
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { buildModelGraph } from "../../src/graph/model.js";
import type { GraphProto, NodeProto } from "../../src/graph/onnx/proto.js";
import { createEngine } from "../../src/runtime/engine.js";

const Q4 = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "gguf", "parity-llama-q4.gguf");
const BUDGET = 64 * 960; // ffn 80: 64-row MLP chunks

function allNodes(g: GraphProto): NodeProto[] {
  const out: NodeProto[] = [];
  for (const n of g.node) {
    out.push(n);
    for (const a of n.attribute ?? []) if (a.g) out.push(...allNodes(a.g));
  }
  return out;
}

describe("MLP chunks over MatMulNBits weights: a Loop", () => {
  it("each quantised weight is read by one node, and the gate/up MatMulNBits sit in an MLP Loop body", () => {
    const ck = openCheckpoint(Q4);
    const spec = resolveModelSpec(ck);
    const built = buildModelGraph(spec, ck.tensors, { quantizedWeights: "matmulnbits", queryChunks: "auto", chunkBudgetBytes: BUDGET });
    const nbits = allNodes(built.graph).filter((n) => n.opType === "MatMulNBits");
    const byWeight = new Map<string, number>();
    for (const n of nbits) byWeight.set(n.input[1], (byWeight.get(n.input[1]) ?? 0) + 1);
    expect(byWeight.size).toBeGreaterThan(0);
    expect([...byWeight.values()].every((c) => c === 1)).toBe(true);
    const gate0 = [...byWeight.keys()].find((k) => k.includes("layers.0.mlp.gate_proj"))!;
    expect(gate0).toBeDefined();
    // not in the outer graph: inside a Loop body
    expect(built.graph.node.some((n) => n.opType === "MatMulNBits" && n.input[1] === gate0)).toBe(false);
    const loops = built.graph.node.filter((n) => n.opType === "Loop");
    expect(loops.some((l) => allNodes(l.attribute!.find((a) => a.name === "body")!.g!).some((n) => n.input[1] === gate0))).toBe(true);
  });

  it("the looped MLP (3 chunks, the last padded) gives the unchunked graph's logits", async () => {
    const ids = Int32Array.from({ length: 150 }, (_, i) => (i * 37 + 11) % 100);
    const run = async (queryChunks: "auto" | 1) => {
      const engine = await createEngine(openCheckpoint(Q4), {
        quantizedWeights: "matmulnbits",
        queryChunks,
        chunkBudgetBytes: BUDGET,
        probes: {},
        logitRows: false,
        threads: 1,
        weightCache: false,
      });
      try {
        return Float32Array.from((await engine.forward({ ids, batch: 1, seq: ids.length })).logits);
      } finally {
        await engine.dispose();
      }
    };
    const looped = await run("auto");
    const whole = await run(1);
    expect(looped.length).toBe(whole.length);
    let max = 0;
    for (let i = 0; i < whole.length; i++) max = Math.max(max, Math.abs(looped[i] - whole[i]));
    expect(max).toBeLessThan(1e-4);
    expect(whole.some((v) => Math.abs(v) > 1e-3)).toBe(true);
  });
});
