/**
 * `floatscope generate <model-dir> --prompt "…" [--steps … --gen-length … --block-length … --alg …
 * --seed …] [--trace out.fstrace]`: sample one answer with the family's sampler, print it, and
 * record the per-step trace. Settings come from `--config file.json` (a RunConfig object) and
 * flags (flags win); they are all checked, and the prompt length too, before the engine is built.
 * Ctrl-C stops between steps and leaves a valid partial trace.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { openModelFiles, startEngine } from "../model/open.js";
import { defaultWeightCacheDir } from "../graph/build/weight-cache.js";
import { assertFiniteWeights } from "../graph/scan-weights.js";
import type { RunConfig } from "../samplers/config.js";
import { generate, prepareRun } from "../samplers/generate.js";
import { flagSpec, helpSections, optionalInt, optionalNumber, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { runtimeOptions, runtimeRows } from "./runtime-flags.js";
import { decodingRows } from "./decoding-flags.js";
import { checkpointPath, type CliCommand } from "./command-types.js";
import { checkpointInput, inputFile } from "./inputs.js";
import { EXIT } from "./exit.js";
import { MKDIR_ROW, outputFile } from "./outputs.js";
import { readFileBounded } from "../util/paths.js";
import { PROBE_WORDS, probeRequestFromFlags } from "./probe-flags.js";

/** The flags of `floatscope generate`, by help section: the parse options and the help both come from here. */
const GENERATE_FLAGS: Record<string, FlagRow[]> = {
  Prompt: [
    { name: "prompt", type: "string", value: "<text>", help: "the prompt text (used verbatim unless --chat)" },
    { name: "chat", type: "boolean", help: "wrap the prompt as one user turn with the checkpoint's chat template" },
    { name: "no-special", type: "boolean", help: "do not let the tokenizer add special tokens (BOS)" },
  ],
  Sampler: [
    ...decodingRows({ of: "the family's", genLength: "32" }),
    { name: "top-p", type: "string", value: "<x>", help: "nucleus sampling (Dream, ARM sample; default off)" },
    { name: "top-k", type: "string", value: "<n>", help: "sample from the n most likely tokens (Dream, ARM sample; default off)" },
    { name: "cfg", type: "string", value: "<x>", help: "classifier-free guidance scale (masked-diffusion samplers; default 0, off)" },
    { name: "eps", type: "string", value: "<x>", help: "Dream's final timestep ε in linspace(1, ε, steps+1)" },
    {
      name: "alg-temp",
      type: "string",
      value: "<x>",
      help: "Dream: 0 = top-n positions, > 0 = sample positions from softmax(conf/alg_temp)",
    },
    { name: "seed", type: "string", value: "<n>", help: "seed of the sampler's RNG", default: "0" },
    { name: "config", type: "string", value: "<file.json>", help: "settings as a JSON RunConfig object (flags override it)" },
  ],
  Trace: [
    { name: "trace", type: "string", value: "<file>", help: "write the trace here (.fstrace; streamed while sampling)" },
    { name: "probes", type: "string", value: "<list>", help: `comma-separated, from: ${PROBE_WORDS.join(", ")} (default: received)` },
    { name: "layers", type: "string", value: "<list>", help: "layers for pattern / pattern_mean / q_rot / k_rot (default: all)" },
    { name: "heads", type: "string", value: "<list>", help: "heads for pattern (default: all)" },
    { name: "max-trace-bytes", type: "string", value: "<n>", help: "refuse runs whose trace would be larger (default 4 GiB)" },
    MKDIR_ROW,
  ],
  Intervention: [
    {
      name: "intervene",
      type: "string",
      value: "<policy>",
      help: [
        "change attention at every step and record it: none | anchors |",
        "anchors:first-pass | first | random | random:<k> | sink | sink:<token id>",
        '(docs/samplers.md, "Attention interventions")',
      ],
    },
  ],
  Runtime: runtimeRows(
    "device",
    "threads",
    "low-memory",
    "memory-budget",
    "no-weight-scan",
    "quantized-weights",
    "accuracy-level",
    "no-kv-cache",
  ),
};

const HELP = `Usage: floatscope generate <model-dir> --prompt "…" [options]

Sample an answer and record, for every denoising (or decoding) step, the canvas, the positions
unmasked, their confidences and the attention probes of every layer, plus one forward pass over
the final sequence. Defaults are the paper's settings for the model's family (LLaDA: low_confidence,
τ 0; Dream: entropy, τ 0.2, top-p 0.95; LLaMA/Qwen: greedy).

${helpSections(GENERATE_FLAGS, 24)}
  --debug               print stack traces of errors
  -h, --help            this help

Numbers are plain decimals (16, 0.95, 1e-3). Settings, the prompt length (prompt + gen-length ≤
max_position_embeddings) and the memory estimate are all checked before a trace file is opened.
Exit codes: 0 ok, 1 failure (checkpoint, budget, runtime), 2 usage (flags, settings), 130 Ctrl-C
(the partial trace is kept).`;

function readConfigFile(file: string): Record<string, unknown> {
  inputFile(file, { command: "generate", arg: "--config", what: "settings file (JSON)", error: UsageError });
  const text = readFileBounded(file, { what: "--config file", field: "--config", error: UsageError, maxBytes: 1 << 20 }).toString("utf8");
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError("--config is not valid JSON", { file, field: "--config", found: (e as Error).message });
  }
  if (json === null || typeof json !== "object" || Array.isArray(json))
    throw new UsageError("--config must hold a JSON object", { file, field: "--config", expected: '{ "steps": 32, … }' });
  return json as Record<string, unknown>;
}

