import { afterEach, describe, expect, it } from "vitest";
import * as aq from "arquero";
import { captureDisplays, setDisplaySink, type DisplayCapture } from "../../src/display/sink.js";
import { newDisplay, show } from "../../src/display/show.js";
import { mimeBundleOf, registerFormatter } from "../../src/display/format.js";
import { MIME_FIGURE } from "../../src/protocol/payloads.js";
import { heatmapFigure } from "../../src/figures/heatmap.js";
import { heatmap } from "../../src/figures/heatmap.js";
import { DisplayError } from "../../src/util/errors.js";
import { NASTY, parseHtml, parseSvg, texts } from "./markup.js";

let cap: DisplayCapture | null = null;
afterEach(() => {
  cap?.restore();
  cap = null;
});

function thrown(fn: () => unknown): Error {
  try {
    fn();
  } catch (e) {
    return e as Error;
  }
  throw new Error("expected a throw");
}

const spec = () => heatmap({ title: "t", xLabels: ["a", "b"], yLabels: ["L0"], values: [[0.2, 0.8]] });

describe("show()", () => {
  it("sends one display_data with our MIME type, an SVG and text/plain together", () => {
    cap = captureDisplays();
    const s = spec();
    show(s);
    expect(cap.messages).toHaveLength(1);
    const { message, update } = cap.messages[0];
    expect(update).toBe(false);
    expect(Object.keys(message.data).sort()).toEqual([MIME_FIGURE, "image/svg+xml", "text/plain"].sort());
    expect(MIME_FIGURE).toMatch(/^application\/vnd\.floatscope\..+\.v\d+\+json$/);
    // the widget gets the figure description the static image was drawn from
    expect(message.data[MIME_FIGURE]).toEqual(heatmapFigure(s));
    expect(parseSvg(message.data["image/svg+xml"] as string).documentElement.nodeName).toBe("svg");
    expect(message.data["text/plain"]).toMatch(/^Heatmap "t": 1 rows × 2 columns/);
    expect(message.transient.display_id).toMatch(/^floatscope-/);
    expect(message.metadata).toEqual({});
  });

  it("re-validates hand-written figure JSON", () => {
    cap = captureDisplays();
    const err = thrown(() => show({ kind: "heatmap", title: "x", xLabels: ["a"], yLabels: ["b"], values: [[1, 2]], colormap: "viridis" }));
    expect(err.name).toBe("SettingsError");
    expect(err.message).toContain("values[0]");
    expect(cap.messages).toHaveLength(0);
  });

  it("gives each show() its own display id", () => {
    cap = captureDisplays();
    show("a");
    show("b");
    expect(cap.messages[0].message.transient.display_id).not.toBe(cap.messages[1].message.transient.display_id);
  });

  it("shows strings, numbers, booleans and bigints as text/plain", () => {
    expect(mimeBundleOf("hi")).toEqual({ "text/plain": "hi" });
    expect(mimeBundleOf(1.5)).toEqual({ "text/plain": "1.5" });
    expect(mimeBundleOf(false)).toEqual({ "text/plain": "false" });
    expect(mimeBundleOf(10n)).toEqual({ "text/plain": "10" });
  });

  it.each([
    [new Map(), "a Map"],
    [{ a: 1, b: 2 }, "a plain object with keys {a, b}"],
    [new Float32Array(3), "a Float32Array(3)"],
    [[1, 2], "an Array(2)"],
    [undefined, "undefined"],
    [null, "null"],
    [() => 1, "a function"],
    [Promise.resolve(1), "a Promise"],
    [{ kind: "sankey" }, "a plain object with keys {kind}"],
  ])("rejects an unsupported value with a DisplayError naming its type (%#)", (value, name) => {
    cap = captureDisplays();
    const err = thrown(() => show(value));
    expect(err).toBeInstanceOf(DisplayError);
    expect(err.message).toContain(`cannot display ${name}`);
    expect(cap.messages).toHaveLength(0);
  });

  it("hints at a missing await and at unknown figure kinds", () => {
    expect(thrown(() => mimeBundleOf(Promise.resolve(1))).message).toContain("forget `await`");
    expect(thrown(() => mimeBundleOf({ kind: "sankey" })).message).toMatch(/figure kind "sankey" is unknown; known kinds: .*heatmap/);
  });

  it("outside a kernel without a sink fails clearly (not tslab's 'Not ready')", () => {
    setDisplaySink(null);
    const err = thrown(() => show("x"));
    expect(err).toBeInstanceOf(DisplayError);
    expect(err.message).toContain("needs a Jupyter kernel or a display sink");
    expect(err.message).toContain("TypeScript (floatscope)");
    expect(err.message).toContain("setDisplaySink");
    expect(err.message).not.toContain("Not ready");
  });

  it("checks the sink argument", () => {
    expect(() => setDisplaySink(42 as never)).toThrow(DisplayError);
  });
});

