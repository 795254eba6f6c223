/**
 * Logits row selection benchmark (not a test). One LLaDA-style sampler step (τ 0, low_confidence)
 * on a random tiny model with a real-sized vocabulary (2 layers, d 64, 4 heads, vocab 32,768 /
 * 131,072, batch 1, T 256 / 1024, R = 32 candidate positions — one LLaDA block), three ways:
 *  - full:      the plain head (`logitRows: false`): [T, V] logits out of the graph, then the
 *               token choice in JS on the R candidate rows (what every step did before);
 *  - rows:      the head runs on the R rows only (`logitRows`), JS choice on those rows
 *               (the path for τ > 0, top-p, CFG);
 *  - summaries: the head on the R rows, per-row summaries in the graph, no logits copied out
 *               (the path for τ 0 / greedy).
 * Time per step = forward + JS choice, median of repeats after one warm-up, ratios against "full"
 * in the same run; bytes = what the graph hands to JS per step. Writes the "## Logits row
 * selection" section of BENCHMARKS.md.
 *
 *   npx tsx bench/logits.ts            # full run (a few minutes on 2 shared cores)
 *   npx tsx bench/logits.ts --quick    # V 32,768, T 256 only, fewer repeats, no file written
 */
import { createEngine, type OnnxEngine } from "../src/runtime/engine.js";
import type { ForwardInput } from "../src/runtime/types.js";
import { Rng } from "../src/util/rng.js";
import { dreamSampleToken, lladaChoose } from "../src/samplers/sampling.js";
import { makeTinyEngineCheckpoint } from "../test/support/engine-tiny.js";
import * as lib from "./lib.js";

const quick = process.argv.includes("--quick");
const REPEATS = quick ? 2 : 5;
type Mode = "full" | "rows" | "summaries";

interface Measured {
  forward: number;
  choice: number;
  total: number;
  bytes: number;
}

/** LLaDA τ 0 low_confidence, or Dream τ 0 entropy: the JS choice on one row, and the summary it needs. */
type Algo = "llada" | "dream";

async function measure(engine: OnnxEngine, mode: Mode, T: number, R: number, algo: Algo): Promise<Measured> {
  const V = engine.spec.vocabSize;
  const rng = new Rng(3);
  const ids = Int32Array.from({ length: T }, (_, i) => (i * 7919) % V);
  // candidates: the last R positions (a block at the end of the canvas)
  const cand = Array.from({ length: R }, (_, j) => T - R + j);
  const input: ForwardInput = { ids, batch: 1, seq: T };
  if (mode !== "full") input.logitRows = Int32Array.from(cand);
  if (mode === "summaries") Object.assign(input, { summaries: true, returnLogits: false });
  const runs: Measured[] = [];
  for (let k = 0; k <= REPEATS; k++) {
    const t0 = performance.now();
    const out = await engine.forward(input);
    const t1 = performance.now();
    let sum = 0;
    if (mode === "summaries") {
      const conf = algo === "llada" ? out.summary!.maxProb : out.summary!.negEntropy;
      for (let j = 0; j < R; j++) sum += out.summary!.argmax[j] + conf[j];
    } else {
      for (let j = 0; j < R; j++) {
        const row = mode === "full" ? cand[j] : j;
        const l = out.logits.subarray(row * V, (row + 1) * V);
        sum +=
          algo === "llada"
            ? lladaChoose(l, 0, "low_confidence", rng).confidence
            : dreamSampleToken(l, { temperature: 0 }, "entropy", rng).confidence;
      }
    }
    const t2 = performance.now();
    if (!Number.isFinite(sum)) throw new Error("bench: non-finite choice");
    const bytes = out.logits.byteLength + (out.summary ? Object.values(out.summary).reduce((a, x) => a + x.byteLength, 0) : 0);
    if (k > 0) runs.push({ forward: t1 - t0, choice: t2 - t1, total: t2 - t0, bytes });
  }
  return {
    forward: lib.median(runs.map((r) => r.forward)),
    choice: lib.median(runs.map((r) => r.choice)),
    total: lib.median(runs.map((r) => r.total)),
    bytes: runs[0].bytes,
  };
}

