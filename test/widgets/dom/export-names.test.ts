// @vitest-environment jsdom
/** Figure exports download under names that say figure, model(s), layer, head and step. */
import "./dom-setup.js";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { encodeArray, type QkPayload } from "../../../src/protocol/payloads.js";
import { exportStem, modelsOf } from "../../../src/protocol/export-names.js";
import { QkView } from "../../../widgets/src/figures/qk.js";
import { ChartView } from "../../../widgets/src/figures/charts.js";
import { useFakePlotly } from "./fake-plotly.js";

useFakePlotly();
let names: string[] = [];
beforeEach(() => {
  names = [];
  // jsdom has no object URLs and does not navigate: record the file name a download would use
  URL.createObjectURL = () => "blob:test";
  URL.revokeObjectURL = () => undefined;
  vi.spyOn(HTMLAnchorElement.prototype, "click").mockImplementation(function (this: HTMLAnchorElement) {
    names.push(this.download);
  });
});
afterEach(() => vi.restoreAllMocks());

async function clickExports(root: HTMLElement): Promise<void> {
  for (const b of root.querySelectorAll<HTMLButtonElement>("button.fs-export")) b.click();
  await new Promise((r) => setTimeout(r, 0));
}

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

describe("widget exports", () => {
  it("QK: the file names carry model, layer and head of the panel shown", async () => {
    const enc = (v: number[]) => encodeArray(v, [2, 2], { dtype: "float32" });
    const p: QkPayload = {
      kind: "qk",
      version: 1,
      subsampled: [],
      model: "tiny-llada",
      tokens: ["a", "b"],
      panels: [
        { layer: 1, start: 0, score: enc([1, 2, 3, 4]), cos: enc([0.1, -0.1, 0.2, 0]), normProduct: enc([1, 2, 3, 4]), anchors: [0] },
        {
          layer: 5,
          head: 2,
          start: 0,
          score: enc([1, 2, 3, 4]),
          cos: enc([0.1, -0.1, 0.2, 0]),
          normProduct: enc([1, 2, 3, 4]),
          anchors: [1],
        },
      ],
      summary: [],
    };
    const host = document.createElement("div");
    const v = await QkView.mount(host, p);
    await v.show(1);
    await clickExports(host);
    expect(new Set(names.map((n) => n.replace(/(_\d+)?\.(png|svg)$/, "")))).toEqual(new Set(["floatscope_qk_tiny-llada_layer5_head2"]));
    expect(names.some((n) => n.endsWith(".png")) && names.some((n) => n.endsWith(".svg"))).toBe(true);
  });

  it("absorption: two figures' exports no longer share one name; the models are in it", async () => {
    const host = document.createElement("div");
    const series = (model: string, paradigm: string) => ({ model, paradigm, layers: [0, 1], mean: [1, 2], std: [0, 0], samples: 1 });
    await ChartView.mount(host, {
      kind: "absorption",
      version: 1,
      subsampled: [],
      rule: "top-1",
      series: [series("llada", "MDM"), series("llama", "ARM")],
    });
    await clickExports(host);
    expect(names).toEqual(["floatscope_absorption_llada+llama.png", "floatscope_absorption_llada+llama.svg"]);
  });
});
