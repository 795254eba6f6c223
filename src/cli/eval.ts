/**
 * `floatscope eval <model-dir> --data <jsonl> [--setting …] [--out results.jsonl]`: QA evaluation of
 * one checkpoint on a Lost-in-the-Middle-schema file in one setting (src/eval/, docs/qa-harness.md).
 * Prints a summary (Acc / F1 / EM ×100); rows are appended to --out, and a rerun with the same --out
 * skips the questions already done.
 */
import { DistractorPool, type EvalSetting, type GoldPosition } from "../eval/contexts.js";
import { loadQaJsonl, NQ_ENV } from "../eval/datasets.js";
import { ANSWER_EXTRACTIONS, type AnswerExtraction } from "../eval/metrics.js";
import { openEvalModel } from "../eval/open.js";
import { defaultPreset } from "../eval/presets.js";
import { PROMPT_FORMATS, type PromptFormat } from "../eval/prompts.js";
import { readResults, runEval, summarizeResults } from "../eval/runner.js";
import type { RunConfig } from "../samplers/config.js";
import { parsePolicy, policyProbes } from "../samplers/interventions.js";
import { keyword } from "../util/errors.js";
import { intList, parseFlags, UsageError, type CliIO } from "./args.js";
import type { CliCommand } from "./commands.js";

const HELP = `Usage: floatscope eval <model-dir> --data <file.jsonl[.gz]> [options]

QA evaluation (paper §10 metrics: Acc = normalised gold is a substring of the response, token F1,
plus exact match) of one checkpoint in one setting.

Data:
  --data <file>          Lost-in-the-Middle-schema jsonl or jsonl.gz ({question, answers, ctxs}).
                         Default: $${NQ_ENV}. NQ-open oracle file: nq-open-oracle.jsonl.gz from
                         github.com/nelson-liu/lost-in-the-middle (qa_data/, MIT).
  --limit <n>            evaluate the first n questions (after --skip)
  --skip <n>             skip the first n questions
Setting:
  --setting <s>          closed-book | oracle | distractors (default oracle)
  --k <n>                distractors (default 4)
  --gold-position <p>    0-based index of the gold passage, or cycle (row mod k+1) or random (default 0)
  --source <s>           record (the record's own non-gold ctxs) | pool (other questions' gold
                         passages; default: record when every record has ≥ k, else pool)
  --seed <n>             seed of distractor/position draws and of the sampler (default 0)
Prompt and decoding (defaults: the paper's, or the tiny models' for models/tiny-*):
  --format <f>           ${PROMPT_FORMATS.join(" | ")}
  --no-chat-template     use the bare prompt text
  --double-bos           reproduce upstream's double BOS for Llama-3 templates
  --gen-length <n>       new tokens      --steps <n>    denoising steps
  --block-length <n>     LLaDA block     --temperature <t>
  --extraction <e>       ${ANSWER_EXTRACTIONS.join(" | ")} (what is scored)
Run:
  --batch-size <n>       questions per forward batch (default 1)
  --out <file.jsonl>     append per-question rows; rerunning skips questions already done
  --traces <dir>         save one .fstrace per question
  --intervene <policy>   attention intervention at every step: none | anchors | anchors:first-pass |
                         first | random | random:<k> | sink | sink:<token id> (docs/samplers.md)
  --device <d>           cpu | cuda | auto (default cpu)
  --threads <n>          intra-op threads
  -h, --help             this help`;

function int(flag: string, value: string | boolean | undefined): number | undefined {
  return value === undefined ? undefined : intList("eval", flag, String(value))[0];
}