describe("toMimeBundle protocol and formatters", () => {
  it("uses an object's toMimeBundle()", () => {
    cap = captureDisplays();
    show({ toMimeBundle: () => ({ "text/plain": "summary", "application/vnd.floatscope.test.v1+json": { n: 3 } }) });
    expect(cap.messages[0].message.data).toEqual({ "text/plain": "summary", "application/vnd.floatscope.test.v1+json": { n: 3 } });
  });

  it.each([
    [{ "text/html": "<b>x</b>" }, "text/plain"],
    [{ "text/plain": "x", "text/html": { not: "a string" } }, "text/html"],
    [{ "text/plain": "x", "no-slash": "y" }, "no-slash"],
  ])("rejects a malformed bundle (%#)", (bundle, field) => {
    const err = thrown(() => mimeBundleOf({ toMimeBundle: () => bundle }));
    expect(err).toBeInstanceOf(DisplayError);
    expect((err as DisplayError).field).toBe(field);
  });

  it("registered formatters win over built-ins and can be removed", () => {
    const off = registerFormatter({
      name: "upper",
      test: (x) => typeof x === "string",
      format: (x) => ({ "text/plain": String(x).toUpperCase() }),
    });
    expect(mimeBundleOf("abc")).toEqual({ "text/plain": "ABC" });
    off();
    expect(mimeBundleOf("abc")).toEqual({ "text/plain": "abc" });
  });
});

describe("newDisplay()", () => {
  it("creates once, then updates the same display id", () => {
    cap = captureDisplays();
    const d = newDisplay();
    d.show("one");
    d.show(spec());
    expect(cap.messages.map((m) => m.update)).toEqual([false, true]);
    expect(cap.messages.every((m) => m.message.transient.display_id === d.displayId)).toBe(true);
    expect(Object.keys(cap.messages[1].message.data)).toContain("image/svg+xml");
  });
});

describe("arquero tables", () => {
  it("show as escaped HTML plus a text summary", () => {
    cap = captureDisplays();
    const t = aq.table({ [NASTY[0]]: [1, 2], token: [NASTY[1], NASTY[4]] });
    show(t);
    const data = cap.messages[0].message.data;
    expect(Object.keys(data).sort()).toEqual(["text/html", "text/plain"]);
    const doc = parseHtml(data["text/html"] as string);
    expect(doc.querySelectorAll("script").length).toBe(0);
    expect(texts(doc, "th")).toEqual([NASTY[0], "token"]);
    expect(texts(doc, "td")).toEqual(["1", NASTY[1], "2", NASTY[4]]);
    expect(texts(doc, ".floatscope-table > div")[0]).toBe("2 rows × 2 columns");
    expect(data["text/plain"]).toMatch(/^Table: 2 rows × 2 columns\n/);
  });

  it("limits long tables and says so", () => {
    const t = aq.table({ i: Array.from({ length: 120 }, (_, i) => i) });
    const data = mimeBundleOf(t);
    const doc = parseHtml(data["text/html"] as string);
    expect(doc.querySelectorAll("tbody tr").length).toBe(50);
    expect(texts(doc, ".floatscope-table > div")[0]).toBe("120 rows × 1 column (first 50 shown)");
    expect(data["text/plain"]).toContain("… 110 more rows");
  });
});
