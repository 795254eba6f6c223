/**
 * The `floatscope` command table. Each command lives in its own file `src/cli/<name>.ts` and
 * exports `command: CliCommand` (command-types.ts); adding one is a single line here. Modules load
 * lazily, so `floatscope --help` does not start onnxruntime. This file only imports: the command
 * files never import it back.
 */
import type { CliCommand } from "./command-types.js";

export interface CommandEntry {
  summary: string;
  load: () => Promise<{ command: CliCommand }>;
}

export const COMMANDS: Record<string, CommandEntry> = {
  inspect: { summary: "architecture, sizes, special ids and estimated memory of a checkpoint", load: () => import("./inspect.js") },
  forward: { summary: "run one forward pass and write logits/attention probes to safetensors", load: () => import("./forward.js") },
  eval: {
    summary: "QA evaluation (Acc/F1/EM) in closed-book, oracle or gold-among-k-distractors settings",
    load: () => import("./eval.js"),
  },
  generate: { summary: "sample an answer and record the per-step attention trace (.fstrace)", load: () => import("./generate.js") },
  analyze: {
    summary: "the paper's analyses (absorption, drift, qk, retrieval, rollout, token-types) on traces",
    load: () => import("./analyze.js"),
  },
  merge: { summary: "combine the shard files of a grid run into one table (jsonl, csv, parquet, arrow)", load: () => import("./merge.js") },
  status: { summary: "progress of a grid run from its shard files", load: () => import("./status.js") },
  slurm: { summary: "write an sbatch array script (one task per shard) and its dependent merge job", load: () => import("./slurm.js") },
};
