/**
 * `floatscope eval <model-dir> --data <jsonl> [--setting …] [--out results.jsonl]`: QA evaluation of
 * one checkpoint on a Lost-in-the-Middle-schema file in one setting (src/qa/, docs/qa-harness.md).
 * Prints a summary (Acc / F1 / EM ×100); rows are appended to --out, and a rerun with the same --out
 * skips the questions already done.
 */
import { DistractorPool, type EvalSetting, type GoldPosition } from "../qa/contexts.js";
import { DatasetError, describeDataReport, loadQaJsonl, newDataReport, NQ_ENV } from "../qa/datasets.js";
import { openModel } from "../model/open.js";
import { ANSWER_EXTRACTIONS, PROMPT_FORMATS, defaultPreset, type AnswerExtraction, type PromptFormat } from "../model/presets.js";
import { readResults, runEval, summarizeResults } from "../qa/runner.js";
import { DEFAULT_SAMPLER, type SamplerKind } from "../families/index.js";
import { SAMPLERS, type RunConfig } from "../samplers/config.js";
import { parsePolicy, policyProbes } from "../samplers/interventions.js";
import { keyword } from "../util/errors.js";
import { inspectPath } from "../util/paths.js";
import { flagSpec, helpSections, intList, optionalInt, optionalNumber, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import { runtimeOptions, runtimeRows } from "./runtime-flags.js";
import { decodingRows } from "./decoding-flags.js";
import { checkpointPath, type CliCommand } from "./command-types.js";
import { GRID_FLAGS, GRID_HELP, GRID_PATHS, runGridEval } from "./eval-grid.js";
import { checkpointInput, inputFile } from "./inputs.js";
import { EXPORT_ROWS, exportTarget } from "./export-flags.js";
import { writeTable, type ColumnKind } from "../util/table-export.js";

/** Scores are fractions (F1) or 0/1: always DOUBLE, whatever this run's values happen to be. */
const EVAL_ROW_TYPES: Record<string, ColumnKind> = { accuracy: "double", f1: "double", exactMatch: "double", ms: "double" };
import { MKDIR_ROW, outputDirectory, outputFile } from "./outputs.js";

/** The flags of `floatscope eval` (without --grid: eval-grid.ts has those), by help section. */
const EVAL_FLAGS: Record<string, FlagRow[]> = {
  Data: [
    {
      name: "data",
      type: "string",
      value: "<file>",
      help: [
        "Lost-in-the-Middle-schema jsonl or jsonl.gz ({question, answers, ctxs}).",
        `Default: $${NQ_ENV}. NQ-open oracle file: nq-open-oracle.jsonl.gz from`,
        "github.com/nelson-liu/lost-in-the-middle (qa_data/, MIT).",
      ],
    },
    { name: "limit", type: "string", value: "<n>", help: "evaluate the first n questions (after --skip)" },
    { name: "skip", type: "string", value: "<n>", help: "skip the first n questions" },
  ],
  Setting: [
    { name: "setting", type: "string", value: "<s>", help: "closed-book | oracle | distractors", default: "oracle" },
    { name: "k", type: "string", value: "<n>", help: "distractors", default: "4" },
    {
      name: "gold-position",
      type: "string",
      value: "<p>",
      help: "0-based index of the gold passage, or cycle (row mod k+1) or random",
      default: "0",
    },
    {
      name: "source",
      type: "string",
      value: "<s>",
      help: [
        "record (the record's own non-gold ctxs) | pool (other questions' gold",
        "passages; default: record when every record has ≥ k, else pool)",
      ],
    },
    { name: "seed", type: "string", value: "<n>", help: "seed of distractor/position draws and of the sampler", default: "0" },
  ],
  "Prompt and decoding (defaults: the paper's, or the tiny models' for models/tiny-*)": [
    { name: "format", type: "string", value: "<f>", help: PROMPT_FORMATS.join(" | ") },
    { name: "no-chat-template", type: "boolean", help: "use the bare prompt text" },
    { name: "double-bos", type: "boolean", help: "reproduce upstream's double BOS for Llama-3 templates" },
    ...decodingRows({ of: "the preset's" }),
    { name: "extraction", type: "string", value: "<e>", help: `${ANSWER_EXTRACTIONS.join(" | ")} (what is scored)` },
  ],
  Run: [
    { name: "batch-size", type: "string", value: "<n>", help: "questions per forward batch", default: "1" },
    { name: "out", type: "string", value: "<file.jsonl>", help: "append per-question rows; rerunning skips questions already done" },
    { name: "traces", type: "string", value: "<dir>", help: "save one .fstrace per question" },
    ...EXPORT_ROWS,
    {
      name: "intervene",
      type: "string",
      value: "<policy>",
      help: [
        "attention intervention at every step: none | anchors | anchors:first-pass |",
        "first | random | random:<k> | sink | sink:<token id> (docs/samplers.md)",
      ],
    },
    ...runtimeRows("device", "threads"),
    MKDIR_ROW,
    ...runtimeRows("no-weight-scan", "quantized-weights", "no-kv-cache"),
  ],
};

const HELP = `Usage: floatscope eval <model-dir> --data <file.jsonl[.gz]> [options]

QA evaluation (paper §10 metrics: Acc = normalised gold is a substring of the response, token F1,
plus exact match) of one checkpoint in one setting.

${helpSections(EVAL_FLAGS, 25)}
  --debug                print stack traces of errors
  -h, --help             this help

Every prompt is checked against max_position_embeddings (a question that does not fit is an error
row). Exit codes: 0 ok, 1 failure (data, checkpoint, every question failed), 2 usage.

A whole grid of models × datasets × settings, sharded for a cluster:
${GRID_HELP.split("\n").slice(2).join("\n")}`;

function int(flag: string, value: string | boolean | undefined, min = 0): number | undefined {
  return optionalInt("eval", flag, value, { min });
}

const EVAL_SPEC = flagSpec(Object.values(EVAL_FLAGS).flat());

export const command: CliCommand = {
  help: HELP,
  flags: { ...EVAL_SPEC, ...GRID_FLAGS },
  paths: [
    checkpointPath((f) => ["--data", f.data]),
    { arg: "--data", role: "input", expects: "file", name: "data.jsonl", example: (p, f) => [f.model, "--data", p] },
    { arg: "--out", role: "output", expects: "file", name: "results.jsonl", example: (p, f) => [f.model, "--data", f.data, "--out", p] },
    { arg: "--traces", role: "output", expects: "folder", name: "traces", example: (p, f) => [f.model, "--data", f.data, "--traces", p] },
    { arg: "--export", role: "output", expects: "file", name: "rows.csv", example: (p, f) => [f.model, "--data", f.data, "--export", p] },
    ...GRID_PATHS,
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    if (argv.some((a) => a === "--grid" || a.startsWith("--grid="))) return runGridEval(argv, io);
    const { values: v, positionals } = parseFlags("eval", argv, EVAL_SPEC);
    const target = exportTarget("eval", v);
    if (positionals.length !== 1)
      throw new UsageError("`floatscope eval` takes one model folder", {
        field: "<model-dir>",
        expected: "one path",
        found: positionals.length ? positionals.join(" ") : "nothing",
      });
    const data = (v.data as string | undefined) ?? process.env[NQ_ENV];
    if (!data)
      throw new UsageError("No data file", {
        field: "--data",
        expected: `a jsonl(.gz) path, or the ${NQ_ENV} environment variable`,
        hint: "the NQ-open oracle file comes from nelson-liu/lost-in-the-middle (qa_data/nq-open-oracle.jsonl.gz)",
      });
    const kind = keyword(v.setting ?? "oracle", ["closed-book", "oracle", "distractors"] as const, { field: "--setting" });
    const k = int("k", v.k, 1) ?? 4;
    const seed = int("seed", v.seed) ?? 0;
    const gp = String(v["gold-position"] ?? "0");
    const goldPosition: GoldPosition = gp === "cycle" || gp === "random" ? gp : intList("eval", "gold-position", gp, { min: 0, max: k })[0];
    const temperature = optionalNumber("eval", "temperature", v.temperature, { min: 0 });
    const skip = int("skip", v.skip) ?? 0;
    const limit = int("limit", v.limit, 1);
    const gen = int("gen-length", v["gen-length"], 1);
    const steps = int("steps", v.steps, 1);
    const blockLength = int("block-length", v["block-length"], 1);
    const samplerKind = v.sampler !== undefined ? keyword<SamplerKind>(String(v.sampler), SAMPLERS, { field: "--sampler" }) : undefined;
    const batchSize = int("batch-size", v["batch-size"], 1) ?? 1;
    const runtime = runtimeOptions("eval", v);
    // Output paths before any work: a folder given as --out, or a missing folder without --mkdir, is a usage error.
    const resultsFile = v.out !== undefined ? outputFile("eval", "out", String(v.out), !!v.mkdir, io) : undefined;
    const traceDir = v.traces !== undefined ? outputDirectory("eval", "traces", String(v.traces), !!v.mkdir, io) : undefined;
    if (target) outputFile("eval", "export", target.file, !!v.mkdir, io);
    inputFile(data, { command: "eval", arg: v.data !== undefined ? "--data" : `$${NQ_ENV}`, what: "QA data file", error: DatasetError });
    checkpointInput("eval", positionals[0]);

    const report = newDataReport();
    const all = await loadQaJsonl(data, { report });
    if (all.length === 0)
      throw new DatasetError("QA data file has no records", {
        file: data,
        expected: "one JSON record per line",
        found: report.blankLines ? `${report.blankLines} blank lines` : "an empty file",
      });
    for (const line of describeDataReport(report)) io.err(`eval: data: ${line}`);
    const records = all.slice(skip, limit !== undefined ? skip + limit : undefined);
    if (records.length === 0) {
      throw new DatasetError("No questions to evaluate", {
        file: data,
        field: "--data / --skip / --limit",
        expected: "at least one record",
        found: `${all.length} records in the file, ${skip} skipped`,
      });
    }
    const source =
      v.source !== undefined
        ? keyword(v.source, ["record", "pool"] as const, { field: "--source" })
        : all.every((r) => r.ctxs.filter((c) => c.isgold !== true).length >= k)
          ? "record"
          : "pool";
    const setting: EvalSetting = kind === "distractors" ? { kind, k, goldPosition, source, seed } : { kind };

    const intervention = v.intervene !== undefined ? parsePolicy(String(v.intervene)) : undefined; // typed error before any work
    const m = await openModel(positionals[0], {
      device: runtime.device,
      threads: runtime.threads,
      scanWeights: runtime.scanWeights,
      quantizedWeights: runtime.quantizedWeights,
      kvCache: runtime.kvCache,
      warn: io.err,
      ...(intervention && intervention.kind !== "none" ? { interventions: true, probes: policyProbes(intervention) } : {}),
    });
    try {
      const preset = defaultPreset(m.spec, m.tokenizer, m.checkpoint.dir);
      const sampler: Partial<RunConfig> = { ...preset.sampler, seed };
      if (samplerKind !== undefined && samplerKind !== (preset.sampler.sampler ?? DEFAULT_SAMPLER[m.spec.family])) {
        // another decoder: the preset's unmasking order belongs to its own sampler
        sampler.sampler = samplerKind;
        delete sampler.alg;
      }
      if (v.alg !== undefined) sampler.alg = String(v.alg) as RunConfig["alg"]; // checked against the sampler's orders by resolveRunConfig
      if (gen !== undefined) {
        sampler.genLength = gen;
        delete sampler.steps;
        delete sampler.blockLength;
      }
      if (steps !== undefined) sampler.steps = steps;
      if (blockLength !== undefined) sampler.blockLength = blockLength;
      if (temperature !== undefined) sampler.temperature = temperature;
      const format = v.format !== undefined ? keyword<PromptFormat>(v.format, PROMPT_FORMATS, { field: "--format" }) : preset.promptFormat;
      const extraction =
        v.extraction !== undefined
          ? keyword<AnswerExtraction>(v.extraction, ANSWER_EXTRACTIONS, { field: "--extraction" })
          : preset.extraction;
      const t0 = Date.now();
      const run = await runEval({
        engine: m.engine,
        tokenizer: m.tokenizer,
        records,
        setting,
        promptFormat: format,
        sampler,
        extraction,
        pool: setting.kind === "distractors" && setting.source === "pool" ? new DistractorPool(all) : undefined,
        modelName: m.name,
        dataFile: data,
        chatTemplate: !v["no-chat-template"],
        reproduceDoubleBos: !!v["double-bos"],
        batchSize,
        resultsFile,
        traceDir,
        intervention,
        warn: (m) => io.err(`eval: ${m}`),
        onProgress: (p) => {
          if (p.done % 50 === 0 || p.done === p.total) io.err(`eval: ${p.done}/${p.total} (${p.errors} errors, ${p.resumed} resumed)`);
        },
      });
      const rows =
        resultsFile && inspectPath(resultsFile).kind === "file" ? readResults(resultsFile).filter((r) => r.model === m.name) : run.results;
      if (target) {
        writeTable(target.file, rows as unknown as Record<string, unknown>[], { format: target.format, types: EVAL_ROW_TYPES });
        io.err(`eval: ${rows.length} rows → ${target.file} (${target.format})`);
      }
      const table = summarizeResults(rows).objects();
      const fmt = (x: unknown) => (typeof x === "number" ? (Number.isFinite(x) ? x.toFixed(2) : "–") : String(x));
      io.out(
        [
          `${m.name} (${m.spec.family}) on ${data}: format ${format}, extraction ${extraction}, ${((Date.now() - t0) / 1000).toFixed(1)} s`,
          "setting\tn\terrors\tacc\tf1\tem\tprompt_tokens\tintervention",
          ...table.map((r) =>
            [r.setting, r.n, r.errors, fmt(r.accuracy), fmt(r.f1), fmt(r.exactMatch), fmt(r.promptTokens), r.intervention].join("\t"),
          ),
        ].join("\n"),
      );
      const firstError = run.results.find((r) => r.error);
      if (firstError) io.err(`eval: ${run.progress.errors} questions failed; first: ${firstError.error}`);
      return run.progress.errors > 0 && run.progress.errors === run.progress.done ? 1 : 0;
    } finally {
      await m.engine.dispose();
    }
  },
};
