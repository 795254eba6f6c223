/**
 * `--accuracy-level`: the MatMulNBits accuracy level of quantised GGUF layers (0 float32 compute,
 * 4 int8 activations). Checked like every runtime flag (a typed usage error naming the flag and the
 * allowed values), written into every MatMulNBits node, and reaching onnxruntime: on the Q4 GGUF
 * fixture level 4's logits differ from level 0's (the int8 kernel ran) by little.
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { UsageError } from "../../src/cli/args.js";
import { main } from "../../src/cli/main.js";
import { runtimeOptions } from "../../src/cli/runtime-flags.js";
import { openCheckpoint } from "../../src/checkpoint/checkpoint.js";
import { readSafetensorsHeader, readTensorF32 } from "../../src/checkpoint/safetensors.js";
import { resolveModelSpec } from "../../src/graph/adapters/index.js";
import { buildModelGraph } from "../../src/graph/model.js";

const Q4 = path.join(path.dirname(new URL(import.meta.url).pathname), "..", "fixtures", "gguf", "parity-llama-q4.gguf");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "floatscope-accuracy-level-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

describe("--accuracy-level", () => {
  it("takes 0 and 4; anything else is a usage error naming the flag and the allowed values", () => {
    expect(runtimeOptions("forward", {}).nbitsAccuracyLevel).toBeUndefined();
    expect(runtimeOptions("forward", { "accuracy-level": "0" }).nbitsAccuracyLevel).toBe(0);
    expect(runtimeOptions("forward", { "accuracy-level": "4" }).nbitsAccuracyLevel).toBe(4);
    for (const bad of ["2", "int8", "4.0"]) {
      let e: unknown;
      try {
        runtimeOptions("forward", { "accuracy-level": bad });
      } catch (x) {
        e = x;
      }
      expect(e).toBeInstanceOf(UsageError);
      expect((e as UsageError).field).toBe("--accuracy-level");
      expect((e as UsageError).expected).toBe("0 | 4");
      expect((e as UsageError).found).toBe(JSON.stringify(bad));
    }
  });

  it("sets accuracy_level on every MatMulNBits node", () => {
    const ck = openCheckpoint(Q4);
    const spec = resolveModelSpec(ck);
    for (const level of [0, 4] as const) {
      const { graph } = buildModelGraph(spec, ck.tensors, { probes: {}, quantizedWeights: "matmulnbits", nbitsAccuracyLevel: level });
      const nodes = graph.node.filter((n) => n.opType === "MatMulNBits");
      expect(nodes.length).toBe(13);
      for (const n of nodes) expect(n.attribute.find((a) => a.name === "accuracy_level")?.i).toBe(level);
    }
  });

  it("reaches onnxruntime from `floatscope forward`: level 4's logits differ from level 0's, by under 1 % of their range", async () => {
    const logits = async (level: string) => {
      const out = path.join(tmp, `l${level}.safetensors`);
      const argv = ["forward", Q4, "--ids", "1,5,9,100,31,7", "--quantized-weights", "matmulnbits", "--accuracy-level", level];
      const code = await main([...argv, "--probes", "none", "--logits", "--out", out], { out: () => {}, err: () => {} });
      expect(code).toBe(0);
      const t = readSafetensorsHeader(out).tensors.find((x) => x.name === "logits")!;
      return readTensorF32(t);
    };
    const a = await logits("0"),
      b = await logits("4");
    let maxDiff = 0,
      lo = Infinity,
      hi = -Infinity;
    for (let i = 0; i < a.length; i++) {
      maxDiff = Math.max(maxDiff, Math.abs(a[i] - b[i]));
      lo = Math.min(lo, a[i]);
      hi = Math.max(hi, a[i]);
    }
    expect(maxDiff).toBeGreaterThan(0);
    expect(maxDiff).toBeLessThan(0.01 * (hi - lo));
  });
});
