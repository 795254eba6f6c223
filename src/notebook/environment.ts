/**
 * The environment a notebook reads besides its models (`notebookSettings` reads those): the NQ-open file
 * (06-qa-rag), the grid's scale and a finished grid run's shard folder (08-robustness), and where the
 * executed notebooks are (10-claims). Read here, with their defaults and checks, so that no notebook cell
 * reads `process.env` itself and a mistyped value is an error naming the variable, not a silent default.
 */
import { NQ_ENV } from "../qa/datasets.js";
import { keyword } from "../util/errors.js";

export interface NotebookEnv {
  /** `FLOATSCOPE_NQ`: the NQ-open oracle file (nq-open-oracle.jsonl.gz), or undefined when unset or empty. */
  nq: string | undefined;
  /** `FLOATSCOPE_GRID`: `"default"` (a grid that runs here in minutes) or `"paper"` (every question, three seeds). */
  grid: "default" | "paper";
  /** `FLOATSCOPE_GRID_SHARDS`: a grid run's shard folder (e.g. from `floatscope slurm`) to merge instead of running here. */
  gridShards: string | undefined;
  /** `FLOATSCOPE_EXECUTED_DIR`: the folder of executed notebooks (scripts/reproduce.sh sets it); default `_executed`. */
  executedDir: string;
}

/** Read the notebook environment (default `process.env`). */
export function notebookEnv(env: Record<string, string | undefined> = process.env): NotebookEnv {
  return {
    nq: env[NQ_ENV] || undefined,
    grid: keyword(env.FLOATSCOPE_GRID ?? "default", ["default", "paper"] as const, { field: "FLOATSCOPE_GRID" }),
    gridShards: env.FLOATSCOPE_GRID_SHARDS || undefined,
    executedDir: env.FLOATSCOPE_EXECUTED_DIR || "_executed",
  };
}
