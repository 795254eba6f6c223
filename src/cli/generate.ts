/**
 * `floatscope generate <model-dir> --prompt "…" [--steps … --gen-length … --block-length … --alg …
 * --seed …] [--trace out.fstrace]`: sample one answer with the family's sampler, print it, and
 * record the per-step trace. Settings come from `--config file.json` (a RunConfig object) and
 * flags (flags win); they are all checked, and the prompt length too, before the engine is built.
 * Ctrl-C stops between steps and leaves a valid partial trace.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { openCheckpoint } from "../checkpoint/checkpoint.js";
import { loadTokenizer } from "../checkpoint/tokenizer.js";
import { resolveModelSpec } from "../graph/adapters/index.js";
import { createEngine } from "../runtime/engine.js";
import type { RunConfig } from "../samplers/config.js";
import { generate, prepareRun } from "../samplers/generate.js";
import { intList, parseFlags, UsageError, type CliIO } from "./args.js";
import type { CliCommand } from "./commands.js";
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
Intervention:
  --intervene <policy>  change attention at every step and record it: none | anchors |
                        anchors:first-pass | first | random | random:<k> | sink | sink:<token id>
                        (docs/samplers.md, "Attention interventions")
Runtime:
  --device <d>          cpu | cuda | auto (default cpu)
  --threads <n>         intra-op threads
  --low-memory          keep weights memory-mapped
  -h, --help            this help`;

function number(flag: string, v: unknown): number | undefined {
  if (v === undefined) return undefined;
  const n = Number(v);
  if (String(v).trim() === "" || !Number.isFinite(n)) {
    throw new UsageError(`Bad value for --${flag} of \`floatscope generate\``, { field: `--${flag}`, expected: "a number", found: JSON.stringify(v) });
  }
  return n;
}

function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = fs.readFileSync(file, "utf8");
  } catch (e) {
    throw new UsageError("Cannot read --config", { file, field: "--config", found: (e as Error).message });
  }
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch (e) {
    throw new UsageError("--config is not valid JSON", { file, field: "--config", found: (e as Error).message });
  }
  if (json === null || typeof json !== "object" || Array.isArray(json)) throw new UsageError("--config must hold a JSON object", { file, field: "--config", expected: "{ \"steps\": 32, … }" });
  return json as Record<string, unknown>;
}

export const command: CliCommand = {
  help: HELP,
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("generate", argv, {
      prompt: { type: "string" }, chat: { type: "boolean" }, "no-special": { type: "boolean" },
      sampler: { type: "string" }, alg: { type: "string" }, "gen-length": { type: "string" }, steps: { type: "string" },
      "block-length": { type: "string" }, temperature: { type: "string" }, "top-p": { type: "string" }, "top-k": { type: "string" },
      cfg: { type: "string" }, eps: { type: "string" }, "alg-temp": { type: "string" }, seed: { type: "string" }, config: { type: "string" },
      trace: { type: "string" }, probes: { type: "string" }, layers: { type: "string" }, heads: { type: "string" }, "max-trace-bytes": { type: "string" },
      intervene: { type: "string" }, device: { type: "string" }, threads: { type: "string" }, "low-memory": { type: "boolean" },
    });
    if (positionals.length !== 1) throw new UsageError("`floatscope generate` takes one model folder", { field: "<model-dir>", expected: "one path", found: positionals.length ? positionals.join(" ") : "nothing" });
    if (v.prompt === undefined) throw new UsageError("--prompt is required", { field: "--prompt", expected: "the prompt text" });
    const ckpt = openCheckpoint(positionals[0]);
    const spec = resolveModelSpec(ckpt);
    if (!ckpt.tokenizer) throw new UsageError("This checkpoint has no tokenizer.json", { file: ckpt.dir, field: "tokenizer.json", expected: "a checkpoint with a tokenizer" });
    const tokenizer = loadTokenizer(ckpt.tokenizer, { bosTokenId: spec.bosTokenId, eosTokenIds: spec.eosTokenIds });

    const settings: Record<string, unknown> = v.config !== undefined ? readConfigFile(String(v.config)) : {};
    const set = (key: keyof RunConfig, value: unknown) => { if (value !== undefined) settings[key] = value; };
    set("sampler", v.sampler);
    set("alg", v.alg);
    set("genLength", number("gen-length", v["gen-length"]));
    set("steps", number("steps", v.steps));
    set("blockLength", number("block-length", v["block-length"]));
    set("temperature", number("temperature", v.temperature));
    set("topP", number("top-p", v["top-p"]));
    set("topK", number("top-k", v["top-k"]));
    set("cfgScale", number("cfg", v.cfg));
    set("eps", number("eps", v.eps));
    set("algTemp", number("alg-temp", v["alg-temp"]));
    set("seed", number("seed", v.seed));
    set("maxTraceBytes", number("max-trace-bytes", v["max-trace-bytes"]));
    if (v["no-special"]) settings.addSpecialTokens = false;
    if (v.probes !== undefined || v.layers !== undefined || v.heads !== undefined || settings.probes === undefined) {
      settings.probes = probeRequestFromFlags("generate", { probes: v.probes as string | undefined, layers: v.layers as string | undefined, heads: v.heads as string | undefined }, spec.numLayers);
    }
    const text = v.chat ? tokenizer.applyChatTemplate([{ role: "user", content: String(v.prompt) }], { addGenerationPrompt: true }) : String(v.prompt);
    // Everything that can be wrong with the settings or the prompt fails here, before the engine is built.
    const intervention = v.intervene !== undefined ? String(v.intervene) : undefined;
    const { cfg, traceBytes, intervener } = prepareRun(spec, [text], settings, tokenizer, intervention);

    const device = (v.device as "cpu" | "cuda" | "auto" | undefined) ?? "cpu";
    const threads = v.threads !== undefined ? intList("generate", "threads", String(v.threads))[0] : undefined;
    const engine = await createEngine({ spec, tensors: ckpt.tensors }, { probes: cfg.probes, device, threads, lowMemory: !!v["low-memory"], warn: io.err, interventions: intervener !== undefined });
    const traceFile = v.trace !== undefined ? path.resolve(String(v.trace)) : undefined;
    try {
      const t0 = performance.now();
      const [r] = await generate(engine, [text], cfg as unknown as Partial<RunConfig> & Record<string, unknown>, {
        tokenizer, traceFiles: [traceFile], modelName: path.basename(ckpt.dir), intervention, // Ctrl-C: generate stops at the next step
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
      return r.trace.partial ? 130 : 0;
    } finally {
      await engine.dispose();
    }
  },
};
