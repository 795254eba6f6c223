/**
 * The kernel's source transform for tslab's shorthand-property bug (kernelspec/floatscope/shorthand.cjs):
 * what it rewrites, what it leaves alone, and that tslab's own converter still has the bug (when
 * that test fails, tslab has fixed it and the work-around can go).
 */
import { createRequire } from "node:module";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { ROOT } from "./env.js";

const require = createRequire(import.meta.url);
const { expandShorthand } = require(join(ROOT, "kernel-extensions", "kernelspec", "floatscope", "shorthand.cjs"));
const ts = require(join(ROOT, "node_modules", "@tslab", "typescript-for-tslab"));
const expand = (src: string): string => expandShorthand(src, ts);

describe("expandShorthand", () => {
  it("expands shorthand properties in object literals, nested and in template holes", () => {
    expect(expand("const o = { a, b: 1, c };")).toBe("const o = { a: a, b: 1, c: c };");
    expect(expand("f({ x: { y } });")).toBe("f({ x: { y: y } });");
    expect(expand("const s = `${ {a} }`;")).toBe("const s = `${ {a: a} }`;");
  });

  it("expands destructuring assignments (same meaning), keeping defaults", () => {
    expect(expand("({ a, b = 3 } = o);")).toBe("({ a: a, b: b = 3 } = o);");
  });

  it("leaves binding patterns, parameters, types, strings and comments alone", () => {
    for (const src of [
      "const { a, b = 2 } = o;",
      "function f({ x }: { x: number }) { return x; }",
      "type T = { a: number };",
      'const s = "{ a }"; // { b }',
      'import { show } from "floatscope"; export { show };',
    ])
      expect(expand(src)).toBe(src);
  });
});

describe("tslab's converter, unpatched", () => {
  it("still leaves a shorthand property to an earlier cell's binding unrewritten (the bug we work around)", () => {
    // A fresh module instance: the kernel patches createConverter, a test must see tslab's own.
    const conv = require(join(ROOT, "node_modules", "tslab", "dist", "converter.js")).createConverter({ isJS: false, isBrowser: false });
    try {
      const first = conv.convert("", "const tokenizer = 1;");
      const raw = conv.convert(first.declOutput, "const o = { tokenizer };").output as string;
      const fixed = conv.convert(first.declOutput, expand("const o = { tokenizer };")).output as string;
      expect(raw).toMatch(/const o = \{ tokenizer \};/); // refers to a name that no longer exists
      expect(fixed).toMatch(/const o = \{ tokenizer: exports\.tokenizer \};/);
    } finally {
      conv.close();
    }
  }, 60_000);
});
