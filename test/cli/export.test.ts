/**
 * `--export` of the commands that print tables: the file holds the same numbers the command prints
 * (analyze --json is the reference), in a form pyarrow reads (the project's .venv).
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { main } from "../../src/cli/main.js";
import { writeTrace } from "../../src/trace/writer.js";
import { makeTrace, probe, probeMap, step } from "../analysis/make-trace.js";
import { HELDOUT, PARITY } from "../eval/helpers.js";

const ROOT = path.resolve(__dirname, "..", "..");
const PY = path.join(ROOT, ".venv", "bin", "python");
const dir = fs.mkdtempSync(path.join(os.tmpdir(), "fs-export-"));
afterAll(() => fs.rmSync(dir, { recursive: true, force: true }));

async function run(...argv: string[]) {
  let out = "",
    err = "";
  const code = await main(argv, { out: (t) => (out += t + "\n"), err: (t) => (err += t + "\n") });
  return { code, out, err };
}
function readParquet(file: string): Record<string, unknown>[] {
  return JSON.parse(
    execFileSync(PY, ["-c", "import json, sys, pyarrow.parquet as pq; print(json.dumps(pq.read_table(sys.argv[1]).to_pylist()))", file], {
      encoding: "utf8",
    }),
  );
}

describe("--export", () => {
  it("analyze absorption: every table to <stem>-<table>.parquet, equal to --json", async () => {
    const traces = [0.5, 0.3].map((x, i) => {
      const f = path.join(dir, `t${i}.fstrace`);
      const fin = probeMap(
        probe(0, "received", [5], [0.1, 0.1, 0.1, 0.6, 0.1]),
        probe(1, "received", [5], [x, 0.2, 0.2, 0.1, 1 - x - 0.5]),
      );
      writeTrace(
        f,
        makeTrace({ sequence: [1, 10, 11, 12, 2], promptLength: 3, finalProbes: fin, steps: [step(0, [1, 10, 11, 99, 99], fin)] }),
      );
      return f;
    });
    const json = JSON.parse((await run("analyze", "absorption", ...traces, "--rule", "upstream", "--json")).out);
    const r = await run("analyze", "absorption", ...traces, "--rule", "upstream", "--export", path.join(dir, "abs.parquet"));
    expect(r.code).toBe(0);
    const summary = readParquet(path.join(dir, "abs-summary.parquet"));
    const samples = readParquet(path.join(dir, "abs-samples.parquet"));
    expect(summary.length).toBe(json.summary.length);
    summary.forEach((row, i) => {
      for (const [k, v] of Object.entries(json.summary[i] as Record<string, unknown>)) {
        if (typeof v === "number") expect(row[k] as number).toBeCloseTo(v, 12);
        else if (v !== null && typeof v !== "object") expect(row[k]).toEqual(v);
      }
    });
    expect(samples.length).toBe(json.samples.length);
    expect((await run("analyze", "absorption", ...traces, "--export-format", "csv")).code).toBe(2); // --export-format without --export
  });

  it("eval: the per-question rows as Arrow IPC (types fixed, not guessed)", async () => {
    const args = [
      "eval",
      path.join(PARITY, "llada", "model"),
      "--data",
      HELDOUT,
      "--limit",
      "2",
      "--setting",
      "oracle",
      "--gen-length",
      "2",
      "--steps",
      "2",
    ];
    expect((await run(...args, "--export", path.join(dir, "rows.arrow"))).code).toBe(0);
    const back = JSON.parse(
      execFileSync(
        PY,
        [
          "-c",
          "import json, sys, pyarrow.feather as fe; t = fe.read_table(sys.argv[1]); print(json.dumps({'types': {f.name: str(f.type) for f in t.schema}, 'rows': t.to_pylist()}))",
          path.join(dir, "rows.arrow"),
        ],
        { encoding: "utf8" },
      ),
    );
    expect(back.rows.map((r: { row: number }) => r.row)).toEqual([0, 1]);
    expect(back.types.accuracy).toBe("double");
    expect(back.rows.every((r: { setting: string; passages: number }) => r.setting === "oracle" && r.passages === 1)).toBe(true);
    expect((await run(...args, "--export", path.join(dir, "rows.txt"))).code).toBe(2);
  });
});
