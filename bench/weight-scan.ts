/**
 * What the NaN/Inf weight scan (on by default in `createEngine` and the CLI) costs on a ~1 GB
 * checkpoint, against what opening the model costs anyway.
 *
 * The checkpoint: a random Llama-shaped model in BF16 (the dtype real checkpoints ship in, and the
 * slower scan path), 8 layers, d 2048, 16 heads, ffn 5632, vocab 32000, untied head: 542 M
 * parameters, 1.08 GB in one model.safetensors, written to the temp folder and removed after.
 * Interleaved rounds (the order rotates each round), medians reported:
 *   - open:        openCheckpoint + resolveModelSpec (headers only)
 *   - read:        every weight byte streamed in 16 MiB chunks with no work (the I/O floor; page cache warm after round 0)
 *   - scan:        scanWeights (the same stream plus the bit-pattern test)
 *   - engine:      createEngine(…, { scanWeights: false }) + dispose (graph, ORT session, weights)
 *   - engine+scan: createEngine with the default scan + dispose (what a user gets)
 *
 *   npx tsx bench/weight-scan.ts            # writes the "## Weight scan" section of BENCHMARKS.md
 *   npx tsx bench/weight-scan.ts --quick    # 1 layer, no BENCHMARKS.md
 */
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { openCheckpoint } from "../src/checkpoint/checkpoint.js";
import { streamTensorBytes } from "../src/checkpoint/safetensors.js";
import { resolveModelSpec, specTensorNames } from "../src/graph/adapters/index.js";
import { scanWeights } from "../src/graph/scan-weights.js";
import { createEngine } from "../src/runtime/engine.js";
import * as lib from "./lib.js";

const quick = process.argv.includes("--quick");
const ROUNDS = quick ? 2 : 3;
const L = quick ? 1 : 8,
  D = 2048,
  H = 16,
  F = 5632,
  V = 32000;

/** Write the checkpoint tensor by tensor (never the whole file in memory). */
function writeCheckpoint(dir: string): number {
  const shapes: [string, number[]][] = [["model.embed_tokens.weight", [V, D]]];
  for (let l = 0; l < L; l++) {
    const p = `model.layers.${l}`;
    shapes.push(
      [`${p}.input_layernorm.weight`, [D]],
      [`${p}.self_attn.q_proj.weight`, [D, D]],
      [`${p}.self_attn.k_proj.weight`, [D, D]],
      [`${p}.self_attn.v_proj.weight`, [D, D]],
      [`${p}.self_attn.o_proj.weight`, [D, D]],
      [`${p}.post_attention_layernorm.weight`, [D]],
      [`${p}.mlp.gate_proj.weight`, [F, D]],
      [`${p}.mlp.up_proj.weight`, [F, D]],
      [`${p}.mlp.down_proj.weight`, [D, F]],
    );
  }
  shapes.push(["model.norm.weight", [D]], ["lm_head.weight", [V, D]]);
  const header: Record<string, unknown> = {};
  let offset = 0;
  for (const [name, shape] of shapes) {
    const bytes = shape.reduce((a, b) => a * b, 1) * 2;
    header[name] = { dtype: "BF16", shape, data_offsets: [offset, offset + bytes] };
    offset += bytes;
  }
  let json = JSON.stringify(header);
  json += " ".repeat((8 - ((8 + json.length) % 8)) % 8);
  const file = path.join(dir, "model.safetensors");
  const fd = fs.openSync(file, "w");
  const len = Buffer.alloc(8);
  len.writeBigUInt64LE(BigInt(json.length));
  fs.writeSync(fd, len);
  fs.writeSync(fd, json);
  // Finite BF16 values of magnitude ~1e-2 with random mantissas and signs (xorshift32).
  const chunk = new Uint16Array(8 << 20);
  let x = 2463534242;
  for (let i = 0; i < chunk.length; i++) {
    x ^= x << 13;
    x ^= x >>> 17;
    x ^= x << 5;
    chunk[i] = ((x >>> 16) & 0x8000) | 0x3c00 | (x & 0x007f);
  }
  for (const [, shape] of shapes) {
    let left = shape.reduce((a, b) => a * b, 1);
    while (left > 0) {
      const n = Math.min(left, chunk.length);
      fs.writeSync(fd, chunk, 0, n * 2);
      left -= n;
    }
  }
  fs.closeSync(fd);
  fs.writeFileSync(
    path.join(dir, "config.json"),
    JSON.stringify({
      architectures: ["LlamaForCausalLM"],
      model_type: "llama",
      hidden_size: D,
      num_hidden_layers: L,
      num_attention_heads: H,
      num_key_value_heads: H,
      intermediate_size: F,
      vocab_size: V,
      rms_norm_eps: 1e-5,
      hidden_act: "silu",
      max_position_embeddings: 2048,
      tie_word_embeddings: false,
      rope_theta: 10000,
      torch_dtype: "bfloat16",
    }),
  );
  return fs.statSync(file).size;
}