export const command: CliCommand = {
  help: HELP,
  flags: flagSpec(Object.values(GENERATE_FLAGS).flat()),
  paths: [
    checkpointPath(() => ["--prompt", "hi"]),
    { arg: "--config", role: "input", expects: "file", name: "config.json", example: (p, f) => [f.model, "--prompt", "hi", "--config", p] },
    { arg: "--trace", role: "output", expects: "file", name: "run.fstrace", example: (p, f) => [f.model, "--prompt", "hi", "--trace", p] },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("generate", argv, flagSpec(Object.values(GENERATE_FLAGS).flat()));
    if (positionals.length !== 1)
      throw new UsageError("`floatscope generate` takes one model folder", {
        field: "<model-dir>",
        expected: "one path",
        found: positionals.length ? positionals.join(" ") : "nothing",
      });
    if (v.prompt === undefined) throw new UsageError("--prompt is required", { field: "--prompt", expected: "the prompt text" });
    const G = "generate";
    const runtime = runtimeOptions(G, v);
    const numbers = {
      genLength: optionalInt(G, "gen-length", v["gen-length"], { min: 1 }),
      steps: optionalInt(G, "steps", v.steps, { min: 1 }),
      blockLength: optionalInt(G, "block-length", v["block-length"], { min: 1 }),
      temperature: optionalNumber(G, "temperature", v.temperature, { min: 0 }),
      topP: optionalNumber(G, "top-p", v["top-p"], { above: 0, max: 1 }),
      topK: optionalInt(G, "top-k", v["top-k"], { min: 1 }),
      cfgScale: optionalNumber(G, "cfg", v.cfg, { min: 0 }),
      eps: optionalNumber(G, "eps", v.eps, { above: 0, max: 1 }),
      algTemp: optionalNumber(G, "alg-temp", v["alg-temp"], { min: 0 }),
      seed: optionalInt(G, "seed", v.seed, { min: 0 }),
      maxTraceBytes: optionalInt(G, "max-trace-bytes", v["max-trace-bytes"], { min: 1 }),
    };
    const settings: Record<string, unknown> = v.config !== undefined ? readConfigFile(String(v.config)) : {};
    const traceFile = v.trace !== undefined ? outputFile(G, "trace", String(v.trace), !!v.mkdir, io) : undefined;
    // The weight scan reads every byte: it runs after the cheap checks below, so a bad flag or an
    // input that is too long never waits for it.
    const model = openModelFiles(checkpointInput("generate", positionals[0]), { tokenizer: "optional", scanWeights: false });
    const { checkpoint: ckpt, spec, tokenizer } = model;
    if (!tokenizer)
      throw new UsageError("This checkpoint has no tokenizer.json", {
        file: ckpt.dir,
        field: "tokenizer.json",
        expected: "a checkpoint with a tokenizer",
      });

    const set = (key: keyof RunConfig, value: unknown) => {
      if (value !== undefined) settings[key] = value;
    };
    set("sampler", v.sampler);
    set("alg", v.alg);
    for (const [key, value] of Object.entries(numbers)) set(key as keyof RunConfig, value);
    if (v["no-special"]) settings.addSpecialTokens = false;
    if (v.probes !== undefined || v.layers !== undefined || v.heads !== undefined || settings.probes === undefined) {
      settings.probes = probeRequestFromFlags(
        "generate",
        { probes: v.probes as string | undefined, layers: v.layers as string | undefined, heads: v.heads as string | undefined },
        spec.numLayers,
      );
    }
    const text = v.chat
      ? tokenizer.applyChatTemplate([{ role: "user", content: String(v.prompt) }], { addGenerationPrompt: true })
      : String(v.prompt);
    // Everything that can be wrong with the settings or the prompt fails here, before the engine is built.
    const intervention = v.intervene !== undefined ? String(v.intervene) : undefined;
    const { cfg, encoded, traceBytes, intervener } = prepareRun(spec, [text], settings, tokenizer, io.err, intervention);

    if (runtime.scanWeights) assertFiniteWeights(model.checkpoint, model.spec, { verdictCache: defaultWeightCacheDir() });
    const { engine } = await startEngine(model, {
      probes: cfg.probes,
      device: runtime.device,
      threads: runtime.threads,
      lowMemory: runtime.lowMemory,
      quantizedWeights: runtime.quantizedWeights,
      nbitsAccuracyLevel: runtime.nbitsAccuracyLevel,
      kvCache: runtime.kvCache,
      // refused before a weight is read when the longest step would not fit
      plannedRun: { batch: 1, seq: encoded[0].ids.length + cfg.genLength },
      memoryBudgetBytes: runtime.memoryBudgetBytes,
      warn: io.err,
      interventions: intervener !== undefined,
    });
    try {
      const t0 = performance.now();
      const [r] = await generate(engine, [text], cfg as unknown as Partial<RunConfig> & Record<string, unknown>, {
        tokenizer,
        traceFiles: [traceFile],
        modelName: path.basename(ckpt.dir),
        intervention,
        warn: () => undefined, // prepareRun above warned already; Ctrl-C: generate stops at the next step
      });
      const s = ((performance.now() - t0) / 1000).toFixed(1);
      io.out(r.trace.partial ? "(interrupted: partial answer)" : r.answer);
      const info = `${cfg.sampler}/${cfg.alg}${intervener ? `, intervention ${intervener.record.policy}` : ""}, ${r.trace.steps.length} steps, ${engine.device}, ${s} s`;
      if (traceFile) {
        const bytes = fs.statSync(traceFile).size;
        io.out(`trace: ${traceFile} (${bytes} bytes${r.trace.partial ? ", partial" : ""}; estimated ${traceBytes}) — ${info}`);
      } else {
        io.out(`no trace written (pass --trace out.fstrace) — ${info}`);
      }
      return r.trace.partial ? EXIT.interrupted : EXIT.ok;
    } finally {
      await engine.dispose();
    }
  },
};
