/**
 * `floatscope forward <model-dir> --text "…" | --ids 1,2,3 [--probes …] [--out file.safetensors]`:
 * one forward pass; prints a short summary (top next tokens, the keys receiving most attention
 * per layer) and optionally writes every probe (and the logits) to a safetensors file whose
 * `__metadata__.floatscope` holds the ids, axes and model facts as JSON. Written atomically.
 */
import { writeSafetensors, type TensorToWrite } from "../checkpoint/safetensors.js";
import { openModelFiles, startEngine } from "../model/open.js";
import { defaultWeightCacheDir } from "../graph/build/weight-cache.js";
import { assertFiniteWeights } from "../graph/scan-weights.js";
import { parseProbeName, type ProbeTensor } from "../util/probes.js";
import { flagSpec, helpSections, intList, optionalInt, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { checkpointPath, type CliCommand } from "./command-types.js";
import { checkpointInput } from "./inputs.js";
import { MKDIR_ROW, outputFile } from "./outputs.js";
import { runtimeOptions, runtimeRows } from "./runtime-flags.js";
import { PROBE_WORDS, probeRequestFromFlags, regionOneHot } from "./probe-flags.js";

export const FORWARD_FORMAT = "floatscope-forward";
export const FORWARD_FORMAT_VERSION = 1;

/** The flags of `floatscope forward`, by help section: the parse options and the help both come from here. */
const FORWARD_FLAGS: Record<string, FlagRow[]> = {
  "Input (one of)": [
    {
      name: "text",
      type: "string",
      value: "<string>",
      help: ["text, tokenised with the checkpoint's tokenizer (special tokens added as", "the tokenizer does; --no-special to skip them)"],
    },
    { name: "no-special", type: "boolean", help: "do not let the tokenizer add special tokens (BOS)" },
    { name: "ids", type: "string", value: "<list>", help: "token ids, comma-separated" },
  ],
  Probes: [
    {
      name: "probes",
      type: "string",
      value: "<list>",
      help: [`comma-separated, from: ${PROBE_WORDS.join(", ")}`, "(default: received). q_rot/k_rot are post-RoPE, q/k pre-RoPE."],
    },
    { name: "layers", type: "string", value: "<list>", help: "layers for pattern, pattern_mean, q_rot/k_rot/q/k (default: all)" },
    { name: "heads", type: "string", value: "<list>", help: "heads for pattern (default: all)" },
    { name: "regions", type: "string", value: "<ranges>", help: "token ranges for region_sum, e.g. 0-4,4-10 (end exclusive)" },
  ],
  Output: [
    { name: "out", type: "string", value: "<file>", help: "write probes to this .safetensors file (atomic) with JSON metadata" },
    { name: "logits", type: "boolean", help: "also write the logits [batch, seq, vocab] to --out" },
    { name: "top", type: "string", value: "<n>", help: "keys listed per layer in the summary", default: "3" },
    MKDIR_ROW,
  ],
  Runtime: runtimeRows(
    "device",
    "threads",
    "low-memory",
    "query-chunks",
    "memory-budget",
    "no-weight-scan",
    "quantized-weights",
    "accuracy-level",
  ),
};

const HELP = `Usage: floatscope forward <model-dir> (--text "…" | --ids 1,2,3) [options]

Run one forward pass of the checkpoint and report attention probes.

${helpSections(FORWARD_FLAGS, 24)}
  --debug               print stack traces of errors
  -h, --help            this help

The input may hold at most max_position_embeddings tokens (floatscope inspect shows it).
Exit codes: 0 ok, 1 failure (checkpoint, budget, runtime), 2 usage (flags, input too long).`;

function topK(values: ArrayLike<number>, k: number): number[] {
  return Array.from({ length: values.length }, (_, i) => i)
    .sort((a, b) => Number(values[b]) - Number(values[a]))
    .slice(0, k);
}

export const command: CliCommand = {
  help: HELP,
  flags: flagSpec(Object.values(FORWARD_FLAGS).flat()),
  paths: [
    checkpointPath(() => ["--ids", "1,2,3"]),
    { arg: "--out", role: "output", expects: "file", name: "out.safetensors", example: (p, f) => [f.model, "--ids", "1,2,3", "--out", p] },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("forward", argv, flagSpec(Object.values(FORWARD_FLAGS).flat()));
    if (positionals.length !== 1)
      throw new UsageError("`floatscope forward` takes one model folder", {
        field: "<model-dir>",
        expected: "one path",
        found: positionals.length ? positionals.join(" ") : "nothing",
      });
    if ((v.text === undefined) === (v.ids === undefined))
      throw new UsageError("Give exactly one of --text and --ids", { field: "--text / --ids", expected: "one of them" });
    if (v.logits && !v.out) throw new UsageError("--logits needs --out", { field: "--logits", expected: "--out <file.safetensors>" });
    const top = optionalInt("forward", "top", v.top, { min: 1 }) ?? 3;
    const runtime = runtimeOptions("forward", v);
    // Checked before anything is computed, so a bad --out never costs a forward pass.
    const file = v.out !== undefined ? outputFile("forward", "out", String(v.out), !!v.mkdir, io) : undefined;
    // The weight scan reads every byte: it runs after the cheap checks below, so a bad flag or an
    // input that is too long never waits for it.
    const model = openModelFiles(checkpointInput("forward", positionals[0]), { tokenizer: "optional", scanWeights: false });
    const { checkpoint: ckpt, spec } = model;

    let ids: number[];
    let tokens: string[] | undefined;
    if (v.ids !== undefined) {
      ids = intList("forward", "ids", String(v.ids), { min: 0, max: spec.vocabSize - 1 });
    } else {
      const tok = model.tokenizer;
      if (!tok)
        throw new UsageError("This checkpoint has no tokenizer.json: pass --ids", {
          file: ckpt.dir,
          field: "--text",
          expected: "a checkpoint with tokenizer.json, or --ids",
        });
      const enc = tok.encode(String(v.text), { addSpecialTokens: !v["no-special"] });
      ids = enc.ids;
      tokens = enc.tokens;
    }
    if (ids.length === 0)
      throw new UsageError("The input has no tokens", { field: v.ids !== undefined ? "--ids" : "--text", expected: "at least one token" });
    const T = ids.length;
    if (T > spec.maxPositionEmbeddings) {
      throw new UsageError("The input is longer than the model's maximum positions", {
        file: ckpt.dir,
        field: v.ids !== undefined ? "--ids" : "--text",
        expected: `at most ${spec.maxPositionEmbeddings} tokens (max_position_embeddings in config.json)`,
        found: `${T} tokens`,
      });
    }
    const regions = v.regions !== undefined ? regionOneHot("forward", String(v.regions), 1, T) : undefined;
    const probes = probeRequestFromFlags(
      "forward",
      {
        probes: v.probes as string | undefined,
        layers: v.layers as string | undefined,
        heads: v.heads as string | undefined,
        regions: regions?.regions,
      },
      spec.numLayers,
    );

    if (runtime.scanWeights) assertFiniteWeights(model.checkpoint, model.spec, { verdictCache: defaultWeightCacheDir() });
    const { engine } = await startEngine(model, {
      probes,
      device: runtime.device,
      threads: runtime.threads,
      queryChunks: runtime.queryChunks,
      lowMemory: runtime.lowMemory,
      quantizedWeights: runtime.quantizedWeights,
      nbitsAccuracyLevel: runtime.nbitsAccuracyLevel,
      plannedRun: { batch: 1, seq: T },
      memoryBudgetBytes: runtime.memoryBudgetBytes,
      warn: io.err,
    });
    try {
      const t0 = performance.now();
      const out = await engine.forward({ ids: Int32Array.from(ids), batch: 1, seq: T, regionOneHot: regions?.oneHot });
      const ms = performance.now() - t0;
      const label = (i: number) => (tokens ? `${i}:${JSON.stringify(tokens[i])}` : `${i}:${ids[i]}`);
      const lines = [`${spec.family} ${spec.architecture}, ${T} tokens, ${engine.device}, ${ms.toFixed(1)} ms`];
      const V = out.vocabSize;
      const last = out.logits.subarray((T - 1) * V, T * V);
      lines.push(
        `top ids for the last position: ${topK(last, 5)
          .map((i) => `${i} (${last[i].toFixed(2)})`)
          .join(", ")}`,
      );
      for (const [name, p] of out.probes) {
        const kind = parseProbeName(name)?.kind;
        if (kind === "received")
          lines.push(
            `${name}  top keys: ${topK(p.data, top)
              .map((k) => `${label(k)} ${p.data[k].toFixed(3)}`)
              .join(", ")}`,
          );
      }
      const others = [...out.probes.values()].filter((p) => parseProbeName(p.name)?.kind !== "received");
      if (others.length)
        lines.push(`other probes: ${others.length} tensors (${[...new Set(others.map((p) => parseProbeName(p.name)!.kind))].join(", ")})`);
      if (file) {
        const tensors: Record<string, TensorToWrite> = {};
        const axes: Record<string, string[]> = {};
        for (const [name, p] of out.probes as Map<string, ProbeTensor>) {
          tensors[name] = { dtype: p.data instanceof Int32Array ? "I32" : "F32", shape: p.dims, data: p.data };
          axes[name] = p.axes;
        }
        if (v.logits) {
          tensors.logits = { dtype: "F32", shape: [1, T, V], data: out.logits };
          axes.logits = ["batch", "query", "vocab"];
        }
        const meta = {
          format: FORWARD_FORMAT,
          version: FORWARD_FORMAT_VERSION,
          model: ckpt.dir,
          family: spec.family,
          architecture: spec.architecture,
          ids,
          tokens,
          probes,
          axes,
          logitShift: spec.logitShift,
          device: engine.device,
        };
        writeSafetensors(file, tensors, { floatscope: JSON.stringify(meta) });
        lines.push(`wrote ${Object.keys(tensors).length} tensors to ${file}`);
      }
      io.out(lines.join("\n"));
      return 0;
    } finally {
      await engine.dispose();
    }
  },
};
