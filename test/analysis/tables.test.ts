import { describe, expect, it } from "vitest";
import { concatTables, longTable, sampleLabel, tensorTable } from "../../src/analysis/tables.js";

describe("long tables", () => {
  it("tensorTable flattens a [2, 3] tensor row-major into index columns + value", () => {
    const t = tensorTable(Float32Array.of(1, 2, 3, 4, 5, 6), [2, 3], ["layer", "key"], { model: "m" });
    expect(t.objects()).toEqual([
      { model: "m", layer: 0, key: 0, value: 1 },
      { model: "m", layer: 0, key: 1, value: 2 },
      { model: "m", layer: 0, key: 2, value: 3 },
      { model: "m", layer: 1, key: 0, value: 4 },
      { model: "m", layer: 1, key: 1, value: 5 },
      { model: "m", layer: 1, key: 2, value: 6 },
    ]);
    expect(() => tensorTable([1, 2, 3], [2, 2], ["a", "b"])).toThrow(/need 4/);
  });
  it("typed-array columns are used without copying", () => {
    const v = Float64Array.of(0.5, 0.25);
    expect(longTable({ value: v }).column("value")).toBe(v);
    expect(() => longTable({ a: [1, 2], b: [1] })).toThrow(/column b/);
  });
  it("concatenation and sample labels", () => {
    expect(concatTables([longTable({ x: [1] }), longTable({ x: [2] })]).array("x")).toEqual([1, 2]);
    expect(sampleLabel({ sampleId: "q7" }, 3)).toBe("q7");
    expect(sampleLabel({}, 3)).toBe("3");
    expect(sampleLabel({ id: 9 }, 3, ["given"])).toBe("9");
  });
});
