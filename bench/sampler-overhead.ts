/**
 * Per-position cost of the samplers' token choice at LLaDA's vocabulary size (126,464), in ms
 * (median of 7 repeats of 20 calls each), written as a markdown table. Every masked candidate
 * position pays this once per step, on top of the model's forward pass.
 * Run: npx tsx bench/sampler-overhead.ts
 */
import { Rng } from "../src/samplers/rng.js";
import { armChoose, dreamSampleToken, lladaChoose } from "../src/samplers/sampling.js";

const V = 126_464;
const logits = new Float32Array(V);
// A peaked distribution like a trained model's: a few strong tokens over a noisy floor.
const noise = new Rng(1);
for (let v = 0; v < V; v++) logits[v] = 4 * noise.uniform() - 2 + (v % 4093 === 7 ? 12 : 0);
const rng = new Rng(2);

const cases: [string, () => unknown][] = [
  ["LLaDA low_confidence, τ 0", () => lladaChoose(logits, 0, "low_confidence", rng)],
  ["LLaDA low_confidence, τ 1 (Gumbel, float64)", () => lladaChoose(logits, 1, "low_confidence", rng)],
  ["Dream entropy, τ 0.2, top-p 0.95", () => dreamSampleToken(logits, { temperature: 0.2, topP: 0.95 }, "entropy", rng)],
  ["Dream maskgit_plus, τ 0", () => dreamSampleToken(logits, { temperature: 0 }, "maskgit_plus", rng)],
  ["ARM greedy", () => armChoose(logits, null, rng)],
];
console.log(`| token choice (V = ${V}) | ms per position (median of 7) |`);
console.log("|---|---|");
for (const [name, f] of cases) {
  for (let i = 0; i < 5; i++) f();
  const times: number[] = [];
  for (let r = 0; r < 7; r++) {
    const t0 = performance.now();
    for (let i = 0; i < 20; i++) f();
    times.push((performance.now() - t0) / 20);
  }
  times.sort((a, b) => a - b);
  console.log(`| ${name} | ${times[3].toFixed(2)} |`);
}
