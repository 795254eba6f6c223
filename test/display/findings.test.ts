import { describe, expect, it } from "vitest";
import { findings, readFindings, MIME_FINDINGS, type Finding } from "../../src/display/findings.js";

const ok: Finding = {
  claim: "absorption-arm-vs-mdm",
  model: "tiny-llada",
  family: "llada",
  tier: "tiny",
  quantity: "absorption rate, mean over layers",
  value: 0.25,
  ci95: [0.2, 0.3],
  n: 16,
};

describe("findings", () => {
  it("round-trips through a notebook's outputs", () => {
    const bundle = findings("02-absorption", [ok]).toMimeBundle();
    const nb = { cells: [{ outputs: [] }, { outputs: [{ output_type: "display_data", data: bundle }] }] };
    const back = readFindings(JSON.parse(JSON.stringify(nb)), "02.ipynb");
    expect(back).toEqual([{ notebook: "02-absorption", findings: [ok] }]);
    expect(bundle["text/plain"]).toContain("0.25 [0.2, 0.3] (n=16)");
  });
  it("refuses unknown claims, NaN values, inverted intervals", () => {
    expect(() => findings("x", [{ ...ok, claim: "nope" as never }])).toThrow(/claim/);
    expect(() => findings("x", [{ ...ok, value: Number.NaN }])).toThrow(/value/);
    expect(() => findings("x", [{ ...ok, ci95: [0.3, 0.2] }])).toThrow(/ci95/);
    expect(() => findings("x", [{ ...ok, n: 0 }])).toThrow(/n/);
  });
  it("names the notebook when a record is malformed", () => {
    const nb = { cells: [{ outputs: [{ data: { [MIME_FINDINGS]: { notebook: 3 } } }] }] };
    expect(() => readFindings(nb, "bad.ipynb")).toThrow(/bad\.ipynb/);
  });
});
