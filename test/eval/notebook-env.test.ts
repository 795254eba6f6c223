/** notebookEnv: the environment a notebook reads besides its models, with defaults and typed errors. */
import { describe, expect, it } from "vitest";
import { notebookEnv } from "../../src/notebook/environment.js";
import { NQ_ENV } from "../../src/qa/datasets.js";
import { SettingsError } from "../../src/util/errors.js";

describe("notebookEnv", () => {
  it("defaults: no NQ file, the default grid run here, executed notebooks in _executed", () => {
    expect(notebookEnv({})).toEqual({ nq: undefined, grid: "default", gridShards: undefined, executedDir: "_executed" });
  });

  it("reads each variable (an empty one counts as unset)", () => {
    const env = {
      [NQ_ENV]: "/data/nq.jsonl.gz",
      FLOATSCOPE_GRID: "paper",
      FLOATSCOPE_GRID_SHARDS: "/runs/fig6",
      FLOATSCOPE_EXECUTED_DIR: "/tmp/out",
    };
    expect(notebookEnv(env)).toEqual({ nq: "/data/nq.jsonl.gz", grid: "paper", gridShards: "/runs/fig6", executedDir: "/tmp/out" });
    expect(notebookEnv({ [NQ_ENV]: "", FLOATSCOPE_GRID_SHARDS: "", FLOATSCOPE_EXECUTED_DIR: "" })).toEqual(notebookEnv({}));
  });

  it("an unknown FLOATSCOPE_GRID is a typed error naming the variable and the values it takes", () => {
    let error: unknown;
    try {
      notebookEnv({ FLOATSCOPE_GRID: "Paper" });
    } catch (e) {
      error = e;
    }
    expect(error).toBeInstanceOf(SettingsError);
    expect(error).toMatchObject({ field: "FLOATSCOPE_GRID" });
    expect((error as SettingsError).expected).toMatch(/"default".*"paper"/);
    expect((error as Error).message).toContain("Paper");
  });
});