function mib(n: number): string {
  return n >= 2 ** 20 ? `${(n / 2 ** 20).toFixed(1)} MiB` : `${(n / 1024).toFixed(1)} KiB`;
}

/**
 * One table row per logits mode, each after the leading cells `head`: the full-logits engine is
 * measured once and is the baseline every mode's ratio is taken against.
 */
async function measureModes(
  plain: OnnxEngine,
  sel: OnnxEngine,
  T: number,
  R: number,
  algo: Algo,
  head: (string | number)[],
  out: (string | number)[][],
): Promise<void> {
  const full = await measure(plain, "full", T, R, algo);
  for (const mode of ["full", "rows", "summaries"] as Mode[]) {
    const m = mode === "full" ? full : await measure(sel, mode, T, R, algo);
    out.push([...head, mode, m.forward.toFixed(1), m.choice.toFixed(1), m.total.toFixed(1), lib.ratio(m.total, full.total), mib(m.bytes)]);
    console.log(out.at(-1)!.join(" | "));
  }
}

const load0 = lib.loadAverage();
const rows: (string | number)[][] = [];
const dreamRows: (string | number)[][] = [];
const R = 32;
for (const V of quick ? [32768] : [32768, 131072]) {
  const ckpt = makeTinyEngineCheckpoint({ family: "llada", causal: false, layers: 2, hidden: 64, heads: 4, ffn: 172, vocab: V, seed: 5 });
  try {
    const source = { spec: ckpt.spec, tensors: ckpt.tensors };
    const plain = await createEngine(source, { threads: 1, probes: {}, logitRows: false });
    const sel = await createEngine(source, { threads: 1, probes: {} });
    for (const T of quick ? [256] : [256, 1024]) {
      await measureModes(plain, sel, T, R, "llada", [V.toLocaleString("en-US"), T], rows);
    }
    if (V === 131072) {
      // Dream's first step: every generated position is masked, R = 256 of T = 1024.
      const T = 1024,
        RD = 256;
      await measureModes(plain, sel, T, RD, "dream", [V.toLocaleString("en-US"), T, RD], dreamRows);
    }
    await plain.dispose();
    await sel.dispose();
  } finally {
    ckpt.cleanup();
  }
}
const load1 = lib.loadAverage();

const body = `## Logits row selection

\`npx tsx bench/logits.ts\` — ${lib.machineStamp()}, Node ${process.version}; ONNX Runtime CPU, 1 thread.
${lib.loadSentence(load0, load1)}

One LLaDA step (τ 0, low_confidence) on a random tiny model with a real-sized vocabulary (2 layers, d 64,
4 heads, batch 1), R = ${R} candidate positions. **full**: the plain head, [T, V] logits out, token choice in JS on
the ${R} rows; **rows**: the head on the ${R} rows only (\`logitRows\`), JS choice (the τ > 0 / top-p / CFG path);
**summaries**: head on the ${R} rows, argmax and max-probability in the graph, no logits out (the τ 0 / greedy
path). Median of ${REPEATS} after a warm-up; ms per step; ratio = total / full's total in the same run; bytes =
what the graph hands to JS per step. Traces are identical on all three paths (test/samplers/logit-rows.test.ts).
The JS-choice column does the same work on the full and rows paths, so its spread between them shows the noise of this loaded machine (±30 %). At R = 256 the float64 summaries (cast, exp, p·log p over 256 × 131k) cost about as much as the head on those rows; they still replace 2–3 s of JS per step.

${lib.markdownTable(["vocab", "T", "path", "forward", "JS choice", "total", "× full", "bytes to JS"], rows)}
${
  dreamRows.length
    ? `
Dream's first step (τ 0, \`entropy\`: Σ p·log(p + 1e-10) per row, float64 in JS or in the graph), all R = 256 generated
positions masked:

${lib.markdownTable(["vocab", "T", "R", "path", "forward", "JS choice", "total", "× full", "bytes to JS"], dreamRows)}
`
    : ""
}`;
console.log(body);
if (lib.writesSection(quick)) {
  lib.writeBenchmarkSection("## Logits row selection", body);
  console.log("wrote " + lib.benchmarkFile() + " (## Logits row selection)");
}
