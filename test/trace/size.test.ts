import { describe, expect, it } from "vitest";
import { estimateTraceBytes } from "../../src/trace/size.js";
import { syntheticTraceBytes } from "../support/synthetic-trace.js";

const dims = (seq: number, layers: number, steps: number) => ({ seq, layers, steps, prompt: seq - 2 * steps, transfersPerStep: 2 });

describe("trace size with the default probes (received only)", () => {
  it("1024-token canvas, 32 layers, 64 steps: measured bytes, close to the estimate, about 4·T·L bytes per step", () => {
    const bytes = syntheticTraceBytes(dims(1024, 32, 64));
    console.log(`trace size, T 1024, 32 layers, 64 steps, default probes: ${bytes} bytes (${(bytes / 2 ** 20).toFixed(2)} MiB)`);
    const probeBytes = 65 * 32 * 1024 * 4; // 64 steps + final pass, float32 [T] per layer
    expect(bytes).toBeGreaterThan(probeBytes);
    expect(bytes).toBeLessThan(probeBytes * 1.1);
    const est = estimateTraceBytes(
      { received: true },
      { numLayers: 32, numHeads: 32, numKvHeads: 32, headDim: 128, seq: 1024, steps: 64, transfersPerStep: 2 },
    );
    expect(Math.abs(est - bytes) / bytes).toBeLessThan(0.02);
  });

  it("grows as O(steps × layers × T): each extra (step, layer, token) costs 4 bytes plus header overhead", () => {
    // Marginal cost per added unit of steps·(layers + 1)·T (the +1 is the canvas, one int32 per token).
    const perCell = (a: ReturnType<typeof dims>, b: ReturnType<typeof dims>, cells: number) =>
      (syntheticTraceBytes(b) - syntheticTraceBytes(a)) / cells;
    const byLayers = perCell(dims(256, 8, 16), dims(256, 16, 16), 8 * 17 * 256);
    const byT = perCell(dims(256, 8, 16), dims(512, 8, 16), 256 * 17 * 9);
    const bySteps = perCell(dims(512, 8, 16), dims(512, 8, 32), 16 * 9 * 512);
    for (const [name, c] of [
      ["layers", byLayers],
      ["T", byT],
      ["steps", bySteps],
    ] as const) {
      expect(c, name).toBeGreaterThan(3.9);
      expect(c, name).toBeLessThan(4.6);
    }
  });

  it("full maps are O(T²) per layer and show up in the estimate that guards them", () => {
    const d = { numLayers: 32, numHeads: 32, numKvHeads: 32, headDim: 128, seq: 1024, steps: 64 };
    const recv = estimateTraceBytes({ received: true }, d);
    const maps = estimateTraceBytes({ received: true, pattern: { layers: [0, 31] } }, d);
    // two layers × 32 heads × 1024² × 4 bytes × 65 passes
    expect(maps - recv).toBeCloseTo(2 * 32 * 1024 * 1024 * 4 * 65, -6);
  });
});
