/**
 * Trace sizes with the default probes (received only), measured by encoding synthetic traces with
 * the real record encoder, next to the estimate `generate` uses to refuse oversized runs.
 * Run: npx tsx scripts/trace-size.ts
 */
import { estimateTraceBytes } from "../src/trace/size.js";
import { syntheticTraceBytes } from "../test/support/synthetic-trace.js";

const rows: [number, number, number][] = [
  [1024, 32, 64],
  [512, 32, 64],
  [1024, 16, 64],
  [1024, 32, 32],
  [256, 28, 32],
  [64, 32, 32],
];
console.log("| T | layers | steps | bytes (measured) | bytes (estimate) | bytes / (steps·layers·T) |");
console.log("|---|---|---|---|---|---|");
for (const [T, L, S] of rows) {
  const bytes = syntheticTraceBytes({ seq: T, layers: L, steps: S, prompt: T - 2 * S, transfersPerStep: 2 });
  const est = estimateTraceBytes(
    { received: true },
    { numLayers: L, numHeads: 32, numKvHeads: 32, headDim: 128, seq: T, steps: S, transfersPerStep: 2 },
  );
  console.log(`| ${T} | ${L} | ${S} | ${bytes} | ${est} | ${(bytes / (S * L * T)).toFixed(2)} |`);
}