export const command: CliCommand = {
  help: HELP,
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values: v, positionals } = parseFlags("eval", argv, {
      data: { type: "string" }, limit: { type: "string" }, skip: { type: "string" },
      setting: { type: "string" }, k: { type: "string" }, "gold-position": { type: "string" }, source: { type: "string" }, seed: { type: "string" },
      format: { type: "string" }, "no-chat-template": { type: "boolean" }, "double-bos": { type: "boolean" },
      "gen-length": { type: "string" }, steps: { type: "string" }, "block-length": { type: "string" }, temperature: { type: "string" },
      extraction: { type: "string" }, "batch-size": { type: "string" }, out: { type: "string" }, traces: { type: "string" },
      device: { type: "string" }, threads: { type: "string" }, intervene: { type: "string" },
    });
    if (positionals.length !== 1) throw new UsageError("`floatscope eval` takes one model folder", { field: "<model-dir>", expected: "one path", found: positionals.length ? positionals.join(" ") : "nothing" });
    const data = (v.data as string | undefined) ?? process.env[NQ_ENV];
    if (!data) throw new UsageError("No data file", { field: "--data", expected: `a jsonl(.gz) path, or the ${NQ_ENV} environment variable`, hint: "the NQ-open oracle file comes from nelson-liu/lost-in-the-middle (qa_data/nq-open-oracle.jsonl.gz)" });
    const kind = keyword(v.setting ?? "oracle", ["closed-book", "oracle", "distractors"] as const, { field: "--setting" });
    const k = int("k", v.k) ?? 4;
    const seed = int("seed", v.seed) ?? 0;
    const gp = String(v["gold-position"] ?? "0");
    const goldPosition: GoldPosition = gp === "cycle" || gp === "random" ? gp : intList("eval", "gold-position", gp)[0];
    const temperature = v.temperature === undefined ? undefined : Number(v.temperature);
    if (temperature !== undefined && !Number.isFinite(temperature)) throw new UsageError("Bad --temperature", { field: "--temperature", expected: "a number", found: String(v.temperature) });

    const all = await loadQaJsonl(data);
    const skip = int("skip", v.skip) ?? 0;
    const records = all.slice(skip, v.limit !== undefined ? skip + int("limit", v.limit)! : undefined);
    const source = v.source !== undefined
      ? keyword(v.source, ["record", "pool"] as const, { field: "--source" })
      : all.every((r) => r.ctxs.filter((c) => c.isgold !== true).length >= k) ? "record" : "pool";
    const setting: EvalSetting = kind === "distractors" ? { kind, k, goldPosition, source, seed } : { kind };

    const intervention = v.intervene !== undefined ? parsePolicy(String(v.intervene)) : undefined; // typed error before any work
    const m = await openEvalModel(positionals[0], {
      device: (v.device as "cpu" | "cuda" | "auto" | undefined) ?? "cpu", threads: int("threads", v.threads), warn: io.err,
      ...(intervention && intervention.kind !== "none" ? { interventions: true, probes: policyProbes(intervention) } : {}),
    });
    try {
      const preset = defaultPreset(m.spec, m.tokenizer);
      const sampler: Partial<RunConfig> = { ...preset.sampler, seed };
      const gen = int("gen-length", v["gen-length"]);
      if (gen !== undefined) { sampler.genLength = gen; delete sampler.steps; delete sampler.blockLength; }
      if (int("steps", v.steps) !== undefined) sampler.steps = int("steps", v.steps);
      if (int("block-length", v["block-length"]) !== undefined) sampler.blockLength = int("block-length", v["block-length"]);
      if (temperature !== undefined) sampler.temperature = temperature;
      const format = v.format !== undefined ? keyword<PromptFormat>(v.format, PROMPT_FORMATS, { field: "--format" }) : preset.promptFormat;
      const extraction = v.extraction !== undefined ? keyword<AnswerExtraction>(v.extraction, ANSWER_EXTRACTIONS, { field: "--extraction" }) : preset.extraction;
      const t0 = Date.now();
      const run = await runEval({
        engine: m.engine, tokenizer: m.tokenizer, records, setting, promptFormat: format, sampler, extraction,
        pool: setting.kind === "distractors" && setting.source === "pool" ? new DistractorPool(all) : undefined,
        modelName: m.name, dataFile: data, chatTemplate: !v["no-chat-template"], reproduceDoubleBos: !!v["double-bos"],
        batchSize: int("batch-size", v["batch-size"]) ?? 1, resultsFile: v.out as string | undefined, traceDir: v.traces as string | undefined,
        intervention,
        onProgress: (p) => { if (p.done % 50 === 0 || p.done === p.total) io.err(`eval: ${p.done}/${p.total} (${p.errors} errors, ${p.resumed} resumed)`); },
      });
      const rows = v.out ? readResults(String(v.out)).filter((r) => r.model === m.name) : run.results;
      const table = summarizeResults(rows).objects() as Record<string, number | string>[];
      const fmt = (x: unknown) => (typeof x === "number" ? (Number.isFinite(x) ? x.toFixed(2) : "–") : String(x));
      io.out([`${m.name} (${m.spec.family}) on ${data}: format ${format}, extraction ${extraction}, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
        "setting\tn\terrors\tacc\tf1\tem\tprompt_tokens\tintervention",
        ...table.map((r) => [r.setting, r.n, r.errors, fmt(r.accuracy), fmt(r.f1), fmt(r.exactMatch), fmt(r.promptTokens), r.intervention].join("\t"))].join("\n"));
      const firstError = run.results.find((r) => r.error);
      if (firstError) io.err(`eval: ${run.progress.errors} questions failed; first: ${firstError.error}`);
      return run.progress.errors > 0 && run.progress.errors === run.progress.done ? 1 : 0;
    } finally {
      await m.engine.dispose();
    }
  },
};
