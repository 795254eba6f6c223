/**
 * `npm run bench -- --section NAME` puts one re-run section back into the existing BENCHMARKS.md
 * (bench/section.ts): hand-made markdown in, the exact markdown out, every byte outside the
 * section as it was.
 */
import { spawnSync } from "node:child_process";
import * as fs from "node:fs";
import * as os from "node:os";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { sectionText, spliceSection } from "../../bench/section.js";

const ROOT = path.resolve(import.meta.dirname, "../..");

const FILE = [
  "# Benchmarks",
  "",
  "Written by `npm run bench` in one run.",
  "",
  "## Engine",
  "",
  "old engine text",
  "",
  "| a | b |",
  "|---|---|",
  "| 1 | 2 |",
  "",
  "",
  "## GGUF",
  "",
  "```",
  "## Engine",
  "not a heading: inside a code block",
  "```",
  "gguf text",
  "",
  "### a subsection of GGUF",
  "",
  "## Weight scan",
  "last section, no final newline",
].join("\n");

describe("spliceSection", () => {
  it("replaces the middle section only; the two blank lines before the next heading stay", () => {
    const out = spliceSection(FILE, "## Engine", "## Engine\n\nnew engine text\n\n\n");
    expect(out).toBe(FILE.replace("old engine text\n\n| a | b |\n|---|---|\n| 1 | 2 |", "new engine text"));
    expect(out.split("\n").slice(0, 7)).toEqual([
      "# Benchmarks",
      "",
      "Written by `npm run bench` in one run.",
      "",
      "## Engine",
      "",
      "new engine text",
    ]);
    expect(out.slice(out.indexOf("\n\n\n## GGUF"))).toBe(FILE.slice(FILE.indexOf("\n\n\n## GGUF")));
  });

  it("ignores a heading inside a fenced code block and keeps ### subsections inside their section", () => {
    const out = spliceSection(FILE, "## GGUF", "## GGUF\n\nnew gguf");
    expect(out).toBe(
      [
        "# Benchmarks",
        "",
        "Written by `npm run bench` in one run.",
        "",
        "## Engine",
        "",
        "old engine text",
        "",
        "| a | b |",
        "|---|---|",
        "| 1 | 2 |",
        "",
        "",
        "## GGUF",
        "",
        "new gguf",
        "",
        "## Weight scan",
        "last section, no final newline",
      ].join("\n"),
    );
  });

  it("replaces the last section of a file without a final newline, and keeps a final newline where there was one", () => {
    expect(spliceSection(FILE, "## Weight scan", "## Weight scan\nnew\n")).toBe(FILE.replace("last section, no final newline", "new"));
    expect(spliceSection(FILE + "\n", "## Weight scan", "## Weight scan\nnew")).toBe(
      FILE.replace("last section, no final newline", "new") + "\n",
    );
  });

  it("appends a section the file lacks after one blank line", () => {
    expect(spliceSection("# Benchmarks\n\n## Engine\n\nx\n\n", "## Startup", "## Startup\n\ny\n")).toBe(
      "# Benchmarks\n\n## Engine\n\nx\n\n## Startup\n\ny\n",
    );
  });

  it("reads a section back, refuses a body with another heading and a file with the heading twice", () => {
    expect(sectionText(FILE, "## GGUF")).toBe(
      "## GGUF\n\n```\n## Engine\nnot a heading: inside a code block\n```\ngguf text\n\n### a subsection of GGUF",
    );
    expect(sectionText(FILE, "## Engines")).toBeUndefined();
    expect(() => spliceSection(FILE, "## Engine", "## GGUF\n\nx")).toThrow(/expected its heading "## Engine"/);
    expect(() => spliceSection("## A\n\n## A\n", "## A", "## A\nx")).toThrow(/appears 2 times/);
  });
});

describe("npm run bench -- --section", () => {
  it("refuses an unknown section name, listing the known ones, and leaves the file as it was", () => {
    const out = path.join(fs.mkdtempSync(path.join(os.tmpdir(), "bench-section-")), "BENCH.md");
    fs.writeFileSync(out, FILE);
    const r = spawnSync(process.execPath, ["--import", "tsx", "bench/run.ts", "--section", "no-such", "--out", out], {
      cwd: ROOT,
      encoding: "utf8",
      timeout: 60_000,
    });
    expect(r.status).toBe(2);
    expect(r.stderr).toMatch(/--section no-such: expected one of checkpoint, engine, /);
    expect(r.stderr).not.toMatch(/\n\s+at /); // no stack trace
    expect(fs.readFileSync(out, "utf8")).toBe(FILE);
  });
});
