/**
 * docs/contributing.md names the actual files a family, an analysis, a probe or a command touches: every
 * path it names must exist, so the guide cannot drift from the tree it describes.
 */
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";

const ROOT = path.resolve(__dirname, "../..");

describe("docs/contributing.md", () => {
  it("names only files and folders that exist", () => {
    const text = fs.readFileSync(path.join(ROOT, "docs/contributing.md"), "utf8");
    const paths = [...text.matchAll(/`((?:src|test|docs)\/[^`<>\s]+)`/g)].map((m) => m[1]);
    expect(paths.length).toBeGreaterThan(20);
    expect(paths.filter((p) => !fs.existsSync(path.join(ROOT, p)))).toEqual([]);
  });
});
