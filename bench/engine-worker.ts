/**
 * The ONNX engine side of `npm run bench` (bench/run.ts drives it): one process per engine
 * configuration, opened through `openModel` exactly as users open models, answering one JSON request
 * per stdin line with one JSON line, so the driver can interleave its timings with PyTorch's and
 * with other engine configurations.
 *
 *   npx tsx bench/engine-worker.ts MODEL_DIR '{"threads": 1, "probes": {"received": true}}'
 *
 * Requests: {"op": "time", "T": 256, "reps": 3, "rows"?: 32}  → {"ms": [...], "cpuMs": [...]} (one untimed
 *             warm-up the first time a T is seen; `rows` as for "memory")
 *           {"op": "logits", "T": 64}            → {"rows": the first 4 rows of logits}
 *           {"op": "memory", "T": 1024, "rows"?: 32} → peak RSS of one forward above the RSS the engine held
 *             before it (Linux: the peak is reset through /proc/self/clear_refs first), and the probe bytes;
 *             with `rows`, the forward asks for the last `rows` logit rows as summaries only (a denoising
 *             step as the LLaDA sampler runs it at τ 0), without it for every logit row
 *           {"op": "gemm", "n": 1024, "reps": 7}        → GFLOP/s of one onnxruntime MatMul [n, n]·[n, 4n] f32
 *             (median), with the same thread count: the GEMM peak the forward is compared with
 *           {"op": "matmuls", "shapes": [[m, k, n, count], …], "reps": 3} → Σ count × median ms of each
 *             MatMul: the time the forward's linear layers alone would take at their own shapes
 *           {"op": "quit"}
 * Options other than `probes` go to `openModel` as they are (threads, queryChunks, lowMemory, …), so
 * the harness measures whatever the engine's defaults are.
 */
import * as fs from "node:fs";
import * as readline from "node:readline";
import * as ort from "onnxruntime-node";
import { openModel, type OpenModelOptions } from "../src/model/open.js";
import { DataType, GraphBuilder } from "../src/graph/onnx/builder.js";
import type { ForwardInput } from "../src/runtime/types.js";
import { median } from "./lib.js";

/** The same ids as the PyTorch side (bench/torch_worker.py ids_for): (i · 7919) mod (V − 1). */
export function idsFor(T: number, vocab: number): Int32Array {
  return Int32Array.from({ length: T }, (_, i) => (i * 7919) % (vocab - 1));
}

/** VmRSS / VmHWM of this process in bytes (Linux /proc; null elsewhere). */
function procStatus(field: "VmRSS" | "VmHWM"): number | null {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(fs.readFileSync("/proc/self/status", "utf8"));
    return m ? Number(m[1]) * 1024 : null;
  } catch {
    return null;
  }
}

/** Reset the kernel's peak-RSS mark to the current RSS (Linux ≥ 4.0); false where it cannot. */
function resetPeakRss(): boolean {
  try {
    fs.writeFileSync("/proc/self/clear_refs", "5");
    return true;
  } catch {
    return false;
  }
}

/** Median ms of a one-node MatMul session: an [m, k] input times a [k, n] initializer. */
async function matmulMs(m: number, k: number, n: number, reps: number, threads: number | undefined): Promise<number> {
  const g = new GraphBuilder();
  const a = g.input("a", DataType.FLOAT, [m, k]);
  const b = g.constF32(
    Float32Array.from({ length: k * n }, (_, i) => ((i * 7) % 13) / 13 - 0.5),
    [k, n],
    "b",
  );
  g.output(g.node("MatMul", [a, b]), "c", DataType.FLOAT, [m, n]);
  const session = await ort.InferenceSession.create(g.encode("gemm"), threads ? { intraOpNumThreads: threads } : {});
  const feeds = {
    a: new ort.Tensor(
      "float32",
      Float32Array.from({ length: m * k }, (_, i) => ((i * 5) % 11) / 11 - 0.5),
      [m, k],
    ),
  };
  await session.run(feeds);
  const ts: number[] = [];
  for (let r = 0; r < reps; r++) {
    const t = performance.now();
    await session.run(feeds);
    ts.push(performance.now() - t);
  }
  await session.release();
  return median(ts);
}

