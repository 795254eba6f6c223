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
import { assertFiniteWeights } from "../graph/scan-weights.js";
import type { RunConfig } from "../samplers/config.js";
import { generate, prepareRun } from "../samplers/generate.js";
import { optionalInt, optionalNumber, parseFlags, UsageError, type CliIO } from "./args.js";
import { checkpointPath, type CliCommand } from "./command-types.js";
import { checkpointInput, inputFile } from "./inputs.js";
import { EXIT } from "./exit.js";
import { MKDIR_FLAG, MKDIR_HELP, outputFile } from "./outputs.js";
import { readFileBounded } from "../util/paths.js";
import { PROBE_WORDS, probeRequestFromFlags } from "./probe-flags.js";

const HELP = `Usage: floatscope generate <model-dir> --prompt "…" [options]

Sample an answer and record, for every denoising (or decoding) step, the canvas, the positions
unmasked, their confidences and the attention probes of every layer, plus one forward pass over
the final sequence. Defaults are the paper's settings for the model's family (LLaDA: low_confidence,
τ 0; Dream: entropy, τ 0.2, top-p 0.95; LLaMA/Qwen: greedy).

Prompt:
  --prompt <text>       the prompt text (used verbatim unless --chat)
  --chat                wrap the prompt as one user turn with the checkpoint's chat template
  --no-special          do not let the tokenizer add special tokens (BOS)
Sampler:
  --sampler <s>         llada | dream | arm (default: the family's)
  --alg <a>             llada: low_confidence | random; dream: entropy | maskgit_plus | topk_margin |
                        origin; arm: greedy | sample
  --gen-length <n>      tokens to generate (default 32)
  --steps <n>           denoising steps (default = gen-length)
  --block-length <n>    LLaDA block length (default = gen-length)
  --temperature <x>     --top-p <x>   --top-k <n>   --cfg <x>   --eps <x>   --alg-temp <x>
  --seed <n>            seed of the sampler's RNG (default 0)
  --config <file.json>  settings as a JSON RunConfig object (flags override it)
Trace:
  --trace <file>        write the trace here (.fstrace; streamed while sampling)
  --probes <list>       comma-separated, from: ${PROBE_WORDS.join(", ")} (default: received)
  --layers <list>       layers for pattern / pattern_mean / q_rot / k_rot (default: all)
  --heads <list>        heads for pattern (default: all)
  --max-trace-bytes <n> refuse runs whose trace would be larger (default 4 GiB)
${MKDIR_HELP}
Intervention:
  --intervene <policy>  change attention at every step and record it: none | anchors |
                        anchors:first-pass | first | random | random:<k> | sink | sink:<token id>
                        (docs/samplers.md, "Attention interventions")
Runtime:
  --device <d>          cpu | cuda | auto (default cpu)
  --threads <n>         intra-op threads
  --low-memory          keep weights memory-mapped
  --memory-budget <n>   refuse forwards estimated above n bytes (default 75 % of physical memory)
  --no-weight-scan      skip the NaN/Inf scan of the weights (on by default)
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
  paths: [
    checkpointPath(() => ["--prompt", "hi"]),
    { arg: "--config", role: "input", expects: "file", name: "config.json", example: (p, f) => [f.model, "--prompt", "hi", "--config", p] },
    { arg: "--trace", role: "output", expects: "file", name: "run.fstrace", example: (p, f) => [f.model, "--prompt", "hi", "--trace", p] },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("generate", argv, {
      prompt: { type: "string" },
      chat: { type: "boolean" },
      "no-special": { type: "boolean" },
      sampler: { type: "string" },
      alg: { type: "string" },
      "gen-length": { type: "string" },
      steps: { type: "string" },
      "block-length": { type: "string" },
      temperature: { type: "string" },
      "top-p": { type: "string" },
      "top-k": { type: "string" },
      cfg: { type: "string" },
      eps: { type: "string" },
      "alg-temp": { type: "string" },
      seed: { type: "string" },
      config: { type: "string" },
      trace: { type: "string" },
      probes: { type: "string" },
      layers: { type: "string" },
      heads: { type: "string" },
      "max-trace-bytes": { type: "string" },
      device: { type: "string" },
      threads: { type: "string" },
      "low-memory": { type: "boolean" },
      "memory-budget": { type: "string" },
      "no-weight-scan": { type: "boolean" },
      ...MKDIR_FLAG,
      intervene: { type: "string" },
    });
    if (positionals.length !== 1)
      throw new UsageError("`floatscope generate` takes one model folder", {
        field: "<model-dir>",
        expected: "one path",
        found: positionals.length ? positionals.join(" ") : "nothing",
      });
    if (v.prompt === undefined) throw new UsageError("--prompt is required", { field: "--prompt", expected: "the prompt text" });
    const G = "generate";
    const threads = optionalInt(G, "threads", v.threads, { min: 1 });
    const memoryBudgetBytes = optionalInt(G, "memory-budget", v["memory-budget"], { min: 1 });
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
    const { cfg, traceBytes, intervener } = prepareRun(spec, [text], settings, tokenizer, io.err, intervention);

    const device = (v.device as "cpu" | "cuda" | "auto" | undefined) ?? "cpu";
    if (!v["no-weight-scan"]) assertFiniteWeights(model.checkpoint, model.spec);
    const { engine } = await startEngine(model, {
      probes: cfg.probes,
      device,
      threads,
      lowMemory: !!v["low-memory"],
      memoryBudgetBytes,
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
