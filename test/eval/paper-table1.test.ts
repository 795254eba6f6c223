import { describe, expect, it } from "vitest";
import { PAPER_TABLE1, paperTable1, TABLE1_DATASETS } from "../../src/qa/paper-table1.js";

describe("paper Table 1 constants", () => {
  it("each printed Avg. is the mean of its 10 cells within the ±0.02 rounding drift the spec reports", () => {
    for (const r of PAPER_TABLE1) {
      const cells = TABLE1_DATASETS.flatMap((d) => r.cells[d]);
      expect(cells.length).toBe(10);
      expect(Math.abs(cells.reduce((s, x) => s + x, 0) / 10 - r.avg), `${r.model} rag=${r.rag}`).toBeLessThanOrEqual(0.02);
    }
  });
  it("RAG gains match the printed ones (+7.37, +9.64, +13.23, +25.68) and the README's 8.5 / 19.455", () => {
    const gain = (m: string) =>
      PAPER_TABLE1.find((r) => r.model === m && r.rag)!.avg - PAPER_TABLE1.find((r) => r.model === m && !r.rag)!.avg;
    const printed: Record<string, number> = { Llama: 7.37, Qwen: 9.64, Dream: 13.23, Llada: 25.68 };
    for (const [m, g] of Object.entries(printed)) expect(Math.abs(gain(m) - g)).toBeLessThanOrEqual(0.02);
    expect((gain("Dream") + gain("Llada")) / 2).toBeCloseTo(19.455, 1);
  });
  it("long table", () => {
    const t = paperTable1();
    expect(t.numRows()).toBe(8 * 5 * 2);
    const v = t
      .filter(
        (d: { model: string; rag: boolean; dataset: string; metric: string }) =>
          d.model === "Llada" && d.rag && d.dataset === "NQ" && d.metric === "accuracy",
      )
      .array("value");
    expect(Array.from(v)).toEqual([55.3]);
  });
});