const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-bench-scan-"));
const load0 = lib.loadAverage();
const fileBytes = writeCheckpoint(dir);
const ckpt = openCheckpoint(dir);
const spec = resolveModelSpec(ckpt);
const weightBytes = specTensorNames(spec).reduce((a, n) => a + ckpt.tensors.get(n)!.byteLength, 0);

async function timeIt(f: () => unknown): Promise<number> {
  const t = performance.now();
  await f();
  return performance.now() - t;
}
const tasks: Record<string, () => unknown> = {
  open: () => resolveModelSpec(openCheckpoint(dir)),
  read: () => {
    for (const n of specTensorNames(spec)) streamTensorBytes(ckpt.tensors.get(n)!, 16 << 20, () => {});
  },
  scan: () => {
    if (scanWeights(ckpt, spec).nonFinite.length) throw new Error("unexpected non-finite weights");
  },
  engine: async () => (await createEngine(dir, { probes: {}, scanWeights: false, threads: 1 })).dispose(),
  "engine+scan": async () => (await createEngine(dir, { probes: {}, threads: 1 })).dispose(),
};
const names = Object.keys(tasks);
const times: Record<string, number[]> = Object.fromEntries(names.map((n) => [n, []]));
let peakRss = 0;
await tasks.read(); // warm the page cache once, so every round reads from memory
for (let r = 0; r < ROUNDS; r++) {
  const order = names.map((_, i) => names[(i + r) % names.length]);
  for (const n of order) {
    times[n].push(await timeIt(tasks[n]));
    peakRss = Math.max(peakRss, process.memoryUsage().rss);
  }
  console.log(`round ${r + 1}/${ROUNDS}: ${names.map((n) => `${n} ${times[n][r].toFixed(0)} ms`).join(", ")}`);
}
const load1 = lib.loadAverage();
fs.rmSync(dir, { recursive: true, force: true });

const med = Object.fromEntries(names.map((n) => [n, lib.median(times[n])]));
const rows = names.map((n) => [
  n,
  med[n].toFixed(0),
  Math.min(...times[n]).toFixed(0),
  n === "read" || n === "scan" ? (weightBytes / 1e6 / (med[n] / 1000)).toFixed(0) : "",
  lib.ratio(med[n], med.engine),
]);
const extra = med["engine+scan"] - med.engine;
const body = `## Weight scan

\`npx tsx bench/weight-scan.ts\` — ${lib.machineStamp()}, Node ${process.version}, onnxruntime-node CPU, 1 intra-op thread.
${lib.loadSentence(load0, load1)}

Random Llama-shaped checkpoint in BF16: ${L} layers, d ${D}, ${H} heads, ffn ${F}, vocab ${V}, untied head; ${(weightBytes / 1e9).toFixed(2)} GB of
weights in one ${(fileBytes / 1e9).toFixed(2)} GB model.safetensors (page cache warm). ${ROUNDS} interleaved rounds, median (min) ms;
"× engine" is against creating the engine without the scan, measured in the same rounds. Peak RSS ${(peakRss / 1e9).toFixed(1)} GB (the engine's f32 weights).

${lib.markdownTable(["step", "median ms", "min ms", "MB/s", "× engine"], rows)}

The scan, on by default in \`createEngine\` and every CLI command that loads weights, takes ≈ ${med.scan.toFixed(0)} ms here
(${lib.ratio(med.scan, med.engine)}× creating the engine without it; ${lib.ratio(med.scan, med.read)}× just reading the bytes); the difference of the
engine+scan and engine medians, ${extra.toFixed(0)} ms, is the same cost seen through much noisier measurements.
\`scanWeights: false\` / \`--no-weight-scan\` skips it.
`;
console.log(body);
if (lib.writesSection(quick)) {
  lib.writeBenchmarkSection("## Weight scan", body);
  console.log("wrote " + lib.benchmarkFile() + " (## Weight scan)");
}
