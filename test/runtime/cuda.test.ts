/**
 * Device tier (opt-in): runs only where onnxruntime-node's CUDA execution provider is installed
 * (`bash scripts/setup-cuda.sh`) and every library it links resolves, the NVIDIA driver's included.
 * Skipped everywhere else, including CI and machines with the provider but no driver. Checks that
 * the CUDA session really runs on the GPU and that f32 and f16 compute
 * match the Float64 reference forward and the parity fixtures' HF references.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { referenceForward } from "../../src/reference/forward.js";
import { createEngine } from "../../src/runtime/engine.js";
import { cudaProviderProblem } from "../../src/runtime/cuda-provider.js";
import { probeName } from "../../src/util/probes.js";
import { expectClose } from "../support/close.js";
import { makeTinyEngineCheckpoint, type TinyEngineCheckpoint } from "../support/engine-tiny.js";

const made: TinyEngineCheckpoint[] = [];
afterAll(() => made.forEach((m) => m.cleanup()));

describe.skipIf(cudaProviderProblem() !== undefined)("CUDA execution provider (device tier)", () => {
  it.each(["f32", "f16"] as const)("%s compute matches the reference forward", async (computeDType) => {
    const ck = makeTinyEngineCheckpoint({ causal: false, heads: 4, kvHeads: 2, qkvBias: true, dtype: "BF16", seed: 61 });
    made.push(ck);
    const warnings: string[] = [];
    const engine = await createEngine(
      { spec: ck.spec, tensors: ck.tensors },
      {
        device: "cuda",
        computeDType,
        probes: { received: true, argmax: true, pattern: { layers: [1] } },
        warn: (m) => warnings.push(m),
      },
    );
    expect(warnings).toEqual([]);
    expect(engine.device).toBe("cuda");
    expect(engine.computeDType).toBe(computeDType);
    const ids = Int32Array.from({ length: 24 }, (_, i) => (i * 11 + 3) % ck.spec.vocabSize);
    const out = await engine.forward({ ids, batch: 2, seq: 12 });
    const ref = referenceForward(ck.spec, ck.weights, { ids, batch: 2, seq: 12 });
    const [logitTol, probTol] = computeDType === "f32" ? [2e-4, 1e-5] : [0.05, 0.01];
    expectClose(out.logits, ref.logits, logitTol, `${computeDType} logits`);
    expectClose(out.probes.get(probeName.pattern(1))!.data, ref.attention[1], probTol, `${computeDType} pattern`);
    await engine.dispose();
  });

  it("f32 on CUDA matches HF on the parity fixtures", async () => {
    const root = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "parity");
    for (const variant of fs.readdirSync(root).filter((d) => fs.existsSync(path.join(root, d, "inputs.json")))) {
      const dir = path.join(root, variant);
      const inp = JSON.parse(fs.readFileSync(path.join(dir, "inputs.json"), "utf8"));
      const ref = new Map(readSafetensorsHeader(path.join(dir, "reference.safetensors")).tensors.map((t) => [t.name, t]));
      const engine = await createEngine(path.join(dir, "model"), { device: "cuda", probes: {} });
      expect(engine.device).toBe("cuda");
      const out = await engine.forward({
        ids: Int32Array.from(inp.input_ids.flat()),
        batch: inp.batch,
        seq: inp.seq,
        attentionMask: Uint8Array.from(inp.attention_mask.flat()),
      });
      const want = readTensorF32(ref.get("logits")!);
      const V = engine.spec.vocabSize;
      for (let b = 0; b < inp.batch; b++)
        for (let t = 0; t < inp.seq; t++) {
          if (inp.logits_rows[b][t] !== 1) continue;
          const at = (b * inp.seq + t) * V;
          expectClose(out.logits.subarray(at, at + V), want.subarray(at, at + V), 1e-4, `${variant} logits [${b},${t}]`);
        }
      await engine.dispose();
    }
  });
});
