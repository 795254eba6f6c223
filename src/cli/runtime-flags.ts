/**
 * The runtime flags (`--device`, `--threads`, `--low-memory`, `--query-chunks`, `--memory-budget`,
 * `--no-weight-scan`, `--quantized-weights`, `--accuracy-level`, `--no-kv-cache`) of the commands that build an engine: one table gives their parse options
 * and help lines, and one function checks them into typed engine options, so a bad `--device` is
 * the same usage error in every command.
 */
import { optionalInt, UsageError, type FlagRow } from "./args.js";

export const DEVICES = ["cpu", "cuda", "auto"] as const;
export type Device = (typeof DEVICES)[number];

export type RuntimeFlag =
  | "device"
  | "threads"
  | "low-memory"
  | "query-chunks"
  | "memory-budget"
  | "no-weight-scan"
  | "quantized-weights"
  | "accuracy-level"
  | "no-kv-cache";

export const QUANTIZED_WEIGHTS = ["auto", "matmulnbits", "dequantize"] as const;

/** MatMulNBits `accuracy_level`s offered: 0 float32 compute, 4 int8 activations (docs/engine.md, "MatMulNBits accuracy level"). */
export const ACCURACY_LEVELS = [0, 4] as const;

const RUNTIME_ROWS: Record<RuntimeFlag, FlagRow> = {
  device: { name: "device", type: "string", value: "<d>", help: DEVICES.join(" | "), default: "cpu" },
  threads: { name: "threads", type: "string", value: "<n>", help: "intra-op threads" },
  "low-memory": {
    name: "low-memory",
    type: "boolean",
    help: ["keep weights memory-mapped (session.disable_prepacking); quantised layers then run", "unprepacked and much slower"],
  },
  "query-chunks": {
    name: "query-chunks",
    type: "string",
    value: "<n>",
    help: "compute attention in n query chunks (default: sized from the memory estimate)",
  },
  "memory-budget": {
    name: "memory-budget",
    type: "string",
    value: "<n>",
    help: "refuse a forward estimated above n bytes (default 75 % of physical memory)",
  },
  "no-weight-scan": { name: "no-weight-scan", type: "boolean", help: "skip the NaN/Inf scan of the weights (on by default)" },
  "quantized-weights": {
    name: "quantized-weights",
    type: "string",
    value: "<m>",
    help: [
      "GGUF Q4_0/Q4_1/Q8_0/Q4_K layers: matmulnbits (kept quantised) | dequantize",
      "(float32: ≈6× the memory) | auto (quantised from 2 GiB of float32 weights)",
    ],
    default: "auto",
  },
  "accuracy-level": {
    name: "accuracy-level",
    type: "string",
    value: "<n>",
    help: [
      "MatMulNBits accuracy of quantised layers: 0 = float32 compute | 4 = int8",
      "activations (logits differ by ≈0.1 %; not faster here: docs/engine.md)",
    ],
    default: "0",
  },
  "no-kv-cache": {
    name: "no-kv-cache",
    type: "boolean",
    help: [
      "re-run the whole prefix at every generated token; by default a causal model",
      "without probes or interventions decodes through a key/value cache (same tokens)",
    ],
  },
};

/** The rows of the runtime flags a command takes, in the table's order. */
export function runtimeRows(...flags: RuntimeFlag[]): FlagRow[] {
  return (Object.keys(RUNTIME_ROWS) as RuntimeFlag[]).filter((f) => flags.includes(f)).map((f) => RUNTIME_ROWS[f]);
}

/** Engine options from the runtime flags; absent flags give the defaults. */
export interface RuntimeOptions {
  device: Device;
  threads?: number;
  lowMemory: boolean;
  queryChunks: number | "auto";
  memoryBudgetBytes?: number;
  scanWeights: boolean;
  quantizedWeights: (typeof QUANTIZED_WEIGHTS)[number];
  /** `--accuracy-level`; undefined: the engine's default. */
  nbitsAccuracyLevel?: (typeof ACCURACY_LEVELS)[number];
  /** false with `--no-kv-cache`; undefined: the engine's default (on wherever it applies). */
  kvCache?: false;
}

/** `--device` checked against DEVICES; shared with commands that only pass the word on (slurm). */
export function deviceFlag(command: string, value: string | boolean | undefined, fallback: Device = "cpu"): Device {
  if (value === undefined) return fallback;
  const s = String(value);
  if (!(DEVICES as readonly string[]).includes(s))
    throw new UsageError(`Bad value for --device of \`floatscope ${command}\``, {
      field: "--device",
      expected: DEVICES.join(" | "),
      found: JSON.stringify(s),
      hint: `run \`floatscope ${command} --help\``,
    });
  return s as Device;
}

/** The one check of the runtime flags (a flag the command does not take is simply absent). */
export function runtimeOptions(command: string, v: Record<string, string | boolean | undefined>): RuntimeOptions {
  return {
    device: deviceFlag(command, v.device),
    threads: optionalInt(command, "threads", v.threads, { min: 1 }),
    lowMemory: !!v["low-memory"],
    queryChunks: optionalInt(command, "query-chunks", v["query-chunks"], { min: 1 }) ?? "auto",
    memoryBudgetBytes: optionalInt(command, "memory-budget", v["memory-budget"], { min: 1 }),
    scanWeights: !v["no-weight-scan"],
    quantizedWeights: quantizedWeightsFlag(command, v["quantized-weights"]),
    nbitsAccuracyLevel: accuracyLevelFlag(command, v["accuracy-level"]),
    kvCache: v["no-kv-cache"] ? false : undefined,
  };
}

/** `--accuracy-level` checked against ACCURACY_LEVELS. */
function accuracyLevelFlag(command: string, value: string | boolean | undefined): RuntimeOptions["nbitsAccuracyLevel"] {
  if (value === undefined) return undefined;
  const s = String(value);
  const level = ACCURACY_LEVELS.find((l) => String(l) === s);
  if (level === undefined)
    throw new UsageError(`Bad value for --accuracy-level of \`floatscope ${command}\``, {
      field: "--accuracy-level",
      expected: ACCURACY_LEVELS.join(" | "),
      found: JSON.stringify(s),
      hint: `run \`floatscope ${command} --help\``,
    });
  return level;
}

/** `--quantized-weights` checked against QUANTIZED_WEIGHTS (default auto: large quantised checkpoints stay quantised). */
function quantizedWeightsFlag(command: string, value: string | boolean | undefined): RuntimeOptions["quantizedWeights"] {
  if (value === undefined) return "auto";
  const s = String(value);
  if (!(QUANTIZED_WEIGHTS as readonly string[]).includes(s))
    throw new UsageError(`Bad value for --quantized-weights of \`floatscope ${command}\``, {
      field: "--quantized-weights",
      expected: QUANTIZED_WEIGHTS.join(" | "),
      found: JSON.stringify(s),
      hint: `run \`floatscope ${command} --help\``,
    });
  return s as RuntimeOptions["quantizedWeights"];
}
