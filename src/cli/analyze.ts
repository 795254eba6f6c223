/**
 * `floatscope analyze <analysis> <trace…>`: the paper's analyses (src/analysis/) on recorded traces,
 * printed as tables or, with --json, as one JSON object of numbers.
 */
import * as fs from "node:fs";
import type { ColumnTable } from "arquero";
import { absorptionRate } from "../analysis/absorption.js";
import { ANCHOR_EXCLUSIONS, type AnchorExclusion, type AnchorOptions } from "../analysis/anchors.js";
import { temporalDrift } from "../analysis/drift.js";
import { anchorFrontier, type FactSpan } from "../analysis/frontier.js";
import { qkDecomposition } from "../analysis/qk-decomposition.js";
import { type Evidence, retrievalHeads } from "../analysis/retrieval-heads.js";
import { regionRollout } from "../analysis/rollout.js";
import { tokenTypes } from "../analysis/token-types.js";
import { describePartial, partialCounts, TruncatedTraceError } from "../trace/partial.js";
import { readTrace } from "../trace/reader.js";
import type { Trace } from "../trace/types.js";
import { keyword, SettingsError, TraceFormatError } from "../util/errors.js";
import { writeTable } from "../util/table-export.js";
import { flagSpec, helpSections, intList, optionalInt, optionalNumber, parseFlags, UsageError, type CliIO, type FlagRow } from "./args.js";
import type { CliCommand } from "./command-types.js";
import { EXPORT_ROWS, exportTarget, tableFile } from "./export-flags.js";
import { inputFile } from "./inputs.js";
import { outputFile } from "./outputs.js";

export const ANALYSES = ["absorption", "drift", "qk", "retrieval", "rollout", "token-types", "frontier"] as const;

/** The flags of `floatscope analyze`, by help section: the parse options and the help both come from here. */
const ANALYZE_FLAGS: Record<string, FlagRow[]> = {
  "Anchor rule options (absorption, drift, qk, token-types, frontier; frontier defaults to top-k)": [
    {
      name: "rule",
      type: "string",
      value: "<r>",
      help: ["first-token | bos | top-k | mean+ksigma | rulli-eps | upstream (default mean+ksigma;", "qk falls back to the argmax)"],
    },
    { name: "k", type: "string", value: "<x>", help: "σ multiplier of mean+ksigma", default: "3" },
    { name: "top-k", type: "string", value: "<n>", help: "size of top-k", default: "1" },
    { name: "epsilon", type: "string", value: "<x>", help: "ε of rulli-eps", default: "3" },
    { name: "exclude", type: "string", value: "<list>", help: ANCHOR_EXCLUSIONS.join(",") },
  ],
  "Other options": [
    {
      name: "layers",
      type: "string",
      value: "<list>",
      help: "layers (default: all recorded); rollout needs every layer unless --layers recorded",
    },
    { name: "upstream", type: "boolean", help: "qk: reproduce the paper's code (h mod H_kv, vector mean, no 1/√d, [0,256) window)" },
    { name: "heads", type: "string", value: "<h>", help: "qk: score-mean (default) | vector-mean | a head index" },
    { name: "evidence", type: "string", value: "<text>", help: "retrieval: evidence text (first occurrence in the prompt)" },
    { name: "rows", type: "string", value: "<r>", help: "retrieval: unmask-step (default) | final | final-unshifted" },
    { name: "filter", type: "string", value: "<f>", help: "retrieval: rouge1 (default) | contains | none" },
    { name: "layout", type: "string", value: "<l>", help: "rollout: offsets (default) | upstream" },
    { name: "max-jump", type: "string", value: "<n>", help: "drift: largest position jump of one anchor track", default: "0" },
    { name: "radius", type: "string", value: "<n>", help: "frontier: positions counted as near the frontier", default: "2" },
    {
      name: "facts",
      type: "string",
      value: "<file>",
      help: "frontier: JSON fact spans, [{factId, keySpan, answerTokens}] per trace (a list of lists)",
    },
    {
      name: "allow-truncated",
      type: "boolean",
      help: [
        "read the complete records of a trace whose last record is cut short (a writer",
        "killed mid-record); the result is marked partial (text and --json)",
      ],
    },
    { name: "json", type: "boolean", help: "print one JSON object" },
    ...EXPORT_ROWS,
  ],
};

