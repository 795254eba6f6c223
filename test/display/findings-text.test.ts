import { describe, expect, it } from "vitest";
import { paradigmOf } from "../../src/families/index.js";
import { findings } from "../../src/display/findings.js";
import { compareGroups, findingsText, formatNumber, meanFinding, valueFinding } from "../../src/display/findings-text.js";

const base = (model: string, family: string) => ({
  claim: "absorption-arm-vs-mdm" as const,
  model,
  family,
  tier: "tiny",
  quantity: "absorption, %",
});

describe("findings from numbers", () => {
  it("meanFinding: mean, bootstrap interval and n over the finite samples; nothing when none is left", () => {
    const [f] = meanFinding(base("tiny-llama", "llama"), [10, 20, NaN, 30]);
    expect(f.value).toBe(20);
    expect(f.n).toBe(3);
    expect(f.ci95![0]).toBeGreaterThanOrEqual(10);
    expect(f.ci95![1]).toBeLessThanOrEqual(30);
    expect(meanFinding(base("tiny-llama", "llama"), [NaN])).toEqual([]);
    expect(valueFinding(base("tiny-llama", "llama"), Infinity, 3)).toEqual([]);
    // what they build passes the findings contract
    expect(() => findings("02-absorption", [f, ...valueFinding(base("tiny-llada", "llada"), 4, 8)])).not.toThrow();
  });

  it("compareGroups says which group is higher and whether the paper agrees, or that a group is missing", () => {
    const rows = [
      ...valueFinding(base("a", "llama"), 60, 1),
      ...valueFinding(base("b", "qwen2"), 40, 1),
      ...valueFinding(base("c", "llada"), 20, 1),
    ];
    const byParadigm = (f: { family: string }) => paradigmOf(f.family);
    expect(compareGroups(rows, byParadigm, ["ARM", "MDM"])).toBe("ARM 50 vs MDM 20: ARM higher, as in the paper");
    expect(compareGroups(rows, byParadigm, ["MDM", "ARM"])).toBe("MDM 20 vs ARM 50: ARM as high or higher, unlike the paper");
    expect(compareGroups(rows.slice(0, 2), byParadigm, ["ARM", "MDM"])).toBe("only ARM present (50): no MDM to compare with");
  });

  it("findingsText: headline, one line per model with every number, the paper, the missing models", () => {
    const rows = [...meanFinding(base("tiny-llama", "llama"), [1, 2, 3]), ...valueFinding(base("tiny-llada", "llada"), 7, 2)];
    const md = findingsText(rows, { headline: "H", paper: "P 1.0", missing: ["tiny-dream"] }).toMimeBundle()["text/markdown"] as string;
    expect(md.split("\n\n")[0]).toBe("**H.**");
    expect(md).toContain("- **tiny-llama** (ARM): absorption, % 2 [");
    expect(md).toContain("- **tiny-llada** (MDM): absorption, % 7 (n = 2)");
    expect(md).toContain("Paper: P 1.0");
    expect(md).toContain("Not in this run (missing): tiny-dream");
    expect(formatNumber(0.12345)).toBe("0.123");
    expect(formatNumber(123.4)).toBe("123");
  });
});
