/**
 * docs/claims.md and the claims code say the same thing: one section per claim id of the code (and no section
 * for an id the code lacks), each stating the rule its verdict uses in the rule's own words, and the verdict
 * table listing exactly the verdicts the code can give.
 */
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { describe, expect, it } from "vitest";
import { CLAIMS, VERDICTS } from "../../src/display/claims.js";
import { CLAIM_IDS } from "../../src/display/findings.js";

const doc = readFileSync(resolve(__dirname, "../../docs/claims.md"), "utf8");
/** `## \`id\`: title` sections, with their text up to the next heading. */
const sections = new Map(
  [...doc.matchAll(/^## `([^`]+)`: (.*)\n([\s\S]*?)(?=^## |(?![\s\S]))/gm)].map((m) => [m[1], { title: m[2], body: m[3] }]),
);

describe("docs/claims.md", () => {
  it("has one section per claim of the code, and none for a claim the code does not have", () => {
    expect([...sections.keys()].sort()).toEqual([...CLAIM_IDS].sort());
  });

  it.each(CLAIM_IDS.map((id) => [id]))("%s: the section's title and rule are the code's", (id) => {
    const s = sections.get(id)!;
    expect(s.title).toBe(CLAIMS[id].title);
    const rule = /^- \*\*Rule:\*\* (.*)$/m.exec(s.body)?.[1];
    expect(rule).toBe(CLAIMS[id].rule.reads);
    for (const field of ["Quantity", "Comparison", "Paper", "Against it"]) expect(s.body).toContain(`- **${field}:**`);
  });

  it("the verdict table lists exactly the verdicts the code gives", () => {
    const table = doc.slice(doc.indexOf("| verdict | when |"), doc.indexOf("\n\n", doc.indexOf("| verdict | when |")));
    const listed = [...table.matchAll(/^\| \*\*([^*]+)\*\* \|/gm)].map((m) => m[1]);
    expect(listed).toEqual([...VERDICTS]);
  });
});
