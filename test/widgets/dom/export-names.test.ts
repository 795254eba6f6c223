/**
 * Export file names say what the file shows (figure, model(s), layer(s), head, step), so a
 * folder of exports stays readable and one export does not overwrite another. The widget's use
 * of them is in same-description.test.ts.
 */
import { describe, expect, it } from "vitest";
import { exportStem, modelsOf } from "../../../src/protocol/export-names.js";

describe("exportStem", () => {
  it("names figure, models, layer(s), head and step, leaving out what is absent, file-name safe", () => {
    expect(exportStem({ figure: "qk", models: ["tiny-llada"], layer: 3, head: 1 })).toBe("floatscope_qk_tiny-llada_layer3_head1");
    expect(exportStem({ figure: "scrubber", models: ["MDM", "ARM"], layer: 0, step: 12 })).toBe(
      "floatscope_scrubber_MDM+ARM_layer0_step12",
    );
    expect(exportStem({ figure: "drift", models: ["a/b c", "a/b c"], layer: [1, 11] })).toBe("floatscope_drift_a-b-c_layer1-11");
    expect(exportStem({ figure: "absorption" })).toBe("floatscope_absorption");
    expect(modelsOf({ series: [{ model: "llada" }, { model: "llama" }] })).toEqual(["llada", "llama"]);
    expect(modelsOf({ models: [{ model: "dream" }], model: "x" })).toEqual(["x", "dream"]);
  });
});
