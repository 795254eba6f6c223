/**
 * Family facts live in src/families/ only: a line elsewhere in src/ that names two or more family
 * words as string literals or object keys is a hand-written family list, which a new family would
 * miss (the compiler cannot flag it where the type is `string`). Derive it from src/families/index.ts.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { FAMILIES } from "../../src/families/index.js";

const SRC = path.resolve(__dirname, "../../src");

/** Lines that name family words for another reason: the sampler kinds share two of the words. */
const ALLOWED = [/^samplers\/config\.ts: .*SAMPLERS\b/];

function sourceFiles(dir: string): string[] {
  return fs.readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return e.name === "dist" || e.name === "families" ? [] : sourceFiles(p);
    return e.name.endsWith(".ts") ? [p] : [];
  });
}

describe("family lists", () => {
  it("are written only in src/families/", () => {
    const word = new RegExp(`["'](${FAMILIES.join("|")})["']|^\\s*(${FAMILIES.join("|")})\\s*:|[{,]\\s*(${FAMILIES.join("|")})\\s*:`, "g");
    const found: string[] = [];
    for (const file of sourceFiles(SRC)) {
      const rel = path.relative(SRC, file);
      for (const line of fs.readFileSync(file, "utf8").split("\n")) {
        const code = line.replace(/\/\/.*$/, "");
        if (/^\s*(\*|\/\*\*)/.test(code)) continue; // doc comments may name families
        const words = new Set([...code.matchAll(word)].map((m) => m[1] ?? m[2] ?? m[3]));
        if (words.size >= 2 && !ALLOWED.some((re) => re.test(`${rel}: ${code}`))) found.push(`${rel}: ${code.trim()}`);
      }
    }
    expect(found).toEqual([]);
  });
});