async function main(): Promise<void> {
  const [dir, optionsJson] = process.argv.slice(2);
  const options = JSON.parse(optionsJson ?? "{}") as Omit<OpenModelOptions, "tokenizer">;
  const t0 = performance.now();
  const model = await openModel(dir, { memoryBudgetBytes: 20 * 2 ** 30, scanWeights: false, ...options, tokenizer: "optional" });
  const engine = model.engine;
  const send = (x: unknown) => process.stdout.write(JSON.stringify(x) + "\n");
  send({ createMs: performance.now() - t0, rssBytes: procStatus("VmRSS"), queryChunks: engine.queryChunks, nodes: engine.nodeCount });
  const input = (T: number, rows?: number): ForwardInput => {
    const inp: ForwardInput = { ids: idsFor(T, model.spec.vocabSize), batch: 1, seq: T };
    if (rows !== undefined) {
      inp.logitRows = Int32Array.from({ length: rows }, (_, i) => T - rows + i);
      inp.summaries = true;
      inp.returnLogits = false;
    }
    return inp;
  };
  const warm = new Set<number>();
  const lines = readline.createInterface({ input: process.stdin });
  for await (const line of lines) {
    const req = JSON.parse(line) as { op: string; T: number; reps?: number; rows?: number };
    if (req.op === "quit") break;
    if (req.op === "time") {
      if (!warm.has(req.T)) {
        await engine.forward(input(req.T, req.rows));
        warm.add(req.T);
      }
      const ms: number[] = [];
      const cpuMs: number[] = [];
      for (let r = 0; r < (req.reps ?? 1); r++) {
        const c0 = process.cpuUsage();
        const a = performance.now();
        await engine.forward(input(req.T, req.rows));
        ms.push(performance.now() - a);
        const c = process.cpuUsage(c0);
        cpuMs.push((c.user + c.system) / 1000);
      }
      send({ ms, cpuMs });
    } else if (req.op === "logits") {
      const out = await engine.forward(input(req.T));
      const V = out.vocabSize;
      send({ rows: Array.from({ length: 4 }, (_, i) => Array.from(out.logits.subarray(i * V, (i + 1) * V))) });
    } else if (req.op === "memory") {
      // `rows`: request only the last `rows` logit rows, as summaries (a LLaDA step at τ 0 with that
      // block length, samplers/loop.ts); without it, every logit row, returned (the plain forward).
      const inp = input(req.T, req.rows);
      const reset = resetPeakRss();
      const before = procStatus("VmRSS");
      const a = performance.now();
      const out = await engine.forward(inp);
      const ms = performance.now() - a;
      warm.add(req.T); // a later "time" at this T needs no warm-up of its own
      const peak = reset ? procStatus("VmHWM") : process.resourceUsage().maxRSS * 1024;
      const probeBytes = [...out.probes.values()].reduce((n, p) => n + p.data.byteLength, 0);
      send({ beforeBytes: before, peakBytes: peak, peakReset: reset, probeBytes, logitBytes: out.logits.byteLength, ms });
    } else if (req.op === "gemm") {
      const r = req as unknown as { n: number; reps: number };
      const ms = await matmulMs(r.n, r.n, 4 * r.n, r.reps, options.threads);
      send({ gflops: (2 * r.n * r.n * 4 * r.n) / (ms / 1000) / 1e9 });
    } else if (req.op === "matmuls") {
      // The forward's linear layers at their own shapes: Σ count × median ms of [m, k]·[k, n].
      const r = req as unknown as { shapes: [number, number, number, number][]; reps: number };
      let total = 0;
      for (const [m, k, n, count] of r.shapes) total += count * (await matmulMs(m, k, n, r.reps, options.threads));
      send({ ms: total });
    } else {
      send({ error: `unknown op ${req.op}` });
    }
  }
  lines.close();
  await model.dispose();
  process.exit(0); // stdin is still open (the driver's pipe): without this the process would wait on it
}

await main();