const HELP = `Usage: floatscope analyze <analysis> <trace.fstrace…> [options] [--json]

Analyses (docs/analyses.md has every definition and where it differs from the paper's code):
  absorption   absorption rate per layer, mean ± population std over traces (Fig. 3)
  drift        temporal drift matrix, per-step anchors and anchor tracks of ONE trace (Fig. temporal)
  qk           QK score = ‖q‖‖k‖·cos θ per layer, angle vs norm share of the floating advantage (Fig. 4)
  retrieval    retrieval-head scores, layer × head (Fig. 5); needs --evidence or a region "evidence"
  rollout      region-level rollout, per-layer maps and stationary vector (Fig. rollout)
  token-types  structural vs lexical floating tokens per layer band (RQ2)
  frontier     anchors vs the masked/unmasked frontier and the just-unmasked tokens, against chance

${helpSections(ANALYZE_FLAGS, 20)}
  --debug           print stack traces of errors
  -h, --help        this help

Exit codes: 0 ok, 1 failure (unreadable or invalid trace, missing probe), 2 usage.`;

const FLAGS = flagSpec(Object.values(ANALYZE_FLAGS).flat());

/** Plain rows of a table (NaN → null happens in JSON.stringify). */
function rows(t: ColumnTable): Record<string, unknown>[] {
  return t.objects() as Record<string, unknown>[];
}

/** The numeric and list options, parsed strictly (usage errors before any trace is read). */
function parseOptions(values: Record<string, string | boolean | undefined>): {
  anchor: AnchorOptions;
  layers?: number[];
  maxJump?: number;
} {
  const anchor: AnchorOptions = {
    rule: values.rule as AnchorOptions["rule"],
    k: optionalNumber("analyze", "k", values.k),
    topK: optionalInt("analyze", "top-k", values["top-k"], { min: 1 }),
    epsilon: optionalNumber("analyze", "epsilon", values.epsilon),
    exclude:
      typeof values.exclude === "string"
        ? (values.exclude
            .split(",")
            .map((s) => s.trim())
            .filter(Boolean) as AnchorExclusion[])
        : undefined,
  };
  // "recorded" is the default for every analysis; rollout takes it to allow a trace missing some layers.
  const layers =
    typeof values.layers === "string" && values.layers !== "recorded" ? intList("analyze", "layers", values.layers, { min: 0 }) : undefined;
  return { anchor, layers, maxJump: optionalInt("analyze", "max-jump", values["max-jump"], { min: 0 }) };
}

