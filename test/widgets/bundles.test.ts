import { describe, expect, it } from "vitest";
import { payloadBundle, VIEW_MIME } from "../../src/figures/bundles.js";
import { encodeArray, MIME_ABSORPTION, MIME_QK, MIME_ROLLOUT } from "../../src/protocol/payloads.js";
import { mimeBundleOf } from "../../src/display/format.js";
import { DisplayError } from "../../src/util/errors.js";

const png = (b64: unknown) => Buffer.from(String(b64), "base64").subarray(1, 4).toString("ascii");

describe("static fallbacks for every view", () => {
  it("qk: payload + framed SVG of the three heatmaps (token axes, floating marks) + one line of text", () => {
    const n = 3;
    const a = encodeArray(
      Array.from({ length: 9 }, (_, i) => i),
      [n, n],
      { dtype: "float16" },
    );
    const b = mimeBundleOf({
      kind: "qk",
      version: 1,
      subsampled: [],
      model: "m",
      tokens: ["a", "b", "c"],
      panels: [{ layer: 11, start: 0, score: a, cos: a, normProduct: a, anchors: [2] }],
      summary: [],
    });
    expect(Object.keys(b).sort()).toEqual([MIME_QK, "image/svg+xml", "text/plain"].sort());
    const svg = String(b["image/svg+xml"]);
    const images = [...svg.matchAll(/href="data:image\/png;base64,([^"]+)"/g)].map((m) => m[1]);
    expect(images).toHaveLength(3);
    for (const i of images) expect(png(i)).toBe("PNG");
    for (const t of ["score q·k", "cos θ", "‖q‖·‖k‖"]) expect(svg).toContain(`>${t}</text>`);
    // key tokens under each of the three panels, query tokens once on the left
    for (const t of ["a", "b", "c"]) expect(svg.match(new RegExp(`>${t}</text>`, "g"))).toHaveLength(4);
    // one red tick per panel at the floating key (column 2 of 3)
    expect(svg.match(/fill="#d62728"/g)).toHaveLength(3);
    expect(b["text/plain"]).toMatch(/layer 11, floating positions 2 marked/);
  });

  it("absorption: an SVG line chart with escaped model names", () => {
    const b = payloadBundle({
      kind: "absorption",
      version: 1,
      subsampled: [],
      rule: "top-1",
      series: [{ model: "<script>x</script>", paradigm: "MDM", layers: [0, 1], mean: [10, 30], std: [1, 1], samples: 2 }],
    });
    expect(b[MIME_ABSORPTION]).toBeDefined();
    const svg = String(b["image/svg+xml"]);
    expect(svg).toContain("&lt;script&gt;x&lt;/script&gt;");
    expect(svg).not.toContain("<script>");
    expect(svg.match(/<polyline/g)).toHaveLength(1);
    expect(b["text/plain"]).toBe("Absorption rate per layer (top-1) — <script>x</script> max 30.0%");
  });

  it("rollout: a labelled SVG heatmap naming the largest column", () => {
    const b = payloadBundle({
      kind: "rollout",
      version: 1,
      subsampled: [],
      model: "llada",
      regions: ["BOS", "Query", "Gold Doc"],
      matrix: encodeArray([0.1, 0.2, 0.7, 0.1, 0.2, 0.7, 0.1, 0.2, 0.7], [3, 3], { dtype: "float32" }),
      samples: 1,
    });
    expect(b[MIME_ROLLOUT]).toBeDefined();
    expect(String(b["image/svg+xml"])).toContain("Gold Doc");
    expect(b["text/plain"]).toMatch(/largest column "Gold Doc" \(0\.700/);
  });

  it("every view kind routes through show() by kind", () => {
    expect(Object.keys(VIEW_MIME).sort()).toEqual([
      "absorption",
      "distractor",
      "drift",
      "qk",
      "retrieval",
      "rollout",
      "scrubber",
      "token-types",
    ]);
  });

  it("a malformed payload fails in the cell with a DisplayError", () => {
    expect(() => mimeBundleOf({ kind: "qk", panels: [] })).toThrow(DisplayError);
    expect(() =>
      mimeBundleOf({ kind: "retrieval", models: [{ model: "m", scores: { dtype: "float32", shape: [2, 2], b64: "AAAA" } }] }),
    ).toThrow(/Malformed retrieval payload[\s\S]*holds 3 bytes/);
  });
});

describe("distractorPayload", () => {
  it("means per model and gold position with a standard-error band (hand-computed)", async () => {
    const { distractorPayload } = await import("../../src/figures/distractor-payload.js");
    const rows = [
      { model: "llada", goldPosition: 1, correct: 1 },
      { model: "llada", goldPosition: 1, correct: 0 },
      { model: "llada", goldPosition: 5, correct: 1 },
      { model: "llada", goldPosition: 5, correct: 1 },
      { model: "llama", goldPosition: 1, correct: 1 },
      { model: "llama", goldPosition: 5, correct: 0 },
      { model: "llama", goldPosition: 5, correct: NaN },
    ];
    const p = distractorPayload(rows, { y: "correct", metric: "Accuracy (%)", scale: 100 });
    expect(p.positions).toEqual([1, 5]);
    expect(p.series.map((s) => s.model)).toEqual(["llada", "llama"]);
    expect(p.series[0].values).toEqual([50, 100]);
    // sample sd of {100, 0} = 70.71; se = 70.71/√2 = 50
    expect(p.series[0].lo![0]).toBeCloseTo(0, 6);
    expect(p.series[0].hi![0]).toBeCloseTo(100, 6);
    expect(p.series[1].values).toEqual([100, 0]); // the NaN row is left out
    expect(payloadBundle(p)["text/plain"]).toBe("Accuracy (%) vs gold position 1/5 — llada, llama");
    expect(() => distractorPayload(rows, { y: "accuracy" })).toThrow(/column "accuracy" not found/);
  });
});
