/**
 * One drawing, one place (docs/figures.md):
 * - analyses return numbers, tables and warnings: nothing in src/analysis imports the payload
 *   encoder, the figure description or a renderer;
 * - colormap stops are written once (src/protocol/colormap.ts): no other file of src/ or widgets/src
 *   lists them;
 * - no code is duplicated between the kernel's figure code (src/figures, src/protocol) and the widget
 *   (widgets/src): every window of 6 consecutive significant lines is compared.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { colormapStops, COLORMAPS } from "../../src/protocol/colormap.js";

const ROOT = path.resolve(__dirname, "../..");

function files(dir: string): string[] {
  const out: string[] = [];
  for (const e of fs.readdirSync(path.join(ROOT, dir), { withFileTypes: true })) {
    const rel = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== "dist" && e.name !== "lib" && e.name !== "node_modules") out.push(...files(rel));
    } else if (e.name.endsWith(".ts")) out.push(rel);
  }
  return out;
}

const read = (f: string) => fs.readFileSync(path.join(ROOT, f), "utf8");

describe("figures have one drawing", () => {
  it("src/analysis imports no payload encoder, figure description or renderer", () => {
    const bad = files("src/analysis").flatMap((f) =>
      [...read(f).matchAll(/from\s+"([^"]+)"/g)]
        .map((m) => m[1])
        .filter((s) => /protocol\/(payloads|figure|draw|scales|colormap)|\.\.\/figures\//.test(s))
        .map((s) => `${f} imports ${s}`),
    );
    expect(bad).toEqual([]);
  });

  it("colormap stops are listed only in src/protocol/colormap.ts", () => {
    const where: string[] = [];
    for (const f of [...files("src"), ...files("widgets/src")]) {
      if (f === path.join("src", "protocol", "colormap.ts")) continue;
      const text = read(f).toLowerCase();
      for (const name of COLORMAPS) {
        // three consecutive stops of a map in one file = a copy of the map
        const s = colormapStops(name);
        for (let i = 0; i + 2 < s.length; i++) {
          if (text.includes(s[i]) && text.includes(s[i + 1]) && text.includes(s[i + 2])) {
            where.push(`${f}: ${name}`);
            break;
          }
        }
      }
    }
    expect(where).toEqual([]);
  });

  it("no 6-line window of code appears both in src/figures|src/protocol and in widgets/src", () => {
    const significant = (f: string) =>
      read(f)
        .split("\n")
        .map((l) => l.trim())
        .filter((l) => l.length > 3 && !/^(\/\/|\*|\/\*\*|import |export \* |[{}()[\];,]+$)/.test(l));
    const windows = (f: string) => {
      const lines = significant(f);
      const out = new Map<string, string>();
      for (let i = 0; i + 6 <= lines.length; i++) out.set(lines.slice(i, i + 6).join("\n"), `${f}:${i}`);
      return out;
    };
    const kernel = new Map<string, string>();
    for (const f of [...files("src/figures"), ...files("src/protocol")]) for (const [k, v] of windows(f)) kernel.set(k, v);
    const dupes: string[] = [];
    for (const f of files("widgets/src")) for (const [k, v] of windows(f)) if (kernel.has(k)) dupes.push(`${v} = ${kernel.get(k)}`);
    expect(dupes).toEqual([]);
  });

  it("the widget's figure view draws with the kernel's renderer", () => {
    expect(read("widgets/src/figures/figure.ts")).toMatch(/drawFigureWithGeometry\(this\.description/);
    expect(files("widgets/src").filter((f) => /plotly/i.test(read(f)))).toEqual([]);
  });
});