/** Run one analysis on loaded traces; returns the JSON-able result with its tables named. */
export function analyze(
  name: (typeof ANALYSES)[number],
  traces: Trace[],
  values: Record<string, string | boolean | undefined>,
): { tables: Record<string, ColumnTable>; extra: Record<string, unknown>; warnings: string[] } {
  const { anchor, layers, maxJump } = parseOptions(values);
  switch (name) {
    case "absorption": {
      const r = absorptionRate(traces, { ...anchor, layers });
      return { tables: { summary: r.summary, samples: r.table }, extra: { rule: r.spec.rule }, warnings: r.spec.warnings ?? [] };
    }
    case "drift": {
      if (traces.length !== 1)
        throw new UsageError("`floatscope analyze drift` takes one trace", {
          field: "<trace>",
          expected: "one path",
          found: `${traces.length}`,
        });
      const r = temporalDrift(traces[0], { ...anchor, layers, maxJump });
      return {
        tables: { tracks: r.tracks, anchors: r.anchors },
        extra: { rule: r.spec.rule, layers: r.spec.layers, steps: r.spec.steps },
        warnings: r.spec.warnings ?? [],
      };
    }
    case "qk": {
      const heads =
        values.heads === undefined
          ? undefined
          : /^\d+$/.test(String(values.heads))
            ? Number(values.heads)
            : keyword(values.heads, ["score-mean", "vector-mean"] as const, { field: "--heads" });
      const all = traces.map((t) => qkDecomposition(t, { ...anchor, rule: anchor.rule, layers, heads, upstream: !!values.upstream }));
      return {
        tables: Object.fromEntries(all.map((r, i) => [`summary${traces.length > 1 ? ` ${i}` : ""}`, r.summary])),
        extra: { anchors: all.map((r) => r.spec.panels.map((p) => ({ layer: p.layer, anchors: p.anchors }))) },
        warnings: all.flatMap((r) => r.spec.warnings ?? []),
      };
    }
    case "retrieval": {
      const evidence: Evidence | undefined = typeof values.evidence === "string" ? { text: values.evidence } : undefined;
      const r = retrievalHeads(traces, { evidence, layers, rows: values.rows as never, filter: values.filter as never });
      return {
        tables: { scores: r.scores },
        extra: { kept: r.spec.kept, normalisation: r.spec.normalisation },
        warnings: r.spec.warnings ?? [],
      };
    }
    case "rollout": {
      const r = regionRollout(traces, { layout: values.layout as never, layers: values.layers === "recorded" ? "recorded" : "all" });
      return {
        tables: { rollout: r.rollout, stationary: r.stationary },
        extra: { regions: r.spec.regions, rowSpread: r.spec.rowSpread },
        warnings: r.spec.warnings ?? [],
      };
    }
    case "frontier": {
      const radius = optionalInt("analyze", "radius", values.radius, { min: 0 });
      const facts = typeof values.facts === "string" ? readFacts(values.facts, traces.length) : undefined;
      const r = anchorFrontier(traces, { ...anchor, rule: anchor.rule ?? "top-k", layers, radius, facts });
      return {
        tables: { summary: r.summary, layers: r.layers },
        extra: { rule: r.spec.rule, radius: r.spec.radius },
        warnings: r.spec.warnings,
      };
    }
    case "token-types": {
      const r = tokenTypes(traces, { ...anchor, layers });
      return { tables: { shares: r.shares }, extra: {}, warnings: r.spec.warnings ?? [] };
    }
  }
}

/**
 * `readTrace` with the CLI's word for its option: a torn trace's hint names `--allow-truncated`
 * (the library's own error names `allowTruncated`, which a CLI user cannot pass).
 */
function readTraceFile(file: string, allowTruncated: boolean): Trace {
  try {
    return readTrace(file, { allowTruncated });
  } catch (e) {
    if (e instanceof TruncatedTraceError)
      throw e.withHint(`pass --allow-truncated to analyse its ${e.complete} complete records as a partial trace`);
    throw e;
  }
}

/** `--facts`: one JSON list of fact spans per trace (a single list is taken for a single trace). */
function readFacts(file: string, traces: number): FactSpan[][] {
  let data: unknown;
  inputFile(file, { command: "analyze", arg: "--facts", what: "facts file (JSON)" });
  try {
    data = JSON.parse(fs.readFileSync(file, "utf8"));
  } catch (e) {
    throw new SettingsError("unreadable --facts file", { file, field: "--facts", expected: "a JSON file", found: (e as Error).message });
  }
  const lists = Array.isArray(data) && data.length > 0 && data.every(Array.isArray) ? data : [data];
  if (!lists.every(Array.isArray) || lists.length !== traces)
    throw new SettingsError("--facts needs one list of fact spans per trace", {
      file,
      field: "--facts",
      expected: `${traces} list(s) of {factId, keySpan: [start, end], answerTokens: [positions]}`,
      found: Array.isArray(data) ? `${lists.length} list(s)` : typeof data,
    });
  return lists as FactSpan[][];
}

