/**
 * Tables out: what we write must be what pandas / polars / DuckDB users read. The Parquet and Arrow
 * files are read back by pyarrow (the project's .venv, pinned in kernel-extensions/requirements.txt),
 * an implementation independent of the writers; CSV by Python's csv module.
 */
import { execFileSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { encodeTable, formatFromPath, writeTable } from "../../src/util/table-export.js";
import { SettingsError } from "../../src/util/errors.js";

const ROOT = path.resolve(__dirname, "..", "..");
const PY = path.join(ROOT, ".venv", "bin", "python");
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), "fs-tables-"));
afterAll(() => fs.rmSync(tmp, { recursive: true, force: true }));

const rows = [
  { model: "tiny-llada", k: 0, acc: 1, f1: 0.5, ok: true, answers: ["green", "vert"], note: 'says "hi", then,\nleaves', gone: null },
  { model: "tiny-qwen", k: 10, acc: 0, f1: NaN, ok: false, answers: [], note: "ünïcödé ①", gone: undefined },
  { model: "tiny-dream", k: -3, acc: 0.25, f1: 1, ok: true, answers: ["x"], note: "" },
];

function python(code: string, ...args: string[]): unknown {
  return JSON.parse(execFileSync(PY, ["-c", code, ...args], { encoding: "utf8" }));
}

describe("table export", () => {
  it("Parquet and Arrow read back in pyarrow with the same values and types", () => {
    const pq = path.join(tmp, "t.parquet"),
      ar = path.join(tmp, "t.arrow");
    expect(writeTable(pq, rows, { metadata: { "floatscope.grid": "demo" } })).toBe("parquet");
    expect(writeTable(ar, rows)).toBe("arrow");
    const read = python(
      `
import json, sys, pyarrow.parquet as pq, pyarrow.feather as fe
out = {}
for name, t in (("parquet", pq.read_table(sys.argv[1])), ("arrow", fe.read_table(sys.argv[2]))):
    out[name] = {"types": {f.name: str(f.type) for f in t.schema}, "rows": t.to_pylist(),
                 "meta": {k.decode(): v.decode() for k, v in (t.schema.metadata or {}).items() if k.startswith(b"floatscope")}}
print(json.dumps(out))`,
      pq,
      ar,
    ) as Record<string, { types: Record<string, string>; rows: Record<string, unknown>[]; meta: Record<string, string> }>;
    for (const fmt of ["parquet", "arrow"]) {
      const t = read[fmt];
      expect(t.types).toEqual({
        model: "string",
        k: "int32",
        acc: "double",
        f1: "double",
        ok: "bool",
        answers: "string",
        note: "string",
        gone: "string",
      });
      expect(t.rows.map((r) => r.model)).toEqual(["tiny-llada", "tiny-qwen", "tiny-dream"]);
      expect(t.rows.map((r) => r.k)).toEqual([0, 10, -3]);
      expect(t.rows.map((r) => r.acc)).toEqual([1, 0, 0.25]);
      expect(t.rows.map((r) => r.f1)).toEqual([0.5, null, 1]); // NaN → null
      expect(t.rows.map((r) => r.ok)).toEqual([true, false, true]);
      expect(t.rows.map((r) => JSON.parse(String(r.answers)))).toEqual([["green", "vert"], [], ["x"]]);
      expect(t.rows.map((r) => r.note)).toEqual(['says "hi", then,\nleaves', "ünïcödé ①", ""]);
      expect(t.rows.map((r) => r.gone)).toEqual([null, null, null]);
    }
    expect(read.parquet.meta).toEqual({ "floatscope.grid": "demo" });
  });

  it("CSV quotes what needs quoting (Python's csv module reads it back); JSON lines keep lists", () => {
    const csv = path.join(tmp, "t.csv"),
      jl = path.join(tmp, "t.jsonl");
    writeTable(csv, rows, { columns: ["model", "k", "f1", "note", "answers"] });
    const back = python(
      `import csv, json, sys; print(json.dumps(list(csv.reader(open(sys.argv[1], newline="", encoding="utf8")))))`,
      csv,
    ) as string[][];
    expect(back).toEqual([
      ["model", "k", "f1", "note", "answers"],
      ["tiny-llada", "0", "0.5", 'says "hi", then,\nleaves', '["green","vert"]'],
      ["tiny-qwen", "10", "", "ünïcödé ①", "[]"],
      ["tiny-dream", "-3", "1", "", '["x"]'],
    ]);
    writeTable(jl, rows);
    const lines = fs
      .readFileSync(jl, "utf8")
      .trim()
      .split("\n")
      .map((l) => JSON.parse(l));
    expect(lines[0].answers).toEqual(["green", "vert"]);
    expect(lines[1].f1).toBeNull();
    expect(lines[1].gone).toBeNull();
  });

  it("fixed column types are enforced; unknown formats are refused; nothing half-written", () => {
    expect(() => encodeTable([{ a: "x" }], "parquet", { types: { a: "int" } })).toThrow(SettingsError);
    expect(() => encodeTable([{ a: 1.5 }], "csv", { types: { a: "int" } })).toThrow(SettingsError);
    expect(formatFromPath("a.ndjson")).toBe("jsonl");
    expect(formatFromPath("a.feather")).toBe("arrow");
    expect(() => writeTable(path.join(tmp, "t.xlsx"), rows)).toThrow(/Unknown table format/);
    expect(fs.readdirSync(tmp).filter((f) => f.includes(".tmp-"))).toEqual([]);
  });
});