export const command: CliCommand = {
  help: HELP,
  flags: FLAGS,
  paths: [
    { arg: "<trace>", role: "input", expects: "file", name: "run.fstrace", example: (p) => ["drift", p] },
    {
      arg: "--export",
      role: "output",
      expects: "file",
      name: "table.csv",
      example: (p, f) => ["drift", f.trace, "--export", p],
    },
    { arg: "--facts", role: "input", expects: "file", name: "facts.json", example: (p, f) => ["frontier", f.trace, "--facts", p] },
  ],
  async run(argv: string[], io: CliIO): Promise<number> {
    const { values, positionals } = parseFlags("analyze", argv, FLAGS);
    const [name, ...files] = positionals;
    if (name === undefined)
      throw new UsageError("`floatscope analyze` needs an analysis", {
        field: "<analysis>",
        expected: ANALYSES.join(", "),
        found: "nothing",
      });
    if (!(ANALYSES as readonly string[]).includes(name))
      throw new UsageError(`unknown analysis "${name}"`, { field: "<analysis>", expected: ANALYSES.join(", "), found: name });
    const analysis = name as (typeof ANALYSES)[number];
    if (files.length === 0)
      throw new UsageError("`floatscope analyze` needs at least one trace", {
        field: "<trace>",
        expected: "one or more .fstrace files",
        found: "nothing",
      });
    parseOptions(values);
    const target = exportTarget("analyze", values);
    // Outputs before any trace is read, so a bad --export never costs an analysis.
    if (target) outputFile("analyze", "export", target.file, false, io);
    // A folder (a checkpoint given by mistake), a FIFO or a dangling link is one clear error
    // before the trace reader opens anything.
    for (const f of files)
      inputFile(f, {
        command: "analyze",
        arg: "<trace>",
        what: "trace file",
        error: TraceFormatError,
        hint: "give .fstrace files written by `floatscope generate --trace`",
      });
    const traces = files.map((f) => readTraceFile(f, !!values["allow-truncated"]));
    const partial = traces.flatMap((t, i) => {
      const r = describePartial(t);
      return r ? [{ file: files[i], ...partialCounts(t), summary: r.summary }] : [];
    });
    const { tables, extra, warnings } = analyze(analysis, traces, values);
    if (target) {
      const names = Object.keys(tables);
      for (const [k, t] of Object.entries(tables)) {
        const file =
          names.length === 1 ? target.file : outputFile("analyze", "export", tableFile(target.file, k, target.format), false, io);
        writeTable(file, rows(t), { format: target.format, columns: t.columnNames() });
        io.err(`analyze: ${k} (${t.numRows()} rows) → ${file}`);
      }
    }
    if (values.json) {
      // `partial` is true when any trace is; `partialTraces` says, per partial trace, how many of
      // its records were read (`records`) out of what a finished run writes (`expected`).
      const out: Record<string, unknown> = {
        analysis,
        traces: files,
        partial: partial.length > 0,
        partialTraces: partial,
        ...extra,
        warnings,
      };
      for (const [k, t] of Object.entries(tables)) out[k] = rows(t);
      io.out(JSON.stringify(out, (_k, v) => (typeof v === "number" && !Number.isFinite(v) ? null : v)));
      return 0;
    }
    // Said first, so a table computed from an unfinished run is never read as a finished one's.
    for (const p of partial) io.out(`PARTIAL: ${p.summary} (${p.records} of ${p.expected ?? "?"} records)\n`);
    for (const [k, t] of Object.entries(tables)) {
      io.out(`## ${k}\n`);
      io.out(
        t.toMarkdown({
          limit: Infinity,
          format: Object.fromEntries(
            t
              .columnNames()
              .map((c) => [
                c,
                (v: unknown) => (typeof v === "number" && !Number.isInteger(v) ? v.toFixed(4) : Array.isArray(v) ? v.join(" ") : String(v)),
              ]),
          ),
        }),
      );
    }
    for (const w of warnings) io.err(`warning: ${w}`);
    return 0;
  },
};
